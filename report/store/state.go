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
	"math"
	"os"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// Status is a contact's status, in the journal and in the report.
type Status string

// Statuses a contact can have in the journal.
const (
	// Sent: the service accepted the call start.
	Sent Status = "sent"
	// Failed: the service refused it (a 4xx); --retry-failed sends it again.
	Failed Status = "failed"
	// Uncertain: the request may have reached the service (an intent with no
	// outcome, a timeout after writing, a 5xx, a reset connection). It is
	// never sent again automatically, only with --retry-uncertain.
	Uncertain Status = "uncertain"
	// Pending: provably not sent yet; the next run may send it.
	Pending Status = "pending"
	// Erased: the person was erased; the journal keeps a tombstone
	// ([TypeErased]) under the keyed hash of the number. Never sent
	// again, whatever the flags.
	Erased Status = "erased"
)

// Statuses decided from the sheets alone, which only the report shows.
const (
	// Invalid: the row cannot be called as it stands (bad phone number, ...).
	Invalid Status = "invalid"
	// Duplicate: the number appears in an earlier row.
	Duplicate Status = "duplicate"
	// Suppressed: the number is in a suppression file.
	Suppressed Status = "suppressed"
)

// Entry is what the journal says about one contact.
type Entry struct {
	Status   Status
	Attempts int       // call starts sent, over all runs: intents on record less those a skipped outcome withdrew
	HTTP     int       // HTTP status of the last outcome; 0 when none
	FirstAt  time.Time // time of the first intent; zero when there was none
	LastAt   time.Time // time of the contact's last record (its last outcome, or its last intent when no outcome followed)
	Reason   string    // reason of the last outcome
	Body     string    // excerpt of the service's last answer
	AgentID  string    // agent id of the last record (or of the first intent, when the last record has none)
}

// noOutcome is an uncertain entry's Reason when its last record is an
// intent.
const noOutcome = "no outcome on record: the call start may have reached the service"

// State is what a journal says about every contact: its status, attempt
// count and where in the journal its records are. [State.Lookup] reads
// the rest back from the journal (the file, or the database). A State is
// safe for concurrent use.
//
// [OpenJournal] returns the State of the journal it opens, and the
// [Journal] keeps it up to date as records are appended. [ReadState]
// returns one for reading only.
type State struct {
	path string

	mu   sync.RWMutex
	recs recordReader // where Lookup reads records back; nil when there is none
	// deliveries reads the deliveries stored beside the journal; nil for
	// a State of no store.
	deliveries deliveryReader
	agents     map[string]int32 // agent name -> its index in names
	names      []string         // agent names in the order the journal met them
	entries    map[contact]entry
	counts     [numStatuses]int
	// keys find a tombstone's contact by its number's keyed hashes;
	// replay refuses a tombstone whose key they lack.
	keys JournalKeys
}

// contact is a [Key] as a State keeps it, the agent by its index in
// State.names: a key of 24 bytes rather than 40, which a million
// contacts notice (a run's peak memory is mostly this map). A
// tombstone's phone is its keyed hash.
type contact struct {
	phone string
	agent int32
	n     int32 // Key.N; records check that it fits
}

// status is the in-memory form of a contact's [Status].
type status uint8

const (
	stPending status = iota
	stSent
	stFailed
	stUncertain
	stErased
	numStatuses
)

var statusNames = [numStatuses]Status{stPending: Pending, stSent: Sent, stFailed: Failed, stUncertain: Uncertain, stErased: Erased}

// entry is what a State knows about one contact.
type entry struct {
	last     int64  // position in the journal of the contact's last record
	first    int64  // position of its first intent; meaningful when attempts > 0
	attempts uint32 // intents on record, less those a skipped outcome withdrew
	status   status
}

// EmptyState is the State of a journal with no records: plan's, when it
// does not read the journal.
func EmptyState() *State { return newState("", nil) }

// recordReader reads back the record a journal holds at a position (a
// file offset, a database row id), checking that it is about contact k:
// what [State.Lookup] needs beyond the in-memory index; and the contacts
// of the calls a set of call ids name, which replay does not keep.
type recordReader interface {
	readRecord(pos int64, k Key) (Record, error)
	callKeys(ids map[string]bool) (map[string]Key, error)
	Close() error
}

// prefetcher is a recordReader that reads better when told first which
// positions a lookup is about to read.
type prefetcher interface {
	prefetch(pos ...int64)
}

func newState(path string, recs recordReader) *State {
	return &State{
		path:    path,
		recs:    recs,
		agents:  make(map[string]int32),
		entries: make(map[contact]entry),
	}
}

// hashes returns the keyed hashes of phone that the State's tombstones
// may stand under; none when it holds no tombstone. The caller holds
// s.mu.
func (s *State) hashes(phone string) []string {
	if s.counts[stErased] == 0 || s.keys == nil {
		return nil
	}
	return s.keys.Hashes(phone)
}

// FindPhone returns the key, with occurrence number 0, of the agent whose
// record of phone (or tombstone of its keyed hash) says most that the
// number may have been called (see [Status.Settles]); among equals the
// first agent in the order the journal met them. false if no agent has a
// record of it. It is the contact a number was settled under when a
// campaign dedupes across agents: a number called under one agent and
// left pending under another was called.
func (s *State) FindPhone(phone string) (Key, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	hashes := s.hashes(phone)
	best, found := Key{}, false
	var bestRank int
	for a, name := range s.names {
		e, ok := s.entries[contact{phone: phone, agent: int32(a)}]
		for _, h := range hashes {
			if ok {
				break
			}
			e, ok = s.entries[contact{phone: h, agent: int32(a)}]
		}
		if ok && (!found || e.status.settles() > bestRank) {
			best, found, bestRank = Key{Agent: name, Phone: phone}, true, e.status.settles()
			if bestRank == Sent.Settles() {
				break // none settles it more
			}
		}
	}
	return best, found
}

// Settles ranks statuses by how far they say that a contact's number may
// have been called: sent and erased (which may stand for sent) above
// uncertain, above failed and pending (refused, or never sent), above
// anything else.
func (s Status) Settles() int {
	switch s {
	case Sent, Erased:
		return 3
	case Uncertain:
		return 2
	case Failed, Pending:
		return 1
	}
	return 0
}

func (s status) settles() int { return statusNames[s].Settles() }

// KeysWithPhone returns, for each number of phones, the keys of every
// contact with a record of that number (or a tombstone of its keyed
// hash), under any agent and occurrence: for the report, which gives a
// delivery to one of the contacts that share its number. It looks at
// every contact once.
func (s *State) KeysWithPhone(phones map[string]bool) map[string][]Key {
	s.mu.RLock()
	defer s.mu.RUnlock()
	byHash := map[string]string{} // keyed hash -> the number of phones it is of
	for p := range phones {
		for _, h := range s.hashes(p) {
			byHash[h] = p
		}
	}
	out := map[string][]Key{}
	for c := range s.entries {
		phone := c.phone
		if c2, ok := byHash[c.phone]; ok {
			phone = c2
		}
		if phones[phone] {
			out[phone] = append(out[phone], Key{Agent: s.names[c.agent], Phone: phone, N: int(c.n)})
		}
	}
	for _, ks := range out {
		slices.SortFunc(ks, func(a, b Key) int { return cmp.Or(cmp.Compare(a.Agent, b.Agent), cmp.Compare(a.N, b.N)) })
	}
	return out
}

// AgentKeys returns, for each agent the journal holds records for, the
// key of one of its contacts: for the report, which looks up the
// service's id of each agent the campaign's calls went through.
func (s *State) AgentKeys() []Key {
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys := make([]Key, 0, len(s.names))
	found := make([]bool, len(s.names))
	for c, e := range s.entries {
		if !found[c.agent] && e.status != stErased { // a tombstone keeps no agent id
			found[c.agent] = true
			keys = append(keys, Key{Agent: s.names[c.agent], Phone: c.phone, N: int(c.n)})
			if len(keys) == len(s.names) {
				break
			}
		}
	}
	return keys
}

// Agents returns the names of the agents the journal holds records for.
func (s *State) Agents() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]string(nil), s.names...)
}

// intern returns the index of an agent name, adding it if it is new. The
// caller holds s.mu for writing.
func (s *State) intern(name string) int32 {
	a, ok := s.agents[name]
	if !ok {
		a = int32(len(s.names))
		s.agents[name] = a
		s.names = append(s.names, name)
	}
	return a
}

// get returns k's entry, and the contact it stands under: k's number,
// or, for an erased contact, one of the number's keyed hashes. The
// caller holds s.mu.
func (s *State) get(k Key) (entry, contact, bool) {
	a, ok := s.agents[k.Agent]
	if !ok || k.N != int(int32(k.N)) {
		return entry{}, contact{}, false
	}
	c := contact{phone: k.Phone, agent: a, n: int32(k.N)}
	if e, ok := s.entries[c]; ok {
		return e, c, true
	}
	for _, h := range s.hashes(k.Phone) {
		c.phone = h
		if e, ok := s.entries[c]; ok {
			return e, c, true
		}
	}
	return entry{}, contact{}, false
}

// apply folds one record, found at position pos of the journal, into the
// state. The record has passed check; the caller holds s.mu for
// writing.
func (s *State) apply(r *Record, pos int64) {
	if r.Type == TypeErased {
		s.applyTombstone(r, pos)
		return
	}
	if r.Type != TypeIntent && r.Type != TypeOutcome {
		return
	}
	k := contact{phone: r.Phone, agent: s.intern(r.Agent), n: int32(r.N)}
	e, ok := s.entries[k]
	if ok {
		s.counts[e.status]--
	}
	if r.Type == TypeIntent {
		if e.attempts == 0 {
			e.first = pos
		}
		if e.attempts < math.MaxUint32 {
			e.attempts++
		}
		e.status = stUncertain
	} else {
		e.status = outcomeStatus(r.Status)
		if r.Status == OutcomeSkipped && e.attempts > 0 && e.attempts < math.MaxUint32 {
			// The intent before it was never sent: not an attempt.
			e.attempts--
		}
	}
	e.last = pos
	s.counts[e.status]++
	s.entries[k] = e
}

// applyTombstone folds a tombstone, found at pos, into the state: its
// contact, under the keyed hash, is erased, with the tombstone's attempts.
// The caller holds s.mu for writing.
func (s *State) applyTombstone(r *Record, pos int64) {
	k := contact{phone: r.Hash, agent: s.intern(r.Agent), n: int32(r.N)}
	if e, ok := s.entries[k]; ok {
		s.counts[e.status]--
	}
	s.entries[k] = entry{last: pos, first: pos, attempts: uint32(min(r.Attempt, math.MaxUint32)), status: stErased}
	s.counts[stErased]++
}

// outcomeStatus maps an outcome record's status to the contact's status.
func outcomeStatus(s string) status {
	switch s {
	case OutcomeSent:
		return stSent
	case OutcomeFailed:
		return stFailed
	case OutcomeUncertain:
		return stUncertain
	default: // OutcomeRetry, OutcomeSkipped: provably not sent
		return stPending
	}
}

// Status returns the contact's status without any I/O, and false if the
// journal has no record of the contact.
func (s *State) Status(k Key) (Status, bool) {
	s.mu.RLock()
	e, _, ok := s.get(k)
	s.mu.RUnlock()
	if !ok {
		return "", false
	}
	return statusNames[e.status], true
}

// Attempts returns the number of intents on record for the contact,
// without any I/O: [State.Lookup]'s Attempts, for callers that need
// nothing else.
func (s *State) Attempts(k Key) int {
	s.mu.RLock()
	e, _, _ := s.get(k)
	s.mu.RUnlock()
	return int(e.attempts)
}

// Lookup returns everything the journal says about the contact, and false
// if it has no record of it. Status and Attempts come from memory; the
// rest is read back from the journal file, one or two small reads. If
// that read fails, the entry's Reason says so and the details are left
// empty. An erased contact's entry has its tombstone's time as LastAt
// and says in Reason what its status was.
func (s *State) Lookup(k Key) (Entry, bool) {
	s.mu.RLock()
	e, c, ok := s.get(k)
	s.mu.RUnlock()
	if !ok {
		return Entry{}, false
	}
	k.Phone = c.phone // a tombstone's record is under the hash
	out := Entry{Status: statusNames[e.status], Attempts: int(e.attempts)}
	s.mu.RLock()
	if p, ok := s.recs.(prefetcher); ok {
		p.prefetch(e.last, e.first)
	}
	s.mu.RUnlock()
	last, err := s.readRecord(e.last, k)
	if err != nil {
		out.Reason = "details unavailable: " + err.Error()
		return out, true
	}
	out.HTTP, out.Reason, out.Body, out.AgentID, out.LastAt = last.HTTP, last.Reason, last.Body, last.AgentID, last.At
	switch last.Type {
	case TypeIntent:
		out.Reason = noOutcome
	case TypeErased:
		out.Reason = "the person was erased at their request; the contact was " + last.Status
		if last.Reason == ReasonRetention {
			out.Reason = "erased by the campaign's retention: (last called longer ago than its limit); the contact was " + last.Status
		}
		return out, true
	}
	if e.attempts > 0 {
		first := last
		if e.first != e.last {
			if first, err = s.readRecord(e.first, k); err != nil {
				out.Reason = "details unavailable: " + err.Error()
				return out, true
			}
		}
		out.FirstAt = first.At
		if out.AgentID == "" {
			out.AgentID = first.AgentID
		}
	}
	return out, true
}

// CallKeys returns the contact of each call id of ids that a sent call's
// outcome in the journal gives (the call id the service's answer gave):
// for the report, which matches a delivery that names its call to that
// call's contact. It reads the journal again, for the records that hold
// a call id: a State keeps none in memory.
func (s *State) CallKeys(ids map[string]bool) (map[string]Key, error) {
	s.mu.RLock()
	r := s.recs
	s.mu.RUnlock()
	if r == nil || len(ids) == 0 {
		return map[string]Key{}, nil
	}
	return r.callKeys(ids)
}

// callID adds the call id of line to ids when line is an outcome of one
// of phones that names one.
func callID(line []byte, phones map[string]bool, ids map[string]bool) {
	if !bytes.Contains(line, []byte(`"call_id":`)) {
		return
	}
	var r callIDRecord
	if json.Unmarshal(line, &r) == nil && r.Type == TypeOutcome && r.CallID != "" && phones[r.Phone] {
		ids[r.CallID] = true
	}
}

// callIDRecord is what CallKeys reads of a record that holds a call id.
type callIDRecord struct {
	Type   string `json:"t"`
	Agent  string `json:"agent"`
	Phone  string `json:"phone"`
	N      int    `json:"n"`
	CallID string `json:"call_id"`
}

// callKey adds the contact of line to keys when line is an outcome
// naming a call id of ids.
func callKey(line []byte, ids map[string]bool, keys map[string]Key) {
	if !bytes.Contains(line, []byte(`"call_id":`)) {
		return
	}
	var r callIDRecord
	if json.Unmarshal(line, &r) != nil || r.Type != TypeOutcome || !ids[r.CallID] {
		return
	}
	keys[r.CallID] = Key{Agent: r.Agent, Phone: r.Phone, N: r.N}
}

func (r *fileRecords) callKeys(ids map[string]bool) (map[string]Key, error) {
	keys := map[string]Key{}
	return keys, r.eachLine(func(line []byte) { callKey(line, ids, keys) })
}

// eachLine calls fn with each whole line of the journal.
func (r *fileRecords) eachLine(fn func([]byte)) error {
	br := bufio.NewReaderSize(io.NewSectionReader(r.f, 0, 1<<62), 64<<10)
	var scratch []byte
	for {
		line, _, err := readLine(br, &scratch)
		if len(line) > 0 && line[len(line)-1] == '\n' {
			fn(line)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading journal %s: %w", r.path, err)
		}
	}
}

// readRecord reads the record at pos of the journal, checking that it is
// about contact k.
func (s *State) readRecord(pos int64, k Key) (Record, error) {
	s.mu.RLock()
	r := s.recs
	s.mu.RUnlock()
	if r == nil {
		return Record{}, errors.New("the journal is not open")
	}
	return r.readRecord(pos, k)
}

// fileRecords reads records back from a journal file by offset.
type fileRecords struct {
	path string
	f    *os.File
}

// readBufs recycles fileRecords' read buffers.
var readBufs = sync.Pool{New: func() any { b := make([]byte, 1024); return &b }}

func (r *fileRecords) readRecord(off int64, k Key) (Record, error) {
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	buf := *bp
	var rec Record
	for {
		n, err := r.f.ReadAt(buf, off)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			if err := decodeRecord(buf[:i], &rec); err != nil {
				return Record{}, fmt.Errorf("journal %s at byte %d: %w", r.path, off, err)
			}
			if rec.Key() != k {
				return Record{}, fmt.Errorf("journal %s at byte %d: a record of another contact", r.path, off)
			}
			return rec, nil
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return Record{}, fmt.Errorf("reading journal %s at byte %d: %w", r.path, off, err)
		}
		if len(buf) >= maxLine {
			return Record{}, fmt.Errorf("journal %s at byte %d: line too long", r.path, off)
		}
		buf = make([]byte, 4*len(buf))
		*bp = buf
	}
}

func (r *fileRecords) Close() error { return r.f.Close() }

// Len returns the number of contacts the journal has a record of.
func (s *State) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.entries)
}

// Counts returns the number of contacts in each status. All five journal
// statuses (sent, failed, uncertain, pending, erased) are present, even
// when 0.
func (s *State) Counts() map[Status]int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m := make(map[Status]int, numStatuses)
	for st, n := range s.counts {
		m[statusNames[st]] = n
	}
	return m
}

// Close releases what Lookup reads from (a file handle, database
// connections). The State's statuses stay readable; Lookup then returns
// no details.
func (s *State) Close() error {
	s.mu.Lock()
	r := s.recs
	s.recs = nil
	s.mu.Unlock()
	if r == nil {
		return nil
	}
	return r.Close()
}

// SplitByLast returns the numbers of the State's contacts (not erased)
// whose last record is older than cutoff, each once, and the numbers of
// those with a record since; a number with contacts in both (under two
// agents) is only in since. Retention erases the first. It sorts the
// contacts by where their last record is in the journal, which is the
// order they were written, reads a few of those records back to find
// where cutoff falls, and then each contact before it: a record whose
// clock was set back keeps a contact longer, never erases one sooner.
func (s *State) SplitByLast(cutoff time.Time) (before, since []string, err error) {
	type last struct {
		pos int64
		key Key
	}
	s.mu.RLock()
	contacts := make([]last, 0, len(s.entries)-s.counts[stErased])
	for c, e := range s.entries {
		if e.status != stErased {
			contacts = append(contacts, last{e.last, Key{Agent: s.names[c.agent], Phone: c.phone, N: int(c.n)}})
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(contacts, func(a, b last) int { return cmp.Compare(a.pos, b.pos) })
	split, err := sortSearch(len(contacts), func(i int) (bool, error) {
		rec, err := s.readRecord(contacts[i].pos, contacts[i].key)
		return !rec.At.Before(cutoff), err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("finding the contacts last called before %s: %w", cutoff.Format(time.RFC3339), err)
	}
	// The search trusts the journal's order; each contact it finds before
	// the split is read back, so that one a clock set back misplaced is
	// never taken for due.
	var old, late []last
	for _, c := range contacts[:split] {
		rec, err := s.readRecord(c.pos, c.key)
		if err != nil {
			return nil, nil, fmt.Errorf("finding the contacts last called before %s: %w", cutoff.Format(time.RFC3339), err)
		}
		if rec.At.Before(cutoff) {
			old = append(old, c)
		} else {
			late = append(late, c)
		}
	}
	recent := make(map[string]bool, len(contacts)-split)
	for _, c := range slices.Concat(contacts[split:], late) {
		if !recent[c.key.Phone] {
			recent[c.key.Phone] = true
			since = append(since, c.key.Phone)
		}
	}
	seen := map[string]bool{}
	for _, c := range old {
		if !recent[c.key.Phone] && !seen[c.key.Phone] {
			seen[c.key.Phone] = true
			before = append(before, c.key.Phone)
		}
	}
	return before, since, nil
}

// sortSearch is [sort.Search] with a predicate that may fail.
func sortSearch(n int, f func(int) (bool, error)) (int, error) {
	var err error
	i := sort.Search(n, func(i int) bool {
		if err != nil {
			return true
		}
		ok, e := f(i)
		err = e
		return ok || e != nil
	})
	return i, err
}

// SplitByLast splits the numbers of the campaign's journal (each
// shard's, for a campaign run in shards in files) as
// [State.SplitByLast] does: those whose every contact's last record is
// older than cutoff, and those with a record since. Retention reads it.
func SplitByLast(ctx context.Context, s Store, cutoff time.Time) (before, since []string, err error) {
	old, recent := map[string]bool{}, map[string]bool{}
	err = eachJournal(ctx, s, func(st *State) error {
		b, s, err := st.SplitByLast(cutoff)
		for _, n := range b {
			old[n] = true
		}
		for _, n := range s {
			recent[n] = true
		}
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	for n := range old {
		if !recent[n] {
			before = append(before, n)
		}
	}
	slices.Sort(before)
	return before, slices.Sorted(maps.Keys(recent)), nil
}

// CallIDsOf returns the call ids the service gave the sent calls to
// numbers (E.164), as the outcomes in the campaign's journal say (each
// shard's, for a campaign run in shards in files), reading those alone:
// erase erases the deliveries that name those calls and no number.
func CallIDsOf(ctx context.Context, s Store, numbers []string) (map[string]bool, error) {
	ids, phones := map[string]bool{}, numberSet(numbers)
	switch s := s.(type) {
	case Files:
		err := s.eachJournalFile(func(path string, f *os.File) error {
			return (&fileRecords{path: path, f: f}).eachLine(func(line []byte) { callID(line, phones, ids) })
		})
		if err != nil {
			return nil, err
		}
	case *Postgres:
		rows, err := s.pool.Query(ctx, `
SELECT line FROM callrun_journal
WHERE campaign = $1 AND line LIKE '%"call_id":%' AND (line::jsonb ->> 'phone') = ANY($2)`, s.campaign, numbers)
		if err != nil {
			return nil, s.wrap("reading the journal from", err)
		}
		var line []byte
		if _, err := pgx.ForEachRow(rows, []any{&line}, func() error {
			callID(line, phones, ids)
			return nil
		}); err != nil {
			return nil, s.wrap("reading the journal from", err)
		}
	default:
		return nil, fmt.Errorf("no journal to read in %s", s)
	}
	return ids, nil
}

// CallKeysOf returns the contact of each call id of ids that a sent
// call's outcome in the campaign's journal gives (the call id the
// service's answer to callrun's call start gave), each shard's for a
// campaign run in shards in files, reading the records that hold a call
// id alone: listen lists an opt-out that names a call of the campaign's
// under that call's contact's number. An id callrun never placed, or
// whose contact was erased (a tombstone keeps no call id), is not in it.
func CallKeysOf(ctx context.Context, s Store, ids map[string]bool) (map[string]Key, error) {
	keys := map[string]Key{}
	if len(ids) == 0 {
		return keys, nil
	}
	switch s := s.(type) {
	case Files:
		// A line that holds none of the ids, written as the journal
		// writes a plain one, is not decoded: most of a long journal.
		quoted := plainQuoted(ids)
		err := s.eachJournalFile(func(path string, f *os.File) error {
			return (&fileRecords{path: path, f: f}).eachLine(func(line []byte) {
				if quoted == nil || slices.ContainsFunc(quoted, func(q []byte) bool { return bytes.Contains(line, q) }) {
					callKey(line, ids, keys)
				}
			})
		})
		if err != nil {
			return nil, err
		}
	case *Postgres:
		rows, err := s.callLines(ctx, s.pool, ids)
		if err != nil {
			return nil, s.wrap("reading the journal from", err)
		}
		var line []byte
		if _, err := pgx.ForEachRow(rows, []any{&line}, func() error {
			callKey(line, ids, keys)
			return nil
		}); err != nil {
			return nil, s.wrap("reading the journal from", err)
		}
	default:
		return nil, fmt.Errorf("no journal to read in %s", s)
	}
	return keys, nil
}

// callLines queries the campaign's journal lines that may hold one of
// ids as their call id (callKey decodes them): by the index of the
// lines' call ids (callrun_journal_call_id) for ids JSON writes as they
// are; a scan of the campaign's lines that hold a call id, decoded,
// when one is written escaped (no service's call id seen is).
func (p *Postgres) callLines(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, ids map[string]bool) (pgx.Rows, error) {
	sorted := slices.Sorted(maps.Keys(ids))
	if plainQuoted(ids) != nil {
		return q.Query(ctx, callLinesSQL, p.campaign, sorted)
	}
	return q.Query(ctx, `
SELECT line FROM callrun_journal
WHERE campaign = $1 AND line LIKE '%"call_id":%' AND (line::jsonb ->> 'call_id') = ANY($2)`, p.campaign, sorted)
}

// callLinesSQL queries the lines of campaign $1 whose call id is one of
// $2 by the index callrun_journal_call_id: its expression and predicate,
// word for word.
const callLinesSQL = `
SELECT line FROM callrun_journal
WHERE campaign = $1 AND ` + journalHasCallID + ` AND ` + journalCallID + ` = ANY($2)`

// plainQuoted returns each of ids in double quotes, as the journal's
// JSON writes it when it holds no character JSON escapes; nil when one
// does (every line is then decoded).
func plainQuoted(ids map[string]bool) [][]byte {
	out := make([][]byte, 0, len(ids))
	for id := range ids {
		for _, r := range id {
			if r < 0x20 || r == '"' || r == '\\' || r > 0x7e {
				return nil
			}
		}
		out = append(out, []byte(`"`+id+`"`))
	}
	return out
}

// eachJournal calls fn with the State of the campaign's journal, or of
// each shard's for a campaign run in shards in files, closing each.
func eachJournal(ctx context.Context, s Store, fn func(*State) error) error {
	journals := []Store{s}
	if f, ok := s.(Files); ok {
		shards, err := f.journals()
		if err != nil {
			return err
		}
		journals = nil
		for _, sh := range shards {
			journals = append(journals, sh)
		}
	}
	for _, j := range journals {
		st, err := j.ReadState(ctx)
		if err != nil {
			return err
		}
		err = fn(st)
		st.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// FirstRecordAt returns the time of the campaign's first journal record
// (the earliest of its shards', for a campaign run in shards in files),
// zero when it has none, reading that record alone: retention, which
// has nobody to find in a journal younger than its limit, reads it
// before it replays any.
func FirstRecordAt(ctx context.Context, s Store) (time.Time, error) {
	var first time.Time
	earliest := func(line []byte) error {
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		if first.IsZero() || r.At.Before(first) {
			first = r.At
		}
		return nil
	}
	switch s := s.(type) {
	case Files:
		err := s.eachJournalFile(func(path string, f *os.File) error {
			var scratch []byte
			line, _, err := readLine(bufio.NewReader(f), &scratch)
			if len(line) > 0 && line[len(line)-1] == '\n' {
				if err := earliest(line); err != nil {
					return fmt.Errorf("journal %s, its first line: %w", path, err)
				}
			} else if err != nil && !errors.Is(err, io.EOF) {
				return fmt.Errorf("reading journal %s: %w", path, err)
			}
			return nil
		})
		if err != nil {
			return first, err
		}
	case *Postgres:
		var line []byte
		err := s.pool.QueryRow(ctx, `SELECT line FROM callrun_journal WHERE campaign = $1 ORDER BY id LIMIT 1`, s.campaign).Scan(&line)
		if errors.Is(err, pgx.ErrNoRows) {
			return first, nil
		}
		if err != nil {
			return first, s.wrap("reading the journal's first record from", err)
		}
		if err := earliest(line); err != nil {
			return first, fmt.Errorf("the journal's first record in the %s: %w", s.where, err)
		}
	default:
		return first, fmt.Errorf("no journal to read in %s", s)
	}
	return first, nil
}

// journals returns the Files whose journals are the campaign's: each
// shard's, for the whole campaign's Files of a campaign run in shards,
// else s itself.
func (s Files) journals() ([]Files, error) {
	if s.parent != "" {
		return []Files{s}, nil
	}
	shards, err := ShardsIn(s.Dir)
	if err != nil || len(shards) == 0 {
		return []Files{s}, err
	}
	out := make([]Files, len(shards))
	for i, sh := range shards {
		out[i] = ShardFiles(s.Dir, sh[0], sh[1])
		out[i].pushed = s.pushed
	}
	return out, nil
}

// eachJournalFile calls fn with each of the campaign's journal files
// ([Files.journals]) that exists, open for reading, and closes it.
func (s Files) eachJournalFile(fn func(path string, f *os.File) error) error {
	journals, err := s.journals()
	if err != nil {
		return err
	}
	for _, j := range journals {
		path := j.Journal()
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		err = fn(path, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
