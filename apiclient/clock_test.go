package apiclient

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestServiceClock: the offset of this machine's clock from the service's
// is read from each answer's Date, with a cache's Age added; Check
// refuses past the bound, saying which way and by how much, and passes
// an offset within it, or answers with no Date to compare with.
func TestServiceClock(t *testing.T) {
	served := time.Date(2026, 11, 29, 14, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		date   string // the answer's Date; "-" for none
		age    string
		now    time.Time // this machine's clock
		offset time.Duration
		seen   bool
		says   string // in Check's error; "" for none
	}{
		{"two hours ahead", served.Format(http.TimeFormat), "", served.Add(2 * time.Hour), 2 * time.Hour, true, "is 2h0m0s ahead of the voice service's"},
		{"three minutes behind", served.Format(http.TimeFormat), "", served.Add(-3 * time.Minute), -3 * time.Minute, true, "is 3m0s behind the voice service's"},
		{"thirty seconds off", served.Format(http.TimeFormat), "", served.Add(30 * time.Second), 30 * time.Second, true, ""},
		{"a cached answer", served.Add(-time.Hour).Format(http.TimeFormat), "3600", served, 0, true, ""},
		{"a cached answer, the clock ahead", served.Add(-time.Hour).Format(http.TimeFormat), "60", served, 59 * time.Minute, true, "is 59m0s ahead"},
		{"no Date", "-", "", served.Add(5 * time.Hour), 0, false, ""},
		{"a Date that does not read", "yesterday", "", served.Add(5 * time.Hour), 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.date == "-" {
					w.Header()["Date"] = nil // net/http adds none then
				} else {
					w.Header().Set("Date", tc.date)
				}
				if tc.age != "" {
					w.Header().Set("Age", tc.age)
				}
				w.Write([]byte("{}"))
			}))
			defer srv.Close()
			clock := NewServiceClock(func() time.Time { return tc.now })
			c := &http.Client{Transport: &Transport{Base: http.DefaultTransport, Clock: clock}}
			resp, err := c.Get(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if off, seen := clock.Offset(); off != tc.offset || seen != tc.seen {
				t.Errorf("Offset() = %s, %v; want %s, %v", off, seen, tc.offset, tc.seen)
			}
			err = clock.Check(MaxClockOffset)
			switch {
			case tc.says == "" && err != nil:
				t.Errorf("Check: %v; want none", err)
			case tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "time sync")):
				t.Errorf("Check: %v; want it to say %q and what to do", err, tc.says)
			}
		})
	}
}

// TestServiceClockReadsOnlyTheService: an answer from a host other than
// the service's (a call endpoint elsewhere) does not date the service's
// clock: its Date two hours back stops no run, and does not hide the
// service's own offset either.
func TestServiceClockReadsOnlyTheService(t *testing.T) {
	dated := func(d time.Duration) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Date", time.Now().Add(d).UTC().Format(http.TimeFormat))
			w.Write([]byte("{}"))
		}))
	}
	service, elsewhere := dated(0), dated(-2*time.Hour)
	defer service.Close()
	defer elsewhere.Close()
	origin, err := url.Parse(service.URL)
	if err != nil {
		t.Fatal(err)
	}
	clock := NewServiceClock(nil)
	c := &http.Client{Transport: &Transport{Origin: origin, Base: http.DefaultTransport, Clock: clock}}
	for _, u := range []string{service.URL, elsewhere.URL} {
		resp, err := c.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if err := clock.Check(MaxClockOffset); err != nil {
		t.Errorf("Check after an answer from another host dated two hours back: %v; want none (the service's own answer agrees)", err)
	}
	if off, seen := clock.Offset(); !seen || off.Abs() > MaxClockOffset {
		t.Errorf("Offset() = %s, %v; want the service's, within %s", off, seen, MaxClockOffset)
	}
}
