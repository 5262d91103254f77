package store

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/inorder"
	"github.com/callrun/callrun/report/private"
)

// PressureEraseCounts is what erasing people from the call starts and
// conversations changed: the lines that now hold their hash in place of
// their number.
type PressureEraseCounts struct {
	Starts        int // call starts and their releases
	Conversations int
}

// Erase rewrites, in the call starts and the conversations and in their
// archives, every line of the numbers (E.164) in numbers in an erased
// person's form: the keyed hash of the number ([NumberHash], the first of
// opts.Keys.Hashes) in a hash field and in the start's ID where the number
// was, and no number field, so that the files no longer hold the numbers
// and yet the starts and conversations still hold them back: a journal's
// check, [CallStartsFile.Counted] and History count them under the hash of
// the number they are asked about. (A binary older than the hashed lines
// refuses the file, and calls nobody.)
//
// It holds the call starts' lock throughout and replaces each file whole
// by the durable replace, the archive first, then the file: a crash leaves
// each file old or new, never torn, and another process that read a file
// notices the replace and reads it again. A file that holds none of the
// numbers is left as it is, so erasing again changes nothing. opts.At is
// unused: the lines keep their times. opts.BeforeReplace and
// opts.AfterReplace run around each of the (up to four) replaces.
func (l *CallStartsFile) Erase(_ context.Context, numbers []string, opts EraseOptions) (PressureEraseCounts, error) {
	var n PressureEraseCounts
	numbers, hashes, err := hashesToWrite(numbers, opts)
	if err != nil {
		return n, err
	}
	erased := make(map[string]string, len(numbers)) // number to the hash it is written as
	for i, num := range numbers {
		erased[num] = hashes[i]
	}
	fl, err := l.lock()
	if err != nil {
		return n, err
	}
	defer fl.Unlock() //nolint:errcheck // closing releases it too
	l.mu.Lock()
	defer l.mu.Unlock()
	// This process reads the files again from their start.
	l.starts.forget()
	l.open = map[string][]timedID{}
	l.archived = nil
	// The archive's index holds a hash of each archived contact's number
	// with its campaign and agent, which no key protects: it goes before
	// the archive is rewritten, and the next run builds it again from
	// the erased archive, whose erased lines it leaves out.
	if err := os.Remove(l.archiveContactsPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return n, fmt.Errorf("erasing people: removing %s: %w", l.archiveContactsPath(), err)
	}
	// So does the copy a run killed while it wrote the index left, which
	// holds the same hashes: every writer of it holds the lock held here,
	// so one found now is such a leftover, however young.
	if err := removeTemps(l.dir, ArchiveContactsName, 0, time.Time{}); err != nil {
		return n, fmt.Errorf("erasing people: removing the copy of %s a killed run left: %w", l.archiveContactsPath(), err)
	}
	l.conversations.lines.forget()
	l.conversations.conversations = nil
	hashStart := func(line []byte) ([]byte, error) {
		var s CallStart
		if err := json.Unmarshal(line, &s); err != nil || (s.Number == "") == (s.Hash == "") {
			return nil, errors.New("not a call start")
		}
		h, ok := erased[s.Number]
		if !ok {
			return nil, nil
		}
		s.ID = strings.ReplaceAll(s.ID, s.Number, h)
		s.Number, s.Hash = "", h
		return json.Marshal(s)
	}
	hashConversation := func(line []byte) ([]byte, error) {
		var c Conversation
		if err := json.Unmarshal(line, &c); err != nil || (c.Number == "") == (c.Hash == "") || c.Key == "" {
			return nil, errors.New("not a conversation")
		}
		h, ok := erased[c.Number]
		if !ok {
			return nil, nil
		}
		c.Number, c.Hash = "", h
		return json.Marshal(c)
	}
	for _, f := range []struct {
		path  string
		hash  func([]byte) ([]byte, error)
		count *int
	}{
		{l.archivePath(), hashStart, &n.Starts},
		{l.path(), hashStart, &n.Starts},
		{l.conversationsArchivePath(), hashConversation, &n.Conversations},
		{l.conversationsPath(), hashConversation, &n.Conversations},
	} {
		c, err := hashLines(f.path, f.hash, opts)
		*f.count += c
		if err != nil {
			return n, fmt.Errorf("erasing people from %s: %w", f.path, err)
		}
	}
	return n, nil
}

// hashesToWrite returns numbers sorted, each once, and the hash each is
// to be written as: the first of opts.Keys.Hashes. The erases of the call
// starts and of the do-not-call lists share it.
func hashesToWrite(numbers []string, opts EraseOptions) ([]string, []string, error) {
	if opts.Keys == nil {
		return nil, nil, errors.New("erasing people needs the store's erasure keys to hash their numbers with")
	}
	numbers = slices.Compact(slices.Sorted(slices.Values(numbers)))
	hashes := make([]string, len(numbers))
	for i, num := range numbers {
		hs := opts.Keys.Hashes(num)
		if len(hs) == 0 {
			return nil, nil, errors.New("erasing people needs the store's erasure keys: they gave no hash of a number")
		}
		hashes[i] = hs[0]
	}
	return numbers, hashes, nil
}

// hashLines replaces the file at path, JSON Lines, by the durable replace
// with a copy in which each line hash returns a new line for (without its
// newline) is that line, and returns how many it replaced; a file with no
// such line, or none, is left as it is. A torn last line (never
// acknowledged: the next writer cuts it) is left out. hash runs on
// every core at once ([inorder.Items]). opts' hooks run
// before and after the replace. The erases of the call starts, the
// conversations, the do-not-call list and the deliveries share it.
func hashLines(path string, hash func([]byte) ([]byte, error), opts EraseOptions) (int, error) {
	// A rewrite killed before its replace left its copy of the file (the
	// people it was erasing in it): the caller holds the lock every writer
	// of that copy holds, so one found now is such a leftover.
	if err := removeTemps(filepath.Dir(path), filepath.Base(path), 0, time.Time{}); err != nil {
		return 0, fmt.Errorf("removing the copy an earlier, killed rewrite left: %w", err)
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	w, err := durable.Create(path, private.FileMode(filepath.Dir(path)))
	if err != nil {
		return 0, err
	}
	defer w.Abort()
	bw := bufio.NewWriterSize(w, 64<<10)
	br := bufio.NewReaderSize(f, 64<<10)
	type read struct {
		line []byte
		pos  int64
	}
	var off int64
	next := func() (read, bool, error) {
		line, err := br.ReadBytes('\n')
		if errors.Is(err, io.EOF) {
			return read{}, false, nil // the end, or a torn last line
		}
		r := read{line, off}
		off += int64(len(line))
		return r, err == nil, err
	}
	n := 0
	err = inorder.Items(next, func(r read) ([]byte, error) {
		if blank(r.line) {
			return nil, nil
		}
		h, err := hash(r.line)
		if err != nil {
			return nil, fmt.Errorf("the line at byte %d: %w", r.pos, err)
		}
		return h, nil
	}, func(r read, h []byte) error {
		line := r.line
		if h != nil {
			line, n = append(h, '\n'), n+1
		}
		_, err := bw.Write(line)
		return err
	})
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, nil
	}
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	if opts.BeforeReplace != nil {
		if err := opts.BeforeReplace(); err != nil {
			return 0, err
		}
	}
	f.Close() // Windows replaces no file held open; the lock keeps writers out
	if err := w.Commit(); err != nil {
		return 0, fmt.Errorf("replacing the file: %w", err)
	}
	if opts.AfterReplace != nil {
		if err := opts.AfterReplace(); err != nil {
			return n, err
		}
	}
	return n, nil
}
