package phone

import (
	"slices"
	"strings"
	"testing"
)

// TestSplit: a cell that lists several numbers on purpose (Google
// Contacts' " ::: ", ";", a line break) gives each, in order; a '/' in a
// number, a suffix after ";" and the shapes of two numbers that are
// refused stay one cell, which Read then refuses as before.
func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		cell string
		want []string
	}{
		{"+1 415-555-0132 ::: +1 415-555-0133", []string{"+1 415-555-0132", "+1 415-555-0133"}},
		{"0171 1234567 ::: 030 1234567 ::: +49 89 1234567", []string{"0171 1234567", "030 1234567", "+49 89 1234567"}},
		{"(415) 555-0132; (415) 555-0133", []string{"(415) 555-0132", "(415) 555-0133"}},
		{"415-555-0132\n415-555-0133", []string{"415-555-0132", "415-555-0133"}},
		{"415-555-0132\r\n415-555-0133\r\n", []string{"415-555-0132", "415-555-0133"}},
		{"030/1234567; 0171/7654321", []string{"030/1234567", "0171/7654321"}},
		// Not a list: one number, or a part too short to be a number.
		{"030/1234567", nil},
		{"+1 415-555-0132", nil},
		{"tel:+14155550132", nil},
		{"+1 415-555-0132;ext=12", nil},
		{"+1 415-555-0132 ::: ", nil},
		{"0171 1234567\n(privat)", nil},
		// Refused shapes stay one cell.
		{"555-1234 / 555-9876", nil},
		{"4155550100, 4155550101", nil},
		{"415-555-0100 or 415-555-0101", nil},
	} {
		if got := Split(tc.cell); !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q) = %q, want %q", tc.cell, got, tc.want)
		}
	}
}

// TestReadRefusesAnUnsplitList: a list read whole, as Read gets it when
// no one split it first, is refused as two numbers (not as a cell with a
// stray ':'), naming the separator that lists them; the shapes Split does
// not take are refused the same way.
func TestReadRefusesAnUnsplitList(t *testing.T) {
	for _, cell := range []string{"+1 415-555-0132 ::: +1 415-555-0133", "415-555-0132; 415-555-0133", "555-1234 / 555-9876"} {
		_, err := Read(cell, Any("US"))
		if err == nil || !strings.Contains(err.Error(), `holds more than one phone number: put one number in the cell, or list them apart by ";"`) {
			t.Errorf("Read(%q): %v", cell, err)
		}
	}
}

// TestReadingsOfAGoogleList: a suppression file's cell written as Google
// Contacts writes several numbers gives every one of them.
func TestReadingsOfAGoogleList(t *testing.T) {
	got := Readings("+1 415-555-0132 ::: (415) 555-0133 ::: +44 20 7946 0958", []string{"US"})
	for _, want := range []string{"+14155550132", "+14155550133", "+442079460958"} {
		if !slices.Contains(got, want) {
			t.Errorf("Readings: %v, want %s among them", got, want)
		}
	}
}

// TestHoldsTwo: a cell holds two numbers when two runs of six digits or
// more are apart by a separator or a word, however few digits it has in
// all and whatever script its digits are in.
func TestHoldsTwo(t *testing.T) {
	for cell, want := range map[string]bool{
		"+1 (212) 555-0123":                false,
		"123456/654321":                    true, // 12 digits, the fewest two such runs have
		"12345/654321":                     false,
		"030/1234567":                      false,
		"212 555 0123 or 212 555 0124":     true, // spaces do not end a run
		"2125550123 or 2125550124":         true,
		"2125550123 ext 45":                false,
		"٠١٢٣٤٥ / ٦٧٨٩٠١":                  true, // Arabic-Indic digits
		"１２３４５６ or ６５４３２１":                 true, // full-width digits, a word between
		"+44 7911 123456; +44 7911 654321": true,
		"12 34 56 7":                       false,
	} {
		if got := holdsTwo(cell); got != want {
			t.Errorf("holdsTwo(%q) = %v, want %v", cell, got, want)
		}
	}
}
