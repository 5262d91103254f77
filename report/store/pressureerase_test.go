package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// erasedStartsHome is a call starts directory holding, for A and B, one
// start each in the file and in the archive (as a compaction left it) and
// one conversation each in the conversations file and its archive, with
// the store's own erasure key made: what TestCallStartsErase erases A from.
func erasedStartsHome(t *testing.T, t0 time.Time) (string, *ErasureKeys) {
	t.Helper()
	home := t.TempDir()
	write := func(name string, lines ...string) {
		var b bytes.Buffer
		for _, l := range lines {
			b.WriteString(l + "\n")
		}
		if err := os.WriteFile(filepath.Join(home, name), b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old, now := t0.Add(-40*24*time.Hour).Format(time.RFC3339Nano), t0.Format(time.RFC3339Nano)
	write(CallStartsArchiveName,
		`{"number":"+14155550100","at":"`+old+`","id":"/s/old/journal.jsonl A +14155550100 1 1","campaign":"old","agent":"A"}`,
		`{"number":"+14155550199","at":"`+old+`","id":"/s/old/journal.jsonl A +14155550199 2 1","campaign":"old","agent":"A"}`)
	write(CallStartsFileName,
		`{"number":"+14155550100","at":"`+now+`","id":"/s/mon/journal.jsonl A +14155550100 1 1","campaign":"mon","agent":"A"}`,
		`{"number":"+14155550199","at":"`+now+`","id":"/s/mon/journal.jsonl A +14155550199 2 1","campaign":"mon","agent":"A"}`)
	write(ConversationsArchiveName,
		`{"number":"+14155550100","at":"`+old+`","campaign":"old","key":"d1"}`,
		`{"number":"+14155550199","at":"`+old+`","campaign":"old","key":"d2"}`)
	write(ConversationsFileName,
		`{"number":"+14155550100","at":"`+now+`","campaign":"mon","key":"d3"}`,
		`{"number":"+14155550199","at":"`+now+`","campaign":"mon","key":"d4"}`)
	keys, err := OpenErasureFile(home).MakeKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return home, keys
}

// startsFiles are the four files Erase rewrites.
var startsFiles = []string{CallStartsArchiveName, CallStartsFileName, ConversationsArchiveName, ConversationsFileName}

// readStartsFiles returns the four files' bytes.
func readStartsFiles(t *testing.T, home string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range startsFiles {
		b, err := os.ReadFile(filepath.Join(home, name))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = b
	}
	return out
}

// TestCallStartsErase: erasing A rewrites its starts and conversations,
// in the files and the archives, as hashed lines; no file holds A's
// number in any form, B's lines are untouched; a second erase writes
// nothing; a journal of another campaign is still held back from A by
// the hashed start until the day is over, and by the hashed conversation
// under Reg F's rule; History and Conversations find A's by hash; with
// the erasure key taken away, reading them fails closed.
func TestCallStartsErase(t *testing.T) {
	ctx := context.Background()
	const a, b = "+14155550100", "+14155550199"
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	home, keys := erasedStartsHome(t, t0)
	cs := OpenCallStartsFile(home)
	if _, err := cs.Counted(ctx, t0.Add(-time.Hour)); err != nil { // read before the erase, as a running listen would have
		t.Fatal(err)
	}
	n, err := cs.Erase(ctx, []string{a}, EraseOptions{Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	if n != (PressureEraseCounts{Starts: 2, Conversations: 2}) {
		t.Errorf("erased %+v, want 2 starts and 2 conversations", n)
	}
	after := readStartsFiles(t, home)
	for name, data := range after {
		if bytes.Contains(data, []byte("4155550100")) {
			t.Errorf("%s still holds A's number:\n%s", name, data)
		}
		if !bytes.Contains(data, []byte(`"number":"+14155550199"`)) {
			t.Errorf("%s lost B's line:\n%s", name, data)
		}
		if !bytes.Contains(data, []byte(`"hash":"`+keys.Hashes(a)[0]+`"`)) {
			t.Errorf("%s holds no hashed line of A:\n%s", name, data)
		}
	}
	if n, err := cs.Erase(ctx, []string{a}, EraseOptions{Keys: keys}); err != nil || n != (PressureEraseCounts{}) {
		t.Fatalf("a second erase: %+v, %v; want nothing changed", n, err)
	}
	for name, data := range readStartsFiles(t, home) {
		if !bytes.Equal(data, after[name]) {
			t.Errorf("a second erase changed %s", name)
		}
	}

	// Another campaign, another process: A is held by its hashed start.
	now := t0.Add(2 * time.Hour)
	clock := func() time.Time { return now }
	s := Files{Dir: filepath.Join(t.TempDir(), "tue")}
	unlock := lockStore(t, s)
	defer unlock()
	j, st, err := s.OpenJournal(ctx, JournalOptions{Pressure: &Pressure{Limits: DefaultPressure, Starts: OpenCallStartsFile(home), Campaign: "tue", Now: clock}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer j.Close()
	var h *HeldError
	if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: a, Attempt: 1}); !errors.As(err, &h) || !h.Until.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("A two hours after its erased start: %v, want held until %s", err, t0.Add(24*time.Hour))
	}
	now = t0.Add(24 * time.Hour)
	if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: a, Attempt: 1}); err != nil {
		t.Fatalf("A a day after its erased start: %v, want free", err)
	}
	// Reg F: the hashed conversation holds A for 7 days.
	regF := OpenCallStartsFile(home)
	tx, err := regF.begin()
	if err != nil {
		t.Fatal(err)
	}
	held, err := tx.check(nil, RegFAfterConversation, t0.Add(6*24*time.Hour), []pressureOp{{start: CallStart{Number: a, ID: "x"}}})
	tx.end()
	if err != nil || held[0] == nil {
		t.Fatalf("A six days after its erased conversation, under Reg F: %v, %v; want held", held, err)
	}

	hist, err := OpenCallStartsFile(home).History(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range hist {
		got = append(got, fmt.Sprintf("%s %s hashed=%t", s.Campaign, s.At.Sub(t0), s.Hash != ""))
	}
	if want := "[old -960h0m0s hashed=true mon 0s hashed=true tue 24h0m0s hashed=false]"; fmt.Sprint(got) != want {
		t.Errorf("history of A: %v, want %s", got, want)
	}
	conv, err := OpenCallStartsFile(home).Conversations(ctx, a)
	if err != nil || len(conv) != 2 || conv[0].Key != "d1" || conv[1].Key != "d3" {
		t.Errorf("conversations of A: %+v, %v; want d1 and d3", conv, err)
	}

	// The key taken away: nothing that reads the starts goes on.
	if err := os.Remove(filepath.Join(home, ErasureKeyFileName)); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCallStartsFile(home).History(ctx, b); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("history without the key: %v, want %v", err, ErrErasureKeyMissing)
	}
	if _, err := OpenCallStartsFile(home).Counted(ctx, t0); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("counting without the key: %v, want %v", err, ErrErasureKeyMissing)
	}
	if _, err := OpenCallStartsFile(home).Conversed(ctx, t0); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("the conversations without the key: %v, want %v", err, ErrErasureKeyMissing)
	}
	wed := Files{Dir: filepath.Join(t.TempDir(), "wed")}
	unlockWed := lockStore(t, wed)
	defer unlockWed()
	j2, st2, err := wed.OpenJournal(ctx, JournalOptions{Pressure: &Pressure{Limits: DefaultPressure, Starts: OpenCallStartsFile(home), Campaign: "wed", Now: clock}})
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	defer j2.Close()
	if err := j2.Append(Record{Type: TypeIntent, Agent: "A", Phone: b, Attempt: 1}); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("an intent to B without the key: %v, want %v", err, ErrErasureKeyMissing)
	}
}

// TestCallStartsEraseKilled: an erase killed before or after any of its
// replaces leaves each file old or new, A still held by its start in
// whichever form, and the erase run again ends where an erase never
// killed does.
func TestCallStartsEraseKilled(t *testing.T) {
	ctx := context.Background()
	const a = "+14155550100"
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	killed := errors.New("killed")
	// An erase never killed, with its key's hash of A written as HASH.
	ref := func() map[string][]byte {
		home, keys := erasedStartsHome(t, t0)
		if _, err := OpenCallStartsFile(home).Erase(ctx, []string{a}, EraseOptions{Keys: keys}); err != nil {
			t.Fatal(err)
		}
		out := readStartsFiles(t, home)
		for name, data := range out {
			out[name] = bytes.ReplaceAll(data, []byte(keys.Hashes(a)[0]), []byte("HASH"))
		}
		return out
	}()
	for _, when := range []string{"before", "after"} {
		for k := range 4 {
			t.Run(fmt.Sprintf("%s replace %d", when, k+1), func(t *testing.T) {
				home, keys := erasedStartsHome(t, t0)
				calls := 0
				hook := func() error {
					calls++
					if calls == k+1 {
						return killed
					}
					return nil
				}
				opts := EraseOptions{Keys: keys}
				if when == "before" {
					opts.BeforeReplace = hook
				} else {
					opts.AfterReplace = hook
				}
				if _, err := OpenCallStartsFile(home).Erase(ctx, []string{a}, opts); !errors.Is(err, killed) {
					t.Fatalf("erase: %v, want killed", err)
				}
				tx, err := OpenCallStartsFile(home).begin()
				if err != nil {
					t.Fatal(err)
				}
				held, err := tx.check(DefaultPressure, 0, t0.Add(time.Hour), []pressureOp{{start: CallStart{Number: a, ID: "x"}}})
				tx.end()
				if err != nil || held[0] == nil {
					t.Fatalf("A an hour after its start, the erase killed: %v, %v; want held", held, err)
				}
				if _, err := OpenCallStartsFile(home).Erase(ctx, []string{a}, EraseOptions{Keys: keys}); err != nil {
					t.Fatal(err)
				}
				for name, data := range readStartsFiles(t, home) {
					if data = bytes.ReplaceAll(data, []byte(keys.Hashes(a)[0]), []byte("HASH")); !bytes.Equal(data, ref[name]) {
						t.Errorf("%s after the erase run again:\n%s\nwant\n%s", name, data, ref[name])
					}
				}
			})
		}
	}
}

// TestPostgresCallStartsErase: in the database, erasing A turns its
// start and conversation rows into hashed ones (an empty number, the hash in
// hash and start_id), B's untouched; an erase killed before its commit
// changes nothing, and a second erase changes nothing either; another
// campaign is held back from A by the hashed start and, under Reg F, by
// the hashed conversation; History and Conversations find A's by hash;
// with the key taken away, counting fails closed.
func TestPostgresCallStartsErase(t *testing.T) {
	ctx := context.Background()
	const a, b = "+14155550100", "+14155550199"
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	now := t0
	clock := func() time.Time { return now }
	url := pgURL(t)
	journal := func(campaign string, after time.Duration) *Journal {
		t.Helper()
		s := openPostgres(t, url, campaign, 0, 1)
		unlock := lockStore(t, s)
		j, st, err := s.OpenJournal(ctx, JournalOptions{Pressure: &Pressure{Limits: DefaultPressure, Starts: pgStarts(s), Campaign: campaign, AfterConversation: after, Now: clock}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			j.Close()
			st.Close()
			unlock()
		})
		return j
	}
	mon := journal("mon", 0)
	for _, n := range []string{a, b} {
		if err := mon.Append(Record{Type: TypeIntent, Agent: "A", Phone: n, Attempt: 1}); err != nil {
			t.Fatal(err)
		}
	}
	pg := openPostgres(t, url, "eraser", 0, 1)
	cs := pgStarts(pg)
	for i, n := range []string{a, b} {
		if _, err := cs.Converse(ctx, Conversation{Number: n, At: t0, Campaign: "mon", Key: fmt.Sprint("d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	erasure, err := pg.Erasure()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := erasure.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows := func(query string) int {
		t.Helper()
		var n int
		if err := pg.pool.QueryRow(ctx, query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const holdingA = `SELECT (SELECT count(*) FROM callrun_call_starts WHERE number LIKE '%4155550100%' OR start_id LIKE '%4155550100%') + (SELECT count(*) FROM callrun_conversations WHERE number LIKE '%4155550100%')`
	const hashed = `SELECT (SELECT count(*) FROM callrun_call_starts WHERE hash <> '' AND number = '') + (SELECT count(*) FROM callrun_conversations WHERE hash <> '' AND number = '')`
	killed := errors.New("killed")
	if _, err := cs.Erase(ctx, []string{a}, EraseOptions{Keys: keys, BeforeReplace: func() error { return killed }}); !errors.Is(err, killed) {
		t.Fatalf("an erase killed before its commit: %v", err)
	}
	if n := rows(holdingA); n != 2 {
		t.Fatalf("after an erase killed before its commit, %d rows hold A, want its 2", n)
	}
	if n, err := cs.Erase(ctx, []string{a}, EraseOptions{Keys: keys}); err != nil || n != (PressureEraseCounts{Starts: 1, Conversations: 1}) {
		t.Fatalf("erase: %+v, %v; want A's start and conversation", n, err)
	}
	if n, err := cs.Erase(ctx, []string{a}, EraseOptions{Keys: keys}); err != nil || n != (PressureEraseCounts{}) {
		t.Fatalf("a second erase: %+v, %v; want nothing", n, err)
	}
	if n, h := rows(holdingA), rows(hashed); n != 0 || h != 2 {
		t.Errorf("after the erase, %d rows hold A and %d are hashed; want 0 and 2", n, h)
	}
	if n := rows(`SELECT count(*) FROM callrun_call_starts WHERE number = '+14155550199'`); n != 1 {
		t.Errorf("B's starts: %d rows, want 1", n)
	}

	tue := journal("tue", RegFAfterConversation)
	now = t0.Add(2 * time.Hour)
	var h *HeldError
	if err := tue.Append(Record{Type: TypeIntent, Agent: "A", Phone: a, Attempt: 1}); !errors.As(err, &h) || !h.Until.Equal(t0.Add(7*24*time.Hour)) {
		t.Fatalf("A two hours after its erased start and conversation, under Reg F: %v, want held until %s", err, t0.Add(7*24*time.Hour))
	}
	wed := journal("wed", 0)
	if err := wed.Append(Record{Type: TypeIntent, Agent: "A", Phone: a, Attempt: 1}); !errors.As(err, &h) || !h.Until.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("A two hours after its erased start: %v, want held until %s", err, t0.Add(24*time.Hour))
	}
	now = t0.Add(24 * time.Hour)
	if err := wed.Append(Record{Type: TypeIntent, Agent: "A", Phone: a, Attempt: 1}); err != nil {
		t.Fatalf("A a day after its erased start: %v, want free", err)
	}
	hist, err := cs.History(ctx, a)
	if err != nil || len(hist) != 2 || hist[0].Hash == "" || hist[0].Campaign != "mon" || hist[1].Number != a {
		t.Errorf("history of A: %+v, %v; want mon's hashed start, then wed's", hist, err)
	}
	conv, err := cs.Conversations(ctx, a)
	if err != nil || len(conv) != 1 || conv[0].Hash == "" {
		t.Errorf("conversations of A: %+v, %v; want the hashed one", conv, err)
	}
	counted, err := cs.Counted(ctx, t0.Add(-time.Hour))
	if err != nil || len(counted[keys.Hashes(a)[0]]) != 1 {
		t.Errorf("Counted: %v, %v; want A's erased start under its hash", counted, err)
	}

	if _, err := pg.pool.Exec(ctx, `DELETE FROM callrun_keys`); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.Counted(ctx, t0); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("counting without the key: %v, want %v", err, ErrErasureKeyMissing)
	}
	if err := wed.Append(Record{Type: TypeIntent, Agent: "A", Phone: b, Attempt: 1}); !errors.Is(err, ErrErasureKeyMissing) {
		t.Errorf("an intent to B without the key: %v, want %v", err, ErrErasureKeyMissing)
	}
}
