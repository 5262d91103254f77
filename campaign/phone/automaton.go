package phone

import (
	"encoding/binary"
	"fmt"
	"regexp/syntax"
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

// dfa is a deterministic automaton over the ASCII digits '0'..'9',
// compiled from libphonenumber metadata patterns by dfaBuilder.
//
// The metadata patterns are regular expressions that the library matches
// with Go's regexp package, either anchored at both ends ("^(?:P)$", a full
// match) or at the start only ("^(?:P)", a prefix match). Whether such a
// match exists depends only on the language the pattern denotes, not on
// Go's leftmost-first preference rules, so an automaton that accepts the
// same language answers exactly as the library does. The automaton is
// built by the textbook subset construction over the very programs Go's
// regexp compiles (regexp/syntax), so it does not re-interpret the
// pattern syntax itself.
type dfa struct {
	// next[state*10+digit] is the state after reading digit.
	next []int32
	// acc[state] has bit n set when a digit string of length n that ends in
	// state is accepted.
	acc []uint32
	// class[state*(dfaMaxLen+1)+n], when build kept the classes, is the
	// class of a digit string of length n that ends in state; 0 means not
	// accepted.
	class []uint16
	// stay[state] is true when every digit leads from state back to it
	// (no thread left, or a prefix match settled): the rest of the input
	// cannot change the state, so match stops reading.
	stay []bool
}

// dfaMaxLen is the longest input dfa answers for: acc is a
// 32-bit mask indexed by length.
const dfaMaxLen = 31

// match reports whether the digit string s is accepted and whether the
// automaton could answer at all (ok is false for inputs longer than
// dfaMaxLen or holding a byte that is not an ASCII digit).
func (d *dfa) match(s string) (accepted, ok bool) {
	if len(s) > dfaMaxLen || !allDigits(s) {
		return false, false
	}
	st := int32(0)
	for i := 0; i < len(s) && !d.stay[st]; i++ {
		st = d.next[int(st)*10+int(s[i]-'0')]
	}
	return d.acc[st]&(1<<uint(len(s))) != 0, true
}

// classify is match for an automaton whose classes build kept: the
// class of s, 0 when s is not accepted.
func (d *dfa) classify(s string) (class uint16, ok bool) {
	if len(s) > dfaMaxLen || !allDigits(s) || d.class == nil {
		return 0, false
	}
	st := int32(0)
	for i := 0; i < len(s) && !d.stay[st]; i++ {
		st = d.next[int(st)*10+int(s[i]-'0')]
	}
	return d.class[int(st)*(dfaMaxLen+1)+len(s)], true
}

// dfaComponent is one pattern taking part in an automaton.
type dfaComponent struct {
	prog   *syntax.Prog
	prefix bool // a prefix match ("^(?:P)") rather than a full match
}

// dfaBuilder collects the patterns an automaton decides on. Each
// distinct (pattern, kind) pair becomes one component; accept functions
// refer to components by the index full or prefix returned.
type dfaBuilder struct {
	comps []dfaComponent
	index map[string]int
	err   error
}

// newDFABuilder returns an empty builder.
func newDFABuilder() *dfaBuilder {
	return &dfaBuilder{index: map[string]int{}}
}

// full registers pattern for a full match and returns its component index.
func (b *dfaBuilder) full(pattern string) int { return b.add(pattern, false) }

// prefix registers pattern for a prefix match and returns its component index.
func (b *dfaBuilder) prefix(pattern string) int { return b.add(pattern, true) }

func (b *dfaBuilder) add(pattern string, prefix bool) int {
	key := "F" + pattern
	if prefix {
		key = "P" + pattern
	}
	if i, ok := b.index[key]; ok {
		return i
	}
	// regexp.MustCompile, which the library uses, parses with syntax.Perl.
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		b.err = fmt.Errorf("pattern %q: %w", pattern, err)
		return 0
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		b.err = fmt.Errorf("pattern %q: %w", pattern, err)
		return 0
	}
	for _, inst := range prog.Inst {
		if inst.Op == syntax.InstEmptyWidth {
			// Anchors or word boundaries inside a metadata pattern: not
			// modelled here. The caller falls back to the library.
			b.err = fmt.Errorf("pattern %q has an empty-width assertion", pattern)
			return 0
		}
	}
	if len(prog.Inst) >= 1<<16 || len(b.comps) >= 1<<15 {
		b.err = fmt.Errorf("pattern %q is too large", pattern)
		return 0
	}
	b.comps = append(b.comps, dfaComponent{prog: prog, prefix: prefix})
	b.index[key] = len(b.comps) - 1
	return len(b.comps) - 1
}

// State items: a thread of component c at instruction pc is c<<16|pc; a
// prefix component that has matched is marked by dfaSticky|c and
// drops its threads.
const dfaSticky = 1 << 31

// build runs the subset construction. classify is called once per state
// and length n (0..dfaMaxLen) with matched[c] telling whether component c
// matched the whole input (full) or some prefix of it (prefix); a string
// is accepted when its class is not 0. With keep, the automaton keeps
// every class for [dfa.classify].
func (b *dfaBuilder) build(classify func(matched []bool, n int) uint16, maxStates int, keep bool) (*dfa, error) {
	if b.err != nil {
		return nil, b.err
	}
	sc := &subsets{b: b, ids: map[string]int32{}, seen: make([][]uint32, len(b.comps))}
	for c := range b.comps {
		sc.seen[c] = make([]uint32, len(b.comps[c].prog.Inst))
	}
	d := &dfa{}
	matched := make([]bool, len(b.comps))
	var start []uint32
	for c := range b.comps {
		sc.gen++
		start = sc.closure(start, c, uint32(b.comps[c].prog.Start))
	}
	sc.intern(start)
	var items []uint32
	for s := 0; s < len(sc.states); s++ {
		if len(sc.states) > maxStates {
			return nil, fmt.Errorf("automaton exceeds %d states", maxStates)
		}
		cur := sc.states[s]
		for digit := range 10 {
			items = items[:0]
			sc.gen++
			for _, it := range cur {
				if it&dfaSticky != 0 {
					items = append(items, it)
					continue
				}
				c := int(it >> 16)
				inst := &b.comps[c].prog.Inst[it&0xffff]
				if inst.Op == syntax.InstMatch {
					continue
				}
				if inst.MatchRune(rune('0' + digit)) {
					items = sc.closure(items, c, inst.Out)
				}
			}
			d.next = append(d.next, sc.intern(items))
		}
		// The accept mask of state s.
		clear(matched)
		for _, it := range cur {
			if it&dfaSticky != 0 {
				matched[it&^dfaSticky] = true
				continue
			}
			c := int(it >> 16)
			if !b.comps[c].prefix && b.comps[c].prog.Inst[it&0xffff].Op == syntax.InstMatch {
				matched[c] = true
			}
		}
		var mask uint32
		for n := 0; n <= dfaMaxLen; n++ {
			c := classify(matched, n)
			if c != 0 {
				mask |= 1 << uint(n)
			}
			if keep {
				d.class = append(d.class, c)
			}
		}
		d.acc = append(d.acc, mask)
	}
	d.stay = make([]bool, len(d.acc))
	for s := range d.stay {
		d.stay[s] = !slices.ContainsFunc(d.next[s*10:s*10+10], func(n int32) bool { return n != int32(s) })
	}
	return d, nil
}

// subsets is the state of one subset construction: the states found so
// far, each a sorted set of items, and the scratch space of closure.
type subsets struct {
	b      *dfaBuilder
	states [][]uint32
	ids    map[string]int32 // a state's items, as bytes -> its index
	keyBuf []byte
	seen   [][]uint32 // closure visit marks, by component and generation
	gen    uint32
	stack  []uint32
}

// closure adds to items every Rune and Match instruction reachable from
// pc of component c without consuming input.
func (sc *subsets) closure(items []uint32, c int, pc uint32) []uint32 {
	prog := sc.b.comps[c].prog
	seen := sc.seen[c]
	sc.stack = append(sc.stack[:0], pc)
	for len(sc.stack) > 0 {
		pc := sc.stack[len(sc.stack)-1]
		sc.stack = sc.stack[:len(sc.stack)-1]
		if seen[pc] == sc.gen {
			continue
		}
		seen[pc] = sc.gen
		inst := &prog.Inst[pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			sc.stack = append(sc.stack, inst.Arg, inst.Out)
		case syntax.InstCapture, syntax.InstNop:
			sc.stack = append(sc.stack, inst.Out)
		case syntax.InstMatch, syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			items = append(items, uint32(c)<<16|pc)
		case syntax.InstFail:
		default:
			panic("dfa: unexpected instruction")
		}
	}
	return items
}

// intern turns prefix components that reached Match into sticky marks,
// sorts the items and returns the index of their state, adding it when
// it is new.
func (sc *subsets) intern(items []uint32) int32 {
	b := sc.b
	for _, it := range items {
		if it&dfaSticky != 0 {
			continue
		}
		c := int(it >> 16)
		if b.comps[c].prefix && b.comps[c].prog.Inst[it&0xffff].Op == syntax.InstMatch {
			items = append(items, dfaSticky|uint32(c))
		}
	}
	// Drop the threads of prefix components that are already marked.
	var marked map[uint32]bool
	for _, it := range items {
		if it&dfaSticky != 0 {
			if marked == nil {
				marked = map[uint32]bool{}
			}
			marked[it&^dfaSticky] = true
		}
	}
	if marked != nil {
		items = slices.DeleteFunc(items, func(it uint32) bool {
			return it&dfaSticky == 0 && marked[it>>16]
		})
	}
	slices.Sort(items)
	items = slices.Compact(items)
	sc.keyBuf = sc.keyBuf[:0]
	for _, it := range items {
		sc.keyBuf = binary.LittleEndian.AppendUint32(sc.keyBuf, it)
	}
	if id, ok := sc.ids[string(sc.keyBuf)]; ok {
		return id
	}
	id := int32(len(sc.states))
	sc.ids[string(sc.keyBuf)] = id
	sc.states = append(sc.states, slices.Clone(items))
	return id
}
