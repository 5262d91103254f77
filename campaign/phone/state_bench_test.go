package phone

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"github.com/callrun/callrun/campaign/phone/internal/geostate"
)

// oldUSState is USState before the table: the library's geocoding
// (geostate.State), kept by NPA-NXX in a map, which cold empties.
type oldUSState struct {
	sync.RWMutex
	m map[int]string
}

func (c *oldUSState) state(e164 string) string {
	if len(e164) < 8 || e164[:2] != "+1" || !allDigits(e164[1:]) {
		return ""
	}
	key := 0
	for _, d := range e164[2:8] {
		key = key*10 + int(d-'0')
	}
	c.RLock()
	s, ok := c.m[key]
	c.RUnlock()
	if ok {
		return s
	}
	s = geostate.State(e164)
	c.Lock()
	if c.m == nil {
		c.m = map[int]string{}
	}
	c.m[key] = s
	c.Unlock()
	return s
}

// benchUSNumbers returns n US numbers as a campaign's sheet holds them:
// 3,000 exchanges of geographic NPAs (whatever state the table gives),
// a line number each at random, and one in fifty toll-free.
func benchUSNumbers(n int) []string {
	r := rand.New(rand.NewPCG(5, 6))
	keys := make([]int, 0, 3000)
	for len(keys) < cap(keys) {
		k := 200_000 + r.IntN(800_000)
		if USState(fmt.Sprintf("+1%06d0000", k)) != "" {
			keys = append(keys, k)
		}
	}
	out := make([]string, n)
	for i := range out {
		if r.IntN(50) == 0 {
			out[i] = fmt.Sprintf("+1800%07d", 2_000_000+r.IntN(8_000_000))
			continue
		}
		out[i] = fmt.Sprintf("+1%06d%04d", keys[r.IntN(len(keys))], r.IntN(10_000))
	}
	return out
}

// BenchmarkUSState: a lookup of 100,000 numbers of 3,000 exchanges, old
// (the geocoder by NPA-NXX, cold: the cache emptied each pass, so every
// exchange's first number goes to the geocoder; warm: the cache kept) and
// new (the table; it keeps no cache).
func BenchmarkUSState(b *testing.B) {
	nums := benchUSNumbers(100_000)
	var old oldUSState
	old.state(nums[0]) // the geocoder loaded
	sink := 0
	run := func(name string, state func(string) string, reset func()) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				reset()
				for _, n := range nums {
					sink += len(state(n))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(nums)), "ns/number")
		})
	}
	run("old/cold", old.state, func() { old.m = nil })
	run("old/warm", old.state, func() {})
	run("new", USState, func() {})
	_ = sink
}

// BenchmarkUSStateHeap reports the heap in use (runtime.MemStats
// HeapInuse, after a GC) that the first lookups of 100,000 numbers add,
// and what they allocated (TotalAlloc), old and new. Run each alone, in a process of its own, with
// -benchtime 1x: the geocoder is loaded once a process, so only the
// first old pass pays it.
func BenchmarkUSStateHeap(b *testing.B) {
	for _, c := range []struct {
		name  string
		state func(string) string
	}{{"old", new(oldUSState).state}, {"new", USState}} {
		b.Run(c.name, func(b *testing.B) {
			nums := benchUSNumbers(100_000)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			sink := 0
			for _, n := range nums {
				sink += len(c.state(n))
			}
			b.StopTimer()
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapInuse)-int64(before.HeapInuse))/(1<<20), "heap-MiB")
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), "alloc-MiB")
			runtime.KeepAlive(nums)
			_ = sink
		})
	}
}
