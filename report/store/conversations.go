package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/gofrs/flock"
)

// RegFAfterConversation is Reg F's second rule (12 CFR 1006.14(b)(2)):
// no call to a person within 7 days after a telephone conversation with
// them. A campaign with `pressure: {preset: reg_f}` sets it as its
// [Pressure.AfterConversation].
const RegFAfterConversation = 7 * 24 * time.Hour

// Conversation is a call the outcomes say was answered: `callrun listen`
// records one in the store's call starts for each `call.answered`
// delivery it stores, so that a campaign with Reg F's preset calls that
// number no more for 7 days, whichever campaign made the call. A
// conversation is never given back.
type Conversation struct {
	Number   string    `json:"number"` // E.164
	At       time.Time `json:"at"`     // when listen received the delivery
	Campaign string    `json:"campaign"`
	Key      string    `json:"key"` // the delivery's: a retry of it records nothing
}

// id names c among the conversations: one a delivery of a campaign.
func (c *Conversation) id() uint64 { return idHash(c.Campaign + " " + c.Key) }

// HoldAfterConversation says whether a number whose latest conversation
// was at conversedAt (zero: none) may be called at now, when no call may start
// within after of a conversation (0: conversations hold nothing); if not,
// it returns the HeldError saying when it may be.
func HoldAfterConversation(number string, conversedAt time.Time, after time.Duration, now time.Time) *HeldError {
	if after <= 0 || conversedAt.IsZero() || !now.Before(conversedAt.Add(after)) {
		return nil
	}
	return &HeldError{Number: number, Conversation: conversedAt.UTC(), After: after, Until: conversedAt.Add(after)}
}

// Later returns whichever of a and b holds its number longer; nil when
// both are nil.
func Later(a, b *HeldError) *HeldError {
	if a == nil || b != nil && b.Until.After(a.Until) {
		return b
	}
	return a
}

// ConversationsFileName is the file of the conversations beside the call
// starts: written under the call starts' lock, read with them.
const ConversationsFileName = "conversations.jsonl"

// conversationsFile is what a [CallStartsFile] keeps in memory of the
// conversations file, beside its starts.
type conversationsFile struct {
	size          int64                // bytes read into conversations
	conversations map[string][]timedID // by number, as of size
	// lastLine is the line read last, which ends at size: a file that no
	// longer holds it there was replaced by a compaction, and is read
	// again from its start.
	lastLine []byte
}

func (l *CallStartsFile) conversationsPath() string {
	return filepath.Join(l.dir, ConversationsFileName)
}

// refreshConversations applies the whole lines appended to the conversations
// file since the last look. The caller holds l.mu.
func (l *CallStartsFile) refreshConversations() error {
	c := &l.conversations
	f, err := os.Open(l.conversationsPath())
	if errors.Is(err, os.ErrNotExist) {
		c.size, c.conversations = 0, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the conversations of the %s: %w", l, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("reading the conversations of the %s: %w", l, err)
	}
	if fi.Size() < c.size || !holdsLine(f, c.size, c.lastLine) {
		*c = conversationsFile{}
	}
	if fi.Size() == c.size {
		return nil
	}
	if c.conversations == nil {
		c.conversations = map[string][]timedID{}
	}
	prev, lastAt := c.size, int64(-1)
	n, err := readConversations(f, c.size, func(v Conversation, end int64) {
		c.apply(v)
		lastAt, prev = prev, end
	})
	if err != nil {
		return fmt.Errorf("%s: %w", l.conversationsPath(), err)
	}
	if lastAt >= 0 {
		if c.lastLine, err = lineAt(f, lastAt, c.size+n); err != nil {
			*c = conversationsFile{}
			return fmt.Errorf("reading the conversations of the %s: %w", l, err)
		}
	}
	if c.size == 0 {
		forgetOld(c.conversations)
	}
	c.size += n
	return nil
}

// apply keeps v, unless a conversation of its id is kept already.
func (c *conversationsFile) apply(v Conversation) bool {
	id := v.id()
	ts := c.conversations[v.Number]
	if slices.ContainsFunc(ts, func(t timedID) bool { return t.id == id }) {
		return false
	}
	c.conversations[v.Number] = append(ts, timedID{at: v.At.UnixNano(), id: id})
	return true
}

// last returns the latest conversation with number, zero when none.
func (c *conversationsFile) last(number string) time.Time {
	var at int64
	for _, t := range c.conversations[number] {
		at = max(at, t.at)
	}
	if at == 0 {
		return time.Time{}
	}
	return time.Unix(0, at).UTC()
}

// readConversations reads the conversations of f from off, as
// readEntries.
func readConversations(f *os.File, off int64, fn func(Conversation, int64)) (int64, error) {
	return readEntries(f, off, "a conversation", func(c *Conversation) bool { return c.Number != "" && c.Key != "" }, fn)
}

// Converse takes the call starts' lock (waiting for a run's batch to be
// counted), appends c to the conversations file and syncs it before it
// returns; a conversation of the same campaign and key recorded already
// is not recorded again.
func (l *CallStartsFile) Converse(_ context.Context, c Conversation) (bool, error) {
	_, statErr := os.Stat(l.dir)
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return false, fmt.Errorf("creating the directory of the %s: %w", l, err)
	}
	if os.IsNotExist(statErr) {
		if err := durable.SyncDir(filepath.Dir(l.dir)); err != nil {
			return false, fmt.Errorf("creating the directory of the %s: %w", l, err)
		}
	}
	fl := flock.New(filepath.Join(l.dir, CallStartsLockName))
	if err := fl.Lock(); err != nil {
		return false, fmt.Errorf("waiting for the lock of the %s: %w", l, err)
	}
	defer fl.Unlock() //nolint:errcheck // closing releases it too
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshConversations(); err != nil {
		return false, err
	}
	if slices.ContainsFunc(l.conversations.conversations[c.Number], func(t timedID) bool { return t.id == c.id() }) {
		return false, nil
	}
	path := l.conversationsPath()
	f, err := openOrCreate(l.dir, path)
	if err != nil {
		return false, fmt.Errorf("opening the conversations of the %s: %w", l, err)
	}
	defer f.Close()
	// A torn last line was never acknowledged: cut it.
	if err := cutTail(f, l.conversations.size); err != nil {
		return false, fmt.Errorf("cutting the torn last line of %s: %w", path, err)
	}
	c.At = c.At.UTC()
	line, err := json.Marshal(c)
	if err != nil {
		return false, err
	}
	line = append(line, '\n')
	if _, err := f.WriteAt(line, l.conversations.size); err != nil {
		f.Truncate(l.conversations.size) //nolint:errcheck // the next writer cuts it too
		return false, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Truncate(l.conversations.size) //nolint:errcheck
		return false, fmt.Errorf("syncing %s: %w", path, err)
	}
	if l.conversations.conversations == nil {
		l.conversations.conversations = map[string][]timedID{}
	}
	l.conversations.size += int64(len(line))
	l.conversations.lastLine = line
	l.conversations.apply(c)
	return true, nil
}

// Conversations reads the archive and the whole conversations file for
// number's, oldest first.
func (l *CallStartsFile) Conversations(_ context.Context, number string) ([]Conversation, error) {
	return l.scanConversations(func(c Conversation) bool { return c.Number == number })
}

// RecentConversations reads the archive and the whole conversations file
// for those after since, oldest first: what `state push` copies into the database
// ([Postgres.CopyConversations]).
func (l *CallStartsFile) RecentConversations(_ context.Context, since time.Time) ([]Conversation, error) {
	return l.scanConversations(func(c Conversation) bool { return c.At.After(since) })
}

// scanConversations reads the archive, then the whole conversations
// file, for those keep accepts, each once (a compaction stopped between
// its two steps left its lines in both), oldest first.
func (l *CallStartsFile) scanConversations(keep func(Conversation) bool) ([]Conversation, error) {
	var out []Conversation
	seen := map[uint64]bool{}
	add := func(c Conversation, _ int64) {
		if keep(c) && !seen[c.id()] {
			seen[c.id()] = true
			out = append(out, c)
		}
	}
	if err := readBoth(l.conversationsArchivePath(), l.conversationsPath(), func(f *os.File) (int64, error) { return readConversations(f, 0, add) }); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Conversation) int { return a.At.Compare(b.At) })
	return out, nil
}

// Conversed reads what was appended since the last look, without the
// lock, and returns the latest conversation after since of each number.
func (l *CallStartsFile) Conversed(_ context.Context, since time.Time) (map[string]time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshConversations(); err != nil {
		return nil, err
	}
	out := map[string]time.Time{}
	for n := range l.conversations.conversations {
		if at := l.conversations.last(n); at.After(since) {
			out[n] = at
		}
	}
	return out, nil
}
