package phone

import (
	"slices"
	"strings"
	"unicode"
)

// Readings returns every number, in E.164, that a cell of a suppression
// file may mean: the cell read as a sheet's cell is read, under each of
// regions (the campaign's and every sheet's), and besides that every
// valid reading of its digits, with and without a lost '+', and of each
// number when the cell holds several. A number read too widely only keeps
// someone from being called; one missed is called against their wish.
// The contact reader's suppression set uses it.
func Readings(cell string, regions []string) []string {
	return readings(cell, regions, false)
}

// readings is Readings; full false lets a cell of bare digits (with or
// without one leading '+', not starting with 00) skip reading it as a
// sheet's cell is read: for such a cell that reading is one of the
// readings of its digits added below, and the skip makes a list of
// millions of numbers load several times faster.
func readings(cell string, regions []string, full bool) []string {
	full = full || !plainDigits(cell)
	var out []string
	add := func(e164 string) {
		if e164 != "" && !slices.Contains(out, e164) {
			out = append(out, e164)
		}
	}
	for _, region := range regions {
		if !full {
			break
		}
		if n, err := Read(cell, Any(region)); err == nil {
			add(n.E164)
		}
	}
	parts := []string{cell}
	if full && holdsTwo(cell) {
		parts = append(parts, splitList(cell)...)
	}
	for _, part := range parts {
		var plus bool
		var ds string
		if full {
			plus, ds = leadingDigits(part)
		} else {
			ds, plus = strings.CutPrefix(part, "+")
			ds = boundedDigits(ds)
		}
		if ds == "" {
			continue
		}
		// A number with its country code reads the same under any region;
		// the first one lets the fast path answer (it needs one).
		anyRegion := ""
		if len(regions) > 0 {
			anyRegion = normRegion(regions[0])
		}
		if plus {
			if r, ok := fastCore(true, ds, anyRegion); ok {
				add(r.e164)
			}
			// A '+' typed before a national number ("+(479) 950-5111"),
			// which Read refuses as ambiguous: its national reading too.
			for _, region := range regions {
				if r, ok := fastCore(false, ds, normRegion(region)); ok && full && groupedNationally(part, r.e164) {
					add(r.e164)
				}
			}
			continue
		}
		if len(ds) > 2 && strings.HasPrefix(ds, "00") {
			if r, ok := fastCore(true, ds[2:], anyRegion); ok {
				add(r.e164)
			}
		}
		for _, region := range regions {
			if r, ok := fastCore(false, ds, normRegion(region)); ok {
				add(r.e164)
			}
			if ds[0] != '0' {
				if r, ok := fastCore(true, ds, normRegion(region)); ok {
					add(r.e164)
				}
			}
		}
	}
	return out
}

// plainDigits reports whether s is ASCII digits, with or without one
// leading '+', and does not start with 00 (nor with +0).
func plainDigits(s string) bool {
	s, plus := strings.CutPrefix(s, "+")
	return s != "" && !strings.HasPrefix(s, "00") && !(plus && s[0] == '0') && allDigits(s)
}

// splitList splits a cell that holds several numbers at its list
// separators (, ; / | & : line breaks and words such as "or").
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool {
		return strings.ContainsRune(",;/|&:\n\r\t", r) || unicode.IsLetter(r)
	})
}

// leadingDigits returns the digits of s up to the first letter or '#'
// after them (an extension, or a word between two numbers), with whether
// a '+' came before them; other characters are skipped. More digits than
// a phone number has give none.
func leadingDigits(s string) (plus bool, digits string) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsDigit(r):
			b.WriteByte(asciiDigit(r))
		case (r == '+' || r == '\uff0b') && b.Len() == 0:
			plus = true
		case (unicode.IsLetter(r) || r == '#') && b.Len() > 0:
			return plus, boundedDigits(b.String())
		}
	}
	return plus, boundedDigits(b.String())
}

func boundedDigits(ds string) string {
	if len(ds) > maxDigits {
		return ""
	}
	return ds
}
