package phone

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
)

// benchPhoneMix is a realistic mix of phone cells: mostly valid numbers in
// the shapes CRM exports hold, some national numbers of other regions, a
// few Excel-damaged and invalid cells.
func benchPhoneMix(n int) [][2]string {
	rng := rand.New(rand.NewSource(7))
	d := func(k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = byte('0' + rng.Intn(10))
		}
		return string(b)
	}
	// NANP area codes and exchanges that are valid, so that most
	// generated US numbers are.
	areas := []string{"212", "213", "303", "312", "404", "415", "512", "617", "646", "702", "718", "773", "808", "917"}
	out := make([][2]string, n)
	for i := range out {
		area, exch := areas[rng.Intn(len(areas))], fmt.Sprint(200+rng.Intn(800))
		var s, r string
		switch x := rng.Intn(100); {
		case x < 30:
			s, r = fmt.Sprintf("+1%s%s%s", area, exch, d(4)), "US" // HighLevel exports E.164
		case x < 55:
			s, r = fmt.Sprintf("(%s) %s-%s", area, exch, d(4)), "US"
		case x < 65:
			s, r = fmt.Sprintf("1-%s-%s-%s", area, exch, d(4)), "US"
		case x < 72:
			s, r = fmt.Sprintf("%s.%s.%s", area, exch, d(4)), "US"
		case x < 78:
			s, r = "+44 7"+d(3)+" "+d(6), "GB"
		case x < 82:
			s, r = "020 7946 "+d(4), "GB"
		case x < 87:
			s, r = "030 "+d(8), "DE"
		case x < 90:
			s, r = "+49 15"+d(9), "DE"
		case x < 93:
			s, r = "06 "+d(2)+" "+d(2)+" "+d(2)+" "+d(2), "FR"
		case x < 95:
			s, r = "0491 "+d(3)+" "+d(3), "AU"
		case x < 97:
			s, r = fmt.Sprintf("1.%s%s%sE+10", area, exch, d(4)), "US" // Excel
		default:
			s, r = []string{"", "N/A", "555-1234", "12345", "+1 555 123 4567"}[rng.Intn(5)], "US"
		}
		out[i] = [2]string{s, r}
	}
	return out
}

var (
	benchMixOnce sync.Once
	benchMix     [][2]string
)

func benchInputs() [][2]string {
	benchMixOnce.Do(func() { benchMix = benchPhoneMix(1 << 16) })
	return benchMix
}

// BenchmarkNormalize measures the fast path on the realistic mix.
func BenchmarkNormalize(b *testing.B) {
	in := benchInputs()
	for _, c := range in[:1000] { // build the automata outside the timing
		Normalize(c[0], c[1])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := in[i%len(in)]
		Normalize(c[0], c[1])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "numbers/s")
}

// BenchmarkNormalizeParallel is BenchmarkNormalize on every core.
func BenchmarkNormalizeParallel(b *testing.B) {
	in := benchInputs()
	for _, c := range in[:1000] {
		Normalize(c[0], c[1])
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c := in[int(next.Add(1))%len(in)]
			Normalize(c[0], c[1])
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "numbers/s")
}

// BenchmarkNormalizeSlow measures the plain-library reference on the same
// mix.
func BenchmarkNormalizeSlow(b *testing.B) {
	in := benchInputs()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := in[i%len(in)]
		normalizeSlow(c[0], c[1])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "numbers/s")
}
