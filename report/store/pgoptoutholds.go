package store

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
)

// anyHeld is an SQL expression: whether an opt-out is held in the
// database (callrun_opt_out_holds), a hold with no resolution after it.
const anyHeld = `EXISTS (SELECT 1 FROM callrun_opt_out_holds h WHERE NOT h.resolved AND NOT EXISTS (
	SELECT 1 FROM callrun_opt_out_holds r WHERE r.resolved AND r.campaign = h.campaign AND r.key = h.key AND r.id > h.id))`

// Held returns the holds of the database not resolved, oldest first.
func (l *pgDoNotCall) Held(ctx context.Context) ([]OptOutHold, error) {
	holds, err := l.held(ctx, l.p.pool)
	if err != nil {
		return nil, l.p.wrap("reading the opt-out holds from", err)
	}
	return holds, nil
}

func (l *pgDoNotCall) held(ctx context.Context, q pgQuerier) ([]OptOutHold, error) {
	rows, err := q.Query(ctx, `
SELECT h.campaign, h.key, h.at, h.reason FROM callrun_opt_out_holds h
WHERE NOT h.resolved AND NOT EXISTS (
	SELECT 1 FROM callrun_opt_out_holds r WHERE r.resolved AND r.campaign = h.campaign AND r.key = h.key AND r.id > h.id)
ORDER BY h.id`)
	if err != nil {
		return nil, err
	}
	var out []OptOutHold
	var h OptOutHold
	if _, err := pgx.ForEachRow(rows, []any{&h.Campaign, &h.Key, &h.At, &h.Reason}, func() error {
		h.At = h.At.UTC()
		out = append(out, h)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// heldError is the *OptOutHeldError of the holds open now, or the error
// reading them.
func (l *pgDoNotCall) heldError(ctx context.Context) error {
	holds, err := l.Held(ctx)
	if err != nil {
		return err
	}
	return &OptOutHeldError{Holds: holds, Where: l.String()}
}

// Hold inserts h, in a transaction under the list's writers' lock,
// unless its campaign's delivery was held before (open or resolved).
func (l *pgDoNotCall) Hold(ctx context.Context, h OptOutHold) (bool, error) {
	h.Resolved, h.Note = false, ""
	return l.writeHold(ctx, h)
}

// Resolve inserts the resolution of the hold of campaign's delivery key,
// when one is open.
func (l *pgDoNotCall) Resolve(ctx context.Context, campaign, key, note string) (bool, error) {
	return l.writeHold(ctx, OptOutHold{Campaign: campaign, Key: key, Resolved: true, Note: note})
}

func (l *pgDoNotCall) writeHold(ctx context.Context, h OptOutHold) (bool, error) {
	if h.Campaign == "" || h.Key == "" {
		return false, errors.New("an opt-out hold needs its campaign and delivery key")
	}
	if h.At.IsZero() {
		h.At = time.Now()
	}
	wrote := false
	err := pgx.BeginFunc(ctx, l.p.pool, func(tx pgx.Tx) error {
		wrote = false
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(dncLock)); err != nil {
			return err
		}
		holds, err := l.held(ctx, tx)
		if err != nil {
			return err
		}
		open := false
		for _, o := range holds {
			open = open || holdKey(o) == holdKey(h)
		}
		var ever bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM callrun_opt_out_holds WHERE campaign = $1 AND key = $2)`, h.Campaign, h.Key).Scan(&ever); err != nil {
			return err
		}
		if !h.Resolved && ever || h.Resolved && !open {
			return nil // held before, or nothing to resolve
		}
		if _, err := tx.Exec(ctx, `INSERT INTO callrun_opt_out_holds (campaign, key, at, resolved, reason, note) VALUES ($1, $2, $3, $4, $5, $6)`,
			h.Campaign, h.Key, h.At.UTC().Truncate(time.Microsecond), h.Resolved, h.Reason, h.Note); err != nil {
			return err
		}
		wrote = true
		return nil
	})
	if err != nil {
		return false, l.p.wrap("writing the opt-out holds to", err)
	}
	return wrote, nil
}
