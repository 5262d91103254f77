package campaign

import (
	"context"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

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
