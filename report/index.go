package report

import (
	"math/bits"
	"math/rand/v2"
)

// This file holds the compact in-memory index behind [State]: what the
// journal says about each contact, in a 16-byte slot a contact, so that a
// million contacts cost about 20-25 MiB rather than the 60-80 MiB a Go map
// of structs costs at that size.
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
// entries. It is split into shards that each grow by a quarter when 80%
// full, so its load factor stays between 64% and 80% at any size and no
// growth step copies more than one shard (a Go map doubles: at a million
// keys it can be less than half full).
type table struct {
	seed   uint64
	n      int
	shards [tableShards]shard
}

const tableShards = 256

type shard struct {
	slots []slot
	n     int
}

// slot is one table cell; key 0 marks it empty (a packed key is never 0:
// its phone is at least 1).
type slot struct {
	key, val uint64
}

func newTable() *table {
	return &table{seed: rand.Uint64()}
}

// hash mixes the key (murmur3's finalizer) with a per-table seed, so
// crafted phone numbers cannot pile up in one place.
func (t *table) hash(k uint64) uint64 {
	k ^= t.seed
	k ^= k >> 33
	k *= 0xff51afd7ed558ccd
	k ^= k >> 33
	k *= 0xc4ceb9fe1a85ec53
	k ^= k >> 33
	return k
}

// home returns the shard of hash h and the first slot to probe in it.
func (t *table) home(h uint64) (*shard, int) {
	s := &t.shards[h>>(64-8)]
	i, _ := bits.Mul64(h<<8, uint64(len(s.slots)))
	return s, int(i)
}

func (t *table) get(k uint64) (uint64, bool) {
	s, i := t.home(t.hash(k))
	if len(s.slots) == 0 {
		return 0, false
	}
	for {
		sl := &s.slots[i]
		switch sl.key {
		case k:
			return sl.val, true
		case 0:
			return 0, false
		}
		if i++; i == len(s.slots) {
			i = 0
		}
	}
}

// put sets k's value, inserting it if it is new.
func (t *table) put(k, v uint64) {
	h := t.hash(k)
	s, _ := t.home(h)
	if (s.n+1)*5 > len(s.slots)*4 {
		t.grow(s)
	}
	_, i := t.home(h)
	for {
		sl := &s.slots[i]
		switch sl.key {
		case k:
			sl.val = v
			return
		case 0:
			sl.key, sl.val = k, v
			s.n++
			t.n++
			return
		}
		if i++; i == len(s.slots) {
			i = 0
		}
	}
}

// grow rehashes one shard into a table a quarter larger.
func (t *table) grow(s *shard) {
	old := s.slots
	s.slots = make([]slot, len(old)+len(old)/4+8)
	for _, sl := range old {
		if sl.key == 0 {
			continue
		}
		_, i := t.home(t.hash(sl.key))
		for s.slots[i].key != 0 {
			if i++; i == len(s.slots) {
				i = 0
			}
		}
		s.slots[i] = sl
	}
}
