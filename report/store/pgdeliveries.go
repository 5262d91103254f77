package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/callrun/callrun/report/inorder"
	"github.com/jackc/pgx/v5"
)

// OpenDeliveries opens the campaign's rows of the table callrun_deliveries
// for `callrun listen`. It takes no lock: any number of listens, on any
// machines, may store deliveries at once. The table's key (campaign,
// delivery key) stores a delivery once whichever of them receives it, and
// a listen answers a retry only once the row it found is committed.
func (p *Postgres) OpenDeliveries(context.Context) (*Deliveries, error) {
	return newDeliveries("the deliveries of campaign "+p.campaign+" in the "+p.where, &pgDeliveries{p: p}, nil, pgDeliveryWriters), nil
}

// pgDeliveryWriters is how many INSERTs of deliveries a listen has in
// flight at once: the database runs them side by side while the next
// batch gathers.
const pgDeliveryWriters = 4

// pgDeliveries commits batches of deliveries with one INSERT each, durable
// (synchronous_commit on) before it returns.
type pgDeliveries struct{ p *Postgres }

// insertDeliveries stores the deliveries $2..$4 of campaign $1 but those
// whose key, or legacy key ($5, "" for none), a row holds already.
const insertDeliveries = `
INSERT INTO callrun_deliveries (campaign, key, received_at, delivery)
SELECT $1, u.key, u.at, u.delivery
FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::text[]) WITH ORDINALITY AS u(key, at, delivery, legacy, ord)
WHERE u.legacy = '' OR NOT EXISTS (SELECT 1 FROM callrun_deliveries d WHERE d.campaign = $1 AND d.key = u.legacy)
ORDER BY u.ord
ON CONFLICT (campaign, key) DO NOTHING
RETURNING key`

// deliveryEraseLock is the advisory lock key (one bigint) that each
// commit of deliveries takes shared and [Postgres.EraseDeliveries]
// exclusive: an erase waits for the commits in flight, whose rows it
// then sees, and a commit after it finds the erased set that erase
// followed.
const deliveryEraseLock = 0x63616c6c657264 // "callerd"

// commit stores the batch in one transaction under deliveryEraseLock,
// shared (taken by eraseErased), first turning into its erased form each delivery a number of
// which is in the erased set now ([Deliveries.ReadNumbersWith]).
func (k *pgDeliveries) commit(b *deliveryBatch) error {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	var added []string
	err := pgx.BeginFunc(ctx, k.p.pool, func(tx pgx.Tx) error {
		if err := k.eraseErased(ctx, tx, b); err != nil {
			return err
		}
		keys := make([]string, len(b.ds))
		ats := make([]time.Time, len(b.ds))
		lines := make([]string, len(b.ds))
		legacy := make([]string, len(b.ds))
		for i, d := range b.ds {
			keys[i], ats[i], legacy[i] = d.Key, d.At, d.Legacy
			lines[i] = string(b.lines[i][:len(b.lines[i])-1]) // without the newline
		}
		rows, err := tx.Query(ctx, insertDeliveries, k.p.campaign, keys, ats, lines, legacy)
		if err != nil {
			return err
		}
		added, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	if err != nil {
		return k.p.wrap("storing deliveries in", err)
	}
	isNew := make(map[string]bool, len(added))
	for _, key := range added {
		isNew[key] = true
	}
	for i, d := range b.ds {
		b.isNew[i] = isNew[d.Key]
	}
	return nil
}

// eraseErased turns into its erased form each delivery of the batch a
// number of which the erased set holds, read in tx. A database with no
// erasure key has erased nobody: nothing more is read, and no delivery's
// numbers are read from its fields (b.numbers).
func (k *pgDeliveries) eraseErased(ctx context.Context, tx pgx.Tx, b *deliveryBatch) error {
	// One round trip: the lock, then (each statement seeing what was
	// committed before the lock was granted) the keys, and, when there
	// are none, whether the erased set holds a hash anyway: a restore
	// that left the key out stores nothing (fail closed).
	e := &pgErasure{p: k.p}
	batch := &pgx.Batch{}
	batch.Queue(`SELECT pg_advisory_xact_lock_shared($1)`, int64(deliveryEraseLock))
	batch.Queue(selectKeys)
	batch.Queue(`SELECT coalesce((SELECT hash FROM callrun_erased WHERE NOT EXISTS (SELECT 1 FROM callrun_keys) LIMIT 1), '')`)
	br := tx.SendBatch(ctx, batch)
	if _, err := br.Exec(); err != nil {
		br.Close()
		return err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return err
	}
	keys, err := e.scanKeys(rows)
	var unkeyed string
	if err == nil {
		err = br.QueryRow().Scan(&unkeyed)
	}
	if err := errors.Join(err, br.Close()); err != nil {
		return err
	}
	if unkeyed != "" {
		return CheckHashKey(keys, unkeyed, "the table callrun_erased")
	}
	if len(keys.keys) == 0 || b.numbers == nil {
		return nil
	}
	of := map[string][]int{}
	for i, d := range b.ds {
		if d.Erased {
			continue
		}
		for _, n := range b.numbers(d.Fields) {
			of[n] = append(of[n], i)
		}
	}
	if len(of) == 0 {
		return nil
	}
	byHash := map[string]string{}
	for n := range of {
		for _, h := range keys.Hashes(n) {
			byHash[h] = n
		}
	}
	rows, err = tx.Query(ctx, `SELECT hash FROM callrun_erased WHERE hash = ANY($1::text[])`, slices.Collect(maps.Keys(byHash)))
	if err != nil {
		return err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	for _, h := range found {
		for _, i := range of[byHash[h]] {
			if b.ds[i].Erased {
				continue
			}
			if err := b.erase(i, keys); err != nil {
				return err
			}
		}
	}
	return nil
}

func (k *pgDeliveries) close() error { return nil } // the pool is the store's

// ReadDeliveries returns the campaign's deliveries from the table, in the
// order they were stored.
func (p *Postgres) ReadDeliveries(ctx context.Context) ([]Delivery, error) {
	return p.queryDeliveries(ctx, nil, `SELECT id, delivery FROM callrun_deliveries WHERE campaign = $1 ORDER BY id`, p.campaign)
}

// EachDelivery calls fn with each of the campaign's rows of the
// deliveries table, in order, one at a time.
func (p *Postgres) EachDelivery(ctx context.Context, fn func(Delivery) error) error {
	return p.eachDelivery(ctx, func(_ int64, d Delivery) error { return fn(d) }, `SELECT id, delivery FROM callrun_deliveries WHERE campaign = $1 ORDER BY id`, p.campaign)
}

// LastDeliveryAt returns when the campaign's delivery stored last was
// received, zero when it has none.
func (p *Postgres) LastDeliveryAt(ctx context.Context) (time.Time, error) {
	var at time.Time
	err := p.pool.QueryRow(ctx, `SELECT received_at FROM callrun_deliveries WHERE campaign = $1 ORDER BY id DESC LIMIT 1`, p.campaign).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, p.wrap("reading the deliveries from", err)
	}
	return at.UTC(), nil
}

// queryDeliveries returns the deliveries of the rows (id, delivery) that
// sql selects, in order, calling each, if set, with each row's id; on an
// error, those read before it.
func (p *Postgres) queryDeliveries(ctx context.Context, each func(id int64), sql string, args ...any) ([]Delivery, error) {
	var out []Delivery
	err := p.eachDelivery(ctx, func(id int64, d Delivery) error {
		out = append(out, d)
		if each != nil {
			each(id)
		}
		return nil
	}, sql, args...)
	return out, err
}

// eachDelivery calls fn with each row (id, delivery) that sql selects, in
// order, one at a time, and stops at its first error.
func (p *Postgres) eachDelivery(ctx context.Context, fn func(id int64, d Delivery) error, sql string, args ...any) error {
	rows, err := p.pool.Query(ctx, sql, args...)
	if err != nil {
		return p.wrap("reading the deliveries from", err)
	}
	var id int64
	var line []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &line}, func() error {
		var d Delivery
		if err := json.Unmarshal(line, &d); err != nil || d.Key == "" {
			return fmt.Errorf("deliveries of campaign %s in the %s, row id %d: not a delivery", p.campaign, p.where, id)
		}
		return fn(id, d)
	})
	if err != nil {
		return p.wrap("reading the deliveries from", err)
	}
	return nil
}

// pgTailWindow is how far behind the newest row a row of the deliveries
// table may still become visible: ids are given as rows are inserted, but
// rows are seen as their transactions commit, so a row may appear after
// rows with greater ids (another listen's commit that took longer). A
// feed looks that far back, skipping the rows it returned.
const pgTailWindow = 10000

// FollowDeliveries returns a feed of the campaign's deliveries stored in
// the table from now on, by whichever listen: each call returns those
// committed since the last, each once.
func (p *Postgres) FollowDeliveries(ctx context.Context) (func() ([]Delivery, error), error) {
	t := &pgTail{p: p}
	if err := p.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM callrun_deliveries`).Scan(&t.low); err != nil {
		return nil, p.wrap("reading the deliveries from", err)
	}
	// The rows already there are not the feed's: seen, as far back as a
	// late commit may still appear.
	rows, err := p.pool.Query(ctx, `SELECT id FROM callrun_deliveries WHERE campaign = $1 AND id > $2`, p.campaign, t.low-pgTailWindow)
	if err != nil {
		return nil, p.wrap("reading the deliveries from", err)
	}
	if t.seen, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
		return nil, p.wrap("reading the deliveries from", err)
	}
	t.low -= pgTailWindow
	return t.next, nil
}

// pgTail is a feed of a campaign's rows of the deliveries table.
type pgTail struct {
	p    *Postgres
	low  int64   // every row at or below it is the feed's past
	seen []int64 // the campaign's ids above low the feed has passed
}

func (t *pgTail) next() ([]Delivery, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	out, err := t.p.queryDeliveries(ctx, func(id int64) { t.seen = append(t.seen, id) }, `
SELECT id, delivery FROM callrun_deliveries
WHERE campaign = $1 AND id > $2 AND NOT (id = ANY($3))
ORDER BY id`, t.p.campaign, t.low, t.seen)
	if err != nil {
		return out, err
	}
	top := t.low
	for _, id := range t.seen {
		top = max(top, id)
	}
	if top-pgTailWindow > t.low {
		t.low = top - pgTailWindow
		t.seen = slices.DeleteFunc(t.seen, func(id int64) bool { return id <= t.low })
	}
	return out, nil
}

// EraseDeliveries replaces, in the campaign's rows of the deliveries
// table, each delivery that holds one of numbers (E.164, as opts.Numbers
// reads a delivery's fields) by its erased form ([Delivery.ErasedForm]),
// in one transaction, and returns how many it replaced. It first waits
// for the deliveries being stored (deliveryEraseLock): the erase follows
// the person's entry in the erased set, so a delivery stored after it is
// stored erased, and one stored before it is in the rows it reads. A row whose
// erased key another row holds already (a retry stored erased since the
// erased set took the person) is deleted: that row is the delivery.
// Rows erased already are left as they are, so erasing again changes
// nothing.
func (p *Postgres) EraseDeliveries(ctx context.Context, numbers []string, opts DeliveryEraseOptions) (int, error) {
	if opts.Numbers == nil || opts.Keys == nil {
		return 0, fmt.Errorf("erasing people from the deliveries of campaign %s: no erasure key, or no reading of a delivery's numbers", p.campaign)
	}
	match := opts.match(numbers)
	type hit struct {
		id   int64
		d    Delivery
		line string
	}
	var hits []hit
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(deliveryEraseLock)); err != nil {
			return p.wrap("waiting for the deliveries being stored in", err)
		}
		// The lock keeps every writer of the table out (each commit of
		// deliveries takes it shared): the rows need no lock of their own,
		// which would write every row of the table.
		rows, err := tx.Query(ctx, `SELECT id, delivery FROM callrun_deliveries WHERE campaign = $1 ORDER BY id`, p.campaign)
		if err != nil {
			return p.wrap("reading the deliveries from", err)
		}
		type row struct {
			id   int64
			line []byte
		}
		next := func() (row, bool, error) {
			if !rows.Next() {
				return row{}, false, rows.Err()
			}
			var r row
			err := rows.Scan(&r.id, &r.line)
			return r, err == nil, err
		}
		err = inorder.Items(next, func(r row) (*hit, error) {
			e, ok, err := eraseDelivery(r.line, opts.Numbers, opts.Keys, match)
			if err != nil {
				return nil, fmt.Errorf("row id %d: %w", r.id, err)
			}
			if !ok {
				return nil, nil
			}
			b, err := json.Marshal(e)
			return &hit{r.id, e, string(b)}, err
		}, func(r row, h *hit) error {
			if h != nil {
				hits = append(hits, *h)
			}
			return nil
		})
		rows.Close()
		if err != nil {
			return p.wrap("reading the deliveries from", err)
		}
		// Each hit takes its erased form, unless another row holds its
		// erased key already: that row is the delivery, and the hit goes.
		b := &pgx.Batch{}
		for _, h := range hits {
			b.Queue(`
UPDATE callrun_deliveries SET key = $3, delivery = $4
WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM callrun_deliveries o WHERE o.campaign = $2 AND o.key = $3 AND o.id <> $1)`,
				h.id, p.campaign, h.d.Key, h.line)
		}
		var gone []int64
		br := tx.SendBatch(ctx, b)
		for _, h := range hits {
			tag, err := br.Exec()
			if err != nil {
				br.Close()
				return p.wrap("erasing people from the deliveries in", err)
			}
			if tag.RowsAffected() == 0 {
				gone = append(gone, h.id)
			}
		}
		if err := br.Close(); err != nil {
			return p.wrap("erasing people from the deliveries in", err)
		}
		if len(gone) > 0 {
			if _, err := tx.Exec(ctx, `DELETE FROM callrun_deliveries WHERE id = ANY($1)`, gone); err != nil {
				return p.wrap("erasing people from the deliveries in", err)
			}
		}
		if len(hits) > 0 && opts.BeforeReplace != nil {
			return opts.BeforeReplace()
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("erasing people from the deliveries of campaign %s: %w", p.campaign, err)
	}
	if len(hits) > 0 && opts.AfterReplace != nil {
		if err := opts.AfterReplace(); err != nil {
			return len(hits), err
		}
	}
	return len(hits), nil
}
