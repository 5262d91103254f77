package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Pushed says what [Postgres.PushFiles] copied into the database, each
// count of its part of the files, and how many of those were new there.
type Pushed struct {
	Records                         int    // the journals' records
	Entries, EntriesNew             int    // the do-not-call list's
	Starts, StartsNew               int    // the last StartsHorizon's call starts (CallStartsFile.Recent)
	Conversations, ConversationsNew int    // and conversations
	Holds, HoldsNew                 int    // the opt-out holds open
	Deliveries, DeliveriesNew       int    // the campaign's deliveries
	Keys, KeysNew                   int    // the erasure keys
	Erased, ErasedNew               int    // the erased set's people
	Agents, AgentsNew               int    // the agents callrun created for the campaign
	List, CallStarts                string // where the list and the starts were
}

// PushFiles copies into the database the state a campaign kept in files:
// the erasure keys and the erased set first (a database with a key of its
// own keeps it beside the files'), the do-not-call list of the files and the opt-out holds open
// beside it (once the journal is in the database, runs read the
// database's list and holds only), then the campaign's deliveries (the
// outcomes its report shows) and the agents callrun created for it (a
// run on the database must not create again one that the service's list
// does not show), then the machine's call
// starts and conversations of the last [StartsHorizon] (by this clock
// and before the files' latest entry: [CallStartsFile.Recent]), every campaign's
// (contact pressure in the database counts only what the database holds,
// and a number called from these files today must stay held there), then
// the journals, and marks the state directory dir with [PushedFile]. The
// caller holds dir's lock and the database's; PushFiles takes the
// deliveries' lock, so that no `callrun listen` stores into the files
// what runs on the database would not see. Copied again, an entry, a
// hold, a delivery, a start or a conversation changes nothing; merge adds
// the journals to a campaign the database holds already.
func (p *Postgres) PushFiles(ctx context.Context, dir string, journals []string, merge bool) (Pushed, error) {
	var out Pushed
	fl, err := lockFile(dir, DeliveriesLock)
	if err != nil {
		return out, err
	}
	if ok, err := fl.TryLock(); err != nil {
		return out, fmt.Errorf("locking %s: %w", fl.Path(), err)
	} else if !ok {
		return out, fmt.Errorf("%w: %s: stop the callrun listen that stores this campaign's deliveries in its files, push, then start it again on the database", ErrDeliveriesLocked, dir)
	}
	defer fl.Unlock()
	if err := p.pushErasure(ctx, &out); err != nil {
		return out, err
	}
	files, err := Files{Dir: dir}.DoNotCall()
	if err != nil {
		return out, err
	}
	out.List = files.String()
	dnc, err := files.Entries(ctx)
	if err != nil {
		return out, err
	}
	list := &pgDoNotCall{p: p}
	copied, err := list.Add(ctx, dnc)
	if err != nil {
		return out, fmt.Errorf("copying the %s into the database (nothing of the journal was pushed): %w", files, err)
	}
	out.Entries, out.EntriesNew = len(dnc), len(copied)
	holds, err := files.Held(ctx)
	if err != nil {
		return out, err
	}
	for _, h := range holds {
		wrote, err := list.Hold(ctx, h)
		if err != nil {
			return out, fmt.Errorf("copying the opt-out holds beside the %s into the database (nothing of the journal was pushed): %w", files, err)
		}
		if wrote {
			out.HoldsNew++
		}
	}
	out.Holds = len(holds)
	if out.Deliveries, out.DeliveriesNew, err = p.copyDeliveries(ctx, dir); err != nil {
		return out, fmt.Errorf("copying the deliveries of %s into the database (nothing of the journal was pushed): %w", dir, err)
	}
	if out.Agents, out.AgentsNew, err = p.copyCreatedAgents(ctx, dir); err != nil {
		return out, fmt.Errorf("copying the agents callrun created, in %s, into the database (nothing of the journal was pushed): %w", dir, err)
	}
	home, err := Home()
	if err != nil {
		return out, err
	}
	startsFile := OpenCallStartsFile(home)
	out.CallStarts = startsFile.String()
	recent, err := startsFile.Recent(ctx, time.Now())
	if err != nil {
		return out, err
	}
	if out.StartsNew, _, err = p.CopyCallStarts(ctx, recent); err != nil {
		return out, fmt.Errorf("copying the %s into the database (nothing of the journal was pushed): %w", startsFile, err)
	}
	out.Starts = len(recent)
	conversations, err := startsFile.RecentConversations(ctx, time.Now())
	if err != nil {
		return out, err
	}
	if out.ConversationsNew, err = p.CopyConversations(ctx, conversations); err != nil {
		return out, fmt.Errorf("copying the conversations beside the %s into the database (nothing of the journal was pushed): %w", startsFile, err)
	}
	out.Conversations = len(conversations)
	if out.Records, err = p.Push(ctx, merge, journals...); err != nil {
		return out, err
	}
	mark := fmt.Sprintf("pushed to the %s on %s\n", p, time.Now().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(dir, PushedFile), []byte(mark), 0o600); err != nil {
		return out, fmt.Errorf("the journal was pushed, but marking %s failed (a run from these files would not see later calls): %w", dir, err)
	}
	return out, nil
}

// copyDeliveries copies the deliveries file of state directory dir into
// the campaign's rows of the deliveries table, 1,000 at a time by the
// commit a listen on the database makes, but those whose key a row holds
// already; it returns how many the file holds and how many were new in
// the table.
func (p *Postgres) copyDeliveries(ctx context.Context, dir string) (n, added int, err error) {
	sink := &pgDeliveries{p: p}
	var b deliveryBatch
	flush := func() {
		if err != nil || len(b.ds) == 0 {
			return
		}
		b.isNew = make([]bool, len(b.ds))
		err = sink.commit(&b)
		for _, isNew := range b.isNew {
			if isNew {
				added++
			}
		}
		b = deliveryBatch{}
	}
	fl := deliveryLines(filepath.Join(dir, DeliveriesFile))
	_, rerr := fl.read(nil, func() {}, func(d Delivery, _ int64) {
		n++
		line, merr := json.Marshal(d)
		if merr != nil {
			if err == nil {
				err = merr
			}
			return
		}
		b.ds, b.lines = append(b.ds, d), append(b.lines, append(line, '\n'))
		if len(b.ds) == 1000 {
			flush()
		}
	})
	flush()
	return n, added, errors.Join(rerr, err)
}

// copyCreatedAgents copies the agents the state directory dir remembers
// into the campaign's rows of callrun_agents_created, but those a row
// holds already (by name and id); it returns how many dir holds and how
// many were new in the table.
func (p *Postgres) copyCreatedAgents(ctx context.Context, dir string) (n, added int, err error) {
	files, err := Files{Dir: dir}.CreatedAgents(ctx)
	if err != nil {
		return 0, 0, err
	}
	db, err := p.CreatedAgents(ctx)
	if err != nil {
		return 0, 0, err
	}
	have := map[[2]string]bool{}
	for _, a := range db {
		have[[2]string{a.Name, a.ID}] = true
	}
	for _, a := range files {
		if have[[2]string{a.Name, a.ID}] {
			continue
		}
		if err := p.RememberAgent(ctx, a); err != nil {
			return len(files), added, err
		}
		have[[2]string{a.Name, a.ID}] = true
		added++
	}
	return len(files), added, nil
}

// pushErasure copies the erasure keys of the files into the database,
// then the erased set, whose hashes they made, and counts them in out.
func (p *Postgres) pushErasure(ctx context.Context, out *Pushed) error {
	files, err := Files{}.Erasure()
	if err != nil {
		return err
	}
	keys, err := files.Keys(ctx)
	if err != nil {
		return err
	}
	erased, err := files.ErasedEntries(ctx)
	if err != nil {
		return err
	}
	if len(erased) > 0 {
		// Refused before anything is copied: the hashes of a key the
		// database would not have either.
		if _, err := files.OnErased(ctx, nil); err != nil {
			return err
		}
	}
	db := &pgErasure{p: p}
	out.Keys = len(keys.keys)
	if out.KeysNew, err = db.copyKeys(ctx, keys); err != nil {
		return fmt.Errorf("copying the %s into the database (nothing of the journal was pushed): %w", keys, err)
	}
	out.Erased = len(erased)
	for len(erased) > 0 {
		batch := erased[:min(len(erased), 10_000)]
		erased = erased[len(batch):]
		wrote, err := db.AddErased(ctx, batch)
		if err != nil {
			return fmt.Errorf("copying the %s into the database (nothing of the journal was pushed): %w", files, err)
		}
		out.ErasedNew += len(wrote)
	}
	return nil
}
