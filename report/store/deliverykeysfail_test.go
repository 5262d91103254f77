package store

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/report/durable"
)

// TestDeliveriesKeyIndexWriteFailsOnce: the write of the key index fails
// once (the disk full for a moment, as listen rewrites it after many
// deliveries). The delivery of that commit is durable but answered with
// the error (503: its retry is a duplicate). Before, every later Append
// failed with that error too, and listen answered 503 to every delivery
// until it was restarted; now the index on disk is opened again, a retry
// of a delivery stored before is found stored, a new delivery is stored,
// and the next write of the index succeeds. Reopened, the file holds each
// delivery once.
func TestDeliveriesKeyIndexWriteFailsOnce(t *testing.T) {
	defer func(n int) { deliveryKeyRecent = n }(deliveryKeyRecent)
	deliveryKeyRecent = 2
	fail := false
	defer func() { createKeyIndex = durable.Create }()
	createKeyIndex = func(path string, perm fs.FileMode) (*durable.File, error) {
		if fail {
			fail = false
			return nil, errors.New("no space left on device")
		}
		return durable.Create(path, perm)
	}
	dir := filepath.Join(t.TempDir(), "state")
	w, err := OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	fail = true // from now: the first write after the open's
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	d := func(i int) Delivery {
		return Delivery{Key: fmt.Sprintf("k%d", i), At: at, Event: "call.ended", Fields: map[string]string{"phone_number": fmt.Sprintf("+1415555%04d", i)}}
	}
	for i := range 2 {
		if _, isNew, err := w.Append(d(i)); err != nil || !isNew {
			t.Fatalf("delivery %d: new %v, %v", i, isNew, err)
		}
	}
	// The third key is one too many in memory: the index is written, and
	// that fails.
	if _, _, err := w.Append(d(2)); err == nil {
		t.Fatal("the commit whose index write failed answered no error")
	}
	for i := range 3 {
		if _, isNew, err := w.Append(d(i)); err != nil || isNew {
			t.Errorf("a retry of delivery %d after the failed index write: new %v, %v; want a duplicate", i, isNew, err)
		}
	}
	for i := 3; i < 6; i++ {
		if _, isNew, err := w.Append(d(i)); err != nil || !isNew {
			t.Errorf("delivery %d after the failed index write: new %v, %v; want it stored", i, isNew, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w, err = OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		if _, isNew, err := w.Append(d(i)); err != nil || isNew {
			t.Errorf("reopened, a retry of delivery %d: new %v, %v; want a duplicate", i, isNew, err)
		}
	}
	w.Close()
	ds, err := ReadDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 6 {
		t.Errorf("%d deliveries in the file, want 6, each once", len(ds))
	}
}
