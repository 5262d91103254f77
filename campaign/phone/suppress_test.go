package phone

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
)

// TestReadingsOfPlainDigits: the short way Readings takes for a cell of
// bare digits gives the same numbers as reading the cell in full.
func TestReadingsOfPlainDigits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	prefixes := []string{"", "1", "44", "49", "91", "52", "33", "0", "+1", "+44", "+49", "+91", "+52", "+33", "+"}
	regionSets := [][]string{{"US"}, {"DE"}, {"US", "DE", "GB", "IN", "MX", "FR"}}
	for i := range 20000 {
		cell := prefixes[rng.IntN(len(prefixes))]
		for range 6 + rng.IntN(9) {
			cell += strconv.Itoa(rng.IntN(10))
		}
		regions := regionSets[i%len(regionSets)]
		fast, full := readings(cell, regions, false), readings(cell, regions, true)
		slices.Sort(fast)
		slices.Sort(full)
		if !slices.Equal(fast, full) {
			t.Fatalf("%q under %v: short way %v, in full %v", cell, regions, fast, full)
		}
	}
}

// TestReadingsOfPlusBeforeNationalNumber: a suppression file's cell with
// a '+' typed before a national number, which Read refuses as
// ambiguous, keeps both numbers it may mean from being called.
func TestReadingsOfPlusBeforeNationalNumber(t *testing.T) {
	got := Readings("+(479) 950-5111", []string{"US"})
	for _, want := range []string{"+4799505111", "+14799505111"} {
		if !slices.Contains(got, want) {
			t.Errorf("Readings(+(479) 950-5111) = %v, want %s among them", got, want)
		}
	}
}
