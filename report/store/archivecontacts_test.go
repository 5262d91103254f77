package store

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/report/durable"
)

// TestFirstAttemptCheckedAgainstTheArchive: the starts a compaction moved
// into the archive still stop a first attempt of their campaign's contact
// from a journal that does not record them (a state directory restored
// from a backup older than 15 days), through the archive's index: built
// when missing, read again when the archive grew past it or it is
// damaged. A start the archive also gives back (the service refused the
// call) stops nothing, nor does another campaign's or another
// occurrence's. Erasing a person removes the index, which holds hashes of
// numbers no key protects; the index built again holds no number, and
// the erased person's hashed start breaks nothing.
func TestFirstAttemptCheckedAgainstTheArchive(t *testing.T) {
	ctx := context.Background()
	const a, b, c, d, refused = "+14155550100", "+14155550199", "+14155550111", "+14155550122", "+14155550133"
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	home, keys := erasedStartsHome(t, t0) // campaign old called A (1) and B (2) 40 days ago: archived
	old := t0.Add(-40 * 24 * time.Hour).Format(time.RFC3339Nano)
	appendArchive := func(lines ...string) {
		t.Helper()
		f, err := os.OpenFile(filepath.Join(home, CallStartsArchiveName), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, l := range lines {
			if _, err := f.WriteString(l + "\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	appendArchive(`{"number":"`+refused+`","at":"`+old+`","id":"/s/old/journal.jsonl A `+refused+` 3 1","campaign":"old","agent":"A"}`,
		`{"number":"`+refused+`","at":"`+old+`","id":"/s/old/journal.jsonl A `+refused+` 3 1","released":true}`)
	now := t0
	first := func(campaign, number string, n int) error {
		t.Helper()
		p := &Pressure{Starts: OpenCallStartsFile(home), Campaign: campaign, Now: func() time.Time { return now }} // a new process
		j, st, err := OpenJournal(filepath.Join(t.TempDir(), JournalFile), JournalOptions{Pressure: p})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		defer j.Close()
		return j.Append(Record{Type: TypeIntent, Agent: "A", Phone: number, N: n, Attempt: 1})
	}
	refuses := func(campaign, number string, n int, want bool) {
		t.Helper()
		err := first(campaign, number, n)
		var fe *ForeignStartError
		if got := errors.As(err, &fe); got != want || (!got && err != nil) {
			t.Errorf("campaign %s's first attempt of %s (%d): %v; want refused %v", campaign, number, n, err, want)
		} else if got && !fe.At.Equal(t0.Add(-40*24*time.Hour)) {
			t.Errorf("the stop names a start at %s, want the archived one's %s", fe.At, old)
		}
	}
	index := filepath.Join(home, ArchiveContactsName)
	refuses("old", a, 1, true)
	if _, err := os.Stat(index); err != nil {
		t.Fatalf("the archive's index was not built: %v", err)
	}
	refuses("old", b, 2, true)
	refuses("old", b, 1, false) // another occurrence
	refuses("other", a, 1, false)
	refuses("old", refused, 3, false)
	refuses("old", c, 0, false)

	// The archive grows (another compaction): read past the index.
	appendArchive(`{"number":"` + d + `","at":"` + old + `","id":"/s/old/journal.jsonl A ` + d + ` 0 1","campaign":"old","agent":"A"}`)
	refuses("old", d, 0, true)
	// A damaged index is built again.
	ix, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	ix[len(keyIndexMagic)] ^= 0xff
	if err := os.WriteFile(index, ix, 0o600); err != nil {
		t.Fatal(err)
	}
	refuses("old", a, 1, true)
	refuses("old", d, 0, true)

	// Plan reads the same.
	cs, err := OpenCallStartsFile(home).CampaignStarts(ctx, "old")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		number string
		n      int
		want   bool
	}{{a, 1, true}, {b, 2, true}, {d, 0, true}, {b, 7, false}} { // (the checks above wrote the starts they let through)
		if _, got := cs.Started("old", "A", tc.number, tc.n); got != tc.want {
			t.Errorf("plan: Started(old, A, %s, %d) = %v, want %v", tc.number, tc.n, got, tc.want)
		}
	}

	// Erasing A removes the index; the next run builds it again without A.
	if _, err := OpenCallStartsFile(home).Erase(ctx, []string{a}, EraseOptions{Keys: keys}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(index); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("after erasing A the archive's index is still there: %v", err)
	}
	refuses("old", b, 2, true)
	refuses("old", a, 1, false) // its start names no number any more
	ix, err = os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{a, b, "4155550100"} {
		if bytes.Contains(ix, []byte(n)) {
			t.Errorf("the archive's index holds %s in clear", n)
		}
	}
	k := archiveKey("old", contactHash("old", "A", a, "1"), t0.Add(-40*24*time.Hour).UnixNano())
	if bytes.Contains(ix, k[:]) {
		t.Errorf("the index built after the erase holds A's contact")
	}
	if fi, err := os.Stat(index); err != nil || fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("the archive's index: %v, mode %v; want private", err, fi.Mode())
	}
}

// TestArchiveIndexWriteFails: an index of the archive that cannot be
// written (a full disk), or that a killed run left half written (a
// temporary file), stops no run and lets no archived contact through:
// the check reads the archive itself, and the next run writes the index.
func TestArchiveIndexWriteFails(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	home, _ := erasedStartsHome(t, t0) // campaign old called A (1) 40 days ago: archived
	const a, c = "+14155550100", "+14155550111"
	fail := true
	defer func() { createArchiveContacts = durable.Create }()
	createArchiveContacts = func(path string, perm fs.FileMode) (*durable.File, error) {
		if fail {
			return nil, errors.New("no space left on device")
		}
		return durable.Create(path, perm)
	}
	// A killed run's half-written index, an hour old.
	temp := filepath.Join(home, "."+ArchiveContactsName+".123.tmp")
	if err := os.WriteFile(temp, []byte(keyIndexMagic+"torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(temp, t0, time.Now().Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(home, ArchiveContactsName)
	for _, f := range []bool{true, false} {
		fail = f
		p := &Pressure{Starts: OpenCallStartsFile(home), Campaign: "old", Now: func() time.Time { return t0 }}
		j, st, err := OpenJournal(filepath.Join(t.TempDir(), JournalFile), JournalOptions{Pressure: p})
		if err != nil {
			t.Fatal(err)
		}
		var fe *ForeignStartError
		if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: a, N: 1, Attempt: 1}); !errors.As(err, &fe) {
			t.Errorf("index write failing %v: A's first attempt: %v, want a ForeignStartError", f, err)
		}
		if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: c, N: int(t0.Unix() % 1000), Attempt: 1}); err != nil && f {
			t.Errorf("index write failing: a new contact's first attempt: %v, want written", err)
		}
		j.Close()
		st.Close()
		_, err = os.Stat(index)
		if f && !errors.Is(err, os.ErrNotExist) || !f && err != nil {
			t.Errorf("index write failing %v: the index: %v", f, err)
		}
	}
	if _, err := os.Stat(temp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed run's temporary index is still there: %v", err)
	}
}

// TestEraseRemovesAKilledIndexBuild: a run killed while it wrote the
// archive's index leaves its temporary copy beside it, which holds each
// archived contact's hash (campaign, agent, number and occurrence) under
// no key: a phone number is found from it by trying them all. Erasing a
// person removes it with the index, as the erase of the call starts
// removes a killed rewrite's copy: no file of the store holds the erased
// person's contact any more.
func TestEraseRemovesAKilledIndexBuild(t *testing.T) {
	t0 := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	home, keys := erasedStartsHome(t, t0) // campaign old called A (1) 40 days ago: archived
	const a = "+14155550100"
	k := archiveKey("old", contactHash("old", "A", a, "1"), t0.Add(-40*24*time.Hour).UnixNano())
	// The killed build's copy, written a moment ago (the kill came just
	// before the erase).
	temp := filepath.Join(home, "."+ArchiveContactsName+".123.tmp")
	if err := os.WriteFile(temp, append([]byte(keyIndexMagic), k[:]...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCallStartsFile(home).Erase(context.Background(), []string{a}, EraseOptions{Keys: keys}); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(home)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(home, e.Name()))
		if err != nil {
			continue // a directory
		}
		if bytes.Contains(b, k[:]) {
			t.Errorf("after erasing %s, %s still holds its contact's unkeyed hash", a, e.Name())
		}
	}
}
