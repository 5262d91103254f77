package campaign

import (
	"encoding/binary"
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

// unmix is the inverse of s.mix: the key below 2^56 whose mix is h.
func (s *phoneSet) unmix(h uint64) uint64 {
	inverse := func(c uint64) uint64 { // of odd c, modulo 2^64 and so 2^56
		x := c
		for range 6 {
			x *= 2 - c*x
		}
		return x
	}
	k := h ^ h>>32 // an xor-shift by half the width or more undoes itself
	k = k * inverse(0xc4ceb9fe1a85ec53) & phoneMixMask
	k ^= k >> 29
	k = k * inverse(0xff51afd7ed558ccd) & phoneMixMask
	return k ^ s.seed
}

// keyWithMix returns the key whose mix has shard sh and slot value r.
func (s *phoneSet) keyWithMix(sh int, r uint64) uint64 {
	return s.unmix(uint64(sh)<<phoneSlotBits | r)
}

func TestPhoneSetUnmix(t *testing.T) {
	s := newPhoneSet()
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		k := r.Uint64() & phoneMixMask
		if h := s.mix(k); h > phoneMixMask || s.unmix(h) != k {
			t.Fatalf("mix(%#x) = %#x, unmix of that %#x", k, h, s.unmix(h))
		}
	}
}

// checkPhoneSet checks that s holds the keys of want, with their counts
// (adding each once more), and that its shards are within their load.
func checkPhoneSet(t *testing.T, s *phoneSet, want map[uint64]uint32) {
	t.Helper()
	if s.n != len(want) {
		t.Fatalf("n = %d, want %d", s.n, len(want))
	}
	held := len(s.other)
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.n*8 > sh.slots()*7 {
			t.Fatalf("shard %d holds %d keys in %d slots", i, sh.n, sh.slots())
		}
		filled := 0
		for o := 0; o < sh.slots()*phoneSlotSize; o += phoneSlotSize {
			if binary.LittleEndian.Uint64(sh.b[o:])&phoneSlotMask != 0 {
				filled++
			}
		}
		if filled != sh.n {
			t.Fatalf("shard %d: %d slots filled, n = %d", i, filled, sh.n)
		}
		held += sh.n
	}
	if held != s.n {
		t.Fatalf("shards and the map hold %d keys, n = %d", held, s.n)
	}
	for k, seen := range want {
		if got := s.add(k); got != seen {
			t.Fatalf("add(%#x) = %d, want %d", k, got, seen)
		}
		want[k]++
	}
}

// TestPhoneSetKeysOfEveryKind adds phone numbers, numbers with an agent
// above bit 50 (dedupe: agent), keys of 2^56 and over, which the slots
// cannot hold, and keys never added before, and checks them against a
// map.
func TestPhoneSetKeysOfEveryKind(t *testing.T) {
	s := newPhoneSet()
	want := map[uint64]uint32{}
	r := rand.New(rand.NewPCG(5, 6))
	add := func(k uint64) {
		if got := s.add(k); got != want[k] {
			t.Fatalf("add(%#x) = %d, want %d", k, got, want[k])
		}
		want[k]++
	}
	for i := range 200_000 {
		phone := 14_155_550_000 + uint64(r.IntN(100_000)) // many repeats
		switch i % 4 {
		case 0:
			add(phone)
		case 1:
			add(phone | uint64(r.IntN(64))<<50) // an agent index below 64: in the slots
		case 2:
			add(phone | uint64(64+r.IntN(8))<<50) // 2^56 and over: in the map
		case 3:
			add(r.Uint64() | 1)
		}
	}
	if len(s.other) == 0 || len(s.repeats) == 0 {
		t.Fatalf("the test did not reach the map (%d keys) or repeats (%d)", len(s.other), len(s.repeats))
	}
	checkPhoneSet(t, s, want)
	first, second := s.add(0), s.add(0)
	if first != 0 || second != 0 {
		t.Error("key 0 (not a number) was deduplicated")
	}
}

// TestPhoneSetCollisions adds keys that all mix into one shard with slot
// values that crowd its first and last slots, so that probes run long and
// wrap around the end of the shard, growing it all the while.
func TestPhoneSetCollisions(t *testing.T) {
	s := newPhoneSet()
	want := map[uint64]uint32{}
	for i := range uint64(3000) {
		for _, k := range []uint64{s.keyWithMix(9, 1+i), s.keyWithMix(9, phoneSlotMask-i)} {
			if s.add(k) != 0 {
				t.Fatalf("new key %#x seen before", k)
			}
			want[k] = 1
		}
		if i%500 == 0 {
			checkPhoneSet(t, s, want)
		}
	}
	checkPhoneSet(t, s, want)
	if s.shards[9].n != 6000 {
		t.Errorf("shard 9 holds %d keys, want 6000", s.shards[9].n)
	}
	for sh, k := range []uint64{s.keyWithMix(9, 1<<40), s.keyWithMix(10, 1), s.keyWithMix(8, phoneSlotMask)} {
		if got := s.add(k); got != 0 {
			t.Errorf("%d: add(%#x), never added, = %d", sh, k, got)
		}
	}
}

// TestPhoneSetZeroSlotValue adds, for every shard, the key whose slot
// value is 0, the mark of an empty slot, and its neighbour.
func TestPhoneSetZeroSlotValue(t *testing.T) {
	s := newPhoneSet()
	want := map[uint64]uint32{}
	for sh := range phoneShards {
		zero, one := s.keyWithMix(sh, 0), s.keyWithMix(sh, 1)
		if zero == 0 {
			continue // the one key that is not a number
		}
		if s.mix(zero)&phoneSlotMask != 0 {
			t.Fatalf("key %#x: slot value %#x", zero, s.mix(zero)&phoneSlotMask)
		}
		for _, k := range []uint64{zero, one, zero} {
			if got := s.add(k); got != want[k] {
				t.Fatalf("add(%#x) = %d, want %d", k, got, want[k])
			}
			want[k]++
		}
	}
	checkPhoneSet(t, s, want)
	if len(s.other) < phoneShards-1 {
		t.Errorf("map holds %d keys", len(s.other))
	}
}

// TestPhoneSetGrowth checks the memory a million numbers take: at most
// 7/8 of the slots used, and a shard's slots fill its allocation.
func TestPhoneSetGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("a million keys")
	}
	s := newPhoneSet()
	const n = 1_000_000
	for i := range uint64(n) {
		s.add(12_000_000_000 + i*7919) // +1 numbers, in steps
	}
	slots, bytes := 0, 0
	for i := range s.shards {
		sh := &s.shards[i]
		if sh.n*8 > sh.slots()*7 {
			t.Fatalf("shard %d: %d keys in %d slots", i, sh.n, sh.slots())
		}
		if cap(sh.b) != len(sh.b) {
			t.Fatalf("shard %d: %d bytes of an allocation of %d", i, len(sh.b), cap(sh.b))
		}
		slots += sh.slots()
		bytes += cap(sh.b)
	}
	load := float64(n) / float64(slots)
	t.Logf("%d keys: %d slots, load %.1f%%, %.1f bytes a key", n, slots, 100*load, float64(bytes)/n)
	if load < 0.6 || s.n != n || len(s.other) > 1 {
		t.Errorf("load %.1f%%, %d keys, %d in the map", 100*load, s.n, len(s.other))
	}
}

// TestPhoneSetHasAndPut: has answers for every key put, of every kind
// (slot keys, keys whose slot value is 0, keys too large for a slot), and
// for no other; put counts no repeats.
func TestPhoneSetHasAndPut(t *testing.T) {
	s := newPhoneSet()
	r := rand.New(rand.NewPCG(3, 4))
	var in, out []uint64
	for i := range 200_000 {
		k := r.Uint64()>>14 | 1
		if i%2 == 0 {
			in = append(in, k)
		} else {
			out = append(out, k)
		}
	}
	for sh := range 8 {
		if k := s.keyWithMix(sh, 0); k != 0 {
			in = append(in, k)
		}
	}
	in = append(in, 1<<57+5)
	out = append(out, 1<<57+7, 0)
	for _, k := range in {
		s.put(k)
		s.put(k)
	}
	for _, k := range in {
		if !s.has(k) {
			t.Fatalf("has(%#x) = false after put", k)
		}
	}
	for _, k := range out {
		if s.has(k) {
			t.Fatalf("has(%#x) = true, never put", k)
		}
	}
	if len(s.repeats) != 0 || s.n != len(in) {
		t.Errorf("%d keys, %d repeats counted; want %d keys, none counted", s.n, len(s.repeats), len(in))
	}
}
