package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Store is where a campaign keeps its journal and its run lock: a state
// directory on this machine ([Files], the default) or a PostgreSQL
// database that every machine running the campaign reaches ([Postgres]).
// The commands open one from the campaign file; dispatch, status, plan
// and the report writers use it without knowing which it is.
type Store interface {
	// Lock takes the run lock: one run of the campaign (of its shard) at a
	// time, from any machine the store reaches. It fails at once, with an
	// error wrapping [ErrLocked] that names the holder, if another run
	// holds it. The lock ends with unlock, or when the process dies.
	Lock(ctx context.Context) (unlock func() error, err error)
	// LockAgents waits for, and takes, the campaign's agents lock, held
	// while a run makes sure its agents exist: runs of its shards started
	// at once then create each agent once, not once each.
	LockAgents(ctx context.Context) (unlock func() error, err error)
	// OpenJournal replays the journal into a [State] and opens it for
	// appending. The caller holds the lock, and closes both.
	OpenJournal(ctx context.Context, opts JournalOptions) (*Journal, *State, error)
	// ReadState replays the journal for reading only, without the lock:
	// for plan, status and report while a run may be appending. The
	// caller closes the State.
	ReadState(ctx context.Context) (*State, error)
	// ReadRuns says what the journal holds of its runs, oldest first.
	ReadRuns(ctx context.Context) ([]Run, error)
	// Holders returns the runs that hold the run lock now, without
	// taking it: for status, which counts the calls such a run has in
	// flight apart from the uncertain ones.
	Holders(ctx context.Context) ([]Holder, error)
	// OpenDeliveries opens the campaign's deliveries for `callrun listen`
	// to store the service's webhook deliveries in. Files allow one
	// listen at a time (another fails wrapping [ErrDeliveriesLocked]);
	// PostgreSQL any number, each delivery stored once. The caller
	// closes it.
	OpenDeliveries(ctx context.Context) (*Deliveries, error)
	// ReadDeliveries returns the campaign's stored deliveries in the
	// order they were stored, without any lock: for the report, status
	// and `callrun outcomes` while listen may be storing more.
	ReadDeliveries(ctx context.Context) ([]Delivery, error)
	// EachDelivery calls fn with each of the campaign's stored
	// deliveries, in the order they were stored (one stored twice, by a
	// race of two listens' retries, twice), holding one at a time, and
	// stops at fn's first error: for retention, which must not hold
	// months of deliveries at once.
	EachDelivery(ctx context.Context, fn func(Delivery) error) error
	// LastDeliveryAt returns when listen received the campaign's
	// delivery stored last, zero when none is, reading that one alone:
	// for listen's warning when calls bring no delivery.
	LastDeliveryAt(ctx context.Context) (time.Time, error)
	// FollowDeliveries returns a feed of the campaign's deliveries stored
	// from now on: each call of it returns those stored since the last,
	// each once, without any lock. A run reads so of the calls that ended
	// while it runs.
	FollowDeliveries(ctx context.Context) (func() ([]Delivery, error), error)
	// ReportDir is the local directory of the campaign's report files
	// (a shard's own): with files, the state directory.
	ReportDir() string
	// DoNotCall returns the do-not-call list every campaign on the store
	// honours, with its opt-out holds.
	DoNotCall() (DoNotCallList, error)
	// Erasure returns the keys of the store's keyed hashes and its erased
	// set, which every campaign on the store shares.
	Erasure() (ErasureStore, error)
	// CallStarts returns the call starts and conversations that contact
	// pressure counts, across every campaign on the store.
	CallStarts() (CallStarts, error)
	// CalledBefore returns the contacts campaign started calls to, by
	// the call starts, that a first attempt from this store's journal
	// is checked against ([ForeignStartError]), naming that journal;
	// nil where the store keeps one journal a campaign (PostgreSQL),
	// which no other journal's calls reach. Plan reads it.
	CalledBefore(ctx context.Context, campaign string) (*ContactStarts, error)
	// EraseJournal replaces, in the campaign's journal, the intents and
	// outcomes of the people whose E.164 numbers are in numbers by one
	// tombstone a contact, refusing while a run holds the lock; for
	// `callrun erase`.
	EraseJournal(ctx context.Context, numbers []string, opts EraseOptions) (EraseCounts, error)
	// EraseDeliveries replaces the campaign's stored deliveries of those
	// people by their erased form; for `callrun erase`.
	EraseDeliveries(ctx context.Context, numbers []string, opts DeliveryEraseOptions) (int, error)
	// Register records where a campaign on the store keeps its state,
	// once: each run, rehearsal and listen records its own, so that
	// `callrun erase` finds every campaign that may hold a person.
	Register(ctx context.Context, p Place) error
	// Places returns what Register recorded, oldest first.
	Places(ctx context.Context) ([]Place, error)
	// RememberAgent records an agent callrun created for the campaign:
	// campaign.EnsureAgents calls it as soon as the service's answer
	// to the create is read (or a listing shows a create whose answer
	// was lost), before anything else, so that a later run finds the
	// agent when the service's list does not show it.
	RememberAgent(ctx context.Context, a CreatedAgent) error
	// CreatedAgents returns what RememberAgent recorded for the
	// campaign (all its shards), oldest first: for EnsureAgents and
	// plan, when the service's list lacks the name of an agent to be
	// created.
	CreatedAgents(ctx context.Context) ([]CreatedAgent, error)
	// Token returns where the store keeps the service's token: the
	// database's row, sealed with r.Key, or the token file r.File.
	Token(r TokenRequest) (KeptToken, error)
	// String says where the store is, for people and logs; it never
	// holds a password.
	String() string
	// Close releases the store's connections, if it has any.
	Close() error
}

// JournalFile is the journal's file name in a state directory.
const JournalFile = "journal.jsonl"

// Files is the file store: the journal, the lock and the report files in
// one state directory on this machine. A shard's is made by [ShardFiles].
type Files struct {
	Dir string

	parent    string // a shard's: the campaign's state directory
	count     int    // a shard's: the number of shards
	rehearsal bool   // a rehearsal's: the rehearsals' own do-not-call list
	pushed    bool   // [PushedFiles]: a state directory pushed to PostgreSQL, for erasing
}

var _ Store = Files{}

// Journal returns the journal file's path.
func (s Files) Journal() string { return filepath.Join(s.Dir, JournalFile) }

// Lock takes the state directory's lock (and, for a shard, its parent's,
// shared), refusing a directory that holds another split of the campaign.
func (s Files) Lock(context.Context) (func() error, error) {
	if s.parent == "" {
		if err := s.checkSplit(); err != nil {
			return nil, err
		}
		return Lock(s.Dir)
	}
	unlockParent, err := s.lockShard()
	if err != nil {
		return nil, err
	}
	// Made before the check: two first runs of different splits that
	// start at once then each see the other's directory, and both stop.
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		unlockParent()
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	if err := s.checkSplit(); err != nil {
		os.Remove(s.Dir) // only if empty: a new directory of this run
		unlockParent()
		return nil, err
	}
	unlock, err := Lock(s.Dir)
	if err != nil {
		unlockParent()
		return nil, err
	}
	return func() error { return errors.Join(unlock(), unlockParent()) }, nil
}

// AgentsLock is the name of the lock a run takes, in the campaign's
// state directory, while it creates or updates the campaign's agents.
const AgentsLock = "agents.lock"

// LockAgents takes the campaign's state directory's agents.lock (the
// parent's, for a shard), waiting for another run to release it.
func (s Files) LockAgents(ctx context.Context) (func() error, error) {
	top := s.top()
	if err := os.MkdirAll(top, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	fl, err := lockFile(top, AgentsLock)
	if err != nil {
		return nil, err
	}
	if _, err := fl.TryLockContext(ctx, 50*time.Millisecond); err != nil {
		return nil, fmt.Errorf("waiting for the agents lock of %s: %w", top, err)
	}
	return fl.Unlock, nil
}

func (s Files) OpenJournal(ctx context.Context, opts JournalOptions) (*Journal, *State, error) {
	if opts.Keys == nil {
		opts.Keys = &storeKeys{ctx: ctx, erasure: s.Erasure}
	}
	j, st, err := OpenJournal(s.Journal(), opts)
	if err == nil {
		st.deliveries = s
	}
	return j, st, err
}

// top is the campaign's state directory: a shard's parent, else Dir. The
// deliveries are there, shared by the shards.
func (s Files) top() string {
	if s.parent != "" {
		return s.parent
	}
	return s.Dir
}

// OpenDeliveries opens the deliveries file of the campaign's state
// directory, taking its lock (not the run's).
func (s Files) OpenDeliveries(context.Context) (*Deliveries, error) {
	erasure, err := s.erasureFile()
	if err != nil {
		return nil, err
	}
	return openDeliveries(s.top(), erasure)
}

// ReadDeliveries reads the deliveries file of the campaign's state
// directory.
func (s Files) ReadDeliveries(context.Context) ([]Delivery, error) { return ReadDeliveries(s.top()) }

// EachDelivery reads the deliveries file of the campaign's state
// directory one delivery at a time.
func (s Files) EachDelivery(_ context.Context, fn func(Delivery) error) error {
	return EachDelivery(s.top(), fn)
}

// LastDeliveryAt reads the last delivery of the deliveries file of the
// campaign's state directory.
func (s Files) LastDeliveryAt(context.Context) (time.Time, error) {
	return LastDeliveryAt(s.top())
}

// FollowDeliveries follows the deliveries file of the campaign's state
// directory as listen appends to it.
func (s Files) FollowDeliveries(context.Context) (func() ([]Delivery, error), error) {
	t, err := TailDeliveries(s.top())
	if err != nil {
		return nil, err
	}
	return t.Next, nil
}

// ReadState replays the journal, refusing a state directory that holds
// another split of the campaign: its counts would leave out the calls
// the other split made.
func (s Files) ReadState(ctx context.Context) (*State, error) {
	if err := s.checkSplit(); err != nil {
		return nil, err
	}
	st, err := readJournalState(s.Journal(), &storeKeys{ctx: ctx, erasure: s.Erasure})
	if err == nil {
		st.deliveries = s
	}
	return st, err
}

func (s Files) ReadRuns(context.Context) ([]Run, error) { return ReadRuns(s.Journal()) }

func (s Files) String() string {
	if s.pushed {
		return "pushed files in state directory " + s.Dir
	}
	return "state directory " + s.Dir
}

func (s Files) Close() error { return nil }

// ErrShardMismatch means that a state directory holds the journals of a
// different split of the campaign into shards than the one asked for:
// journals in files do not see each other, so running it would call
// people the other split called already.
var ErrShardMismatch = errors.New("the state directory holds another split of the campaign")

// ErrPushed means that a state directory's journal was copied into
// PostgreSQL (`callrun state push`): the campaign's runs belong there
// now, and a run from the files would not see the calls made since.
var ErrPushed = errors.New("the state directory's journal was pushed to PostgreSQL")

// PushedFile marks a state directory whose journals were pushed.
const PushedFile = "PUSHED-TO-POSTGRES"

// ErrUnpushed means that a campaign whose journal is in PostgreSQL has
// journal files in its state directory that were never pushed there: the
// calls they record are unknown to the database, and a run would call
// those people again.
var ErrUnpushed = errors.New("the state directory holds journal files the database does not have")

// CheckPushed refuses, with [ErrUnpushed], a state directory dir that holds
// journal files with records and no mark that they were pushed: for a
// campaign whose journal is in PostgreSQL.
func CheckPushed(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, PushedFile)); err == nil {
		return nil
	}
	paths, err := Journals(dir)
	if err != nil {
		return err
	}
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Size() > 0 {
			return fmt.Errorf("%w: %s: run `callrun state push` first to copy them in, or the contacts they record as called would be called again", ErrUnpushed, p)
		}
	}
	return nil
}

// Journals returns the journal files of the campaign whose state
// directory is dir: its own and its shards'.
func Journals(dir string) ([]string, error) {
	var out []string
	if _, err := os.Stat(filepath.Join(dir, JournalFile)); err == nil {
		out = append(out, filepath.Join(dir, JournalFile))
	}
	dirs, err := shardDirs(dir)
	if err != nil {
		return nil, err
	}
	for name := range dirs {
		if _, err := os.Stat(filepath.Join(dir, name, JournalFile)); err == nil {
			out = append(out, filepath.Join(dir, name, JournalFile))
		}
	}
	return out, nil
}

// ShardFiles is the file store of shard index of count of the campaign
// whose state directory is dir: a directory of its own, dir/shard-K-of-N.
// Its lock also holds dir's lock shared, which keeps an unsharded run of
// the campaign out, and it refuses to run beside the journal of the whole
// campaign or of shards of another count.
func ShardFiles(dir string, index, count int) Files {
	return Files{Dir: ShardDir(dir, index, count), parent: dir, count: count}
}

// PushedFiles is the file store of the state directory dir that `callrun
// state push` copied into PostgreSQL (marked [PushedFile]), for `callrun
// erase` and retention to erase people from the files the push left
// behind: the journal (each shard's), the deliveries, and [Home]'s
// do-not-call list, call starts and conversations. Every other store
// refuses such a directory ([ErrPushed]); this one opens it, and takes
// the locks the file store takes for its own erase, so that a campaign
// still run from files on the same [Home] is kept out of each file as it
// is rewritten. It is for erasing only: no run is to be made from it.
func PushedFiles(dir string) Files {
	return Files{Dir: dir, pushed: true}
}

// ShardDir is the state directory of shard index of count of the campaign
// whose state directory is dir: its report files, and with the file store
// its journal and lock.
func ShardDir(dir string, index, count int) string {
	return filepath.Join(dir, shardDirName(index, count))
}

func shardDirName(index, count int) string { return fmt.Sprintf("shard-%d-of-%d", index, count) }

// ShardsIn returns the shards whose state directories are under the
// campaign's state directory dir (files), as index and count: for
// `callrun erase`, which rewrites each one's report.
func ShardsIn(dir string) ([][2]int, error) {
	dirs, err := shardDirs(dir)
	if err != nil {
		return nil, err
	}
	var out [][2]int
	for _, name := range slices.Sorted(maps.Keys(dirs)) {
		var k, n int
		fmt.Sscanf(name, "shard-%d-of-%d", &k, &n) //nolint:errcheck // shardDirs read it so
		out = append(out, [2]int{k, n})
	}
	return out, nil
}

// shardDirs returns the shard directories under dir, with their shard
// counts.
func shardDirs(dir string) (map[string]int, error) {
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range ents {
		var k, n int
		if !e.IsDir() {
			continue
		}
		if _, err := fmt.Sscanf(e.Name(), "shard-%d-of-%d", &k, &n); err == nil && e.Name() == shardDirName(k, n) {
			out[e.Name()] = n
		}
	}
	return out, nil
}

// checkSplit refuses a store whose state directory holds journals of
// another split of the campaign: for the whole campaign (count 0), any
// shard's; for a shard, the whole campaign's or another count's.
func (s Files) checkSplit() error {
	top := s.top()
	if b, err := os.ReadFile(filepath.Join(top, PushedFile)); err == nil && !s.pushed {
		return fmt.Errorf("%w (%s): give the campaign its state: {postgres: ...} again, or remove %s if you mean to go back to these files", ErrPushed, strings.TrimSpace(string(b)), filepath.Join(top, PushedFile))
	}
	dirs, err := shardDirs(top)
	if err != nil {
		return fmt.Errorf("reading state directory %s: %w", top, err)
	}
	for name, n := range dirs {
		if s.parent == "" {
			return fmt.Errorf("%w: %s holds %s, from runs with --shard K/%d: give --shard as they did (or keep the journal in PostgreSQL, where splits may change)", ErrShardMismatch, top, name, n)
		}
		if n != s.count {
			return fmt.Errorf("%w: %s holds %s, from runs with --shard K/%d, not K/%d: split it as those runs did (or keep the journal in PostgreSQL, where splits may change)", ErrShardMismatch, top, name, n, s.count)
		}
	}
	if s.parent != "" {
		if fi, err := os.Stat(filepath.Join(top, JournalFile)); err == nil && fi.Size() > 0 {
			return fmt.Errorf("%w: %s holds the journal of runs without --shard: run without it here (or keep the journal in PostgreSQL, where splits may change)", ErrShardMismatch, top)
		}
	}
	return nil
}

// lockShard takes the parent state directory's lock shared for a shard's
// run, so that an unsharded run (which takes it exclusive) is kept out.
func (s Files) lockShard() (func() error, error) {
	if err := os.MkdirAll(s.parent, 0o700); err != nil {
		return nil, fmt.Errorf("creating state directory: %w", err)
	}
	unlock, ok, err := tryLockFile(filepath.Join(s.parent, "lock"), os.O_CREATE|os.O_RDWR, true)
	if err != nil {
		return nil, fmt.Errorf("locking state directory %s: %w", s.parent, err)
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s is held by a run of the whole campaign", ErrLocked, s.parent)
	}
	return unlock, nil
}
