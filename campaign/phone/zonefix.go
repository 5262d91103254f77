package phone

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// The phone library places a landline in one zone, or a few, by the
// prefix of its number, and callrun holds the call to the called
// person's hours in those zones. Where the library's zone is not the
// place's, a call would start outside the person's hours: an hour early
// or late wherever the two zones' clocks differ. This file corrects what
// the library gets wrong, in two ways, and only ever adds zones: a zone
// added where it was not needed narrows the hours of a number, never
// widens them.

// zoneFixes are the prefixes the library places in a zone of the right
// country whose clock is not the place's, and the zones of the place,
// added to the library's. Each entry says where and why.
var zoneFixes = []zoneFixEntry{
	// Pernambuco's area code 81 (Recife): the library puts most of its
	// exchanges in America/Noronha, the Atlantic islands' zone, an hour
	// ahead of Recife all year.
	{"+5581", []string{"America/Recife"}},
	// Area code 867 (Yukon, Northwest Territories, Nunavut): the library
	// puts Yukon's exchanges in America/Vancouver, Yukon's zone before it
	// kept UTC-7 all year (2020), an hour behind it in winter, and most of
	// Nunavut's, on Eastern and Central time (Pangnirtung, Pond Inlet,
	// Coral Harbour), in America/Fort_Nelson's UTC-7, two or three hours
	// behind. Every zone of the three territories.
	{"+1867", []string{"America/Whitehorse", "America/Edmonton", "America/Inuvik", "America/Cambridge_Bay", "America/Rankin_Inlet",
		"America/Resolute", "America/Iqaluit", "America/Atikokan"}},
	// Blanc-Sablon, Quebec (418 461), on UTC-4 all year, which the
	// library puts in America/Toronto, an hour behind it in winter.
	{"+1418461", []string{"America/Blanc-Sablon"}},
	// British Columbia's places on UTC-7 all year, which the library puts
	// in America/Edmonton, an hour ahead in summer: Dawson Creek (782),
	// Fort St. John (785, 787), Chetwynd (788), Tumbler Ridge (242), Fort
	// Nelson (774), Creston (428).
	{"+1250782", []string{"America/Dawson_Creek"}},
	{"+1250785", []string{"America/Dawson_Creek"}},
	{"+1250787", []string{"America/Dawson_Creek"}},
	{"+1250788", []string{"America/Dawson_Creek"}},
	{"+1250242", []string{"America/Dawson_Creek"}},
	{"+1250774", []string{"America/Fort_Nelson"}},
	{"+1250428", []string{"America/Creston"}},
	// Atikokan, Ontario (807 597), on UTC-5 all year, which the library
	// puts in America/Toronto, an hour ahead in summer.
	{"+1807597", []string{"America/Atikokan"}},
	// Lloydminster, Saskatchewan (306 825), which keeps Alberta's time,
	// which the library puts in America/Regina, an hour ahead in winter.
	{"+1306825", []string{"America/Edmonton"}},
	// Florida's panhandle, where the line between Central and Eastern
	// time runs through Gulf County: Port St. Joe (850 227, 229), on
	// Eastern time, which the library puts in America/Chicago, and Mexico
	// Beach (850 648), on Central time, which it puts in America/New_York.
	{"+1850227", []string{"America/New_York"}},
	{"+1850229", []string{"America/New_York"}},
	{"+1850648", []string{"America/Chicago"}},
	// Towns whose clocks keep a neighbour's time rather than their legal
	// zone's: Phenix City (334 291, 297, 298, 448, 480), Lanett (334 576,
	// 644) and Valley (334 756, 768), Alabama, on Eastern time with
	// Columbus and West Point, Georgia, an hour ahead of America/Chicago;
	// Maidstone, Saskatchewan (306 893), on Alberta's time with
	// Lloydminster, an hour behind America/Regina in winter; Creighton and
	// Denare Beach, Saskatchewan (306 688, 362), on Manitoba's time with
	// Flin Flon, an hour ahead of America/Regina in summer (the tz
	// database's notes on Saskatchewan name both).
	{"+1334291", []string{"America/New_York"}},
	{"+1334297", []string{"America/New_York"}},
	{"+1334298", []string{"America/New_York"}},
	{"+1334448", []string{"America/New_York"}},
	{"+1334480", []string{"America/New_York"}},
	{"+1334576", []string{"America/New_York"}},
	{"+1334644", []string{"America/New_York"}},
	{"+1334756", []string{"America/New_York"}},
	{"+1334768", []string{"America/New_York"}},
	{"+1306893", []string{"America/Edmonton"}},
	{"+1306688", []string{"America/Winnipeg"}},
	{"+1306362", []string{"America/Winnipeg"}},
	// Exchanges that the library's own geocoding places in a town whose
	// zone is not the one its zones give: Unalaska, Alaska (907 581), on
	// Alaska time, which it puts in Pacific/Honolulu, one or two hours
	// behind; Tallahassee (850 431, 681) and Terre Haute (812 478), on
	// Eastern time, which it puts in America/Chicago, an hour behind.
	{"+1907581", []string{"America/Anchorage"}},
	{"+1850431", []string{"America/New_York"}},
	{"+1850681", []string{"America/New_York"}},
	{"+1812478", []string{"America/New_York"}},
	// Matamoros (868), which keeps the US's summer time, which the
	// library puts in America/Mexico_City, an hour behind it in summer.
	{"+52868", []string{"America/Matamoros"}},
	// The state of Chihuahua, on UTC-6 since 2022 but for its border
	// towns (Ciudad Juárez, Ojinaga, which the library places right),
	// which the library puts in America/Mazatlan, an hour behind it.
	{"+52614", []string{"America/Chihuahua"}},
	{"+52625", []string{"America/Chihuahua"}},
	{"+52627", []string{"America/Chihuahua"}},
	{"+52628", []string{"America/Chihuahua"}},
	{"+52629", []string{"America/Chihuahua"}},
	{"+52635", []string{"America/Chihuahua"}},
	{"+52636", []string{"America/Chihuahua"}},
	{"+52639", []string{"America/Chihuahua"}},
	{"+52648", []string{"America/Chihuahua"}},
	{"+52649", []string{"America/Chihuahua"}},
	{"+52652", []string{"America/Chihuahua"}},
	{"+52659", []string{"America/Chihuahua"}},
	{"+52621", []string{"America/Chihuahua"}},
	{"+52657", []string{"America/Chihuahua"}},
	// The Tamaulipas border's 891 (Camargo, Gustavo Díaz Ordaz) and 897
	// (Miguel Alemán, Mier, Guerrero), which keep the US's summer time as
	// Matamoros does, which the library puts in America/Mexico_City.
	{"+52891", []string{"America/Matamoros"}},
	{"+52897", []string{"America/Matamoros"}},
	// Queensland's area code 07, which keeps no summer time: the library
	// puts all of it but some of Brisbane's exchanges in
	// Australia/Sydney, an hour ahead of it from October to April (the
	// NSW towns on 07 keep Sydney's time, so both).
	{"+617", []string{"Australia/Brisbane"}},
	// Western Australia's Pilbara and Kimberley (Karratha, Port Hedland,
	// Broome, Newman, Tom Price...), on UTC+8: blocks of 08 512, 513 and
	// 514 that the library's geocoding gives them and its zones put in
	// Australia/Sydney alone, two or three hours ahead. 08 513 is also the
	// Indian Ocean Territories' (Christmas Island, the Cocos Islands), as
	// its geocoding says.
	{"+618513", []string{"Australia/Perth", "Indian/Christmas", "Indian/Cocos"}},
	{"+618514", []string{"Australia/Perth"}},
	{"+6185124", []string{"Australia/Perth"}},
	{"+6185125", []string{"Australia/Perth"}},
	{"+6185126", []string{"Australia/Perth"}},
	{"+61851205", []string{"Australia/Perth"}},
	{"+61851230", []string{"Australia/Perth"}},
	{"+61851232", []string{"Australia/Perth"}},
	{"+61851233", []string{"Australia/Perth"}},
	{"+61851234", []string{"Australia/Perth"}},
	// Lord Howe Island (UTC+10:30, and +11 in summer), in blocks of 02 55
	// that the library's geocoding gives it (alone, or among the towns
	// of the mid north coast) and its zones put in Australia/Sydney, half
	// an hour behind it in winter.
	{"+61255475", []string{"Australia/Lord_Howe"}},
	{"+61255620", []string{"Australia/Lord_Howe"}},
	{"+61255623", []string{"Australia/Lord_Howe"}},
	{"+61255684", []string{"Australia/Lord_Howe"}},
	{"+61255720", []string{"Australia/Lord_Howe"}},
	{"+6125576", []string{"Australia/Lord_Howe"}},
	{"+6125577", []string{"Australia/Lord_Howe"}},
	{"+6125578", []string{"Australia/Lord_Howe"}},
	{"+6125579", []string{"Australia/Lord_Howe"}},
	// The Republic of Sakha (Yakutia, area codes 411x), on three clocks:
	// Yakutsk's UTC+9, Oymyakonsky district's UTC+10 (Asia/Ust-Nera) and
	// the northeast's UTC+11 (Asia/Srednekolymsk: Abyysky, Allaikhovsky,
	// Verkhnekolymsky, Momsky, Nizhnekolymsky, Srednekolymsky, as the tz
	// database's zone1970.tab and notes say). The library's geocoding
	// says only "Republic of Sakha" for every landline of it, and its
	// zones put them all in Asia/Yakutsk, one or two hours behind the
	// east: all three.
	{"+7411", []string{"Asia/Yakutsk", "Asia/Ust-Nera", "Asia/Srednekolymsk"}},
	// Chile: the library puts every number in America/Santiago, but
	// Magallanes (area code 61) keeps UTC-3 all year, an hour ahead of
	// Santiago in winter, and Easter Island (32 2100) is two hours behind;
	// a mobile (9) may ring in either (or in Aysén, on Magallanes' clock).
	{"+5661", []string{"America/Punta_Arenas"}},
	// Aysén (area code 67: Coyhaique, Puerto Aysén), on UTC-3 all year
	// since March 2025 (tzdata 2025b's America/Coyhaique), which the
	// library puts in America/Santiago, an hour behind it in winter.
	{"+5667", []string{"America/Coyhaique"}},
	{"+56322100", []string{"Pacific/Easter"}},
	// The rest of area code 32 is Valparaíso's region, on Santiago's
	// clock (the library's geocoding says so), but the library's zones put
	// every exchange of it but 322 and 323 on Pacific/Easter, two hours
	// behind.
	{"+5632", []string{"America/Santiago"}},
	{"+569", []string{"America/Punta_Arenas", "Pacific/Easter"}},
	// Western Amazonas (area code 97), whose southwest (Eirunepé) keeps
	// UTC-5, which the library puts in America/Manaus, an hour ahead.
	{"+5597", []string{"America/Eirunepe"}},
	// Pará (area codes 91, 93, 94), on UTC-3 all year: the library puts
	// the prefixes of 9 it does not list apart in America/Manaus, UTC-4,
	// and with them every landline of Pará's it does not list (Belém's
	// 91 3000, 91 3555, Marabá's 94 3390...), so they were called until
	// 21:00.
	{"+5591", []string{"America/Belem"}},
	{"+5593", []string{"America/Santarem"}},
	{"+5594", []string{"America/Belem"}},
	// Paranhos, Mato Grosso do Sul (67 3480), on UTC-4 as the rest of the
	// state, which the library puts in America/Sao_Paulo, an hour ahead.
	{"+55673480", []string{"America/Campo_Grande"}},
	// Indonesia's area code 526, which the library's geocoding gives
	// Tamiang Layang (Central Kalimantan, on UTC+7) and Tanjung (South
	// Kalimantan, UTC+8), and its zones Asia/Makassar alone.
	{"+62526", []string{"Asia/Jakarta"}},
	// Prefixes the library's geocoding gives a place whose clock its zones
	// miss: Cáceres (Spain's 827), which it puts in Atlantic/Canary, an
	// hour behind the mainland; the east of the DR Congo (Kasai, Orientale,
	// the Kivus and Maniema: 4, 5, 6), on UTC+2, which it puts in
	// Africa/Kinshasa, UTC+1; French Polynesia's "remote archipelagos"
	// (40 9: the Marquesas, UTC-9:30, and the Gambier, UTC-9), which it
	// puts in Pacific/Tahiti, UTC-10; and Ecuador's 4 5, which it says may
	// ring in the Galápagos (UTC-6), in America/Guayaquil, UTC-5.
	{"+34827", []string{"Europe/Madrid"}},
	{"+2434", []string{"Africa/Lubumbashi"}},
	{"+2435", []string{"Africa/Lubumbashi"}},
	{"+2436", []string{"Africa/Lubumbashi"}},
	{"+689409", []string{"Pacific/Marquesas", "Pacific/Gambier"}},
	{"+59345", []string{"Pacific/Galapagos"}},
	// Saratov's region (845), on UTC+4 since 2016, which the library puts
	// in Europe/Moscow, an hour behind it.
	{"+7845", []string{"Europe/Saratov"}},
}

// zoneFixFirst holds the first digits of the calling codes of zoneFixes.
var zoneFixFirst = func() (first [10]bool) {
	for _, f := range zoneFixes {
		first[f.prefix[1]-'0'] = true
	}
	return first
}()

// zoneFixEntry is one entry of zoneFixes: the zones add are added to
// those the library gives a number that starts with prefix.
type zoneFixEntry struct {
	prefix string
	add    []string
}

// zoneFix returns the entry of zoneFixes whose prefix e164 starts with,
// the longest, or the zero entry.
func zoneFix(e164 string) (fix zoneFixEntry) {
	if len(e164) < 2 || e164[1] < '0' || e164[1] > '9' || !zoneFixFirst[e164[1]-'0'] {
		return fix // no entry's calling code starts so: most numbers look no further
	}
	for _, f := range zoneFixes {
		if strings.HasPrefix(e164, f.prefix) && len(f.prefix) > len(fix.prefix) {
			fix = f
		}
	}
	return fix
}

// withOwnZones returns a landline's zones, zones, with the zones of its
// country added where one of zones is a stand-in: a zone of another
// country (the library puts Kaliningrad in Europe/Bucharest, Libya in
// Europe/Bucharest, Algeria in Europe/Paris, Nicaragua in
// America/Chicago), whose clock no zone of the number's own country
// keeps over the next two years. Such a zone has the country's offset
// for part of the year at most, and differs by an hour when its summer
// time does. What is added are the country's zones that keep, at some
// time in those two years, an offset the stand-in keeps then too, or, if
// none does, every zone of the country. A zone under another name whose
// clock one of the country's zones keeps (Asia/Calcutta for India's
// Asia/Kolkata, Europe/London for Ireland's Europe/Dublin) is no
// stand-in.
func withOwnZones(zones []string, country string) []string {
	own := allCountryZones(country)
	if len(own) == 0 {
		return zones
	}
	out := zones
	for _, name := range zones {
		if slices.Contains(own, name) {
			continue
		}
		// A zone is no stand-in only where it keeps the clock of one of
		// the country's zones in both readings of the zones, this
		// machine's tzdata's and callrun's own (see LoadZone): a
		// machine whose tzdata predates a change of the country's clock
		// may read it as the stand-in's.
		standIn := false
		for i := range zoneReadings {
			clock := zoneClock(name, i)
			if clock == nil || !slices.ContainsFunc(own, func(o string) bool { return slices.Equal(zoneClock(o, i), clock) }) {
				standIn = true
			}
		}
		if !standIn {
			continue
		}
		var shared []string
		for _, o := range own {
			for i := range zoneReadings {
				if clock := zoneClock(name, i); clock != nil && sharesOffset(zoneClock(o, i), clock) {
					shared = append(shared, o)
					break
				}
			}
		}
		if len(shared) == 0 {
			shared = own
		}
		for _, o := range shared {
			if !slices.Contains(out, o) {
				out = append(slices.Clip(out), o)
			}
		}
	}
	return out
}

// offsetFrom is one period of a zone's clock: from when, at which offset
// from UTC in seconds.
type offsetFrom struct {
	from   int64
	offset int
}

// clockSpan is how far ahead zoneClock looks, from when it first looks.
const clockSpan = 2 * 365 * 24 * time.Hour

var (
	clockStart = sync.OnceValue(func() time.Time { return time.Now().Truncate(time.Hour) })
	zoneClocks sync.Map // zoneClockKey -> []offsetFrom
)

// zoneReadings is how many readings of a zone zoneClock gives: this
// machine's tzdata's, and callrun's own.
const zoneReadings = 2

type zoneClockKey struct {
	name    string
	reading int
}

// zoneClock returns the offsets a zone keeps over clockSpan from when it
// is first asked (the first period from then), or nil when the zone
// does not load: in reading 0 as this machine's tzdata gives it, in
// reading 1 as the tzdata callrun carries does (the same where they
// agree, or where only one knows the zone; see LoadZone).
func zoneClock(name string, reading int) []offsetFrom {
	key := zoneClockKey{name, reading}
	if c, ok := zoneClocks.Load(key); ok {
		return c.([]offsetFrom)
	}
	ls, err := LoadZone(name)
	if err != nil {
		return nil
	}
	l := ls[min(reading, len(ls)-1)]
	start := clockStart()
	var c []offsetFrom
	for t := start; t.Before(start.Add(clockSpan)); {
		lt := t.In(l)
		_, off := lt.Zone()
		if len(c) == 0 || c[len(c)-1].offset != off {
			c = append(c, offsetFrom{t.Unix(), off})
		}
		_, end := lt.ZoneBounds()
		if end.IsZero() {
			break
		}
		t = end
	}
	zoneClocks.Store(key, c)
	return c
}

// sharesOffset reports whether two clocks keep one offset at one time.
// Their offsets change only where one of them starts a period, so those
// times are the ones to look at.
func sharesOffset(a, b []offsetFrom) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	for _, x := range [][]offsetFrom{a, b} {
		for _, p := range x {
			if offsetAt(a, p.from) == offsetAt(b, p.from) {
				return true
			}
		}
	}
	return false
}

// offsetAt returns the offset a clock keeps at t (Unix seconds), at or
// after its first period's start.
func offsetAt(c []offsetFrom, t int64) int {
	i, _ := slices.BinarySearchFunc(c, t, func(p offsetFrom, t int64) int {
		if p.from <= t {
			return -1
		}
		return 1
	})
	return c[max(i-1, 0)].offset
}
