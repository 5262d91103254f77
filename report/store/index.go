package store

import (
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// This file holds the compact in-memory index behind [State]: what the
// journal says about each contact, in a 15-byte slot a contact, so that a
// million contacts cost about 19 MB rather than the 60-80 MiB a Go map of
// structs costs at that size.
//
// A contact key (agent, phone, n) packs into one uint64 when the phone is
// E.164-shaped ('+' and 1 to 15 digits, the first not 0), the agent is one
// of the first 256 agent names seen and n is below 64. Its entry packs
// into another uint64 when the offsets and the attempt count are small
// enough; what does not fit spills into ordinary maps, which stay empty in
// practice.

const (
	phoneBits = 50 // 10^15 < 2^50: any 15-digit number fits
	agentBits = 8
	nBits     = 64 - phoneBits - agentBits

	maxPackedAgent = 1<<agentBits - 1
	maxPackedN     = 1<<nBits - 1
)

// packKey returns the packed form of a key whose agent has index agent, or
// false when it does not fit (the caller then uses the spill map).
func packKey[S string | []byte](phone S, agent uint32, n int) (uint64, bool) {
	if agent > maxPackedAgent || n < 0 || n > maxPackedN {
		return 0, false
	}
	p, ok := phoneDigits(phone)
	if !ok {
		return 0, false
	}
	return p | uint64(agent)<<phoneBits | uint64(n)<<(phoneBits+agentBits), true
}

// phoneDigits parses an E.164-shaped number ('+' then 1 to 15 digits, the
// first not 0) into an integer. The leading-zero rule keeps the mapping
// one-to-one: "+1" and "+01" would otherwise both be 1.
func phoneDigits[S string | []byte](s S) (uint64, bool) {
	if len(s) < 2 || len(s) > 16 || s[0] != '+' || s[1] == '0' {
		return 0, false
	}
	var v uint64
	for i := 1; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// status is the in-memory form of a contact's [Status].
type status uint8

const (
	stPending status = iota
	stSent
	stFailed
	stUncertain
	numStatuses
)

var statusNames = [numStatuses]Status{stPending: Pending, stSent: Sent, stFailed: Failed, stUncertain: Uncertain}

// entry is what the index knows about one contact.
type entry struct {
	last     int64  // offset in the journal of the contact's last record
	first    int64  // offset of its first intent; meaningful when attempts > 0
	attempts uint32 // intents on record
	status   status
}

// Packed entry layout, from the low bits: the last record's offset
// (offBits), the status (2 bits), the attempt count (attBits; all ones
// means "spilled"), and last-first (deltaBits; all ones means "spilled").
const (
	offBits   = 39 // a journal of up to 512 GiB
	attBits   = 5
	deltaBits = 64 - offBits - 2 - attBits

	maxOffset  = 1<<offBits - 1
	attSpilled = 1<<attBits - 1
	deltaSpill = 1<<deltaBits - 1
)

// pack returns e's packed form, and whether it needs its first offset and
// attempt count kept in the spill map.
func (e entry) pack() (v uint64, spill bool) {
	v = uint64(e.last) | uint64(e.status)<<offBits
	delta := int64(0)
	if e.attempts > 0 {
		delta = e.last - e.first
	}
	if e.attempts >= attSpilled || delta < 0 || delta >= deltaSpill {
		return v | attSpilled<<(offBits+2) | deltaSpill<<(offBits+2+attBits), true
	}
	return v | uint64(e.attempts)<<(offBits+2) | uint64(delta)<<(offBits+2+attBits), false
}

// unpack is the inverse of pack for an entry that did not spill; spilled
// reports that it did, in which case first and attempts are to be taken
// from the spill map.
func unpack(v uint64) (e entry, spilled bool) {
	e.last = int64(v & maxOffset)
	e.status = status(v >> offBits & 3)
	att := v >> (offBits + 2) & attSpilled
	delta := v >> (offBits + 2 + attBits)
	if att == attSpilled {
		return e, true
	}
	e.attempts = uint32(att)
	e.first = e.last - int64(delta)
	return e, false
}

// spilled holds what did not fit in a packed entry.
type spilled struct {
	first    int64
	attempts uint32
}

// table is an open-addressing hash table from packed keys to packed
// entries, in 15-byte slots.
//
// A key is mixed by a bijection of 64-bit integers (see hash); the top 8
// bits of the mix choose one of 256 shards, and the 56 bits below them,
// the key's tag, tell the keys of a shard apart: two keys with the same
// shard and tag are the same key. A slot holds the 7-byte tag and the
// 8-byte entry; an all-zero tag marks it empty. The key of a shard whose
// tag is 0 (one in 2^56) is kept in an ordinary map instead.
//
// Each shard grows by a sixteenth when 7/8 full, so the load factor stays
// between about 80% and 87.5% at any size (a Go map doubles: at a million
// keys it can be less than half full), and no growth step copies more
// than one shard: there is never an old table and a new one twice its
// size live at once. Linear probing at that load costs a few more probes
// than at a lower one, within one shard's contiguous slots, and growing by
// small steps moves each key about 16 times over the table's life: tens
// of nanoseconds a contact, for an index that a run does not wait for.
type table struct {
	seed   uint64
	n      int
	shards [tableShards]shard
	zero   map[uint64]uint64 // keys whose tag is 0; nil until one comes
}

const (
	tableShards = 256
	tagBits     = 64 - 8 // a mixed key's bits below its shard's
	tagMask     = 1<<tagBits - 1
	slotSize    = tagBits/8 + 8 // bytes a slot: the tag, then the entry
)

// shard is one shard of a table: slotSize-byte slots, each the
// little-endian tag and then the little-endian entry.
type shard struct {
	b []byte
	n int // keys held
}

func newTable() *table {
	return &table{seed: rand.Uint64()}
}

// hash mixes the key (murmur3's finalizer, a bijection) with a per-table
// seed, so crafted phone numbers cannot pile up in one place.
func (t *table) hash(k uint64) uint64 {
	k ^= t.seed
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// slots returns the shard's number of slots.
func (s *shard) slots() int { return len(s.b) / slotSize }

// home returns the byte offset of the first slot to probe for tag in a
// shard that has slots.
func (s *shard) home(tag uint64) int {
	i, _ := bits.Mul64(tag<<(64-tagBits), uint64(s.slots()))
	return int(i) * slotSize
}

// tagAt returns the tag of the slot at byte offset o.
func (s *shard) tagAt(o int) uint64 {
	return binary.LittleEndian.Uint64(s.b[o:]) & tagMask
}

// set writes a slot at byte offset o: the entry, then the tag (an 8-byte
// store that writes the entry's first byte again).
func (s *shard) set(o int, tag, v uint64) {
	binary.LittleEndian.PutUint64(s.b[o+tagBits/8:], v)
	binary.LittleEndian.PutUint64(s.b[o:], tag|v<<tagBits)
}

func (t *table) get(k uint64) (uint64, bool) {
	h := t.hash(k)
	tag := h & tagMask
	if tag == 0 {
		v, ok := t.zero[k]
		return v, ok
	}
	s := &t.shards[h>>tagBits]
	if s.n == 0 {
		return 0, false
	}
	end := s.slots() * slotSize
	for o := s.home(tag); ; {
		switch s.tagAt(o) {
		case tag:
			return binary.LittleEndian.Uint64(s.b[o+tagBits/8:]), true
		case 0:
			return 0, false
		}
		if o += slotSize; o == end {
			o = 0
		}
	}
}

// put sets k's value, inserting it if it is new.
func (t *table) put(k, v uint64) {
	h := t.hash(k)
	tag := h & tagMask
	if tag == 0 {
		if _, ok := t.zero[k]; !ok {
			if t.zero == nil {
				t.zero = make(map[uint64]uint64)
			}
			t.n++
		}
		t.zero[k] = v
		return
	}
	s := &t.shards[h>>tagBits]
	if (s.n+1)*8 > s.slots()*7 {
		s.grow()
	}
	end := s.slots() * slotSize
	for o := s.home(tag); ; {
		switch s.tagAt(o) {
		case tag:
			s.set(o, tag, v)
			return
		case 0:
			s.set(o, tag, v)
			s.n++
			t.n++
			return
		}
		if o += slotSize; o == end {
			o = 0
		}
	}
}

// grow places the shard's keys again in a table a sixteenth larger. The
// table is as large as the allocation the runtime makes for it (a request
// is rounded up to a size class, or past 32 KiB to whole pages): the
// rounding is room to be had for nothing.
func (s *shard) grow() {
	old := *s
	m := old.slots()
	b := slices.Grow([]byte(nil), (m+m/16+8)*slotSize)
	b = b[:cap(b)]
	clear(b)
	s.b = b
	end := s.slots() * slotSize
	for j := 0; j < m*slotSize; j += slotSize {
		tag := old.tagAt(j)
		if tag == 0 {
			continue
		}
		o := s.home(tag)
		for s.tagAt(o) != 0 {
			if o += slotSize; o == end {
				o = 0
			}
		}
		s.set(o, tag, binary.LittleEndian.Uint64(old.b[j+tagBits/8:]))
	}
}
