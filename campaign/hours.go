package campaign

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
)

// Window is the calling window of `hours:`: the days of the week and the
// time of day, in one zone or, with `timezone: contact`, in each
// contact's own.
type Window struct {
	Contact bool           // timezone: contact
	Loc     *time.Location // the zone when not Contact
	// also is the zone's other reading where this machine's tzdata and
	// the copy callrun carries keep different clocks (see
	// phone.LoadZone): the window is open only when it is open in both.
	also       *time.Location
	days       [7]bool
	start, end int // minutes after midnight; end is exclusive
}

// Window returns the campaign's calling window, or nil when the file has
// no `hours:` (calls go at any time, with a warning).
func (f *File) Window() (*Window, error) {
	h := f.Hours
	if h == nil {
		return nil, nil
	}
	w := &Window{Contact: h.Timezone == "contact"}
	if summer := summerOf[h.Timezone]; summer != "" {
		// Written for a clock that keeps summer time far more often than
		// for one that does not (see summerOf), and read as tzdata's, the
		// window would run an hour late all summer.
		return nil, fmt.Errorf("hours: timezone %q keeps no summer time, and hours: would run an hour late all summer where %s keeps it; name the zone whose clock you mean: %s, or %s for %s's offset all year",
			h.Timezone, summer, summer, allYearOf[h.Timezone], h.Timezone)
	}
	if !w.Contact {
		locs, err := loadZone(h.Timezone)
		if err != nil {
			return nil, err
		}
		w.Loc = locs[0]
		if len(locs) > 1 {
			w.also = locs[1]
		}
	}
	for _, d := range h.Days {
		wd, ok := weekdays[strings.ToLower(d)]
		if !ok {
			return nil, fmt.Errorf("hours: unknown day %q", d)
		}
		w.days[wd] = true
	}
	var err error
	if w.start, err = minutes(h.Start); err != nil {
		return nil, err
	}
	if w.end, err = minutes(h.End); err != nil {
		return nil, err
	}
	return w, nil
}

func minutes(hhmm string) (int, error) {
	h, m, ok := strings.Cut(hhmm, ":")
	hi, err1 := strconv.Atoi(h)
	mi, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("hours: %q is not a time of day", hhmm)
	}
	return hi*60 + mi, nil
}

// OpenIn reports whether the window is open at t in loc.
func (w *Window) OpenIn(t time.Time, loc *time.Location) bool {
	lt := t.In(loc)
	m := lt.Hour()*60 + lt.Minute()
	return w.days[lt.Weekday()] && m >= w.start && m < w.end
}

// OpenAll reports whether the window is open at t in every zone: a number
// that maps to several zones is called only when all of them are in hours.
func (w *Window) OpenAll(t time.Time, zones []*time.Location) bool {
	for _, z := range zones {
		if !w.OpenIn(t, z) {
			return false
		}
	}
	return len(zones) > 0
}

// Zones are the readings of the window's own zone: Loc, and also where
// the two tzdatas differ.
func (w *Window) Zones() []*time.Location {
	if w.also == nil {
		return []*time.Location{w.Loc}
	}
	return []*time.Location{w.Loc, w.also}
}

// OpenHere reports whether the window is open at t in its own zone
// (not timezone: contact): in every reading of it.
func (w *Window) OpenHere(t time.Time) bool {
	return w.OpenAll(t, w.Zones())
}

// NextChangeHere is NextChange in the window's own zone: the first
// minute boundary after t at which OpenHere changes, zero when it never
// does. Where the two readings of the zone differ, it looks from one
// reading's change to the next, at most a fortnight ahead.
func (w *Window) NextChangeHere(t time.Time) time.Time {
	if w.also == nil {
		return w.NextChange(t, w.Loc)
	}
	open := w.OpenHere(t)
	end := t.Add(15 * 24 * time.Hour)
	for cur := t; cur.Before(end); {
		var next time.Time
		for _, z := range w.Zones() {
			if n := w.NextChange(cur, z); !n.IsZero() && (next.IsZero() || n.Before(next)) {
				next = n
			}
		}
		if next.IsZero() {
			return next
		}
		if w.OpenHere(next) != open {
			return next
		}
		cur = next
	}
	return time.Time{}
}

// NextChange returns the first minute boundary after t at which the
// window opens or closes in loc: how long to wait before looking again.
func (w *Window) NextChange(t time.Time, loc *time.Location) time.Time {
	open := w.OpenIn(t, loc)
	// Step through whole minutes; a week holds 10,080 of them. Days that
	// are wholly closed are skipped a day at a time.
	next := t.Truncate(time.Minute).Add(time.Minute)
	for i := 0; i < 8*24*60; i++ {
		if w.OpenIn(next, loc) != open {
			return next
		}
		lt := next.In(loc)
		if !open && !w.days[lt.Weekday()] {
			// Where the clocks go forward at midnight (Santiago, Havana)
			// the next day has no 00:00, and time.Date may give the hour
			// before it: step on by the minute through that hour.
			if midnight := time.Date(lt.Year(), lt.Month(), lt.Day()+1, 0, 0, 0, 0, loc); midnight.After(next) {
				next = midnight
				continue
			}
		}
		next = next.Add(time.Minute)
	}
	return time.Time{} // never changes: no days at all
}

// NextOpening returns when the window is next open at or after t in
// its own zone: t itself when it is open, zero when it never opens or
// when each contact has its own zone (timezone: contact).
func (w *Window) NextOpening(t time.Time) time.Time {
	if w.Contact {
		return time.Time{}
	}
	if w.OpenHere(t) {
		return t
	}
	next := w.NextChangeHere(t)
	if next.IsZero() {
		return next
	}
	return next.In(w.Loc)
}

// OpenSeconds estimates when n seconds of open window will have passed,
// starting at from, in the window's own zone. It returns the time that
// takes, or false when the window never opens.
func (w *Window) OpenSeconds(from time.Time, need time.Duration) (time.Duration, bool) {
	if w.Contact {
		return need, true // per-contact zones: estimated without the window
	}
	t := from
	for range 1000 {
		if !w.OpenHere(t) {
			next := w.NextChangeHere(t)
			if next.IsZero() {
				return 0, false
			}
			t = next
			continue
		}
		closes := w.NextChangeHere(t)
		if closes.IsZero() || closes.Sub(t) >= need {
			return t.Add(need).Sub(from), true
		}
		need -= closes.Sub(t)
		t = closes
	}
	return 0, false
}

var zoneCache sync.Map // name -> []*time.Location

// errLocalZone refuses "Local", which Go's time.LoadLocation reads as
// the zone of the machine that runs it: a campaign checked on a laptop in
// New York would call by UTC on the server cron runs it on.
var errLocalZone = errors.New(`"Local" is not a time zone but the zone of whichever machine runs callrun (a laptop's, a server's UTC): name the zone, such as America/New_York`)

// loadZone reads a zone the campaign file or a sheet's timezone column
// names, as phone.LoadZone reads a called person's: from this machine's
// tzdata and from the copy callrun carries, both readings where their
// clocks differ (a call must suit each), so that a machine whose tzdata
// predates a change of the zone's clock does not move hours: by an
// hour. It keeps a cache: contact sheets repeat a handful of zones over
// many rows.
func loadZone(name string) ([]*time.Location, error) {
	if l, ok := zoneCache.Load(name); ok {
		return l.([]*time.Location), nil
	}
	if name == "Local" {
		return nil, errLocalZone
	}
	if canon := zoneNameAsWritten(name); canon != "" && canon != name {
		// A Mac's file system finds "europe/london", and a campaign
		// checked there would be refused on the Linux server cron runs.
		return nil, fmt.Errorf("%q is not an IANA time zone name: zone names are written in their own case, %s", name, canon)
	}
	l, err := phone.LoadZone(name)
	if err != nil {
		if msg := offsetOrAbbreviation(name); msg != "" {
			return nil, errors.New(msg)
		}
		msg := fmt.Sprintf("%q is not an IANA time zone name such as America/New_York", name)
		if near := nearestZone(name); near != "" {
			msg += fmt.Sprintf("; did you mean %s?", near)
		}
		return nil, errors.New(msg)
	}
	zoneCache.Store(name, l)
	return l, nil
}

// utcOffset is a UTC offset as CRMs and people write one for a zone:
// UTC+2, GMT-05:00, +0530.
var utcOffset = regexp.MustCompile(`^(?i:UTC|GMT)?\s*([+-])\s*(\d{1,2})(?::?(\d{2}))?$`)

// zoneAbbreviations are the zones people most often mean by an
// abbreviation tzdata has no zone of (it has EST, MST, HST, CET, EET,
// WET and MET).
var zoneAbbreviations = map[string]string{
	"PST": "America/Los_Angeles", "PDT": "America/Los_Angeles",
	"CST": "America/Chicago (or Asia/Shanghai for China's)", "CDT": "America/Chicago",
	"EDT": "America/New_York", "MDT": "America/Denver",
	"AKST": "America/Anchorage", "AKDT": "America/Anchorage",
	"IST": "Asia/Kolkata (or Europe/Dublin, or Asia/Jerusalem)",
	"BST": "Europe/London", "CEST": "Europe/Paris", "EEST": "Europe/Athens",
	"AEST": "Australia/Sydney", "AEDT": "Australia/Sydney", "AWST": "Australia/Perth",
	"JST": "Asia/Tokyo", "SGT": "Asia/Singapore", "NZST": "Pacific/Auckland",
}

// offsetOrAbbreviation says, for a name that is no zone, that it is a
// UTC offset or an abbreviation, and what to write; "" when it is
// neither. The nearest zone name by spelling would be untrue of such a
// name: "UTC+2" is not UTC, "IST" is not EST, "CST" is not CET.
func offsetOrAbbreviation(name string) string {
	if m := utcOffset.FindStringSubmatch(strings.TrimSpace(name)); m != nil {
		h, _ := strconv.Atoi(m[2])
		msg := fmt.Sprintf("%q is a UTC offset, not an IANA time zone name: name the zone of the place, such as Europe/Berlin, which keeps the place's summer time", name)
		if (m[3] == "" || m[3] == "00") && h > 0 && h <= 12 {
			// tzdata's Etc zones are named with the POSIX sign, the
			// other way round: Etc/GMT-2 is two hours ahead of UTC.
			sign := "-"
			if m[1] == "-" {
				sign = "+"
			}
			msg += fmt.Sprintf(", or Etc/GMT%s%d for UTC%s%d all year (tzdata writes its sign reversed)", sign, h, m[1], h)
		}
		return msg
	}
	if up := strings.ToUpper(strings.TrimSpace(name)); len(up) >= 2 && len(up) <= 5 && strings.IndexFunc(up, func(r rune) bool { return r < 'A' || r > 'Z' }) < 0 {
		if zone := zoneAbbreviations[up]; zone != "" {
			return fmt.Sprintf("%q is an abbreviation, not an IANA time zone name: name the zone of the place, such as %s", name, zone)
		}
		// The nearest name by spelling is another abbreviation, hours
		// away (IST is not EST).
		return fmt.Sprintf("%q is not an IANA time zone name: name the zone of the place as tzdata does, such as America/New_York", name)
	}
	return ""
}

// zoneNameAsWritten returns the zone of the tzdata callrun carries whose
// name is name in any case, "" when none is.
func zoneNameAsWritten(name string) string {
	for _, z := range phone.TZNames() {
		if strings.EqualFold(z, name) {
			return z
		}
	}
	return ""
}

// nearestZone returns the zone name closest to a misspelt one
// ("Europe/Londn"), "" when none is close for its length.
func nearestZone(name string) string {
	best, bestD := "", max(2, len(name)/5)+1
	for _, z := range phone.TZNames() {
		if d := sheet.EditDistance(strings.ToLower(name), strings.ToLower(z)); d < bestD {
			best, bestD = z, d
		}
	}
	return best
}

// ContactZones returns the zones a contact may be in: every zone its
// number may ring in (see [phone.Zones]) and the zone of its sheet's
// timezone column, if any. A call must suit all of them.
func ContactZones(c *Contact) []*time.Location {
	if c.zones != nil {
		return c.zones
	}
	return withZoneColumn(c, phone.Zones(c.Phone, c.Country, c.Kind))
}

// withZoneColumn is zones, the zones c's number may ring in, with the
// zone of c's timezone column added (and, for a standard time's name
// that CRMs write for a US zone, that zone's summer time too: see
// summerOf).
func withZoneColumn(c *Contact, zones []*time.Location) []*time.Location {
	if c.TZ == "" {
		return zones
	}
	for _, name := range []string{c.TZ, summerOf[c.TZ]} {
		if name == "" {
			continue
		}
		// By name: phone.Zones loads its zones apart from loadZone. Every
		// reading of the zone, where this machine's tzdata and callrun's
		// own differ (see phone.LoadZone).
		ls, err := phone.LoadZone(name)
		if err != nil || slices.ContainsFunc(zones, func(z *time.Location) bool { return z.String() == name }) {
			continue
		}
		zones = append(slices.Clip(zones), ls...)
	}
	return zones
}

// summerOf gives, for the names of a standard time that tzdata keeps as
// a zone on that offset all year, the zone of the places a CRM means by
// them, which keep summer time: "EST" in a timezone column is a person in
// New York far more often than one in Panama, and at 19:30 EST in July it
// is 20:30 in New York; "GMT" is a person in the UK, where at 19:30 GMT in
// July it is 20:30. Both zones are kept, which only narrows the hours.
// (HST is Hawaii's, which keeps no summer time.)
var summerOf = map[string]string{"EST": "America/New_York", "MST": "America/Denver", "GMT": "Europe/London"}

// allYearOf names, for each name of summerOf, a zone on its offset all
// year, for the campaign file that means it (hours: refuses the name).
var allYearOf = map[string]string{"EST": "America/Panama", "MST": "America/Phoenix", "GMT": "UTC"}

// ContactState returns the US state of a contact's number (see
// [phone.USState]): "" when it is not a US number or its state is not
// known, which [CalledPersonOpen] holds to every state's hours.
func ContactState(c *Contact) string {
	if c.Country != "US" {
		return ""
	}
	if !c.stateSet {
		copy(c.state[:], phone.USState(c.Phone))
		c.stateSet = true
	}
	if c.state[0] == 0 {
		return ""
	}
	return usStateNames[c.state]
}

// usStateNames are the states' codes by their bytes, so that
// [ContactState] returns a code without allocating.
var usStateNames = func() map[[2]byte]string {
	m := map[[2]byte]string{}
	for _, s := range phone.USStateCodes() {
		m[[2]byte{s[0], s[1]}] = s
	}
	return m
}()

// CallingHours decides when a contact may be called: the called person's
// hours first (see [CalledPersonOpen]), then the campaign's `hours:`,
// which only narrows them. Run and plan ask it about every contact.
type CallingHours struct {
	Window *Window // the campaign's hours:, nil when the file has none
	// IgnoreCalledPerson drops the called person's hours: the campaign
	// file's unsafe_ignore_called_person_hours, or a rehearsal against the
	// sandbox, which phones nobody.
	IgnoreCalledPerson bool
}

// CallingHours returns the campaign's calling hours.
func (f *File) CallingHours() (*CallingHours, error) {
	w, err := f.Window()
	if err != nil {
		return nil, err
	}
	return &CallingHours{Window: w, IgnoreCalledPerson: f.UnsafeIgnoreCalledPersonHours}, nil
}

// PersonOpen reports whether the called person's hours allow calling c at t.
func (h *CallingHours) PersonOpen(c *Contact, t time.Time) bool {
	return h.IgnoreCalledPerson || CalledPersonOpen(t, c.Country, ContactState(c), ContactZones(c))
}

// WindowOpen reports whether the campaign's hours: are open for c at t:
// in the campaign's zone, or with timezone: contact in every zone of the
// contact. Always true without hours:.
func (h *CallingHours) WindowOpen(c *Contact, t time.Time) bool {
	switch {
	case h.Window == nil:
		return true
	case h.Window.Contact:
		return h.Window.OpenAll(t, ContactZones(c))
	}
	return h.Window.OpenHere(t)
}

// Open reports whether c may be called at t.
func (h *CallingHours) Open(c *Contact, t time.Time) bool {
	return h.PersonOpen(c, t) && h.WindowOpen(c, t)
}

// NextOpen returns the first moment at or after t when c may be called,
// looking three weeks ahead ([nextOpenAhead]); the zero time when it never
// may.
func (h *CallingHours) NextOpen(c *Contact, t time.Time) time.Time {
	if h.Open(c, t) {
		return t
	}
	// Every boundary falls on a whole minute of a zone whose offset is a
	// multiple of 15 minutes, and on a multiple of 5 minutes unless
	// hours: says otherwise.
	step := 5 * time.Minute
	if w := h.Window; w != nil && (w.start%5 != 0 || w.end%5 != 0) {
		step = time.Minute
	}
	next := t.Truncate(step).Add(step)
	for end := t.Add(nextOpenAhead); next.Before(end); next = next.Add(step) {
		if h.Open(c, next) {
			return next
		}
	}
	return time.Time{}
}

// nextOpenAhead is how far [CallingHours.NextOpen] looks. A week and a
// day is not enough: the holidays of a state (stateholidays.go) can close
// the one weekday a campaign's hours: keep two weeks running (Christmas
// and New Year's Day kept on the Mondays after, or on the Fridays
// before), and such a contact is not one that may never be called.
const nextOpenAhead = 22 * 24 * time.Hour

// HoursWarnings returns what plan and run warn about the campaign's
// calling hours: no hours: at all, or the called person's hours turned off.
func HoursWarnings(f *File) []string {
	var ws []string
	if f.UnsafeIgnoreCalledPersonHours {
		ws = append(ws, "unsafe_ignore_called_person_hours is set: calls may start at any hour of the called person's day and ignore national and state calling-hour laws (France's, the US states')")
	}
	if f.Hours == nil {
		ws = append(ws, "no hours: in the campaign file: calls start whenever the called person's hours allow (08:00-20:00 their time); add hours: {timezone: ..., days: [...], start: \"09:00\", end: \"20:00\"} to narrow them")
	}
	return ws
}
