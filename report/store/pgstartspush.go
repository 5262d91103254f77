package store

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// copyStartsChunk is how many call starts CopyCallStarts copies a
// transaction: their numbers' locks stay well inside the server's lock
// table.
const copyStartsChunk = 1000

// CopyCallStarts adds call starts kept in files ([CallStartsFile.Recent])
// to the database's, for `state push`: once a campaign's runs count
// contact pressure in the database, the database must know the calls the
// machine made from files. A start the database holds already (the same
// ID at the same time: a second push, or --merge) is not added again; one
// given back in starts is added given back, or given back in the
// database if it is there already. Each transaction of up to 1,000
// starts takes their numbers' locks, as a run's batch does, so a run
// counting one of them meanwhile waits and then sees them. It returns how
// many starts it added, and how many it gave back that the database
// counted.
func (p *Postgres) CopyCallStarts(ctx context.Context, starts []CallStart) (added, released int, err error) {
	starts = slices.Clone(starts)
	slices.SortStableFunc(starts, func(a, b CallStart) int { return cmp.Compare(a.Number, b.Number) })
	for len(starts) > 0 {
		chunk := starts[:min(len(starts), copyStartsChunk)]
		starts = starts[len(chunk):]
		var a, r int64
		err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
			var err error
			a, r, err = p.copyStarts(ctx, tx, chunk)
			return err
		})
		if err != nil {
			return added, released, p.wrap("copying call starts into", err)
		}
		added += int(a)
		released += int(r)
	}
	return added, released, nil
}

// copyStarts copies starts within tx.
func (p *Postgres) copyStarts(ctx context.Context, tx pgx.Tx, starts []CallStart) (added, released int64, err error) {
	n := len(starts)
	numbers, hashes, ats, ids, campaigns, agents, given := make([]string, n), make([]string, n), make([]time.Time, n), make([]string, n), make([]string, n), make([]string, n), make([]bool, n)
	for i, s := range starts {
		// The database keeps microseconds: the time compared is the time
		// stored. An erased person's start keeps its hash, number ''.
		numbers[i], hashes[i], ats[i], ids[i], campaigns[i], agents[i], given[i] = s.Number, s.Hash, s.At.UTC().Truncate(time.Microsecond), s.ID, s.Campaign, s.Agent, s.Released
	}
	distinct := slices.Compact(slices.Clone(numbers)) // sorted by number
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(n, $2)) FROM (SELECT unnest($1::text[]) AS n ORDER BY 1) AS u`, distinct, int64(pressureLockSeed)); err != nil {
		return 0, 0, err
	}
	tag, err := tx.Exec(ctx, `
UPDATE callrun_call_starts s SET released = true
FROM unnest($1::text[], $2::timestamptz[], $3::bool[]) AS u(i, at, r)
WHERE u.r AND s.start_id = u.i AND s.at = u.at AND NOT s.released`, ids, ats, given)
	if err != nil {
		return 0, 0, err
	}
	released = tag.RowsAffected()
	tag, err = tx.Exec(ctx, `
INSERT INTO callrun_call_starts (number, at, start_id, campaign, agent, released, hash)
SELECT u.n, u.at, u.i, u.c, u.a, u.r, u.h FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[], $6::bool[], $7::text[]) AS u(n, at, i, c, a, r, h)
WHERE NOT EXISTS (SELECT 1 FROM callrun_call_starts s WHERE s.start_id = u.i AND s.at = u.at)`,
		numbers, ats, ids, campaigns, agents, given, hashes)
	if err != nil {
		return 0, 0, err
	}
	return tag.RowsAffected(), released, nil
}

// CopyConversations adds conversations kept in files
// ([CallStartsFile.RecentConversations]) to the database's, for `state
// push`, beside the call starts: a campaign on the database with Reg F's
// preset must hold a number the machine's listen heard answered. One the
// database holds already (the same campaign and delivery key) is not
// added again. It returns how many it added.
func (p *Postgres) CopyConversations(ctx context.Context, conversations []Conversation) (int, error) {
	n := len(conversations)
	numbers, hashes, ats, campaigns, keys := make([]string, n), make([]string, n), make([]time.Time, n), make([]string, n), make([]string, n)
	for i, c := range conversations {
		numbers[i], hashes[i], ats[i], campaigns[i], keys[i] = c.Number, c.Hash, c.At.UTC(), c.Campaign, c.Key
	}
	tag, err := p.pool.Exec(ctx, `INSERT INTO callrun_conversations (number, at, campaign, key, hash) SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::text[], $4::text[], $5::text[]) ON CONFLICT (campaign, key) DO NOTHING`,
		numbers, ats, campaigns, keys, hashes)
	if err != nil {
		return 0, p.wrap("copying conversations into", err)
	}
	return int(tag.RowsAffected()), nil
}
