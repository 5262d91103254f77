package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestReadLastRun: the latest run's start, its last record and its call
// starts, from a journal whose run was killed mid-call (an intent with no
// outcome, counted as started) and whose last line is torn.
func TestReadLastRun(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	journal := `{"t":"run","note":"run started, pid 1","at":"2026-11-20T10:00:00Z"}
{"t":"intent","agent":"A","phone":"+14155550100","attempt":1,"at":"2026-11-20T10:00:01Z"}
{"t":"outcome","agent":"A","phone":"+14155550100","attempt":1,"status":"sent","at":"2026-11-20T10:00:02Z"}
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
	lr, err := ReadLastRun(path)
	if err != nil {
		t.Fatal(err)
	}
	want := LastRun{StartedAt: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), LastAt: time.Date(2026, 11, 21, 9, 0, 10, 0, time.UTC), Calls: 2}
	if !lr.StartedAt.Equal(want.StartedAt) || !lr.LastAt.Equal(want.LastAt) || lr.Calls != want.Calls {
		t.Errorf("got %+v, want %+v", lr, want)
	}
	if lr, err := ReadLastRun(filepath.Join(t.TempDir(), "none.jsonl")); err != nil || !lr.StartedAt.IsZero() {
		t.Errorf("no journal: %+v, %v", lr, err)
	}
}
