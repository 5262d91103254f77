package campaign

import (
	"testing"
	"time"
)

// TestCalledPersonHoursWhereTheLibraryMissesThePlace: numbers the phone
// library places in a zone whose clock is not the place's. At each time
// given it is 20:30 or later (or before 08:00) where the number rings,
// and the number must not be called then.
func TestCalledPersonHoursWhereTheLibraryMissesThePlace(t *testing.T) {
	for _, tc := range []struct {
		name, e164, place, at string
	}{
		// Aysén (area code 67: Coyhaique, Puerto Aysén) keeps UTC-3 all
		// year since 2025 (tzdata 2025b, America/Coyhaique); the library
		// puts it in America/Santiago, an hour behind in the southern winter.
		{"Coyhaique, a Wednesday in July", "+56672211234", "America/Coyhaique", "2026-07-15T23:30:00Z"},
		{"Puerto Aysén, a Wednesday in June", "+56672331234", "America/Coyhaique", "2026-06-10T23:45:00Z"},
		// Valparaíso's region (area code 32), on Santiago's clock: the
		// library's geocoding says Valparaíso for all of 32, but its zones
		// put every exchange but 322 and 323 on Easter Island's clock, two
		// hours behind the mainland.
		{"Valparaíso region, 32 4", "+56324123456", "America/Santiago", "2026-07-15T01:30:00Z"},
		{"Valparaíso region, 32 9", "+56329123456", "America/Santiago", "2026-01-15T00:30:00Z"},
		// Western Australia's Pilbara and Kimberley (08 5124-5126, 08 513,
		// 08 514, and a few blocks of 08 512): the library's geocoding says
		// Karratha, Port Hedland, Broome, Newman..., its zones say
		// Australia/Sydney alone, two or three hours ahead of Perth.
		{"Karratha, 08 5124", "+61851241234", "Australia/Perth", "2026-07-15T22:30:00Z"},
		{"Paraburdoo, 08 5125", "+61851255123", "Australia/Perth", "2026-07-15T22:30:00Z"},
		{"Port Hedland, 08 5123 2", "+61851232123", "Australia/Perth", "2026-01-14T21:30:00Z"},
		{"Pilbara, 08 513", "+61851301234", "Australia/Perth", "2026-07-15T22:30:00Z"},
		{"Pilbara, 08 514", "+61851401234", "Australia/Perth", "2026-07-15T22:30:00Z"},
		// Lord Howe Island (UTC+10:30 in the southern winter), in blocks of
		// 02 55 the library's geocoding gives it and its zones put in
		// Australia/Sydney alone, half an hour behind it then.
		{"Lord Howe Island, 02 5547 5", "+61255475123", "Australia/Lord_Howe", "2026-07-15T09:45:00Z"},
		{"Lord Howe Island, 02 5562 0", "+61255620123", "Australia/Lord_Howe", "2026-07-15T09:45:00Z"},
		{"02 5577, Lord Howe Island among others", "+61255771234", "Australia/Lord_Howe", "2026-07-15T09:45:00Z"},
		// North American exchanges the library's geocoding places in one
		// town, and its zones in another zone than the town's.
		{"Unalaska, 907 581 (library: Honolulu)", "+19075811234", "America/Anchorage", "2026-07-16T05:30:00Z"},
		{"Tallahassee, 850 431 (library: Chicago)", "+18504311155", "America/New_York", "2026-07-16T00:30:00Z"},
		{"Tallahassee, 850 681 (library: Chicago)", "+18506811234", "America/New_York", "2026-01-15T01:30:00Z"},
		{"Terre Haute, 812 478 (library: Chicago)", "+18124781234", "America/New_York", "2026-07-16T00:30:00Z"},
		// Towns whose clocks keep a neighbour's time, not their legal zone's.
		{"Phenix City, AL (Eastern time, with Columbus, GA)", "+13342911234", "America/New_York", "2026-07-16T00:30:00Z"},
		{"Lanett, AL", "+13345761234", "America/New_York", "2026-01-15T01:30:00Z"},
		{"Valley, AL", "+13347561234", "America/New_York", "2026-07-16T00:30:00Z"},
		{"Maidstone, SK (Alberta's time, with Lloydminster)", "+13068931234", "America/Edmonton", "2026-01-14T14:30:00Z"},
		{"Creighton, SK (Manitoba's time, with Flin Flon)", "+13066881234", "America/Winnipeg", "2026-07-16T01:30:00Z"},
		{"Denare Beach, SK", "+13063621234", "America/Winnipeg", "2026-07-16T01:30:00Z"},
		// Mexico: Chihuahua's 621 and 657 (the library's geocoding says
		// Chihuahua; UTC-6 all year, or Ciudad Juárez's clock, UTC-6 in
		// summer), which its zones put in America/Mazatlan, UTC-7; and the
		// Tamaulipas border's 891 (Camargo, Díaz Ordaz) and 897 (Miguel
		// Alemán, Mier), on the US's summer time since 2022, which it puts in
		// America/Mexico_City, an hour behind them in summer.
		{"Chihuahua, 621", "+526211234567", "America/Chihuahua", "2026-07-16T02:30:00Z"},
		{"Chihuahua, 657", "+526571234567", "America/Chihuahua", "2026-01-15T02:30:00Z"},
		{"Miguel Alemán, 897", "+528979721234", "America/Matamoros", "2026-07-16T01:30:00Z"},
		{"Camargo, 891", "+528919321234", "America/Matamoros", "2026-07-16T01:30:00Z"},
		// Brazil: Pará (91, 93, 94) keeps UTC-3, but the library puts every
		// landline of 9x it does not list apart in America/Manaus, UTC-4;
		// Paranhos, Mato Grosso do Sul (67 3480), on UTC-4, it puts in
		// America/Sao_Paulo.
		{"Pará, 91 3555", "+559135551234", "America/Belem", "2026-07-15T23:30:00Z"},
		{"Pará, 91 3000", "+559130001234", "America/Belem", "2026-07-15T23:30:00Z"},
		{"Pará, 94 3390", "+559433901234", "America/Belem", "2026-07-15T23:30:00Z"},
		{"Paranhos, 67 3480", "+556734801234", "America/Campo_Grande", "2026-07-15T11:30:00Z"},
		// Indonesia's 0526, Tamiang Layang (Central Kalimantan, UTC+7) and
		// Tanjung (South Kalimantan, UTC+8) as the library's geocoding says,
		// which its zones put in Asia/Makassar alone.
		{"Tamiang Layang, 0526", "+62526123456", "Asia/Jakarta", "2026-07-15T00:30:00Z"},
		// Elsewhere, prefixes the library's geocoding gives a place whose
		// clock its zones miss: Cáceres (Spain's 827) in Atlantic/Canary; the
		// DRC's east (Kasai, Orientale, the Kivus: 4, 5, 6) in
		// Africa/Kinshasa; French Polynesia's "remote archipelagos" (40 9:
		// the Marquesas, the Gambier) in Pacific/Tahiti; and Ecuador's 4 5,
		// which it says may be the Galápagos, in America/Guayaquil.
		// Yakutia (411x), which the library geocodes only as "Republic of
		// Sakha" and puts in Asia/Yakutsk, spans UTC+9 to UTC+11:
		// Srednekolymsk and Ust-Nera are two and one hours ahead of
		// Yakutsk (which district a number of 411 rings in, the library
		// cannot tell; the names are a landline's possible places).
		{"Srednekolymsk, Yakutia", "+74115621234", "Asia/Srednekolymsk", "2026-07-15T09:30:00Z"},
		{"Ust-Nera, Yakutia", "+74115421234", "Asia/Ust-Nera", "2026-07-15T10:30:00Z"},
		{"Cáceres, 827", "+34827123456", "Europe/Madrid", "2026-07-15T18:30:00Z"},
		{"Kasai, DRC", "+2434123456", "Africa/Lubumbashi", "2026-07-15T18:30:00Z"},
		{"Marquesas, 40 9", "+68940912345", "Pacific/Marquesas", "2026-07-16T05:45:00Z"},
		{"Galápagos, 4 5", "+59345123456", "Pacific/Galapagos", "2026-07-15T13:30:00Z"},
	} {
		c := stateContact(t, tc.e164)
		at, err := time.Parse(time.RFC3339, tc.at)
		if err != nil {
			t.Fatal(err)
		}
		place := mustZone(t, tc.place)
		lt := at.In(place)
		if m := lt.Hour()*60 + lt.Minute(); m >= CalledPersonStart && m < CalledPersonEnd {
			t.Fatalf("%s: %s is %s in %s, in hours: a wrong case", tc.name, tc.at, lt.Format("15:04"), tc.place)
		}
		h := &CallingHours{}
		if h.Open(c, at) {
			t.Errorf("%s (%s): called at %s, %s where it rings (%s); its zones are %v", tc.name, tc.e164, tc.at, lt.Format("Mon 15:04"), tc.place, ContactZones(c))
		}
	}
}
