package campaign

import (
	"fmt"
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	for in, want := range map[string]Shard{"0/4": {0, 4}, "3/4": {3, 4}, " 1 / 2 ": {1, 2}, "0/1": {0, 1}} {
		if got, err := ParseShard(in); err != nil || got != want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"4/4", "-1/4", "1/0", "1", "a/b", "1/1001", "", "1/4/2"} {
		if s, err := ParseShard(in); err == nil {
			t.Errorf("ParseShard(%q) = %v; want an error", in, s)
		}
	}
}

// Every contact falls in exactly one shard of N, a number always in the
// same one (so dedupe holds across shards), a row without a number by its
// row; the shards are near even.
func TestShardsPartitionTheContacts(t *testing.T) {
	const n, shards = 20000, 4
	per := make([]int, shards)
	for i := range n {
		c := &Contact{Phone: fmt.Sprintf("+1212555%04d", i), Row: i + 2}
		if i%10 == 0 {
			c.Phone = "" // an invalid row
		}
		in := -1
		for k := range shards {
			if (Shard{k, shards}).holds("leads.csv", c) {
				if in >= 0 {
					t.Fatalf("%+v is in shards %d and %d", c, in, k)
				}
				in = k
			}
		}
		if in < 0 {
			t.Fatalf("%+v is in no shard", c)
		}
		per[in]++
		again := &Contact{Phone: c.Phone, Row: c.Row + 7}
		if c.Phone != "" && !(Shard{in, shards}).holds("other.csv", again) {
			t.Fatalf("%s in another row or sheet falls in another shard", c.Phone)
		}
	}
	for k, m := range per {
		if m < n/shards*9/10 || m > n/shards*11/10 {
			t.Errorf("shard %d/%d holds %d of %d contacts: %v", k, shards, m, n, per)
		}
	}
	if !(Shard{}).holds("x.csv", &Contact{Phone: "+12125550100"}) {
		t.Errorf("the zero Shard does not hold everyone")
	}
}

func TestSetShardDividesThePace(t *testing.T) {
	f := &File{Pace: Pace{PerSecond: 8, Burst: 1, Concurrency: 4}}
	f.SetShard(Shard{1, 4})
	if f.Pace.PerSecond != 2 || f.Shard != (Shard{1, 4}) {
		t.Errorf("shard 1/4 of 8/s: %v/s, %v", f.Pace.PerSecond, f.Shard)
	}
	f.SetShard(Shard{})
	if f.Pace.PerSecond != 8 {
		t.Errorf("the whole campaign again: %v/s, want 8", f.Pace.PerSecond)
	}
}

// TestShardsShareTheActiveCallLimit: each of N shards keeps its share of
// pace.max_active_calls (at least 1), and the rate plan estimates with is
// the lower of per_second and max_active_calls / call_length.
func TestShardsShareTheActiveCallLimit(t *testing.T) {
	f := &File{Pace: Pace{PerSecond: 100, MaxActiveCalls: 20, CallLength: 2 * time.Second}}
	if k, r := f.MaxActiveCalls(), f.Rate(); k != 20 || r != 10 {
		t.Errorf("one machine: %d active, %v a second; want 20 and 10", k, r)
	}
	f.SetShard(Shard{Index: 1, Count: 4})
	if k, r := f.MaxActiveCalls(), f.Rate(); k != 5 || r != 2.5 {
		t.Errorf("shard 1/4: %d active, %v a second; want 5 and 2.5", k, r)
	}
	f.Pace.MaxActiveCalls = 3
	if k := f.MaxActiveCalls(); k != 1 {
		t.Errorf("3 calls over 4 shards: %d each, want 1", k)
	}
	f.Pace.MaxActiveCalls = 0
	if k, r := f.MaxActiveCalls(), f.Rate(); k != 0 || r != 25 {
		t.Errorf("no limit: %d active, %v a second; want 0 and per_second / 4", k, r)
	}
}
