package store

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
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
// stored it: one JSON line of the deliveries file, or of the deliveries
// table. A new field is added, never renamed.
type Delivery struct {
	// Key names the delivery by its content; a retry of it has the same
	// key and is stored once.
	Key     string    `json:"key"`
	At      time.Time `json:"at"` // when listen received it
	Event   string    `json:"event,omitempty"`
	AgentID string    `json:"agent_id,omitempty"`
	CallID  string    `json:"call_id,omitempty"` // the call it names, if any
	// Via is "agent" for a delivery to an agent's webhook (the outcomes
	// path callrun gives the agents it creates), "" for one to the
	// campaign's outcomes path (the account webhooks).
	Via string `json:"via,omitempty"`
	// Erased: the delivery is of a person erased from the store, and
	// keeps only what names no one ([Delivery.ErasedForm]).
	Erased bool              `json:"erased,omitempty"`
	Fields map[string]string `json:"fields"`
	Raw    string            `json:"raw,omitempty"` // bounded and redacted
	// Legacy is the key callrun gave the delivery before deliveries were
	// told by their call and event, when it differs from Key: a delivery
	// stored under it is this one, so Append stores it no more. It is
	// checked, never stored.
	Legacy string `json:"-"`
}

// ErasedForm returns d as it is kept of an erased person, with keys, the
// store's erasure keys (at least one): its key, when, its event, call id
// and path, Erased, and no fields, raw body or agent. Its key, hashed
// from the fields, which hold the number (whether or not it names its
// call), becomes its keyed hash under keys' first key, so that a retry of
// the delivery, erased the same way, is still found stored; a key
// erased already is kept.
func (d Delivery) ErasedForm(keys *ErasureKeys) (Delivery, error) {
	if keys == nil || len(keys.keys) == 0 {
		return Delivery{}, errors.New("erasing a delivery needs the store's erasure key")
	}
	e := Delivery{Key: d.Key, At: d.At, Event: d.Event, CallID: d.CallID, Via: d.Via, Erased: true, Fields: map[string]string{}, Legacy: d.Legacy}
	if !d.Erased {
		e.Key = deliveryKeyHash(keys.keys[0].key, d.Key)
	}
	return e, nil
}

// deliveryKeyHash is the keyed hash of a delivery's key: [NumberHash]'s
// form, under its own label, so that it never equals a number's hash.
func deliveryKeyHash(key []byte, k string) string {
	return hashPrefix + keyID(key) + ":" + base64.RawURLEncoding.EncodeToString(keyedMAC(key, "callrun delivery key\x00", k))
}

// Deliveries is where `callrun listen` stores a campaign's deliveries:
// the append-only deliveries file of its state directory ([OpenDeliveries],
// one listen at a time), or the deliveries table of its PostgreSQL
// database ([Postgres.OpenDeliveries], any number of listens at once).
// Its methods are safe for concurrent use.
//
// Deliveries stored at once share one commit (group commit): a writer
// goroutine takes every delivery waiting, writes them with one write and
// one fsync (or one INSERT), and only then releases their callers. A busy
// listen so costs one fsync for many deliveries, and each caller is
// answered only once the commit that holds its delivery is durable. A
// file has one writer, which appends in order; a table several, whose
// INSERTs the database runs side by side while the next batch gathers.
type Deliveries struct {
	where string // for errors
	sink  deliverySink
	gc    *groupCommit[deliveryBatch]

	mu      sync.Mutex
	pending map[string]*commitBatch[deliveryBatch] // keys waiting or being committed, by batch
	known   *deliveryKeys                          // the file's keys, all stored; nil for a table, whose key decides
	closed  bool
	// numbers reads the numbers of a delivery's fields, for its commit
	// to find whether its person is erased; nil: none is looked for.
	numbers func(fields map[string]string) []string
}

// deliverySink is where a [Deliveries] commits its batches: a file or a
// PostgreSQL table.
type deliverySink interface {
	// commit stores the batch's deliveries durably (keys distinct, none
	// known to be stored) and says of each whether it was new, or fails
	// with none of them to be counted on.
	commit(b *deliveryBatch) error
	close() error
}

// deliveryBatch is the deliveries written by one commit.
type deliveryBatch struct {
	ds    []Delivery
	lines [][]byte // each delivery's JSON line, with its newline
	isNew []bool   // set by commit
	// numbers reads a delivery's numbers ([Deliveries.ReadNumbersWith]);
	// nil: none are read, and none erased.
	numbers func(fields map[string]string) []string
}

// erase turns the batch's delivery i into its erased form, line too.
func (b *deliveryBatch) erase(i int, keys *ErasureKeys) error {
	e, err := b.ds[i].ErasedForm(keys)
	if err != nil {
		return err
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b.ds[i], b.lines[i] = e, append(line, '\n')
	return nil
}

// newDeliveries returns deliveries committed to k by writers goroutines
// (1 for a file, whose lines go in order).
func newDeliveries(where string, k deliverySink, known *deliveryKeys, writers int) *Deliveries {
	w := &Deliveries{
		where:   where,
		sink:    k,
		pending: map[string]*commitBatch[deliveryBatch]{},
		known:   known,
	}
	w.gc = newGroupCommit(w.commit, false, 0, writers)
	return w
}

// ReadNumbersWith has the store read the numbers of a delivery with fn (campaign's File.DeliveryNumbers), to commit
// the delivery of a person in its erased set in the erased form; it
// reads them only while the store has erased anyone. Call it before the
// first Append.
func (w *Deliveries) ReadNumbersWith(fn func(fields map[string]string) []string) { w.numbers = fn }

// Append stores d durably unless a delivery of the same key, or of its
// legacy key, is stored already, and reports whether it was new, with
// the form it was stored in (erased, when its person is in the store's
// erased set). Only after it returns nil may listen
// acknowledge the delivery. A delivery whose key is being stored by
// another caller at the same moment waits for that commit, and is a
// duplicate once it is durable.
func (w *Deliveries) Append(d Delivery) (Delivery, bool, error) {
	if d.Key == "" {
		return d, false, errors.New("a delivery needs its key")
	}
	line, err := json.Marshal(d)
	if err != nil {
		return d, false, err
	}
	line = append(line, '\n')
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return d, false, os.ErrClosed
	}
	if w.known != nil {
		stored, err := w.known.has(d.Key, d.Legacy)
		if err != nil || stored {
			w.mu.Unlock()
			return d, false, err
		}
	}
	if b, ok := w.pending[d.Key]; ok {
		w.mu.Unlock()
		<-b.done
		return d, false, b.err
	}
	b, i, err := w.gc.queue(true, func(b *deliveryBatch) (int, error) {
		b.ds = append(b.ds, d)
		b.lines = append(b.lines, line)
		return len(b.ds) - 1, nil
	})
	if err == nil {
		w.pending[d.Key] = b
	}
	w.mu.Unlock()
	if err != nil {
		return d, false, err
	}
	if err := w.gc.wait(b); err != nil {
		return d, false, err
	}
	return b.data.ds[i], b.data.isNew[i], nil
}

// commit has the sink commit one batch, on a writer goroutine, and
// forgets its keys as pending (a file's sink has noted them as known).
func (w *Deliveries) commit(b *deliveryBatch) error {
	b.isNew = make([]bool, len(b.ds))
	b.numbers = w.numbers
	keys := make([]string, len(b.ds)) // as queued: a table's commit may erase a delivery's
	for i, d := range b.ds {
		keys[i] = d.Key
	}
	err := w.sink.commit(b)
	w.mu.Lock()
	for _, k := range keys {
		delete(w.pending, k)
	}
	w.mu.Unlock()
	return err
}

// DeliveriesErasedFile is where listen says, in a state directory, how
// far into the store's erased set it has erased the deliveries file it
// holds: the length of the set's file, in bytes, as text. `callrun
// erase` waits for it while listen holds the file.
const DeliveriesErasedFile = "deliveries.erased"

// EraseStored rewrites the deliveries file that listen holds when people
// were added to the store's erased set since it last looked: each stored
// delivery of theirs in its erased form, by the durable replace, between
// two commits; then it reopens the file and its key index and writes
// [DeliveriesErasedFile]. It reports how many it erased. A table's
// deliveries are erased by `callrun erase` itself: it does nothing.
func (w *Deliveries) EraseStored() (int, error) {
	k, ok := w.sink.(*fileDeliveries)
	if !ok || k.erasure == nil || w.numbers == nil {
		return 0, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := k.eraseStored(w.numbers)
	w.known = k.keys
	return n, err
}

// eraseStored is EraseStored's rewrite, under the file's lock (listen's)
// and k.mu.
func (k *fileDeliveries) eraseStored(numbers func(map[string]string) []string) (int, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gone != nil {
		return 0, k.gone
	}
	keys, upTo, err := k.erasure.held()
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(k.path)
	req, read, err := readEraseRequests(dir)
	if err != nil || upTo <= k.erasedUpTo && req == nil {
		return 0, err
	}
	if req != nil && keys == nil { // a retention's, with nobody in the erased set
		if keys, err = k.erasure.Keys(context.Background()); err != nil {
			return 0, err
		}
	}
	n := 0
	if keys != nil {
		n, err = k.rewrite(numbers, keys, func(callID string, ns []string) (bool, error) {
			if req.has(callID, ns, keys) {
				return true, nil
			}
			on, err := k.erasure.OnErased(context.Background(), ns)
			return len(on) > 0, err
		})
		if err != nil {
			return 0, err
		}
	}
	if err := durable.WriteFile(filepath.Join(dir, DeliveriesErasedFile), []byte(strconv.FormatInt(upTo, 10)+"\n"), private.FileMode(dir)); err != nil {
		return n, fmt.Errorf("writing %s: %w", filepath.Join(dir, DeliveriesErasedFile), err)
	}
	k.erasedUpTo = upTo
	for _, path := range read { // those it read: one written since waits for the next look
		if err := os.Remove(path); err != nil {
			return n, err
		}
	}
	return n, nil
}

// EraseRequestFile begins the names of the files that say, in a state
// directory, whom an erase or a retention is erasing, for the listen
// that holds the deliveries file there: the keyed hashes of their
// numbers and the ids of their calls, never a number. Each erase writes
// its own (the name goes on with a random part); that listen erases
// their deliveries with the erased set's people, then removes the
// requests it read; the erase waits for its own to go.
const EraseRequestFile = "deliveries.erase."

// eraseRequest is an [EraseRequestFile].
type eraseRequest struct {
	Hashes []string `json:"hashes"` // keyed hashes of the numbers, under the store's first key
	Calls  []string `json:"calls"`
	hashes map[string]bool
	calls  map[string]bool
}

// has reports whether a delivery naming callID, whose fields hold
// numbers, is of the people req names. A nil req names nobody.
func (req *eraseRequest) has(callID string, numbers []string, keys *ErasureKeys) bool {
	if req == nil {
		return false
	}
	if req.calls[callID] {
		return true
	}
	for _, n := range numbers {
		if h := keys.Hashes(n); len(h) > 0 && req.hashes[h[0]] {
			return true
		}
	}
	return false
}

// readEraseRequests reads dir's requests ([EraseRequestFile]) as one,
// and the paths it read; nil when there is none.
func readEraseRequests(dir string) (*eraseRequest, []string, error) {
	paths, err := filepath.Glob(filepath.Join(dir, EraseRequestFile+"*"))
	if err != nil || len(paths) == 0 {
		return nil, nil, err
	}
	var all eraseRequest
	for _, path := range paths {
		var req eraseRequest
		b, err := os.ReadFile(path)
		if err == nil {
			err = json.Unmarshal(b, &req)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading %s: %w", path, err)
		}
		all.Hashes = append(all.Hashes, req.Hashes...)
		all.Calls = append(all.Calls, req.Calls...)
	}
	all.hashes, all.calls = numberSet(all.Hashes), numberSet(all.Calls)
	return &all, paths, nil
}

// rewrite replaces each stored delivery not erased whose numbers (as
// numbers reads its fields) erase says to erase by its erased form under
// keys, by the durable replace, and reopens the file and its key index.
// The caller holds k.mu.
func (k *fileDeliveries) rewrite(numbers func(map[string]string) []string, keys *ErasureKeys, erase func(callID string, numbers []string) (bool, error)) (int, error) {
	// The file and its index are closed before the replace (a file open
	// here cannot be replaced on Windows) and opened again after it,
	// replaced or not; one that cannot be acknowledges nothing more.
	closed := false
	defer func() {
		if !closed {
			return
		}
		nk, err := openDeliveriesFile(k.path)
		if err != nil {
			k.gone = fmt.Errorf("%s: reopening it after erasing people from it: %w", k.path, err)
			return
		}
		k.f, k.fi, k.keys, k.size = nk.f, nk.fi, nk.keys, nk.size
	}()
	n, err := hashLines(k.path, func(line []byte) ([]byte, error) {
		return erasedLine(line, numbers, keys, erase)
	}, EraseOptions{BeforeReplace: func() error {
		if k.beforeErase != nil {
			if err := k.beforeErase(); err != nil {
				return err
			}
		}
		closed = true
		return errors.Join(k.keys.close(), k.f.Close())
	}})
	if err != nil {
		return 0, fmt.Errorf("erasing people from %s: %w", k.path, err)
	}
	return n, nil
}

// Close stores the deliveries already appended, then closes the file
// (releasing its lock) or lets the table be.
func (w *Deliveries) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	w.gc.close() //nolint:errcheck // not sticky: no error to return
	return w.sink.close()
}

// String says where the deliveries are stored.
func (w *Deliveries) String() string { return w.where }

// OpenDeliveries takes the deliveries lock of state directory dir, cuts a
// torn last line (a delivery whose write a crash interrupted was never
// acknowledged), opens the index of the keys already stored
// ([DeliveryKeysFile]; reading only the deliveries stored after those it
// covers, or rebuilding it when it is missing or does not match the file)
// and opens the file for appending. It fails at once, wrapping
// [ErrDeliveriesLocked], if another process holds the lock.
func OpenDeliveries(dir string) (*Deliveries, error) { return openDeliveries(dir, nil) }

// openDeliveries is OpenDeliveries, committing a delivery of a person in
// erasure's set in its erased form (nil: none is looked for).
func openDeliveries(dir string, erasure *ErasureFile) (*Deliveries, error) {
	if err := makeDir(dir); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	fl, err := lockDeliveries(dir)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, DeliveriesFile)
	k, err := openDeliveriesFile(path)
	if err != nil {
		fl.Unlock()
		return nil, err
	}
	k.fl, k.erasure = fl, erasure
	return newDeliveries(path, k, k.keys, 1), nil
}

// lockDeliveries takes the deliveries lock of state directory dir, or
// fails at once, wrapping [ErrDeliveriesLocked], if another process
// holds it.
func lockDeliveries(dir string) (*flock.Flock, error) {
	fl, err := lockFile(dir, DeliveriesLock)
	if err != nil {
		return nil, err
	}
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", filepath.Join(dir, DeliveriesLock), err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrDeliveriesLocked, dir)
	}
	return fl, nil
}

// fileDeliveries commits batches to the deliveries file: one write and
// one fsync a batch.
type fileDeliveries struct {
	path string
	f    *os.File
	fi   os.FileInfo // f's, to tell whether the file at path is still f
	fl   *flock.Flock
	keys *deliveryKeys
	size int64 // the file's length: where the next batch goes
	buf  []byte
	gone error // set once the file at path is no longer f: every commit fails
	// erasure is the store's erased set: a delivery of a person in it is
	// committed in its erased form. nil: none is looked for.
	erasure *ErasureFile
	// erasedUpTo is how far into the erased set's file the deliveries
	// stored were erased (EraseStored).
	erasedUpTo int64
	// mu keeps a commit and EraseStored's rewrite apart.
	mu sync.Mutex
	// beforeErase, if set, runs before EraseStored's rewrite replaces
	// the file; an error from it stops the rewrite there, as a crash
	// would. Tests use it.
	beforeErase func() error
	// beforeSync, if set, runs before each fsync; an error from it fails
	// the commit as a failed fsync would. Tests use it.
	beforeSync func() error
}

// ErrDeliveriesGone is what a commit of deliveries wraps once the
// deliveries file listen opened was removed, or replaced by another at
// its path: a delivery written there could be lost with it, so none is
// acknowledged until listen opens the file at the path again.
var ErrDeliveriesGone = errors.New("the deliveries file was removed or replaced while listen held it open; restart listen to store deliveries again")

// openDeliveriesFile opens the deliveries file at path and its key index,
// rebuilt if need be, and cuts a torn last line.
func openDeliveriesFile(path string) (*fileDeliveries, error) {
	f, err := openOrCreate(filepath.Dir(path), path)
	if err != nil {
		return nil, err
	}
	k, err := openDeliveryIndex(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return k, nil
}

// openDeliveryIndex opens the key index of deliveries file f at path,
// reads the keys of the deliveries after those it covers (rebuilding it
// from them all when it does not match f) and cuts f's torn last line.
func openDeliveryIndex(path string, f *os.File) (*fileDeliveries, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	keysPath := filepath.Join(filepath.Dir(path), DeliveryKeysFile)
	// Under the lock, no index is being written: a temporary file of one
	// is a killed listen's.
	if err := removeTemps(filepath.Dir(path), DeliveryKeysFile, 0, time.Time{}); err != nil {
		return nil, err
	}
	keys, covers, err := openDeliveryKeys(keysPath, f, fi.Size())
	if err != nil {
		return nil, err
	}
	// Rebuilding, the keys are sorted and merged into the index a chunk
	// at a time: memory is bounded however many the file holds.
	rebuild := keys.f == nil
	var chunk []keyRecord
	if rebuild {
		chunk = make([]keyRecord, 0, deliveryKeyChunk) // grown, it would be copied
	}
	merge := func(covers int64) error {
		sortRecords(chunk)
		err := keys.merge(f, covers, chunk)
		chunk = chunk[:0]
		return err
	}
	// Only the keys are read (a line torn by a crash, never acknowledged,
	// is not): they are all listen keeps of deliveries that may carry
	// transcripts. A line that has none is an error naming the file and
	// where the line starts.
	good, err := eachLine(f, covers, 1<<62, func(line []byte, at int64) error {
		key, ok := lineKey(line)
		if !ok {
			return fmt.Errorf("%s: the line at byte %d is not a delivery", path, at)
		}
		if !rebuild {
			keys.add(key)
		} else if chunk = append(chunk, recordOf(key)); len(chunk) == deliveryKeyChunk {
			return merge(at + int64(len(line)))
		}
		return nil
	})
	if err == nil {
		err = cutTail(f, good)
	}
	switch {
	case err != nil:
	case rebuild:
		err = merge(good)
	case len(keys.recent) > deliveryKeyRecent:
		err = keys.write(f, good)
	}
	if err != nil {
		keys.close()
		return nil, err
	}
	return &fileDeliveries{path: path, f: f, fi: fi, keys: keys, size: good}, nil
}

func (k *fileDeliveries) commit(b *deliveryBatch) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.gone != nil {
		return k.gone
	}
	if err := k.eraseErased(b); err != nil {
		return fmt.Errorf("looking for the deliveries' numbers in the %s: %w", k.erasure, err)
	}
	k.buf = k.buf[:0]
	for _, l := range b.lines {
		k.buf = append(k.buf, l...) // nil: a duplicate found erased
	}
	// Not known to be durable, a failed write is cut: never acknowledged,
	// the service's retries store it again.
	if err := writeSynced(k.f, k.buf, k.size, k.beforeSync); err != nil {
		return fmt.Errorf("writing %s: %w", k.path, err)
	}
	// Durable in the file listen holds, but acknowledged only if that is
	// still the file at the path, where report and a restarted listen
	// read.
	if fi, err := os.Stat(k.path); err != nil || !os.SameFile(fi, k.fi) {
		k.gone = fmt.Errorf("%s: %w", k.path, ErrDeliveriesGone)
		return k.gone
	}
	k.size += int64(len(k.buf))
	keys := make([]string, 0, len(b.ds))
	for i, d := range b.ds {
		if b.lines[i] != nil {
			keys = append(keys, d.Key)
			b.isNew[i] = true
		}
	}
	if k.keys.add(keys...) {
		return k.keys.write(k.f, k.size)
	}
	return nil
}

// eraseErased turns into its erased form each delivery of the batch a
// number of which the erased set holds now; while the set holds nobody
// (one stat when nothing was appended to it), no delivery's numbers are
// read. A set it cannot read (its key missing) fails the commit: nothing
// is stored, nothing acknowledged.
func (k *fileDeliveries) eraseErased(b *deliveryBatch) error {
	if k.erasure == nil || b.numbers == nil {
		return nil
	}
	keys, _, err := k.erasure.held()
	if err != nil || keys == nil {
		return err
	}
	numbers := make([][]string, len(b.ds))
	var all []string
	for i, d := range b.ds {
		if !d.Erased {
			numbers[i] = b.numbers(d.Fields)
		}
		all = append(all, numbers[i]...)
	}
	on, err := k.erasure.OnErased(context.Background(), all)
	if err != nil || len(on) == 0 {
		return err
	}
	for i, d := range b.ds {
		if d.Erased || !slices.ContainsFunc(numbers[i], func(n string) bool { return on[n] }) {
			continue
		}
		if err := b.erase(i, keys); err != nil {
			return err
		}
		// A retry of a delivery stored erased already: its key is the
		// erased one, which the file holds.
		if stored, err := k.keys.has(b.ds[i].Key); err != nil || stored {
			b.lines[i] = nil
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *fileDeliveries) close() error {
	err := errors.Join(k.keys.close(), k.f.Close())
	if k.fl != nil {
		err = errors.Join(err, k.fl.Unlock())
	}
	return err
}

// ReadDeliveries returns the deliveries stored in state directory dir, in
// the order they were stored, without the lock: for the report while
// listen may be appending. A torn last line is ignored; a missing file
// holds none.
func ReadDeliveries(dir string) ([]Delivery, error) {
	var out []Delivery
	seen := map[string]bool{}
	if err := EachDelivery(dir, func(d Delivery) error {
		if !seen[d.Key] {
			seen[d.Key] = true
			out = append(out, d)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// EachDelivery calls fn with each delivery stored in state directory
// dir, in the order they were stored (a line written twice, twice), one
// at a time, without the lock; fn's first error ends it (the rest of the
// file is read, and not given to fn). A torn last line is ignored; a
// missing file holds none.
func EachDelivery(dir string, fn func(Delivery) error) error {
	var ferr error
	fl := deliveryLines(filepath.Join(dir, DeliveriesFile))
	if _, err := fl.read(nil, func() {}, func(d Delivery, _ int64) {
		if ferr == nil {
			ferr = fn(d)
		}
	}); err != nil {
		return err
	}
	return ferr
}

// LastDeliveryAt returns when listen received the last delivery whose
// whole line is in the deliveries file of state directory dir, reading
// the file back from its end to that line alone; zero when it holds none.
func LastDeliveryAt(dir string) (time.Time, error) {
	path := filepath.Join(dir, DeliveriesFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return time.Time{}, err
	}
	line, start, err := lastLine(f, fi.Size())
	if err != nil || line == nil {
		return time.Time{}, err
	}
	var d struct {
		At time.Time `json:"at"`
	}
	if err := json.Unmarshal(line, &d); err != nil {
		return time.Time{}, fmt.Errorf("%s: the line at byte %d is not a delivery", path, start)
	}
	return d.At, nil
}

// lastLine returns the last whole line of f, size bytes long, and where
// it starts, reading back from the end a block at a time (a line torn by
// a crash, after the last newline, is not whole); nil when there is none.
func lastLine(f io.ReaderAt, size int64) ([]byte, int64, error) {
	var tail []byte
	for end := size; end > 0; {
		from := max(0, end-64<<10)
		b := make([]byte, end-from)
		if _, err := f.ReadAt(b, from); err != nil {
			return nil, 0, err
		}
		tail, end = append(b, tail...), from
		if last := bytes.LastIndexByte(tail, '\n'); last >= 0 {
			if start := bytes.LastIndexByte(tail[:last], '\n'); start >= 0 || end == 0 {
				return tail[start+1 : last+1], end + int64(start+1), nil
			}
		}
	}
	return nil, 0, nil
}

// deliveryLines follows the deliveries file at path.
func deliveryLines(path string) follower[Delivery] {
	return follower[Delivery]{path: path, what: "a delivery", valid: func(d *Delivery) bool { return d.Key != "" }}
}

// DeliveriesTail follows the deliveries file of a state directory as
// another process (`callrun listen`) appends to it: a run reads through
// it the deliveries stored while it runs, without the deliveries lock.
// Each Next reads only what was appended since the last. Its methods are
// not safe for concurrent use.
type DeliveriesTail struct{ lines follower[Delivery] }

// TailDeliveries returns a tail of the deliveries file of state directory
// dir that begins at its end now: its first Next returns the deliveries
// stored after this call (a line being written as it begins is skipped).
// A missing file is followed from its creation.
func TailDeliveries(dir string) (*DeliveriesTail, error) {
	path := filepath.Join(dir, DeliveriesFile)
	t := &DeliveriesTail{deliveryLines(path)}
	t.lines.tail = true
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err == nil {
		err = t.lines.seekEnd(f, fi.Size())
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Next returns the deliveries whose whole lines were appended since the
// last Next (or since the tail began), in the order they were stored. A
// line not yet whole is left for a later Next. When listen cut a torn
// line as it started again, or the file was replaced, what is there now
// was read, but for what comes after.
func (t *DeliveriesTail) Next() ([]Delivery, error) {
	var out []Delivery
	_, err := t.lines.read(nil, nil, func(d Delivery, _ int64) { out = append(out, d) })
	return out, err
}

// deliveryReader reads a campaign's stored deliveries back: the file of
// its state directory, or its rows of the deliveries table.
type deliveryReader interface {
	ReadDeliveries(ctx context.Context) ([]Delivery, error)
}

// Deliveries returns the deliveries stored beside the journal the State
// was read from, in the same store, in the order they were stored: for
// the report, which matches them to the contacts. A State of a journal
// file reads the deliveries file of the campaign's state directory (for a
// shard, the campaign's, which its shards share).
func (s *State) Deliveries(ctx context.Context) ([]Delivery, error) {
	if s.deliveries == nil {
		return nil, nil
	}
	return s.deliveries.ReadDeliveries(ctx)
}

// DeliveryEraseOptions tune [Files.EraseDeliveries] and
// [Postgres.EraseDeliveries].
type DeliveryEraseOptions struct {
	// Keys are the store's erasure keys: a key hashed from a delivery's
	// fields becomes its keyed hash under the first. Required.
	Keys *ErasureKeys
	// Numbers returns the E.164 numbers a delivery's fields hold, as
	// listen's intake reads them (campaign's File.DeliveryNumbers).
	// Required.
	Numbers func(fields map[string]string) []string
	// BeforeReplace and AfterReplace, if set, run once the new deliveries
	// are written and before they replace the old (in PostgreSQL, before
	// the transaction commits), and once they have; an error from either
	// stops the erase there, as a crash would. Tests use them.
	BeforeReplace, AfterReplace func() error
	// Wait bounds how long a file's erase waits for the listen that
	// holds it to erase them itself ([Deliveries.EraseStored]); 0: 30 s.
	Wait time.Duration
	// ByListen, if set, is called when the listen holding the file
	// erased them.
	ByListen func()
	// CallIDs are the calls of the people ([CallIDsOf]): a delivery that
	// names one is theirs though its fields hold no number of theirs.
	CallIDs map[string]bool
}

// numberSet returns numbers as a set.
func numberSet(numbers []string) map[string]bool {
	set := make(map[string]bool, len(numbers))
	for _, n := range numbers {
		set[n] = true
	}
	return set
}

// eraseDelivery returns line's delivery in its erased form under keys,
// when it is not erased already and match says it is of the people
// erased: by the call it names, or the numbers its fields hold (as
// numbers reads them).
func eraseDelivery(line []byte, numbers func(map[string]string) []string, keys *ErasureKeys, match func(callID string, numbers []string) (bool, error)) (Delivery, bool, error) {
	var d Delivery
	if err := json.Unmarshal(line, &d); err != nil {
		return d, false, fmt.Errorf("not a delivery: %w", err)
	}
	if d.Erased {
		return d, false, nil
	}
	if yes, err := match(d.CallID, numbers(d.Fields)); err != nil || !yes {
		return d, false, err
	}
	e, err := d.ErasedForm(keys)
	return e, err == nil, err
}

// match says whether a delivery naming callID, whose fields hold
// numbers, is of people: one of opts.CallIDs, or one of people's numbers.
func (opts DeliveryEraseOptions) match(people []string) func(callID string, numbers []string) (bool, error) {
	want := numberSet(people)
	return func(callID string, numbers []string) (bool, error) {
		return opts.CallIDs[callID] || slices.ContainsFunc(numbers, func(n string) bool { return want[n] }), nil
	}
}

// erasedLine is eraseDelivery for hashLines: the erased form's line, or
// nil to keep the line as it is.
func erasedLine(line []byte, numbers func(map[string]string) []string, keys *ErasureKeys, match func(string, []string) (bool, error)) ([]byte, error) {
	e, hit, err := eraseDelivery(line, numbers, keys, match)
	if err != nil || !hit {
		return nil, err
	}
	return json.Marshal(e)
}

// EraseDeliveries replaces, in the campaign's deliveries file, each
// delivery that holds one of numbers (E.164, as opts.Numbers reads a
// delivery's fields) by its erased form ([Delivery.ErasedForm]), and
// returns how many it replaced. It takes the deliveries lock; while a
// listen holds it, it asks that listen ([EraseRequestFile]) and waits
// (opts.Wait) for it to erase them itself ([Deliveries.EraseStored]),
// and otherwise fails wrapping [ErrDeliveriesLocked]. It replaces the
// file whole by the durable replace (a crash leaves the old file or the
// new one), then deletes the key index, which the next
// listen rebuilds. A file that holds none of the numbers is left as it
// is, so erasing again changes nothing. A missing file holds nobody.
func (s Files) EraseDeliveries(ctx context.Context, numbers []string, opts DeliveryEraseOptions) (int, error) {
	dir := s.top()
	path := filepath.Join(dir, DeliveriesFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if opts.Numbers == nil || opts.Keys == nil {
		return 0, fmt.Errorf("erasing people from %s: no erasure key, or no reading of a delivery's numbers", path)
	}
	n, err := eraseDeliveriesFile(dir, path, numbers, opts)
	if errors.Is(err, ErrDeliveriesLocked) {
		req := eraseRequest{Calls: slices.Sorted(maps.Keys(opts.CallIDs))}
		for _, n := range numbers {
			req.Hashes = append(req.Hashes, opts.Keys.Hashes(n)[0])
		}
		b, _ := json.Marshal(req)
		mine := filepath.Join(dir, EraseRequestFile+randomSuffix())
		if err := durable.WriteFile(mine, b, private.FileMode(dir)); err != nil {
			return 0, fmt.Errorf("erasing people from %s: %w", path, err)
		}
		n, err = s.waitForListen(ctx, mine, func() (int, error) { return eraseDeliveriesFile(dir, path, numbers, opts) }, opts)
		if rerr := os.Remove(mine); err == nil && rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = rerr
		}
	}
	if err != nil {
		return n, fmt.Errorf("erasing people from %s: %w", path, err)
	}
	return n, nil
}

// waitForListen waits, up to opts.Wait, for the listen that holds the
// campaign's deliveries file to have erased it as far as the store's
// erased set reaches now ([DeliveriesErasedFile]) and removed the
// request mine; or for the file's lock to come free (it was another
// erase's, or listen stopped), when rewrite erases them itself.
func (s Files) waitForListen(ctx context.Context, mine string, rewrite func() (int, error), opts DeliveryEraseOptions) (int, error) {
	home, err := s.listHome()
	if err != nil {
		return 0, err
	}
	var size int64 // the erased set's length: 0, none erased
	if fi, err := os.Stat(filepath.Join(home, ErasedFileName)); err == nil {
		size = fi.Size()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	wait := cmp.Or(opts.Wait, 30*time.Second)
	ack := filepath.Join(s.top(), DeliveriesErasedFile)
	deadline := time.Now().Add(wait)
	for {
		b, err := os.ReadFile(ack)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return 0, err
		}
		_, gone := os.Stat(mine)
		if upTo, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64); err == nil && upTo >= size && errors.Is(gone, fs.ErrNotExist) {
			if opts.ByListen != nil {
				opts.ByListen()
			}
			return 0, nil
		}
		if n, err := rewrite(); !errors.Is(err, ErrDeliveriesLocked) {
			return n, err
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%w: %s, and it has not erased them in %s; a running listen erases them within seconds: run erase again (or stop listen first)", ErrDeliveriesLocked, s.top(), wait)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// randomSuffix is a random name part, for an erase's request.
func randomSuffix() string {
	b := make([]byte, 8)
	rand.Read(b) //nolint:errcheck // crypto/rand does not fail
	return hex.EncodeToString(b)
}

// eraseDeliveriesFile is EraseDeliveries' rewrite of the deliveries file
// at path, in state directory dir.
func eraseDeliveriesFile(dir, path string, numbers []string, opts DeliveryEraseOptions) (int, error) {
	fl, err := lockDeliveries(dir)
	if err != nil {
		return 0, err
	}
	defer fl.Unlock()
	match := opts.match(numbers)
	n, err := hashLines(path, func(line []byte) ([]byte, error) {
		return erasedLine(line, opts.Numbers, opts.Keys, match)
	}, EraseOptions{BeforeReplace: opts.BeforeReplace})
	if err != nil || n == 0 {
		return n, err
	}
	// The index's keys are the old file's: listen rebuilds it.
	if err := os.Remove(filepath.Join(dir, DeliveryKeysFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return n, err
	}
	if opts.AfterReplace != nil {
		if err := opts.AfterReplace(); err != nil {
			return n, err
		}
	}
	return n, nil
}
