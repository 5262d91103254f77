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
// is not read for it (answered deliveries come one a call, each read
// before listen answers it).
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
		{"with its country code", "+52 55 1234 5678", 0, maria},
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
			if lookups != tc.lookups {
				t.Errorf("the journal was read %d times, want %d", lookups, tc.lookups)
			}
			got, err := starts.Conversations(ctx, tc.conversed)
			if err != nil || len(got) != 1 {
				t.Errorf("conversations of %s: %+v (%v), want one", tc.conversed, got, err)
			}
		})
	}
}
