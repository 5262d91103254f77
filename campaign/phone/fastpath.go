package phone

import (
	"maps"
	"regexp"
	"strconv"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// reading is one valid reading of a number.
type reading struct {
	e164   string
	region string // the library's GetRegionCodeForNumber
	kind   phonenumbers.PhoneNumberType
}

// coreFunc decides one reading of a number: digits (ASCII, non-empty)
// with or without a '+' in front, for region (upper case, possibly not a
// known region). It returns the reading and whether the number is valid.
type coreFunc func(plus bool, digits, region string) (reading, bool)

// libraryCore is the reference reading: the library's Parse,
// IsValidNumber, Format(E164), GetRegionCodeForNumber and GetNumberType. A
// panic in the library (none is known) makes the number invalid rather
// than ending the run.
func libraryCore(plus bool, digits, region string) (r reading, valid bool) {
	defer func() {
		if recover() != nil {
			r, valid = reading{}, false
		}
	}()
	s := digits
	if plus {
		s = "+" + digits
	}
	n, err := phonenumbers.Parse(s, region)
	if err != nil || !phonenumbers.IsValidNumber(n) {
		return reading{}, false
	}
	return reading{
		e164:   phonenumbers.Format(n, phonenumbers.E164),
		region: phonenumbers.GetRegionCodeForNumber(n),
		kind:   phonenumbers.GetNumberType(n),
	}, true
}

// fastCore gives the same answers as libraryCore, using the
// replayed parse and the validity automata where they apply.
func fastCore(plus bool, digits, region string) (reading, bool) {
	t := loadTables()
	if t == nil {
		return libraryCore(plus, digits, region)
	}
	p, st := t.parseDigits(plus, digits, region)
	switch st {
	case notParse:
		return reading{}, false
	case fallback:
		return libraryCore(plus, digits, region)
	}
	v := t.validatorFor(p.cc)
	if v == nil {
		return libraryCore(plus, digits, region)
	}
	reg, kind, valid, ok := v.read(p.nsn)
	if !ok {
		return libraryCore(plus, digits, region)
	}
	if !valid {
		return reading{}, false
	}
	return reading{e164: "+" + t.ccStrings[p.cc] + p.nsn, region: reg, kind: kind}, true
}

// The fast path's view of the library metadata.

// meta is what the fast path needs of one PhoneMetadata: the patterns
// the parser evaluates, compiled from the very strings the library
// compiles, and the general description's possible lengths.
type meta struct {
	md        *phonenumbers.PhoneMetadata
	cc        int
	ccStr     string
	idd       *dfa           // prefix match of the international prefix
	npfp      *regexp.Regexp // "^(?:" + national prefix for parsing + ")", nil when empty
	npfpDFA   *dfa           // prefix match of the same, to skip npfp cheaply; may be nil
	transform string         // national prefix transform rule
	general   *dfa           // full match of the general description's pattern
	// general description's possible lengths, for testNumberLength(UNKNOWN)
	possible  []int32
	localOnly []int32
}

// tables indexes the library's embedded metadata the way the library
// does (see newMetadataContainer in nyaruka/phonenumbers): regions by id,
// non-geographical entities by calling code, the last entry winning.
type tables struct {
	regions map[string]*meta
	nonGeo  map[int]*meta
	// callingCodes[cc] is true for every calling code the library knows
	// (the keys of its countryCodeToRegion map).
	callingCodes [1000]bool
	// supported mirrors phonenumbers.GetSupportedRegions.
	supported map[string]bool
	ccStrings [1000]string

	validators [1000]struct {
		once sync.Once
		v    *validator
	}
}

var (
	tablesOnce sync.Once
	tablesPtr  *tables
)

// loadTables returns the shared metadata tables, building them on
// first use. A nil result (metadata the fast path cannot model) makes every
// caller use the library.
func loadTables() *tables {
	tablesOnce.Do(func() {
		coll, err := phonenumbers.MetadataCollection()
		if err != nil {
			return
		}
		t := &tables{regions: map[string]*meta{}, nonGeo: map[int]*meta{}}
		t.supported = maps.Clone(phonenumbers.GetSupportedRegions())
		for cc := range phonenumbers.GetSupportedCallingCodes() {
			if cc > 0 && cc < 1000 {
				t.callingCodes[cc] = true
			}
		}
		for cc := range t.ccStrings {
			t.ccStrings[cc] = strconv.Itoa(cc)
		}
		for _, md := range coll.GetMetadata() {
			m := newMeta(md)
			if m == nil {
				continue // the fast path falls back when it finds no entry
			}
			if md.GetId() == "001" {
				t.nonGeo[int(md.GetCountryCode())] = m
			} else {
				t.regions[md.GetId()] = m
			}
		}
		tablesPtr = t
	})
	return tablesPtr
}

func newMeta(md *phonenumbers.PhoneMetadata) *meta {
	gd := md.GetGeneralDesc()
	if gd == nil {
		return nil
	}
	m := &meta{
		md:        md,
		cc:        int(md.GetCountryCode()),
		transform: md.GetNationalPrefixTransformRule(),
		possible:  gd.GetPossibleLength(),
		localOnly: gd.GetPossibleLengthLocalOnly(),
	}
	m.ccStr = strconv.Itoa(m.cc)
	var err error
	if m.idd, err = singlePatternDFA(md.GetInternationalPrefix(), true); err != nil {
		return nil
	}
	if p := md.GetNationalPrefixForParsing(); p != "" {
		if m.npfp, err = regexp.Compile("^(?:" + p + ")"); err != nil {
			return nil
		}
		// Patterns with anchors ("([2-9]\d{6})$|1" in the Caribbean)
		// get no automaton: npfp alone decides for them.
		m.npfpDFA, _ = singlePatternDFA(p, true)
	}
	if m.general, err = singlePatternDFA(gd.GetNationalNumberPattern(), false); err != nil {
		return nil
	}
	return m
}

// singlePatternDFA compiles one pattern for a prefix or a full match.
func singlePatternDFA(pattern string, prefix bool) (*dfa, error) {
	b := newDFABuilder()
	c := b.add(pattern, prefix)
	return b.build(func(matched []bool, _ int) uint16 {
		if matched[c] {
			return 1
		}
		return 0
	}, 1<<16, false)
}

// metaForCallingCode mirrors getMetadataForRegionOrCallingCode(cc,
// GetRegionCodeForCountryCode(cc)): the metadata the library's parser uses
// for a number with calling code cc.
func (t *tables) metaForCallingCode(cc int) *meta {
	main := phonenumbers.GetRegionCodeForCountryCode(cc)
	if main == "001" {
		return t.nonGeo[cc]
	}
	return t.regions[main]
}

// testNumberLength mirrors the library's testNumberLength(number,
// metadata, UNKNOWN).
func (m *meta) testNumberLength(n int) phonenumbers.ValidationResult {
	possible := m.possible
	if len(possible) == 0 || possible[0] == -1 {
		return phonenumbers.INVALID_LENGTH
	}
	for _, l := range m.localOnly {
		if int(l) == n {
			return phonenumbers.IS_POSSIBLE_LOCAL_ONLY
		}
	}
	if int(possible[0]) == n {
		return phonenumbers.IS_POSSIBLE
	} else if int(possible[0]) > n {
		return phonenumbers.TOO_SHORT
	} else if int(possible[len(possible)-1]) < n {
		return phonenumbers.TOO_LONG
	}
	for _, l := range possible[1:] {
		if int(l) == n {
			return phonenumbers.IS_POSSIBLE
		}
	}
	return phonenumbers.INVALID_LENGTH
}

// stripNationalPrefix mirrors the library's
// maybeStripNationalPrefixAndCarrierCode for a digit string. It returns
// the number with the prefix removed (or unchanged) and ok=false where the
// library would apply a transform rule, which the fast path leaves to the
// library.
func (m *meta) stripNationalPrefix(number string) (string, bool) {
	if len(number) == 0 || m.npfp == nil {
		return number, true
	}
	if m.npfpDFA != nil {
		if found, ok := m.npfpDFA.match(number); ok && !found {
			return number, true
		}
	}
	groups := m.npfp.FindStringSubmatchIndex(number)
	if groups == nil {
		return number, true
	}
	numOfGroups := len(groups)/2 - 1
	if m.transform != "" && groups[numOfGroups*2] >= 0 {
		return number, false
	}
	viableOriginal, ok1 := m.general.match(number)
	stripped := number[groups[1]:]
	viableStripped, ok2 := m.general.match(stripped)
	if !ok1 || !ok2 {
		return number, false
	}
	if viableOriginal && !viableStripped {
		return number, true
	}
	return stripped, true
}

// parsed is the fast path's parse of a digit string: the calling code
// and national significant number (leading zeros included) the library's
// Parse would produce.
type parsed struct {
	cc  int
	nsn string
}

// parseStatus says how far parseDigits got.
type parseStatus int

const (
	parsedOK parseStatus = iota // cc and nsn are the library's
	notParse                    // the library's Parse returns an error
	fallback                    // not modelled: ask the library
)

// parseDigits mirrors phonenumbers.Parse (parseHelper) for an input that is
// an optional '+' followed by ASCII digits, region being the default
// region. Where the fast path does not model the library's behaviour
// (international prefixes, national prefix transform rules, unusual
// lengths, unknown regions) it returns fallback.
func (t *tables) parseDigits(plus bool, digits, region string) (parsed, parseStatus) {
	// buildNationalNumberForParsing, isViablePhoneNumber and
	// maybeStripExtension leave a string of 3 or more digits, with or
	// without a '+', as it is. Shorter and very long inputs, which end in
	// the library's errors, are left to it.
	if len(digits) < 3 || len(digits) > 17+3 {
		return parsed{}, fallback
	}
	def := t.regions[region]
	if def == nil || !t.supported[region] {
		// checkRegionForParsing and the nil metadata paths.
		return parsed{}, fallback
	}
	var (
		cc       int
		national string
		st       parseStatus
	)
	if plus {
		// maybeExtractCountryCode strips the '+' and takes the first
		// known calling code of one to three digits.
		if digits[0] != '0' {
			for i := 1; i <= 3; i++ {
				c, _ := strconv.Atoi(digits[:i])
				if t.callingCodes[c] {
					cc, national = c, digits[i:]
					break
				}
			}
		}
		if cc == 0 {
			// ErrInvalidCountryCode: parseHelper strips the '+' and
			// tries again as if it had not been there; no calling code
			// then is ErrInvalidCountryCode.
			cc, national, st = t.extractWithoutPlus(digits, def)
			if st != parsedOK {
				return parsed{}, st
			}
			if cc == 0 {
				return parsed{}, notParse
			}
		}
	} else {
		cc, national, st = t.extractWithoutPlus(digits, def)
		if st != parsedOK {
			return parsed{}, st
		}
	}
	meta := def
	if cc != 0 {
		if phonenumbers.GetRegionCodeForCountryCode(cc) != region {
			meta = t.metaForCallingCode(cc)
			if meta == nil {
				// The library would skip national prefix stripping.
				return parsed{}, fallback
			}
		}
	} else {
		cc, national = def.cc, digits
	}
	if len(national) < 2 {
		return parsed{}, notParse // ErrTooShortNSN
	}
	potential, ok := meta.stripNationalPrefix(national)
	if !ok {
		return parsed{}, fallback
	}
	switch meta.testNumberLength(len(potential)) {
	case phonenumbers.TOO_SHORT, phonenumbers.IS_POSSIBLE_LOCAL_ONLY, phonenumbers.INVALID_LENGTH:
	default:
		national = potential
	}
	if len(national) < 2 || len(national) > 17 {
		return parsed{}, notParse // ErrTooShortNSN, ErrNumTooLong
	}
	// The library keeps leading zeros as ItalianLeadingZero and
	// NumberOfLeadingZeros beside the integer NationalNumber;
	// GetNationalSignificantNumber, which validation and formatting use,
	// gives back exactly the digits of national.
	return parsed{cc: cc, nsn: national}, parsedOK
}

// extractWithoutPlus mirrors maybeExtractCountryCode for digits that do not
// start with '+': cc is 0 when the number has no calling code, in which
// case national is digits.
func (t *tables) extractWithoutPlus(digits string, def *meta) (cc int, national string, st parseStatus) {
	// An international dialling prefix of the region (011 in the US, 00
	// in most of Europe) is the library's business.
	if m, ok := def.idd.match(digits); !ok || m {
		return 0, "", fallback
	}
	if len(digits) >= len(def.ccStr) && digits[:len(def.ccStr)] == def.ccStr {
		// The number starts with the region's own calling code: it is
		// taken as a calling code when the number is only valid without
		// it, or too long with it.
		potential, ok := def.stripNationalPrefix(digits[len(def.ccStr):])
		if !ok {
			return 0, "", fallback
		}
		fullValid, ok1 := def.general.match(digits)
		nationalValid, ok2 := def.general.match(potential)
		if !ok1 || !ok2 {
			return 0, "", fallback
		}
		if (!fullValid && nationalValid) || def.testNumberLength(len(digits)) == phonenumbers.TOO_LONG {
			return def.cc, potential, parsedOK
		}
	}
	return 0, digits, parsedOK
}
