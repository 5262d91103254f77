package store

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
	"github.com/jackc/pgx/v5"
)

// EraseOptions tune [Files.EraseJournal] and [Postgres.EraseJournal].
type EraseOptions struct {
	// Keys make the keyed hash a tombstone keeps in place of the number:
	// the first of Keys.Hashes. Required.
	Keys JournalKeys
	// At is when the people were erased, each tombstone's ErasedAt;
	// now if zero.
	At time.Time
	// Retention: the people are erased by a retention, not at their
	// request; the tombstones say so (Reason [ReasonRetention]).
	Retention bool
	// BeforeReplace and AfterReplace, if set, run once the new journal
	// is written and before it replaces the old one (in PostgreSQL,
	// before the transaction commits), and once it has; an error from
	// either stops the erase there, as a crash would. Tests use them.
	BeforeReplace, AfterReplace func() error
}

// ReasonRetention is the Reason of a tombstone a retention wrote.
const ReasonRetention = "retention"

// EraseCounts is what erasing people from a journal changed.
type EraseCounts struct {
	Removed    int // intents and outcomes taken out
	Tombstones int // tombstones written in their place, one a contact
}

// EraseJournal replaces, in the state directory's journal, every intent
// and outcome of the contacts whose numbers (E.164) are in numbers by one
// tombstone ([TypeErased]) per contact, where the contact's last record
// was, with its status and attempts then: the journal no longer holds the
// numbers, and a resume still never calls those contacts again. It takes
// the run lock (a shard's, for a shard's Files) and the journal's own,
// refusing with an error wrapping [ErrLocked] that names the holder while
// a run holds either, and replaces the file whole by the durable replace:
// a crash leaves the old journal or the new one. A journal that holds
// none of the numbers is left as it is, so erasing again changes nothing.
// A missing journal holds nobody. The whole campaign's Files of a
// campaign run in shards erases each shard's journal, each under its
// shard's lock.
func (s Files) EraseJournal(ctx context.Context, numbers []string, opts EraseOptions) (EraseCounts, error) {
	if s.parent == "" {
		shards, err := shardDirs(s.Dir)
		if err != nil {
			return EraseCounts{}, fmt.Errorf("erasing people from the journals in %s: %w", s.Dir, err)
		}
		if len(shards) > 0 {
			return s.eraseShards(ctx, shards, numbers, opts)
		}
	}
	path := s.Journal()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return EraseCounts{}, nil
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return EraseCounts{}, fmt.Errorf("erasing people from journal %s: %w", path, err)
	}
	defer unlock()
	n, err := eraseJournalFile(path, numbers, opts)
	if err != nil {
		return n, fmt.Errorf("erasing people from journal %s: %w", path, err)
	}
	return n, nil
}

// eraseShards erases the people from the journal of each shard
// directory of shards (name to shard count), in name order.
func (s Files) eraseShards(ctx context.Context, shards map[string]int, numbers []string, opts EraseOptions) (EraseCounts, error) {
	var total EraseCounts
	shardsIn, err := ShardsIn(s.Dir)
	if err != nil {
		return total, err
	}
	for _, sh := range shardsIn {
		shard := ShardFiles(s.Dir, sh[0], sh[1])
		shard.pushed = s.pushed
		n, err := shard.EraseJournal(ctx, numbers, opts)
		total.Removed += n.Removed
		total.Tombstones += n.Tombstones
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// eraseJournalFile is EraseJournal's rewrite of the journal at path,
// under the run lock.
func eraseJournalFile(path string, numbers []string, opts EraseOptions) (EraseCounts, error) {
	e, err := newEraser(numbers, opts)
	if err != nil {
		return EraseCounts{}, err
	}
	unlock, ok, err := tryLockFile(path, os.O_RDONLY, false)
	if err != nil {
		return EraseCounts{}, fmt.Errorf("locking the journal: %w", err)
	}
	if !ok {
		return EraseCounts{}, fmt.Errorf("%w: the journal is open in another process", ErrLocked)
	}
	locked := true
	defer func() {
		if locked {
			unlock()
		}
	}()
	// An erase killed before its replace left its copy of the journal
	// (the people it was erasing in it); only an erase writes one, under
	// this lock.
	if err := removeTemps(filepath.Dir(path), filepath.Base(path), 0, time.Time{}); err != nil {
		return EraseCounts{}, fmt.Errorf("removing the copy an earlier, killed erase left: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return EraseCounts{}, err
	}
	defer f.Close()
	size, err := e.scanFile(f)
	if err != nil {
		return EraseCounts{}, err
	}
	if len(e.hits) == 0 {
		return EraseCounts{}, nil
	}
	w, err := durable.Create(path, private.FileMode(filepath.Dir(path)))
	if err != nil {
		return EraseCounts{}, err
	}
	defer w.Abort()
	var from int64
	for _, h := range e.hits {
		if _, err := io.Copy(w, io.NewSectionReader(f, from, h.pos-from)); err != nil {
			return EraseCounts{}, fmt.Errorf("writing the new journal: %w", err)
		}
		if _, err := w.Write(e.tombs[h.pos]); err != nil {
			return EraseCounts{}, fmt.Errorf("writing the new journal: %w", err)
		}
		from = h.end
	}
	if _, err := io.Copy(w, io.NewSectionReader(f, from, size-from)); err != nil {
		return EraseCounts{}, fmt.Errorf("writing the new journal: %w", err)
	}
	if opts.BeforeReplace != nil {
		if err := opts.BeforeReplace(); err != nil {
			return EraseCounts{}, err
		}
	}
	// Windows replaces no file held open; the run lock keeps runs out.
	f.Close()
	unlock()
	locked = false
	if err := w.Commit(); err != nil {
		return EraseCounts{}, fmt.Errorf("replacing the journal: %w", err)
	}
	n := e.counts()
	if opts.AfterReplace != nil {
		if err := opts.AfterReplace(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// eraser finds the records of the erased numbers in a journal and makes
// their tombstones.
type eraser struct {
	numbers map[string]bool
	opts    EraseOptions
	hits    []eraseHit          // the records of erased numbers, in journal order
	tally   *State              // their contacts, as a State folds them
	ats     map[int64]time.Time // each hit's time, by its position
	tombs   map[int64][]byte    // the tombstone lines, at the position of each contact's last record
}

// eraseHit is a record of an erased number: its line spans [pos, end)
// (a row id and nothing, in PostgreSQL).
type eraseHit struct{ pos, end int64 }

func newEraser(numbers []string, opts EraseOptions) (*eraser, error) {
	if opts.Keys == nil {
		return nil, errors.New("no erasure key to hash the numbers with")
	}
	if opts.At.IsZero() {
		opts.At = time.Now()
	}
	e := &eraser{numbers: make(map[string]bool, len(numbers)), opts: opts, tally: newState("", nil), ats: map[int64]time.Time{}}
	for _, n := range numbers {
		e.numbers[n] = true
	}
	return e, nil
}

// phoneMark starts a record's phone field as callrun writes it. Within a
// JSON string every quote is escaped, so the mark is never inside one.
var phoneMark = []byte(`"phone":"`)

// linePhone returns the value of line's phone field without decoding the
// line, nil when it has none.
func linePhone(line []byte) []byte {
	i := bytes.Index(line, phoneMark)
	if i < 0 {
		return nil
	}
	v := line[i+len(phoneMark):]
	j := bytes.IndexByte(v, '"')
	if j < 0 {
		return nil
	}
	return v[:j]
}

// scanFile reads the journal f once, a map lookup on each line's phone,
// and decodes only the lines of erased numbers. It returns the length of
// the file's whole lines: a torn last line, which a crash leaves and the
// next run cuts, is left out of the new journal.
func (e *eraser) scanFile(f *os.File) (int64, error) {
	br := bufio.NewReaderSize(f, 64<<10)
	var scratch []byte
	var off int64
	lineNo := 0
	for {
		line, long, err := readLine(br, &scratch)
		if err != nil && err != io.EOF {
			return 0, fmt.Errorf("reading the journal: %w", err)
		}
		if len(line) == 0 || line[len(line)-1] != '\n' {
			break // the end, or a torn last line
		}
		lineNo++
		if long {
			return 0, fmt.Errorf("line %d: corrupt: line longer than %d bytes", lineNo, maxLine)
		}
		if p := linePhone(line); p != nil && e.numbers[string(p)] {
			if err := e.hit(line, off, off+int64(len(line))); err != nil {
				return 0, fmt.Errorf("line %d: %w", lineNo, err)
			}
		}
		off += int64(len(line))
		if err == io.EOF {
			break
		}
	}
	return off, e.finish()
}

// hit decodes the record of an erased number, whose line spans [pos, end).
func (e *eraser) hit(line []byte, pos, end int64) error {
	var rec Record
	if err := json.Unmarshal(line, &rec); err != nil {
		return corrupt{err}
	}
	if err := rec.check(); err != nil {
		return err
	}
	if rec.Type != TypeIntent && rec.Type != TypeOutcome {
		return nil
	}
	e.hits = append(e.hits, eraseHit{pos: pos, end: end})
	e.ats[pos] = rec.At
	e.tally.apply(&rec, pos)
	return nil
}

// finish makes the tombstone of each contact the hits are of.
func (e *eraser) finish() error {
	e.tombs = make(map[int64][]byte, len(e.tally.entries))
	for c, en := range e.tally.entries {
		hashes := e.opts.Keys.Hashes(c.phone)
		if len(hashes) == 0 {
			return errors.New("the erasure keys gave no hash of a number")
		}
		rec := Record{Type: TypeErased, Agent: e.tally.names[c.agent], Hash: hashes[0], N: int(c.n),
			Attempt: int(en.attempts), Status: string(statusNames[en.status]), ErasedAt: e.opts.At, At: e.ats[en.last]}
		if e.opts.Retention {
			rec.Reason = ReasonRetention
		}
		line, err := encodeRecord(&rec)
		if err != nil {
			return fmt.Errorf("writing a tombstone: %w", err)
		}
		e.tombs[en.last] = line
	}
	return nil
}

func (e *eraser) counts() EraseCounts {
	return EraseCounts{Removed: len(e.hits), Tombstones: len(e.tombs)}
}

// EraseJournal replaces, in the campaign's journal in the database (all
// its shards'), every intent and outcome of the contacts whose numbers
// (E.164) are in numbers by one tombstone ([TypeErased]) per contact, in
// the row of the contact's last record, as [Files.EraseJournal] does in a
// file: the rows deleted and the tombstones inserted in one transaction,
// under the lock of the whole campaign, which it takes, refusing with an
// error wrapping [ErrLocked] that names the holder while any run of the
// campaign or of a shard holds its lock. The store must be the whole
// campaign's (opened as shard 0 of 1).
func (p *Postgres) EraseJournal(ctx context.Context, numbers []string, opts EraseOptions) (EraseCounts, error) {
	if p.count != 1 {
		return EraseCounts{}, fmt.Errorf("erasing people from the journal of campaign %s: open the whole campaign's store, not shard %d/%d's", p.campaign, p.index, p.count)
	}
	e, err := newEraser(numbers, opts)
	if err != nil {
		return EraseCounts{}, fmt.Errorf("erasing people from the journal of campaign %s: %w", p.campaign, err)
	}
	unlock, err := p.lockRun(ctx)
	if err != nil {
		return EraseCounts{}, fmt.Errorf("erasing people from the journal of campaign %s: %w", p.campaign, err)
	}
	defer unlock()
	list := slices.Collect(maps.Keys(e.numbers))
	err = pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
DELETE FROM callrun_journal
WHERE campaign = $1 AND line LIKE '%"phone":"%' AND (line::jsonb ->> 'phone') = ANY($2)
RETURNING id, line`, p.campaign, list)
		if err != nil {
			return p.wrap("erasing people from the journal in", err)
		}
		type row struct {
			id   int64
			line []byte
		}
		var deleted []row
		var r row
		if _, err := pgx.ForEachRow(rows, []any{&r.id, &r.line}, func() error {
			deleted = append(deleted, row{r.id, slices.Clone(r.line)})
			return nil
		}); err != nil {
			return p.wrap("erasing people from the journal in", err)
		}
		if len(deleted) == 0 {
			return nil
		}
		slices.SortFunc(deleted, func(a, b row) int { return cmp.Compare(a.id, b.id) })
		for _, d := range deleted {
			if err := e.hit(d.line, d.id, d.id); err != nil {
				return fmt.Errorf("journal of campaign %s in the %s, row id %d: %w", p.campaign, p.where, d.id, err)
			}
		}
		if err := e.finish(); err != nil {
			return err
		}
		ids := make([]int64, 0, len(e.tombs))
		lines := make([]string, 0, len(e.tombs))
		for id, line := range e.tombs {
			ids = append(ids, id)
			lines = append(lines, string(bytes.TrimSuffix(line, []byte("\n"))))
		}
		if _, err := tx.Exec(ctx, `
INSERT INTO callrun_journal (id, campaign, line) OVERRIDING SYSTEM VALUE
SELECT u.id, $1, u.line FROM unnest($2::bigint[], $3::text[]) AS u(id, line)`, p.campaign, ids, lines); err != nil {
			return p.wrap("writing tombstones to the journal in", err)
		}
		if opts.BeforeReplace != nil {
			return opts.BeforeReplace()
		}
		return nil
	})
	if err != nil {
		return EraseCounts{}, fmt.Errorf("erasing people from the journal of campaign %s: %w", p.campaign, err)
	}
	n := e.counts()
	if opts.AfterReplace != nil {
		if err := opts.AfterReplace(); err != nil {
			return n, err
		}
	}
	return n, nil
}
