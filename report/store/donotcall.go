package store

import (
	"bufio"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/callrun/callrun/report/private"
)

// ErrDoNotCall is what a journal's Append returns for an intent whose
// number is on the do-not-call list it was opened with
// ([JournalOptions.DoNotCall]): the intent was not written, and its call
// must not start.
var ErrDoNotCall = errors.New("the number is on the do-not-call list")

// DoNotCallEntry is one entry of a do-not-call list: a number put on it,
// or taken off it. Entries are never deleted: a removal is an entry of
// its own, and the list's history says who asked what, when. An
// erased person's entry holds their keyed hash ([NumberHash]) in Hash
// and no Number (nor Reason): older binaries refuse a line without a
// number, and stop rather than call.
type DoNotCallEntry struct {
	Number  string    `json:"number,omitempty"` // E.164
	Hash    string    `json:"hash,omitempty"`   // an erased person's keyed hash, in place of Number
	At      time.Time `json:"at"`
	Removed bool      `json:"removed,omitempty"` // a removal; else an addition
	// Source says where the entry came from: "delivery KEY of campaign
	// NAME" (an opt-out `callrun listen` received), "do_not_call column
	// "COL" of campaign NAME (sheet FILE, row N)" (a row of a sheet the
	// CRM flagged, put there by a run), "suppress add", "suppress
	// remove" or "import FILE".
	Source string `json:"source"`
	Reason string `json:"reason,omitempty"` // a removal's --reason
}

// DoNotCallList is the do-not-call list of a store, shared by every
// campaign on it: with files, one file in a directory shared by every
// campaign on the machine ([DoNotCallFile]); with PostgreSQL, a table of
// the database ([Postgres.DoNotCall]). `callrun listen` adds opt-outs to
// it, `callrun suppress` keeps it by hand, plan and the report read it,
// and a run checks it right before each call start. Its methods are safe
// for concurrent use, and several processes may use one list at once.
type DoNotCallList interface {
	// Add appends entries durably (written and synced, or committed)
	// before it returns, skipping an addition of a number already on the
	// list and a removal of one that is not; it returns the entries it
	// wrote.
	Add(ctx context.Context, entries []DoNotCallEntry) ([]DoNotCallEntry, error)
	// Import adds the entries next returns, batch after batch until it
	// returns none, as Add does; it returns how many it wrote. For
	// `callrun suppress import`, whose file may hold millions.
	Import(ctx context.Context, next func() ([]DoNotCallEntry, error)) (int, error)
	// Entries returns every entry, oldest first, for `state push`.
	Entries(ctx context.Context) ([]DoNotCallEntry, error)
	// Each calls fn with every entry, oldest first, or, current, with the
	// addition that put each number on the list now, in the list's
	// order, streamed: for `callrun suppress list` and export. An error
	// from fn stops it and is returned.
	Each(ctx context.Context, current bool, fn func(DoNotCallEntry) error) error
	// OnList returns which of numbers are on the list now (each true):
	// plan, run and the report ask for their campaign's numbers, so
	// that what they hold follows the campaign, not the list.
	OnList(ctx context.Context, numbers []string) (map[string]bool, error)
	// NumbersUpTo returns the numbers on the list now when there are at
	// most max of them (ok), for plan, run and the report to take a
	// small list whole rather than read their campaign's numbers first.
	// A database's list says not ok when its history holds more than max
	// entries, which it can tell without sorting the table.
	NumbersUpTo(ctx context.Context, max int) (numbers []string, ok bool, err error)
	// Has reports whether the E.164 number is on the list now; while an
	// opt-out is held (Held), it returns an [*OptOutHeldError] instead:
	// no number may be called.
	Has(ctx context.Context, number string) (bool, error)
	// Hold records an opt-out whose number could not be read
	// ([OptOutHold]) durably before it returns, unless its campaign's
	// delivery was held before (open or resolved); it reports whether it
	// wrote it.
	Hold(ctx context.Context, h OptOutHold) (bool, error)
	// Resolve records, durably, that a person resolved the hold of
	// campaign's delivery key; false when no such hold is open.
	Resolve(ctx context.Context, campaign, key, note string) (bool, error)
	// Held returns the holds not resolved, oldest first.
	Held(ctx context.Context) ([]OptOutHold, error)
	// EraseDoNotCall erases the people whose E.164 numbers are in
	// numbers from the list, keeping them blocked (unless
	// opts.AllowContact leaves those not on it off it); for `callrun
	// erase`.
	EraseDoNotCall(ctx context.Context, numbers []string, opts EraseDoNotCallOptions) (DoNotCallEraseCounts, error)
	// CheckedAtEachCall reports whether a run asks Has right before each
	// call start: true for a file, read from where it was read last; a
	// database's list is checked in each intent's own INSERT instead.
	CheckedAtEachCall() bool
	// String says where the list is, for people.
	String() string
}

// OnDoNotCall returns the numbers on the list after entries (a list's
// history, oldest first), each with the addition that put it there; an
// erased person's is keyed by their hash.
func OnDoNotCall(entries []DoNotCallEntry) map[string]DoNotCallEntry {
	on := map[string]DoNotCallEntry{}
	for _, e := range entries {
		n := cmp.Or(e.Number, e.Hash)
		if e.Removed {
			delete(on, n)
		} else if _, ok := on[n]; !ok {
			on[n] = e
		}
	}
	return on
}

// File names of the do-not-call list in its directory.
const (
	DoNotCallFileName = "do-not-call.jsonl"
	DoNotCallLockName = "do-not-call.lock"
)

// Home returns the directory of the do-not-call list of every campaign
// whose state is in files on this machine: $CALLRUN_HOME, else the
// user's state directory: $XDG_STATE_HOME/callrun or
// ~/.local/state/callrun on Linux and the BSDs, ~/Library/Application
// Support/callrun on macOS, %LocalAppData%\callrun on Windows. A systemd
// unit running as a user of its own and a person at the shell share the
// list by setting the same CALLRUN_HOME. A home open to other users is
// closed, or refused ([private.Check]).
func Home() (string, error) {
	home, err := homePath()
	if err != nil {
		return "", err
	}
	if _, err := private.Check(home, "CALLRUN_HOME: the do-not-call list and the call starts of every campaign on this machine", DoNotCallFileName, DoNotCallIndexName, DoNotCallLockName, CallStartsFileName, CallStartsLockName, ErasureKeyFileName, ErasedFileName); err != nil {
		return "", err
	}
	return home, nil
}

// homePath is [Home]'s path, unchecked.
func homePath() (string, error) {
	if h := os.Getenv("CALLRUN_HOME"); h != "" {
		return filepath.Abs(h)
	}
	switch runtime.GOOS {
	case "darwin", "ios":
		d, err := os.UserConfigDir()
		if err != nil {
			return "", fmt.Errorf("finding the do-not-call list's directory (set CALLRUN_HOME): %w", err)
		}
		return filepath.Join(d, "callrun"), nil
	case "windows":
		d, err := os.UserCacheDir() // %LocalAppData%
		if err != nil {
			return "", fmt.Errorf("finding the do-not-call list's directory (set CALLRUN_HOME): %w", err)
		}
		return filepath.Join(d, "callrun"), nil
	}
	if d := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "callrun"), nil
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the do-not-call list's directory (set CALLRUN_HOME): %w", err)
	}
	return filepath.Join(h, ".local", "state", "callrun"), nil
}

// DoNotCallFile is the do-not-call list in files: an append-only JSON
// Lines file, one entry a line, in a directory shared by every campaign
// on the machine ([Home]), and beside it an index of the numbers on the
// list as of a length of that file (DoNotCallIndexName), built again
// whenever it is missing, does not match the file or lags too far
// behind. Writers (listen, `callrun suppress`) take the list's own lock,
// do-not-call.lock, for each addition, which never waits on a run;
// readers, and whoever builds the index, take no lock. A number is looked
// up in the index by a binary search on disk, and in the entries appended
// after what the index covers, which it keeps in memory: nothing holds
// the whole list. Has reads only what was appended since its last call
// (one stat when nothing was), so that a run can check it before every
// call start.
type DoNotCallFile struct {
	dir    string
	keyDir string // where the erasure key is: dir, or a rehearsal's Home

	mu    sync.Mutex
	list  follower[DoNotCallEntry] // the history, read from where ix ends
	ix    *dncIndex                // nil before the list is read, or with no history
	delta map[string]bool          // the numbers (or hashes) of the entries after ix: true when on the list
	// The erased people's keyed hashes in the index and the delta, each
	// true once checked against keys, the store's erasure keys (read from
	// the list's directory only when a hash is there).
	hashes map[string]bool
	keys   *ErasureKeys
	// The opt-out holds, beside the list (OptOutHoldsFileName).
	holds follower[OptOutHold]
	open  map[string]OptOutHold // holds not resolved, by holdKey
	ever  map[string]bool       // every delivery held, resolved or not, by holdKey
	// read: this process read or wrote a line of the history, so a
	// history missing later was moved or removed, not never made.
	read bool
	// writing: the caller holds the list's lock (Add, Import, erase),
	// under which the history is replaced only by an erase, which
	// indexes the new history before it lets the lock go.
	writing bool
}

var _ DoNotCallList = (*DoNotCallFile)(nil)

// ErrDoNotCallGone is what reading or writing a do-not-call list in files
// wraps when its history is missing (or, under a writer, was replaced)
// though the list existed: its index is there, or this process read it.
// Read as empty, the list would let its opted-out people be called, and
// an opt-out written into a new file would hold only itself; so nothing
// is read, written or called until a person puts it back.
var ErrDoNotCallGone = errors.New("the do-not-call list existed, and its file is gone")

// OpenDoNotCallFile returns the list kept in directory dir. Nothing is
// read or created before the list is used; a list with no file and no
// index is empty (a new store), but a file missing beside its index is
// an error ([ErrDoNotCallGone]).
func OpenDoNotCallFile(dir string) *DoNotCallFile { return openDoNotCallFile(dir, dir) }

// openDoNotCallFile returns the list kept in dir, whose erasure key is in
// keyDir.
func openDoNotCallFile(dir, keyDir string) *DoNotCallFile {
	return &DoNotCallFile{dir: dir, keyDir: keyDir, delta: map[string]bool{}, hashes: map[string]bool{}, open: map[string]OptOutHold{}, ever: map[string]bool{},
		list:  doNotCallEntries(filepath.Join(dir, DoNotCallFileName)),
		holds: follower[OptOutHold]{path: filepath.Join(dir, OptOutHoldsFileName), what: "an opt-out hold", valid: func(h *OptOutHold) bool { return h.Campaign != "" && h.Key != "" }},
	}
}

// doNotCallEntries follows the do-not-call list's file at path.
func doNotCallEntries(path string) follower[DoNotCallEntry] {
	return follower[DoNotCallEntry]{path: path, what: "a do-not-call entry", valid: validEntry}
}

// validEntry reports whether e has a number or, for an erased person, a
// keyed hash, not both: a number never looks like a hash.
func validEntry(e *DoNotCallEntry) bool {
	if e.Hash != "" {
		return e.Number == "" && strings.HasPrefix(e.Hash, hashPrefix)
	}
	return e.Number != "" && !strings.HasPrefix(e.Number, hashPrefix)
}

func (l *DoNotCallFile) path() string { return filepath.Join(l.dir, DoNotCallFileName) }

func (l *DoNotCallFile) indexPath() string { return filepath.Join(l.dir, DoNotCallIndexName) }

func (l *DoNotCallFile) String() string { return "do-not-call list " + l.path() }

func (l *DoNotCallFile) CheckedAtEachCall() bool { return true }

// Has reports whether number is on the list, reading what was appended
// to the list and to the holds since the last look; while an opt-out is
// held it returns an *OptOutHeldError.
func (l *DoNotCallFile) Has(_ context.Context, number string) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshHolds(); err != nil {
		return false, err
	}
	if len(l.open) > 0 {
		return false, &OptOutHeldError{Holds: sortedHolds(l.open), Where: l.String()}
	}
	if err := l.refresh(); err != nil {
		return false, err
	}
	on, err := l.onList([]string{number})
	if err != nil {
		return false, err
	}
	return on[number], nil
}

// OnList returns which of numbers are on the list now.
func (l *DoNotCallFile) OnList(_ context.Context, numbers []string) (map[string]bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refresh(); err != nil {
		return nil, err
	}
	return l.onList(numbers)
}

// NumbersUpTo reads the index's keys section once when the index and the
// delta hold at most max numbers.
func (l *DoNotCallFile) NumbersUpTo(_ context.Context, max int) ([]string, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refresh(); err != nil {
		return nil, false, err
	}
	if len(l.hashes) > 0 {
		return nil, false, nil // an erased person is found by hashing the campaign's numbers
	}
	var keys []uint64
	if l.ix != nil {
		if l.ix.count+int64(len(l.ix.others)) > int64(max+len(l.delta)) {
			return nil, false, nil // more than the delta's removals could make short
		}
		if l.ix.count > 0 {
			r := l.ix.mem
			if r == nil {
				f, err := l.ix.reopen(l.indexPath())
				if err != nil || f == nil {
					return nil, false, nil // gone or replaced meanwhile: look the campaign's numbers up instead
				}
				defer f.Close()
				r = f
			}
			b, err := l.ix.keys(r)
			if err != nil {
				return nil, false, fmt.Errorf("reading %s: %w", l.indexPath(), err)
			}
			for i := 0; i < len(b); i += 8 {
				keys = append(keys, binary.BigEndian.Uint64(b[i:]))
			}
		}
	}
	on := map[string]bool{}
	for _, k := range keys {
		on[keyNumber(k)] = true
	}
	if l.ix != nil {
		for n := range l.ix.others {
			on[n] = true
		}
	}
	for n, v := range l.delta {
		if v {
			on[n] = true
		} else {
			delete(on, n)
		}
	}
	if len(on) > max {
		return nil, false, nil
	}
	return slices.Collect(maps.Keys(on)), true, nil
}

// Entries reads the whole list.
func (l *DoNotCallFile) Entries(ctx context.Context) ([]DoNotCallEntry, error) {
	var out []DoNotCallEntry
	err := l.Each(ctx, false, func(e DoNotCallEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// Each reads the history once, or, current, twice: first for the key of
// each entry's number and where its line starts (16 bytes an entry), to
// find the additions in force (current), then for those lines.
func (l *DoNotCallFile) Each(_ context.Context, current bool, fn func(DoNotCallEntry) error) error {
	f, err := os.Open(l.path())
	if errors.Is(err, os.ErrNotExist) {
		l.mu.Lock()
		defer l.mu.Unlock()
		if err := l.missing(); err != nil {
			return fmt.Errorf("reading the %s: %w", l, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	var fnErr error
	each := func(e DoNotCallEntry, _ int64) {
		if fnErr == nil {
			fnErr = fn(e)
		}
	}
	fl := doNotCallEntries(l.path())
	if !current {
		if _, err := fl.read(f, func() {}, each); err != nil {
			return err
		}
		return fnErr
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	recs, oes, covered, err := scanHistory(f, l.path(), fi.Size())
	if err != nil {
		return err
	}
	recs = inForce(recs)
	for _, at := range othersInForce(oes) {
		recs = append(recs, dncRecord{at: uint64(at) << 1})
	}
	slices.SortFunc(recs, func(a, b dncRecord) int { return cmp.Compare(a.at, b.at) })
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, covered), 1<<16)
	var off int64
	for _, r := range recs {
		at := int64(r.at >> 1)
		if _, err := br.Discard(int(at - off)); err != nil {
			return err
		}
		line, err := br.ReadBytes('\n')
		if err != nil {
			return err
		}
		off = at + int64(len(line))
		var e DoNotCallEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return fmt.Errorf("%s: the line at byte %d is not a do-not-call entry", l.path(), at)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// refresh reads the whole lines appended since the last look into the
// delta, first loading the index (or building it) when none is loaded
// or the history no longer holds what it covers (replaced, or cut), and
// builds the index again when the delta grows past maxDelta. The caller
// holds l.mu.
func (l *DoNotCallFile) refresh() error {
	if err := l.refreshDelta(); err != nil {
		return fmt.Errorf("reading the %s: %w", l, err)
	}
	return nil
}

func (l *DoNotCallFile) refreshDelta() error {
	f, err := os.Open(l.path())
	if errors.Is(err, os.ErrNotExist) {
		if err := l.missing(); err != nil {
			return err
		}
		l.ix, l.delta, l.hashes = nil, map[string]bool{}, map[string]bool{}
		l.list.forget()
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
	if l.ix == nil || fi.Size() < l.list.off || !l.list.holdsLine(f) {
		if l.ix != nil && l.writing {
			if err := l.replaced(f, fi.Size()); err != nil {
				return err
			}
		}
		if err := l.load(f); err != nil {
			return err
		}
	}
	restarted := false
	if _, err := l.list.read(f, func() { restarted = true }, func(e DoNotCallEntry, _ int64) { l.track(e) }); err != nil {
		return err
	}
	if restarted || len(l.delta) > maxDelta {
		if err := l.rebuild(); err != nil {
			return err
		}
	}
	if l.list.off > 0 {
		l.read = true
	}
	return l.checkHashes()
}

// missing says whether a history that is not there may be read as a new,
// empty list: not when its index is there (only a history makes one, and
// deleting the index alone is safe), nor when this process read it
// before (a listen it was removed under, whatever became of the index).
// The list's other files are no such mark: its lock, the opt-out holds
// and the erasure key are made by writers that may add no entry (a
// removal of a number not on the list, a hold, an erase with
// --allow-contact), so a store may hold them and rightly no list. The
// caller holds l.mu.
func (l *DoNotCallFile) missing() error {
	_, err := os.Stat(l.indexPath())
	switch {
	case err == nil:
		return fmt.Errorf("%s is missing, but its index %s is there: %w. Nobody is called and no opt-out is stored until it is back: restore %s from a backup; or, only if the list was meant to be emptied (every number on it may be called again), remove %s as well",
			l.path(), l.indexPath(), ErrDoNotCallGone, l.path(), l.indexPath())
	case l.read:
		return fmt.Errorf("%s was removed or moved while this process held it: %w. Nobody is called and no opt-out is stored until it is back: restore %s from a backup",
			l.path(), ErrDoNotCallGone, l.path())
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("looking for the list's index: %w", err) // unknown: not read as empty
	}
	return nil
}

// replaced checks a history f, size bytes long, that no longer holds the
// lines this writer read, under the list's lock: an erase replaces the
// history and indexes the new one before it lets the lock go, so a new
// history its index does not cover was put there by someone else (a
// file copied over it, or removed and made again), and an entry written
// into it could be all it holds. The caller holds l.mu.
func (l *DoNotCallFile) replaced(f *os.File, size int64) error {
	ix, _, err := readIndex(l.indexPath(), f, size)
	if err != nil || ix != nil {
		return err
	}
	return fmt.Errorf("%s was replaced while this process held it by a file its index %s does not cover: %w. No opt-out is stored until the list is back: restore %s from a backup; or, only if the file there now is the list meant, start this command again",
		l.path(), l.indexPath(), ErrDoNotCallGone, l.path())
}

// track counts e, read or written after the index, in the delta.
func (l *DoNotCallFile) track(e DoNotCallEntry) {
	if e.Hash != "" {
		l.delta[e.Hash] = !e.Removed
		if _, ok := l.hashes[e.Hash]; !ok {
			l.hashes[e.Hash] = false
		}
		return
	}
	l.delta[e.Number] = !e.Removed
}

// checkHashes checks each erased person's hash not checked yet against
// the store's erasure keys, read again when one is made with a key not
// loaded: a list whose key is missing answers nothing, so nobody is
// called ([CheckHashKey]).
func (l *DoNotCallFile) checkHashes() error {
	for h, ok := range l.hashes {
		if ok {
			continue
		}
		if id, _, _ := splitHash(h); !l.keys.Has(id) {
			keys, err := readKeyFile(filepath.Join(l.keyDir, ErasureKeyFileName))
			if err != nil {
				return err
			}
			l.keys = keys
		}
		if err := CheckHashKey(l.keys, h, l.path()); err != nil {
			return err
		}
		l.hashes[h] = true
	}
	return nil
}

// hashOn reports whether one of number's keyed hashes is on the list as
// last read (on), and whether one is in its history at all (known). The
// caller holds l.mu, after checkHashes.
func (l *DoNotCallFile) hashOn(number string) (on, known bool) {
	if len(l.hashes) == 0 {
		return false, false
	}
	for _, h := range l.keys.Hashes(number) {
		if _, ok := l.hashes[h]; !ok {
			continue
		}
		known = true
		if v, ok := l.delta[h]; ok {
			on = on || v
		} else if l.ix != nil && l.ix.others[h] {
			on = true
		}
	}
	return on, known
}

// load takes the index on disk when it matches the history f, else
// builds it again.
func (l *DoNotCallFile) load(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	ix, tail, err := readIndex(l.indexPath(), f, fi.Size())
	if err != nil {
		return err
	}
	if ix == nil {
		return l.rebuild()
	}
	l.use(ix, tail)
	return nil
}

// rebuild builds the index from the history and uses it.
func (l *DoNotCallFile) rebuild() error {
	ix, tail, err := buildIndex(l.dir, l.path())
	if err != nil {
		return err
	}
	l.use(ix, tail)
	return nil
}

// use has the list answer from ix, whose covered bytes end in tail, and
// read the history from where ix ends.
func (l *DoNotCallFile) use(ix *dncIndex, tail []byte) {
	l.ix, l.delta, l.hashes = ix, map[string]bool{}, map[string]bool{}
	l.list.forget()
	if ix != nil {
		l.list.off, l.list.last = ix.covered, tail
		for n := range ix.others {
			if strings.HasPrefix(n, hashPrefix) {
				l.hashes[n] = false
			}
		}
	}
}

// onList returns which of numbers are on the list as last read: from the
// delta, else from the index. An index file that another process
// replaced since it was loaded (built again over a longer history) is
// loaded again, with the delta read anew from where it ends, and the
// numbers looked up again. While the list holds erased people's hashes,
// each number not found is hashed and looked up among them. The caller
// holds l.mu.
func (l *DoNotCallFile) onList(numbers []string) (map[string]bool, error) {
	on, err := l.onListPlain(numbers)
	if err != nil || len(l.hashes) == 0 {
		return on, err
	}
	for _, n := range numbers {
		if !on[n] {
			if h, _ := l.hashOn(n); h {
				on[n] = true
			}
		}
	}
	return on, nil
}

// onListPlain is onList for the entries that hold their number.
func (l *DoNotCallFile) onListPlain(numbers []string) (map[string]bool, error) {
	for try := 0; ; try++ {
		on := map[string]bool{}
		var keys []uint64
		for _, n := range numbers {
			if v, ok := l.delta[n]; ok {
				if v {
					on[n] = true
				}
			} else if k, ok := numberKey(n); ok {
				keys = append(keys, k)
			} else if l.ix != nil && l.ix.others[n] {
				on[n] = true
			}
		}
		if l.ix == nil || len(keys) == 0 {
			return on, nil
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		found, same, err := l.lookup(keys)
		if err != nil {
			return nil, err
		}
		if same {
			for _, n := range numbers {
				if k, ok := numberKey(n); ok {
					if _, inDelta := l.delta[n]; !inDelta {
						if i, ok := slices.BinarySearch(keys, k); ok && found[i] {
							on[n] = true
						}
					}
				}
			}
			return on, nil
		}
		if try == 3 {
			return nil, fmt.Errorf("%s keeps being replaced while it is read", l.indexPath())
		}
		l.ix = nil
		if err := l.refreshDelta(); err != nil {
			return nil, err
		}
	}
}

// lookup looks keys (sorted, distinct) up in the index: in memory, or in
// its file; same is false when the file is not the index loaded.
func (l *DoNotCallFile) lookup(keys []uint64) (found []bool, same bool, err error) {
	r := l.ix.mem
	if r == nil {
		f, err := l.ix.reopen(l.indexPath())
		if err != nil || f == nil {
			return nil, false, err
		}
		defer f.Close()
		r = f
	}
	b := make([]byte, 0, 8*len(keys))
	for _, k := range keys {
		b = binary.BigEndian.AppendUint64(b, k)
	}
	if found, err = l.ix.lookup(r, b); err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", l.indexPath(), err)
	}
	return found, true, nil
}

// locked runs fn holding the list's lock (waiting for another writer)
// and l.mu, with the list's directory made.
func (l *DoNotCallFile) locked(ctx context.Context, fn func() error) error {
	return withListLock(ctx, l.dir, "the do-not-call list's", func() error {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.writing = true
		defer func() { l.writing = false }()
		return fn()
	})
}

// withListLock runs fn holding do-not-call.lock in dir, made if need be,
// waiting for another holder: the lock of the list's writers, which the
// erased set's and the erasure key's writers take too. whose ("the
// do-not-call list's") names the directory in errors.
func withListLock(ctx context.Context, dir, whose string, fn func() error) error {
	return withFileLock(ctx, dir, DoNotCallLockName, whose, fn)
}

// withFileLock runs fn holding the lock file name in dir, made if need
// be, waiting for another holder.
func withFileLock(ctx context.Context, dir, name, whose string, fn func() error) error {
	if err := makeDir(dir); err != nil {
		return fmt.Errorf("creating %s directory: %w", whose, err)
	}
	fl, err := lockFile(dir, name)
	if err != nil {
		return err
	}
	if _, err := fl.TryLockContext(ctx, 5*time.Millisecond); err != nil {
		return fmt.Errorf("waiting for %s: %w", fl.Path(), err)
	}
	defer fl.Unlock()
	return fn()
}

// appendLines appends vs' JSON lines at the end of the whole lines fl
// read of its file in dir, as appendBytes does.
func appendLines[T any](dir string, fl *follower[T], vs ...any) error {
	var buf []byte
	for _, v := range vs {
		line, err := json.Marshal(v)
		if err != nil {
			return err
		}
		buf = append(append(buf, line...), '\n')
	}
	return appendBytes(dir, fl, buf)
}

// appendBytes appends buf, whole lines, at the end of the whole lines fl
// read of its file in dir (created if missing), first cutting a torn last
// line a crashed writer left (it was never acknowledged), and syncs them;
// fl then counts them read. The caller holds the file's lock.
func appendBytes[T any](dir string, fl *follower[T], buf []byte) error {
	f, err := openOrCreate(dir, fl.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := cutTail(f, fl.off); err != nil {
		return err
	}
	if err := writeSynced(f, buf, fl.off, nil); err != nil {
		return err
	}
	fl.appended(buf)
	return nil
}

// indexNew builds the index of a history this writer just made (there
// was none, so no index was loaded), so that from its first entry the
// list has the mark that it exists ([DoNotCallFile.missing]). The caller
// holds the list's lock and l.mu.
func (l *DoNotCallFile) indexNew() error {
	l.read = true
	if l.ix != nil {
		return nil
	}
	if err := l.rebuild(); err != nil {
		return fmt.Errorf("indexing the %s: %w", l, err)
	}
	return nil
}

// appendEntry appends e's JSON line, as json.Marshal writes it, to buf.
func appendEntry(buf []byte, e DoNotCallEntry) []byte {
	if e.Hash != "" {
		buf = append(buf, `{"hash":`...)
		buf = appendJSONString(buf, e.Hash)
	} else {
		buf = append(buf, `{"number":`...)
		buf = appendJSONString(buf, e.Number)
	}
	buf = append(buf, `,"at":"`...)
	buf = e.At.AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, '"')
	if e.Removed {
		buf = append(buf, `,"removed":true`...)
	}
	buf = append(buf, `,"source":`...)
	buf = appendJSONString(buf, e.Source)
	if e.Reason != "" {
		buf = append(buf, `,"reason":`...)
		buf = appendJSONString(buf, e.Reason)
	}
	return append(buf, "}\n"...)
}

// appendJSONString appends s as encoding/json writes it.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s) // a string always marshals
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// writeSynced writes buf at offset at of f and syncs it, running
// beforeSync, if set, first (tests use it to break the disk). A write or
// sync that fails is cut off again: not known to be durable, it was
// never acknowledged (and the next writer cuts it too).
func writeSynced(f *os.File, buf []byte, at int64, beforeSync func() error) error {
	_, err := f.WriteAt(buf, at)
	if err == nil && beforeSync != nil {
		err = beforeSync()
	}
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Truncate(at) //nolint:errcheck // cut by the next writer, if not now
	}
	return err
}

// Add takes the list's lock (waiting for another writer), cuts a torn
// last line a crashed writer left (it was never acknowledged), appends
// the entries that change the list and syncs them before it returns. An
// entry of a number whose keyed hash the list holds (an erased person)
// is written with the hash, never the number.
func (l *DoNotCallFile) Add(ctx context.Context, entries []DoNotCallEntry) ([]DoNotCallEntry, error) {
	return l.add(ctx, entries, true)
}

// Import adds the entries next returns, batch after batch until it
// returns none, as Add does, and builds the index once at the end. Each
// batch is checked against the list as it was before the import began
// and against itself, not against the batches before it, so that memory
// follows a batch: a number an import holds twice, in two batches, is
// written twice (its second addition changes nothing). It returns how
// many entries it wrote.
func (l *DoNotCallFile) Import(ctx context.Context, next func() ([]DoNotCallEntry, error)) (int, error) {
	wrote := 0
	for {
		batch, err := next()
		if err != nil {
			return wrote, err
		}
		if len(batch) == 0 {
			break
		}
		w, err := l.add(ctx, batch, false)
		wrote += len(w)
		if err != nil {
			return wrote, err
		}
	}
	if wrote == 0 {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.rebuild(); err != nil {
		return wrote, fmt.Errorf("indexing the %s: %w", l, err)
	}
	return wrote, nil
}

// hashedEntry is e with hash, an erased person's, in place of its
// number, and no reason (a person's words may name them).
func hashedEntry(e DoNotCallEntry, hash string) DoNotCallEntry {
	e.Number, e.Reason, e.Hash = "", "", hash
	return e
}

// add is Add; unless track, the entries it writes are not kept in the
// delta (Import's: it builds the index again at its end).
func (l *DoNotCallFile) add(ctx context.Context, entries []DoNotCallEntry, track bool) ([]DoNotCallEntry, error) {
	var wrote []DoNotCallEntry
	err := l.locked(ctx, func() error {
		if err := l.refresh(); err != nil {
			return err
		}
		numbers := make([]string, len(entries))
		for i, e := range entries {
			if e.Number == "" {
				return errors.New("a do-not-call entry needs its number")
			}
			numbers[i] = e.Number
		}
		on, err := l.onList(numbers)
		if err != nil {
			return err
		}
		// A person in the store's erased set (erased with
		// --allow-contact, who opts out later) goes on as a hash too.
		erasure := openErasureFile(l.dir, l.keyDir)
		erasedSet, err := erasure.OnErased(ctx, numbers)
		if err != nil {
			return err
		}
		var setKeys *ErasureKeys
		if len(erasedSet) > 0 {
			if setKeys, err = erasure.Keys(ctx); err != nil {
				return err
			}
		}
		var lines []byte
		for _, e := range entries {
			if on[e.Number] != e.Removed {
				continue // nothing to change
			}
			if e.At.IsZero() {
				e.At = time.Now()
			}
			e.At = e.At.UTC()
			on[e.Number] = !e.Removed
			if _, erased := l.hashOn(e.Number); erased {
				e = hashedEntry(e, l.keys.Hashes(e.Number)[0])
			} else if erasedSet[e.Number] {
				e = hashedEntry(e, setKeys.Hashes(e.Number)[0])
			}
			wrote = append(wrote, e)
			lines = appendEntry(lines, e)
		}
		if len(lines) == 0 {
			return nil
		}
		if err := appendBytes(l.dir, &l.list, lines); err != nil {
			wrote = nil
			return fmt.Errorf("writing the %s: %w", l, err)
		}
		if track {
			for _, e := range wrote {
				l.track(e)
			}
		}
		return l.indexNew()
	})
	if err != nil {
		return nil, err
	}
	return wrote, nil
}
