package campaign

import (
	"testing"
	"time"
)

func window(t *testing.T, tz string, days []string, start, end string) *Window {
	t.Helper()
	f := &File{Hours: &Hours{Timezone: tz, Days: days, Start: start, End: end}}
	w, err := f.Window()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestWindowOpenAndNextChange(t *testing.T) {
	w := window(t, "America/New_York", []string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "20:00")
	ny, _ := time.LoadLocation("America/New_York")
	at := func(s string) time.Time {
		tt, err := time.ParseInLocation("2006-01-02 15:04", s, ny)
		if err != nil {
			t.Fatal(err)
		}
		return tt
	}
	for _, tc := range []struct {
		at   string
		open bool
		next string
	}{
		{"2026-11-20 08:59", false, "2026-11-20 09:00"}, // Friday morning
		{"2026-11-20 09:00", true, "2026-11-20 20:00"},
		{"2026-11-20 19:59", true, "2026-11-20 20:00"},
		{"2026-11-20 20:00", false, "2026-11-23 09:00"}, // over the weekend
		{"2026-11-21 12:00", false, "2026-11-23 09:00"}, // Saturday
	} {
		now := at(tc.at)
		if got := w.OpenIn(now, ny); got != tc.open {
			t.Errorf("%s: open = %v", tc.at, got)
		}
		if got := w.NextChange(now, ny); !got.Equal(at(tc.next)) {
			t.Errorf("%s: next change %s, want %s", tc.at, got.In(ny).Format("2006-01-02 15:04 Mon"), tc.next)
		}
	}
	// The same instant is in hours in New York and not yet in Los Angeles.
	la, _ := time.LoadLocation("America/Los_Angeles")
	if now := at("2026-11-20 10:00"); !w.OpenIn(now, ny) || w.OpenIn(now, la) || w.OpenAll(now, []*time.Location{ny, la}) {
		t.Error("a number spanning two zones must wait for both")
	}
	if w.OpenAll(at("2026-11-20 12:00"), nil) {
		t.Error("a contact with no known zone must not be called under timezone rules")
	}
}

func TestWindowDSTAndNoDays(t *testing.T) {
	w := window(t, "Europe/Berlin", []string{"sun"}, "01:00", "04:00")
	berlin, _ := time.LoadLocation("Europe/Berlin")
	// 2026-10-25 is the Sunday clocks go back in Berlin (03:00 -> 02:00).
	start := time.Date(2026, 10, 25, 0, 30, 0, 0, berlin)
	open := w.NextChange(start, berlin)
	if open.In(berlin).Hour() != 1 {
		t.Errorf("opens at %s", open.In(berlin))
	}
	closes := w.NextChange(open, berlin)
	if got := closes.Sub(open); got != 4*time.Hour {
		t.Errorf("open for %s on the day with 25 hours, want 4h (01:00-04:00 with 02:00-03:00 twice)", got)
	}
	none := &Window{Loc: time.UTC, start: 0, end: 60}
	if !none.NextChange(start, time.UTC).IsZero() {
		t.Error("a window with no days never changes")
	}
}

func TestOpenSecondsEstimate(t *testing.T) {
	w := window(t, "UTC", []string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "17:00")
	fri4pm := time.Date(2026, 11, 20, 16, 0, 0, 0, time.UTC)
	// Two hours of calling from Friday 16:00: one hour Friday, one Monday.
	d, ok := w.OpenSeconds(fri4pm, 2*time.Hour)
	want := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC).Sub(fri4pm)
	if !ok || d != want {
		t.Errorf("estimate %s, want %s", d, want)
	}
}

// TestWindowMidnightSkipped: in a zone whose clocks go forward at
// midnight (Santiago, Beirut and Havana on a Saturday night), a weekday
// window closed over the weekend opens on Monday, not never: the first
// minute of such a Sunday is 01:00.
func TestWindowMidnightSkipped(t *testing.T) {
	for zone, saturday := range map[string]string{
		"America/Santiago": "2026-09-05 12:00", // 24:00 -> 01:00 that night
		"Asia/Beirut":      "2026-03-28 12:00",
		"America/Havana":   "2026-03-07 12:00",
	} {
		w := window(t, zone, []string{"mon", "tue", "wed", "thu", "fri"}, "09:00", "17:00")
		loc, _ := time.LoadLocation(zone)
		now, err := time.ParseInLocation("2006-01-02 15:04", saturday, loc)
		if err != nil {
			t.Fatal(err)
		}
		want := time.Date(now.Year(), now.Month(), now.Day()+2, 9, 0, 0, 0, loc)
		if got := w.NextChange(now, loc); !got.Equal(want) {
			t.Errorf("%s, from Saturday noon: next change %s, want Monday 09:00", zone, got.In(loc).Format("Mon 2006-01-02 15:04 MST"))
		}
		if got := w.NextOpening(now); !got.Equal(want) {
			t.Errorf("%s, from Saturday noon: next opening %s, want Monday 09:00", zone, got.In(loc).Format("Mon 2006-01-02 15:04 MST"))
		}
	}
}

// TestWindowInTwoReadingsOfItsZone: where this machine's tzdata and
// callrun's own keep the campaign's zone on two clocks (Window.also),
// the window is open only where it is open in both, opens when the later
// reading opens and closes when the earlier closes, and a window that is
// never open in both at once never opens (pace stops rather than wait).
func TestWindowInTwoReadingsOfItsZone(t *testing.T) {
	old, cur := time.FixedZone("+06", 6*3600), time.FixedZone("+05", 5*3600)
	all := [7]bool{true, true, true, true, true, true, true}
	w := &Window{Loc: old, also: cur, days: all, start: 9 * 60, end: 20 * 60}
	at := func(h, m int) time.Time { return time.Date(2026, 6, 1, h, m, 0, 0, time.UTC) }
	for _, tc := range []struct {
		t    time.Time
		open bool
		next time.Time
	}{
		{at(3, 30), false, at(4, 0)},                    // 09:30 on UTC+6, 08:30 on UTC+5
		{at(4, 0), true, at(14, 0)},                     // open in both until 20:00 on UTC+6
		{at(14, 30), false, at(3+24, 0).Add(time.Hour)}, // 20:30 on UTC+6: the next day's 09:00 on UTC+5
	} {
		if got := w.OpenHere(tc.t); got != tc.open {
			t.Errorf("OpenHere(%s) = %v, want %v", tc.t.Format("15:04"), got, tc.open)
		}
		if got := w.NextChangeHere(tc.t); !got.Equal(tc.next) {
			t.Errorf("NextChangeHere(%s) = %s, want %s", tc.t.Format("15:04"), got.UTC(), tc.next)
		}
	}
	if d, ok := w.OpenSeconds(at(3, 0), 2*time.Hour); !ok || d != 3*time.Hour {
		t.Errorf("OpenSeconds from 03:00 for 2h = %v, %v; want 3h (opens at 04:00)", d, ok)
	}
	far := &Window{Loc: time.FixedZone("+08", 8*3600), also: cur, days: all, start: 9 * 60, end: 10 * 60}
	if next := far.NextChangeHere(at(0, 0)); !next.IsZero() {
		t.Errorf("a window never open in both readings changes at %s", next)
	}
	if _, _, stop := pace(paceState{now: at(0, 0), window: far}); stop != errNeverOpens {
		t.Errorf("pace with a window never open in both readings: stop %v, want errNeverOpens", stop)
	}
}
