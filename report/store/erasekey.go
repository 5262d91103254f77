package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
)

// ErasureStore is what a store keeps of the people erased from it: the
// keys of its keyed hashes ([NumberHash]) and the erased set, the hashes
// of the people erased, so that what arrives about them after the erase
// (a late delivery, a sheet's row read again) is not stored in clear.
// With files both are in [Home] (a rehearsal's in its sandbox directory);
// with PostgreSQL, in tables of the database. Its methods are safe for
// concurrent use, and several processes may use one at once.
type ErasureStore interface {
	// Keys returns the store's keys as they are now, never making one:
	// none (Hashes nil) before the store's first erase.
	Keys(ctx context.Context) (*ErasureKeys, error)
	// MakeKey returns the store's keys, first making one, durably, when
	// the store holds none: for an erase. Two processes that make the
	// first key at once make one.
	MakeKey(ctx context.Context) (*ErasureKeys, error)
	// AddErased adds people to the erased set durably before it returns,
	// skipping a hash the set holds already; it returns the entries it
	// wrote. A hash whose key the store does not hold is refused.
	AddErased(ctx context.Context, erased []ErasedEntry) ([]ErasedEntry, error)
	// OnErased returns which of the E.164 numbers are in the erased set
	// now (each true). A set that holds a hash whose key the store lacks
	// is an error wrapping [ErrErasureKeyMissing]: nobody can be told
	// apart from the erased then.
	OnErased(ctx context.Context, numbers []string) (map[string]bool, error)
	// ErasedEntries returns the whole erased set, oldest first (those
	// of one time in any order), for `state push`.
	ErasedEntries(ctx context.Context) ([]ErasedEntry, error)
	// String says where the erased set is, for people.
	String() string
}

// ErasedEntry is one person in the erased set: the keyed hash of their number,
// when they were erased, whether they may still be called
// (`erase --allow-contact`: only their data was to go), and why: "erase"
// or "retention". It holds no number.
type ErasedEntry struct {
	Hash         string    `json:"hash"`
	At           time.Time `json:"at"`
	AllowContact bool      `json:"allow_contact"`
	Why          string    `json:"why"`
}

// check says what is wrong with an entry given to AddErased, if anything.
func (e ErasedEntry) check() error {
	if _, _, ok := splitHash(e.Hash); !ok {
		return errors.New("an erased person's entry needs a keyed hash of their number (h1:KEY:MAC)")
	}
	if e.Why != "erase" && e.Why != "retention" {
		return fmt.Errorf("an erased person's entry says why as %q; want erase or retention", e.Why)
	}
	return nil
}

// ErasureKeys are the keys of a store's keyed hashes: normally one, made
// by the store's first erase; more where `state push` brought the files'
// key into a database that had its own. A key is never replaced, as a
// hash cannot be made again without its number. A nil *ErasureKeys holds
// none. Printed, it names its keys' ids and where they are kept, never
// the keys themselves.
type ErasureKeys struct {
	where string // where the keys are kept, for errors: the key file, or the table
	keys  []erasureKey
}

// erasureKey is one key of a store, as its file or table holds it.
type erasureKey struct {
	id  string
	key []byte
	at  time.Time
}

// Hashes returns the keyed hash of the E.164 number under each key the
// store holds, oldest key first; nil when it holds none.
func (k *ErasureKeys) Hashes(e164 string) []string {
	if k == nil || len(k.keys) == 0 {
		return nil
	}
	out := make([]string, len(k.keys))
	for i, key := range k.keys {
		out[i] = NumberHash(key.key, e164)
	}
	return out
}

// ids returns the keys' ids, oldest key first; none (not nil, which a
// query would read as NULL) when k is nil.
func (k *ErasureKeys) ids() []string {
	if k == nil {
		return []string{}
	}
	out := make([]string, len(k.keys))
	for i, key := range k.keys {
		out[i] = key.id
	}
	return out
}

// Has reports whether the key whose id is id is loaded.
func (k *ErasureKeys) Has(id string) bool {
	if k == nil {
		return false
	}
	for _, key := range k.keys {
		if key.id == id {
			return true
		}
	}
	return false
}

// String names the keys' ids and where they are kept.
func (k ErasureKeys) String() string {
	ids := make([]string, len(k.keys))
	for i, key := range k.keys {
		ids[i] = key.id
	}
	return fmt.Sprintf("erasure keys [%s] in %s", strings.Join(ids, " "), k.where)
}

// GoString is String: %#v never prints the keys either.
func (k ErasureKeys) GoString() string { return k.String() }

// macPrefixes returns the first 8 bytes of the number's MAC under each
// key: what the erased set keeps in memory.
func (k *ErasureKeys) macPrefixes(e164 string) []uint64 {
	out := make([]uint64, len(k.keys))
	for i, key := range k.keys {
		out[i] = binary.BigEndian.Uint64(numberMAC(key.key, e164))
	}
	return out
}

// ErrErasureKeyMissing means that a store holds a keyed hash made with a
// key the store does not hold: it cannot tell whether a number is that
// erased person's, so nothing that decides whom to call may go on.
var ErrErasureKeyMissing = errors.New("the store's erasure key is missing")

// CheckHashKey returns nil when keys hold the key hash was made with, and
// else an error wrapping [ErrErasureKeyMissing] that names holder (the
// file and line, or the table, that holds the hash), where the keys are
// kept, and what to do. A hash not in [NumberHash]'s form is an error
// naming holder too. Every reader of keyed hashes checks each with it,
// so that a store restored without its key calls nobody.
func CheckHashKey(keys *ErasureKeys, hash, holder string) error {
	id, _, ok := splitHash(hash)
	if !ok {
		return fmt.Errorf("%s holds something that is not a keyed hash of a number (h1:KEY:MAC)", holder)
	}
	if keys.Has(id) {
		return nil
	}
	return missingKey(keys, id, holder)
}

// missingKey is [CheckHashKey]'s error for a hash of key id that keys
// do not hold.
func missingKey(keys *ErasureKeys, id, holder string) error {
	where := "the store's erasure key"
	if keys != nil {
		where = keys.where
	}
	return fmt.Errorf("%w: %s holds an erased person's keyed hash made with erasure key %s, which %s does not hold: restore %s from the backup that holds the erased people's hashes (without the key callrun cannot tell who was erased, so it calls nobody)",
		ErrErasureKeyMissing, holder, id, where, where)
}

// File names of the erasure key and the erased set in [Home].
const (
	ErasureKeyFileName = "erasure.key"
	ErasedFileName     = "erased.jsonl"
)

// ErasureFile is the erasure key and the erased set in files, in a
// directory shared by every campaign on the machine ([Home]): the keys in
// ErasureKeyFileName, JSON, made by the first erase and never changed;
// the erased set in ErasedFileName, JSON Lines, only appended. Writers
// take the do-not-call list's lock (an erase changes the list too);
// readers take none, and read only what was appended since their last
// look, keeping the first 8 bytes of each hash's MAC in memory.
type ErasureFile struct {
	dir    string
	keyDir string // where the key file is: dir, or a rehearsal's Home

	mu     sync.Mutex
	keys   *ErasureKeys          // as read last; nil before the first read
	erased follower[ErasedEntry] // the erased set, read up to erased.off
	lines  int                   // lines of the set read
	set    map[uint64]bool       // the MAC prefixes of the hashes read
	// unkeyed are the ids of keys the hashes read were made with that
	// the keys lack, each with the first line that holds one.
	unkeyed map[string]int
}

var _ ErasureStore = (*ErasureFile)(nil)

// OpenErasureFile returns the erasure key and erased set kept in
// directory dir. Nothing is read or created before they are used.
func OpenErasureFile(dir string) *ErasureFile {
	return openErasureFile(dir, dir)
}

// openErasureFile returns the erased set kept in directory dir, whose
// key file is in keyDir.
func openErasureFile(dir, keyDir string) *ErasureFile {
	return &ErasureFile{dir: dir, keyDir: keyDir, set: map[uint64]bool{}, unkeyed: map[string]int{}, erased: erasedLines(filepath.Join(dir, ErasedFileName))}
}

// erasedLines follows the erased set's file at path.
func erasedLines(path string) follower[ErasedEntry] {
	return follower[ErasedEntry]{path: path, what: "an erased person's entry", valid: func(e *ErasedEntry) bool {
		_, _, ok := splitHash(e.Hash)
		return ok && e.Why != ""
	}}
}

func (f *ErasureFile) keyPath() string { return filepath.Join(f.keyDir, ErasureKeyFileName) }

func (f *ErasureFile) String() string { return "erased set " + f.erased.path }

// keyFile is the erasure key file's JSON.
type keyFile struct {
	Keys []keyFileKey `json:"keys"`
}

type keyFileKey struct {
	ID  string    `json:"id"`
	Key string    `json:"key"` // hex
	At  time.Time `json:"at"`
}

// Keys reads the key file; a file that is not there holds no key.
func (f *ErasureFile) Keys(context.Context) (*ErasureKeys, error) {
	return readKeyFile(f.keyPath())
}

// readKeyFile reads the erasure key file at path. Its errors never quote
// the file: it holds the keys.
func readKeyFile(path string) (*ErasureKeys, error) {
	k := &ErasureKeys{where: path}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return k, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the erasure key: %w", err)
	}
	var kf keyFile
	if err := json.Unmarshal(b, &kf); err != nil {
		where := ""
		if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
			where = fmt.Sprintf(" (at byte %d)", se.Offset)
		}
		return nil, fmt.Errorf("%s is not an erasure key file%s: restore it from a backup", path, where)
	}
	if len(kf.Keys) == 0 {
		return nil, fmt.Errorf("%s holds no key: restore it from a backup, or remove it if no erase was ever made", path)
	}
	for i, fk := range kf.Keys {
		key, err := hex.DecodeString(fk.Key)
		if err != nil || len(key) != sha256.Size || keyID(key) != fk.ID || fk.At.IsZero() {
			return nil, fmt.Errorf("%s: key %d is damaged (its id, its 32 bytes in hex or its time): restore the file from a backup", path, i+1)
		}
		k.keys = append(k.keys, erasureKey{id: fk.ID, key: key, at: fk.At})
	}
	return k, nil
}

// newKey makes a key of 32 random bytes.
func newKey(at time.Time) (erasureKey, error) {
	key := make([]byte, sha256.Size)
	if _, err := rand.Read(key); err != nil {
		return erasureKey{}, fmt.Errorf("making an erasure key: %w", err)
	}
	return erasureKey{id: keyID(key), key: key, at: at.UTC()}, nil
}

// MakeKey makes the key file, under the do-not-call list's lock, when it
// is not there: read again under the lock, so that two first erases at
// once make one key, and refused while the erased set holds hashes (whose
// key was lost: restored, it would be written over); written whole (a temporary file renamed over it,
// synced) with the mode of the files in the directory.
func (f *ErasureFile) MakeKey(ctx context.Context) (*ErasureKeys, error) {
	var keys *ErasureKeys
	err := withListLock(ctx, f.keyDir, "the erasure key's", func() error {
		var err error
		if keys, err = readKeyFile(f.keyPath()); err != nil || len(keys.keys) > 0 {
			return err
		}
		f.mu.Lock()
		f.keys = keys
		err = f.refresh() // an erased set whose key is lost: a new key would not read it
		f.mu.Unlock()
		if err != nil {
			return err
		}
		key, err := newKey(time.Now())
		if err != nil {
			return err
		}
		b, err := json.Marshal(keyFile{Keys: []keyFileKey{{ID: key.id, Key: hex.EncodeToString(key.key), At: key.at}}})
		if err != nil {
			return err
		}
		if err := durable.WriteFile(f.keyPath(), append(b, '\n'), private.FileMode(f.keyDir)); err != nil {
			return fmt.Errorf("writing the erasure key %s: %w", f.keyPath(), err)
		}
		keys.keys = []erasureKey{key}
		return nil
	})
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.keys = keys
	f.mu.Unlock()
	return keys, nil
}

// locked runs fn holding the do-not-call list's lock of f's directory,
// made if need be, waiting for another writer.
func (f *ErasureFile) locked(ctx context.Context, fn func() error) error {
	return withListLock(ctx, f.dir, "the erased set's", fn)
}

// refresh reads what was appended to the erased set since the last look,
// then checks that the keys hold the key of every hash read (the key file
// read again when they do not: another process may have made it since).
// The caller holds f.mu.
func (f *ErasureFile) refresh() error {
	if f.keys == nil {
		keys, err := readKeyFile(f.keyPath())
		if err != nil {
			return err
		}
		f.keys = keys
	}
	_, err := f.erased.read(nil, f.forget, func(e ErasedEntry, _ int64) {
		f.lines++
		id, prefix, _ := splitHash(e.Hash)
		f.set[prefix] = true
		if _, seen := f.unkeyed[id]; !seen && !f.keys.Has(id) {
			f.unkeyed[id] = f.lines
		}
	})
	if err != nil {
		return fmt.Errorf("reading the %s: %w", f, err)
	}
	if len(f.unkeyed) == 0 {
		return nil
	}
	keys, err := readKeyFile(f.keyPath())
	if err != nil {
		return err
	}
	f.keys = keys
	for id, line := range f.unkeyed {
		if !keys.Has(id) {
			return missingKey(keys, id, fmt.Sprintf("%s line %d", f.erased.path, line))
		}
		delete(f.unkeyed, id)
	}
	return nil
}

// forget drops what was read of the erased set, for it to be read again
// from its start. The caller holds f.mu.
func (f *ErasureFile) forget() {
	f.set, f.lines, f.unkeyed = map[uint64]bool{}, 0, map[string]int{}
}

// AddErased appends, under the do-not-call list's lock, the entries whose
// hash the set does not hold yet, and syncs them before it returns.
func (f *ErasureFile) AddErased(ctx context.Context, erased []ErasedEntry) ([]ErasedEntry, error) {
	var wrote []ErasedEntry
	err := f.locked(ctx, func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		keys, err := readKeyFile(f.keyPath()) // another process may have made it since
		if err != nil {
			return err
		}
		f.keys = keys
		if err := f.refresh(); err != nil {
			return err
		}
		var lines []any
		for _, e := range erased {
			if err := e.check(); err != nil {
				return err
			}
			if err := CheckHashKey(f.keys, e.Hash, "an erased person's entry to add"); err != nil {
				return err
			}
			_, prefix, _ := splitHash(e.Hash)
			if f.set[prefix] {
				continue
			}
			if e.At.IsZero() {
				e.At = time.Now()
			}
			e.At = e.At.UTC()
			f.set[prefix] = true
			wrote = append(wrote, e)
			lines = append(lines, e)
		}
		if len(lines) == 0 {
			return nil
		}
		if err := appendLines(f.dir, &f.erased, lines...); err != nil {
			return fmt.Errorf("writing the %s: %w", f, err)
		}
		f.lines += len(lines)
		return nil
	})
	if err != nil {
		// What the set was told of but did not write: read it all again.
		f.mu.Lock()
		f.erased.forget()
		f.forget()
		f.mu.Unlock()
		return nil, err
	}
	return wrote, nil
}

// OnErased reads what was appended to the set since the last look, then
// looks each number's MAC under each key up in memory.
func (f *ErasureFile) OnErased(_ context.Context, numbers []string) (map[string]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refresh(); err != nil {
		return nil, err
	}
	on := map[string]bool{}
	if len(f.set) == 0 {
		return on, nil
	}
	for _, n := range numbers {
		for _, p := range f.keys.macPrefixes(n) {
			if f.set[p] {
				on[n] = true
			}
		}
	}
	return on, nil
}

// held reads what was appended to the set since the last look, and
// returns the keys when the set holds anyone, nil when it holds nobody
// (a commit of deliveries reads their numbers only then), and the length
// of the set's file read.
func (f *ErasureFile) held() (*ErasureKeys, int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.refresh(); err != nil || len(f.set) == 0 {
		return nil, f.erased.off, err
	}
	return f.keys, f.erased.off, nil
}

// ErasedEntries reads the whole set.
func (f *ErasureFile) ErasedEntries(context.Context) ([]ErasedEntry, error) {
	var out []ErasedEntry
	fl := erasedLines(f.erased.path)
	if _, err := fl.read(nil, func() {}, func(e ErasedEntry, _ int64) { out = append(out, e) }); err != nil {
		return nil, fmt.Errorf("reading the %s: %w", f, err)
	}
	return out, nil
}
