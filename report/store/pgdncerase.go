package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// EraseDoNotCall erases the people whose E.164 numbers are in numbers
// from the database's list, in one transaction under the list's advisory
// lock: unless opts.AllowContact, it first adds a hashed entry (an empty
// number, the first of opts.Keys.Hashes, no reason) for each who is not
// on the list, by number or by hash; then it rewrites every row of their
// numbers with the hash in place of the number and no reason, keeping
// each row's place in the history. Erasing again changes nothing.
func (l *pgDoNotCall) EraseDoNotCall(ctx context.Context, numbers []string, opts EraseDoNotCallOptions) (DoNotCallEraseCounts, error) {
	var n DoNotCallEraseCounts
	numbers, hashes, err := hashesToWrite(numbers, opts.EraseOptions)
	if err != nil {
		return n, fmt.Errorf("erasing people from the %s: %w", l, err)
	}
	at := opts.At
	if at.IsZero() {
		at = time.Now()
	}
	err = pgx.BeginFunc(ctx, l.p.pool, func(tx pgx.Tx) error {
		n = DoNotCallEraseCounts{}
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(dncLock)); err != nil {
			return err
		}
		if !opts.AllowContact {
			on := map[string]bool{}
			if err := l.p.listed(ctx, tx, numbers, on); err != nil {
				return err
			}
			var add []string
			for i, num := range numbers {
				if !on[num] {
					on[num] = true
					add = append(add, hashes[i])
				}
			}
			if len(add) > 0 {
				tag, err := tx.Exec(ctx, `
INSERT INTO callrun_do_not_call (number, hash, at, removed, source, reason)
SELECT '', h, $2, false, 'erase', '' FROM unnest($1::text[]) WITH ORDINALITY AS u(h, ord) ORDER BY ord`, add, at.UTC().Truncate(time.Microsecond))
				if err != nil {
					return err
				}
				n.Added = int(tag.RowsAffected())
			}
		}
		tag, err := tx.Exec(ctx, `
UPDATE callrun_do_not_call d SET number = '', hash = u.h, reason = ''
FROM unnest($1::text[], $2::text[]) AS u(n, h) WHERE d.number = u.n`, numbers, hashes)
		if err != nil {
			return err
		}
		n.Replaced = int(tag.RowsAffected())
		rows, err := tx.Query(ctx, `SELECT id, reason, note FROM callrun_opt_out_holds WHERE reason <> '' OR note <> ''`)
		if err != nil {
			return err
		}
		var ids []int64
		var id int64
		var h OptOutHold
		if _, err := pgx.ForEachRow(rows, []any{&id, &h.Reason, &h.Note}, func() error {
			if eraseHold(&h, numbers) {
				ids = append(ids, id)
			}
			return nil
		}); err != nil {
			return err
		}
		if len(ids) > 0 {
			if _, err := tx.Exec(ctx, `
UPDATE callrun_opt_out_holds SET reason = CASE WHEN reason = '' THEN '' ELSE $2 END, note = CASE WHEN note = '' THEN '' ELSE $2 END
WHERE id = ANY($1)`, ids, heldErased); err != nil {
				return err
			}
			n.Holds = len(ids)
		}
		return nil
	})
	if err != nil {
		return n, l.p.wrap("erasing people from the do-not-call list in", err)
	}
	return n, nil
}
