package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
)

// ErrHeld is wrapped by the [HeldError] a journal's Append returns for an
// intent that its contact pressure ([JournalOptions.Pressure]) holds
// back: the intent was not written, and its call must not start.
var ErrHeld = errors.New("held back by contact pressure")

// HeldError says why an intent was held back and when its number may be
// called again: a limit it is at, or a conversation with it.
type HeldError struct {
	Number string
	Limit  PressureLimit // the limit the number is at
	Starts int           // its call starts within Limit.Within
	Until  time.Time     // when it may be called again
	// Conversation, when set, is the conversation that holds the number
	// for After ([HoldAfterConversation]) instead of a limit.
	Conversation time.Time
	After        time.Duration
}

func (e *HeldError) Error() string {
	if !e.Conversation.IsZero() {
		return fmt.Sprintf("held back: a conversation on %s on this store (Reg F: no call within %s after a conversation); may be called again from %s",
			e.Conversation.UTC().Format(time.DateOnly), PressureLimit{Within: e.After}.span(), e.Until.UTC().Format(time.RFC3339))
	}
	rule := "contact pressure"
	if e.Limit.Law != "" {
		rule = e.Limit.Law
	}
	return fmt.Sprintf("held back: called %s within %s on this store (%s: at most %s); may be called again from %s",
		times(e.Starts), e.Limit.span(), rule, e.Limit, e.Until.UTC().Format(time.RFC3339))
}

func (e *HeldError) Unwrap() error { return ErrHeld }

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

// PressureLimit is one limit of contact pressure: at most Max call starts
// to one number within any span of Within.
type PressureLimit struct {
	Within time.Duration
	Max    int
	// Law, if set, names the law the limit keeps (a US state's cap on
	// calls to one person), which a hold names instead of contact
	// pressure.
	Law string
}

func (l PressureLimit) span() string {
	if d := l.Within / (24 * time.Hour); l.Within%(24*time.Hour) == 0 {
		if d == 1 {
			return "24 hours"
		}
		return strconv.Itoa(int(d)) + " days"
	}
	return l.Within.String()
}

func (l PressureLimit) String() string {
	return strconv.Itoa(l.Max) + " in " + l.span()
}

// DefaultPressure is the contact pressure a campaign gets unless its file
// says otherwise: one call start a number in any 24 hours, and 14 in any
// 14 days.
var DefaultPressure = []PressureLimit{{Within: 24 * time.Hour, Max: 1}, {Within: 14 * 24 * time.Hour, Max: 14}}

// Pressure is the contact pressure a journal keeps ([JournalOptions]):
// how many call starts one number may get across every campaign on the
// store, counted in the store's [CallStarts].
type Pressure struct {
	Limits []PressureLimit
	Starts CallStarts
	// Campaign names the campaign in each call start it records.
	Campaign string
	// AfterConversation, if set, holds a number for that long after a
	// conversation with it ([HoldAfterConversation]): Reg F's
	// [RegFAfterConversation]. 0: conversations hold nothing.
	AfterConversation time.Duration
	// Now is the clock the limits are read with; nil is time.Now.
	Now func() time.Time
	// NumberLimits, if set, gives the limits a number is held to besides
	// Limits (a US state's cap on calls to one person in 24 hours), none
	// longer than Limits' longest.
	NumberLimits func(number string) []PressureLimit
}

// LimitsFor returns the limits number is held to: Limits, and
// NumberLimits' for it.
func (p *Pressure) LimitsFor(number string) []PressureLimit {
	if p.NumberLimits == nil || len(p.Limits) == 0 {
		return p.Limits
	}
	extra := p.NumberLimits(number)
	if len(extra) == 0 {
		return p.Limits
	}
	return append(slices.Clip(p.Limits), extra...)
}

func (p *Pressure) now() time.Time {
	if p.Now != nil {
		return p.Now()
	}
	return time.Now()
}

// Longest is the longest span of the limits: starts older than it no
// longer count.
func Longest(limits []PressureLimit) time.Duration {
	var d time.Duration
	for _, l := range limits {
		d = max(d, l.Within)
	}
	return d
}

// HoldUntil says whether a number whose counted call starts were at (in
// any order) may be called at now under limits; if not, it returns the
// HeldError saying when it may be.
func HoldUntil(limits []PressureLimit, number string, at []time.Time, now time.Time) *HeldError {
	at = slices.Clone(at)
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	var held *HeldError
	for _, l := range limits {
		if l.Max <= 0 {
			continue
		}
		from := now.Add(-l.Within)
		i, _ := slices.BinarySearchFunc(at, from, func(a, b time.Time) int {
			if !a.After(b) {
				return -1
			}
			return 1
		})
		in := at[i:] // the starts after from: within the span
		if len(in) < l.Max {
			continue
		}
		until := in[len(in)-l.Max].Add(l.Within)
		if held == nil || until.After(held.Until) || until.Equal(held.Until) && l.Within > held.Limit.Within {
			held = &HeldError{Number: number, Limit: l, Starts: len(in), Until: until}
		}
	}
	return held
}

// CallStart is one call start counted by contact pressure: written when
// its intent is, and released when the service refused the call or it was
// provably not sent.
type CallStart struct {
	Number string `json:"number,omitempty"` // E.164; empty in an erased person's line
	// Hash, in an erased person's line ([CallStartsFile.Erase]), is the
	// keyed hash of the number ([NumberHash]) in its place, and in ID.
	Hash     string    `json:"hash,omitempty"`
	At       time.Time `json:"at"`
	ID       string    `json:"id"` // the campaign's journal, the contact's key and the attempt
	Campaign string    `json:"campaign,omitempty"`
	Agent    string    `json:"agent,omitempty"`
	// Released marks a line that gives the start of ID back: the
	// service refused the call, or it was provably never sent.
	Released bool `json:"released,omitempty"`
}

// key is what the start is filed under: its number, or an erased
// person's hash.
func (s *CallStart) key() string {
	if s.Hash != "" {
		return s.Hash
	}
	return s.Number
}

// startID identifies the call start of an intent or outcome of a journal.
func startID(journal string, r *Record) string {
	return journal + " " + r.Agent + " " + r.Phone + " " + strconv.Itoa(r.N) + " " + strconv.Itoa(r.Attempt)
}

// releases reports whether an outcome gives its call start back: the
// service answered with a refusal, or the call was provably not sent.
func releases(status string) bool {
	switch status {
	case OutcomeFailed, OutcomeRetry, OutcomeSkipped:
		return true
	}
	return false
}

// pressureOp is a call start to check and count (release false) or one
// to give back, for the record at index i of a batch.
type pressureOp struct {
	i     int
	start CallStart
	// contact, on a contact's first attempt in its journal, is its
	// contactHash: a counted start of the same campaign's contact made
	// from another journal (or from this one before it was restored from
	// a backup) refuses it ([ForeignStartError]). 0: not checked.
	contact uint64
	// call, in a release of a service start ([serviceRelease]), is the
	// call id whose advisory lock PostgreSQL takes.
	call string
}

// ErrForeignStart is wrapped by the [ForeignStartError] a journal's
// Append returns for an intent the store's call starts say its campaign
// made already from a journal that is not this one.
var ErrForeignStart = errors.New("the campaign called this person from another journal")

// ForeignStartError refuses the first attempt of a contact whose number
// and agent the same campaign (by name) started a call to already, by the
// store's call starts, that the journal does not record: a second state
// directory of the campaign on the same CALLRUN_HOME (another checkout, a
// copy of the campaign file elsewhere), or the state directory restored
// from a backup older than its last calls. That journal does not know
// whom the campaign called; calling on would phone them again.
type ForeignStartError struct {
	Campaign string
	Number   string
	At       time.Time // when the earlier start was counted
	Journal  string    // the journal that does not record it
	Starts   string    // where the call starts are kept
}

func (e *ForeignStartError) Error() string {
	return fmt.Sprintf("campaign %s started a call to %s at %s, by the %s, that journal %s does not record: "+
		"this state directory is not the one the campaign's calls were made from (a second copy or checkout of the campaign, the campaign file copied elsewhere, or a state directory restored from a backup made before those calls), "+
		"and calling on from it would phone people again; no call was started to that person, and the run stopped. %s",
		e.Campaign, e.Number, e.At.UTC().Format(time.RFC3339), e.Starts, e.Journal, ForeignStartDecide)
}

// ForeignStartDecide is what a [ForeignStartError] (and a plan that
// finds run would stop with one) asks a person to decide. A new name: is
// no way past it for the same campaign: under it, everyone the campaign
// called is called again as soon as contact pressure allows. Nor is
// waiting: every start of the campaign is read, the archived ones too.
const ForeignStartDecide = "Decide: if the state directory the campaign ran from still exists (the other copy or checkout, or the directory as it was before an older backup was restored over it), run the campaign from there, with its state_dir:. " +
	"If this directory was restored from an older backup and the later one is lost, the people called since the backup must not be called again by this campaign: " +
	"`callrun plan --report DIR CAMPAIGN.yaml` lists every one of them in DIR/report.csv with the status called_elsewhere; take them out of the sheets, or save those rows as a CSV file and list it under suppress: ({file: called.csv, columns: [phone_number]}), then run again. " +
	"Do not change the campaign's name to get past this stop: under a new name it calls again everyone it called under this one, as soon as contact pressure allows (the next day by default, at once with pressure: {off: true}); a new name is only for a different campaign, meant to call them again. " +
	"Waiting does not settle it either: this check reads every call start of the campaign, archived ones too, so it stops this state directory after 15 days too, and after any time; to call these people again on purpose, give the campaign a new name of its own"

func (e *ForeignStartError) Unwrap() error { return ErrForeignStart }

// contactHash is what identifies a contact of a campaign across
// journals: the campaign's name, the agent, the number and the
// occurrence (a start's ID less its journal and attempt).
func contactHash(campaign, agent, number, n string) uint64 {
	return idHash(campaign + "\x00" + agent + " " + number + " " + n)
}

// contactOf is the contactHash of a counted start s, read from its ID
// (the journal, the agent, the number, the occurrence and the attempt,
// startID); 0 when s does not name them (an older callrun's line, an
// erased person's, a release).
func contactOf(s CallStart) uint64 {
	if s.Released || s.Campaign == "" || s.Agent == "" || s.Number == "" {
		return 0
	}
	i := strings.LastIndexByte(s.ID, ' ')
	if i < 0 {
		return 0
	}
	rest := s.ID[:i]
	j := strings.LastIndexByte(rest, ' ')
	if j < 0 || !strings.HasSuffix(rest[:j], " "+s.Agent+" "+s.Number) {
		return 0
	}
	return contactHash(s.Campaign, s.Agent, s.Number, rest[j+1:])
}

// CallStarts is the count of call starts of a store, shared by every
// campaign on it: with files, a file in the directory the do-not-call
// list is in ([CallStartsFile]); with PostgreSQL, a table of the database
// ([Postgres.CallStarts]). A journal opened with a [Pressure] checks and
// counts each intent in it as it commits the intent.
//
// Beside the starts it keeps the conversations `callrun listen` records
// ([Conversation]), which hold a number for a campaign with Reg F's rule
// ([Pressure.AfterConversation]), checked with the count.
type CallStarts interface {
	// History returns every call start to number, oldest first, with
	// whether it was given back.
	History(ctx context.Context, number string) ([]CallStart, error)
	// Counted returns the call starts after since that count, of every
	// number: not given back. Plan reads them.
	Counted(ctx context.Context, since time.Time) (map[string][]time.Time, error)
	// Converse records a conversation ([Conversation]) durably before it
	// returns, and reports whether it was new: one of the same campaign
	// and key recorded already is not recorded again. listen calls it.
	Converse(ctx context.Context, c Conversation) (bool, error)
	// Conversations returns every conversation with number, oldest
	// first, for history.
	Conversations(ctx context.Context, number string) ([]Conversation, error)
	// Conversed returns the latest conversation after since with each
	// number: plan reads them.
	Conversed(ctx context.Context, since time.Time) (map[string]time.Time, error)
	// Compact moves the starts and conversations too old to count into
	// their archives, where History and Conversations still find them,
	// and says how many of each it moved; a database keeps its own, and
	// moves none.
	Compact(now time.Time) (starts, conversations int, err error)
	// Erase keeps the starts and conversations of the numbers (E.164)
	// under their keyed hash instead ([CallStartsFile.Erase]), where they
	// still count: the erase command calls it.
	Erase(ctx context.Context, numbers []string, opts EraseOptions) (PressureEraseCounts, error)
	// Callers returns the campaigns whose runs started calls kept here,
	// archived ones too, each once: erase names those no recorded place
	// is.
	Callers(ctx context.Context) ([]Caller, error)
	// ServiceStarted records a call start the service made on its own
	// ([ServiceStartID]), counted like a run's, unless one of its ID is
	// counted already or own, asked under the lock a journal takes to
	// give such a start back, says a journal holds the call (PostgreSQL
	// reads its campaign's journal in own's place, in the transaction
	// that holds that lock). listen calls it.
	ServiceStarted(ctx context.Context, s CallStart, erased bool, own func() (bool, error)) (bool, error)
	String() string
}

// Caller is a campaign that started calls on a store, as its call starts
// say: its name, and its journal as its run named it (a state
// directory's journal file, as the run was given the campaign file's
// path; or, in PostgreSQL, the campaign and shard).
type Caller struct {
	Campaign, Journal string
}

// callerOf is the campaign that started s ([startID]: the journal, the
// agent, then the contact's number, occurrence and attempt).
func callerOf(s CallStart) Caller {
	id := s.ID
	for range 3 {
		if i := strings.LastIndexByte(id, ' '); i >= 0 {
			id = id[:i]
		}
	}
	return Caller{Campaign: s.Campaign, Journal: strings.TrimSuffix(id, " "+s.Agent)}
}

// File names of the call starts in their directory.
const (
	CallStartsFileName = "call-starts.jsonl"
	CallStartsLockName = "call-starts.lock"
)

// CallStartsFile is the call starts in files: an append-only JSON Lines
// file in a directory shared by every campaign on the machine ([Home]),
// with a lock of its own, call-starts.lock, that a journal holds while it
// checks a batch's intents, appends their starts and syncs them, so that
// two runs never both count a number's last free start. A run's start
// moves the lines too old to count into an archive beside it
// ([CallStartsFile.Compact]).
// The conversations are in a file of their own beside it
// (conversations.jsonl), appended under the same lock, and compacted
// with the starts.
type CallStartsFile struct {
	dir string

	mu     sync.Mutex
	starts follower[CallStart]
	open   map[string][]timedID // counted starts by number, as of what starts read
	// compactMin is the least the lines to move must take before
	// Compact moves them; compactMinBytes but in tests.
	compactMin int64
	// beforeReplace, if set, runs between a compaction's two steps; an
	// error from it stops the compaction there, as a crash would.
	beforeReplace func() error
	// BeforeSync, if set, runs before each fsync of the starts a journal
	// counts or gives back; an error from it fails the write as a failed
	// fsync would. Tests use it to break the disk.
	BeforeSync func() error

	conversations conversationsFile // the conversations, in a file of their own; under mu

	// campaign, when set ([CallStartsFile.follow]), is the campaign whose
	// counted starts the file's reader keeps in memory however old
	// (timedID.mine), and archived its contacts in the archive
	// (archivedFor says whose), read through the archive's index
	// ([ArchiveContactsName]); nil: not read since the archive last
	// changed. Under mu. The first attempt of that campaign's contact is
	// checked against all of them ([ForeignStartError]), not just the
	// last keptSpan: memory follows the campaign, not the store.
	campaign    string
	archived    map[uint64]int64
	archivedFor string

	keysMu sync.Mutex
	// keys are the store's erasure keys, read from the erasure key file
	// beside the starts only once an erased person's line asks for them:
	// a store that erased nobody never reads them. Under keysMu.
	keys *ErasureKeys
}

// timedID is what a CallStartsFile keeps in memory of a counted start,
// or of a conversation: when, and its ID's hash, to find the start an
// outcome gives back (or the conversation a delivery's retry records
// again). The campaign and agent stay in the file, for History: a run of
// a million contacts keeps a million of these. Two starts of one number
// whose IDs share a hash (1 in 2^64) would swap which is given back: the
// count is the same.
type timedID struct {
	at      int64  // Unix nanoseconds
	id      uint64 // idHash of the start's ID, or Conversation.id
	contact uint64 // a start's contactOf
	// mine marks a start of the campaign the reader follows
	// ([CallStartsFile.follow]), which forgetOld keeps however old.
	mine bool
}

func idHash(id string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(id)) //nolint:errcheck // never fails
	return h.Sum64()
}

var _ CallStarts = (*CallStartsFile)(nil)

// Callers reads the starts, archived and not, for the campaigns that
// made them.
func (l *CallStartsFile) Callers(context.Context) ([]Caller, error) {
	seen := map[Caller]bool{}
	_, err := l.scan(func(s CallStart) bool {
		if !s.Released && !IsServiceStart(s) { // a service start names no journal
			seen[callerOf(s)] = true
		}
		return false
	})
	if err != nil {
		return nil, err
	}
	return slices.SortedFunc(maps.Keys(seen), func(a, b Caller) int {
		return cmp.Or(cmp.Compare(a.Campaign, b.Campaign), cmp.Compare(a.Journal, b.Journal))
	}), nil
}

// OpenCallStartsFile returns the call starts kept in directory dir.
// Nothing is read or created before they are used.
func OpenCallStartsFile(dir string) *CallStartsFile {
	return &CallStartsFile{dir: dir, open: map[string][]timedID{}, compactMin: compactMinBytes,
		starts:        callStartLines(filepath.Join(dir, CallStartsFileName)),
		conversations: conversationsFile{lines: conversationLines(filepath.Join(dir, ConversationsFileName))},
	}
}

// callStartLines follows the call starts' file at path.
func callStartLines(path string) follower[CallStart] {
	return follower[CallStart]{path: path, what: "a call start", valid: func(s *CallStart) bool { return (s.Number == "") != (s.Hash == "") }}
}

// checkHash returns nil when the store holds the erasure key that hash,
// read in holder, was made with ([CheckHashKey]): the keys are read from
// the erasure key file beside the starts the first time, and again when a
// hash names a key not read yet.
func (l *CallStartsFile) checkHash(hash, holder string) error {
	l.keysMu.Lock()
	defer l.keysMu.Unlock()
	if id, _, ok := splitHash(hash); ok && !l.keys.Has(id) {
		keys, err := OpenErasureFile(l.dir).Keys(context.Background())
		if err != nil {
			return fmt.Errorf("reading the erasure keys that %s needs: %w", holder, err)
		}
		l.keys = keys
	}
	return CheckHashKey(l.keys, hash, holder)
}

// hashes returns the keyed hashes of number under each erasure key read,
// under which an erased person's lines are filed; nil while no such line
// was read.
func (l *CallStartsFile) hashes(number string) []string {
	l.keysMu.Lock()
	defer l.keysMu.Unlock()
	return l.keys.Hashes(number)
}

// filedUnder returns number and its hashes ([CallStartsFile.hashes]):
// every key its starts and conversations are filed under.
func (l *CallStartsFile) filedUnder(number string) []string {
	return append([]string{number}, l.hashes(number)...)
}

// checkedLines calls fn with each entry of a file read and, for an erased
// person's (hash not empty), first checks its hash with checkHash; the
// first failure is kept in *err and the entries after it are not passed on.
func checkedLines[T any](l *CallStartsFile, path string, hash func(T) string, fn func(T, int64), err *error) func(T, int64) {
	return func(v T, end int64) {
		if *err != nil {
			return
		}
		if h := hash(v); h != "" {
			if *err = l.checkHash(h, fmt.Sprintf("%s (the line ending at byte %d)", path, end)); *err != nil {
				return
			}
		}
		fn(v, end)
	}
}

func (l *CallStartsFile) path() string { return filepath.Join(l.dir, CallStartsFileName) }

func (l *CallStartsFile) String() string { return "call starts " + l.path() }

// History reads the archive and the whole file for number's starts, an
// erased person's (filed under the hash of number) among them.
func (l *CallStartsFile) History(_ context.Context, number string) ([]CallStart, error) {
	return l.scan(byNumber(l, number, func(s CallStart) (string, string) { return s.Number, s.Hash }))
}

// byNumber returns whether an entry of a file, whose number and hash num
// returns, is number's: its number, or one of its hashes, made the first
// time an erased person's entry asks (once [CallStartsFile.checkHash] has
// read the keys).
func byNumber[T any](l *CallStartsFile, number string, num func(T) (string, string)) func(T) bool {
	var hashes []string
	made := false
	return func(v T) bool {
		n, h := num(v)
		if h == "" {
			return n == number
		}
		if !made {
			hashes, made = l.hashes(number), true
		}
		return slices.Contains(hashes, h)
	}
}

// Counted reads what was appended since the last look, without the lock:
// a start being written may be missed, as a plan may miss a run's. An
// erased person's starts are under their hash.
func (l *CallStartsFile) Counted(_ context.Context, since time.Time) (map[string][]time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refresh(nil, nil); err != nil {
		return nil, err
	}
	forgetOld(l.open) // as a fresh reader would: the starts this process counted since it read the file grow old too
	out := map[string][]time.Time{}
	after := since.UnixNano()
	for n, ss := range l.open {
		for _, s := range ss {
			if s.at > after {
				out[n] = append(out[n], time.Unix(0, s.at).UTC())
			}
		}
	}
	return out, nil
}

// CampaignStarts returns the contacts the counted starts name (each
// start's campaign, agent, number and occurrence, [contactHash]), read
// without the lock as [CallStartsFile.Counted] reads, with, besides,
// every start of campaign however old, those in the archive among them
// (through its index, [ArchiveContactsName], not written here): what a
// run of that campaign checks its first attempts against
// ([ForeignStartError]). Plan reads them ([Files.CalledBefore]), to say
// before a run does that the run would stop.
func (l *CallStartsFile) CampaignStarts(_ context.Context, campaign string) (*ContactStarts, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.follow(campaign)
	if err := l.refresh(nil, nil); err != nil {
		return nil, err
	}
	forgetOld(l.open) // as a run's fresh read of the file would
	c := &ContactStarts{at: map[uint64]int64{}, where: l.String()}
	for _, ss := range l.open {
		for _, s := range ss {
			if s.contact != 0 {
				if at, ok := c.at[s.contact]; !ok || s.at < at {
					c.at[s.contact] = s.at
				}
			}
		}
	}
	if campaign != "" {
		if _, _, err := l.archivedStart(campaign, 0, false); err != nil {
			return nil, fmt.Errorf("reading the %s: %w", l, err)
		}
		for contact, at := range l.archived {
			if was, ok := c.at[contact]; !ok || at < was {
				c.at[contact] = at
			}
		}
	}
	return c, nil
}

// ContactStarts are the contacts of every campaign that the counted call
// starts of a store in files name ([CallStartsFile.CampaignStarts]), and
// the journal whose first attempts are checked against them.
type ContactStarts struct {
	at             map[uint64]int64 // the earliest counted start, by contactHash
	where, journal string
}

// Started reports whether a counted start names the contact of campaign
// (by its name) with agent (by its name), number and occurrence n, and
// when the earliest was counted: a run's first attempt of that contact
// from a journal that does not record it is refused
// ([ForeignStartError]).
func (c *ContactStarts) Started(campaign, agent, number string, n int) (time.Time, bool) {
	if c == nil || campaign == "" {
		return time.Time{}, false
	}
	at, ok := c.at[contactHash(campaign, agent, number, strconv.Itoa(n))]
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(0, at).UTC(), true
}

// String names the call starts read.
func (c *ContactStarts) String() string { return c.where }

// Journal names the journal checked against them, as a run's
// [ForeignStartError] does; "" when none was named.
func (c *ContactStarts) Journal() string { return c.journal }

// refresh applies the whole lines appended since the last look; f, if set, is
// the file opened already. It calls watch, if set, with each start read
// and the offset just past its line. A file that shrank or was replaced
// by a compaction is read again from its start. The caller holds l.mu.
func (l *CallStartsFile) refresh(f *os.File, watch func(CallStart, int64)) error {
	var keyErr error
	from, err := l.starts.read(f, func() {
		l.open = map[string][]timedID{}
		l.archived = nil // a compaction may have replaced the file: the archive read again
	}, checkedLines(l, l.path(), func(s CallStart) string { return s.Hash }, func(s CallStart, end int64) {
		l.apply(s)
		if watch != nil {
			watch(s, end)
		}
	}, &keyErr))
	if err = cmp.Or(keyErr, err); err != nil {
		l.starts.forget() // read again, and refused again, next time
		l.open = map[string][]timedID{}
		return fmt.Errorf("reading the call starts: %w", err)
	}
	if from == 0 {
		forgetOld(l.open)
	}
	return nil
}

// keptSpan is how far back from the latest entry (or from now, if that
// entry is later) a CallStartsFile keeps call starts and conversations in
// memory: longer than any limit a campaign file can set (14 days), so
// that what a file holds of months of campaigns is not all held in memory
// by every run.
const keptSpan = 15 * 24 * time.Hour

// forgetOld drops from m, by number, the entries older than keptSpan
// before the latest one, or before now if the latest is later (written by
// a machine whose clock ran ahead): no limit counts them any more, and no
// delivery is sent again that long after. The files keep them, for
// History. It keeps the starts of the campaign the reader follows
// (timedID.mine), of any age: a first attempt is checked against them
// ([ForeignStartError]); the limits read only the recent ones. The
// caller holds the CallStartsFile's mu.
func forgetOld(m map[string][]timedID) {
	var latest int64
	for _, es := range m {
		for _, e := range es {
			latest = max(latest, e.at)
		}
	}
	before := min(latest, time.Now().UnixNano()) - int64(keptSpan)
	for n, es := range m {
		es = slices.DeleteFunc(es, func(e timedID) bool { return e.at < before && !e.mine })
		if len(es) == 0 {
			delete(m, n)
		} else {
			m[n] = es
		}
	}
}

// apply counts s, or gives back the latest start of its ID, under its
// key.
func (l *CallStartsFile) apply(s CallStart) {
	k := s.key()
	ss := l.open[k]
	id := idHash(s.ID)
	if !s.Released {
		c := contactOf(s)
		l.open[k] = append(ss, timedID{at: s.At.UnixNano(), id: id, contact: c, mine: c != 0 && l.campaign != "" && s.Campaign == l.campaign})
		return
	}
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].id == id {
			l.open[k] = slices.Delete(ss, i, i+1)
			return
		}
	}
}

// counting returns the start s gives back as it is filed: s itself, or,
// when its start is an erased person's, s in their hashed form (so that
// the release names no number either); false when no start of its ID
// counts.
func (l *CallStartsFile) counting(s CallStart) (CallStart, bool) {
	for _, k := range l.filedUnder(s.Number) {
		r := s
		if k != s.Number {
			r.Number, r.Hash, r.ID = "", k, strings.ReplaceAll(s.ID, s.Number, k)
		}
		id := idHash(r.ID)
		if slices.ContainsFunc(l.open[k], func(o timedID) bool { return o.id == id }) {
			return r, true
		}
	}
	return s, false
}

// startsTx is a batch's turn at the call starts in a file: the lock
// held from the check of its intents until their starts are on disk,
// after the intents themselves. The starts its outcomes give back are
// written before the outcomes: a crash between the two then leaves a
// contact uncertain whose call was provably not placed, never a number
// held for a day by a call that was refused or never sent.
type startsTx struct {
	l    *CallStartsFile
	fl   *flock.Flock
	f    *os.File
	pre  []byte // the releases check found, to append before the journal's write
	buf  []byte // the starts check counted, to append after it
	done bool   // pre and buf are on disk
}

// lock creates the call starts' directory, if need be, and takes their
// lock, waiting for another run's batch to be counted.
func (l *CallStartsFile) lock() (*flock.Flock, error) {
	if err := makeDir(l.dir); err != nil {
		return nil, fmt.Errorf("creating the directory of the %s: %w", l, err)
	}
	fl, err := lockFile(l.dir, CallStartsLockName)
	if err != nil {
		return nil, err
	}
	if err := fl.Lock(); err != nil {
		return nil, fmt.Errorf("waiting for the lock of the %s: %w", l, err)
	}
	return fl, nil
}

// begin takes the lock (waiting for another run's batch) and reads what
// was appended since the last look.
func (l *CallStartsFile) begin() (*startsTx, error) {
	fl, err := l.lock()
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	t := &startsTx{l: l, fl: fl}
	f, err := openOrCreate(l.dir, l.path())
	if err != nil {
		t.end()
		return nil, fmt.Errorf("opening the %s: %w", l, err)
	}
	t.f = f
	if err := l.refresh(f, nil); err != nil {
		t.end()
		return nil, err
	}
	if err := cutTail(f, l.starts.off); err != nil {
		t.end()
		return nil, fmt.Errorf("cutting the torn last line of the %s: %w", l, err)
	}
	return t, nil
}

// check checks each of ops in order against limits, and the
// conversations with after ([HoldAfterConversation]), at now (a release
// gives its start back first), counts the starts it allows, and returns
// the ops it held back, by their index i. Nothing is written yet.
func (t *startsTx) check(limits []PressureLimit, after time.Duration, now time.Time, ops []pressureOp) (map[int]error, error) {
	return t.checkFor(&Pressure{Limits: limits}, after, now, ops)
}

// checkFor is check with the limits of p, each number's its own
// ([Pressure.LimitsFor]).
func (t *startsTx) checkFor(p *Pressure, after time.Duration, now time.Time, ops []pressureOp) (map[int]error, error) {
	limits := p.Limits
	l := t.l
	if after > 0 {
		if err := l.refreshConversations(); err != nil {
			return nil, err
		}
	}
	// The first attempts are checked against every start of their
	// campaign: the file read keeps that campaign's however old.
	if i := slices.IndexFunc(ops, func(op pressureOp) bool { return op.contact != 0 }); i >= 0 && l.campaign != ops[i].start.Campaign {
		l.follow(ops[i].start.Campaign)
		if err := l.refresh(t.f, nil); err != nil {
			return nil, err
		}
	}
	var held map[int]error
	long := Longest(limits)
	for _, op := range ops {
		s := op.start
		if !s.Released {
			var at []time.Time
			from := now.Add(-long).UnixNano()
			keys := l.filedUnder(s.Number) // an erased person's starts count too
			if op.contact != 0 {
				first, found := int64(0), false
				if i := slices.IndexFunc(l.open[s.Number], func(o timedID) bool { return o.contact == op.contact }); i >= 0 {
					first, found = l.open[s.Number][i].at, true
				} else {
					var err error
					if first, found, err = l.archivedStart(s.Campaign, op.contact, true); err != nil {
						return nil, fmt.Errorf("reading the call starts' archive for the campaign's earlier calls: %w", err)
					}
				}
				if found {
					if held == nil {
						held = map[int]error{}
					}
					held[op.i] = &ForeignStartError{Campaign: s.Campaign, Number: s.Number, At: time.Unix(0, first), Starts: l.String()}
					continue
				}
			}
			for _, k := range keys {
				for _, o := range l.open[k] {
					if o.at > from {
						at = append(at, time.Unix(0, o.at).UTC())
					}
				}
			}
			if h := Later(HoldUntil(p.LimitsFor(s.Number), s.Number, at, now), HoldAfterConversation(s.Number, l.conversations.last(keys...), after, now)); h != nil {
				if held == nil {
					held = map[int]error{}
				}
				held[op.i] = h
				continue
			}
			s.At = now.UTC()
		} else if c, ok := l.counting(s); ok {
			s = c
		} else {
			continue // not counted (an older callrun wrote the intent, or it was held)
		}
		line, err := json.Marshal(s)
		if err != nil {
			return nil, err
		}
		if s.Released {
			t.pre = append(append(t.pre, line...), '\n')
		} else {
			t.buf = append(append(t.buf, line...), '\n')
		}
		l.apply(s) // seen by the next op of the batch
	}
	return held, nil
}

// release appends and syncs the releases check found; the caller then
// writes the journal.
func (t *startsTx) release() error {
	return t.append(t.pre)
}

// commit appends and syncs the starts check counted, once the journal
// holds their intents.
func (t *startsTx) commit() error {
	if err := t.append(t.buf); err != nil {
		return err
	}
	t.done = true
	return nil
}

// append writes buf at the end of the file and syncs it.
func (t *startsTx) append(buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	l := t.l
	if err := writeSynced(t.f, buf, l.starts.off, l.BeforeSync); err != nil {
		return fmt.Errorf("writing the %s: %w", l, err)
	}
	l.starts.appended(buf)
	return nil
}

// end releases the lock; what check counted and commit did not write is
// forgotten (the file is read again from its start next time).
func (t *startsTx) end() {
	l := t.l
	if l == nil {
		return // a batch with nothing to count took no lock
	}
	if !t.done {
		l.starts.forget()
		l.open = map[string][]timedID{}
	}
	if t.f != nil {
		t.f.Close()
	}
	l.mu.Unlock()
	t.fl.Unlock()
}
