package campaign

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

// TestIntakeConversationReadsTheJournalOnlyWhenItMust: an answered call's
// conversation goes to its call's contact when the delivery's number may
// be misread (written without its country code, or missing), which reads
// the campaign's journal; a number written with its country code reads
// the same in any region, and the journal, which grows with the campaign,
// is not read for its conversation (answered deliveries come one a call,
// each read before listen answers it). It is read once a call all the
// same, to tell callrun's call from one the service placed on its own
// (which counts as a call start): the call's later deliveries read it no
// more.
func TestIntakeConversationReadsTheJournalOnlyWhenItMust(t *testing.T) {
	const maria = "+525512345678" // the call's contact; region US reads "55 1234 5678" as +1 551 234 5678
	f, err := Load(writeCampaign(t, outcomesCampaign), LoadOptions{Getenv: env(map[string]string{"HOOK_SECRET": "hook-secret-0123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, number string
		lookups      int
		conversed    string // the number the conversation is recorded under
	}{
		{"with its country code", "+52 55 1234 5678", 1, maria},
		{"national", "55 1234 5678", 1, maria},
		{"none", "", 1, maria},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			deliveries, err := store.Files{Dir: t.TempDir()}.OpenDeliveries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { deliveries.Close() })
			starts := store.OpenCallStartsFile(t.TempDir())
			lookups := 0
			in := NewIntake(f, IntakeOptions{Deliveries: deliveries, Starts: starts, Calls: func(_ context.Context, ids map[string]bool) (map[string]store.Key, error) {
				lookups++
				if !ids["call-1"] {
					return nil, fmt.Errorf("asked for %v", ids)
				}
				return map[string]store.Key{"call-1": {Phone: maria}}, nil
			}})
			fields := map[string]string{"event": "call.answered", "call_id": "call-1"}
			if tc.number != "" {
				fields["phone_number"] = tc.number
			}
			d := apiclient.Delivery{Event: "call.answered", CallID: "call-1", Fields: fields}
			if _, err := in.Take(ctx, d, false, time.Now()); err != nil {
				t.Fatal(err)
			}
			started := apiclient.Delivery{Event: "call.started", CallID: "call-1", Fields: map[string]string{"event": "call.started", "call_id": "call-1", "phone_number": maria}}
			if _, err := in.Take(ctx, started, false, time.Now()); err != nil {
				t.Fatal(err)
			}
			if lookups != tc.lookups {
				t.Errorf("the journal was read %d times for the call's two deliveries, want %d", lookups, tc.lookups)
			}
			if hist, err := starts.History(ctx, maria); err != nil || len(hist) != 0 {
				t.Errorf("call starts of %s: %+v (%v), want none: callrun placed the call", maria, hist, err)
			}
			got, err := starts.Conversations(ctx, tc.conversed)
			if err != nil || len(got) != 1 {
				t.Errorf("conversations of %s: %+v (%v), want one", tc.conversed, got, err)
			}
		})
	}
}

// TestMayBeConversation: Reg F's hold after a conversation fails closed.
// Every delivery of a call may report one but a call.started and one
// whose duration is 0: the service's account webhooks send the contact's
// form alone, no event, and an agent's completion names none either, so a
// hold that waited for a call.answered would never come.
func TestMayBeConversation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		event  string
		fields map[string]string
		want   bool
	}{
		{"call.answered", "call.answered", nil, true},
		{"call.answered, duration 0 (it has just begun)", "call.answered", map[string]string{"duration": "0"}, true},
		{"call.started", "call.started", nil, false},
		{"call_started, another spelling", "call_started", nil, false},
		{"call.ended", "call.ended", nil, true},
		{"call.ended after 42 s", "call.ended", map[string]string{"data.duration": "42"}, true},
		{"call.ended, duration 0", "call.ended", map[string]string{"data.duration": "0"}, false},
		{"call.completed, duration 0.0", "call.completed", map[string]string{"duration": "0.0"}, false},
		{"call.ended, duration 00:00:00", "call.ended", map[string]string{"duration": "00:00:00"}, false},
		{"call.ended, duration 00:00:07", "call.ended", map[string]string{"duration": "00:00:07"}, true},
		{"call.ended, duration unreadable", "call.ended", map[string]string{"duration": "n/a"}, true},
		{"an agent's completion, duration_seconds 0", "call.completed", map[string]string{"durationSeconds": "0"}, false},
		{"an agent's completion, duration_seconds 12", "", map[string]string{"duration_seconds": "12"}, true},
		{"the contact's form, no event", "", map[string]string{"phone_number": "+14155550132", "first_name": "Ada"}, true},
		{"an event callrun does not know", "call_analyzed", nil, true},
		{"a Salesforce Lead changed", apiclient.SalesforceEvent, map[string]string{"sObjectType": "Lead", "Phone": "+14155550132", "DoNotCall": "false"}, false},
		{"a Salesforce Task logging a call", apiclient.SalesforceEvent, map[string]string{"sObjectType": "Task", "CallDurationInSeconds": "95"}, true},
		{"a Salesforce record of no known type", apiclient.SalesforceEvent, map[string]string{"Phone": "+14155550132"}, true},
	} {
		d := apiclient.Delivery{Event: tc.event, Fields: tc.fields}
		if got := mayBeConversation(d); got != tc.want {
			t.Errorf("%s: may be a conversation %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestIntakeConversationOfACallerNumberGoesToTheCallsContact: a delivery
// of a call callrun placed whose only number is its caller_number, written
// with its country code, may hold either end of the call (the campaign's
// caller ID when own_numbers does not list it): the conversation is the
// call's contact's, as an opt-out's number is, or the person who spoke
// with the agent is called again within Reg F's 7 days.
func TestIntakeConversationOfACallerNumberGoesToTheCallsContact(t *testing.T) {
	const maria = "+525512345678"   // the call's contact
	const callerID = "+14155550199" // the campaign's outbound number, not in own_numbers
	f, err := Load(writeCampaign(t, outcomesCampaign), LoadOptions{Getenv: env(map[string]string{"HOOK_SECRET": "hook-secret-0123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	deliveries, err := store.Files{Dir: t.TempDir()}.OpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deliveries.Close() })
	starts := store.OpenCallStartsFile(t.TempDir())
	in := NewIntake(f, IntakeOptions{Deliveries: deliveries, Starts: starts, Calls: func(_ context.Context, ids map[string]bool) (map[string]store.Key, error) {
		if ids["call-1"] {
			return map[string]store.Key{"call-1": {Phone: maria}}, nil
		}
		return map[string]store.Key{}, nil
	}})
	d := apiclient.Delivery{Event: "call.answered", CallID: "call-1", Fields: map[string]string{"event": "call.answered", "call_id": "call-1", "caller_number": callerID}}
	taken, err := in.Take(ctx, d, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !taken.Number.Caller {
		t.Fatalf("the number was not read from caller_number: %+v", taken.Number)
	}
	got, err := starts.Conversations(ctx, maria)
	if err != nil || len(got) != 1 {
		t.Errorf("conversations of the call's contact %s: %+v (%v), want one", maria, got, err)
	}
}

// TestConversationAt: a conversation is recorded at the later of this
// machine's clock and the delivery's timestamp when the timestamp is
// ahead by more than the clock's allowance, at most 7 days ahead.
func TestConversationAt(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		timestamp string
		want      time.Time
		behind    time.Duration
	}{
		{"none", "", at, 0},
		{"a retry hours later", "2025-03-01T08:00:00Z", at, 0},
		{"within the allowance", "2025-03-01T12:00:30Z", at, 0},
		{"two days ahead", "2025-03-03T12:00:00Z", at.Add(48 * time.Hour), 48 * time.Hour},
		{"years ahead", "2031-03-01T12:00:00Z", at.Add(7 * 24 * time.Hour), 7 * 24 * time.Hour},
	} {
		fields := map[string]string{"event": "call.ended"}
		if tc.timestamp != "" {
			fields["timestamp"] = tc.timestamp
		}
		got, behind := conversationAt(apiclient.Delivery{Fields: fields}, at)
		if !got.Equal(tc.want) || behind != tc.behind {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, behind, tc.want, tc.behind)
		}
	}
}

// TestIntakeServiceStart: a delivery of a call id callrun did not place
// counts one call start for its number, however often it comes, and
// whatever event; one of callrun's own call, one that names no call id,
// and one of a call that came in (Retell's direction "inbound") count
// none.
func TestIntakeServiceStart(t *testing.T) {
	const olivia = "+14155550132"
	f, err := Load(writeCampaign(t, outcomesCampaign), LoadOptions{Getenv: env(map[string]string{"HOOK_SECRET": "hook-secret-0123456789"})})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	deliveries, err := store.Files{Dir: t.TempDir()}.OpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deliveries.Close() })
	starts := store.OpenCallStartsFile(t.TempDir())
	in := NewIntake(f, IntakeOptions{Deliveries: deliveries, Starts: starts, Calls: func(_ context.Context, ids map[string]bool) (map[string]store.Key, error) {
		if ids["call-own"] {
			return map[string]store.Key{"call-own": {Phone: olivia}}, nil
		}
		return map[string]store.Key{}, nil
	}})
	take := func(event, callID string, more ...string) {
		t.Helper()
		fields := map[string]string{"event": event, "phone_number": olivia}
		if callID != "" {
			fields["call_id"] = callID
		}
		for i := 0; i+1 < len(more); i += 2 {
			fields[more[i]] = more[i+1]
		}
		if _, err := in.Take(ctx, apiclient.Delivery{Event: event, CallID: callID, Fields: fields}, false, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	take("call.started", "call-own")
	take("call.ended", "call-own")
	take("call.ended", "")
	take("call.started", "call-in", "direction", "inbound")
	take("call.started", "call-redial")
	take("call.started", "call-redial")
	take("call.ended", "call-redial")
	hist, err := starts.History(ctx, olivia)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 1 || hist[0].ID != store.ServiceStartID("call-redial") {
		t.Errorf("call starts of %s: %+v, want the redial's one", olivia, hist)
	}
}
