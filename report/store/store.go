package store

import (
	"context"
	"path/filepath"
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
	// OpenJournal replays the journal into a [State] and opens it for
	// appending. The caller holds the lock, and closes both.
	OpenJournal(ctx context.Context, opts JournalOptions) (*Journal, *State, error)
	// ReadState replays the journal for reading only, without the lock:
	// for plan, status and report while a run may be appending. The
	// caller closes the State.
	ReadState(ctx context.Context) (*State, error)
	// ReadLastRun says what the journal holds of its latest run.
	ReadLastRun(ctx context.Context) (LastRun, error)
	// String says where the store is, for people and logs; it never
	// holds a password.
	String() string
	// Close releases the store's connections, if it has any.
	Close() error
}

// JournalFile is the journal's file name in a state directory.
const JournalFile = "journal.jsonl"

// Files is the file store: the journal, the lock and the report files in
// one state directory on this machine.
type Files struct {
	Dir string
}

var _ Store = Files{}

// Journal returns the journal file's path.
func (s Files) Journal() string { return filepath.Join(s.Dir, JournalFile) }

func (s Files) Lock(context.Context) (func() error, error) { return Lock(s.Dir) }

func (s Files) OpenJournal(_ context.Context, opts JournalOptions) (*Journal, *State, error) {
	return OpenJournalWith(s.Journal(), opts)
}

func (s Files) ReadState(context.Context) (*State, error) { return ReadState(s.Journal()) }

func (s Files) ReadLastRun(context.Context) (LastRun, error) { return ReadLastRun(s.Journal()) }

func (s Files) String() string { return "state directory " + s.Dir }

func (s Files) Close() error { return nil }
