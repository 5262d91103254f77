package store

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testKeys are erasure keys for tests: a keyed hash is a SHA-256 of a
// test secret and the number, under the key id "7e570001". The store's
// real keys (an HMAC) are another package's; a journal needs only this
// shape of them.
type testKeys struct{ ids []string }

func (k testKeys) Hashes(e164 string) []string {
	var out []string
	for _, id := range k.ids {
		sum := sha256.Sum256([]byte("test secret " + id + "\x00" + e164))
		out = append(out, "h1:"+id+":"+base64.RawURLEncoding.EncodeToString(sum[:]))
	}
	return out
}

func (k testKeys) Has(id string) bool {
	for _, i := range k.ids {
		if i == id {
			return true
		}
	}
	return false
}

var theTestKeys = testKeys{ids: []string{"7e570001"}}

// journalEraser is a store whose journal people can be erased from.
type journalEraser interface {
	EraseJournal(ctx context.Context, numbers []string, opts EraseOptions) (EraseCounts, error)
}

const (
	erasedA = "+14155550123"
	keptB   = "+14155550124"
	keptC   = "+14155550125"
)

var eraseT0 = time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)

// eraseRecords are a campaign's journal: A called through two agents,
// once retried, B uncertain, C sent after a retry.
func eraseRecords() []Record {
	at := func(m int) time.Time { return eraseT0.Add(time.Duration(m) * time.Minute) }
	return []Record{
		{Type: TypeRun, Note: "run 1", At: at(0)},
		{Type: TypeIntent, Agent: "Spring", Phone: erasedA, Attempt: 1, At: at(1)},
		{Type: TypeOutcome, Agent: "Spring", Phone: erasedA, Attempt: 1, Status: OutcomeRetry, HTTP: 429, At: at(2)},
		{Type: TypeIntent, Agent: "Spring", Phone: keptB, Attempt: 1, At: at(3)},
		{Type: TypeIntent, Agent: "Summer", Phone: erasedA, Attempt: 1, At: at(4)},
		{Type: TypeOutcome, Agent: "Summer", Phone: erasedA, Attempt: 1, Status: OutcomeFailed, HTTP: 422, Reason: "refused", At: at(5)},
		{Type: TypeIntent, Agent: "Spring", Phone: erasedA, Attempt: 2, At: at(6)},
		{Type: TypeOutcome, Agent: "Spring", Phone: erasedA, Attempt: 2, Status: OutcomeSent, HTTP: 201, CallID: "call_a", At: at(7)},
		{Type: TypeIntent, Agent: "Spring", Phone: keptC, Attempt: 1, At: at(8)},
		{Type: TypeOutcome, Agent: "Spring", Phone: keptC, Attempt: 1, Status: OutcomeSent, HTTP: 201, At: at(9)},
		{Type: TypeEnd, Note: "complete", At: at(10)},
	}
}

// newErasedJournal makes a journal of eraseRecords in a fresh store of
// kind k and returns the store and its lines.
func newErasedJournal(t *testing.T, open func(t *testing.T, campaign string, index, count int) Store, campaign string) Store {
	t.Helper()
	s := open(t, campaign, 0, 1)
	unlock := lockStore(t, s)
	j, st, err := s.OpenJournal(context.Background(), JournalOptions{Keys: theTestKeys})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, j, eraseRecords()...)
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	st.Close()
	unlock()
	return s
}

// journalText returns the journal's lines, in order, each with its
// newline: the file's bytes, or the table's rows.
func journalText(t *testing.T, s Store) string {
	t.Helper()
	switch s := s.(type) {
	case Files:
		b, err := os.ReadFile(s.Journal())
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	case *Postgres:
		rows, err := s.pool.Query(context.Background(), `SELECT line FROM callrun_journal WHERE campaign = $1 ORDER BY id`, s.campaign)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			b.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	t.Fatalf("no journal text for %T", s)
	return ""
}

// openWithKeys opens the store's journal with keys under its lock, and
// closes everything when the test ends.
func openWithKeys(t *testing.T, s Store, keys JournalKeys) (*State, error) {
	t.Helper()
	unlock := lockStore(t, s)
	defer unlock()
	j, st, err := s.OpenJournal(context.Background(), JournalOptions{Keys: keys})
	if err != nil {
		return nil, err
	}
	j.Close()
	t.Cleanup(func() { st.Close() })
	return st, nil
}

// TestEraseJournal erases A from a journal, files and PostgreSQL: A's
// records become one tombstone per contact where its last record was,
// nothing else changes, the number is gone, and A's contacts stay
// settled (erased) for a resume that has the keys; a journal opened
// without them is refused.
func TestEraseJournal(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newErasedJournal(t, kind.open, "erase")
			before := journalText(t, s)
			erasedAt := eraseT0.Add(24 * time.Hour)
			n, err := s.(journalEraser).EraseJournal(context.Background(), []string{erasedA, "+19995550000"}, EraseOptions{Keys: theTestKeys, At: erasedAt})
			if err != nil {
				t.Fatal(err)
			}
			if n != (EraseCounts{Removed: 6, Tombstones: 2}) {
				t.Errorf("counts %+v, want 6 removed, 2 tombstones", n)
			}
			after := journalText(t, s)
			for _, form := range []string{erasedA, strings.TrimPrefix(erasedA, "+"), "4155550123", "call_a"} {
				if strings.Contains(after, form) {
					t.Errorf("the journal still holds %q:\n%s", form, after)
				}
			}
			// Every other line as it was, the tombstones where A's
			// contacts' last records were.
			old := strings.SplitAfter(before, "\n")
			h := theTestKeys.Hashes(erasedA)[0]
			tomb := func(agent string, attempt int, status string, at time.Time) string {
				line, err := encodeRecord(&Record{Type: TypeErased, Agent: agent, Hash: h, Attempt: attempt, Status: status, ErasedAt: erasedAt, At: at})
				if err != nil {
					t.Fatal(err)
				}
				return string(line)
			}
			want := old[0] + old[3] + tomb("Summer", 1, "failed", eraseT0.Add(5*time.Minute)) +
				tomb("Spring", 2, "sent", eraseT0.Add(7*time.Minute)) + old[8] + old[9] + old[10]
			if after != want {
				t.Errorf("journal after the erase:\n%s\nwant:\n%s", after, want)
			}

			st, err := openWithKeys(t, s, theTestKeys)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				k        Key
				status   Status
				attempts int
			}{
				{Key{Agent: "Spring", Phone: erasedA}, Erased, 2},
				{Key{Agent: "Summer", Phone: erasedA}, Erased, 1},
				{Key{Agent: "Spring", Phone: keptB}, Uncertain, 1},
				{Key{Agent: "Spring", Phone: keptC}, Sent, 1},
			} {
				if got, ok := st.Status(c.k); !ok || got != c.status || st.Attempts(c.k) != c.attempts {
					t.Errorf("%v: status %q (%v), %d attempts; want %q, %d", c.k, got, ok, st.Attempts(c.k), c.status, c.attempts)
				}
			}
			if _, ok := st.Status(Key{Agent: "Winter", Phone: erasedA}); ok {
				t.Error("A under an agent that never called it has a status")
			}
			e, ok := st.Lookup(Key{Agent: "Spring", Phone: erasedA})
			if !ok || e.Status != Erased || !e.LastAt.Equal(eraseT0.Add(7*time.Minute)) || !strings.Contains(e.Reason, "sent") {
				t.Errorf("Lookup(A) = %+v, %v", e, ok)
			}
			if k, ok := st.FindPhone(erasedA); !ok || k != (Key{Agent: "Spring", Phone: erasedA}) {
				t.Errorf("FindPhone(A) = %v, %v", k, ok)
			}
			if ks := st.KeysWithPhone(map[string]bool{erasedA: true}); len(ks[erasedA]) != 2 {
				t.Errorf("KeysWithPhone(A) = %v, want A's two contacts", ks)
			}
			if c := st.Counts(); c[Erased] != 2 || c[Sent] != 1 || c[Uncertain] != 1 {
				t.Errorf("Counts = %v", c)
			}

			// Fail closed: no keys, or not the key the tombstones were made with.
			for _, keys := range []JournalKeys{nil, testKeys{ids: []string{"0123abcd"}}} {
				_, err := openWithKeys(t, s, keys)
				if !errors.Is(err, ErrErasureKeyMissing) || !strings.Contains(err.Error(), "restore it") ||
					!strings.Contains(err.Error(), "line 3") && !strings.Contains(err.Error(), "row id") {
					t.Errorf("opened with keys %v: %v; want ErrErasureKeyMissing naming the line", keys, err)
				}
			}
			if _, err := s.ReadState(context.Background()); !errors.Is(err, ErrErasureKeyMissing) {
				t.Errorf("ReadState without keys: %v; want ErrErasureKeyMissing", err)
			}

			// Idempotent: erasing again changes nothing.
			var mtime time.Time
			if f, ok := s.(Files); ok {
				fi, _ := os.Stat(f.Journal())
				mtime = fi.ModTime()
			}
			n, err = s.(journalEraser).EraseJournal(context.Background(), []string{erasedA}, EraseOptions{Keys: theTestKeys, At: erasedAt.Add(time.Hour)})
			if err != nil || n != (EraseCounts{}) {
				t.Errorf("second erase: %+v, %v; want nothing done", n, err)
			}
			if again := journalText(t, s); again != after {
				t.Errorf("second erase changed the journal:\n%s", again)
			}
			if f, ok := s.(Files); ok {
				if fi, _ := os.Stat(f.Journal()); !fi.ModTime().Equal(mtime) {
					t.Error("second erase rewrote the file")
				}
			}
		})
	}
}

// TestEraseJournalRefusesHeldLock: while a run holds the campaign's lock,
// erase changes nothing and names the holder.
func TestEraseJournalRefusesHeldLock(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := newErasedJournal(t, kind.open, "held")
			before := journalText(t, s)
			unlock := lockStore(t, kind.open(t, "held", 0, 1))
			defer unlock()
			_, err := s.(journalEraser).EraseJournal(context.Background(), []string{erasedA}, EraseOptions{Keys: theTestKeys})
			if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "pid") {
				t.Errorf("erase beside a run: %v; want ErrLocked naming the holder's pid", err)
			}
			if after := journalText(t, s); after != before {
				t.Errorf("a refused erase changed the journal")
			}
		})
	}
	t.Run("shard", func(t *testing.T) {
		s := ShardFiles(t.TempDir(), 1, 2)
		if err := os.MkdirAll(s.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(s.Journal(), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		unlock := lockStore(t, ShardFiles(filepath.Dir(s.Dir), 0, 2)) // another shard: its parent lock is shared
		defer unlock()
		if _, err := s.EraseJournal(context.Background(), []string{erasedA}, EraseOptions{Keys: theTestKeys}); err != nil {
			t.Errorf("erasing shard 1/2 beside a run of shard 0/2: %v", err)
		}
	})
}

// TestEraseJournalKilled faults the erase before the new journal
// replaces the old, and after: the journal is the old one or the new
// one, whole, and every contact stays settled as it was.
func TestEraseJournalKilled(t *testing.T) {
	crash := errors.New("killed")
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			clean := newErasedJournal(t, kind.open, "clean")
			if _, err := clean.(journalEraser).EraseJournal(context.Background(), []string{erasedA}, EraseOptions{Keys: theTestKeys, At: eraseT0}); err != nil {
				t.Fatal(err)
			}
			erased := journalText(t, clean)
			for _, c := range []struct {
				name string
				opts EraseOptions
				want func(before string) string
			}{
				{"before", EraseOptions{BeforeReplace: func() error { return crash }}, func(before string) string { return before }},
				{"after", EraseOptions{AfterReplace: func() error { return crash }}, func(string) string { return erased }},
			} {
				t.Run(c.name, func(t *testing.T) {
					s := newErasedJournal(t, kind.open, "killed-"+c.name)
					before := journalText(t, s)
					c.opts.Keys, c.opts.At = theTestKeys, eraseT0
					if _, err := s.(journalEraser).EraseJournal(context.Background(), []string{erasedA}, c.opts); !errors.Is(err, crash) {
						t.Fatalf("erase: %v; want the fault", err)
					}
					if got := journalText(t, s); got != c.want(before) {
						t.Errorf("journal after a kill %s the replace:\n%s", c.name, got)
					}
					if f, ok := s.(Files); ok {
						if tmp, _ := filepath.Glob(filepath.Join(f.Dir, ".journal.jsonl.*.tmp")); len(tmp) > 0 {
							t.Errorf("temporary files left: %v", tmp)
						}
					}
					st, err := openWithKeys(t, s, theTestKeys)
					if err != nil {
						t.Fatal(err)
					}
					for _, k := range []Key{{Agent: "Spring", Phone: erasedA}, {Agent: "Summer", Phone: erasedA}, {Agent: "Spring", Phone: keptB}, {Agent: "Spring", Phone: keptC}} {
						if got, ok := st.Status(k); !ok || got == Pending {
							t.Errorf("%v after a kill %s the replace: %q, %v; want settled", k, c.name, got, ok)
						}
					}
				})
			}
		})
	}
}

// TestRunsSkipTombstones: a tombstone is no call and moves no run's
// times.
func TestRunsSkipTombstones(t *testing.T) {
	var rs runScan
	rs.line([]byte(`{"t":"run","note":"run 1","at":"2026-11-21T09:00:00Z"}`))
	rs.line([]byte(`{"t":"intent","agent":"a","phone":"+14155550124","attempt":1,"at":"2026-11-21T09:01:00Z"}`))
	rs.line([]byte(`{"t":"erased","agent":"a","hash":"h1:test0001:x","attempt":1,"status":"uncertain","erased_at":"2026-12-01T00:00:00Z","at":"2026-11-21T09:30:00Z"}`))
	runs := rs.result()
	if len(runs) != 1 || runs[0].Calls != 1 || !runs[0].LastAt.Equal(time.Date(2026, 11, 21, 9, 1, 0, 0, time.UTC)) {
		t.Errorf("runs = %+v; want one run of one call, last at 09:01", runs)
	}
}

// TestTombstoneCheck: the record a tombstone must be.
func TestTombstoneCheck(t *testing.T) {
	h := theTestKeys.Hashes(erasedA)[0]
	ok := Record{Type: TypeErased, Agent: "a", Hash: h, Attempt: 1, Status: "sent"}
	if err := ok.check(); err != nil {
		t.Errorf("%+v: %v", ok, err)
	}
	for _, bad := range []Record{
		{Type: TypeErased, Hash: h, Status: "sent"},
		{Type: TypeErased, Agent: "a", Phone: erasedA, Hash: h, Status: "sent"},
		{Type: TypeErased, Agent: "a", Status: "sent"},
		{Type: TypeErased, Agent: "a", Hash: "+14155550123", Status: "sent"},
		{Type: TypeErased, Agent: "a", Hash: "h1::mac", Status: "sent"},
		{Type: TypeErased, Agent: "a", Hash: "h1:k1:mac", Status: "sent"},
		{Type: TypeErased, Agent: "a", Hash: h, Status: "retry"},
		{Type: TypeErased, Agent: "a", Hash: h, Status: "sent", N: -1},
	} {
		if err := bad.check(); err == nil {
			t.Errorf("%+v passed the check", bad)
		}
	}
}

// TestEraseJournalTornAndLongLines: a torn last line (a crash's) is left
// out of the new journal, number and all; a line too long to be a
// record stops the erase with the journal as it was.
func TestEraseJournalTornAndLongLines(t *testing.T) {
	s := Files{Dir: t.TempDir()}
	whole := `{"t":"intent","agent":"Spring","phone":"` + erasedA + `","attempt":1,"at":"2026-11-21T09:00:00Z"}` + "\n"
	torn := `{"t":"outcome","agent":"Spring","phone":"` + erasedA + `","attem`
	if err := os.WriteFile(s.Journal(), []byte(whole+torn), 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := s.EraseJournal(context.Background(), []string{erasedA}, EraseOptions{Keys: theTestKeys, At: eraseT0})
	if err != nil || n != (EraseCounts{Removed: 1, Tombstones: 1}) {
		t.Fatalf("erase: %+v, %v", n, err)
	}
	b, err := os.ReadFile(s.Journal())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), erasedA) || strings.Count(string(b), "\n") != 1 || !strings.HasPrefix(string(b), `{"t":"erased"`) {
		t.Errorf("journal after the erase: %q", b)
	}

	long := `{"t":"run","note":"` + strings.Repeat("x", maxLine) + `","at":"2026-11-21T09:00:00Z"}` + "\n"
	before := []byte(long + whole)
	if err := os.WriteFile(s.Journal(), before, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EraseJournal(context.Background(), []string{erasedA}, EraseOptions{Keys: theTestKeys}); err == nil || !strings.Contains(err.Error(), "line 1: corrupt") {
		t.Errorf("erase over a line too long: %v", err)
	}
	if b, _ := os.ReadFile(s.Journal()); string(b) != string(before) {
		t.Error("a refused erase changed the journal")
	}
}
