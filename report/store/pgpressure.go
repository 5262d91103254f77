package store

import (
	"cmp"
	"context"
	"fmt"

	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// CallStarts returns the database's call starts, counted by the contact
// pressure of every campaign whose state is in the database, on every
// machine.
func (p *Postgres) CallStarts() (CallStarts, error) { return &pgCallStarts{p: p}, nil }

// CalledBefore is Store.CalledBefore: nil, as PostgreSQL keeps one
// journal a campaign, which every shard and machine shares.
func (p *Postgres) CalledBefore(context.Context, string) (*ContactStarts, error) { return nil, nil }

// pgCallStarts is the call starts in the table callrun_call_starts.
type pgCallStarts struct{ p *Postgres }

// pressureLockSeed seeds the hash of a number into the advisory lock key
// (one bigint) a transaction holds while it counts the number's starts.
const pressureLockSeed = 0x70726573 // "pres"

func (l *pgCallStarts) String() string { return "call starts in the " + l.p.where }

func (l *pgCallStarts) Compact(time.Time) (int, int, error) { return 0, 0, nil }

// Callers reads the campaigns and shards of the table's starts.
func (l *pgCallStarts) Callers(ctx context.Context) ([]Caller, error) {
	rows, err := l.p.pool.Query(ctx, `SELECT DISTINCT campaign, coalesce(substring(start_id from '^(.* shard -?[0-9]+) '), '') FROM callrun_call_starts WHERE campaign <> '' AND start_id NOT LIKE 'service call %' ORDER BY 1, 2`)
	if err != nil {
		return nil, l.p.wrap("reading the campaigns of the call starts in", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Caller, error) {
		var c Caller
		return c, r.Scan(&c.Campaign, &c.Journal)
	})
	if err != nil {
		return nil, l.p.wrap("reading the campaigns of the call starts in", err)
	}
	return out, nil
}

// History reads number's starts, an erased person's (under the hash of
// number) among them.
func (l *pgCallStarts) History(ctx context.Context, number string) ([]CallStart, error) {
	keys, err := pgErasedKeys(ctx, l.p.pool, l.p, "callrun_call_starts")
	if err != nil {
		return nil, err
	}
	rows, err := l.p.pool.Query(ctx, `SELECT number, hash, at, start_id, campaign, agent, released FROM callrun_call_starts WHERE number = $1 OR hash <> '' AND hash = ANY($2) ORDER BY at, id`, number, keys.Hashes(number))
	if err != nil {
		return nil, l.p.wrap("reading the call starts from", err)
	}
	var out []CallStart
	var s CallStart
	if _, err := pgx.ForEachRow(rows, []any{&s.Number, &s.Hash, &s.At, &s.ID, &s.Campaign, &s.Agent, &s.Released}, func() error {
		s.At = s.At.UTC()
		out = append(out, s)
		return nil
	}); err != nil {
		return nil, l.p.wrap("reading the call starts from", err)
	}
	return out, nil
}

func (l *pgCallStarts) Counted(ctx context.Context, since time.Time) (map[string][]time.Time, error) {
	return counted(ctx, l.p.pool, l.p, nil, since)
}

// pgErasedKeys returns the store's erasure keys when a row of table
// (callrun_call_starts or callrun_conversations) holds an erased
// person's hash, after checking that they hold the key of each such row
// (failing closed with [ErrErasureKeyMissing]); nil, and the keys not
// read, when none does.
func pgErasedKeys(ctx context.Context, q pgQuerier, p *Postgres, table string) (*ErasureKeys, error) {
	rows, err := q.Query(ctx, `SELECT DISTINCT split_part(hash, ':', 2) FROM `+table+` WHERE hash <> ''`)
	if err != nil {
		return nil, p.wrap("reading the erased people's key ids from", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, p.wrap("reading the erased people's key ids from", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	e, err := p.Erasure()
	if err != nil {
		return nil, err
	}
	keys, err := e.Keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the erasure keys that the table %s of the %s needs: %w", table, p.where, err)
	}
	for _, id := range ids {
		if !keys.Has(id) {
			return nil, missingKey(keys, id, "the table "+table+" of the "+p.where)
		}
	}
	return keys, nil
}

// byHashes returns the hashes of numbers under keys, and the number of
// each.
func byHashes(keys *ErasureKeys, numbers []string) ([]string, map[string]string) {
	var hashes []string
	of := map[string]string{}
	for _, n := range numbers {
		for _, h := range keys.Hashes(n) {
			hashes = append(hashes, h)
			of[h] = n
		}
	}
	return hashes, of
}

// counted reads the starts after from that count, of numbers, an erased
// person's (under the hash of a number) counted as the number's (nil: of
// every number, an erased person's under their hash).
func counted(ctx context.Context, q pgQuerier, p *Postgres, numbers []string, from time.Time) (map[string][]time.Time, error) {
	keys, err := pgErasedKeys(ctx, q, p, "callrun_call_starts")
	if err != nil {
		return nil, err
	}
	hashes, of := byHashes(keys, numbers)
	var rows pgx.Rows
	if numbers == nil {
		rows, err = q.Query(ctx, `SELECT number, hash, at FROM callrun_call_starts WHERE NOT released AND at > $1`, from)
	} else {
		rows, err = q.Query(ctx, `SELECT number, hash, at FROM callrun_call_starts WHERE (number = ANY($1) OR hash <> '' AND hash = ANY($3)) AND NOT released AND at > $2`, numbers, from, hashes)
	}
	if err != nil {
		return nil, p.wrap("reading the call starts from", err)
	}
	out := map[string][]time.Time{}
	var n, h string
	var at time.Time
	if _, err := pgx.ForEachRow(rows, []any{&n, &h, &at}, func() error {
		k := n
		if h != "" {
			k = cmp.Or(of[h], h)
		}
		out[k] = append(out[k], at)
		return nil
	}); err != nil {
		return nil, p.wrap("reading the call starts from", err)
	}
	return out, nil
}

// conversedWith reads the latest conversation after from with each of
// numbers, an erased person's (under the hash of a number) as the
// number's (nil: every number, an erased person's under their hash).
func conversedWith(ctx context.Context, q pgQuerier, p *Postgres, numbers []string, from time.Time) (map[string]time.Time, error) {
	keys, err := pgErasedKeys(ctx, q, p, "callrun_conversations")
	if err != nil {
		return nil, err
	}
	hashes, of := byHashes(keys, numbers)
	out := map[string]time.Time{}
	var rows pgx.Rows
	if numbers == nil {
		rows, err = q.Query(ctx, `SELECT number || hash, max(at) FROM callrun_conversations WHERE at > $1 GROUP BY 1`, from)
	} else {
		rows, err = q.Query(ctx, `SELECT number || hash, max(at) FROM callrun_conversations WHERE (number = ANY($1) OR hash <> '' AND hash = ANY($3)) AND at > $2 GROUP BY 1`, numbers, from, hashes)
	}
	if err != nil {
		return nil, p.wrap("reading the conversations from", err)
	}
	var n string
	var at time.Time
	if _, err := pgx.ForEachRow(rows, []any{&n, &at}, func() error {
		k := cmp.Or(of[n], n) // a row holds a number or a hash, never both
		if at.After(out[k]) {
			out[k] = at.UTC()
		}
		return nil
	}); err != nil {
		return nil, p.wrap("reading the conversations from", err)
	}
	return out, nil
}

// Converse inserts c, unless the table has its campaign and key, and
// commits it (synchronous_commit on) before it returns.
func (l *pgCallStarts) Converse(ctx context.Context, c Conversation) (bool, error) {
	if c.Erased {
		keys, err := (&pgErasure{p: l.p}).Keys(ctx)
		if err != nil {
			return false, err
		}
		if c, err = c.hashed(keys); err != nil {
			return false, err
		}
	}
	tag, err := l.p.pool.Exec(ctx, `INSERT INTO callrun_conversations (number, hash, at, campaign, key) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (campaign, key) DO NOTHING`,
		c.Number, c.Hash, c.At.UTC(), c.Campaign, c.Key)
	if err != nil {
		return false, l.p.wrap("recording a conversation in", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Conversations reads number's conversations, an erased person's (under
// the hash of number) among them.
func (l *pgCallStarts) Conversations(ctx context.Context, number string) ([]Conversation, error) {
	keys, err := pgErasedKeys(ctx, l.p.pool, l.p, "callrun_conversations")
	if err != nil {
		return nil, err
	}
	rows, err := l.p.pool.Query(ctx, `SELECT number, hash, at, campaign, key FROM callrun_conversations WHERE number = $1 OR hash <> '' AND hash = ANY($2) ORDER BY at, id`, number, keys.Hashes(number))
	if err != nil {
		return nil, l.p.wrap("reading the conversations from", err)
	}
	var out []Conversation
	var c Conversation
	if _, err := pgx.ForEachRow(rows, []any{&c.Number, &c.Hash, &c.At, &c.Campaign, &c.Key}, func() error {
		c.At = c.At.UTC()
		out = append(out, c)
		return nil
	}); err != nil {
		return nil, l.p.wrap("reading the conversations from", err)
	}
	return out, nil
}

func (l *pgCallStarts) Conversed(ctx context.Context, since time.Time) (map[string]time.Time, error) {
	return conversedWith(ctx, l.p.pool, l.p, nil, since)
}

// press commits b in tx with contact pressure: it takes a lock on each
// intent's number (in order, so that two batches never wait on each
// other), gives back the starts the batch's outcomes release, counts each
// intent's number's starts and holds back those at a limit, writes the
// journal's rows (insert), and counts a start for each intent written.
// Two transactions that count one number are one after the other, and
// the second sees the first's start: two runs never both take a number's
// last free start, and the start is committed with its intent or not at
// all.
func (k *pgSink) press(ctx context.Context, tx pgx.Tx, b *batch) error {
	journal := k.p.campaign + " shard " + strconv.FormatInt(k.code, 10)
	ops := b.pressureOps(journal, k.pressure.Campaign)
	var numbers, released, calls []string
	for _, op := range ops {
		if op.call != "" {
			calls = append(calls, op.call)
		}
		if op.start.Released {
			released = append(released, op.start.ID)
		} else {
			numbers = append(numbers, op.start.Number)
		}
	}
	slices.Sort(numbers)
	numbers = slices.Compact(numbers)
	if len(numbers) > 0 {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(n, $2)) FROM (SELECT unnest($1::text[]) AS n ORDER BY 1) AS u`, numbers, int64(pressureLockSeed)); err != nil {
			return k.p.wrap("locking the call starts in", err)
		}
	}
	if len(calls) > 0 {
		// The calls whose service starts the batch gives back, after the
		// numbers (listen takes a call's lock alone): a listen recording
		// one waits, or is waited for and its start given back.
		slices.Sort(calls)
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(c, $2)) FROM (SELECT unnest($1::text[]) AS c ORDER BY 1) AS u`, slices.Compact(calls), int64(callLockSeed)); err != nil {
			return k.p.wrap("locking the service's call starts in", err)
		}
	}
	if len(released) > 0 {
		if _, err := tx.Exec(ctx, `UPDATE callrun_call_starts SET released = true WHERE start_id = ANY($1) AND NOT released`, released); err != nil {
			return k.p.wrap("giving back call starts in", err)
		}
	}
	now := k.pressure.now()
	limits := k.pressure.Limits
	var have map[string][]time.Time
	if len(numbers) > 0 {
		var err error
		if have, err = counted(ctx, tx, k.p, numbers, now.Add(-Longest(limits))); err != nil {
			return err
		}
	}
	var conversedAt map[string]time.Time
	if after := k.pressure.AfterConversation; after > 0 && len(numbers) > 0 {
		var err error
		if conversedAt, err = conversedWith(ctx, tx, k.p, numbers, now.Add(-after)); err != nil {
			return err
		}
	}
	for _, op := range ops {
		if op.start.Released {
			continue
		}
		n := op.start.Number
		if h := Later(HoldUntil(k.pressure.LimitsFor(n), n, have[n], now), HoldAfterConversation(n, conversedAt[n], k.pressure.AfterConversation, now)); h != nil {
			b.refuse(op.i, h)
			continue
		}
		have[n] = append(have[n], now) // seen by the batch's next intent to n
	}
	if err := k.insert(ctx, tx, b); err != nil {
		return err
	}
	var num, ids, campaigns, agents []string
	for _, op := range ops {
		if !op.start.Released && b.refused[op.i] == nil {
			num = append(num, op.start.Number)
			ids = append(ids, op.start.ID)
			campaigns = append(campaigns, op.start.Campaign)
			agents = append(agents, op.start.Agent)
		}
	}
	if len(num) > 0 {
		if _, err := tx.Exec(ctx, `INSERT INTO callrun_call_starts (number, at, start_id, campaign, agent) SELECT n, $2, i, c, a FROM unnest($1::text[], $3::text[], $4::text[], $5::text[]) AS u(n, i, c, a)`,
			num, now, ids, campaigns, agents); err != nil {
			return k.p.wrap("counting call starts in", err)
		}
	}
	return nil
}

// Erase rewrites the rows of the numbers (E.164) in numbers in the call
// starts and the conversations as [CallStartsFile.Erase] rewrites their
// lines: an empty number, the keyed hash of the number (the first of
// opts.Keys.Hashes) in hash and, in a start, in start_id where the number
// was. One transaction, one UPDATE a table, holding the numbers' advisory
// locks (in order, as a run's batch takes them), so that a run counting
// one of them waits and then finds its starts by hash. Erasing again
// changes nothing. opts.BeforeReplace runs before the commit,
// opts.AfterReplace after it.
func (l *pgCallStarts) Erase(ctx context.Context, numbers []string, opts EraseOptions) (PressureEraseCounts, error) {
	var n PressureEraseCounts
	numbers, hashes, err := hashesToWrite(numbers, opts)
	if err != nil {
		return n, err
	}
	err = pgx.BeginFunc(ctx, l.p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended(n, $2)) FROM (SELECT unnest($1::text[]) AS n ORDER BY 1) AS u`, numbers, int64(pressureLockSeed)); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
UPDATE callrun_call_starts s SET number = '', hash = u.h, start_id = replace(s.start_id, u.n, u.h)
FROM unnest($1::text[], $2::text[]) AS u(n, h) WHERE s.number = u.n`, numbers, hashes)
		if err != nil {
			return err
		}
		n.Starts = int(tag.RowsAffected())
		if tag, err = tx.Exec(ctx, `
UPDATE callrun_conversations c SET number = '', hash = u.h
FROM unnest($1::text[], $2::text[]) AS u(n, h) WHERE c.number = u.n`, numbers, hashes); err != nil {
			return err
		}
		n.Conversations = int(tag.RowsAffected())
		if opts.BeforeReplace != nil {
			return opts.BeforeReplace()
		}
		return nil
	})
	if err != nil {
		return PressureEraseCounts{}, l.p.wrap("erasing people from the call starts in", err)
	}
	if opts.AfterReplace != nil {
		if err := opts.AfterReplace(); err != nil {
			return n, err
		}
	}
	return n, nil
}
