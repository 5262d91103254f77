package phone

import (
	"slices"

	"github.com/nyaruka/phonenumbers"
)

// validator decides, for the numbers of one calling code, given the
// national significant number, what phonenumbers.IsValidNumber,
// GetRegionCodeForNumber and GetNumberType decide, in one automaton walk.
type validator struct {
	dfa     *dfa
	regions []string // the calling code's regions, in the library's order
}

// typedDescs lists the descriptions getNumberTypeHelper tries after
// the general one and before fixed line and mobile, in its order, with the
// type each one gives.
var typedDescs = []struct {
	get func(*phonenumbers.PhoneMetadata) *phonenumbers.PhoneNumberDesc
	typ phonenumbers.PhoneNumberType
}{
	{(*phonenumbers.PhoneMetadata).GetPremiumRate, phonenumbers.PREMIUM_RATE},
	{(*phonenumbers.PhoneMetadata).GetTollFree, phonenumbers.TOLL_FREE},
	{(*phonenumbers.PhoneMetadata).GetSharedCost, phonenumbers.SHARED_COST},
	{(*phonenumbers.PhoneMetadata).GetVoip, phonenumbers.VOIP},
	{(*phonenumbers.PhoneMetadata).GetPersonalNumber, phonenumbers.PERSONAL_NUMBER},
	{(*phonenumbers.PhoneMetadata).GetPager, phonenumbers.PAGER},
	{(*phonenumbers.PhoneMetadata).GetUan, phonenumbers.UAN},
	{(*phonenumbers.PhoneMetadata).GetVoicemail, phonenumbers.VOICEMAIL},
}

// descMatcher is isNumberMatchingDesc for one description: the
// length is one of the possible lengths (when any are listed) and the
// pattern matches fully.
type descMatcher struct {
	comp    int
	lengths []int32
}

func (d descMatcher) eval(matched []bool, n int) bool {
	if len(d.lengths) > 0 && !slices.Contains(d.lengths, int32(n)) {
		return false
	}
	return matched[d.comp]
}

// typeMatcher is getNumberTypeHelper(nsn, metadata) for one region.
type typeMatcher struct {
	general descMatcher
	typed   []descMatcher // typedDescs, in order
	fixed   descMatcher
	mobile  *descMatcher // nil when mobile and fixed line share a pattern
}

// typeOf returns the number type getNumberTypeHelper gives, UNKNOWN when
// the number is not valid for the region.
func (m *typeMatcher) typeOf(matched []bool, n int) phonenumbers.PhoneNumberType {
	if !m.general.eval(matched, n) {
		return phonenumbers.UNKNOWN
	}
	for i, d := range m.typed {
		if d.eval(matched, n) {
			return typedDescs[i].typ
		}
	}
	if m.fixed.eval(matched, n) {
		if m.mobile == nil || m.mobile.eval(matched, n) {
			return phonenumbers.FIXED_LINE_OR_MOBILE
		}
		return phonenumbers.FIXED_LINE
	}
	if m.mobile != nil && m.mobile.eval(matched, n) {
		return phonenumbers.MOBILE
	}
	return phonenumbers.UNKNOWN
}

func newTypeMatcher(b *dfaBuilder, md *phonenumbers.PhoneMetadata) (*typeMatcher, bool) {
	desc := func(d *phonenumbers.PhoneNumberDesc) (descMatcher, bool) {
		if d == nil {
			// The library would dereference a nil description.
			return descMatcher{}, false
		}
		return descMatcher{comp: b.full(d.GetNationalNumberPattern()), lengths: d.GetPossibleLength()}, true
	}
	m := &typeMatcher{}
	var ok bool
	if m.general, ok = desc(md.GetGeneralDesc()); !ok {
		return nil, false
	}
	for _, td := range typedDescs {
		d, ok := desc(td.get(md))
		if !ok {
			return nil, false
		}
		m.typed = append(m.typed, d)
	}
	if m.fixed, ok = desc(md.GetFixedLine()); !ok {
		return nil, false
	}
	if !md.GetSameMobileAndFixedLinePattern() {
		d, ok := desc(md.GetMobile())
		if !ok {
			return nil, false
		}
		m.mobile = &d
	}
	return m, true
}

// validatorFor returns the automaton for calling code cc, building it on
// first use; nil means the fast path cannot model cc and the caller asks
// the library.
func (t *tables) validatorFor(cc int) *validator {
	if cc <= 0 || cc >= len(t.validators) {
		return nil
	}
	slot := &t.validators[cc]
	slot.once.Do(func() { slot.v = t.buildValidator(cc) })
	return slot.v
}

// validatorMaxStates bounds an automaton's size; the largest (NANP,
// calling code 1) has about 1,400 states.
const validatorMaxStates = 200_000

// buildValidator compiles, for calling code cc:
//
//	region := GetRegionCodeForNumber(number)  // first region of cc whose
//	    // leading digits match (prefix) or, without leading digits, whose
//	    // getNumberTypeHelper is not UNKNOWN; the only region if just one
//	IsValidNumberForRegion(number, region)     // the region's calling code
//	    // is cc and getNumberTypeHelper(nsn, metadata) != UNKNOWN
//	GetNumberType(number)                      // getNumberTypeHelper for region
//
// The class of a valid number is (index of its region + 1) << 4 | its type.
func (t *tables) buildValidator(cc int) *validator {
	regions := phonenumbers.GetRegionCodesForCountryCode(cc)
	if len(regions) == 0 || len(regions) >= 1<<11 {
		return nil
	}
	type candidate struct {
		typ      *typeMatcher
		leading  int // prefix component, -1 without leading digits
		sameCode bool
	}
	b := newDFABuilder()
	var cands []candidate
	for _, region := range regions {
		var m *meta
		if region == "001" {
			m = t.nonGeo[cc]
		} else {
			m = t.regions[region]
		}
		if m == nil {
			return nil
		}
		typ, ok := newTypeMatcher(b, m.md)
		if !ok {
			return nil
		}
		c := candidate{typ: typ, leading: -1, sameCode: region == "001" || m.cc == cc}
		if ld := m.md.GetLeadingDigits(); ld != "" && len(regions) > 1 {
			c.leading = b.prefix(ld)
		}
		cands = append(cands, c)
	}
	class := func(i int, typ phonenumbers.PhoneNumberType) uint16 {
		if !cands[i].sameCode || typ == phonenumbers.UNKNOWN {
			return 0
		}
		return uint16(i+1)<<4 | uint16(typ)
	}
	classify := func(matched []bool, n int) uint16 {
		if len(cands) == 1 {
			return class(0, cands[0].typ.typeOf(matched, n))
		}
		for i, c := range cands {
			if c.leading >= 0 {
				if matched[c.leading] {
					return class(i, c.typ.typeOf(matched, n))
				}
				continue
			}
			if typ := c.typ.typeOf(matched, n); typ != phonenumbers.UNKNOWN {
				return class(i, typ)
			}
		}
		return 0
	}
	dfa, err := b.build(classify, validatorMaxStates, true)
	if err != nil {
		return nil
	}
	return &validator{dfa: dfa, regions: regions}
}

// read returns whether the number of national significant number nsn is
// valid and, if so, its region and type; ok is false when the automaton
// cannot answer.
func (v *validator) read(nsn string) (region string, typ phonenumbers.PhoneNumberType, valid, ok bool) {
	c, ok := v.dfa.classify(nsn)
	if !ok || c == 0 {
		return "", phonenumbers.UNKNOWN, false, ok
	}
	return v.regions[int(c>>4)-1], phonenumbers.PhoneNumberType(c & 15), true, true
}
