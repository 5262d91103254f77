package store

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadRuns: each run's start, end, last record, call starts and
// starts per minute, from a journal whose first run ended by itself and
// whose second was killed mid-call (an intent with no outcome, counted as
// started; no end record) and left a torn last line.
func TestReadRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	journal := `{"t":"run","note":"run started, pid 1","at":"2026-11-20T10:00:00Z"}
{"t":"intent","agent":"A","phone":"+14155550100","attempt":1,"at":"2026-11-20T10:00:01Z"}
{"t":"outcome","agent":"A","phone":"+14155550100","attempt":1,"status":"sent","at":"2026-11-20T10:00:02Z"}
{"t":"intent","agent":"A","phone":"+14155550104","attempt":1,"at":"2026-11-20T10:02:30Z"}
{"t":"outcome","agent":"A","phone":"+14155550104","attempt":1,"status":"sent","body":"{\"at\":\"1999-01-01T00:00:00Z\"}","at":"2026-11-20T10:02:31Z"}
{"t":"end","note":"complete","at":"2026-11-20T10:02:32Z"}
{"t":"run","note":"run started, pid 2","at":"2026-11-21T09:00:00Z"}
{"t":"intent","agent":"A","phone":"+14155550101","attempt":1,"at":"2026-11-21T09:00:01Z"}
{"t":"outcome","agent":"A","phone":"+14155550101","attempt":1,"status":"retry","at":"2026-11-21T09:00:02Z"}
{"t":"intent","agent":"A","phone":"+14155550101","attempt":2,"at":"2026-11-21T09:00:03Z"}
{"t":"outcome","agent":"A","phone":"+14155550101","attempt":2,"status":"failed","at":"2026-11-21T09:00:04Z"}
{"t":"intent","agent":"A","phone":"+14155550102","attempt":1,"at":"2026-11-21T09:00:05Z"}
{"t":"outcome","agent":"A","phone":"+14155550102","attempt":1,"status":"skipped","at":"2026-11-21T09:00:06Z"}
{"t":"intent","agent":"A","phone":"+14155550103","attempt":1,"at":"2026-11-21T09:00:10Z"}
{"t":"outco`
	if err := os.WriteFile(path, []byte(journal), 0o600); err != nil {
		t.Fatal(err)
	}
	runs, err := ReadRuns(path)
	if err != nil {
		t.Fatal(err)
	}
	day := func(d, h, m, s int) time.Time { return time.Date(2026, 11, d, h, m, s, 0, time.UTC) }
	seconds := func(n int, at ...int) []int {
		c := make([]int, n)
		for _, i := range at {
			c[i]++
		}
		return c
	}
	want := []Run{
		{StartedAt: day(20, 10, 0, 0), Note: "run started, pid 1", LastAt: day(20, 10, 2, 32), Calls: 2,
			EndedAt: day(20, 10, 2, 32), Ending: "complete", PerMinute: []int{1, 0, 1}, PerSecond: seconds(151, 1, 150)},
		{StartedAt: day(21, 9, 0, 0), Note: "run started, pid 2", LastAt: day(21, 9, 0, 10), Calls: 2, PerMinute: []int{4}, PerSecond: seconds(11, 1, 3, 5, 10)},
	}
	if fmt.Sprint(runs) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", runs, want)
	}
	if runs, err := ReadRuns(filepath.Join(t.TempDir(), "none.jsonl")); err != nil || len(runs) != 0 {
		t.Errorf("no journal: %+v, %v", runs, err)
	}
}
