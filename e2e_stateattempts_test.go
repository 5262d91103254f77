package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestStateCapOnCallsInADay: Florida's, Oklahoma's and Maryland's laws
// allow at most three calls to one person in 24 hours on the same
// subject (Florida's Telephone Solicitation Act, Fla. Stat. §
// 501.616(6)(b); Oklahoma's Telephone Solicitation Act; Maryland's Stop
// the Spam Calls Act). Five campaigns on one store, each with
// `pressure: {per_day: 5}`, call a Miami, an Oklahoma City, a Baltimore
// and a New York number in turn, within a few seconds: the sandbox's
// ledger holds three calls to each of the first three (the other two
// runs leave them pending), five to New York's.
func TestStateCapOnCallsInADay(t *testing.T) {
	for _, kind := range e2eStores {
		t.Run(kind, func(t *testing.T) {
			ctx := context.Background()
			db := e2eDatabase(t, kind)
			srv := sandbox.NewServer(sandbox.Options{})
			t.Cleanup(srv.Close)
			numbers := map[string]int{"+13055550132": 3, "+14055550132": 3, "+14105550132": 3, "+12125550132": 5}
			newCampaign := campaignsOnOneStore(t, srv.URL, db)
			for i := range 5 {
				path := newCampaign(fmt.Sprintf("campaign-%d", i), "pressure: {per_day: 5}\n")
				sheet := "Phone,First Name\n+13055550132,Ada\n+14055550132,Grace\n+14105550132,Alan\n+12125550132,Edsger\n"
				if err := os.WriteFile(filepath.Join(filepath.Dir(path), "contacts.csv"), []byte(sheet), 0o600); err != nil {
					t.Fatal(err)
				}
				// Runs past the third leave the three pending: exit "try later".
				_ = runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard)
			}
			placed := map[string]int{}
			for _, c := range srv.Placed() {
				placed[c.Form.Get("phone_number")]++
			}
			for n, want := range numbers {
				if placed[n] != want {
					t.Errorf("%s placed %d times in five runs within seconds; want %d", n, placed[n], want)
				}
			}
		})
	}
}
