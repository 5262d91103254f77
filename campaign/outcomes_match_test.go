package campaign

import (
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/phone"
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
	x := NewOutcomeIndex(f, phone.NewNormalizer(), ds)
	contact := func(num, ghl string) *Contact {
		c := &Contact{Phone: num}
		c.Fields[FieldGHLContactID] = ghl
		return c
	}
	ada := x.Outcome(contact("+14155550132", ""), "agent_a")
	if want := (report.Outcome{Event: "ended", At: "2026-11-25T12:00:01Z", Starts: 1, Detail: "disposition=interested; duration=42", Answered: true}); ada != want {
		t.Errorf("Ada: %+v, want %+v", ada, want)
	}
	bob := x.Outcome(contact("+14155550133", ""), "agent_b")
	if want := (report.Outcome{Event: "started", At: "2026-11-25T12:00:05Z", Starts: 2}); bob != want {
		t.Errorf("Bob: %+v, want %+v", bob, want)
	}
	cy := x.Outcome(contact("+14155550134", "cy-1"), "agent_c")
	if cy.Event != "ended" || cy.At != "2026-11-25T12:00:09Z" || cy.Detail != "" {
		t.Errorf("Cy: %+v", cy)
	}
	if again := x.Outcome(contact("+14155550132", ""), "agent_a"); again != (report.Outcome{}) {
		t.Errorf("a delivery was taken twice: %+v", again)
	}
	// agent_x's, the stranger's, the other ghl_contact_id's and the unreadable one.
	if n := x.Unmatched(); n != 4 {
		t.Errorf("%d unmatched, want 4", n)
	}
}
