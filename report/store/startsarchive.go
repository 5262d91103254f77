package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
)

// StartsHorizon is how old a call start must be before [CallStartsFile.Compact]
// moves it into the archive, and how far back `state push` copies a
// machine's call starts into PostgreSQL: twice the longest span any
// pressure setting counts (14 days), so that no start that may still
// count leaves the file a run reads, even read with a clock that is some
// days off.
const StartsHorizon = 30 * 24 * time.Hour

// CallStartsArchiveName is the file, beside the call starts, that
// compaction moves their old lines into. Only `callrun history` (and
// `state push`) read it.
const CallStartsArchiveName = "call-starts-archive.jsonl"

// compactMinBytes is the least the old lines must take before a
// compaction moves them (about 6,000 call starts): below it, reading them
// at a run's start costs a few milliseconds.
const compactMinBytes = 1 << 20

func (l *CallStartsFile) archivePath() string { return filepath.Join(l.dir, CallStartsArchiveName) }

// ConversationsArchiveName is the file, beside the conversations, that
// compaction moves their old lines into. Only `callrun history` (and
// `state push`) read it.
const ConversationsArchiveName = "conversations-archive.jsonl"

func (l *CallStartsFile) conversationsArchivePath() string {
	return filepath.Join(l.dir, ConversationsArchiveName)
}

// Compact moves the leading lines of the file whose call starts are older
// than [StartsHorizon] at now (and the lines giving back starts among
// them) into the archive, call-starts-archive.jsonl, once they take at
// least 1 MiB and at least as much as the lines that stay: the file a
// run reads whole at its start then holds about the last 30 days, however
// long the machine has been calling. It moves the leading conversations
// older than StartsHorizon into conversations-archive.jsonl the same way,
// on the same conditions. A run calls it at its start, and it reads the
// file as the run's first batch would have, so a run with nothing to move
// pays nothing for it. It returns how many call starts and conversations
// it moved.
//
// It holds the call starts' lock throughout, and takes two steps for each
// file: it appends the old lines to the archive and syncs them, then
// replaces the file with the lines that stay (report/durable's atomic
// replace). A crash between the two leaves the old lines in both files: a
// run reads only the file, so counts each once, and History and
// Conversations read a line found in both once. Another process that read
// the file before the replace notices, as the line it read last is no
// longer where it was, and reads the new file from its start.
func (l *CallStartsFile) Compact(now time.Time) (starts, conversations int, err error) {
	_, errStarts := os.Stat(l.path())
	_, errConversations := os.Stat(l.conversationsPath())
	if errors.Is(errStarts, os.ErrNotExist) && errors.Is(errConversations, os.ErrNotExist) {
		return 0, 0, nil
	}
	fl, err := l.lock()
	if err != nil {
		return 0, 0, err
	}
	defer fl.Unlock()
	l.mu.Lock()
	defer l.mu.Unlock()
	// Only a compaction writes these, under the lock: one found now was
	// left by a compaction that was killed.
	for _, name := range []string{CallStartsFileName, ConversationsFileName} {
		removeTemps(l.dir, name, 0, now) //nolint:errcheck // removed by the next compaction
	}
	if starts, err = l.compactStarts(now); err != nil {
		return 0, 0, err
	}
	conversations, err = l.compactConversations(now)
	return starts, conversations, err
}

// compactStarts is Compact's move of the call starts. The caller holds
// the lock and l.mu.
func (l *CallStartsFile) compactStarts(now time.Time) (int, error) {
	f, err := os.Open(l.path())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("opening the %s: %w", l, err)
	}
	defer f.Close()
	old := now.Add(-StartsHorizon)
	var cut int64 // where the leading old lines end
	moved, cutting := 0, true
	var last, latest time.Time // the latest start moved, and of the file
	l.starts.forget()
	l.open = map[string][]timedID{}
	if err := l.refresh(f, func(s CallStart, end int64) {
		if !s.Released {
			latest = maxTime(latest, s.At)
		}
		if cutting && !s.Released && !s.At.Before(old) {
			cutting = false
		}
		if cutting {
			cut = end
			if !s.Released {
				moved++
				last = maxTime(last, s.At)
			}
		}
	}); err != nil {
		return 0, err
	}
	size := l.starts.off
	if moved == 0 || cut < l.compactMin || cut < size-cut || !beforeHorizon(last, latest) {
		return 0, nil
	}
	// The file read again from its start, unless it is replaced.
	read, open := l.starts, l.open
	l.starts.forget()
	l.open = map[string][]timedID{}
	if err := l.moveLeading(f, l.path(), l.archivePath(), cut, size); err != nil {
		return 0, err
	}
	read.off -= cut // the same starts, and the same last line
	l.starts, l.open = read, open
	l.archived = nil // its index is brought up to date, under the lock, by the next check
	return moved, nil
}

// compactConversations is Compact's move of the conversations. The caller holds
// the lock and l.mu.
func (l *CallStartsFile) compactConversations(now time.Time) (int, error) {
	path := l.conversationsPath()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("opening the conversations of the %s: %w", l, err)
	}
	defer f.Close()
	old := now.Add(-StartsHorizon)
	var cut int64 // where the leading old lines end
	moved, cutting := 0, true
	var last, latest time.Time // the latest conversation moved, and of the file
	size, err := readAll(conversationLines(path), f, func(c Conversation, end int64) {
		latest = maxTime(latest, c.At)
		if cutting = cutting && c.At.Before(old); cutting {
			cut, moved = end, moved+1
			last = maxTime(last, c.At)
		}
	})
	if err != nil {
		return 0, err
	}
	if moved == 0 || cut < l.compactMin || cut < size-cut || !beforeHorizon(last, latest) {
		return 0, nil
	}
	l.conversations.lines.forget() // read again from the start
	l.conversations.conversations = nil
	if err := l.moveLeading(f, path, l.conversationsArchivePath(), cut, size); err != nil {
		return 0, err
	}
	return moved, nil
}

// beforeHorizon reports whether last, the latest entry a compaction
// would move, is older than [StartsHorizon] before latest, the file's
// latest entry, as well as before the compaction's now: a machine whose
// clock is a month or more ahead (one sharing CALLRUN_HOME, a clock set
// wrong, that no service's Date checks: a run archives only once its
// clock is checked) must not move starts that still count, by the right
// clock, into the archive that no run reads. The compaction then waits
// for newer entries, as forgetOld waits by the latest entry too.
func beforeHorizon(last, latest time.Time) bool {
	return last.Before(latest.Add(-StartsHorizon))
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// moveLeading takes compaction's two steps for f, the file at path whose
// whole lines take size bytes: it appends their first cut bytes to the
// archive at archive and syncs them, then replaces the file with the
// rest. It closes f before the replace (Windows replaces no file held
// open). The caller holds the lock.
func (l *CallStartsFile) moveLeading(f *os.File, path, archive string, cut, size int64) error {
	if err := l.appendArchive(archive, f, cut); err != nil {
		return err
	}
	if l.beforeReplace != nil {
		if err := l.beforeReplace(); err != nil {
			return err
		}
	}
	w, err := durable.Create(path, private.FileMode(filepath.Dir(path)))
	if err != nil {
		return fmt.Errorf("compacting %s: %w", path, err)
	}
	defer w.Abort()
	if _, err := io.Copy(w, io.NewSectionReader(f, cut, size-cut)); err != nil {
		return fmt.Errorf("compacting %s: %w", path, err)
	}
	f.Close()
	if err := w.Commit(); err != nil {
		return fmt.Errorf("compacting %s (its old lines are in %s as well; history reads them once): %w", path, filepath.Base(archive), err)
	}
	return nil
}

// appendArchive appends the first cut bytes of f to the archive at path,
// after cutting a torn last line a killed compaction left there, and
// syncs them.
func (l *CallStartsFile) appendArchive(path string, f *os.File, cut int64) error {
	a, err := openOrCreate(l.dir, path)
	if err != nil {
		return fmt.Errorf("opening the archive %s: %w", path, err)
	}
	defer a.Close()
	fi, err := a.Stat()
	var line []byte
	var end int64
	if err == nil {
		line, end, err = lastLine(a, fi.Size())
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	end += int64(len(line)) // where the last newline ends: after it, a line a killed compaction left torn
	if err := cutTail(a, end); err != nil {
		return fmt.Errorf("cutting the torn last line of %s: %w", path, err)
	}
	if _, err := io.Copy(io.NewOffsetWriter(a, end), io.NewSectionReader(f, 0, cut)); err != nil {
		a.Truncate(end) //nolint:errcheck // cut again by the next compaction
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := a.Sync(); err != nil {
		a.Truncate(end) //nolint:errcheck
		return fmt.Errorf("syncing %s: %w", path, err)
	}
	return nil
}

// Recent returns the call starts that a compaction at now would not move
// ([recent]): those from [StartsHorizon] before now, and older ones not
// that old before the file's latest start, of every number, oldest
// first, each with whether it was given back: `state push` copies them
// into PostgreSQL. A machine whose clock is weeks ahead so leaves out no
// start that still counts.
func (l *CallStartsFile) Recent(_ context.Context, now time.Time) ([]CallStart, error) {
	var latest time.Time
	if err := readLatest(l.path(), callStartLines, func(s CallStart) {
		if !s.Released {
			latest = maxTime(latest, s.At)
		}
	}); err != nil {
		return nil, fmt.Errorf("reading the %s: %w", l, err)
	}
	return l.scan(func(s CallStart) bool { return recent(s.At, now, latest) })
}

// recent reports whether an entry at is one a compaction at now keeps:
// not older than [StartsHorizon] at now, or not before the horizon of
// latest, the file's latest entry ([beforeHorizon]); with no entry in
// the file, by now alone.
func recent(at, now, latest time.Time) bool {
	if latest.IsZero() {
		latest = now
	}
	return !at.Before(now.Add(-StartsHorizon)) || !beforeHorizon(at, latest)
}

// readLatest calls fn with each entry of the file at path, followed by
// lines (none if it is missing), for the latest of them.
func readLatest[T any](path string, lines func(string) follower[T], fn func(T)) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = readAll(lines(path), f, func(v T, _ int64) { fn(v) })
	return err
}

// scan reads the archive, then the file, and returns the starts keep
// accepts, oldest first, each given back if a later line gave its ID
// back. A start found twice, the same ID at the same time, is one: a
// compaction stopped between its two steps left its lines in both files.
func (l *CallStartsFile) scan(keep func(CallStart) bool) ([]CallStart, error) {
	type seenKey struct {
		id string
		at int64
	}
	seen := map[seenKey]bool{}
	var out []CallStart
	counting := map[string][]int{} // the starts in out not given back, by ID
	apply := func(s CallStart, _ int64) {
		if s.Released {
			if is := counting[s.ID]; len(is) > 0 {
				out[is[len(is)-1]].Released = true
				counting[s.ID] = is[:len(is)-1]
			}
			return
		}
		k := seenKey{s.ID, s.At.UnixNano()}
		if !keep(s) || seen[k] {
			return
		}
		seen[k] = true
		counting[s.ID] = append(counting[s.ID], len(out))
		out = append(out, s)
	}
	if err := readBoth(l.archivePath(), l.path(), func(f *os.File) (int64, error) {
		var keyErr error
		n, err := readAll(callStartLines(f.Name()), f, checkedLines(l, f.Name(), func(s CallStart) string { return s.Hash }, apply, &keyErr))
		return n, cmp.Or(keyErr, err)
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// readBoth reads the archive at archive, then the file at path, with
// read, each if it exists. The file is opened first: a compaction between
// the two reads then leaves its lines in both, never in neither.
func readBoth(archive, path string, read func(*os.File) (int64, error)) error {
	cur, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		cur = nil
	} else if err != nil {
		return err
	} else {
		defer cur.Close()
	}
	a, err := os.Open(archive)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return err
	default:
		_, err = read(a)
		a.Close()
		if err != nil {
			return err // it names the file
		}
	}
	if cur == nil {
		return nil
	}
	_, err = read(cur)
	return err
}
