package campaign

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
)

// Shard is the part of a campaign that one run takes with --shard K/N:
// the contacts whose normalised number hashes to K of N, so that a number
// falls in one shard however often and wherever it appears, and dedupe
// holds across shards. Rows without a readable number go by their row.
// The zero Shard is the whole campaign. The commands set it on a [File]
// with [File.SetShard]; every [ContactReader] of that file then reads the
// shard's contacts only.
type Shard struct {
	Index int // K, from 0 (as Kubernetes' JOB_COMPLETION_INDEX counts)
	Count int // N; 0 or 1: not sharded
}

// MaxShards bounds N.
const MaxShards = 1000

// ParseShard reads --shard K/N.
func ParseShard(s string) (Shard, error) {
	k, n, ok := strings.Cut(strings.TrimSpace(s), "/")
	ki, err1 := strconv.Atoi(strings.TrimSpace(k))
	ni, err2 := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("--shard %q: write K/N, e.g. 0/4 for the first of four shards", s)
	}
	if ni < 1 || ni > MaxShards || ki < 0 || ki >= ni {
		return Shard{}, fmt.Errorf("--shard %q: K counts from 0 and must be below N (0/%d to %d/%d); N is 1 to %d", s, max(ni, 1), max(ni-1, 0), max(ni, 1), MaxShards)
	}
	return Shard{Index: ki, Count: ni}, nil
}

// Sharded reports whether s is part of a campaign rather than all of it.
func (s Shard) Sharded() bool { return s.Count > 1 }

// N is the number of shards: 1 when not sharded.
func (s Shard) N() int { return max(s.Count, 1) }

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.N()) }

// holds reports whether contact c of sheet file is in the shard.
func (s Shard) holds(file string, c *Contact) bool {
	if !s.Sharded() {
		return true
	}
	h := fnv.New64a()
	if c.Phone != "" {
		h.Write([]byte(c.Phone))
	} else {
		fmt.Fprintf(h, "%s\x00%d", file, c.Row)
	}
	return h.Sum64()%uint64(s.Count) == uint64(s.Index)
}

// InShard reports whether contact c of f falls in shard s of the
// campaign: for status, which tells which contacts a running shard calls.
func (f *File) InShard(s Shard, c *Contact) bool { return s.holds(f.Sheets[c.Sheet].File, c) }

// MaxActiveCalls is how many calls this run may have in progress, for
// pace.max_active_calls: its share of them when f is a shard (at least
// 1), as the shards share the account's limit; 0 for no limit.
func (f *File) MaxActiveCalls() int {
	k := f.Pace.MaxActiveCalls
	if k > 0 && f.Shard.Sharded() {
		k = max(1, k/f.Shard.Count)
	}
	return k
}

// Rate is the most call starts a second this run makes: pace.per_second
// (this shard's part), or fewer when MaxActiveCalls calls of
// pace.call_length allow fewer. plan's estimate uses it.
func (f *File) Rate() float64 {
	r := f.Pace.PerSecond
	if k := f.MaxActiveCalls(); k > 0 && f.Pace.CallLength > 0 {
		r = min(r, float64(k)/f.Pace.CallLength.Seconds())
	}
	return r
}

// SetShard makes f the shard s of its campaign: its contact readers read
// the shard's contacts only, and its pace is pace.per_second / N, so that
// N shards together keep the campaign's pace.
func (f *File) SetShard(s Shard) {
	if f.Shard.Sharded() {
		f.Pace.PerSecond *= float64(f.Shard.Count) // set once more: undo the last
	}
	f.Shard = s
	f.Pace.PerSecond /= float64(s.N())
}
