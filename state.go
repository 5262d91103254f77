package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/urfave/cli/v2"
)

// shardFlag is --shard K/N, on the commands that work on a campaign's
// saved state.
func shardFlag() cli.Flag {
	return &cli.StringFlag{Name: "shard", Usage: "work on shard K of N (K counts from 0): the contacts whose number hashes to K, paced at per_second/N", EnvVars: []string{"CALLRUN_SHARD"}}
}

// shardArg reads --shard; the zero Shard (the whole campaign) when it is
// not given.
func shardArg(c *cli.Context) (campaign.Shard, error) {
	if c.String("shard") == "" {
		return campaign.Shard{}, nil
	}
	s, err := campaign.ParseShard(c.String("shard"))
	if err != nil {
		return s, usageError(err)
	}
	return s, nil
}

// savedState is where a campaign's state is: the store of its journal and
// lock, and the local directory of its report files.
type savedState struct {
	store store.Store
	// dir is the state directory (a shard's own, under state_dir): the
	// report files, and with the file store the journal and the lock.
	dir string
}

// openState opens the campaign's store: PostgreSQL when the campaign
// file says state: {postgres: ...}, else the files of state_dir. A
// rehearsal (--sandbox) always keeps files of its own, apart, so that it
// can never tell a real run that someone was called. The caller closes
// the store.
func openState(ctx context.Context, f *campaign.File, sandbox bool) (*savedState, error) {
	dir := f.Path(f.StateDir)
	if sandbox {
		dir += "-sandbox"
	}
	shard := f.Shard
	if f.State != nil && !f.SharedState() && !sandbox {
		// Never the files instead: they do not know whom the database does.
		return nil, usageError(fmt.Errorf("%s: state.postgres is empty (is the variable it names, such as CALLRUN_DATABASE_URL, set?): the journal is in PostgreSQL", f.Source))
	}
	if f.SharedState() && !sandbox {
		if err := store.CheckPushed(dir); err != nil {
			return nil, err
		}
		p, err := store.OpenPostgres(ctx, f.State.Postgres, f.Name, shard.Index, shard.N())
		if err != nil {
			return nil, err
		}
		if shard.Sharded() {
			dir = store.ShardDir(dir, shard.Index, shard.Count)
		}
		return &savedState{store: p, dir: dir}, nil
	}
	if shard.Sharded() {
		fs := store.ShardFiles(dir, shard.Index, shard.Count)
		return &savedState{store: fs, dir: fs.Dir}, nil
	}
	return &savedState{store: store.Files{Dir: dir}, dir: dir}, nil
}

// lock takes the run lock. With PostgreSQL it also takes the local state
// directory's, which guards the report files' temporary files.
func (s *savedState) lock(ctx context.Context) (func() error, error) {
	unlock, err := s.store.Lock(ctx)
	if err != nil {
		return nil, err
	}
	if _, files := s.store.(store.Files); files {
		return unlock, nil
	}
	unlockDir, err := store.Lock(s.dir)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() error { return errors.Join(unlockDir(), unlock()) }, nil
}
