package store

import (
	"encoding/json"
	"testing"
)

// FuzzScanRecord checks replay's fast path against encoding/json: whatever
// scanRecord accepts, json.Unmarshal reads the same way. Its seeds run with
// every go test; to fuzz:
//
//	go test ./report/store -run '^$' -fuzz '^FuzzScanRecord$' -fuzztime 30s
func FuzzScanRecord(f *testing.F) {
	for _, seed := range []string{
		`{"t":"intent","agent":"sales-east","phone":"+14155550100","agent_id":"ag_1","sheet":"leads.csv","row":2,"attempt":1,"at":"2026-11-21T09:00:00Z"}`,
		`{"t":"outcome","agent":"a","phone":"+1","n":3,"status":"sent","http":201,"body":"{\"call_id\":\"c1\"}","at":"2026-11-21T09:00:00Z"}`,
		`{"t":"run","note":"callrun run x.yaml","at":"2026-11-21T09:00:00Z"}`,
		` { "t" : "outcome" , "agent" : "a" , "phone" : "+1" , "n" : -2 , "status" : "retry" , "x" : [1, {"y": "}"}], "z": null } `,
		`{"t":"intent","agent":"a\"b","phone":"+1"}`,
		`{"t":"intent","agent":"a","phone":"+1","T":"outcome"}`,
		`{"t":"intent","agent":"a","phone":"+1","t":"outcome"}`,
		`{"t":"intent","agent":"a","phone":"+1","n":1.5}`,
		`{"t":"intent","agent":"a","phone":"+1","n":1e3}`,
		`{"t":"intent","agent":"a","phone":"+1","n":null}`,
		`{"t":"intent","agent":"a","phone":"+1","n":12345678901234567890}`,
		`{"t":"intent","agent":null,"phone":"+1"}`,
		`{"t":"maybe"}`,
		`{"\u0074":"intent","agent":"a","phone":"+1"}`,
		`{"ſtatus":"sent"}`,
		`{}`, `[]`, `null`, `"x"`, `1`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if !json.Valid(line) {
			return
		}
		raw, ok := scanRecord(line)
		if !ok {
			return
		}
		var rr replayRecord
		if err := json.Unmarshal(line, &rr); err != nil {
			t.Fatalf("scanRecord accepted %q, json.Unmarshal: %v", line, err)
		}
		if rr.Type != raw.typ || rr.Agent != string(raw.agent) || rr.Phone != string(raw.phone) || rr.N != raw.n || rr.Status != raw.status {
			t.Fatalf("%q: scanRecord %+v, json.Unmarshal %+v", line, raw, rr)
		}
	})
}

func TestScanRecordFastPath(t *testing.T) {
	line := []byte(`{"t":"outcome","agent":"sales-east","phone":"+14155550100","n":2,"agent_id":"ag_1","status":"failed","http":422,"body":"{\"error\":\"bad\"}","at":"2026-11-21T09:00:00Z"}` + "\n")
	raw, ok := scanRecord(line)
	if !ok || raw.typ != TypeOutcome || string(raw.agent) != "sales-east" || string(raw.phone) != "+14155550100" || raw.n != 2 || raw.status != OutcomeFailed {
		t.Errorf("scanRecord = %+v, %v", raw, ok)
	}
	for _, slow := range []string{
		`{"t":"intent","agent":"a\"b","phone":"+1"}`,
		`{"t":"intent","agent":"a","phone":"+1","T":"outcome"}`,
		`{"t":"intent","agent":"a","phone":"+1","t":"run"}`,
		`{"t":"intent","agent":"a","phone":"+1","n":1.5}`,
		`{"t":"maybe","agent":"a","phone":"+1"}`,
	} {
		if raw, ok := scanRecord([]byte(slow)); ok {
			t.Errorf("scanRecord(%s) = %+v; want the slow path", slow, raw)
		}
	}
	allocs := testing.AllocsPerRun(100, func() { scanRecord(line) })
	if allocs != 0 {
		t.Errorf("scanRecord allocates %v times", allocs)
	}
}

// TestReplaySlowPath checks that records the fast path leaves alone are
// replayed all the same.
func TestReplaySlowPath(t *testing.T) {
	path := t.TempDir() + "/journal"
	j, _ := openJournal(t, path)
	odd := `a "quoted" \ agent`
	mustAppend(t, j, intent(odd, "+15550001"), outcome(odd, "+15550001", OutcomeSent), intent("é", "+15550002"))
	j.Close()
	appendRaw(t, path, `{"T":"outcome","Agent":"é","PHONE":"+15550002","status":"failed","at":"2026-01-01T00:00:00Z"}`+"\n")
	s := readState(t, path)
	if st, _ := s.Status(Key{odd, "+15550001", 0}); st != Sent {
		t.Errorf("agent with escapes: %q", st)
	}
	if st, _ := s.Status(Key{"é", "+15550002", 0}); st != Failed {
		t.Errorf("keys cased differently: %q", st)
	}
}
