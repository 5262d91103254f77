package campaign

import (
	"math/rand/v2"
	"testing"
)

// TestPhoneSetAgreesWithAMap adds a million keys, many repeated, and
// checks every answer against a plain map.
func TestPhoneSetAgreesWithAMap(t *testing.T) {
	s := newPhoneSet()
	ref := map[uint64]uint32{}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 1_000_000 {
		var key uint64
		if i%5 == 0 && i > 0 {
			key = uint64(r.IntN(i)) + 1 // a repeat, likely
		} else {
			key = r.Uint64()>>14 | 1 // a packed phone: below 2^50, never 0
		}
		if got, want := s.add(key), ref[key]; got != want {
			t.Fatalf("add #%d (%d) = %d, want %d", i, key, got, want)
		}
		ref[key]++
	}
	if s.n != len(ref) {
		t.Errorf("set holds %d keys, map %d", s.n, len(ref))
	}
	first := s.add(0)
	if second := s.add(0); first != 0 || second != 0 {
		t.Error("key 0 (not a number) was deduplicated")
	}
}

func BenchmarkPhoneSet(b *testing.B) {
	keys := make([]uint64, 1<<20)
	for i := range keys {
		keys[i] = uint64(i)*2654435761 + 1
	}
	b.ResetTimer()
	for range b.N {
		s := newPhoneSet()
		for _, k := range keys {
			s.add(k)
		}
	}
}
