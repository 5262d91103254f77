package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"
)

// TestHoldUntilBoundaries: one start holds a number for exactly 24
// hours, and the fifteenth start in 14 days waits for the first to be 14
// days old, over a fake clock.
func TestHoldUntilBoundaries(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	const n = "+14155550100"
	if h := HoldUntil(DefaultPressure, n, nil, t0); h != nil {
		t.Fatalf("a number never called is held: %v", h)
	}
	h := HoldUntil(DefaultPressure, n, []time.Time{t0}, t0.Add(24*time.Hour-time.Nanosecond))
	if h == nil || !h.Until.Equal(t0.Add(24*time.Hour)) || h.Limit.Within != 24*time.Hour {
		t.Fatalf("a nanosecond before the day is over: %+v, want held until %s", h, t0.Add(24*time.Hour))
	}
	if h := HoldUntil(DefaultPressure, n, []time.Time{t0}, t0.Add(24*time.Hour)); h != nil {
		t.Fatalf("24 hours after its call: %v, want free", h)
	}
	var days []time.Time
	for i := range 14 {
		days = append(days, t0.Add(time.Duration(i)*24*time.Hour))
	}
	next := days[13].Add(24 * time.Hour) // 14 days after t0: the first start drops out
	if h := HoldUntil(DefaultPressure, n, days, next.Add(-time.Nanosecond)); h == nil || h.Limit.Max != 14 || !h.Until.Equal(next) || h.Starts != 14 {
		t.Fatalf("the 15th start a nanosecond early: %+v, want held by 14 in 14 days until %s", h, next)
	}
	if h := HoldUntil(DefaultPressure, n, days, next); h != nil {
		t.Fatalf("the 15th start 14 days after the first: %v, want free", h)
	}
	// Reg F: 7 in 7 days; a limit of 2 a day is held by the older start.
	two := []PressureLimit{{Within: 24 * time.Hour, Max: 2}}
	if h := HoldUntil(two, n, []time.Time{t0.Add(time.Hour), t0}, t0.Add(2*time.Hour)); h == nil || !h.Until.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("two a day: %+v, want held until the older start is a day old", h)
	}
	if h := HoldUntil(nil, n, days, next); h != nil {
		t.Fatalf("no limits: %v", h)
	}
}

// pressureFor returns the contact pressure of a campaign of store s, in
// the call starts every campaign of the test shares, over clock.
func pressureFor(t *testing.T, s Store, campaign string, clock func() time.Time) *Pressure {
	var starts CallStarts = OpenCallStartsFile(sharedDir(t, "home"))
	if p, ok := s.(*Postgres); ok {
		starts, _ = p.CallStarts()
	}
	return &Pressure{Limits: DefaultPressure, Starts: starts, Campaign: campaign, Now: clock}
}

// TestPressureAcrossCampaigns: a number called by one campaign is held
// by the next two with the date it may be called again; a refusal the
// service answered, and a start provably not sent, give the day back; the
// held intent is not written; History shows every start.
func TestPressureAcrossCampaigns(t *testing.T) {
	ctx := context.Background()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			stores := map[string]Store{}
			open := func(campaign string) *Journal {
				s := sk.open(t, campaign, 0, 1)
				stores[campaign] = s
				unlock := lockStore(t, s)
				j, st, err := s.OpenJournal(ctx, JournalOptions{Pressure: pressureFor(t, s, campaign, clock)})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					j.Close()
					st.Close()
					unlock()
				})
				return j
			}
			const n = "+14155550100"
			intent := func(attempt int) Record {
				return Record{Type: TypeIntent, Agent: "A", Phone: n, Attempt: attempt}
			}
			mon, tue, wed := open("monday"), open("tuesday"), open("wednesday")
			if err := mon.Append(intent(1)); err != nil {
				t.Fatalf("the first call start: %v", err)
			}
			day := now.Add(24 * time.Hour)
			now = now.Add(2 * time.Hour)
			var h *HeldError
			if err := tue.Append(intent(1)); !errors.As(err, &h) || !errors.Is(err, ErrHeld) || !h.Until.Equal(day) {
				t.Fatalf("the second campaign 2 hours later: %v, want held until %s", err, day)
			}
			now = day.Add(-time.Second)
			if err := wed.Append(intent(1)); !errors.As(err, &h) || !h.Until.Equal(day) {
				t.Fatalf("the third campaign a second before the day is over: %v, want held until %s", err, day)
			}
			now = day
			if err := wed.Append(intent(1)); err != nil {
				t.Fatalf("the third campaign 24 hours after the first call: %v", err)
			}
			now = now.Add(time.Hour)
			if err := tue.Append(intent(1)); !errors.As(err, &h) || !h.Until.Equal(day.Add(24*time.Hour)) {
				t.Fatalf("the second campaign after the third called: %v, want held until %s", err, day.Add(24*time.Hour))
			}
			// The service refuses wednesday's call: the day is given back.
			if err := wed.Append(Record{Type: TypeOutcome, Agent: "A", Phone: n, Attempt: 1, Status: OutcomeFailed, HTTP: 422}); err != nil {
				t.Fatal(err)
			}
			if err := tue.Append(intent(1)); err != nil {
				t.Fatalf("after the third campaign's call was refused: %v", err)
			}
			// Provably not sent (a 429): given back too; sent: kept.
			if err := tue.Append(Record{Type: TypeOutcome, Agent: "A", Phone: n, Attempt: 1, Status: OutcomeRetry, HTTP: 429}); err != nil {
				t.Fatal(err)
			}
			if err := tue.Append(intent(2)); err != nil {
				t.Fatalf("the retry after a 429: %v", err)
			}
			if err := tue.Append(Record{Type: TypeOutcome, Agent: "A", Phone: n, Attempt: 2, Status: OutcomeSent}); err != nil {
				t.Fatal(err)
			}
			if err := mon.Append(intent(2)); !errors.Is(err, ErrHeld) {
				t.Fatalf("after a sent call: %v, want held", err)
			}
			for _, j := range []*Journal{mon, tue, wed} {
				if err := j.Close(); err != nil {
					t.Fatal(err)
				}
			}
			st, err := stores["tuesday"].ReadState(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if a := st.Attempts(Key{Agent: "A", Phone: n}); a != 2 {
				t.Errorf("tuesday's journal holds %d intents, want the 2 not held", a)
			}
			hist, err := pressureFor(t, stores["monday"], "", clock).Starts.History(ctx, n)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range hist {
				got = append(got, fmt.Sprintf("%s %s released=%t", s.Campaign, s.At.Sub(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)), s.Released))
			}
			want := []string{"monday 0s released=false", "wednesday 24h0m0s released=true", "tuesday 25h0m0s released=true", "tuesday 25h0m0s released=false"}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("history:\n got %q\nwant %q", got, want)
			}
		})
	}
}

// TestPressureCampaignsAtOnce: four journals (two campaigns, two shards
// each) append intents to the same numbers at once; each number gets
// exactly one start written, and every other intent is held: by
// pressure, or, the same contact of the same campaign from its other
// shard's journal (which real shards never share), as foreign.
func TestPressureCampaignsAtOnce(t *testing.T) {
	ctx := context.Background()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			const numbers = 40
			var mu sync.Mutex
			written := map[string]int{}
			var wg sync.WaitGroup
			for _, campaign := range []string{"spring", "summer"} {
				for shard := range 2 {
					s := sk.open(t, campaign, shard, 2)
					unlock := lockStore(t, s)
					j, st, err := s.OpenJournal(ctx, JournalOptions{Pressure: pressureFor(t, s, campaign, clock)})
					if err != nil {
						t.Fatal(err)
					}
					for w := range 4 {
						wg.Add(1)
						go func() {
							defer wg.Done()
							for i := range numbers {
								n := fmt.Sprintf("+1415555%04d", (i+w*7)%numbers)
								err := j.Append(Record{Type: TypeIntent, Agent: fmt.Sprint("A", w), Phone: n, Attempt: 1})
								switch {
								case err == nil:
									mu.Lock()
									written[n]++
									mu.Unlock()
								case !errors.Is(err, ErrHeld) && !errors.Is(err, ErrForeignStart):
									t.Error(err)
								}
							}
						}()
					}
					t.Cleanup(func() {
						j.Close()
						st.Close()
						unlock()
					})
				}
			}
			wg.Wait()
			if len(written) != numbers {
				t.Errorf("%d numbers got a start, want %d", len(written), numbers)
			}
			for n, c := range written {
				if c != 1 {
					t.Errorf("%s got %d call starts in one day", n, c)
				}
			}
		})
	}
}

// TestCallStartsFileForgetsOld: a file of months of call starts is read
// into memory only from 15 days before its latest start; those count as
// before, and History still reads the older ones from the file.
func TestCallStartsFileForgetsOld(t *testing.T) {
	dir := t.TempDir()
	latest := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	starts := []CallStart{
		{Number: "+14155550100", At: latest.Add(-90 * 24 * time.Hour), ID: "j/a/0"},
		{Number: "+14155550100", At: latest.Add(-13 * 24 * time.Hour), ID: "j/a/1"},
		{Number: "+14155550101", At: latest.Add(-16 * 24 * time.Hour), ID: "j/b/0"},
		{Number: "+14155550102", At: latest, ID: "j/c/0"},
	}
	writeLines(t, dir, CallStartsFileName, starts)
	l := OpenCallStartsFile(dir)
	got, err := l.Counted(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]time.Time{"+14155550100": {latest.Add(-13 * 24 * time.Hour)}, "+14155550102": {latest}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Counted: %v, want %v (older than 15 days before the latest start forgotten)", got, want)
	}
	if n := len(l.open); n != 2 {
		t.Errorf("%d numbers held in memory, want 2", n)
	}
	h, err := l.History(context.Background(), "+14155550100")
	if err != nil || len(h) != 2 {
		t.Errorf("History: %v, %v; want both starts, the forgotten one too", h, err)
	}
}

// TestCallStartsFileStartFromASkewedClock: one call start written by a
// machine whose clock ran weeks ahead (a VM booted with a bad clock, on
// a shared CALLRUN_HOME) must not make every run forget the real starts
// of today: they are still counted, and hold their numbers back.
func TestCallStartsFileStartFromASkewedClock(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC()
	starts := []CallStart{
		{Number: "+14155550100", At: now.Add(-time.Hour), ID: "j/a/0"},
		{Number: "+14155550199", At: now.Add(60 * 24 * time.Hour), ID: "skewed/0"},
	}
	writeLines(t, dir, CallStartsFileName, starts)
	got, err := OpenCallStartsFile(dir).Counted(context.Background(), now.Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(got["+14155550100"]) != 1 {
		t.Errorf("Counted: %v; want the start of an hour ago, whatever the skewed start's time", got)
	}
	if h := HoldUntil(DefaultPressure, "+14155550100", got["+14155550100"], now); h == nil {
		t.Error("the number called an hour ago is not held back")
	}
}
