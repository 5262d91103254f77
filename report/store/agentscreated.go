package store

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// CreatedAgent is an agent of the service that callrun created for a
// campaign, as the store remembers it: a service whose agent list never
// shows it (one that leaves out pending agents, or lags) would otherwise
// have every run create another of its name.
type CreatedAgent struct {
	Name string    `json:"name"`     // the agent's name, as the campaign file gives it
	ID   string    `json:"agent_id"` // the service's id of it
	At   time.Time `json:"at"`       // when the service's answer to the create was read
	Run  string    `json:"run"`      // which run created it: its process and host
}

// AgentsCreatedFile is the file, in the campaign's state directory
// (shared by its shards), of the agents callrun created for it.
const AgentsCreatedFile = "agents-created.jsonl"

// agentsCreatedLock is the lock of AgentsCreatedFile, beside it.
const agentsCreatedLock = "agents-created.lock"

// createdLines follows the created agents' file in dir.
func createdLines(dir string) follower[CreatedAgent] {
	return follower[CreatedAgent]{path: filepath.Join(dir, AgentsCreatedFile), what: "a created agent", valid: func(a *CreatedAgent) bool {
		return a.Name != "" && a.ID != ""
	}}
}

// RememberAgent appends a to the state directory's agents-created.jsonl,
// synced, under the file's own lock.
func (s Files) RememberAgent(ctx context.Context, a CreatedAgent) error {
	dir := s.top()
	fl := createdLines(dir)
	err := withFileLock(ctx, dir, agentsCreatedLock, "the created agents'", func() error {
		if _, err := fl.read(nil, func() {}, func(CreatedAgent, int64) {}); err != nil {
			return err
		}
		return appendLines(dir, &fl, a)
	})
	if err != nil {
		return fmt.Errorf("remembering agent %q (id %s) in %s: %w", a.Name, a.ID, fl.path, err)
	}
	return nil
}

// CreatedAgents reads the state directory's agents-created.jsonl, oldest
// first; none when it is missing.
func (s Files) CreatedAgents(context.Context) ([]CreatedAgent, error) {
	fl := createdLines(s.top())
	var out []CreatedAgent
	if _, err := fl.read(nil, func() {}, func(a CreatedAgent, _ int64) { out = append(out, a) }); err != nil {
		return nil, fmt.Errorf("reading the agents callrun created, in %s: %w", fl.path, err)
	}
	return out, nil
}

// RememberAgent inserts a into the table callrun_agents_created, under
// the campaign's name.
func (p *Postgres) RememberAgent(ctx context.Context, a CreatedAgent) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO callrun_agents_created (campaign, name, agent_id, created_at, run) VALUES ($1, $2, $3, $4, $5)`,
		p.campaign, a.Name, a.ID, a.At.UTC().Truncate(time.Microsecond), a.Run)
	if err != nil {
		return p.wrap(fmt.Sprintf("remembering agent %q (id %s) in", a.Name, a.ID), err)
	}
	return nil
}

// CreatedAgents returns the campaign's rows of callrun_agents_created,
// oldest first.
func (p *Postgres) CreatedAgents(ctx context.Context) ([]CreatedAgent, error) {
	rows, err := p.pool.Query(ctx, `SELECT name, agent_id, created_at, run FROM callrun_agents_created WHERE campaign = $1 ORDER BY id`, p.campaign)
	if err != nil {
		return nil, p.wrap("reading the agents callrun created from", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (CreatedAgent, error) {
		var a CreatedAgent
		err := r.Scan(&a.Name, &a.ID, &a.At, &a.Run)
		a.At = a.At.UTC()
		return a, err
	})
	if err != nil {
		return nil, p.wrap("reading the agents callrun created from", err)
	}
	return out, nil
}
