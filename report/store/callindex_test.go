package store

import (
	"bytes"
	"context"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestCallIndexFollowsJournal: the index of a journal's call ids answers
// as CallKeysOf does while the journal grows (a line appended after a
// first answer is in the next), leaves a torn last line out until it is
// whole, reads a replaced journal (an erase's) whole again and forgets
// what the old one held, and reads a shard's journal once shards appear.
func TestCallIndexFollowsJournal(t *testing.T) {
	ctx := context.Background()
	const a, b, c = "+14155550101", "+14155550102", "+14155550103"
	dir := t.TempDir()
	s := Files{Dir: dir}
	x := NewCallIndex(s)
	check := func(step string, ids []string, want map[string]Key) {
		t.Helper()
		q := map[string]bool{}
		for _, id := range ids {
			q[id] = true
		}
		got, err := x.Keys(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: Keys(%v) = %v, want %v", step, ids, got, want)
		}
		whole, err := CallKeysOf(ctx, s, q)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !maps.Equal(got, whole) {
			t.Errorf("%s: the index says %v, the whole journal %v", step, got, whole)
		}
	}
	all := []string{"call-a1", `call "b1"`, "call-c1", "call-none"}
	check("no journal yet", all, map[string]Key{})

	unlock := lockStore(t, s)
	j, st := openStoreJournal(t, s)
	mustAppend(t, j, Record{Type: TypeIntent, Agent: "x", Phone: a, Attempt: 1},
		Record{Type: TypeOutcome, Agent: "x", Phone: a, Attempt: 1, Status: OutcomeSent, CallID: "call-a1"})
	check("first read", all, map[string]Key{"call-a1": {Agent: "x", Phone: a}})

	mustAppend(t, j, Record{Type: TypeIntent, Agent: "x", Phone: b, Attempt: 1},
		Record{Type: TypeOutcome, Agent: "x", Phone: b, Attempt: 1, Status: OutcomeSent, CallID: `call "b1"`})
	check("appended", all, map[string]Key{"call-a1": {Agent: "x", Phone: a}, `call "b1"`: {Agent: "x", Phone: b}})
	st.Close()
	j.Close()
	unlock()

	// A torn line (a writer killed mid-line): not read until whole.
	path := s.Journal()
	torn := []byte(`{"t":"outcome","agent":"x","phone":"` + c + `","status":"sent","call_id":"call-c1"`)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(torn); err != nil {
		t.Fatal(err)
	}
	check("torn last line", all, map[string]Key{"call-a1": {Agent: "x", Phone: a}, `call "b1"`: {Agent: "x", Phone: b}})
	if _, err := f.Write([]byte("}\n")); err != nil {
		t.Fatal(err)
	}
	f.Close()
	check("line made whole", all, map[string]Key{"call-a1": {Agent: "x", Phone: a}, `call "b1"`: {Agent: "x", Phone: b}, "call-c1": {Agent: "x", Phone: c}})

	// Replaced whole, as an erase replaces it: only a1's lines are left.
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var kept []byte
	for _, line := range bytes.SplitAfter(old, []byte("\n")) {
		if !bytes.Contains(line, []byte(b)) && !bytes.Contains(line, []byte(c)) {
			kept = append(kept, line...)
		}
	}
	tmp := filepath.Join(dir, "journal.tmp")
	if err := os.WriteFile(tmp, kept, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	check("replaced", all, map[string]Key{"call-a1": {Agent: "x", Phone: a}})
}

// TestCallIndexShards: a campaign run in shards in files has a journal
// in each shard's directory; the index reads each, and a shard's lines
// appended after a first answer are in the next.
func TestCallIndexShards(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	x := NewCallIndex(Files{Dir: dir})
	const a, b = "+14155550101", "+14155550102"
	appendTo := func(index int, phone, callID string) {
		t.Helper()
		sh := ShardFiles(dir, index, 2)
		if err := os.MkdirAll(sh.Dir, 0o700); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(sh.Journal(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(`{"t":"outcome","agent":"x","phone":"` + phone + `","attempt":1,"status":"sent","call_id":"` + callID + `","at":"2026-11-29T09:00:00Z"}` + "\n"); err != nil {
			t.Fatal(err)
		}
	}
	ask := map[string]bool{"call-a": true, "call-b": true}
	appendTo(0, a, "call-a")
	appendTo(1, "+14155550109", "call-other")
	got, err := x.Keys(ctx, ask)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]Key{"call-a": {Agent: "x", Phone: a}}; !maps.Equal(got, want) {
		t.Errorf("two shards: %v, want %v", got, want)
	}
	appendTo(1, b, "call-b")
	if got, err = x.Keys(ctx, ask); err != nil {
		t.Fatal(err)
	}
	if want := map[string]Key{"call-a": {Agent: "x", Phone: a}, "call-b": {Agent: "x", Phone: b}}; !maps.Equal(got, want) {
		t.Errorf("shard 1 appended: %v, want %v", got, want)
	}
	whole, err := CallKeysOf(ctx, Files{Dir: dir}, ask)
	if err != nil || !maps.Equal(got, whole) {
		t.Errorf("the index says %v, the whole journals %v (%v)", got, whole, err)
	}
}
