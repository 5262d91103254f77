package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// OptOutHold is an opt-out `callrun listen` stored but could not read the
// number of: a delivery whose outcomes.opt_out field says "do not call
// me" and whose number no rule reads. While it is held, no run on the
// store starts a call: a person must find the number, put it on the
// do-not-call list, and resolve the hold. Holds are kept beside the
// do-not-call list, an entry a line (or a row), never deleted: a
// resolution is an entry of its own.
type OptOutHold struct {
	Campaign string    `json:"campaign"`
	Key      string    `json:"key"` // the delivery's key
	At       time.Time `json:"at"`
	// Reason says why its number could not be read.
	Reason string `json:"reason,omitempty"`
	// Resolved: this entry resolves the hold of Campaign's delivery Key.
	Resolved bool `json:"resolved,omitempty"`
	// Note is a resolution's: what the person said they did.
	Note string `json:"note,omitempty"`
}

// ErrOptOutHeld is what an [OptOutHeldError] is: no call may start while
// an opt-out is held.
var ErrOptOutHeld = errors.New("an opt-out whose number could not be read is held")

// OptOutHeldError is what a do-not-call list's Has, and a journal's
// Append of an intent, return while opt-outs are held (see
// [OptOutHold]): the call must not start, and the run stops starting
// calls. It names each hold and what a person does to resolve it.
type OptOutHeldError struct {
	Holds []OptOutHold
	Where string // the list, for people
}

func (e *OptOutHeldError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no call is started while an opt-out whose number callrun could not read is held (%s):", e.Where)
	for _, h := range e.Holds {
		fmt.Fprintf(&b, " delivery %s of campaign %s, received %s", h.Key, h.Campaign, h.At.UTC().Format(time.RFC3339))
		if h.Reason != "" {
			fmt.Fprintf(&b, " (%s)", h.Reason)
		}
		b.WriteString(";")
	}
	b.WriteString(" find the person's number in the delivery (callrun outcomes show CAMPAIGN.yaml KEY prints it whole), put it on the do-not-call list with callrun suppress add CAMPAIGN.yaml NUMBER, then resolve the hold with callrun outcomes resolve CAMPAIGN.yaml KEY")
	return b.String()
}

// Is makes errors.Is(err, ErrOptOutHeld) true.
func (e *OptOutHeldError) Is(target error) bool { return target == ErrOptOutHeld }

// holdKey is a hold's identity: its campaign and delivery.
func holdKey(h OptOutHold) string { return h.Campaign + "\x00" + h.Key }

// applyHold folds entry h into open, the holds not resolved, by holdKey,
// in the order they were held, and notes its delivery in ever.
func applyHold(open map[string]OptOutHold, ever map[string]bool, h OptOutHold) {
	ever[holdKey(h)] = true
	if h.Resolved {
		delete(open, holdKey(h))
	} else if _, ok := open[holdKey(h)]; !ok {
		open[holdKey(h)] = h
	}
}

// sortedHolds returns the holds of open, oldest first.
func sortedHolds(open map[string]OptOutHold) []OptOutHold {
	out := make([]OptOutHold, 0, len(open))
	for _, h := range open {
		out = append(out, h)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].At.Before(out[j-1].At); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// OptOutHoldsFileName is the file of the holds beside the do-not-call
// list in files, written under the list's lock.
const OptOutHoldsFileName = "opt-out-holds.jsonl"

// refreshHolds applies the whole lines of the holds file appended since
// the last look. The caller holds l.mu.
func (l *DoNotCallFile) refreshHolds() error {
	_, err := l.holds.read(nil, func() { l.open, l.ever = map[string]OptOutHold{}, map[string]bool{} },
		func(h OptOutHold, _ int64) { applyHold(l.open, l.ever, h) })
	if err != nil {
		return fmt.Errorf("reading the opt-out holds: %w", err)
	}
	return nil
}

// Held returns the holds not resolved, oldest first.
func (l *DoNotCallFile) Held(context.Context) ([]OptOutHold, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshHolds(); err != nil {
		return nil, err
	}
	return sortedHolds(l.open), nil
}

// Hold records h, durably, under the list's lock, unless its campaign's
// delivery was held before (open, or resolved: a retry of a delivery a
// person resolved holds nothing again); it reports whether it wrote it.
func (l *DoNotCallFile) Hold(ctx context.Context, h OptOutHold) (bool, error) {
	h.Resolved, h.Note = false, ""
	return l.writeHold(ctx, h)
}

// Resolve records that a person resolved the hold of campaign's delivery
// key, durably, under the list's lock; it reports false when no such
// hold is open.
func (l *DoNotCallFile) Resolve(ctx context.Context, campaign, key, note string) (bool, error) {
	return l.writeHold(ctx, OptOutHold{Campaign: campaign, Key: key, Resolved: true, Note: note})
}

// writeHold appends h, a hold or a resolution, when it changes the holds.
func (l *DoNotCallFile) writeHold(ctx context.Context, h OptOutHold) (bool, error) {
	if h.Campaign == "" || h.Key == "" {
		return false, errors.New("an opt-out hold needs its campaign and delivery key")
	}
	if h.At.IsZero() {
		h.At = time.Now()
	}
	h.At = h.At.UTC()
	wrote := false
	err := l.locked(ctx, func() error {
		if err := l.refreshHolds(); err != nil {
			return err
		}
		if _, open := l.open[holdKey(h)]; !h.Resolved && l.ever[holdKey(h)] || h.Resolved && !open {
			return nil // held before, or nothing to resolve
		}
		if err := appendLines(l.dir, &l.holds, h); err != nil {
			return fmt.Errorf("writing the opt-out holds beside the %s: %w", l, err)
		}
		applyHold(l.open, l.ever, h)
		wrote = true
		return nil
	})
	return wrote, err
}
