package store

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/callrun/callrun/report/private"
)

// Options say which store [Open] opens for a campaign.
type Options struct {
	// Dir is the campaign's state directory: its report files, and with
	// files its journal and lock.
	Dir string
	// Postgres is the URL of the database that keeps the campaign's state;
	// "": the files of Dir.
	Postgres string
	// Campaign is the campaign's name, the journal's key in a database.
	Campaign string
	// Index and Count are the shard: K of N; Count 0 or 1, the whole
	// campaign.
	Index, Count int
	// Rehearsal keeps a rehearsal's state: files of its own in Dir with
	// "-sandbox" added, whatever Postgres says, and the rehearsals' own
	// do-not-call list, so that a rehearsal never tells a real run that
	// someone was called or asked not to be.
	Rehearsal bool
}

// Open opens a campaign's store: the database when o.Postgres names one,
// else the files of o.Dir (a shard's own directory under it). Every part
// of the state is reached through it: the journal and the lock, the
// deliveries, the do-not-call list and its opt-out holds, the call starts
// and conversations, and the service's token. The caller closes the store.
func Open(ctx context.Context, o Options) (Store, error) {
	dir := o.Dir
	if o.Rehearsal {
		dir += "-sandbox"
	}
	if _, err := private.Check(dir, "the campaign's state directory: its journal and reports", stateFiles...); err != nil {
		return nil, err
	}
	if o.Postgres != "" && !o.Rehearsal {
		if err := CheckPushed(dir); err != nil {
			return nil, err
		}
		p, err := OpenPostgres(ctx, o.Postgres, o.Campaign, o.Index, max(o.Count, 1))
		if err != nil {
			return nil, err
		}
		p.reportDir = dir
		if o.Count > 1 {
			p.reportDir = ShardDir(dir, o.Index, o.Count)
		}
		return p, nil
	}
	if o.Count > 1 {
		fs := ShardFiles(dir, o.Index, o.Count)
		fs.rehearsal = o.Rehearsal
		return fs, nil
	}
	return Files{Dir: dir, rehearsal: o.Rehearsal}, nil
}

// stateFiles are files every state directory callrun keeps holds after
// its first run: one of them marks a directory as callrun's.
var stateFiles = []string{JournalFile, "lock", "report.csv", "summary.json", PushedFile}

// ReportDir is the state directory: the report files, the journal and
// the lock.
func (s Files) ReportDir() string { return s.Dir }

// DoNotCall returns the do-not-call list of every campaign in files on
// this machine, in [Home]; a rehearsal's, in Home's sandbox directory:
// the sandbox's opt-outs never keep a real person from being called.
func (s Files) DoNotCall() (DoNotCallList, error) {
	home, err := Home()
	if err != nil {
		return nil, err
	}
	dir, err := s.listHome()
	if err != nil {
		return nil, err
	}
	return openDoNotCallFile(dir, home), nil // Home's key, as Erasure's
}

// listHome is the directory of the do-not-call list and the erased set:
// [Home], or a rehearsal's sandbox directory under it.
func (s Files) listHome() (string, error) {
	home, err := Home()
	if err != nil || !s.rehearsal {
		return home, err
	}
	return filepath.Join(home, "sandbox"), nil
}

// Erasure returns the erasure key and erased set of every campaign in
// files on this machine, beside the do-not-call list in [Home]; a
// rehearsal's erased set is in Home's sandbox directory, as its list,
// but its key is Home's: the call starts in Home, which rehearsals and
// real runs share, hold hashes of one key.
func (s Files) Erasure() (ErasureStore, error) {
	f, err := s.erasureFile()
	if err != nil {
		return nil, err
	}
	return f, nil
}

// erasureFile is Erasure's, for the deliveries too.
func (s Files) erasureFile() (*ErasureFile, error) {
	home, err := Home()
	if err != nil {
		return nil, err
	}
	dir, err := s.listHome()
	if err != nil {
		return nil, err
	}
	return openErasureFile(dir, home), nil
}

// CallStarts returns the call starts of every campaign in files on this
// machine, beside the do-not-call list in [Home].
func (s Files) CallStarts() (CallStarts, error) {
	home, err := Home()
	if err != nil {
		return nil, err
	}
	return OpenCallStartsFile(home), nil
}

// CalledBefore is Store.CalledBefore: the call starts in [Home], the
// journal this directory's.
func (s Files) CalledBefore(ctx context.Context, campaign string) (*ContactStarts, error) {
	home, err := Home()
	if err != nil {
		return nil, err
	}
	cs, err := OpenCallStartsFile(home).CampaignStarts(ctx, campaign)
	if err != nil {
		return nil, err
	}
	cs.journal = s.Journal()
	return cs, nil
}

// Token returns the token file at r.File.
func (s Files) Token(r TokenRequest) (KeptToken, error) {
	return &TokenFile{Path: r.File, BaseURL: r.BaseURL, ClientID: r.ClientID}, nil
}

// ReportDir is the local directory of the report files, the state
// directory (a shard's own), when [Open] opened the store; "" else.
func (p *Postgres) ReportDir() string { return p.reportDir }

// Lock takes the run lock; opened by [Open], the store also takes the
// local report directory's, which guards the report files' temporary
// files.
func (p *Postgres) Lock(ctx context.Context) (func() error, error) {
	unlock, err := p.lockRun(ctx)
	if err != nil || p.reportDir == "" {
		return unlock, err
	}
	unlockDir, err := Lock(p.reportDir)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() error { return errors.Join(unlockDir(), unlock()) }, nil
}
