package run

import (
	"fmt"
	"strings"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/phone"
)

// ParseUntil reads --until: a time of day today (or tomorrow if it has
// passed), an RFC 3339 time, or a duration from now. A time of day is in
// the zone named after it ("19:30 Europe/Berlin"), else in zones (the
// readings of the campaign's hours.timezone), else in now's (local
// time). A zone is read as the campaign's are, from this machine's
// tzdata and from the copy callrun carries (phone.LoadZone); where their
// clocks differ the time of day is the earlier of its readings, so that
// a machine with old tzdata does not call on past it. which says in
// words which zone a time of day was read in, for the log.
func ParseUntil(s string, now time.Time, zones []*time.Location) (until time.Time, which string, err error) {
	if s == "" {
		return time.Time{}, "", nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(d), "from now", nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, "as given", nil
	}
	clock, name, named := strings.Cut(strings.TrimSpace(s), " ")
	if _, err := time.Parse("15:04", clock); err != nil {
		// Before the zone: "2026-11-30 17:00" is a date and a time, not a
		// time of day in a zone called "17:00".
		return time.Time{}, "", fmt.Errorf("--until %q: give a time of day (19:30, or \"19:30 Europe/Berlin\"), an RFC 3339 time (2026-11-30T19:30:00-05:00), or a duration (2h)", s)
	}
	locs, which := []*time.Location{now.Location()}, "this machine's local time"
	switch {
	case named:
		ls, err := phone.LoadZone(strings.TrimSpace(name))
		if err != nil || strings.TrimSpace(name) == "" {
			return time.Time{}, "", fmt.Errorf("--until %q: %q is not a time zone; write an IANA name such as America/New_York or UTC", s, strings.TrimSpace(name))
		}
		locs, which = ls, "the zone given"
	case len(zones) > 0:
		locs, which = zones, "the campaign's hours.timezone"
	}
	t, err := time.Parse("15:04", clock)
	if err != nil {
		return time.Time{}, "", fmt.Errorf("--until %q: give a time of day (19:30, or \"19:30 Europe/Berlin\"), an RFC 3339 time (2026-11-30T19:30:00-05:00), or a duration (2h)", s)
	}
	for _, loc := range locs {
		local := now.In(loc)
		at := time.Date(local.Year(), local.Month(), local.Day(), t.Hour(), t.Minute(), 0, 0, loc)
		if !at.After(now) {
			at = at.AddDate(0, 0, 1)
		}
		if until.IsZero() || at.Before(until) {
			until = at
		}
	}
	return until, which, nil
}

// untilZone is the zone a bare time of day in --until is read in: the
// campaign's hours.timezone when it names one zone, in each of its
// readings, else nil (local time).
func untilZone(f *campaign.File) []*time.Location {
	w, err := f.Window()
	if err != nil || w == nil || w.Contact {
		return nil
	}
	return w.Zones()
}
