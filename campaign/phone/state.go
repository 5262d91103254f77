package phone

import "strings"

//go:generate go run ./internal/genstates -o statetable.go

// USStateCodes returns the codes [USState] may return, sorted.
func USStateCodes() []string {
	codes := make([]string, 0, len(stateCodes)/2)
	for i := 0; i < len(stateCodes); i += 2 {
		codes = append(codes, stateCodes[i:i+2])
	}
	return codes
}

// USState returns the two-letter code of the US state (or "DC") a US
// number (E.164) is placed in by the phone library's geocoding: "KY"
// for "Kentucky", "CA" for "San Francisco, CA". It returns "" when the
// library cannot tell the state: a toll-free or other non-geographic
// number ("United States"), a number it does not geocode, or one that is
// not a US number (Canada and the Caribbean share +1). The caller decides
// what an unknown state means.
//
// The answer is read from a table by the number's NPA-NXX (statetable.go),
// which genstates makes from the library's geocoding and region of every
// NPA-NXX (internal/geostate): it is the library's answer for every
// number, without the geocoder's 31 MiB.
func USState(e164 string) string {
	if len(e164) != 12 || !strings.HasPrefix(e164, "+1") || !allDigits(e164[2:]) {
		return "" // not a US number: every one is +1 and ten digits
	}
	key := uint32(0)
	for _, d := range e164[2:8] {
		key = key*10 + uint32(d-'0')
	}
	// The last run that starts at or before key: from the NPA's, the
	// runs after it inside the NPA (727 runs in 1,000 NPAs: few).
	i := int(npaRuns[key/1000])
	for i+1 < len(stateRuns) && stateRuns[i+1]>>6 <= key {
		i++
	}
	s := stateRuns[i] & 63
	if s == 0 {
		return ""
	}
	return stateCodes[2*s-2 : 2*s]
}

// npaRuns[npa] is the index of the run of stateRuns that NPA-000 is in.
var npaRuns = func() (idx [1000]uint16) {
	i := 0
	for npa := range idx {
		for i+1 < len(stateRuns) && stateRuns[i+1]>>6 <= uint32(npa*1000) {
			i++
		}
		idx[npa] = uint16(i)
	}
	return idx
}()
