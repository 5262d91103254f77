package campaign

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
)

// benchSheetRows is the size of the generated sheet.
const benchSheetRows = 1_000_000

// writeBenchSheet writes the plan benchmark's sheet of rows contacts
// (HighLevel-like: BOM, CRLF, quoted fields, phone numbers in the shapes
// exports hold) to dir and returns its path.
func writeBenchSheet(b *testing.B, dir string, rows int) string {
	b.Helper()
	writePlanBenchCampaign(b, dir, rows)
	return filepath.Join(dir, "contacts.csv")
}

// BenchmarkSheetRead reads a generated 1,000,000-row sheet (about 90 MB):
// rows/s, and the peak heap in use while reading.
func BenchmarkSheetRead(b *testing.B) {
	path := writeBenchSheet(b, b.TempDir(), benchSheetRows)
	if fi, err := os.Stat(path); err == nil {
		b.SetBytes(fi.Size())
	}
	benchReadSheet(b, path, benchSheetRows)
}

// BenchmarkSheetReadMac reads the same sheet with its lines ended by a
// bare CR, as Excel for Mac writes them: rows/s and the peak heap, to set
// beside BenchmarkSheetRead's.
func BenchmarkSheetReadMac(b *testing.B) {
	path := writeBenchSheet(b, b.TempDir(), benchSheetRows)
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\r"))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	data = nil
	benchReadSheet(b, path, benchSheetRows)
}

// benchReadSheet reads the sheet at path b.N times, checks that it holds
// rows rows, all readable, and reports rows/s and the peak heap in use.
func benchReadSheet(b *testing.B, path string, rows int) {
	runtime.GC()
	stop := heapPeakSampler()
	b.ResetTimer()
	read := 0
	for range b.N {
		s, err := sheet.Open(path)
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
			read++
		}
		s.Close()
	}
	b.StopTimer()
	if read != b.N*rows {
		b.Fatalf("read %d rows, want %d", read, b.N*rows)
	}
	b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(stop(), "peak-MiB")
}

// BenchmarkSheetPlan reads the generated sheet and normalises every phone
// number on all cores, the way a plan can: one goroutine reads and hands
// batches of rows to one normalising worker per core.
func BenchmarkSheetPlan(b *testing.B) {
	path := writeBenchSheet(b, b.TempDir(), benchSheetRows)
	runtime.GC()
	stop := heapPeakSampler()
	b.ResetTimer()
	var valid, rows atomic.Int64
	for range b.N {
		s, err := sheet.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		col, err := s.Column("Phone")
		if err != nil {
			b.Fatal(err)
		}
		batches := make(chan []sheet.Record, 4)
		var wg sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for batch := range batches {
					for _, rec := range batch {
						if _, _, err := phone.Normalize(rec.Fields[col], "US"); err == nil {
							valid.Add(1)
						}
					}
					rows.Add(int64(len(batch)))
				}
			}()
		}
		batch := make([]sheet.Record, 0, 1024)
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
				batch = make([]sheet.Record, 0, 1024)
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
