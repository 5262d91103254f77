package store

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// Place is where a campaign on a store keeps its state: recorded on the
// store by each run, rehearsal and listen, so that `callrun erase` finds
// every campaign that may hold a person.
type Place struct {
	Campaign     string    `json:"campaign"`
	CampaignFile string    `json:"campaign_file"` // absolute
	StateDir     string    `json:"state_dir"`     // absolute: the report files' directory
	Kind         string    `json:"kind"`          // PlaceRun, PlaceRehearsal or PlaceListen
	Host         string    `json:"host"`
	At           time.Time `json:"at"` // when it was first recorded
}

// The kinds of a [Place].
const (
	PlaceRun       = "run"
	PlaceRehearsal = "rehearsal"
	PlaceListen    = "listen"
)

// same reports whether p and q are one place, recorded twice.
func (p Place) same(q Place) bool {
	return p.Kind == q.Kind && p.StateDir == q.StateDir && p.CampaignFile == q.CampaignFile && p.Host == q.Host && p.Campaign == q.Campaign
}

// PlacesFileName is the file of the places of the campaigns in files on
// the machine, in [Home] (a rehearsal's, in its sandbox directory).
const PlacesFileName = "campaigns.jsonl"

// placesLockName is the lock of the places' file, beside it: a run
// records its place without waiting for an import to the do-not-call
// list.
const placesLockName = "campaigns.lock"

// placeLines follows the places' file at path.
func placeLines(path string) follower[Place] {
	return follower[Place]{path: path, what: "a campaign's place", valid: func(p *Place) bool {
		return p.Campaign != "" && p.StateDir != "" && p.Kind != ""
	}}
}

// Register records p in CALLRUN_HOME's campaigns.jsonl unless it is
// there already, under the file's own lock, synced.
func (s Files) Register(ctx context.Context, p Place) error {
	dir, err := s.listHome()
	if err != nil {
		return err
	}
	fl := placeLines(filepath.Join(dir, PlacesFileName))
	err = withFileLock(ctx, dir, placesLockName, "the campaigns' places'", func() error {
		known := false
		if _, err := fl.read(nil, func() {}, func(q Place, _ int64) { known = known || q.same(p) }); err != nil {
			return err
		}
		if known {
			return nil
		}
		return appendLines(dir, &fl, p)
	})
	if err != nil {
		return fmt.Errorf("recording campaign %s's state directory in %s: %w", p.Campaign, fl.path, err)
	}
	return nil
}

// Places returns the places recorded in CALLRUN_HOME's campaigns.jsonl,
// oldest first.
func (s Files) Places(context.Context) ([]Place, error) {
	dir, err := s.listHome()
	if err != nil {
		return nil, err
	}
	fl := placeLines(filepath.Join(dir, PlacesFileName))
	var out []Place
	if _, err := fl.read(nil, func() {}, func(p Place, _ int64) { out = append(out, p) }); err != nil {
		return nil, fmt.Errorf("reading the campaigns' places in %s: %w", fl.path, err)
	}
	return out, nil
}

// Register records p in the table callrun_report_dirs unless it is
// there already.
func (p *Postgres) Register(ctx context.Context, pl Place) error {
	_, err := p.pool.Exec(ctx, `
INSERT INTO callrun_report_dirs (campaign, host, dir, kind, campaign_file, at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (campaign, host, dir, kind) DO UPDATE SET campaign_file = excluded.campaign_file
WHERE callrun_report_dirs.campaign_file <> excluded.campaign_file`,
		pl.Campaign, pl.Host, pl.StateDir, pl.Kind, pl.CampaignFile, pl.At.UTC().Truncate(time.Microsecond))
	if err != nil {
		return p.wrap(fmt.Sprintf("recording campaign %s's state directory in", pl.Campaign), err)
	}
	return nil
}

// Places returns the places recorded in the table callrun_report_dirs,
// oldest first.
func (p *Postgres) Places(ctx context.Context) ([]Place, error) {
	rows, err := p.pool.Query(ctx, `SELECT campaign, campaign_file, dir, kind, host, at FROM callrun_report_dirs ORDER BY at, campaign, dir`)
	if err != nil {
		return nil, p.wrap("reading the campaigns' places from", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Place, error) {
		var pl Place
		err := r.Scan(&pl.Campaign, &pl.CampaignFile, &pl.StateDir, &pl.Kind, &pl.Host, &pl.At)
		pl.At = pl.At.UTC()
		return pl, err
	})
	if err != nil {
		return nil, p.wrap("reading the campaigns' places from", err)
	}
	return out, nil
}
