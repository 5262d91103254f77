package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Erasure returns the database's erasure keys and erased set, shared by
// every campaign whose state is in the database, on every machine.
func (p *Postgres) Erasure() (ErasureStore, error) { return &pgErasure{p: p}, nil }

// pgErasure is the erasure keys in the table callrun_keys and the erased
// set in callrun_erased. Its writers take the do-not-call list's advisory
// lock (dncLock), as an erase changes the list too.
type pgErasure struct{ p *Postgres }

var _ ErasureStore = (*pgErasure)(nil)

func (e *pgErasure) String() string { return "erased set in the " + e.p.where }

// where is where the keys are, for errors.
func (e *pgErasure) where() string { return "the table callrun_keys of the " + e.p.where }

func (e *pgErasure) Keys(ctx context.Context) (*ErasureKeys, error) {
	keys, err := e.keys(ctx, e.p.pool)
	if err != nil {
		return nil, e.p.wrap("reading the erasure keys from", err)
	}
	return keys, nil
}

// keys reads the table callrun_keys, oldest key first.
func (e *pgErasure) keys(ctx context.Context, q pgQuerier) (*ErasureKeys, error) {
	rows, err := q.Query(ctx, selectKeys)
	if err != nil {
		return nil, err
	}
	return e.scanKeys(rows)
}

// selectKeys reads the table callrun_keys, oldest key first.
const selectKeys = `SELECT id, key, at FROM callrun_keys ORDER BY at, id`

// scanKeys reads the keys selectKeys' rows hold.
func (e *pgErasure) scanKeys(rows pgx.Rows) (*ErasureKeys, error) {
	k := &ErasureKeys{where: e.where()}
	var key erasureKey
	if _, err := pgx.ForEachRow(rows, []any{&key.id, &key.key, &key.at}, func() error {
		if len(key.key) != 32 || keyID(key.key) != key.id {
			return fmt.Errorf("%s: the key %s is damaged (not the 32 bytes its id was made of): restore the table from a backup", e.where(), key.id)
		}
		key.at = key.at.UTC()
		k.keys = append(k.keys, key)
		key = erasureKey{}
		return nil
	}); err != nil {
		return nil, err
	}
	return k, nil
}

// MakeKey inserts a key, under the list writers' lock, when the table
// holds none, then reads the table.
func (e *pgErasure) MakeKey(ctx context.Context) (*ErasureKeys, error) {
	key, err := newKey(time.Now())
	if err != nil {
		return nil, err
	}
	var keys *ErasureKeys
	err = pgx.BeginFunc(ctx, e.p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(dncLock)); err != nil {
			return err
		}
		if keys, err = e.keys(ctx, tx); err != nil || len(keys.keys) > 0 {
			return err
		}
		// An erased set whose key is lost: a new key would not read it.
		if err := e.unkeyed(ctx, tx, keys); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
INSERT INTO callrun_keys (id, key, at) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING`, key.id, key.key, key.at.Truncate(time.Microsecond)); err != nil {
			return err
		}
		keys, err = e.keys(ctx, tx)
		return err
	})
	if errors.Is(err, ErrErasureKeyMissing) {
		return nil, err
	}
	if err != nil {
		return nil, e.p.wrap("making the erasure key in", err)
	}
	return keys, nil
}

// AddErased inserts the entries, under the list writers' lock, each hash
// once, checking each against the keys the table holds.
func (e *pgErasure) AddErased(ctx context.Context, erased []ErasedEntry) ([]ErasedEntry, error) {
	var wrote []ErasedEntry
	err := pgx.BeginFunc(ctx, e.p.pool, func(tx pgx.Tx) error {
		wrote = nil
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(dncLock)); err != nil {
			return e.p.wrap("adding to the erased set in", err)
		}
		keys, err := e.keys(ctx, tx)
		if err != nil {
			return e.p.wrap("reading the erasure keys from", err)
		}
		if err := e.unkeyed(ctx, tx, keys); err != nil {
			return err
		}
		hashes, ats, allow, why := make([]string, 0, len(erased)), make([]time.Time, 0, len(erased)), make([]bool, 0, len(erased)), make([]string, 0, len(erased))
		byHash := map[string]ErasedEntry{}
		for _, x := range erased {
			if err := x.check(); err != nil {
				return err
			}
			if err := CheckHashKey(keys, x.Hash, "an erased person's entry to add"); err != nil {
				return err
			}
			if _, dup := byHash[x.Hash]; dup {
				continue
			}
			if x.At.IsZero() {
				x.At = time.Now()
			}
			x.At = x.At.UTC().Truncate(time.Microsecond)
			byHash[x.Hash] = x
			hashes, ats, allow, why = append(hashes, x.Hash), append(ats, x.At), append(allow, x.AllowContact), append(why, x.Why)
		}
		rows, err := tx.Query(ctx, `
INSERT INTO callrun_erased (hash, at, allow_contact, why)
SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::boolean[], $4::text[])
ON CONFLICT (hash) DO NOTHING
RETURNING hash`, hashes, ats, allow, why)
		if err != nil {
			return e.p.wrap("adding to the erased set in", err)
		}
		added, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return e.p.wrap("adding to the erased set in", err)
		}
		isNew := map[string]bool{}
		for _, h := range added {
			isNew[h] = true
		}
		for _, h := range hashes { // in the order given
			if isNew[h] {
				wrote = append(wrote, byHash[h])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return wrote, nil
}

// OnErased first refuses a set that holds a hash of a key the table
// lacks, then asks for the numbers' hashes, 10,000 numbers at a time.
func (e *pgErasure) OnErased(ctx context.Context, numbers []string) (map[string]bool, error) {
	keys, err := e.Keys(ctx)
	if err != nil {
		return nil, err
	}
	if err := e.unkeyed(ctx, e.p.pool, keys); err != nil {
		return nil, err
	}
	on := map[string]bool{}
	if len(keys.keys) == 0 {
		return on, nil // no key, so no hash either
	}
	for len(numbers) > 0 {
		batch := numbers[:min(len(numbers), pgOnListBatch)]
		numbers = numbers[len(batch):]
		of := map[string]string{}
		hashes := make([]string, 0, len(batch)*len(keys.keys))
		for _, n := range batch {
			for _, h := range keys.Hashes(n) {
				of[h] = n
				hashes = append(hashes, h)
			}
		}
		rows, err := e.p.pool.Query(ctx, `SELECT hash FROM callrun_erased WHERE hash = ANY($1::text[])`, hashes)
		if err != nil {
			return nil, e.p.wrap("reading the erased set from", err)
		}
		found, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return nil, e.p.wrap("reading the erased set from", err)
		}
		for _, h := range found {
			on[of[h]] = true
		}
	}
	return on, nil
}

// unkeyed returns an error wrapping [ErrErasureKeyMissing] when the
// erased set holds a hash of a key that keys lack.
func (e *pgErasure) unkeyed(ctx context.Context, q pgRowQuerier, keys *ErasureKeys) error {
	ids := make([]string, len(keys.keys))
	for i, k := range keys.keys {
		ids[i] = k.id
	}
	var hash string
	err := q.QueryRow(ctx, `SELECT hash FROM callrun_erased WHERE split_part(hash, ':', 2) <> ALL($1::text[]) LIMIT 1`, ids).Scan(&hash)
	switch {
	case err == nil:
		return CheckHashKey(keys, hash, "the table callrun_erased")
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	}
	return e.p.wrap("reading the erased set from", err)
}

// pgRowQuerier is a pool or a transaction, for a query of one row.
type pgRowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func (e *pgErasure) ErasedEntries(ctx context.Context) ([]ErasedEntry, error) {
	rows, err := e.p.pool.Query(ctx, `SELECT hash, at, allow_contact, why FROM callrun_erased ORDER BY at, hash`)
	if err != nil {
		return nil, e.p.wrap("reading the erased set from", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ErasedEntry, error) {
		var x ErasedEntry
		err := r.Scan(&x.Hash, &x.At, &x.AllowContact, &x.Why)
		x.At = x.At.UTC()
		return x, err
	})
	if err != nil {
		return nil, e.p.wrap("reading the erased set from", err)
	}
	return out, nil
}

// copyKeys copies keys into the table, each id once: a database that has
// a key of its own keeps it beside them. It returns how many were new.
func (e *pgErasure) copyKeys(ctx context.Context, keys *ErasureKeys) (int, error) {
	added := 0
	err := pgx.BeginFunc(ctx, e.p.pool, func(tx pgx.Tx) error {
		added = 0
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(dncLock)); err != nil {
			return err
		}
		for _, k := range keys.keys {
			tag, err := tx.Exec(ctx, `INSERT INTO callrun_keys (id, key, at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`, k.id, k.key, k.at.Truncate(time.Microsecond))
			if err != nil {
				return err
			}
			if tag.RowsAffected() == 1 {
				added++
				continue
			}
			var there []byte
			if err := tx.QueryRow(ctx, `SELECT key FROM callrun_keys WHERE id = $1`, k.id).Scan(&there); err != nil {
				return err
			}
			if !bytes.Equal(there, k.key) {
				return fmt.Errorf("the database holds another erasure key of the same id %s as %s: its hashes and the files' cannot both be kept; ask for help before pushing", k.id, keys.where)
			}
		}
		return nil
	})
	if err != nil {
		return 0, e.p.wrap("copying the erasure keys into", err)
	}
	return added, nil
}
