package campaign

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// phoneSet is the set of dedupe keys a ContactReader has seen: packed
// phone numbers (see phoneKey), with the agent's index from bit 50 up
// when dedupe is per agent; never 0. Counts are kept only for the keys
// that repeat.
//
// It is an open-addressing hash table of 6-byte slots, 7.5 to 10 bytes a
// number (a million numbers: 7.5 MB), where a table of uint64s that
// doubled took 11 to 21 (16.8 MB, and 25 MB while it doubled), and a
// map[uint64]uint32 about 36.
//
// A key below 2^56 (a phone number, and an agent index below 64) is mixed
// by a seeded bijection of [0, 2^56). The top 8 bits of the mix choose one
// of 256 shards; the 48 bits below them, which are all a slot holds, tell
// the keys of a shard apart. A shard grows by a quarter when it is 7/8
// full, so the load stays between 70% and 87.5% at any size, and a growth
// step copies one shard: there is never an old table and a new one twice
// its size live at once. The keys the slots cannot hold (2^56 and over, and
// the one key a shard might have whose 48 bits are all 0, the mark of an
// empty slot) are kept in an ordinary map.
type phoneSet struct {
	seed    uint64 // below 2^56
	n       int    // distinct keys
	shards  [phoneShards]phoneShard
	other   map[uint64]struct{} // keys the slots cannot hold; nil until one comes
	repeats map[uint64]uint32   // key -> times seen beyond the first
}

const (
	phoneShards   = 256
	phoneMixBits  = 56                // keys below 2^56 are mixed and go to the slots
	phoneSlotBits = phoneMixBits - 8  // what is left of a mixed key once its shard is chosen
	phoneSlotSize = phoneSlotBits / 8 // bytes a slot
	phoneSlotPad  = 8 - phoneSlotSize // padding after the last slot, so that any slot can be read with one 8-byte load
	phoneMixMask  = 1<<phoneMixBits - 1
	phoneSlotMask = 1<<phoneSlotBits - 1
)

// phoneShard is one shard of a phoneSet: little-endian slots of
// phoneSlotSize bytes, then phoneSlotPad bytes of padding. An all-zero
// slot is empty.
type phoneShard struct {
	b []byte
	n int // keys held
}

func newPhoneSet() *phoneSet {
	return &phoneSet{seed: rand.Uint64() & phoneMixMask, repeats: map[uint64]uint32{}}
}

// mix is a bijection of [0, 2^56), seeded so that crafted numbers cannot
// pile up in one place: an exclusive or with the seed, then two rounds of
// a multiplication by an odd constant modulo 2^56 and an xor-shift, each
// invertible.
func (s *phoneSet) mix(key uint64) uint64 {
	k := key ^ s.seed
	k = k * 0xff51afd7ed558ccd & phoneMixMask
	k ^= k >> 29
	k = k * 0xc4ceb9fe1a85ec53 & phoneMixMask
	k ^= k >> 32
	return k
}

// add records one more sighting of key and returns how many times it was
// seen before.
func (s *phoneSet) add(key uint64) uint32 { return s.insert(key, true) }

// put adds key without counting sightings: the suppression list, whose
// repeats matter to nobody.
func (s *phoneSet) put(key uint64) { s.insert(key, false) }

// has reports whether key is in the set.
func (s *phoneSet) has(key uint64) bool {
	if key == 0 {
		return false
	}
	h := s.mix(key)
	r := h & phoneSlotMask
	if key > phoneMixMask || r == 0 {
		_, ok := s.other[key]
		return ok
	}
	sh := &s.shards[h>>phoneSlotBits]
	if sh.n == 0 {
		return false
	}
	b, end := sh.b, sh.slots()*phoneSlotSize
	for o := sh.home(r); ; {
		switch binary.LittleEndian.Uint64(b[o:]) & phoneSlotMask {
		case 0:
			return false
		case r:
			return true
		}
		if o += phoneSlotSize; o == end {
			o = 0
		}
	}
}

// insert is add, counting repeats only when count is set.
func (s *phoneSet) insert(key uint64, count bool) uint32 {
	if key == 0 {
		return 0 // not a valid number; never deduplicated
	}
	if key > phoneMixMask {
		return s.addOther(key, count)
	}
	h := s.mix(key)
	r := h & phoneSlotMask
	if r == 0 {
		return s.addOther(key, count)
	}
	sh := &s.shards[h>>phoneSlotBits]
	if (sh.n+1)*8 > sh.slots()*7 {
		sh.grow()
	}
	b, end := sh.b, sh.slots()*phoneSlotSize
	for o := sh.home(r); ; {
		switch binary.LittleEndian.Uint64(b[o:]) & phoneSlotMask {
		case 0:
			putSlot(b[o:], r)
			sh.n++
			s.n++
			return 0
		case r:
			if !count {
				return 1
			}
			s.repeats[key]++
			return s.repeats[key]
		}
		if o += phoneSlotSize; o == end {
			o = 0
		}
	}
}

// addOther is insert for a key the slots cannot hold.
func (s *phoneSet) addOther(key uint64, count bool) uint32 {
	if _, ok := s.other[key]; ok {
		if !count {
			return 1
		}
		s.repeats[key]++
		return s.repeats[key]
	}
	if s.other == nil {
		s.other = map[uint64]struct{}{}
	}
	s.other[key] = struct{}{}
	s.n++
	return 0
}

// slots returns the number of slots of the shard.
func (sh *phoneShard) slots() int {
	if len(sh.b) == 0 {
		return 0
	}
	return (len(sh.b) - phoneSlotPad) / phoneSlotSize
}

// home returns the byte offset of the first slot to probe for r, a
// non-empty shard's slot value.
func (sh *phoneShard) home(r uint64) int {
	i, _ := bits.Mul64(r<<(64-phoneSlotBits), uint64(sh.slots()))
	return int(i) * phoneSlotSize
}

// putSlot writes slot value r at the start of b.
func putSlot(b []byte, r uint64) {
	binary.LittleEndian.PutUint32(b, uint32(r))
	binary.LittleEndian.PutUint16(b[4:], uint16(r>>32))
}

// grow places the shard's keys again in a table a quarter larger. The
// table is as large as the allocation the runtime makes for it (a request
// is rounded up to a size class, or past 32 KiB to whole pages): the
// rounding is room to be had for nothing.
func (sh *phoneShard) grow() {
	old := sh.b
	oldEnd := sh.slots() * phoneSlotSize
	m := sh.slots()
	b := slices.Grow([]byte(nil), (m+m/4+8)*phoneSlotSize+phoneSlotPad)
	b = b[:cap(b)]
	clear(b)
	sh.b = b
	end := sh.slots() * phoneSlotSize
	for j := 0; j < oldEnd; j += phoneSlotSize {
		r := binary.LittleEndian.Uint64(old[j:]) & phoneSlotMask
		if r == 0 {
			continue
		}
		o := sh.home(r)
		for binary.LittleEndian.Uint64(b[o:])&phoneSlotMask != 0 {
			if o += phoneSlotSize; o == end {
				o = 0
			}
		}
		putSlot(b[o:], r)
	}
}
