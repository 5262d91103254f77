package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// serviceStartPrefix begins the ID of a call start the service made on its
// own ([ServiceStartID]): no journal's start ID begins so (a journal's
// begins with its path, or with the campaign's name and shard).
const serviceStartPrefix = "service call "

// ServiceStartID is the ID of the call start of the service's call
// callID, made on its own (a redial of an agent or account, a second call
// for one request): `callrun listen` records one for a call whose
// deliveries name a call id that no journal of the campaign's holds, and
// the outcome of a call of a journal that names that call id gives it
// back (the delivery came before the call's answer reached the
// journal). One call id, one start, whichever campaign's listen took it.
func ServiceStartID(callID string) string { return serviceStartPrefix + callID }

// IsServiceStart reports whether s is a call start the service made on its
// own ([ServiceStartID]), not one of a journal's.
func IsServiceStart(s CallStart) bool { return strings.HasPrefix(s.ID, serviceStartPrefix) }

// serviceCallOf is the call id of a service start's ID; "" for another's.
func serviceCallOf(id string) string {
	c, ok := strings.CutPrefix(id, serviceStartPrefix)
	if !ok {
		return ""
	}
	return c
}

// ServiceStarted records s, a call start the service made on its own
// (s.ID is [ServiceStartID] of its call), as counted, durably before it
// returns, and reports whether it was new: a start of s.ID counted
// already (a retry of the delivery, or another delivery of the call) is
// not recorded again. erased: s's number is an erased person's, and the
// start is recorded under its keyed hash. own, called under the lock
// that a journal's batch takes to give back the service start of one of
// its calls, reports whether a journal holds the call: then nothing is
// recorded (the journal counted it when its intent was written). Taking
// the lock first means a call's answer written to the journal just then
// is either seen by own or gives the start back.
func (l *CallStartsFile) ServiceStarted(_ context.Context, s CallStart, erased bool, own func() (bool, error)) (bool, error) {
	fl, err := l.lock()
	if err != nil {
		return false, err
	}
	defer fl.Unlock() //nolint:errcheck // closing releases it too
	l.mu.Lock()
	defer l.mu.Unlock()
	f, err := openOrCreate(l.dir, l.path())
	if err != nil {
		return false, fmt.Errorf("opening the %s: %w", l, err)
	}
	defer f.Close()
	if err := l.refresh(f, nil); err != nil {
		return false, err
	}
	if err := cutTail(f, l.starts.off); err != nil {
		return false, fmt.Errorf("cutting the torn last line of the %s: %w", l, err)
	}
	id := idHash(s.ID)
	for _, k := range l.filedUnder(s.Number) {
		if slices.ContainsFunc(l.open[k], func(o timedID) bool { return o.id == id }) {
			return false, nil
		}
	}
	if own != nil {
		mine, err := own()
		if err != nil || mine {
			return false, err
		}
	}
	s.At, s.Released = s.At.UTC(), false
	if erased {
		keys, err := OpenErasureFile(l.dir).Keys(context.Background())
		if err != nil {
			return false, err
		}
		if s, err = s.hashed(keys); err != nil {
			return false, err
		}
	}
	line, err := json.Marshal(s)
	if err != nil {
		return false, err
	}
	line = append(line, '\n')
	if err := writeSynced(f, line, l.starts.off, l.BeforeSync); err != nil {
		l.starts.forget()
		l.open = map[string][]timedID{}
		return false, fmt.Errorf("writing the %s: %w", l, err)
	}
	l.starts.appended(line)
	l.apply(s)
	return true, nil
}

// hashed is an erased person's call start: the keyed hash of its number
// (the first of keys') in its place, as [Conversation.hashed] makes an
// erased person's conversation.
func (s CallStart) hashed(keys *ErasureKeys) (CallStart, error) {
	hs := keys.Hashes(s.Number)
	if len(hs) == 0 {
		return s, errors.New("recording an erased person's call start needs the store's erasure key")
	}
	s.Number, s.Hash = "", hs[0]
	return s, nil
}

// callLockSeed seeds the hash of a service's call id into the advisory
// lock key a transaction holds while it records, or gives back, the
// service start of that call.
const callLockSeed = 0x63616c6c // "call"

// ServiceStarted inserts s unless a start of its ID is in the table, in a
// transaction that holds the advisory lock of its call id, which a
// journal's batch takes too before it gives back the service start of one
// of its calls ([pgSink.press]). Under it, unless own is nil, the
// campaign's journal rows are read for the call id in the same
// transaction, in own's place (as [CallKeysOf] reads them).
func (l *pgCallStarts) ServiceStarted(ctx context.Context, s CallStart, erased bool, own func() (bool, error)) (bool, error) {
	if erased {
		keys, err := (&pgErasure{p: l.p}).Keys(ctx)
		if err != nil {
			return false, err
		}
		if s, err = s.hashed(keys); err != nil {
			return false, err
		}
	}
	added := false
	err := pgx.BeginFunc(ctx, l.p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, $2))`, serviceCallOf(s.ID), int64(callLockSeed)); err != nil {
			return err
		}
		var have bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM callrun_call_starts WHERE start_id = $1 AND NOT released)`, s.ID).Scan(&have); err != nil {
			return err
		}
		if have {
			return nil
		}
		if own != nil {
			// The campaign's journal, read in this transaction (as
			// CallKeysOf reads it): own would take another of the pool's
			// connections while this one waits, and deliveries at once
			// could hold them all.
			// By the index of the lines' call ids ([Postgres.callLines]).
			call := serviceCallOf(s.ID)
			ids := map[string]bool{call: true}
			rows, err := l.p.callLines(ctx, tx, ids)
			if err != nil {
				return err
			}
			keys := map[string]Key{}
			var line []byte
			if _, err := pgx.ForEachRow(rows, []any{&line}, func() error {
				callKey(line, ids, keys)
				return nil
			}); err != nil {
				return err
			}
			if _, mine := keys[call]; mine {
				return nil
			}
		}
		if _, err := tx.Exec(ctx, `INSERT INTO callrun_call_starts (number, hash, at, start_id, campaign, agent) VALUES ($1, $2, $3, $4, $5, $6)`,
			s.Number, s.Hash, s.At.UTC(), s.ID, s.Campaign, s.Agent); err != nil {
			return err
		}
		added = true
		return nil
	})
	if err != nil {
		return false, l.p.wrap("recording the service's own call start in", err)
	}
	return added, nil
}

// serviceRelease is the op that gives back the service start of the call
// an outcome r names, if one was recorded: its delivery reached listen
// before the call's answer reached the journal, and the journal's intent
// counted the call already.
func serviceRelease(i int, r *Record) (pressureOp, bool) {
	if r.Type != TypeOutcome || r.CallID == "" {
		return pressureOp{}, false
	}
	return pressureOp{i: i, start: CallStart{Number: r.Phone, ID: ServiceStartID(r.CallID), Released: true}, call: r.CallID}, true
}
