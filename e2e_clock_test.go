package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestRunStopsOnAClockOffFromTheService: the service dates its answers
// two hours before this machine's clock (this machine's clock is two
// hours ahead, say). A run reads the called person's hours and contact
// pressure by this machine's clock, so it starts no call: before the
// first when the agents' answers say so, and, when the clocks part only
// at the answer to the third call start, no fourth. Nobody is called twice, and a
// run once the clocks agree again calls the rest.
func TestRunStopsOnAClockOffFromTheService(t *testing.T) {
	for _, tc := range []struct {
		name     string
		rightFor int32 // the call start whose answer is the first dated two hours back; 0: every answer
	}{
		{"from the start", 0},
		{"after three calls", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 8
			srv := sandbox.NewUnstartedServer(sandbox.Options{})
			var callStarts atomic.Int32
			var apart atomic.Bool
			apart.Store(tc.rightFor == 0)
			inner := srv.Handler()
			srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if parts := strings.Split(r.URL.Path, "/"); len(parts) == 4 && parts[1] == "call" {
					if callStarts.Add(1) == tc.rightFor {
						apart.Store(true) // this one's answer is the first dated wrong
					}
				}
				if apart.Load() {
					w.Header().Set("Date", time.Now().Add(-2*time.Hour).UTC().Format(http.TimeFormat))
				}
				inner.ServeHTTP(w, r)
			})
			srv.Start()
			t.Cleanup(srv.Close)
			e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(n), perSecond: 50, concurrency: 1})

			res := e.run(60*time.Second, "run", e.path)
			if res.code == 0 {
				t.Fatalf("run with this machine's clock two hours ahead of the service's: exit 0\n%s", res)
			}
			if want := "this machine's clock is 2h0m0s ahead of the voice service's"; !strings.Contains(res.stderr, want) || !strings.Contains(res.stderr, "time sync") {
				t.Errorf("stderr does not say %q and what to do:\n%s", want, res.stderr)
			}
			if got := len(srv.Placed()); got != int(tc.rightFor) {
				t.Errorf("%d calls placed; want %d (none after the clocks parted)", got, tc.rightFor)
			}
			e.ledger().checkNobodyTwice(t)

			apart.Store(false)
			callStarts.Store(-n) // no call start parts the clocks again
			if res := e.run(60*time.Second, "run", e.path); res.code != 0 {
				t.Fatalf("run once the clocks agree: %s", res)
			}
			if got := len(srv.Placed()); got != n {
				t.Errorf("%d calls placed in all; want %d", got, n)
			}
			e.ledger().checkNobodyTwice(t)
		})
	}
}

// TestRunArchivesNothingBeforeItsClockIsChecked: this machine's clock is
// 40 days ahead of the service's, and a listen on it recorded a
// conversation by that clock; the store's other conversations are of
// yesterday by the service's clock, 41 days old by this one's. A run
// moves the starts and conversations too old to count into archives no
// run reads, by this machine's clock, so it must do so only once its
// clock is checked: this run stops at the check, and the conversations,
// which Reg F still counts, stay where runs read them.
func TestRunArchivesNothingBeforeItsClockIsChecked(t *testing.T) {
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	inner := srv.Handler()
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(-40*24*time.Hour).UTC().Format(http.TimeFormat))
		inner.ServeHTTP(w, r)
	})
	srv.Start()
	t.Cleanup(srv.Close)
	path := campaignsOnOneStore(t, srv.URL, "")("ahead", "pressure: {preset: reg_f}\n")
	home := os.Getenv("CALLRUN_HOME")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	// Over the 1 MiB a compaction waits for.
	var b []byte
	yesterday := time.Now().Add(-41 * 24 * time.Hour)
	for i := range 12000 {
		c := store.Conversation{Number: fmt.Sprintf("+1415556%04d", i), At: yesterday.Add(time.Duration(i) * time.Second), Campaign: "older", Key: fmt.Sprintf("%032x", i)}
		line, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	line, _ := json.Marshal(store.Conversation{Number: "+14155569999", At: time.Now(), Campaign: "older", Key: "today"})
	b = append(append(b, line...), '\n')
	file := filepath.Join(home, store.ConversationsFileName)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}

	err := runCampaign(context.Background(), nolog, runOptions{Path: path}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ahead of the voice service's") {
		t.Fatalf("run with this machine's clock 40 days ahead: %v; want it stopped at the clock check", err)
	}
	after, err := os.ReadFile(file)
	if err != nil || !bytes.Equal(after, b) {
		t.Errorf("the conversations file changed (%d bytes of %d, %v): a run archived them before checking its clock", len(after), len(b), err)
	}
	if _, err := os.Stat(filepath.Join(home, store.ConversationsArchiveName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an archive of conversations was made: %v", err)
	}
}
