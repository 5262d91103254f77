package store

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// RegFAfterConversation is Reg F's second rule (12 CFR 1006.14(b)(2)):
// no call to a person within 7 days after a telephone conversation with
// them. A campaign with `pressure: {preset: reg_f}` sets it as its
// [Pressure.AfterConversation].
const RegFAfterConversation = 7 * 24 * time.Hour

// Conversation is a call the outcomes say may have been answered:
// `callrun listen` records one in the store's call starts for each
// delivery it stores that may report one (campaign's mayBeConversation),
// so that a campaign with Reg F's preset calls that number no more for 7
// days, whichever campaign made the call. A conversation is never given
// back.
type Conversation struct {
	Number string `json:"number,omitempty"` // E.164; empty in an erased person's line
	// Hash, in an erased person's line ([CallStartsFile.Erase]), is the
	// keyed hash of the number ([NumberHash]) in its place.
	Hash     string    `json:"hash,omitempty"`
	At       time.Time `json:"at"` // when listen received the delivery
	Campaign string    `json:"campaign"`
	Key      string    `json:"key"` // the delivery's: a retry of it records nothing
	// Erased: the delivery was of a person in the store's erased set;
	// Converse records the conversation under the keyed hash of Number.
	// Never stored.
	Erased bool `json:"-"`
}

// key is what c is filed under: its number, or an erased person's hash.
func (c *Conversation) key() string {
	if c.Hash != "" {
		return c.Hash
	}
	return c.Number
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
	lines         follower[Conversation]
	conversations map[string][]timedID // by number, as of what lines read
}

// conversationLines follows the conversations' file at path.
func conversationLines(path string) follower[Conversation] {
	return follower[Conversation]{path: path, what: "a conversation", valid: func(c *Conversation) bool { return (c.Number == "") != (c.Hash == "") && c.Key != "" }}
}

func (l *CallStartsFile) conversationsPath() string {
	return filepath.Join(l.dir, ConversationsFileName)
}

// refreshConversations applies the whole lines appended to the conversations
// file since the last look; a file that shrank or was replaced by a
// compaction is read again from its start. The caller holds l.mu.
func (l *CallStartsFile) refreshConversations() error {
	c := &l.conversations
	var keyErr error
	from, err := c.lines.read(nil, func() { c.conversations = nil }, checkedLines(l, l.conversationsPath(), func(v Conversation) string { return v.Hash }, func(v Conversation, _ int64) { c.apply(v) }, &keyErr))
	if err = cmp.Or(keyErr, err); err != nil {
		c.lines.forget() // read again, and refused again, next time
		c.conversations = nil
		return fmt.Errorf("reading the conversations: %w", err)
	}
	if from == 0 {
		forgetOld(c.conversations)
	}
	return nil
}

// apply keeps v, unless a conversation of its id is kept already.
func (c *conversationsFile) apply(v Conversation) bool {
	id := v.id()
	ts := c.conversations[v.key()]
	if slices.ContainsFunc(ts, func(t timedID) bool { return t.id == id }) {
		return false
	}
	if c.conversations == nil {
		c.conversations = map[string][]timedID{}
	}
	c.conversations[v.key()] = append(ts, timedID{at: v.At.UnixNano(), id: id})
	return true
}

// last returns the latest conversation filed under any of keys (a
// number and its hashes), zero when none.
func (c *conversationsFile) last(keys ...string) time.Time {
	var at int64
	for _, k := range keys {
		for _, t := range c.conversations[k] {
			at = max(at, t.at)
		}
	}
	if at == 0 {
		return time.Time{}
	}
	return time.Unix(0, at).UTC()
}

// Converse takes the call starts' lock (waiting for a run's batch to be
// counted), appends c to the conversations file and syncs it before it
// returns; a conversation of the same campaign and key recorded already
// is not recorded again.
func (l *CallStartsFile) Converse(_ context.Context, c Conversation) (bool, error) {
	fl, err := l.lock()
	if err != nil {
		return false, err
	}
	defer fl.Unlock() //nolint:errcheck // closing releases it too
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.refreshConversations(); err != nil {
		return false, err
	}
	for _, k := range l.filedUnder(c.Number) { // an erased person's delivery sent again is recorded once too
		if slices.ContainsFunc(l.conversations.conversations[k], func(t timedID) bool { return t.id == c.id() }) {
			return false, nil
		}
	}
	c.At = c.At.UTC()
	if c.Erased {
		keys, err := OpenErasureFile(l.dir).Keys(context.Background())
		if err != nil {
			return false, err
		}
		if c, err = c.hashed(keys); err != nil {
			return false, err
		}
	}
	// A torn last line, never acknowledged, is cut first.
	if err := appendLines(l.dir, &l.conversations.lines, c); err != nil {
		return false, fmt.Errorf("writing %s: %w", l.conversationsPath(), err)
	}
	l.conversations.apply(c)
	return true, nil
}

// Conversations reads the archive and the whole conversations file for
// number's, an erased person's (filed under the hash of number) among
// them, oldest first.
func (l *CallStartsFile) Conversations(_ context.Context, number string) ([]Conversation, error) {
	return l.scanConversations(byNumber(l, number, func(c Conversation) (string, string) { return c.Number, c.Hash }))
}

// RecentConversations reads the archive and the whole conversations file
// for those a compaction at now would not move ([recent]: by now, and by
// the file's latest conversation), oldest first: what `state push` copies
// into the database ([Postgres.CopyConversations]).
func (l *CallStartsFile) RecentConversations(_ context.Context, now time.Time) ([]Conversation, error) {
	var latest time.Time
	if err := readLatest(l.conversationsPath(), conversationLines, func(c Conversation) { latest = maxTime(latest, c.At) }); err != nil {
		return nil, fmt.Errorf("reading the conversations of the %s: %w", l, err)
	}
	return l.scanConversations(func(c Conversation) bool { return recent(c.At, now, latest) })
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
	if err := readBoth(l.conversationsArchivePath(), l.conversationsPath(), func(f *os.File) (int64, error) {
		var keyErr error
		n, err := readAll(conversationLines(f.Name()), f, checkedLines(l, f.Name(), func(c Conversation) string { return c.Hash }, add, &keyErr))
		return n, cmp.Or(keyErr, err)
	}); err != nil {
		return nil, err
	}
	slices.SortStableFunc(out, func(a, b Conversation) int { return a.At.Compare(b.At) })
	return out, nil
}

// Conversed reads what was appended since the last look, without the
// lock, and returns the latest conversation after since of each number
// (an erased person's under their hash).
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

// hashed is an erased person's conversation: the keyed hash of its number
// (the first of keys') in its place.
func (c Conversation) hashed(keys *ErasureKeys) (Conversation, error) {
	hs := keys.Hashes(c.Number)
	if len(hs) == 0 {
		return c, errors.New("recording an erased person's conversation needs the store's erasure key")
	}
	c.Number, c.Hash = "", hs[0]
	return c, nil
}
