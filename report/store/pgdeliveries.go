package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// OpenDeliveries opens the campaign's rows of the table callrun_deliveries
// for `callrun listen`. It takes no lock: any number of listens, on any
// machines, may store deliveries at once. The table's key (campaign,
// delivery key) stores a delivery once whichever of them receives it, and
// a listen answers a retry only once the row it found is committed.
func (p *Postgres) OpenDeliveries(context.Context) (*Deliveries, error) {
	return newDeliveries("the deliveries of campaign "+p.campaign+" in the "+p.where, &pgDeliveries{p: p}, nil), nil
}

// pgDeliveries commits batches of deliveries with one INSERT each, durable
// (synchronous_commit on) before it returns.
type pgDeliveries struct{ p *Postgres }

const insertDeliveries = `
INSERT INTO callrun_deliveries (campaign, key, received_at, delivery)
SELECT $1, u.key, u.at, u.delivery
FROM unnest($2::text[], $3::timestamptz[], $4::text[]) WITH ORDINALITY AS u(key, at, delivery, ord)
ORDER BY u.ord
ON CONFLICT (campaign, key) DO NOTHING
RETURNING key`

func (k *pgDeliveries) commit(b *deliveryBatch) error {
	keys := make([]string, len(b.ds))
	ats := make([]time.Time, len(b.ds))
	lines := make([]string, len(b.ds))
	for i, d := range b.ds {
		keys[i], ats[i] = d.Key, d.At
		lines[i] = string(b.lines[i][:len(b.lines[i])-1]) // without the newline
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	rows, err := k.p.pool.Query(ctx, insertDeliveries, k.p.campaign, keys, ats, lines)
	if err != nil {
		return k.p.wrap("storing deliveries in", err)
	}
	added, err := pgx.CollectRows(rows, pgx.RowTo[string])
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

func (k *pgDeliveries) close() error { return nil } // the pool is the store's

// ReadDeliveries returns the campaign's deliveries from the table, in the
// order they were stored.
func (p *Postgres) ReadDeliveries(ctx context.Context) ([]Delivery, error) {
	rows, err := p.pool.Query(ctx, `SELECT id, delivery FROM callrun_deliveries WHERE campaign = $1 ORDER BY id`, p.campaign)
	if err != nil {
		return nil, p.wrap("reading the deliveries from", err)
	}
	var out []Delivery
	var id int64
	var line []byte
	_, err = pgx.ForEachRow(rows, []any{&id, &line}, func() error {
		var d Delivery
		if err := json.Unmarshal(line, &d); err != nil || d.Key == "" {
			return fmt.Errorf("deliveries of campaign %s in the %s, row id %d: not a delivery", p.campaign, p.where, id)
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, p.wrap("reading the deliveries from", err)
	}
	return out, nil
}

func (p *Postgres) readDeliveries(ctx context.Context) ([]Delivery, error) {
	return p.ReadDeliveries(ctx)
}
