package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
				n.Added = len(added)
				if err := l.checkHashes(); err != nil {
					return err
				}
			}
		}
		var err error
		n.Replaced, err = l.replaceNumbers(hash, opts.EraseOptions)
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
