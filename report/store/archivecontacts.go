package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
)

// ArchiveContactsName is the key index ([keyIndex]) of the contacts the
// call starts' archive ([CallStartsArchiveName]) names, beside it: for
// each counted start, the idHash of its campaign, its contactHash and
// when it was counted (each a big-endian uint64), sorted, so that a run
// reads its own campaign's contacts alone, one range of the file, and
// checks a contact's first attempt against every start its campaign made,
// however old ([ForeignStartError]). It holds hashes only, no number; a
// run builds it again when it is missing or stale (the archive grew past
// what it covers, or was rewritten), and erase removes it.
const ArchiveContactsName = "call-starts-archive.contacts"

// createArchiveContacts creates the index's file; tests break it.
var createArchiveContacts = durable.Create

// archiveContactWidth is the width of the index's keys.
const archiveContactWidth = 24

func (l *CallStartsFile) archiveContactsPath() string {
	return filepath.Join(l.dir, ArchiveContactsName)
}

// follow makes the reader keep the starts of campaign however old
// (timedID.mine) and read its archived contacts: a journal of that
// campaign checks its first attempts against them. A reader that followed
// another reads the file again. The caller holds l.mu.
func (l *CallStartsFile) follow(campaign string) {
	if l.campaign == campaign {
		return
	}
	l.campaign = campaign
	l.starts.forget()
	l.open = map[string][]timedID{}
	l.archived = nil
}

// Follow is follow for a journal's opening, before the file is read: the
// run's first read keeps what its check needs.
func (l *CallStartsFile) Follow(campaign string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if campaign != "" {
		l.follow(campaign)
	}
}

// archivedStart reports whether a counted start in the archive names
// contact of campaign, and the earliest such start. The campaign's
// archived contacts are read once, and again after the archive changed.
// write: the caller holds the call starts' lock, and a missing or stale
// index is written again; else what it lacks is read from the archive
// and not kept. The caller holds l.mu.
func (l *CallStartsFile) archivedStart(campaign string, contact uint64, write bool) (int64, bool, error) {
	if l.archived == nil || l.archivedFor != campaign {
		m, err := l.readArchived(campaign, write)
		if err != nil {
			return 0, false, err
		}
		l.archived, l.archivedFor = m, campaign
	}
	at, ok := l.archived[contact]
	return at, ok, nil
}

// archiveKey is the index's key of a start of campaign's contact at at.
func archiveKey(campaign string, contact uint64, at int64) [archiveContactWidth]byte {
	var k [archiveContactWidth]byte
	binary.BigEndian.PutUint64(k[:], idHash(campaign))
	binary.BigEndian.PutUint64(k[8:], contact)
	binary.BigEndian.PutUint64(k[16:], uint64(at))
	return k
}

// readArchived returns the archived contacts of campaign, each with its
// earliest counted start: those of the index, and those of the archive's
// lines after what it covers (all of them when it is missing, torn or
// stale). With write, an index that does not cover the whole archive is
// written again, covering it.
func (l *CallStartsFile) readArchived(campaign string, write bool) (map[uint64]int64, error) {
	out := map[uint64]int64{}
	a, err := os.Open(l.archivePath())
	if errors.Is(err, os.ErrNotExist) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening the archive %s: %w", l.archivePath(), err)
	}
	defer a.Close()
	fi, err := a.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading the archive %s: %w", l.archivePath(), err)
	}
	ixf, ix, _, err := openKeyIndex(l.archiveContactsPath(), archiveContactWidth, a, fi.Size())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", l.archiveContactsPath(), err)
	}
	if ixf != nil {
		if ok, err := ix.verify(ixf); err != nil || !ok || ix.extra != 0 {
			ixf.Close()
			ixf, ix = nil, nil // built again
		} else {
			defer ixf.Close()
		}
	}
	var from int64
	if ix != nil {
		from = ix.covered
	}
	keys, covered, err := archiveKeys(a, from, fi.Size())
	if err != nil {
		return nil, err
	}
	prefix := archiveKey(campaign, 0, 0)
	add := func(k []byte) {
		c, at := binary.BigEndian.Uint64(k[8:]), int64(binary.BigEndian.Uint64(k[16:]))
		if was, ok := out[c]; !ok || at < was {
			out[c] = at
		}
	}
	if ix != nil {
		if err := ix.scanPrefix(ixf, prefix[:8], add); err != nil {
			return nil, fmt.Errorf("reading %s: %w", l.archiveContactsPath(), err)
		}
	}
	for _, k := range keys {
		if bytes.Equal(k[:8], prefix[:8]) {
			add(k[:])
		}
	}
	if write && (ix == nil || covered > ix.covered) {
		// What the run checks against is read already: an index that
		// cannot be written (a full disk) costs the next run this read
		// again, and stops no run.
		l.writeArchiveContacts(a, ixf, ix, keys, covered) //nolint:errcheck // written again by the next run
	}
	return out, nil
}

// archiveKeys reads the archive's whole lines from from up to size and
// returns the keys of their counted starts, sorted, and where the last
// whole line ends. A start given back by a line read with it is left out;
// one given back by a line archived later than it stays (the contact is
// then held as called: the safe side).
func archiveKeys(a *os.File, from, size int64) ([][archiveContactWidth]byte, int64, error) {
	var keys [][archiveContactWidth]byte
	dropped := map[int]bool{}
	counting := map[uint64][]int{} // the starts in keys not given back, by idHash of the ID
	end, err := eachLine(a, from, size, func(line []byte, at int64) error {
		var s CallStart
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("reading the archive %s: the line at byte %d is not a call start: %w", a.Name(), at, err)
		}
		id := idHash(s.ID)
		if s.Released {
			if is := counting[id]; len(is) > 0 {
				dropped[is[len(is)-1]] = true
				counting[id] = is[:len(is)-1]
			}
			return nil
		}
		c := contactOf(s) // 0 for an erased person's line: it names no number
		if c == 0 {
			return nil
		}
		counting[id] = append(counting[id], len(keys))
		keys = append(keys, archiveKey(s.Campaign, c, s.At.UnixNano()))
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(dropped) > 0 {
		kept := keys[:0]
		for i, k := range keys {
			if !dropped[i] {
				kept = append(kept, k)
			}
		}
		keys = kept
	}
	slices.SortFunc(keys, func(x, y [archiveContactWidth]byte) int { return bytes.Compare(x[:], y[:]) })
	return keys, end, nil
}

// scanPrefix calls fn with each key of the index in r that begins with
// prefix: a binary search for the first, then a read of the rest.
func (ix *keyIndex) scanPrefix(r io.ReaderAt, prefix []byte, fn func([]byte)) error {
	w, off := int64(ix.width), int64(len(keyIndexMagic))
	v := make([]byte, w)
	lo, hi := int64(0), ix.count
	for lo < hi {
		mid := int64(uint64(lo+hi) >> 1)
		if _, err := r.ReadAt(v, off+mid*w); err != nil {
			return err
		}
		if bytes.Compare(v[:len(prefix)], prefix) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	buf := make([]byte, (1<<16)/w*w)
	for i := lo; i < ix.count; {
		b := buf[:min(int64(len(buf)), (ix.count-i)*w)]
		if _, err := r.ReadAt(b, off+i*w); err != nil {
			return err
		}
		for j := int64(0); j < int64(len(b)); j += w {
			if !bytes.Equal(b[j:j+int64(len(prefix))], prefix) {
				return nil
			}
			fn(b[j : j+w])
		}
		i += int64(len(b)) / w
	}
	return nil
}

// writeArchiveContacts writes the index of the archive a again: the keys
// of old (in r; none when old is nil) and keys, covering a up to
// covered. The caller holds the call starts' lock.
func (l *CallStartsFile) writeArchiveContacts(a *os.File, r io.ReaderAt, old *keyIndex, keys [][archiveContactWidth]byte, covered int64) error {
	path := l.archiveContactsPath()
	removeTemps(l.dir, ArchiveContactsName, staleTemp, time.Now()) //nolint:errcheck // the next build tries again
	w, err := createArchiveContacts(path, private.FileMode(l.dir))
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer w.Abort()
	kw := newKeyIndexWriter(w, archiveContactWidth)
	if err := kw.merge(old, r, len(keys), func(i int) []byte { return keys[i][:] }); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if _, _, err := kw.finish(a, covered, nil); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := w.Commit(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
