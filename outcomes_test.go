package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store"
)

// outcomesFixture is a campaign with outcomes: and dedupe: none whose
// rows 2 and 3 share a number, called (row 3 first), with row 4 called
// last and row 5 never; and the deliveries listen stored: row 3's call
// ended, row 2's answered, and one for a number the campaign never
// called.
type outcomesFixture struct {
	path    string
	lastRun time.Time // when row 4's call started: no delivery came after
}

func writeOutcomesFixture(t *testing.T) outcomesFixture {
	t.Helper()
	dir := t.TempDir()
	sheet := "Phone,Disposition\n+14155550132,\n+14155550132,\n+14155550133,\n+14155550134,\n"
	if err := os.WriteFile(filepath.Join(dir, "leads.csv"), []byte(sheet), 0o644); err != nil {
		t.Fatal(err)
	}
	yaml := `name: shared
agents:
  - {name: Agent, prompt: Be kind.}
sheets:
  - {file: leads.csv, agent: Agent, fields: {phone_number: Phone}}
dedupe: none
unsafe_ignore_called_person_hours: true
outcomes:
  url: https://hooks.example.com/callrun/shared/` + hookSecret + `
  fields: [disposition]
`
	path := filepath.Join(dir, "shared.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := filepath.Join(dir, ".callrun", "shared")
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	j, st, err := store.OpenJournal(filepath.Join(stateDir, store.JournalFile), store.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	call := func(phone string, n, row int, at time.Time) {
		rec := store.Record{Type: store.TypeIntent, Agent: "Agent", AgentID: "agent_1", Phone: phone, N: n, Attempt: 1, Sheet: "leads.csv", Row: row, At: at}
		if err := j.Append(rec); err != nil {
			t.Fatal(err)
		}
		rec.Type, rec.Status, rec.HTTP, rec.At = store.TypeOutcome, store.OutcomeSent, 200, at.Add(time.Second)
		if err := j.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	call("+14155550132", 1, 3, t0)
	call("+14155550132", 0, 2, t0.Add(10*time.Minute))
	call("+14155550133", 0, 4, t0.Add(30*time.Minute))
	j.Close()
	st.Close()
	w, err := store.OpenDeliveries(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, d := range []struct {
		min          int
		event, phone string
		disposition  string
	}{
		{2, "call.ended", "+14155550132", "voicemail"},
		{11, "call.answered", "(415) 555-0132", "=HYPERLINK(1)"},
		{12, "call.ended", "@14155559999", ""},
	} {
		fields := map[string]string{"event": d.event, "phone_number": d.phone}
		if d.disposition != "" {
			fields["disposition"] = d.disposition
		}
		if _, _, err := w.Append(store.Delivery{Key: d.event + d.phone, At: t0.Add(time.Duration(d.min) * time.Minute), Event: d.event, Fields: fields}); err != nil {
			t.Fatal(err)
		}
	}
	return outcomesFixture{path: path, lastRun: t0.Add(30*time.Minute + time.Second)}
}

// TestStatusCountsOutcomes: status counts the contacts called by their
// latest delivered event, and the deliveries no contact took; and once a
// call has waited 15 minutes with no delivery after it, it says the
// webhook URL is probably wrong, in text and in JSON.
func TestStatusCountsOutcomes(t *testing.T) {
	fx := writeOutcomesFixture(t)
	status := func(format string, now time.Time) string {
		var out bytes.Buffer
		o := savedOptions{Path: fx.path, Now: func() time.Time { return now }}
		if err := campaignStatus(context.Background(), o, format, &out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	var st struct {
		Outcomes  map[string]int `json:"outcomes"`
		Unmatched *int           `json:"unmatched_deliveries"`
		Warnings  []string       `json:"warnings"`
	}
	soon := fx.lastRun.Add(5 * time.Minute)
	if err := json.Unmarshal([]byte(status("json", soon)), &st); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"started": 0, "answered": 1, "ended": 1, "reported": 0, "other": 0, "none": 1}
	if len(st.Outcomes) != len(want) || st.Unmatched == nil || *st.Unmatched != 1 || len(st.Warnings) != 0 {
		t.Errorf("status --format json: %+v", st)
	}
	for name, n := range want {
		if st.Outcomes[name] != n {
			t.Errorf("outcome %s: %d contacts, want %d", name, st.Outcomes[name], n)
		}
	}
	text := status("text", soon)
	for _, line := range []string{"  answered   1\n", "  ended      1\n", "  none yet   1\n", "1 delivery(ies) matched no contact"} {
		if !strings.Contains(text, line) {
			t.Errorf("status lacks %q:\n%s", line, text)
		}
	}
	if strings.Contains(text, "Warning") {
		t.Errorf("status warns 5 minutes after the last call:\n%s", text)
	}

	late := fx.lastRun.Add(16 * time.Minute)
	const warning = "no webhook delivery has come in the 16m0s since a call started at 2026-11-25T12:30:01Z: the webhook URL is probably wrong or unreachable"
	if text := status("text", late); !strings.Contains(text, "Warning: "+warning) {
		t.Errorf("status 16 minutes after a call no delivery followed:\n%s", text)
	}
	st.Warnings = nil
	if err := json.Unmarshal([]byte(status("json", late)), &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Warnings) != 1 || !strings.Contains(st.Warnings[0], warning) {
		t.Errorf("status --format json warnings: %q", st.Warnings)
	}
}

// TestOutcomesListsDeliveries: callrun outcomes lists every delivery in
// the order stored with the contact it matched (the row whose call
// started last before it, where rows share a number), unmatched ones
// included, as CSV with formulas escaped, or as JSON lines.
func TestOutcomesListsDeliveries(t *testing.T) {
	fx := writeOutcomesFixture(t)
	var out bytes.Buffer
	if err := listOutcomes(context.Background(), savedOptions{Path: fx.path}, "csv", &out); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		deliveryColumns,
		{"2026-11-25T12:02:00Z", "call.ended", "", "+14155550132", "true", "leads.csv", "3", "disposition=voicemail"},
		{"2026-11-25T12:11:00Z", "call.answered", "", "(415) 555-0132", "true", "leads.csv", "2", "disposition==HYPERLINK(1)"},
		{"2026-11-25T12:12:00Z", "call.ended", "", "'@14155559999", "false", "", "", ""},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d lines, want %d:\n%q", len(recs), len(want), recs)
	}
	for i, w := range want {
		if got := strings.Join(recs[i][:len(w)], ","); got != strings.Join(w, ",") {
			t.Errorf("line %d: %s\nwant     %s", i+1, got, strings.Join(w, ","))
		}
	}

	out.Reset()
	if err := listOutcomes(context.Background(), savedOptions{Path: fx.path}, "json", &out); err != nil {
		t.Fatal(err)
	}
	var lines []deliveryLine
	dec := json.NewDecoder(&out)
	for dec.More() {
		var l deliveryLine
		if err := dec.Decode(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	if len(lines) != 3 || lines[0].Row != 3 || lines[1].Row != 2 || lines[1].Detail != "disposition==HYPERLINK(1)" || lines[2].Matched || lines[2].Sheet != "" {
		t.Errorf("JSON lines: %+v", lines)
	}
}
