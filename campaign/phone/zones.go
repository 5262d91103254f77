package phone

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the called person's zones must load on any machine

	"github.com/nyaruka/phonenumbers"
)

// zoneTab is tzdata's zone.tab (public domain): the zones of each country.
//
//go:embed zone.tab
var zoneTab string

var (
	countryZonesOnce sync.Once
	countryZonesMap  map[string][]string // the mainland's for Australia
	allZonesMap      map[string][]string // every zone of zone.tab
)

// countryZones returns the IANA zones of a country (ISO 3166 alpha-2) as
// tzdata's zone.tab lists them, or nil. For Australia it gives the
// mainland's zones (and Tasmania's, which keeps Melbourne's time).
func countryZones(region string) []string {
	readZoneTab()
	return countryZonesMap[region]
}

// allCountryZones is countryZones with Australia's islands.
func allCountryZones(region string) []string {
	readZoneTab()
	return allZonesMap[region]
}

func readZoneTab() {
	countryZonesOnce.Do(func() {
		m, all := map[string][]string{}, map[string][]string{}
		for line := range strings.Lines(zoneTab) {
			if strings.HasPrefix(line, "#") {
				continue
			}
			f := strings.Split(strings.TrimSpace(line), "\t")
			if len(f) < 3 {
				continue
			}
			all[f[0]] = append(all[f[0]], f[2])
			if f[0] == "AU" && (f[2] == "Australia/Lord_Howe" || f[2] == "Antarctica/Macquarie") {
				continue // islands off the mainland
			}
			m[f[0]] = append(m[f[0]], f[2])
		}
		countryZonesMap, allZonesMap = m, all
	})
}

// libraryZones returns the IANA time zones of an E.164 number, as
// phonenumbers.GetTimezonesForNumber gives them: one zone for most
// numbers, several where a number cannot be placed more precisely (all 43
// NANP zones for a US toll-free number, say). It returns nil for a string
// that is not E.164 or a number the library has no zone for.
func libraryZones(e164 string) []string { return slices.Clone(sharedLibraryZones(e164)) }

// sharedLibraryZones is libraryZones without the copy: the library's own
// slice, the same for every number of the prefix it is kept under, which
// callers must not change.
func sharedLibraryZones(e164 string) []string {
	if len(e164) < 2 || e164[0] != '+' || !allDigits(e164[1:]) {
		return nil
	}
	zones, err := phonenumbers.GetTimezonesForPrefix(e164)
	if err != nil || len(zones) == 0 || (len(zones) == 1 && zones[0] == phonenumbers.UNKNOWN_TIMEZONE) {
		return nil
	}
	return zones
}

// ZoneNames returns the names of the zones a number may ring in, given
// its E.164 form, country and kind (a [Number]'s E164, Region and Kind):
// every zone the phone library gives for the number, never fewer, and
// besides them every zone of its country (tzdata's zone.tab; mainland
// Australia) when the library knows none for it or the number is not tied
// to a place: mobiles, which travel with their owner (an Australian or a
// Russian mobile may ring anywhere in its country), and toll-free,
// premium, shared-cost, VoIP, personal, pager, UAN and voicemail numbers.
// A landline is where the library places it. Where the library can place
// a number only by its calling code (a US toll-free number: all 43 zones
// of +1, Guam to Newfoundland), those are its zones.
//
// The plan groups contacts by them; [Zones] loads them.
func ZoneNames(e164, country string, kind phonenumbers.PhoneNumberType) []string {
	zones := libraryZones(e164)
	for _, z := range zoneFix(e164).add {
		if !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
	}
	switch kind {
	case phonenumbers.FIXED_LINE, phonenumbers.FIXED_LINE_OR_MOBILE:
		if len(zones) > 0 {
			return withOwnZones(zones, strings.ToUpper(country))
		}
	}
	for _, z := range countryZones(strings.ToUpper(country)) {
		if !slices.Contains(zones, z) {
			zones = append(zones, z)
		}
	}
	return zones
}

// zoneSetCache keeps the loaded zones of each number's zone names: a
// campaign's numbers share a few hundred sets at most.
var zoneSetCache sync.Map // joined names -> []*time.Location

// Zones returns the zones a number may ring in (see [ZoneNames]), loaded;
// nil when none is known. The campaign's calling hours hold every call to
// the called person's hours in each of them. The slice is shared: callers
// must not change it.
func Zones(e164, country string, kind phonenumbers.PhoneNumberType) []*time.Location {
	lib := sharedLibraryZones(e164)
	key := zoneSetKey{n: len(lib), country: country, kind: kind, fix: zoneFix(e164).prefix}
	if len(lib) > 0 {
		key.lib = &lib[0]
	}
	zoneSets.RLock()
	zones, ok := zoneSets.m[key]
	zoneSets.RUnlock()
	if ok {
		return zones
	}
	zones = loadZones(e164, country, kind)
	zoneSets.Lock()
	if zoneSets.m == nil {
		zoneSets.m = map[zoneSetKey][]*time.Location{}
	}
	zoneSets.m[key] = zones
	zoneSets.Unlock()
	return zones
}

// ZoneCache is [Zones] with a cache of its own, for one goroutine: the
// contact reader's workers each keep one, and ask it for every contact
// they judge. It keeps the zones of North American numbers by their first
// seven digits (1, area code, exchange), their country and kind: all that
// such a number's zones depend on (the library places no prefix of +1
// longer than that, nor does zoneFixes: TestZoneCacheKey), and a sheet's
// numbers share a few thousand exchanges. Other numbers are asked of
// Zones. It holds at most maxZoneCache answers, and starts again empty
// when full. The zero value is ready to use.
type ZoneCache struct {
	m map[uint64][]*time.Location
}

// maxZoneCache bounds a ZoneCache: at about 100 bytes an answer, 6 MiB.
const maxZoneCache = 1 << 16

// Zones is [Zones], from the cache when it can be.
func (zc *ZoneCache) Zones(e164, country string, kind phonenumbers.PhoneNumberType) []*time.Location {
	k, ok := nanpZoneKey(e164, country, kind)
	if !ok {
		return Zones(e164, country, kind)
	}
	if zones, ok := zc.m[k]; ok {
		return zones
	}
	zones := Zones(e164, country, kind)
	if len(zc.m) >= maxZoneCache || zc.m == nil {
		zc.m = make(map[uint64][]*time.Location)
	}
	zc.m[k] = zones
	return zones
}

// nanpZoneKey is a North American number's key in a ZoneCache: its area
// code and exchange, its two-letter country and its kind; ok is false for
// any other number.
func nanpZoneKey(e164, country string, kind phonenumbers.PhoneNumberType) (key uint64, ok bool) {
	if len(e164) < nanpKeyLen || e164[0] != '+' || e164[1] != '1' || len(country) != 2 || kind < 0 || kind > 0xff || !allDigits(e164[1:]) {
		return 0, false
	}
	for _, c := range e164[2:nanpKeyLen] {
		key = key*10 + uint64(c-'0')
	}
	return key<<24 | uint64(country[0])<<16 | uint64(country[1])<<8 | uint64(kind), true
}

// nanpKeyLen is the length of the prefix of a North American number in
// E.164 (+1, area code, exchange) that its zones depend on.
const nanpKeyLen = 8

// zoneSetKey is what a number's zones are made of ([ZoneNames]): the
// library's zones for it, told by the slice the library keeps for its
// prefix, the prefix of zoneFixes it falls under, its country and its
// kind.
type zoneSetKey struct {
	lib     *string
	n       int
	fix     string
	country string
	kind    phonenumbers.PhoneNumberType
}

// zoneSets keeps Zones' answer by zoneSetKey, so that a number's zones
// cost a lookup in the library and one here: a campaign's numbers share
// a few thousand keys at most.
var zoneSets struct {
	sync.RWMutex
	m map[zoneSetKey][]*time.Location
}

// loadZones is Zones for a key not seen before.
func loadZones(e164, country string, kind phonenumbers.PhoneNumberType) []*time.Location {
	names := ZoneNames(e164, country, kind)
	if len(names) == 0 {
		return nil
	}
	key := strings.Join(names, " ")
	if z, ok := zoneSetCache.Load(key); ok {
		return z.([]*time.Location)
	}
	var zones []*time.Location
	for _, name := range names {
		// Both readings of a zone whose clock this machine's tzdata and
		// callrun's own give differently (see LoadZone).
		if ls, err := LoadZone(name); err == nil {
			zones = append(zones, ls...)
		}
	}
	zoneSetCache.Store(key, zones)
	return zones
}
