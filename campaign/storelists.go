package campaign

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
)

// smallDoNotCall is the most numbers a do-not-call list may hold to be
// read whole, rather than looked up for the campaign's numbers, which
// costs a reading of the sheets first.
var smallDoNotCall = 100_000

// LoadDoNotCall reads into s which of the campaign's numbers are on the
// store's do-not-call list, for plan, run, status and the report: a
// list of at most smallDoNotCall numbers whole, a longer one for the
// numbers of f's contacts ([File.CallNumbers], read once and kept for
// the next call), so that what it holds follows the campaign, not the
// list.
func (s *Suppression) LoadDoNotCall(ctx context.Context, list store.DoNotCallList, f *File) error {
	numbers, small, err := list.NumbersUpTo(ctx, smallDoNotCall)
	if err != nil {
		return err
	}
	if !small {
		if s.callNumbers == nil {
			if s.callNumbers, err = f.CallNumbers(ctx, s); err != nil {
				return err
			}
		}
		on, err := list.OnList(ctx, s.callNumbers)
		if err != nil {
			return err
		}
		numbers = make([]string, 0, len(on))
		for n := range on {
			numbers = append(numbers, n)
		}
	}
	s.SetDoNotCall(numbers)
	return nil
}

// CallNumbers reads the numbers of the campaign's contacts (of its
// shard), each once, to be looked up on the store's do-not-call list
// before the contacts are read for plan, run or the report
// ([Suppression.LoadDoNotCall]), when the list is long: from the
// records s kept of the pass over the signal columns, else from the
// sheets. A sheet that cannot be read gives the numbers of the rows
// before the problem: the reading that follows reports it.
func (f *File) CallNumbers(ctx context.Context, s *Suppression) ([]string, error) {
	cr := f.NewContactReader(nil)
	cr.spools = s.spools
	cr.SheetFailed = func(int, *sheet.Error) {}
	seen := map[uint64]struct{}{}
	var numbers []string
	err := cr.Each(ctx, func(c *Contact) error {
		if c.Phone == "" {
			return nil
		}
		if _, ok := seen[phoneKey(c.Phone)]; !ok {
			seen[phoneKey(c.Phone)] = struct{}{}
			numbers = append(numbers, c.Phone)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the contacts' numbers for the do-not-call list: %w", err)
	}
	return numbers, nil
}

// ReadPressure reads the call starts that count at now under the
// campaign's contact pressure, and with Reg F's rule the conversations
// that do, for plan and the report; nil when the campaign turns pressure
// off.
func (f *File) ReadPressure(ctx context.Context, st store.Store, now time.Time) (*PlanPressure, error) {
	limits := f.PressureLimits()
	if limits == nil {
		return nil, nil
	}
	cs, err := st.CallStarts()
	if err != nil {
		return nil, err
	}
	starts, err := cs.Counted(ctx, now.Add(-store.Longest(limits)))
	if err != nil {
		return nil, err
	}
	p := &PlanPressure{Limits: limits, Starts: starts, AfterConversation: f.PressureAfterConversation()}
	if p.AfterConversation > 0 {
		if p.Conversations, err = cs.Conversed(ctx, now.Add(-p.AfterConversation)); err != nil {
			return nil, err
		}
	}
	if p.Hashes, err = erasedHashes(ctx, st, cs, p.Starts, p.Conversations); err != nil {
		return nil, err
	}
	return p, nil
}

// erasedHashes returns the store's erasure keys' Hashes when the call
// starts or conversations read are filed under an erased person's hash
// too, each checked against the keys ([store.CheckHashKey]: without them
// callrun cannot tell who was erased, so nobody is called); nil when none
// is, and the keys are not read.
func erasedHashes(ctx context.Context, st store.Store, cs store.CallStarts, starts map[string][]time.Time, conversations map[string]time.Time) (func(string) []string, error) {
	var hashes []string
	for k := range starts {
		if strings.HasPrefix(k, "h1:") {
			hashes = append(hashes, k)
		}
	}
	for k := range conversations {
		if strings.HasPrefix(k, "h1:") {
			hashes = append(hashes, k)
		}
	}
	if len(hashes) == 0 {
		return nil, nil
	}
	e, err := st.Erasure()
	if err != nil {
		return nil, fmt.Errorf("reading the erasure keys that the %s need: %w", cs, err)
	}
	keys, err := e.Keys(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the erasure keys that the %s need: %w", cs, err)
	}
	for _, h := range hashes {
		if err := store.CheckHashKey(keys, h, "the "+cs.String()); err != nil {
			return nil, err
		}
	}
	return keys.Hashes, nil
}

// AddFlagged puts on the store's do-not-call list the numbers the
// campaign's do_not_call: columns flag, those of the rows of a group
// whose title says do not call, and those whose consent cell says
// consent was withdrawn or refused, as a run starts, before its first call:
// later campaigns on the store, whose exports may not carry the flag,
// honour them too. Each entry names the campaign, the column and the
// first row that flags it, and the row's column the number is in when
// it is not the phone_number's ([FlaggedNumber.Phone]). It returns the entries it wrote: a number on
// the list already is not written again.
func (f *File) AddFlagged(ctx context.Context, list store.DoNotCallList, sup *Suppression) ([]store.DoNotCallEntry, error) {
	flagged := sup.Flagged()
	if len(flagged) == 0 {
		return nil, nil
	}
	now := time.Now()
	es := make([]store.DoNotCallEntry, len(flagged))
	for i, fl := range flagged {
		source := fmt.Sprintf("do_not_call column %q of campaign %s (sheet %s, row %d)", fl.Column, f.Name, f.Sheets[fl.Sheet].File, fl.Row)
		switch {
		case fl.Consent:
			source = fmt.Sprintf("consent %s: consent column %q of campaign %s says %q (sheet %s, row %d)", consentWithdrawnWord(fl.Cell), fl.Column, f.Name, fl.Cell, f.Sheets[fl.Sheet].File, fl.Row)
		case fl.Group != "":
			source = fmt.Sprintf("group %q of campaign %s, whose title says do not call (sheet %s, row %d; the title in row %d)", fl.Group, f.Name, f.Sheets[fl.Sheet].File, fl.Row, fl.GroupRow)
		}
		if fl.Phone != "" {
			source += fmt.Sprintf(", the number in its column %q", fl.Phone)
		}
		es[i] = store.DoNotCallEntry{Number: fl.Number, At: now, Source: source}
	}
	wrote, err := list.Add(ctx, es)
	if err != nil {
		return nil, fmt.Errorf("putting the numbers the sheets mark do not call on the %s: %w", list, err)
	}
	return wrote, nil
}

// PressureSaid names the campaign's contact pressure for people: "1 in
// 24 hours, 14 in 14 days", and Reg F's conversation rule.
func (f *File) PressureSaid() string {
	var parts []string
	for _, l := range f.PressureLimits() {
		parts = append(parts, l.String())
	}
	if len(parts) == 0 {
		return "no limit (pressure: {off: true})"
	}
	if f.PressureAfterConversation() > 0 {
		parts = append(parts, "none within 7 days after a conversation")
	}
	return strings.Join(parts, ", ")
}

// OpenStore opens the campaign's store (see [store.Open]): PostgreSQL
// when the campaign file says state: {postgres: ...}, else the files of
// state_dir. A rehearsal always keeps files of its own, apart, so that it
// can never tell a real run that someone was called. The caller closes
// the store.
func (f *File) OpenStore(ctx context.Context, rehearsal bool) (store.Store, error) {
	if f.State != nil && !f.SharedState() && !rehearsal {
		// Never the files instead: they do not know whom the database does.
		return nil, &FileError{Problems: []Problem{{File: f.Source, Msg: "state.postgres is empty (is the variable it names, such as CALLRUN_DATABASE_URL, set?): the journal is in PostgreSQL"}}}
	}
	o := store.Options{Dir: f.Path(f.StateDir), Campaign: f.Name, Index: f.Shard.Index, Count: f.Shard.Count, Rehearsal: rehearsal}
	if f.SharedState() {
		o.Postgres = f.State.Postgres
	}
	return store.Open(ctx, o)
}
