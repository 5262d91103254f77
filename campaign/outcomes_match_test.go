package campaign

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

func TestOutcomeIndexMatches(t *testing.T) {
	f := &File{Region: "US", Outcomes: &Outcomes{Fields: []string{"disposition", "duration"}}}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := func(sec int, event, phone, agent string, more ...string) store.Delivery {
		fields := map[string]string{"event": event, "phone_number": phone}
		for i := 0; i+1 < len(more); i += 2 {
			fields[more[i]] = more[i+1]
		}
		return store.Delivery{Key: event + phone + agent, At: at.Add(time.Duration(sec) * time.Second), Event: event, AgentID: agent, Fields: fields}
	}
	ds := []store.Delivery{
		// Ada's, out of order: ended came first.
		d(1, "call.ended", "+14155550132", "", "disposition", "interested", "duration", "42"),
		d(2, "call.started", "+14155550132", ""),
		d(3, "call.answered", "+14155550132", "", "disposition", "pending"),
		// Bob's: the service redialled; the number written nationally.
		d(4, "call.started", "(415) 555-0133", "agent_b"),
		d(5, "call.started", "415 555 0133", "agent_b", "attempt", "2"),
		// Another agent's call to Bob's number, and a stranger's.
		d(6, "call.ended", "+14155550133", "agent_x"),
		d(7, "call.ended", "+14155550199", ""),
		// Cy's number with another contact's ghl_contact_id.
		d(8, "call.ended", "+14155550134", "", "ghl_contact_id", "other"),
		d(9, "call.completed", "+14155550134", "", "ghl_contact_id", "cy-1", "status", "completed"),
		d(10, "something.else", "not a number", ""),
	}
	x := NewOutcomeIndex(f, ds)
	contact := func(num, ghl string) *Contact {
		c := &Contact{Phone: num}
		c.Fields[FieldGHLContactID] = ghl
		return c
	}
	ada := x.Outcome(contact("+14155550132", ""), "s.csv", store.Key{}, "agent_a")
	if want := (report.Outcome{Event: "ended", At: "2026-11-25T12:00:01Z", Starts: 1, Detail: "disposition=interested; duration=42", Answered: true}); ada != want {
		t.Errorf("Ada: %+v, want %+v", ada, want)
	}
	bob := x.Outcome(contact("+14155550133", ""), "s.csv", store.Key{}, "agent_b")
	if want := (report.Outcome{Event: "started", At: "2026-11-25T12:00:05Z", Starts: 2}); bob != want {
		t.Errorf("Bob: %+v, want %+v", bob, want)
	}
	cy := x.Outcome(contact("+14155550134", "cy-1"), "s.csv", store.Key{}, "agent_c")
	if cy.Event != "ended" || cy.At != "2026-11-25T12:00:09Z" || cy.Detail != "" {
		t.Errorf("Cy: %+v", cy)
	}
	if again := x.Outcome(contact("+14155550132", ""), "s.csv", store.Key{}, "agent_a"); again != (report.Outcome{}) {
		t.Errorf("a delivery was taken twice: %+v", again)
	}
	// agent_x's, the stranger's, the other ghl_contact_id's and the unreadable one.
	if n := x.Unmatched(); n != 4 {
		t.Errorf("%d unmatched, want 4", n)
	}
	if tk, _, ok := x.Taken(0); !ok || tk != (Taker{"s.csv", 0}) {
		t.Errorf("Ada's first delivery taken by %+v %v", tk, ok)
	}
	if _, _, ok := x.Taken(5); ok {
		t.Error("agent_x's delivery is taken")
	}
}

// openCallJournal opens a journal in a temporary directory, closed when
// the test ends.
func openCallJournal(t *testing.T) (*store.Journal, *store.State) {
	t.Helper()
	j, st, err := store.OpenJournal(filepath.Join(t.TempDir(), store.JournalFile), store.JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { j.Close(); st.Close() })
	return j, st
}

// appendCall appends to j the intent of the call c describes (its agent,
// number, occurrence, row and time) and, a second later, its sent
// outcome with callID, and returns its contact's key.
func appendCall(t *testing.T, j *store.Journal, c store.Record, callID string) store.Key {
	t.Helper()
	c.Type, c.Attempt, c.Sheet = store.TypeIntent, 1, "s.csv"
	if err := j.Append(c); err != nil {
		t.Fatal(err)
	}
	c.Type, c.Status, c.HTTP, c.At, c.CallID = store.TypeOutcome, store.OutcomeSent, 200, c.At.Add(time.Second), callID
	if err := j.Append(c); err != nil {
		t.Fatal(err)
	}
	return c.Key()
}

// TestOutcomeIndexSharedNumber: with dedupe: none two rows share a
// number, and with dedupe: agent two agents call it. Each delivery goes
// to the contact whose call started last before it came, not to the
// first in sheet order; a delivery naming its agent only to that agent's
// contact; one that came before any call, to the first called.
func TestOutcomeIndexSharedNumber(t *testing.T) {
	const num = "+14155550140"
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	j, st := openCallJournal(t)
	call := func(agent, agentID string, n, row int, at time.Time) store.Key {
		return appendCall(t, j, store.Record{Agent: agent, AgentID: agentID, Phone: num, N: n, Row: row, At: at}, "")
	}
	// Row 3 is called before row 2 (row 2 waited for its hours); row 4,
	// through another agent, last.
	k3 := call("A", "agent_a", 1, 3, t0)
	k2 := call("A", "agent_a", 0, 2, t0.Add(10*time.Minute))
	k4 := call("B", "agent_b", 0, 4, t0.Add(20*time.Minute))
	d := func(min int, event, agent string) store.Delivery {
		return store.Delivery{Key: fmt.Sprint(min, event, agent), At: t0.Add(time.Duration(min) * time.Minute), Event: event, AgentID: agent,
			Fields: map[string]string{"phone_number": num, "event": event}}
	}
	ds := []store.Delivery{
		d(-5, "call.started", ""),        // before any call: the first called, row 3
		d(2, "call.ended", ""),           // row 3's call
		d(12, "call.ended", ""),          // row 2's call
		d(25, "call.ended", "agent_a"),   // after row 4 started, but it names agent_a: row 2
		d(26, "call.answered", ""),       // row 4's call
		d(27, "call.ended", "agent_zzz"), // nobody's agent
	}
	f := &File{Region: "US", Dedupe: "none", Outcomes: &Outcomes{}}
	x := NewOutcomeIndex(f, ds)
	x.Share(st)
	c := func(row int) *Contact { return &Contact{Phone: num, Row: row} }
	// In sheet order: row 2 first.
	o2 := x.Outcome(c(2), "s.csv", k2, "agent_a")
	o3 := x.Outcome(c(3), "s.csv", k3, "agent_a")
	o4 := x.Outcome(c(4), "s.csv", k4, "agent_b")
	if o2.Event != "ended" || o2.At != "2026-11-25T12:25:00Z" || o2.Starts != 0 {
		t.Errorf("row 2: %+v, want ended at 12:25 (its own and agent_a's)", o2)
	}
	if o3.Event != "ended" || o3.At != "2026-11-25T12:02:00Z" || o3.Starts != 1 {
		t.Errorf("row 3: %+v, want ended at 12:02 and the early start", o3)
	}
	if o4.Event != "answered" || !o4.Answered {
		t.Errorf("row 4: %+v, want answered", o4)
	}
	if n := x.Unmatched(); n != 1 {
		t.Errorf("%d unmatched, want 1 (agent_zzz's)", n)
	}
	for i, want := range []int{3, 3, 2, 2, 4} {
		if tk, _, _ := x.Taken(i); tk.Row != want {
			t.Errorf("delivery %d went to row %d, want row %d", i, tk.Row, want)
		}
	}
}

// TestOutcomeIndexRules: a delivery that names a call of the journal goes
// to that call's contact whatever number it holds; one through an agent
// of no contact's (a redial agent) to the one contact with its number
// whose call started within pace.call_length before it, and to nobody
// when it came later or two such calls started; one whose number does not
// read, to the contact with its ghl_contact_id. `callrun outcomes` says by
// which rule.
func TestOutcomeIndexRules(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	j, st := openCallJournal(t)
	call := func(num, callID string, n int, at time.Time) store.Key {
		return appendCall(t, j, store.Record{Agent: "A", AgentID: "agent_a", Phone: num, N: n, Row: 2, At: at}, callID)
	}
	const ada, bob, twice = "+14155550150", "+14155550151", "+14155550152"
	kAda := call(ada, "call_ada", 0, t0)
	kBob := call(bob, "call_bob", 0, t0)
	kTwice0 := call(twice, "", 0, t0)
	kTwice1 := call(twice, "", 1, t0.Add(time.Minute))
	d := func(min int, event, agent, callID string, fields ...string) store.Delivery {
		fs := map[string]string{"event": event}
		for i := 0; i+1 < len(fields); i += 2 {
			fs[fields[i]] = fields[i+1]
		}
		return store.Delivery{Key: fmt.Sprint(min, event, agent, callID, fields), At: t0.Add(time.Duration(min) * time.Minute), Event: event, AgentID: agent, CallID: callID, Fields: fs}
	}
	ds := []store.Delivery{
		d(3, "call.ended", "agent_a", "call_ada", "caller_number", bob), // Ada's call, Bob's number: Ada's
		d(4, "call.answered", "", "call_ada"),                           // Ada's call, no number: Ada's
		d(5, "call.started", "agent_redial", "", "phone_number", bob),   // a redial within call_length: Bob's
		d(50, "call.ended", "agent_redial", "", "phone_number", bob),    // a redial 50 minutes after: nobody's
		d(6, "call.started", "agent_redial", "", "phone_number", twice), // two calls to the number within it: nobody's
		d(7, "call.ended", "", "", "ghl_contact_id", "ghl-bob"),         // no number: by ghl_contact_id
	}
	f := &File{Region: "US", Dedupe: "none", Pace: Pace{CallLength: 10 * time.Minute}, Outcomes: &Outcomes{}}
	x := NewOutcomeIndex(f, ds)
	if err := x.byCall(st); err != nil {
		t.Fatal(err)
	}
	x.byRedial(f, st)
	x.Share(st)
	contact := func(num, ghl string, row int) *Contact {
		c := &Contact{Phone: num, Row: row}
		c.Fields[FieldGHLContactID] = ghl
		return c
	}
	oBob := x.Outcome(contact(bob, "ghl-bob", 3), "s.csv", kBob, "agent_a")
	oAda := x.Outcome(contact(ada, "", 2), "s.csv", kAda, "agent_a")
	x.Outcome(contact(twice, "", 4), "s.csv", kTwice0, "agent_a")
	x.Outcome(contact(twice, "", 5), "s.csv", kTwice1, "agent_a")
	if oAda.Event != "ended" || !oAda.Answered {
		t.Errorf("Ada: %+v, want her call's end and answer", oAda)
	}
	if oBob.Event != "ended" || oBob.Starts != 1 || oBob.At != "2026-11-25T12:07:00Z" {
		t.Errorf("Bob: %+v, want the redial's start and the ghl_contact_id's end", oBob)
	}
	for i, want := range []struct {
		row int
		how string
	}{{2, MatchedByCallID}, {2, MatchedByCallID}, {3, MatchedByNumber}, {0, ""}, {0, ""}, {3, MatchedByGHL}} {
		tk, how, ok := x.Taken(i)
		if tk.Row != want.row || how != want.how || ok != (want.row != 0) {
			t.Errorf("delivery %d: row %d %q %v, want row %d %q", i, tk.Row, how, ok, want.row, want.how)
		}
	}
}

// TestOutcomeSameCallLaterWins: two deliveries of one call and event
// that say different things are both stored (apiclient's Delivery.Key):
// the outcome's time and its fields are the one received later's, and
// two call.started of one call count one service start.
func TestOutcomeSameCallLaterWins(t *testing.T) {
	f := &File{Region: "US", Outcomes: &Outcomes{Fields: []string{"disposition"}}}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := func(sec int, key, event, disposition string) store.Delivery {
		fields := map[string]string{"event": event, "data.call_id": "call_7", "data.caller_number": "+14155550132"}
		if disposition != "" {
			fields["data.disposition"] = disposition
		}
		return store.Delivery{Key: key, At: at.Add(time.Duration(sec) * time.Second), Event: event, CallID: "call_7", AgentID: "agent_a", Fields: fields}
	}
	x := NewOutcomeIndex(f, []store.Delivery{
		d(1, "k1", "call.started", ""),
		d(2, "k2", "call.started", ""), // the same call's start again, with more to say
		d(3, "k3", "call.ended", "completed"),
		d(9, "k4", "call.ended", "do_not_call"),
	})
	c := &Contact{Phone: "+14155550132"}
	got := x.Outcome(c, "s.csv", store.Key{}, "agent_a")
	if want := (report.Outcome{Event: "ended", At: "2026-11-25T12:00:09Z", Starts: 1, Detail: "disposition=do_not_call"}); got != want {
		t.Errorf("%+v, want %+v", got, want)
	}
}
