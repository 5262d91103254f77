package store

import (
	"context"
	"fmt"
	"time"
)

// EraseDoNotCall keeps the people whose E.164 numbers are in numbers
// blocked: unless opts.AllowContact, each who is not on the list is put
// on it. A PostgreSQL list does not hold keyed hashes yet, so it cannot
// block a person without their number: it keeps their entries as they
// are, and Kept counts the people it so holds. Erasing again adds
// nothing.
func (l *pgDoNotCall) EraseDoNotCall(ctx context.Context, numbers []string, opts EraseDoNotCallOptions) (DoNotCallEraseCounts, error) {
	var n DoNotCallEraseCounts
	at := opts.At
	if at.IsZero() {
		at = time.Now()
	}
	if !opts.AllowContact {
		es := make([]DoNotCallEntry, len(numbers))
		for i, num := range numbers {
			es[i] = DoNotCallEntry{Number: num, At: at.UTC(), Source: "erase"}
		}
		wrote, err := l.Add(ctx, es)
		if err != nil {
			return n, fmt.Errorf("erasing people from the %s: %w", l, err)
		}
		n.Added = len(wrote)
	}
	on, err := l.OnList(ctx, numbers)
	if err != nil {
		return n, fmt.Errorf("erasing people from the %s: %w", l, err)
	}
	n.Kept = len(on)
	return n, nil
}
