package run

import (
	"context"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
)

// SavedOptions choose the saved state that status, report and outcomes
// read.
type SavedOptions struct {
	Path    string
	Sandbox bool             // the state of run --sandbox runs
	Shard   campaign.Shard   // one shard's, or the whole campaign's
	Now     func() time.Time // status's clock, for its warnings; nil: time.Now
	Runs    bool             // read the journal's runs too (Saved.Runs)
}

// Saved is a campaign and what its journal says, read without the lock
// and without asking the service anything.
type Saved struct {
	F     *campaign.File
	Store store.Store
	State *store.State
	Dir   string // the state directory: where the report files go
	Sup   *campaign.Suppression
	// Rehearsal: the state is a rehearsal's (--sandbox, or a campaign
	// whose service is callrun's sandbox).
	Rehearsal bool
	Runs      []store.Run // the journal's runs, when SavedOptions.Runs asked
}

// LoadSaved loads the campaign (offline but for its store), checks its
// sheets, and reads its journal (and runs, if asked) and suppression
// files. The caller closes s.
func LoadSaved(ctx context.Context, o SavedOptions) (*Saved, error) {
	f, err := campaign.Load(o.Path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return nil, err
	}
	if err := f.CheckSheets(); err != nil {
		return nil, err
	}
	f.SetShard(o.Shard)
	o.Sandbox = Rehearsing(ctx, f, o.Sandbox)
	s := &Saved{F: f, Rehearsal: o.Sandbox}
	if s.Sup, err = f.LoadSuppression(ctx); err != nil {
		return nil, err
	}
	st, err := f.OpenStore(ctx, o.Sandbox)
	if err != nil {
		return nil, err
	}
	s.Store, s.Dir = st, st.ReportDir()
	// What holds contacts back, the journal and the runs are read at
	// once: each is a pass over a store of up to millions of records,
	// and a database's answers come while this process decodes others.
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		dnc, err := s.Store.DoNotCall()
		if err == nil {
			err = s.Sup.LoadDoNotCall(gctx, dnc, f)
		}
		if err != nil || o.Sandbox {
			return err
		}
		// For the report: when each contact held back may be called.
		now := time.Now()
		p, err := f.ReadPressure(gctx, s.Store, now)
		if err == nil {
			s.Sup.SetPressure(p, now)
		}
		return err
	})
	g.Go(func() (err error) {
		s.State, err = s.Store.ReadState(gctx)
		return err
	})
	if o.Runs {
		g.Go(func() (err error) {
			s.Runs, err = s.Store.ReadRuns(gctx)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		if s.State != nil {
			s.State.Close()
		}
		s.Store.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the state and the store.
func (s *Saved) Close() {
	s.State.Close()
	s.Store.Close()
}
