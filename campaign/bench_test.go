package campaign

import (
	"bufio"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
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
	p := NewPhoneNormalizer()
	for _, c := range in[:1000] { // build the automata outside the timing
		p.Normalize(c[0], c[1])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := in[i%len(in)]
		p.Normalize(c[0], c[1])
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "numbers/s")
}

// BenchmarkNormalizeParallel is BenchmarkNormalize on every core.
func BenchmarkNormalizeParallel(b *testing.B) {
	in := benchInputs()
	p := NewPhoneNormalizer()
	for _, c := range in[:1000] {
		p.Normalize(c[0], c[1])
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			c := in[int(next.Add(1))%len(in)]
			p.Normalize(c[0], c[1])
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

// benchSheetRows is the size of the generated sheet.
const benchSheetRows = 1_000_000

// writeBenchSheet writes a HighLevel-like sheet of rows contacts (BOM,
// CRLF, quoted fields) to dir and returns its path.
func writeBenchSheet(b *testing.B, dir string, rows int) string {
	b.Helper()
	path := filepath.Join(dir, "contacts.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("\ufeff\"Contact Id\",\"First Name\",\"Last Name\",\"Phone\",\"Email\",\"Tags\"\r\n")
	first := []string{"Ada", "Grace", "Alan", "Katherine", "Edsger", "Barbara", "Donald", "Frances", "Margaret", "Linus"}
	last := []string{"Lovelace", "Hopper", "Turing", "Johnson", "Dijkstra", "Liskov", "Knuth", "Allen", "Hamilton", "Torvalds"}
	mix := benchInputs()
	for i := range rows {
		fn, ln := first[i%len(first)], last[(i/7)%len(last)]
		tags := "lead"
		if i%5 == 0 {
			tags = "lead,spring promo"
		}
		fmt.Fprintf(w, "\"hl_%07d\",\"%s\",\"%s\",\"%s\",\"%s.%s%d@example.com\",\"%s\"\r\n",
			i, fn, ln, mix[i%len(mix)][0], fn, ln, i, tags)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkSheetRead reads a generated 1,000,000-row sheet (about 90 MB):
// rows/s, and the peak heap in use while reading.
func BenchmarkSheetRead(b *testing.B) {
	path := writeBenchSheet(b, b.TempDir(), benchSheetRows)
	if fi, err := os.Stat(path); err == nil {
		b.SetBytes(fi.Size())
	}
	runtime.GC()
	stop := heapPeakSampler()
	b.ResetTimer()
	rows := 0
	for range b.N {
		s, err := OpenSheet(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := s.Column("Phone"); err != nil {
			b.Fatal(err)
		}
		for {
			rec, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil || rec.Err != nil {
				b.Fatal(err, rec.Err)
			}
			rows++
		}
		s.Close()
	}
	b.StopTimer()
	if rows != b.N*benchSheetRows {
		b.Fatalf("read %d rows, want %d", rows, b.N*benchSheetRows)
	}
	b.ReportMetric(float64(rows)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(stop(), "peak-MiB")
}

// BenchmarkSheetPlan reads the generated sheet and normalises every phone
// number on all cores, the way a plan can: one goroutine reads and hands
// batches of rows to one normalising worker per core.
func BenchmarkSheetPlan(b *testing.B) {
	path := writeBenchSheet(b, b.TempDir(), benchSheetRows)
	p := NewPhoneNormalizer()
	runtime.GC()
	stop := heapPeakSampler()
	b.ResetTimer()
	var valid, rows atomic.Int64
	for range b.N {
		s, err := OpenSheet(path)
		if err != nil {
			b.Fatal(err)
		}
		col, err := s.Column("Phone")
		if err != nil {
			b.Fatal(err)
		}
		batches := make(chan []SheetRecord, 4)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for batch := range batches {
					for _, rec := range batch {
						if _, _, err := p.Normalize(rec.Fields[col], "US"); err == nil {
							valid.Add(1)
						}
					}
					rows.Add(int64(len(batch)))
				}
			}()
		}
		batch := make([]SheetRecord, 0, 1024)
		for {
			rec, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil || rec.Err != nil {
				b.Fatal(err, rec.Err)
			}
			if batch = append(batch, rec); len(batch) == cap(batch) {
				batches <- batch
				batch = make([]SheetRecord, 0, 1024)
			}
		}
		batches <- batch
		close(batches)
		wg.Wait()
		s.Close()
	}
	b.StopTimer()
	if rows.Load() != int64(b.N*benchSheetRows) || valid.Load() < rows.Load()/2 {
		b.Fatalf("%d rows, %d valid", rows.Load(), valid.Load())
	}
	b.ReportMetric(float64(rows.Load())/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(stop(), "peak-MiB")
}
