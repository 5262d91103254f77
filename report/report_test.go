package report

import (
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/<test name>.golden, or rewrites that
// file with -update.
func golden(t *testing.T, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", t.Name()+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./report -run %s -update to create it)", err, t.Name())
	}
	if string(got) != string(want) {
		t.Errorf("%s differs from %s:\n%s\nwant:\n%s", t.Name(), path, got, want)
	}
}

var reportRows = []Row{
	{Sheet: "leads.csv", Row: 2, PhoneNumber: "+14155550100", Email: "ann@example.com", FirstName: "Ann", LastName: "Lee",
		GHLContactID: "c-1", Status: "sent", HTTPStatus: 201, Attempts: 1, Agent: "east", AgentID: "ag_1",
		FirstAttemptAt: Timestamp(time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)), LastAttemptAt: Timestamp(time.Date(2026, 11, 21, 9, 0, 1, 0, time.FixedZone("x", 3600))),
		Response: `{"call_id":"c1","status":"queued"}`, Consent: "2024-03-05"},
	{Sheet: "leads.csv", Row: 3, PhoneNumber: "+14155550101", FirstName: "=HYPERLINK(\"http://x\",\"y\")", LastName: "+1",
		Status: "failed", Reason: "the service refused the call", HTTPStatus: 422, Attempts: 1, Agent: "east", AgentID: "ag_1",
		Response: "line one\nline two, with a comma"},
	{Sheet: "leads.csv", Row: 4, PhoneNumber: "+1 (415) 555", FirstName: "-5", LastName: "@SUM(A1)", Email: "\tx@example.com",
		Status: "invalid", Reason: "phone_number: not a phone number", Agent: "east"},
	{Sheet: "leads.csv", Row: 5, PhoneNumber: "=1+1", OverrideAgentID: "\rrm", Status: "invalid", Reason: "-missing", Agent: "east"},
	{Sheet: "west.csv", Row: 2, PhoneNumber: "+442071838750", LocalPresenceNumber: "+14155550199", Status: "uncertain",
		Reason: "no answer before the timeout", Attempts: 2, Agent: "west", AgentID: "ag_2"},
	{Sheet: "west.csv", Row: 3, PhoneNumber: "+442071838750", Status: "duplicate", Reason: "the number appears in an earlier row", Agent: "west"},
	{Sheet: "west.csv", Row: 4, PhoneNumber: "+15550001", Status: "pending", Agent: "west"},
}

func TestCSVWriter(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "report.csv")
	w, err := NewCSVWriter(path, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, r := range reportRows {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, got)

	// The file reads back as CSV with the columns in place.
	recs, err := csv.NewReader(strings.NewReader(string(got))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(reportRows)+1 || strings.Join(recs[0], ",") != "sheet,row,phone_number,email,first_name,last_name,ghl_contact_id,override_agent_id,local_presence_number,status,reason,http_status,attempts,agent,agent_id,first_attempt_at,last_attempt_at,response,consent" {
		t.Fatalf("read back %d records, header %v", len(recs), recs[0])
	}
	if got := recs[1][16]; got != "2026-11-21T08:00:01Z" {
		t.Errorf("last_attempt_at %q, want UTC", got)
	}
	if got := recs[3][11]; got != "" {
		t.Errorf("http_status of a row without one: %q, want empty", got)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("report mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestCSVWriterEmpty(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "report.csv")
	w, err := NewCSVWriter(path, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(got), "sheet,row,") || strings.Count(string(got), "\n") != 1 {
		t.Errorf("empty report: %q", got)
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"Ann", "Ann"},
		{`=HYPERLINK("http://evil","click")`, `'=HYPERLINK("http://evil","click")`},
		{"+1", "'+1"},
		{"-5", "'-5"},
		{"@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"\tx", "'\tx"},
		{"\rx", "'\rx"},
		{"a=b", "a=b"},
		{"'quoted", "'quoted"},
	}
	for _, tt := range tests {
		if got := Escape(tt.in); got != tt.want {
			t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestEscapeRow(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   Row
		want Row
	}{
		{"E.164 phone kept", Row{PhoneNumber: "+14155550100"}, Row{PhoneNumber: "+14155550100"}},
		{"shortest E.164 kept", Row{PhoneNumber: "+12345678"}, Row{PhoneNumber: "+12345678"}},
		{"too short for E.164", Row{PhoneNumber: "+1234567"}, Row{PhoneNumber: "'+1234567"}},
		{"too long for E.164", Row{PhoneNumber: "+1234567890123456"}, Row{PhoneNumber: "'+1234567890123456"}},
		{"formula phone", Row{PhoneNumber: "+1+cmd|' /C calc'!A0"}, Row{PhoneNumber: "'+1+cmd|' /C calc'!A0"}},
		{"spaced phone", Row{PhoneNumber: "+1 415 555 0100"}, Row{PhoneNumber: "'+1 415 555 0100"}},
		{"every text column", Row{
			Sheet: "=a", Email: "=b", FirstName: "+c", LastName: "-d", GHLContactID: "@e", OverrideAgentID: "\tf",
			LocalPresenceNumber: "=g", Status: "=h", Reason: "-i", Agent: "@j", AgentID: "+k", FirstAttemptAt: "=l",
			LastAttemptAt: "=m", Response: "=n",
		}, Row{
			Sheet: "'=a", Email: "'=b", FirstName: "'+c", LastName: "'-d", GHLContactID: "'@e", OverrideAgentID: "'\tf",
			LocalPresenceNumber: "'=g", Status: "'=h", Reason: "'-i", Agent: "'@j", AgentID: "'+k", FirstAttemptAt: "'=l",
			LastAttemptAt: "'=m", Response: "'=n",
		}},
		{"E.164 local presence number kept", Row{LocalPresenceNumber: "+14155550199"}, Row{LocalPresenceNumber: "+14155550199"}},
		{"other local presence number escaped", Row{LocalPresenceNumber: "+1-415"}, Row{LocalPresenceNumber: "'+1-415"}},
		{"E.164 name escaped", Row{FirstName: "+14155550199"}, Row{FirstName: "'+14155550199"}},
		{"account fields", Row{Extra: []string{"=city", "+14155550199", "-5", ""}}, Row{Extra: []string{"'=city", "+14155550199", "'-5", ""}}},
	}
	for _, tt := range tests {
		in := slices.Clone(tt.in.Extra)
		if got := escapeRow(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: escapeRow = %+v, want %+v", tt.name, got, tt.want)
		}
		if !slices.Equal(in, tt.in.Extra) {
			t.Errorf("%s: escapeRow changed the caller's Extra to %q", tt.name, tt.in.Extra)
		}
	}
}

func TestCSVWriterIsAtomic(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "report.csv")
	const old = "the previous report\n"
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	fill := func(w *CSVWriter, n int) {
		for i := range n {
			if err := w.Write(Row{Sheet: "s.csv", Row: i + 2, PhoneNumber: fmt.Sprintf("+1415555%04d", i), Status: "sent"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	unchanged := func(when string) {
		t.Helper()
		if b, err := os.ReadFile(path); err != nil || string(b) != old {
			t.Errorf("%s: report.csv is %q, %v; want the previous report", when, b, err)
		}
	}
	onlyReport := func(when string) {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 1 || ents[0].Name() != "report.csv" {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("%s: directory holds %v; want report.csv alone", when, names)
		}
	}

	w, err := NewCSVWriter(path, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	fill(w, 1000)
	unchanged("before Commit")
	// Rows are on disk already, in the temporary file: memory does not
	// hold them all.
	ents, _ := os.ReadDir(dir)
	var tmpSize int64
	for _, e := range ents {
		if e.Name() != "report.csv" {
			fi, _ := e.Info()
			tmpSize = fi.Size()
		}
	}
	if tmpSize < 900*20 {
		t.Errorf("temporary file holds %d bytes after 1000 rows; rows are not written in batches", tmpSize)
	}
	w.Abort()
	unchanged("after Abort")
	onlyReport("after Abort")
	if err := w.Write(Row{}); err == nil {
		t.Errorf("Write after Abort succeeded")
	}

	w, err = NewCSVWriter(path, Columns{})
	if err != nil {
		t.Fatal(err)
	}
	fill(w, 1000)
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	w.Abort() // deferred by callers: no effect after Commit
	onlyReport("after Commit")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(recs) != 1001 || recs[1000][2] != "+14155550999" {
		t.Errorf("committed report: %d records, %v", len(recs), err)
	}
}
