package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// regF is the limits of `pressure: {preset: reg_f}`.
var regF = append(append([]PressureLimit(nil), DefaultPressure...), PressureLimit{Within: 7 * 24 * time.Hour, Max: 7})

// TestHoldAfterConversationBoundaries: a conversation holds its number
// for exactly 7 days, and says so plainly; without the rule it holds
// nothing; the later of two holds wins, over a fake clock.
func TestHoldAfterConversationBoundaries(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 30, 0, 0, time.UTC)
	const n = "+14155550100"
	week := t0.Add(RegFAfterConversation)
	h := HoldAfterConversation(n, t0, RegFAfterConversation, week.Add(-time.Nanosecond))
	if h == nil || !h.Until.Equal(week) || !h.Conversation.Equal(t0) || !errors.Is(h, ErrHeld) {
		t.Fatalf("a nanosecond before the week is over: %+v, want held until %s", h, week)
	}
	if want := "held back: a conversation on 2026-11-02 on this store (Reg F: no call within 7 days after a conversation); may be called again from 2026-11-09T09:30:00Z"; h.Error() != want {
		t.Errorf("the reason:\n got %s\nwant %s", h.Error(), want)
	}
	if h := HoldAfterConversation(n, t0, RegFAfterConversation, week); h != nil {
		t.Fatalf("7 days after the conversation: %v, want free", h)
	}
	if h := HoldAfterConversation(n, t0, 0, t0.Add(time.Hour)); h != nil {
		t.Fatalf("without the rule: %v, want free", h)
	}
	if h := HoldAfterConversation(n, time.Time{}, RegFAfterConversation, t0); h != nil {
		t.Fatalf("no conversation: %v, want free", h)
	}
	day := HoldUntil(DefaultPressure, n, []time.Time{t0}, t0.Add(time.Hour))
	talk := HoldAfterConversation(n, t0, RegFAfterConversation, t0.Add(time.Hour))
	if Later(day, talk) != talk || Later(talk, day) != talk || Later(nil, day) != day || Later(day, nil) != day || Later(nil, nil) != nil {
		t.Errorf("Later does not pick the longer hold")
	}
}

// TestConversationsHoldRegF: a conversation listen records for a number
// that one campaign called holds the number, in a campaign with Reg F's
// rule, until 7 days after it, and not a nanosecond longer, in files and
// in PostgreSQL; a campaign without the rule calls it once the day is
// over. A retry of the delivery records nothing; history and plan read
// the conversation.
func TestConversationsHoldRegF(t *testing.T) {
	ctx := context.Background()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			now := t0
			clock := func() time.Time { return now }
			stores := map[string]Store{}
			open := func(campaign string, regf bool) *Journal {
				s := sk.open(t, campaign, 0, 1)
				stores[campaign] = s
				unlock := lockStore(t, s)
				p := pressureFor(t, s, campaign, clock)
				if regf {
					p.Limits, p.AfterConversation = regF, RegFAfterConversation
				}
				j, st, err := s.OpenJournal(ctx, JournalOptions{Pressure: p})
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
			const n, other = "+14155550100", "+14155550101"
			intent := func(phone string, attempt int) Record {
				return Record{Type: TypeIntent, Agent: "A", Phone: phone, Attempt: attempt}
			}
			a, regf, plain := open("a", false), open("regf", true), open("plain", false)
			if err := a.Append(intent(n, 1)); err != nil {
				t.Fatal(err)
			}
			starts := pressureFor(t, stores["a"], "", clock).Starts
			conversedAt := t0.Add(10 * time.Minute)
			c := Conversation{Number: n, At: conversedAt, Campaign: "a", Key: "k1"}
			if isNew, err := starts.Converse(ctx, c); err != nil || !isNew {
				t.Fatalf("recording the conversation: %v, %v", isNew, err)
			}
			retry := c
			retry.At = conversedAt.Add(time.Hour) // the service's retry of the delivery, an hour on
			if isNew, err := starts.Converse(ctx, retry); err != nil || isNew {
				t.Fatalf("recording the retry: new %v, %v; want not new", isNew, err)
			}
			// Two days on: the day is over, the week after the
			// conversation not.
			now = t0.Add(48 * time.Hour)
			week := conversedAt.Add(RegFAfterConversation)
			var h *HeldError
			if err := regf.Append(intent(n, 1)); !errors.As(err, &h) || !h.Until.Equal(week) || !h.Conversation.Equal(conversedAt) ||
				!strings.Contains(err.Error(), "a conversation on 2026-11-02") {
				t.Fatalf("reg_f two days after the conversation: %v, want held until %s", err, week)
			}
			if err := regf.Append(intent(other, 1)); err != nil {
				t.Fatalf("reg_f calling a number nobody conversedAt to: %v", err)
			}
			if err := plain.Append(intent(n, 1)); err != nil {
				t.Fatalf("a campaign without reg_f two days after the conversation: %v", err)
			}
			now = week.Add(-time.Nanosecond)
			if err := regf.Append(intent(n, 1)); !errors.As(err, &h) || !h.Until.Equal(week) {
				t.Fatalf("reg_f a nanosecond before the week is over: %v, want held until %s", err, week)
			}
			now = week
			if err := regf.Append(intent(n, 1)); err != nil {
				t.Fatalf("reg_f 7 days after the conversation: %v", err)
			}

			cs, err := starts.Conversations(ctx, n)
			if err != nil || len(cs) != 1 || !cs[0].At.Equal(conversedAt) || cs[0].Campaign != "a" || cs[0].Key != "k1" {
				t.Errorf("conversations with %s: %+v, %v; want the one, once", n, cs, err)
			}
			if cs, err := starts.Conversations(ctx, other); err != nil || len(cs) != 0 {
				t.Errorf("conversations with %s: %+v, %v; want none", other, cs, err)
			}
			got, err := starts.Conversed(ctx, now.Add(-RegFAfterConversation-time.Hour))
			if err != nil || len(got) != 1 || !got[n].Equal(conversedAt) {
				t.Errorf("conversed: %v, %v", got, err)
			}
			if got, err := starts.Conversed(ctx, conversedAt); err != nil || len(got) != 0 {
				t.Errorf("conversed after the conversation: %v, %v; want none", got, err)
			}
		})
	}
}

// TestConverseCutsATornLine: a conversation whose write a crash cut
// short was never acknowledged; the next is written after the lines
// before it, and both files read whole.
func TestConverseCutsATornLine(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	starts := OpenCallStartsFile(home)
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	if _, err := starts.Converse(ctx, Conversation{Number: "+14155550100", At: t0, Campaign: "a", Key: "k1"}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(home, ConversationsFileName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(`{"number":"+14155550101","at":"2026-11-02T09:0`); err != nil {
		t.Fatal(err)
	}
	f.Close()
	again := OpenCallStartsFile(home) // another process
	if _, err := again.Converse(ctx, Conversation{Number: "+14155550102", At: t0, Campaign: "a", Key: "k2"}); err != nil {
		t.Fatal(err)
	}
	got, err := OpenCallStartsFile(home).Conversed(ctx, t0.Add(-time.Hour))
	if err != nil || len(got) != 2 || got["+14155550101"] != (time.Time{}) {
		t.Errorf("after a torn line: %v, %v; want the two whole conversations", got, err)
	}
}

// TestConversationsDuringARun: conversations recorded while a Reg F
// campaign's journal appends intents to the same numbers, from another
// CallStarts as listen would: an intent whose Append began after its
// number's conversation was recorded is always held, in files and in
// PostgreSQL.
func TestConversationsDuringARun(t *testing.T) {
	ctx := context.Background()
	for _, sk := range storeKinds {
		t.Run(sk.name, func(t *testing.T) {
			now := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			clock := func() time.Time { return now }
			s := sk.open(t, "regf", 0, 1)
			defer lockStore(t, s)()
			p := pressureFor(t, s, "regf", clock)
			p.Limits, p.AfterConversation = regF, RegFAfterConversation
			j, st, err := s.OpenJournal(ctx, JournalOptions{Pressure: p})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			defer j.Close()
			listen := pressureFor(t, sk.open(t, "listen", 0, 1), "", clock).Starts // another handle on the same starts
			const n = 40
			recorded := make([]chan struct{}, n)
			for i := range recorded {
				recorded[i] = make(chan struct{})
			}
			number := func(i int) string { return fmt.Sprintf("+1415555%04d", 1000+i) }
			errs := make(chan error, 1)
			go func() {
				for i := range n {
					if _, err := listen.Converse(ctx, Conversation{Number: number(i), At: now.Add(-time.Minute), Campaign: "a", Key: fmt.Sprint(i)}); err != nil {
						errs <- err
						return
					}
					close(recorded[i])
				}
				errs <- nil
			}()
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := w; i < n; i += 4 {
						after := false
						select {
						case <-recorded[i]:
							after = true
						default:
						}
						err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: number(i), Attempt: 1})
						if after && !errors.Is(err, ErrHeld) {
							t.Errorf("%s: an intent begun after its conversation was recorded: %v, want held", number(i), err)
						}
						if err != nil && !errors.Is(err, ErrHeld) {
							t.Errorf("%s: %v", number(i), err)
						}
					}
				}()
			}
			wg.Wait()
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestConversationsFromASkewedClock: one conversation recorded by a
// listen whose clock ran weeks ahead must not make runs forget the real
// conversations of this week: a Reg F campaign still holds their numbers.
func TestConversationsFromASkewedClock(t *testing.T) {
	dir := t.TempDir()
	now := time.Now().UTC()
	writeLines(t, dir, ConversationsFileName, []Conversation{
		{Number: "+14155550100", At: now.Add(-24 * time.Hour), Campaign: "a", Key: "k1"},
		{Number: "+14155550199", At: now.Add(60 * 24 * time.Hour), Campaign: "skewed", Key: "k2"},
	})
	got, err := OpenCallStartsFile(dir).Conversed(context.Background(), now.Add(-7*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := got["+14155550100"]; !ok {
		t.Errorf("Conversed: %v; want the conversation of yesterday, whatever the skewed one's time", got)
	}
}
