package store

import (
	"math/rand/v2"
	"testing"
)

// inverse returns the inverse of odd c modulo 2^64 (Newton's iteration).
func inverse(c uint64) uint64 {
	x := c
	for range 6 {
		x *= 2 - c*x
	}
	return x
}

// unhash is the inverse of t.hash: the key whose mix is h.
func (t *table) unhash(h uint64) uint64 {
	h ^= h >> 33
	h *= inverse(0xc4ceb9fe1a85ec53)
	h ^= h >> 33
	h *= inverse(0xff51afd7ed558ccd)
	h ^= h >> 33
	return h ^ t.seed
}

// keyWithMix returns the key whose mix has shard sh and tag tag.
func (t *table) keyWithMix(sh int, tag uint64) uint64 {
	return t.unhash(uint64(sh)<<tagBits | tag)
}

func TestTableUnhash(t *testing.T) {
	tab := newTable()
	r := rand.New(rand.NewPCG(3, 4))
	for range 1000 {
		k := r.Uint64()
		if got := tab.unhash(tab.hash(k)); got != k {
			t.Fatalf("unhash(hash(%#x)) = %#x", k, got)
		}
	}
}

// checkTable checks every key of want in tab, the keys of absent are not
// in it, and its shards are within their load.
func checkTable(t *testing.T, tab *table, want map[uint64]uint64, absent []uint64) {
	t.Helper()
	if tab.n != len(want) {
		t.Fatalf("n = %d, want %d", tab.n, len(want))
	}
	for k, v := range want {
		if got, ok := tab.get(k); !ok || got != v {
			t.Fatalf("get(%#x) = %#x, %v; want %#x", k, got, ok, v)
		}
	}
	for _, k := range absent {
		if _, in := want[k]; in {
			continue
		}
		if got, ok := tab.get(k); ok {
			t.Fatalf("get(%#x) = %#x, true; it was never put", k, got)
		}
	}
	held := len(tab.zero)
	for i := range tab.shards {
		s := &tab.shards[i]
		if s.n*8 > s.slots()*7 {
			t.Fatalf("shard %d holds %d keys in %d slots", i, s.n, s.slots())
		}
		filled := 0
		for o := 0; o < s.slots()*slotSize; o += slotSize {
			if s.tagAt(o) != 0 {
				filled++
			}
		}
		if filled != s.n {
			t.Fatalf("shard %d: %d slots filled, n = %d", i, filled, s.n)
		}
		held += s.n
	}
	if held != tab.n {
		t.Fatalf("shards and the zero map hold %d keys, n = %d", held, tab.n)
	}
}

// TestTableAgreesWithAMap puts 300,000 keys (many updated, some entries 0
// or all ones) and checks every one against a map, and keys never put.
func TestTableAgreesWithAMap(t *testing.T) {
	tab := newTable()
	want := map[uint64]uint64{}
	r := rand.New(rand.NewPCG(1, 2))
	var keys []uint64
	for i := range 300_000 {
		var k uint64
		if i%4 == 0 && len(keys) > 0 {
			k = keys[r.IntN(len(keys))] // an update
		} else {
			k = r.Uint64()>>r.IntN(64) | 1
			keys = append(keys, k)
		}
		v := r.Uint64()
		switch i % 7 {
		case 0:
			v = 0
		case 1:
			v = ^uint64(0)
		}
		tab.put(k, v)
		want[k] = v
		if i%50_000 == 0 {
			checkTable(t, tab, want, nil)
		}
	}
	absent := make([]uint64, 10_000)
	for i := range absent {
		absent[i] = r.Uint64()
	}
	checkTable(t, tab, want, absent)
}

// TestTableCollisions puts keys that all mix into one shard with tags
// that crowd its first and last slots, so that probes run long and wrap
// around the end of the shard, growing it all the while.
func TestTableCollisions(t *testing.T) {
	tab := newTable()
	want := map[uint64]uint64{}
	var absent []uint64
	for i := range uint64(3000) {
		low := tab.keyWithMix(7, 1+i)         // home: slot 0
		high := tab.keyWithMix(7, tagMask-i)  // home: the last slot
		other := tab.keyWithMix(8, tagMask-i) // another shard
		tab.put(low, i)
		tab.put(high, ^i)
		want[low], want[high] = i, ^i
		absent = append(absent, tab.keyWithMix(7, 1<<40+i), other)
		if i%500 == 0 {
			checkTable(t, tab, want, absent)
		}
	}
	for k := range want {
		want[k]++
		tab.put(k, want[k])
	}
	checkTable(t, tab, want, absent)
	if tab.shards[7].n != 6000 || tab.shards[8].n != 0 {
		t.Errorf("shards 7 and 8 hold %d and %d keys", tab.shards[7].n, tab.shards[8].n)
	}
}

// TestTableZeroTag puts keys whose tag is 0, the mark of an empty slot.
func TestTableZeroTag(t *testing.T) {
	tab := newTable()
	want := map[uint64]uint64{}
	for sh := range tableShards {
		k := tab.keyWithMix(sh, 0)
		if tab.hash(k)&tagMask != 0 {
			t.Fatalf("key %#x: tag %#x", k, tab.hash(k)&tagMask)
		}
		tab.put(k, uint64(sh))
		want[k] = uint64(sh)
		n := tab.keyWithMix(sh, 1) // a neighbour in the slots
		tab.put(n, 1)
		want[n] = 1
	}
	checkTable(t, tab, want, []uint64{tab.keyWithMix(3, 2)})
	for k := range want {
		want[k] += 10
		tab.put(k, want[k])
	}
	checkTable(t, tab, want, nil)
	if len(tab.zero) != tableShards {
		t.Errorf("zero map holds %d keys, want %d", len(tab.zero), tableShards)
	}
}

// TestTableGrowth checks the memory a million keys take: at most 7/8 of
// the slots used at any time, and a shard's slots fill its allocation.
func TestTableGrowth(t *testing.T) {
	if testing.Short() {
		t.Skip("a million keys")
	}
	tab := newTable()
	r := rand.New(rand.NewPCG(5, 6))
	const n = 1_000_000
	for i := range n {
		tab.put(r.Uint64()|1, uint64(i))
	}
	slots, bytes := 0, 0
	for i := range tab.shards {
		s := &tab.shards[i]
		if s.n*8 > s.slots()*7 {
			t.Fatalf("shard %d: %d keys in %d slots", i, s.n, s.slots())
		}
		if cap(s.b) != len(s.b) {
			t.Fatalf("shard %d: %d bytes of an allocation of %d", i, len(s.b), cap(s.b))
		}
		slots += s.slots()
		bytes += cap(s.b)
	}
	load := float64(n) / float64(slots)
	t.Logf("%d keys: %d slots, load %.1f%%, %.1f bytes a key", n, slots, 100*load, float64(bytes)/n)
	if load < 0.70 {
		t.Errorf("load %.1f%%", 100*load)
	}
}
