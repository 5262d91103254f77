package store

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/callrun/callrun/report/private"
	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	"github.com/gofrs/flock"
)

// Record is one line of the journal (JSON Lines).
type Record struct {
	Type    string `json:"t"`                  // TypeIntent, TypeOutcome, TypeRun (a run started: Note says what), TypeEnd or TypeErased
	Agent   string `json:"agent,omitempty"`    // agent name (contact identity part 1)
	Hash    string `json:"hash,omitempty"`     // a tombstone's: the keyed hash of the erased number, in its Phone's place
	Phone   string `json:"phone,omitempty"`    // E.164 (identity part 2)
	N       int    `json:"n,omitempty"`        // occurrence number, 0 unless dedupe: none repeats a number (identity part 3)
	AgentID string `json:"agent_id,omitempty"` // the service's id of the agent
	Sheet   string `json:"sheet,omitempty"`    // sheet file the contact came from
	Row     int    `json:"row,omitempty"`      // row of the sheet
	Attempt int    `json:"attempt,omitempty"`  // 1-based attempt number, on intent and outcome; a tombstone's contact's attempts
	Status  string `json:"status,omitempty"`   // an outcome's OutcomeSent, OutcomeFailed, ...; a tombstone's contact's Status
	HTTP    int    `json:"http,omitempty"`     // HTTP status of the service's answer
	Reason  string `json:"reason,omitempty"`   // why, in words, for anything but sent
	Body    string `json:"body,omitempty"`     // excerpt of the service's answer (already bounded by the caller)
	CallID  string `json:"call_id,omitempty"`  // outcome of a sent call only: the call id the service's answer gave
	Note    string `json:"note,omitempty"`     // free text, on run and end records
	// ErasedAt is when a tombstone's contact was erased; At stays the
	// time of the contact's last record.
	ErasedAt time.Time `json:"erased_at,omitzero"`
	At       time.Time `json:"at"` // when; Append sets it to now if zero
}

// Record types.
const (
	// TypeIntent is written before a call-start request is sent.
	TypeIntent = "intent"
	// TypeOutcome is written after, with the Status of the attempt.
	TypeOutcome = "outcome"
	// TypeRun marks the start of a run; its Note says what it was.
	TypeRun = "run"
	// TypeEnd marks the end of a run that ended by itself (not killed);
	// its Note says how (complete, interrupted, outside-hours, ...). A
	// callrun older than this record refuses a journal that holds one.
	TypeEnd = "end"
	// TypeErased is a tombstone: it stands for every record of a contact
	// whose person was erased, at the place of its last one, under the
	// keyed hash of the number (Hash) rather than the number. Its Status
	// is the contact's status then (a [Status]: sent, failed, uncertain
	// or pending) and its Attempt the contact's attempts, so that the
	// contact stays settled: nobody is called again because they were
	// erased. A callrun older than this record refuses a journal that
	// holds one.
	TypeErased = "erased"
)

// Outcome statuses, the Status of a TypeOutcome record.
const (
	OutcomeSent      = "sent"      // the service accepted the call start
	OutcomeFailed    = "failed"    // the service refused it
	OutcomeUncertain = "uncertain" // it may have reached the service
	OutcomeRetry     = "retry"     // provably not sent; will be tried again
	OutcomeSkipped   = "skipped"   // abandoned before sending (e.g. shutdown): provably not sent
)

// Key identifies a contact in the journal.
type Key struct {
	Agent string // agent name
	Phone string // E.164
	N     int    // occurrence number; 0 unless dedupe: none repeats a number
}

// Key returns the identity of the contact the record is about; a
// tombstone's has its Hash in the place of the number.
func (r Record) Key() Key {
	if r.Type == TypeErased {
		return Key{Agent: r.Agent, Phone: r.Hash, N: r.N}
	}
	return Key{Agent: r.Agent, Phone: r.Phone, N: r.N}
}

// check reports whether r is a record the journal can hold and replay.
func (r Record) check() error {
	switch r.Type {
	case TypeRun, TypeEnd:
		return nil
	case TypeErased:
		return r.checkTombstone()
	case TypeIntent, TypeOutcome:
	default:
		return fmt.Errorf("unknown record type %q", r.Type)
	}
	if r.Agent == "" || r.Phone == "" {
		return fmt.Errorf("%s record without agent or phone", r.Type)
	}
	if r.N < 0 || r.N > math.MaxInt32 {
		return fmt.Errorf("%s record with occurrence number %d", r.Type, r.N)
	}
	if r.Type == TypeIntent {
		if r.Status != "" {
			return fmt.Errorf("intent record with status %q", r.Status)
		}
		return nil
	}
	switch r.Status {
	case OutcomeSent, OutcomeFailed, OutcomeUncertain, OutcomeRetry, OutcomeSkipped:
		return nil
	}
	return fmt.Errorf("outcome record with unknown status %q", r.Status)
}

// checkTombstone reports whether r is a tombstone the journal can hold.
func (r Record) checkTombstone() error {
	if r.Agent == "" || r.Phone != "" {
		return errors.New("erased record without agent, or with a phone number")
	}
	if _, _, ok := splitHash(r.Hash); !ok {
		return fmt.Errorf("erased record whose hash %q is not h1:KEY:MAC", r.Hash)
	}
	if r.N < 0 || r.N > math.MaxInt32 || r.Attempt < 0 {
		return fmt.Errorf("erased record with occurrence number %d, attempt %d", r.N, r.Attempt)
	}
	switch Status(r.Status) {
	case Sent, Failed, Uncertain, Pending:
		return nil
	}
	return fmt.Errorf("erased record with unknown status %q", r.Status)
}

// JournalKeys are the store's erasure keys, as a journal uses them: a
// number's keyed hashes, one for each key the store has (the first made
// with the key new hashes are made with), and whether the store has the
// key of an id. A journal that holds tombstones finds their contacts
// through them.
type JournalKeys interface {
	Hashes(e164 string) []string
	Has(id string) bool
}

// storeKeys are a store's erasure keys as its journal reads them: read
// from the store the first time a tombstone asks for them, so that a
// journal that holds none never reads them, nor fails for want of them.
type storeKeys struct {
	ctx     context.Context
	erasure func() (ErasureStore, error)
	once    sync.Once
	keys    *ErasureKeys
	err     error
}

// load reads the keys once.
func (k *storeKeys) load() (*ErasureKeys, error) {
	k.once.Do(func() {
		e, err := k.erasure()
		if err == nil {
			k.keys, err = e.Keys(k.ctx)
		}
		if err != nil {
			k.err = fmt.Errorf("reading the store's erasure keys, which the journal's tombstones need: %w", err)
		}
	})
	return k.keys, k.err
}

func (k *storeKeys) Hashes(e164 string) []string {
	keys, _ := k.load()
	return keys.Hashes(e164)
}

func (k *storeKeys) Has(id string) bool {
	keys, _ := k.load()
	return keys.Has(id)
}

// maxLine bounds one journal line. A longer line cannot be appended, and
// in a journal being replayed it is corruption.
const maxLine = 1 << 20

var errJournalClosed = errors.New("the journal is closed")

// ErrJournalGone is what a commit of a journal in a file wraps when the
// file at the journal's path is no longer the one the run opened (the
// state directory deleted or moved, the file replaced by a copy or a
// restore): the next run reads the file at the path, and would not find
// what this run wrote, so the commit's intents are refused and the run
// starts no call after it.
var ErrJournalGone = errors.New("the journal file was removed or replaced while the run held it open; the run starts no call after that")

// Journal is the append-only record of every call start's intent and
// outcome, in one JSON Lines file. Append returns only once the record is
// on disk, so a record that Append acknowledged survives a crash, a kill
// -9 or a power cut. A Journal is safe for concurrent use.
type Journal struct {
	path  string // where the journal is, for error messages
	sink  sink   // where batches are committed: a file, or a PostgreSQL table
	state *State
	gc    *groupCommit[batch]
}

// sink is where a [Journal] commits its batches: a JSON Lines file
// (fileSink) or a PostgreSQL table (pgSink). commit makes every record of
// the batch durable, or none that the caller may count on, and sets each
// record's pos: where [State.Lookup] finds it again.
type sink interface {
	commit(b *batch) error
	close() error
}

// batch is a group of records written with one write and one fsync.
type batch struct {
	buf  []byte
	recs []pending
	// refused are the indexes in recs of the intents the sink did not
	// write, with why: [ErrDoNotCall], an [*OptOutHeldError] or a
	// [HeldError]; nil when none.
	refused map[int]error
	// rewritten are the indexes in recs of the records a failed commit
	// wrote again once it was cut back (see fileSink.cutBack): durable,
	// so the journal's State takes them in although the commit failed.
	rewritten []int
}

// pending is a record in a batch: its line is b.buf[off:end], and pos
// is where the sink put it (set by commit).
type pending struct {
	rec      Record
	off, end int
	pos      int64
}

// line returns the record's journal line in b, with its newline.
func (b *batch) line(i int) []byte { return b.buf[b.recs[i].off:b.recs[i].end] }

// JournalOptions tune [OpenJournal]; the zero value is the default.
type JournalOptions struct {
	// Linger is how long a record queued with [Journal.Enqueue] waits at
	// most for a commit to ride along with; default [Linger].
	Linger time.Duration
	// BeforeSync, if set, runs on the journal's writer goroutine before
	// each fsync; an error from it fails the commit as a failed fsync
	// would. Tests and benchmarks use it to slow or break the disk.
	BeforeSync func() error
	// DoNotCall, if set, is checked as each intent is committed: an
	// intent whose number is on it is not written, and its Append
	// returns [ErrDoNotCall]; while an opt-out is held on it, no intent
	// is written, and Append returns an [*OptOutHeldError]. With files it
	// is the list's file, read
	// before the write; with PostgreSQL it must be the database's own
	// list, checked in the INSERT that writes the intents.
	DoNotCall DoNotCallList
	// Pressure, if set, is checked and counted as each intent is
	// committed, after the do-not-call list: an intent whose number is at
	// one of its limits is not written, and its Append returns a
	// [HeldError]; one that is written counts in Pressure.Starts, durably,
	// before the intent. An outcome that says the call was refused or
	// provably not sent gives its start back. With files Pressure.Starts
	// is a [CallStartsFile]; with PostgreSQL it must be the database's
	// own, counted in the transaction that writes the intents.
	Pressure *Pressure
	// Keys are the store's erasure keys; nil, for a store's OpenJournal,
	// its own ([Store.Erasure]). A journal that holds a tombstone
	// ([TypeErased]) whose key they do not have is refused with
	// [ErrErasureKeyMissing].
	Keys JournalKeys
}

// OpenJournal opens the journal at path for appending, with opts, creating it (mode
// 0600) if needed, and replays it into a [State], which the Journal then
// keeps up to date. The caller should hold the state directory's [Lock],
// and close both the Journal and the State when done.
//
// A torn last line (no trailing newline, or invalid JSON on the last line
// only), which a crash in the middle of a write leaves, is ignored: the
// file is truncated to the last complete line, so later records start
// clean. Invalid JSON on any earlier line is an error naming the file and
// the line: corruption is not papered over.
//
// The file is locked (flock) until Close: while another process has it
// open, OpenJournal fails with an error wrapping [ErrLocked].
func OpenJournal(path string, opts JournalOptions) (*Journal, *State, error) {
	mode := private.FileMode(filepath.Dir(path))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, mode)
	created := err == nil
	if created {
		if err = f.Chmod(mode); err != nil { // whatever the umask
			f.Close()
		}
	}
	if errors.Is(err, fs.ErrExist) {
		f, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening journal: %w", err)
	}
	// The state directory's lock keeps a second run out; this keeps it
	// out of the journal even when that lock file was deleted under a
	// running process, which would let two runs call the same contacts.
	unlock, ok, err := tryLockFile(path, os.O_RDONLY, false)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("locking journal %s: %w", path, err)
		}
		return nil, nil, fmt.Errorf("%w: its journal %s is open in another process", ErrLocked, path)
	}
	opened := false
	defer func() {
		if !opened {
			unlock()
		}
	}()
	if created {
		// Make the new file's name durable before anything is acknowledged.
		if err := durable.SyncDir(filepath.Dir(path)); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("creating journal %s: %w", path, err)
		}
	}
	r, err := os.Open(path)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("opening journal: %w", err)
	}
	s, valid, err := replay(path, r, opts.Keys)
	if err != nil {
		r.Close()
		f.Close()
		return nil, nil, err
	}
	if err := cutTail(f, valid); err != nil {
		r.Close()
		f.Close()
		return nil, nil, fmt.Errorf("cutting the torn last line of journal %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		r.Close()
		f.Close()
		return nil, nil, fmt.Errorf("opening journal: %w", err)
	}
	if opts.Pressure != nil {
		if csf, ok := opts.Pressure.Starts.(*CallStartsFile); ok {
			csf.Follow(opts.Pressure.Campaign) // before the run's first read of the call starts
		}
	}
	j := newJournal(path, &fileSink{path: path, f: f, fi: fi, unlock: unlock, size: valid, beforeSync: opts.BeforeSync, dnc: opts.DoNotCall, pressure: opts.Pressure}, s, opts)
	opened = true
	return j, s, nil
}

// newJournal starts the writer of a journal that commits to k and keeps
// s up to date.
func newJournal(path string, k sink, s *State, opts JournalOptions) *Journal {
	if opts.Linger <= 0 {
		opts.Linger = Linger
	}
	j := &Journal{path: path, sink: k, state: s}
	j.gc = newGroupCommit(j.commit, true, opts.Linger, 1)
	return j
}

// openOrCreate opens the file at path in dir for reading and writing,
// creating it if it is missing; a file it creates has its name synced in
// dir, so that the name survives a power cut with what is written to it.
// The do-not-call list, the call starts, their archives and the
// conversations open their files with it.
func openOrCreate(dir, path string) (*os.File, error) {
	mode := private.FileMode(dir)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, mode)
	created := err == nil
	if errors.Is(err, os.ErrExist) {
		f, err = os.OpenFile(path, os.O_RDWR, 0)
	}
	if err != nil {
		return nil, err
	}
	if created {
		// The mode exactly, whatever the umask: a team's 0660 stays
		// writable by the team.
		if err := errors.Join(f.Chmod(mode), durable.SyncDir(dir)); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// lockFile is the lock name in dir, its file made first, if need be, with
// the mode of the files in dir ([private.FileMode]) whatever the umask,
// so that every user of a team's directory may take it.
func lockFile(dir, name string) (*flock.Flock, error) {
	path := filepath.Join(dir, name)
	f, err := openOrCreate(dir, path)
	if err != nil {
		return nil, fmt.Errorf("the lock %s: %w", path, err)
	}
	f.Close()
	return flock.New(path), nil
}

// cutTail truncates f to size if it is longer, and syncs it.
func cutTail(f *os.File, size int64) error {
	fi, err := f.Stat()
	if err != nil || fi.Size() <= size {
		return err
	}
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}

// ReadState replays the journal at path without opening it for writing,
// for `callrun status` and `callrun report` while another run may be
// appending to it: a partial last line is ignored and the file left as
// it is. A missing file is an empty state. A journal that holds a
// tombstone is refused with [ErrErasureKeyMissing]: reading one needs the
// store's keys, which [Files.ReadState] gives. The caller should close the
// State.
func ReadState(path string) (*State, error) { return readJournalState(path, nil) }

// readJournalState is [ReadState], finding the contacts of the journal's
// tombstones through keys.
func readJournalState(path string, keys JournalKeys) (*State, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		s := newState(path, nil)
		s.deliveries = Files{Dir: filepath.Dir(path)}
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("opening journal: %w", err)
	}
	s, _, err := replay(path, f, keys)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// replayRecord is the part of a record that replay needs. Decoding into it
// still checks that the whole line is valid JSON.
type replayRecord struct {
	Type    string `json:"t"`
	Agent   string `json:"agent"`
	Hash    string `json:"hash"`
	Phone   string `json:"phone"`
	N       int    `json:"n"`
	Attempt int    `json:"attempt"`
	Status  string `json:"status"`
}

// replayOptions have replay read a line with encoding/json/v2's decoder,
// which takes about half the time of encoding/json's (a resume replays
// every line of the journal), and as leniently as Lookup's encoding/json
// reads it where that costs nothing: the last of two equal names wins,
// invalid UTF-8 reads as U+FFFD. Names match their fields exactly, as
// callrun writes them; a record whose "t" is cased otherwise is an unknown
// record type, an error that names its line.
var replayOptions = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// decodeRecord reads a journal line into rec, as replay reads its lines
// (replayOptions): Lookup reads a record back for each contact of a
// report.
func decodeRecord(line []byte, rec *Record) error {
	return jsonv2.Unmarshal(line, rec, replayOptions)
}

// replay reads the journal from f into a new State that keeps f for
// Lookup, and finds the contacts of its tombstones through keys. It
// returns the length of the file's valid part: everything but a torn last
// line.
func replay(path string, f *os.File, keys JournalKeys) (*State, int64, error) {
	s := newState(path, &fileRecords{path: path, f: f})
	s.keys = keys
	s.deliveries = Files{Dir: filepath.Dir(path)}
	if fi, err := f.Stat(); err == nil {
		// A contact takes two lines, about 300 bytes or more: sizing the
		// map for the journal at once spares replay its growing.
		s.entries = make(map[contact]entry, fi.Size()/300)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var (
		off     int64  // offset of the current line
		lineNo  int    // its number, from 1
		scratch []byte // for lines longer than br's buffer
		bad     error  // a complete line that did not parse: fatal unless it is the last
		badOff  int64
	)
	for {
		line, long, err := readLine(br, &scratch)
		if err != nil && err != io.EOF {
			return nil, 0, fmt.Errorf("reading journal %s: %w", path, err)
		}
		if len(line) == 0 && err == io.EOF {
			break
		}
		lineNo++
		if bad != nil {
			return nil, 0, bad // a bad line that is not the last one
		}
		if line[len(line)-1] != '\n' {
			break // torn: the last line has no newline
		}
		if long {
			bad, badOff = fmt.Errorf("journal %s line %d: corrupt: line longer than %d bytes", path, lineNo, maxLine), off
		} else if err := s.applyLine(line, off); err != nil {
			var c corrupt
			if !errors.As(err, &c) {
				return nil, 0, fmt.Errorf("journal %s line %d: %w", path, lineNo, err)
			}
			bad, badOff = fmt.Errorf("journal %s line %d: %w", path, lineNo, err), off
		}
		off += int64(len(line))
	}
	if bad != nil {
		return s, badOff, nil // the last complete line was garbage: ignored
	}
	return s, off, nil
}

// corrupt is the error of a journal line that is not a JSON object of a
// record's shape: in a file, garbage (fatal unless it is the torn last
// line).
type corrupt struct{ err error }

func (c corrupt) Error() string { return "corrupt: " + c.err.Error() }
func (c corrupt) Unwrap() error { return c.err }

// applyLine folds one journal line (a newline may end it; a blank line
// is skipped), found at pos, into s, which is not yet shared. A line that
// is not a record's JSON is a [corrupt] error; a record that cannot be
// (an unknown type, no key) another error.
func (s *State) applyLine(line []byte, pos int64) error {
	if blank(line) {
		return nil
	}
	var rr replayRecord
	if err := jsonv2.Unmarshal(line, &rr, replayOptions); err != nil {
		return corrupt{err} // not JSON, or JSON of another shape: garbage all the same
	}
	rec := Record{Type: rr.Type, Agent: rr.Agent, Hash: rr.Hash, Phone: rr.Phone, N: rr.N, Attempt: rr.Attempt, Status: rr.Status}
	if err := rec.check(); err != nil {
		return err
	}
	if sk, ok := s.keys.(*storeKeys); ok && rec.Type == TypeErased {
		if _, err := sk.load(); err != nil {
			return err
		}
	}
	if id, _, _ := splitHash(rec.Hash); rec.Type == TypeErased && (s.keys == nil || !s.keys.Has(id)) {
		return fmt.Errorf("an erased contact's tombstone was made with erasure key %s, which the store does not hold: %w: restore it from the backup that holds the journal", id, ErrErasureKeyMissing)
	}
	s.apply(&rec, pos)
	return nil
}

// encodeRecord returns rec as one journal line, with its newline: what
// json.Encoder writes with HTML escaping off, so that a body quoting the
// service's answer stays readable in the file. A time that encoding/json
// cannot encode (a year outside 0-9999, an offset of a day or more) is an
// error.
func encodeRecord(rec *Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(rec); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// readLine returns the next line of br with its newline (the last line of
// the file may have none). A line longer than maxLine is consumed but
// returned as a placeholder that does not parse, with long set. The
// returned slice is valid until the next call.
func readLine(br *bufio.Reader, scratch *[]byte) (line []byte, long bool, err error) {
	line, err = br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, false, err
	}
	buf := append((*scratch)[:0], line...)
	for err == bufio.ErrBufferFull {
		line, err = br.ReadSlice('\n')
		long = long || len(buf)+len(line) > maxLine
		if !long {
			buf = append(buf, line...)
		}
	}
	if long {
		buf = append(buf[:0], '!')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			buf = append(buf, '\n')
		}
	}
	*scratch = buf
	return buf, long, err
}

func blank(line []byte) bool {
	return len(bytes.TrimSpace(line)) == 0
}

// Append writes rec to the journal and returns once it is durable (written
// and fsynced). If rec.At is zero it is set to now. Many goroutines may
// call Append at once; their records are written together (group commit):
// one writer goroutine takes every record waiting, writes them with one
// write, fsyncs once and releases all their callers, so a busy journal
// costs one fsync for many records.
//
// An intent whose number is on the journal's do-not-call list
// ([JournalOptions.DoNotCall]) is not written: Append returns
// [ErrDoNotCall], and the journal goes on; so is every intent while an
// opt-out is held on the list: Append returns an [*OptOutHeldError].
//
// Once a record is durable, the journal's [State] reflects it. If the
// write or the fsync fails, every waiting caller gets the error, and the
// journal refuses all further appends with it. A journal file is then
// cut back to where the failed records began, their intents left out,
// so that the next run does not read a contact whose call never started
// as uncertain; where that fails too, whether the failed records reached
// the disk is unknown, and the next run will find out.
func (j *Journal) Append(rec Record) error {
	q, err := j.Submit(rec)
	if err != nil {
		return err
	}
	return q.Wait()
}

// Enqueue queues rec like Append but does not wait for it to be durable:
// its Wait does. Nor does it cost a write of its own: rec goes to disk with the
// next Append's or Submit's group commit, when Wait is called, at Close, or at the
// latest Linger after it was queued, whichever comes first. Batches are
// committed in order, so once any later Append has returned, rec is
// durable too (or the journal has failed and that Append said so). It is
// for records whose loss a crash may cause without harm, such as an
// outcome (lost, the contact reads as uncertain), never for an intent,
// which must be on disk before its call starts.
func (j *Journal) Enqueue(rec Record) (Queued, error) {
	return j.enqueue(rec, false)
}

// Submit queues rec like Append and has the writer commit it at once,
// like Append, but returns without waiting for it to be durable: the
// returned Queued's Wait does. It lets a caller go on with other work
// while the fsync runs. An intent submitted so must not be acted on (its
// call not started) before Wait has returned nil.
func (j *Journal) Submit(rec Record) (Queued, error) {
	return j.enqueue(rec, true)
}

// enqueue is queue returning a Queued: urgent for Submit, not for Enqueue.
func (j *Journal) enqueue(rec Record, urgent bool) (Queued, error) {
	b, i, err := j.queue(rec, urgent)
	if err != nil {
		return Queued{}, err
	}
	return Queued{j: j, b: b, i: i}, nil
}

// Queued is a record queued with [Journal.Enqueue] or [Journal.Submit].
// The zero Queued is one that is durable already.
type Queued struct {
	j *Journal
	b *commitBatch[batch]
	i int // the record's index in b
}

// Wait commits the record now if it is still waiting, and returns once
// it is durable, or with the error that kept it from being so.
func (q Queued) Wait() error {
	if q.b == nil {
		return nil
	}
	if err := q.j.gc.wait(q.b); err != nil {
		return err
	}
	return q.b.data.refused[q.i]
}

// Linger is how long a record queued with [Journal.Enqueue] waits at most
// for a commit to ride along with before it is committed on its own.
const Linger = 50 * time.Millisecond

// queue adds rec to the batch being gathered, and returns the batch and
// rec's index in it. urgent wakes the writer at once; otherwise the
// writer commits within Linger.
func (j *Journal) queue(rec Record, urgent bool) (*commitBatch[batch], int, error) {
	if err := rec.check(); err != nil {
		return nil, 0, fmt.Errorf("appending to journal %s: %w", j.path, err)
	}
	if rec.At.IsZero() {
		rec.At = time.Now()
	}
	line, err := encodeRecord(&rec)
	if err == nil && len(line) > maxLine {
		err = fmt.Errorf("record of %d bytes is too long", len(line))
	}
	if err != nil {
		return nil, 0, fmt.Errorf("appending to journal %s: %w", j.path, err)
	}
	b, i, err := j.gc.queue(urgent, func(b *batch) (int, error) {
		off := len(b.buf)
		b.buf = append(b.buf, line...)
		b.recs = append(b.recs, pending{rec: rec, off: off, end: len(b.buf)})
		return len(b.recs) - 1, nil
	})
	if err == errGroupClosed {
		err = fmt.Errorf("appending to journal %s: %w", j.path, errJournalClosed)
	}
	return b, i, err
}

// commit has the sink commit one batch and applies it to the state; the
// group commit then releases its callers.
func (j *Journal) commit(b *batch) error {
	defer clear(b.recs) // drop the records' strings
	if err := j.sink.commit(b); err != nil {
		// The records written again after the failure are on disk: the
		// State says what the journal says (an outcome the service gave
		// is not read as uncertain by this run's report).
		if len(b.rewritten) > 0 {
			j.state.mu.Lock()
			for _, i := range b.rewritten {
				j.state.apply(&b.recs[i].rec, b.recs[i].pos)
			}
			j.state.mu.Unlock()
		}
		return err
	}
	s := j.state
	s.mu.Lock()
	for i := range b.recs {
		if b.refused[i] == nil {
			s.apply(&b.recs[i].rec, b.recs[i].pos)
		}
	}
	s.mu.Unlock()
	return nil
}

// fileSink commits batches to a journal file: one write and one fsync a
// batch. A record's pos is its line's offset in the file.
type fileSink struct {
	path       string
	f          *os.File      // opened for appending
	unlock     func() error  // releases the exclusive lock held on the file while it is open
	fi         os.FileInfo   // f's, to tell whether the file at path is still f
	size       int64         // bytes in the file
	beforeSync func() error  // JournalOptions.BeforeSync
	dnc        DoNotCallList // JournalOptions.DoNotCall
	pressure   *Pressure     // JournalOptions.Pressure
}

func (k *fileSink) commit(b *batch) error {
	if k.dnc != nil {
		if err := k.refuse(b); err != nil {
			return err
		}
	}
	if k.pressure != nil {
		// The intents first, then their starts, under the starts' lock: a
		// crash between the two leaves intents whose calls never started
		// (Append had not returned), so no start is lost that a call made.
		// The starts the batch's outcomes give back go before them (see
		// startsTx).
		tx, err := k.press(b)
		if err != nil {
			return err
		}
		defer tx.end()
		b.drop()
		if err := tx.release(); err != nil {
			return fmt.Errorf("giving back call starts before writing journal %s: %w", k.path, err)
		}
		from := k.size
		if err := k.write(b); err != nil {
			return err
		}
		if err := tx.commit(); err != nil {
			// The intents are on disk, but their callers are told this
			// error and start no call: take them out again.
			return k.cutBack(b, from, fmt.Errorf("counting call starts after writing journal %s: %w", k.path, err))
		}
		return nil
	}
	b.drop()
	return k.write(b)
}

// write appends b's lines to the journal file and syncs them. If either
// fails, the file is cut back to where b began (see cutBack).
func (k *fileSink) write(b *batch) error {
	if _, err := k.f.Write(b.buf); err != nil {
		return k.cutBack(b, k.size, fmt.Errorf("writing journal %s: %w", k.path, err))
	}
	if k.beforeSync != nil {
		if err := k.beforeSync(); err != nil {
			return k.cutBack(b, k.size, fmt.Errorf("syncing journal %s: %w", k.path, err))
		}
	}
	if err := k.f.Sync(); err != nil {
		return k.cutBack(b, k.size, fmt.Errorf("syncing journal %s: %w", k.path, err))
	}
	// Durable in the file the run holds, but on record only if that is
	// still the file at the path, which the next run reads; if not,
	// nothing is written again into it (as cutBack would): no run reads
	// it, and the State must not take in records no run will find.
	if fi, err := os.Stat(k.path); err != nil || !os.SameFile(fi, k.fi) {
		k.f.Truncate(k.size)
		return fmt.Errorf("%s: %w", k.path, ErrJournalGone)
	}
	for i := range b.recs {
		b.recs[i].pos = k.size + int64(b.recs[i].off)
	}
	k.size += int64(len(b.buf))
	return nil
}

// cutBack undoes the write of b, which began at offset from, after err,
// and returns err. Every caller of b is told err, so none of b's intents
// had its call started; left in the file (a write cut short by a full
// disk leaves whole lines before the torn one, a failed fsync all of
// them, and so does a failure to count their starts after), the next run
// would read those contacts as uncertain, called perhaps, and hold them
// back for a person to check. So the file is cut back to from and synced,
// and b's other records (outcomes of calls that were answered, which are
// true whether or not their callers learn it) are written again; if that
// fails too, they go as well, and their contacts read uncertain, as a
// crash would leave them.
func (k *fileSink) cutBack(b *batch, from int64, err error) error {
	if k.f.Truncate(from) != nil {
		return err
	}
	k.size = from
	var rest []byte
	var again []int
	for i := range b.recs {
		if b.refused[i] == nil && b.recs[i].rec.Type != TypeIntent {
			b.recs[i].pos = from + int64(len(rest))
			again = append(again, i)
			rest = append(rest, b.line(i)...)
		}
	}
	if len(rest) > 0 {
		if _, werr := k.f.Write(rest); werr != nil || k.f.Sync() != nil {
			k.f.Truncate(from)
		} else {
			k.size = from + int64(len(rest))
			b.rewritten = again
		}
	}
	k.f.Sync()
	return err
}

// refuse marks the intents of b whose number is on the do-not-call list,
// or all of them while an opt-out is held.
func (k *fileSink) refuse(b *batch) error {
	for i := range b.recs {
		if b.recs[i].rec.Type != TypeIntent {
			continue
		}
		on, err := k.dnc.Has(context.Background(), b.recs[i].rec.Phone)
		if held := (*OptOutHeldError)(nil); errors.As(err, &held) {
			b.refuse(i, held) // no call starts while an opt-out is held
			continue
		}
		if err != nil {
			return fmt.Errorf("checking the do-not-call list before writing journal %s: %w", k.path, err)
		}
		if on {
			b.refuse(i, ErrDoNotCall)
		}
	}
	return nil
}

// press takes the call starts' lock, checks the intents of b not
// refused yet against k.pressure (after giving back the starts of the
// outcomes that say their call was refused or provably not sent), and
// marks those held back. The caller writes the batch, commits the
// returned tx, and ends it.
func (k *fileSink) press(b *batch) (*startsTx, error) {
	f, ok := k.pressure.Starts.(*CallStartsFile)
	if !ok {
		return nil, fmt.Errorf("opening journal %s: contact pressure in files is counted in a file, not in the %s", k.path, k.pressure.Starts)
	}
	ops := b.pressureOps(k.path, k.pressure.Campaign)
	if len(ops) == 0 {
		return &startsTx{done: true}, nil // nothing to count: no lock
	}
	tx, err := f.begin()
	if err != nil {
		return nil, fmt.Errorf("counting call starts before writing journal %s: %w", k.path, err)
	}
	held, err := tx.checkFor(k.pressure, k.pressure.AfterConversation, k.pressure.now(), ops)
	if err != nil {
		tx.end()
		return nil, fmt.Errorf("counting call starts before writing journal %s: %w", k.path, err)
	}
	for i, err := range held {
		if fe, ok := err.(*ForeignStartError); ok {
			fe.Journal = k.path
		}
		b.refuse(i, err)
	}
	return tx, nil
}

// pressureOps are the call starts to count and to give back for the
// records of b, in order, named for the journal.
func (b *batch) pressureOps(journal, campaign string) []pressureOp {
	var ops []pressureOp
	for i := range b.recs {
		r := &b.recs[i].rec
		switch {
		case b.refused[i] != nil:
		case r.Type == TypeIntent:
			op := pressureOp{i: i, start: CallStart{Number: r.Phone, ID: startID(journal, r), Campaign: campaign, Agent: r.Agent}}
			if r.Attempt <= 1 && campaign != "" {
				op.contact = contactHash(campaign, r.Agent, r.Phone, strconv.Itoa(r.N))
			}
			ops = append(ops, op)
		case r.Type == TypeOutcome && releases(r.Status):
			ops = append(ops, pressureOp{i: i, start: CallStart{Number: r.Phone, ID: startID(journal, r), Released: true}})
		}
		if op, ok := serviceRelease(i, r); ok && b.refused[i] == nil {
			ops = append(ops, op)
		}
	}
	return ops
}

// refuse marks record i of b as not written, for why.
func (b *batch) refuse(i int, why error) {
	if b.refused == nil {
		b.refused = map[int]error{}
	}
	b.refused[i] = why
}

// drop takes the lines of the refused records out of b's buffer.
func (b *batch) drop() {
	if b.refused == nil {
		return
	}
	kept := make([]byte, 0, len(b.buf))
	for i := range b.recs {
		if b.refused[i] != nil {
			continue
		}
		line := b.line(i)
		b.recs[i].off = len(kept)
		kept = append(kept, line...)
		b.recs[i].end = len(kept)
	}
	b.buf = kept
}

func (k *fileSink) close() error {
	err := k.f.Close()
	k.unlock()
	return err
}

// Close waits for the records already appended to be written, and closes
// the journal file. Append after Close returns an error. Close does not
// close the journal's [State], which stays readable. It returns the
// journal's sticky write error, if there was one.
func (j *Journal) Close() error {
	first, err := j.gc.close()
	if !first {
		return fmt.Errorf("closing journal %s: %w", j.path, errJournalClosed)
	}
	cerr := j.sink.close()
	if err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("closing journal %s: %w", j.path, cerr)
	}
	return nil
}
