package store

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var writeFormat = flag.Bool("write-format", false, "rewrite testdata/journal-format.jsonl from formatRecords (only when the on-disk format is meant to change)")

// formatRecords are the records of testdata/journal-format.jsonl, a
// journal written by callrun before its lines were encoded with
// encoding/json: every record type and outcome status, and strings that
// need escaping (quotes, control characters, HTML characters left as
// they are, U+2028, invalid UTF-8, which is written as U+FFFD); and,
// appended since, the fields added since (call_id) and a tombstone.
func formatRecords() []Record {
	at := time.Date(2026, 11, 21, 9, 30, 0, 123456789, time.UTC)
	ny := time.FixedZone("", -5*3600)
	return []Record{
		{Type: TypeRun, Note: "callrun run campaign.yaml", At: at},
		{Type: TypeIntent, Agent: "Spring Promo", Phone: "+12125550101", AgentID: "agent_1", Sheet: "leads.csv", Row: 2, Attempt: 1, At: at},
		{Type: TypeOutcome, Agent: "Spring Promo", Phone: "+12125550101", AgentID: "agent_1", Sheet: "leads.csv", Row: 2, Attempt: 1,
			Status: OutcomeSent, HTTP: 201, Body: `{"status":"success","call_id":"call_123"}`, At: at.Add(time.Second)},
		{Type: TypeIntent, Agent: "sales-east", Phone: "+447700900123", N: 2, AgentID: "ag_2", Sheet: "dir/ä.csv", Row: 1_000_001, Attempt: 3, At: at.In(ny)},
		{Type: TypeOutcome, Agent: "sales-east", Phone: "+447700900123", N: 2, AgentID: "ag_2", Sheet: "dir/ä.csv", Row: 1_000_001, Attempt: 3,
			Status: OutcomeFailed, HTTP: 422, Reason: "the service refused the call",
			Body: "{\"error\":\"bad\",\"message\":\"a \\\"quoted\\\" <b>&</b>\nline\ttab\r\b\f\x00\x1f\x7f é 😀 \u2028\u2029 end\"}", At: at.In(ny)},
		{Type: TypeIntent, Agent: `a "quoted" \ agent`, Phone: "+15550001", Attempt: 1, At: at},
		{Type: TypeOutcome, Agent: `a "quoted" \ agent`, Phone: "+15550001", Attempt: 1, Status: OutcomeUncertain, Reason: "timeout after the request was written", At: at},
		{Type: TypeIntent, Agent: "é", Phone: "+15550002", Attempt: 1, At: at},
		{Type: TypeOutcome, Agent: "é", Phone: "+15550002", Attempt: 1, Status: OutcomeRetry, HTTP: 429, Reason: "rate limited", At: at},
		{Type: TypeIntent, Agent: "é", Phone: "+15550002", Attempt: 2, At: at},
		{Type: TypeOutcome, Agent: "é", Phone: "+15550002", Attempt: 2, Status: OutcomeSkipped, Reason: "shutting down", Body: "bad \xff\xfe bytes", At: at},
		{Type: TypeRun, Note: "callrun run campaign.yaml --retry-uncertain", At: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		// Added since: the call id of a sent call.
		{Type: TypeIntent, Agent: "Spring Promo", Phone: "+12125550103", AgentID: "agent_1", Sheet: "leads.csv", Row: 4, Attempt: 1, At: at},
		{Type: TypeOutcome, Agent: "Spring Promo", Phone: "+12125550103", AgentID: "agent_1", Sheet: "leads.csv", Row: 4, Attempt: 1,
			Status: OutcomeSent, HTTP: 200, Body: `{"status":"success","call_id":"call_124"}`, CallID: "call_124", At: at.Add(time.Second)},
		// Added since: the tombstone of an erased person's contact.
		{Type: TypeErased, Agent: "Spring Promo", Hash: theTestKeys.Hashes("+12125550104")[0], Attempt: 2, Status: string(Uncertain),
			ErasedAt: at.Add(24 * time.Hour), At: at.Add(2 * time.Second)},
	}
}

// TestJournalFormat reads a journal that an earlier callrun wrote: each
// line decodes to the record that was appended, replay gives the
// statuses it gave then, and a record appended today is written byte for
// byte as it was then, so journals written before still resume.
func TestJournalFormat(t *testing.T) {
	golden := filepath.Join("testdata", "journal-format.jsonl")
	recs := formatRecords()
	if *writeFormat {
		path := filepath.Join(t.TempDir(), "journal")
		j, _ := openJournal(t, path)
		mustAppend(t, j, recs...)
		if err := j.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}

	lines := bytes.SplitAfter(want, []byte("\n"))
	lines = lines[:len(lines)-1] // after the last newline
	if len(lines) != len(recs) {
		t.Fatalf("%s has %d lines, want %d", golden, len(lines), len(recs))
	}
	for i, line := range lines {
		var got Record
		if err := json.Unmarshal(line, &got); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		r := recs[i]
		r.Body = string([]rune(r.Body)) // each invalid byte reads back as U+FFFD
		gotAt, wantAt := got.At, r.At
		got.At, r.At = time.Time{}, time.Time{}
		if got != r {
			t.Errorf("line %d decodes to\n%+v\nwant\n%+v", i+1, got, r)
		}
		_, gotOff := gotAt.Zone()
		_, wantOff := wantAt.Zone()
		if !gotAt.Equal(wantAt) || gotOff != wantOff {
			t.Errorf("line %d: at %v, want %v", i+1, gotAt, wantAt)
		}
	}

	// Replay reads it as it did; its tombstone needs the keys.
	path := filepath.Join(t.TempDir(), "journal")
	if err := os.WriteFile(path, want, 0o600); err != nil {
		t.Fatal(err)
	}
	rj, s, err := OpenJournal(path, JournalOptions{Keys: theTestKeys})
	if err != nil {
		t.Fatal(err)
	}
	rj.Close()
	defer s.Close()
	for k, st := range map[Key]Status{
		{"Spring Promo", "+12125550101", 0}:      Sent,
		{"sales-east", "+447700900123", 2}:       Failed,
		{`a "quoted" \ agent`, "+15550001", 0}:   Uncertain,
		{"é", "+15550002", 0}:                    Pending,
		{"sales-east", "+447700900123", 0}:       "",
		{"Spring Promo", "+12125550101", 1}:      "",
		{"Spring Promo", "+12125550102", 0}:      "",
		{"nobody", "+12125550101", 0}:            "",
		{`a "quoted" \ agent`, "+15550001", 1}:   "",
		{"e", "+15550002", 0}:                    "",
		{"é", "+15550003", 0}:                    "",
		{"sales-east", "+447700900123", -1}:      "",
		{"Spring Promo", "+12125550101", 0x1000}: "",
		{"Spring Promo", "+12125550103", 0}:      Sent,
		{"Spring Promo", "+12125550104", 0}:      Erased,
	} {
		if got, _ := s.Status(k); got != st {
			t.Errorf("%v: status %q, want %q", k, got, st)
		}
	}
	if e, _ := s.Lookup(Key{"é", "+15550002", 0}); e.Attempts != 1 || e.Reason != "shutting down" || e.HTTP != 0 {
		t.Errorf("Lookup: %+v", e)
	}

	// And appending writes the same bytes.
	j, _ := openJournal(t, filepath.Join(t.TempDir(), "journal"))
	mustAppend(t, j, recs...)
	j.Close()
	got, err := os.ReadFile(j.path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("appended records are written as\n%s\nwant\n%s", got, want)
	}
}
