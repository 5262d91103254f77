package phone

import (
	"archive/zip"
	"bytes"
	_ "embed"
	"io"
	"slices"
	"sync"
	"time"
)

// time.LoadLocation reads this machine's tzdata first (ZONEINFO, then
// /usr/share/zoneinfo and the like) and falls back to the copy
// time/tzdata embeds only for a zone the machine lacks. A machine whose
// tzdata predates a change of a zone's clock then reads that zone's old
// clock: Kazakhstan's Asia/Almaty on UTC+6 after it moved to UTC+5
// (March 2024, tzdata 2024a), Mexico City keeping summer time after
// Mexico dropped it (October 2022, tzdata 2022f), Greenland's
// America/Nuuk an hour behind since March 2023 (tzdata 2022g), and a
// person would be called at 07:30 or 20:30 their time. A newer machine's
// tzdata, on the other hand, knows changes made after the copy callrun
// carries. So a zone is read from both, and where their clocks differ
// both are kept: a call must then suit each, which only narrows the
// hours.
//
// zoneinfo.zip is the Go toolchain's $GOROOT/lib/time/zoneinfo.zip, the
// data time/tzdata embeds (tzdata 2025c with Go 1.26), copied here by go
// generate since time/tzdata gives no way to read it but as a fallback.
//
//go:generate sh -c "cp \"$(go env GOROOT)/lib/time/zoneinfo.zip\" zoneinfo.zip && chmod 644 zoneinfo.zip"
//go:embed zoneinfo.zip
var zoneinfoZip []byte

var embeddedTZ = sync.OnceValue(func() map[string]*zip.File {
	m := map[string]*zip.File{}
	r, err := zip.NewReader(bytes.NewReader(zoneinfoZip), int64(len(zoneinfoZip)))
	if err != nil {
		return m
	}
	for _, f := range r.File {
		m[f.Name] = f
	}
	return m
})

// TZNames returns the names of the zones of the tzdata callrun
// carries, sorted: the campaign file's check tells a zone written in
// the wrong case ("europe/london", which a Mac's file system finds and a
// Linux server's does not) or misspelt from them.
var TZNames = sync.OnceValue(func() []string {
	names := make([]string, 0, len(embeddedTZ()))
	for name := range embeddedTZ() {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
})

// embeddedZone loads name from the tzdata callrun carries, or nil.
func embeddedZone(name string) *time.Location {
	f := embeddedTZ()[name]
	if f == nil {
		return nil
	}
	rc, err := f.Open()
	if err != nil {
		return nil
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil
	}
	l, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return nil
	}
	return l
}

var loadedZones sync.Map // name -> []*time.Location

// LoadZone returns the zone name as this machine's tzdata gives it and
// as the tzdata callrun carries gives it: one location where their
// clocks agree, both where they differ (a call must suit each). It
// fails as time.LoadLocation does when neither knows the name.
func LoadZone(name string) ([]*time.Location, error) {
	if z, ok := loadedZones.Load(name); ok {
		return z.([]*time.Location), nil
	}
	sys, err := time.LoadLocation(name)
	emb := embeddedZone(name)
	var zones []*time.Location
	switch {
	case err != nil && emb == nil:
		return nil, err
	case err != nil:
		zones = []*time.Location{emb}
	case emb == nil || sameClock(sys, emb):
		zones = []*time.Location{sys}
	default:
		zones = []*time.Location{sys, emb}
	}
	loadedZones.Store(name, zones)
	return zones, nil
}

// sameClock reports whether a and b keep the same offset from 1970 to
// 2100: at the start and at every change of either.
func sameClock(a, b *time.Location) bool {
	end := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for t := time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC); t.Before(end); {
		at, bt := t.In(a), t.In(b)
		_, ao := at.Zone()
		_, bo := bt.Zone()
		if ao != bo {
			return false
		}
		_, ae := at.ZoneBounds()
		_, be := bt.ZoneBounds()
		next := ae
		switch {
		case ae.IsZero() && be.IsZero():
			return true
		case ae.IsZero() || (!be.IsZero() && be.Before(ae)):
			next = be
		}
		if !next.After(t) {
			// Go's ZoneBounds under a zone's rule for the future ends at
			// the end of a year, and may give that same instant again.
			next = t.Add(time.Hour)
		}
		t = next
	}
	return true
}
