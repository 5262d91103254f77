package phone

import (
	"encoding/binary"
	"fmt"
	"regexp/syntax"
	"slices"
)

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
	// class[state*(dfaMaxLen+1)+n], when the automaton was built with
	// a classifier (buildClasses), is the class of a digit string of
	// length n that ends in state; 0 means not accepted.
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

// classify is match for an automaton built with buildClasses: the class of
// s, 0 when s is not accepted.
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

// build runs the subset construction. accept is called once per state and
// length n (0..dfaMaxLen) with matched[c] telling whether component c
// matched the whole input (full) or some prefix of it (prefix).
func (b *dfaBuilder) build(accept func(matched []bool, n int) bool, maxStates int) (*dfa, error) {
	return b.buildClasses(func(matched []bool, n int) uint16 {
		if accept(matched, n) {
			return 1
		}
		return 0
	}, maxStates, false)
}

// buildClasses is build with a classifier in place of accept: a string is
// accepted when its class is not 0. With keep, the automaton keeps every
// class for [dfa.classify].
func (b *dfaBuilder) buildClasses(classify func(matched []bool, n int) uint16, maxStates int, keep bool) (*dfa, error) {
	if b.err != nil {
		return nil, b.err
	}
	var (
		states  [][]uint32
		ids     = map[string]int32{}
		d       = &dfa{}
		keyBuf  []byte
		matched = make([]bool, len(b.comps))
		seen    = make([][]uint32, len(b.comps)) // closure visit marks, by generation
		gen     uint32
		stack   []uint32
	)
	for c := range b.comps {
		seen[c] = make([]uint32, len(b.comps[c].prog.Inst))
	}
	// closure adds to items every Rune and Match instruction reachable from
	// pc of component c without consuming input.
	closure := func(items []uint32, c int, pc uint32) []uint32 {
		prog := b.comps[c].prog
		stack = append(stack[:0], pc)
		for len(stack) > 0 {
			pc := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[c][pc] == gen {
				continue
			}
			seen[c][pc] = gen
			inst := &prog.Inst[pc]
			switch inst.Op {
			case syntax.InstAlt, syntax.InstAltMatch:
				stack = append(stack, inst.Arg, inst.Out)
			case syntax.InstCapture, syntax.InstNop:
				stack = append(stack, inst.Out)
			case syntax.InstMatch, syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
				items = append(items, uint32(c)<<16|pc)
			case syntax.InstFail:
			default:
				panic("dfa: unexpected instruction")
			}
		}
		return items
	}
	// finish turns prefix components that reached Match into sticky marks,
	// sorts the items and interns the state.
	finish := func(items []uint32) int32 {
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
		keyBuf = keyBuf[:0]
		for _, it := range items {
			keyBuf = binary.LittleEndian.AppendUint32(keyBuf, it)
		}
		if id, ok := ids[string(keyBuf)]; ok {
			return id
		}
		id := int32(len(states))
		ids[string(keyBuf)] = id
		states = append(states, slices.Clone(items))
		return id
	}

	var start []uint32
	for c := range b.comps {
		gen++
		start = closure(start, c, uint32(b.comps[c].prog.Start))
	}
	finish(start)
	var items []uint32
	for s := 0; s < len(states); s++ {
		if len(states) > maxStates {
			return nil, fmt.Errorf("automaton exceeds %d states", maxStates)
		}
		cur := states[s]
		for digit := range 10 {
			items = items[:0]
			gen++
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
					items = closure(items, c, inst.Out)
				}
			}
			d.next = append(d.next, finish(items))
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
