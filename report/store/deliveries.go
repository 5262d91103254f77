package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/gofrs/flock"
)

// DeliveriesFile is the deliveries file's name in a campaign's state
// directory, beside the journal; DeliveriesLock is its lock's.
const (
	DeliveriesFile = "deliveries.jsonl"
	DeliveriesLock = "deliveries.lock"
)

// ErrDeliveriesLocked is what [OpenDeliveries] wraps when another process
// (another `callrun listen`) writes the campaign's deliveries.
var ErrDeliveriesLocked = errors.New("another callrun listen writes these deliveries")

// Delivery is one webhook delivery the service made, as `callrun listen`
// stored it: one JSON line of the deliveries file. A new field is added,
// never renamed.
type Delivery struct {
	// Key names the delivery by its content; a retry of it has the same
	// key and is stored once.
	Key     string            `json:"key"`
	At      time.Time         `json:"at"` // when listen received it
	Event   string            `json:"event,omitempty"`
	AgentID string            `json:"agent_id,omitempty"`
	Fields  map[string]string `json:"fields"`
	Raw     string            `json:"raw,omitempty"` // bounded and redacted
}

// Deliveries is the append-only deliveries file of a campaign's state
// directory, opened for writing by `callrun listen`. It has a lock of its
// own, not the run's, so that listen never waits on a run; only one
// listen at a time writes it. Its methods are safe for concurrent use.
type Deliveries struct {
	mu   sync.Mutex
	f    *os.File
	fl   *flock.Flock
	size int64           // the file's length: where the next line goes
	seen map[string]bool // keys stored
}

// OpenDeliveries takes the deliveries lock of state directory dir, cuts a
// torn last line (a delivery whose write a crash interrupted was never
// acknowledged), reads the keys already stored and opens the file for
// appending. It fails at once, wrapping [ErrDeliveriesLocked], if another
// process holds the lock.
func OpenDeliveries(dir string) (*Deliveries, error) {
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	if os.IsNotExist(statErr) {
		if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
			return nil, fmt.Errorf("creating state directory: %w", err)
		}
	}
	fl := flock.New(filepath.Join(dir, DeliveriesLock), flock.SetFlag(os.O_CREATE|os.O_RDWR))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", filepath.Join(dir, DeliveriesLock), err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrDeliveriesLocked, dir)
	}
	d, err := openDeliveries(filepath.Join(dir, DeliveriesFile))
	if err != nil {
		fl.Unlock()
		return nil, err
	}
	d.fl = fl
	return d, nil
}

func openDeliveries(path string) (*Deliveries, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := durable.SyncDir(filepath.Dir(path)); err != nil {
		f.Close()
		return nil, err
	}
	ds, good, err := readDeliveries(f)
	if err == nil {
		err = cutTail(f, good)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	d := &Deliveries{f: f, size: good, seen: make(map[string]bool, len(ds))}
	for _, x := range ds {
		d.seen[x.Key] = true
	}
	return d, nil
}

// Append stores d durably (written and synced) unless a delivery of the
// same key is stored already, and reports whether it was new. Only after
// it returns may listen acknowledge the delivery.
func (w *Deliveries) Append(d Delivery) (bool, error) {
	if d.Key == "" {
		return false, errors.New("a delivery needs its key")
	}
	line, err := json.Marshal(d)
	if err != nil {
		return false, err
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return false, os.ErrClosed
	}
	if w.seen[d.Key] {
		return false, nil
	}
	if _, err := w.f.WriteAt(line, w.size); err != nil {
		w.f.Truncate(w.size) //nolint:errcheck // the torn line is cut on the next open too
		return false, err
	}
	if err := w.f.Sync(); err != nil {
		// Not known to be durable: never acknowledged, so cut it, and the
		// service's retry stores it again.
		w.f.Truncate(w.size) //nolint:errcheck
		return false, err
	}
	w.size += int64(len(line))
	w.seen[d.Key] = true
	return true, nil
}

// Close closes the file and releases the lock.
func (w *Deliveries) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	if w.fl != nil {
		err = errors.Join(err, w.fl.Unlock())
	}
	return err
}

// ReadDeliveries returns the deliveries stored in state directory dir, in
// the order they were stored, without the lock: for the report while
// listen may be appending. A torn last line is ignored; a missing file
// holds none.
func ReadDeliveries(dir string) ([]Delivery, error) {
	path := filepath.Join(dir, DeliveriesFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ds, _, err := readDeliveries(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return ds, nil
}

// readDeliveries reads every whole line of f, each key once, and returns
// them with the length of the whole lines; a last line without its
// newline is left out.
func readDeliveries(f *os.File) ([]Delivery, int64, error) {
	br := bufio.NewReader(f)
	var (
		out  []Delivery
		good int64
		seen = map[string]bool{}
	)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return out, good, nil // a torn last line, or none
		}
		if err != nil {
			return nil, 0, err
		}
		good += int64(len(line))
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var d Delivery
		if err := json.Unmarshal(line, &d); err != nil || d.Key == "" {
			return nil, 0, fmt.Errorf("line %d is not a delivery", n)
		}
		if !seen[d.Key] {
			seen[d.Key] = true
			out = append(out, d)
		}
	}
}

// DeliveriesTail follows the deliveries file of a state directory as
// another process (`callrun listen`) appends to it: a run reads through
// it the deliveries stored while it runs, without the deliveries lock.
// Each Next reads only what was appended since the last. Its methods are
// not safe for concurrent use.
type DeliveriesTail struct {
	path string
	off  int64 // where the next whole line starts
	// torn: off is inside a line (the tail began, or the file was cut,
	// while a line was being written), skipped up to its newline.
	torn bool
}

// TailDeliveries returns a tail of the deliveries file of state directory
// dir that begins at its end now: its first Next returns the deliveries
// stored after this call. A missing file is followed from its creation.
func TailDeliveries(dir string) (*DeliveriesTail, error) {
	t := &DeliveriesTail{path: filepath.Join(dir, DeliveriesFile)}
	if err := t.seekEnd(); err != nil {
		return nil, err
	}
	return t, nil
}

// seekEnd moves the tail to the file's end, noting whether that end is
// inside a line.
func (t *DeliveriesTail) seekEnd() error {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		t.off, t.torn = 0, false
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	t.off, t.torn = fi.Size(), false
	if t.off > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, t.off-1); err != nil {
			return err
		}
		t.torn = last[0] != '\n'
	}
	return nil
}

// Next returns the deliveries whose whole lines were appended since the
// last Next (or since the tail began), in the order they were stored. A
// line not yet whole is left for a later Next.
func (t *DeliveriesTail) Next() ([]Delivery, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	if size < t.off {
		// listen cut a torn last line when it started again: what is
		// there now was read, but for what comes after.
		f.Close()
		if err := t.seekEnd(); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if size == t.off {
		return nil, nil
	}
	buf := make([]byte, size-t.off)
	if _, err := f.ReadAt(buf, t.off); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var out []Delivery
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			return out, nil // the rest is not whole yet
		}
		line := buf[:i+1]
		buf = buf[i+1:]
		t.off += int64(len(line))
		if t.torn {
			t.torn = false
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var d Delivery
		if err := json.Unmarshal(line, &d); err != nil || d.Key == "" {
			return out, fmt.Errorf("%s: a line is not a delivery", t.path)
		}
		out = append(out, d)
	}
}
