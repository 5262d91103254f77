package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// EraseDoNotCallOptions tune [DoNotCallFile.EraseDoNotCall]: the keys,
// time and hooks of [EraseOptions], and AllowContact.
type EraseDoNotCallOptions struct {
	EraseOptions
	// AllowContact leaves a person who is not on the list off it; else
	// each is put on it, as a keyed hash. It never takes anyone off the
	// list: an opt-out stays, hashed.
	AllowContact bool
}

// DoNotCallEraseCounts is what erasing people from a do-not-call list
// changed.
type DoNotCallEraseCounts struct {
	Added    int // hashed additions of people who were not on the list
	Replaced int // entries whose number was replaced by its keyed hash
	Holds    int // opt-out holds whose reason or note named them, blanked
}

// EraseDoNotCall erases the people whose E.164 numbers are in numbers
// from the list, under its lock: unless opts.AllowContact, it first
// appends, durably, a hashed addition for each who is not on the list
// (so that they are never called again, whatever happens next); then it
// replaces every entry of their numbers by the same entry with their
// keyed hash (the first of opts.Keys.Hashes) and no reason, writing the
// list whole by the durable replace (a crash leaves the old list or the
// new one), and builds its index again. A list that holds none of the
// numbers is left as it is: erasing again changes nothing.
func (l *DoNotCallFile) EraseDoNotCall(ctx context.Context, numbers []string, opts EraseDoNotCallOptions) (DoNotCallEraseCounts, error) {
	var n DoNotCallEraseCounts
	numbers, hashes, err := hashesToWrite(numbers, opts.EraseOptions)
	if err != nil {
		return n, fmt.Errorf("erasing people from the %s: %w", l, err)
	}
	hash := make(map[string]string, len(numbers))
	for i, num := range numbers {
		hash[num] = hashes[i]
	}
	at := opts.At
	if at.IsZero() {
		at = time.Now()
	}
	err = l.locked(ctx, func() error {
		if err := l.refresh(); err != nil {
			return err
		}
		if !opts.AllowContact {
			on, err := l.onList(numbers)
			if err != nil {
				return err
			}
			var lines []byte
			var added []DoNotCallEntry
			for _, num := range numbers {
				if !on[num] {
					on[num] = true
					e := DoNotCallEntry{Hash: hash[num], At: at.UTC(), Source: "erase"}
					added = append(added, e)
					lines = appendEntry(lines, e)
				}
			}
			if len(lines) > 0 {
				if err := appendBytes(l.dir, &l.list, lines); err != nil {
					return fmt.Errorf("writing the %s: %w", l, err)
				}
				for _, e := range added {
					l.track(e)
				}
				if err := l.indexNew(); err != nil {
					return err
				}
				n.Added = len(added)
				if err := l.checkHashes(); err != nil {
					return err
				}
			}
		}
		var err error
		if n.Replaced, err = l.replaceNumbers(hash, opts.EraseOptions); err != nil {
			return err
		}
		// The copy of the index a process killed while it wrote it left
		// holds the numbers as they were: removed however young (a
		// build it cuts short keeps its index in memory).
		if err := removeTemps(l.dir, DoNotCallIndexName, 0, time.Time{}); err != nil {
			return fmt.Errorf("removing the copy of the list's index a killed process left: %w", err)
		}
		n.Holds, err = hashLines(filepath.Join(l.dir, OptOutHoldsFileName), func(line []byte) ([]byte, error) {
			var h OptOutHold
			if err := json.Unmarshal(line, &h); err != nil {
				return nil, fmt.Errorf("not an opt-out hold: %w", err)
			}
			if !eraseHold(&h, numbers) {
				return nil, nil
			}
			return json.Marshal(h)
		}, EraseOptions{})
		return err
	})
	if err != nil {
		return n, fmt.Errorf("erasing people from the %s: %w", l, err)
	}
	return n, nil
}

// replaceNumbers rewrites the list's history with each entry of a number
// in hash by its hashed form, when there is one, and builds the index
// again; it returns how many entries it replaced. The caller holds the
// list's lock and l.mu.
func (l *DoNotCallFile) replaceNumbers(hash map[string]string, opts EraseOptions) (int, error) {
	notEntry := errors.New("not a do-not-call entry")
	replaced, err := hashLines(l.path(), func(line []byte) ([]byte, error) {
		number, _, ok := decodeEntry(line)
		if !ok {
			return nil, notEntry
		}
		h, erased := hash[number]
		if !erased {
			return nil, nil
		}
		var e DoNotCallEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return nil, notEntry
		}
		return bytes.TrimSuffix(appendEntry(nil, hashedEntry(e, h)), []byte("\n")), nil
	}, opts)
	if err != nil || replaced == 0 {
		return replaced, err
	}
	if err := l.rebuild(); err != nil {
		return replaced, fmt.Errorf("indexing the list: %w", err)
	}
	return replaced, l.checkHashes()
}

// heldErased is the reason and note of an opt-out hold that named an
// erased person, in place of their words.
const heldErased = "(erased: it named a person erased from the store)"

// eraseHold blanks the reason and note of hold h when either mentions
// one of numbers (E.164), in any form whose digits hold the number with
// or without its country code; it reports whether it did.
func eraseHold(h *OptOutHold, numbers []string) bool {
	if !mentionsAny(h.Reason, numbers) && !mentionsAny(h.Note, numbers) {
		return false
	}
	if h.Reason != "" {
		h.Reason = heldErased
	}
	if h.Note != "" {
		h.Note = heldErased
	}
	return true
}

// mentionsAny reports whether text's digits, read as one run, hold one
// of numbers' digits, or those after a country code of one to three
// digits, if at least seven remain.
func mentionsAny(text string, numbers []string) bool {
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, text)
	if len(digits) < 7 {
		return false
	}
	for _, n := range numbers {
		d := strings.TrimPrefix(n, "+")
		for cc := 0; cc <= 3 && len(d)-cc >= 7; cc++ {
			if strings.Contains(digits, d[cc:]) {
				return true
			}
		}
	}
	return false
}
