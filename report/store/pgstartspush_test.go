package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// TestPostgresCopyCallStarts: the call starts of a machine's file within
// 30 days go into the database, a given-back one given back; a run on
// the database then holds the number called from the files; a second
// copy adds nothing, and a start given back in the files since is given
// back in the database.
func TestPostgresCopyCallStarts(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 10, 0, 0, 123456789, time.UTC)
	clock := func() time.Time { return now }
	dir := t.TempDir()
	const x, y, z = "+14155550100", "+14155550101", "+14155550102"
	writeLines(t, dir, CallStartsFileName, []CallStart{
		{Number: z, At: now.Add(-40 * 24 * time.Hour), ID: "files z 1", Campaign: "spring", Agent: "A"},
		{Number: x, At: now.Add(-time.Hour), ID: "files x 1", Campaign: "spring", Agent: "A"},
		{Number: y, At: now.Add(-2 * time.Hour), ID: "files y 1", Campaign: "spring", Agent: "A"},
		{Number: y, ID: "files y 1", Released: true},
	})
	files := OpenCallStartsFile(dir)
	recent, err := files.Recent(ctx, now)
	if err != nil || len(recent) != 2 || recent[0].Number != x || recent[1].Number != y || !recent[1].Released {
		t.Fatalf("Recent: %+v, %v; want x counted and y given back, not z of 40 days ago", recent, err)
	}
	url := pgURL(t)
	pg := openPostgres(t, url, "spring", 0, 1)
	if added, released, err := pg.CopyCallStarts(ctx, recent); err != nil || added != 2 || released != 0 {
		t.Fatalf("CopyCallStarts: added %d, released %d, %v; want 2 added", added, released, err)
	}
	db := pgStarts(pg)
	history := func(n string) []CallStart {
		h, err := db.History(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	if h := history(x); len(h) != 1 || h[0].Released || !h[0].At.Equal(now.Add(-time.Hour).Truncate(time.Microsecond)) || h[0].Campaign != "spring" || h[0].ID != "files x 1" {
		t.Errorf("the database's history of x: %+v", h)
	}
	if h := history(y); len(h) != 1 || !h[0].Released {
		t.Errorf("the database's history of y: %+v, want its start given back", h)
	}
	if h := history(z); len(h) != 0 {
		t.Errorf("the database's history of z: %+v, want nothing older than 30 days", h)
	}
	// A campaign on the database holds x, and calls y.
	second := openPostgres(t, url, "autumn", 0, 1)
	unlock := lockStore(t, second)
	j, st, err := second.OpenJournal(ctx, JournalOptions{Pressure: &Pressure{Limits: DefaultPressure, Starts: pgStarts(second), Campaign: "autumn", Now: clock}})
	if err != nil {
		t.Fatal(err)
	}
	var h *HeldError
	if err := j.Append(Record{Type: TypeIntent, Agent: "B", Phone: x, Attempt: 1}); !errors.As(err, &h) || !h.Until.Equal(now.Add(23*time.Hour).Truncate(time.Microsecond)) {
		t.Errorf("x on the database, called from the files an hour ago: %v, want held for 23 hours", err)
	}
	if err := j.Append(Record{Type: TypeIntent, Agent: "B", Phone: y, Attempt: 1}); err != nil {
		t.Errorf("y, whose call from the files was given back: %v", err)
	}
	j.Close()
	st.Close()
	unlock()
	// Copied again: nothing added. Given back in the files since: given
	// back in the database.
	if added, released, err := pg.CopyCallStarts(ctx, recent); err != nil || added != 0 || released != 0 {
		t.Errorf("a second copy: added %d, released %d, %v; want nothing", added, released, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, CallStartsFileName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"number":"` + x + `","at":"0001-01-01T00:00:00Z","id":"files x 1","released":true}` + "\n")
	f.Close()
	if recent, err = files.Recent(ctx, now); err != nil {
		t.Fatal(err)
	}
	before := history(y)
	if added, released, err := pg.CopyCallStarts(ctx, recent); err != nil || added != 0 || released != 1 {
		t.Errorf("a copy after x's start was given back: added %d, released %d, %v; want 1 given back", added, released, err)
	}
	if h := history(x); len(h) != 1 || !h[0].Released {
		t.Errorf("the database's history of x: %+v, want its one start given back", h)
	}
	if after := history(y); !reflect.DeepEqual(after, before) {
		t.Errorf("y's history changed: %+v, was %+v", after, before)
	}
}

// TestPostgresCopyConversations: the conversations beside a machine's
// call starts within 30 days go into the database, where a campaign with
// Reg F's rule then holds the number; a second copy adds nothing.
func TestPostgresCopyConversations(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	const x, z = "+14155550100", "+14155550102"
	files := OpenCallStartsFile(t.TempDir())
	for _, c := range []Conversation{
		{Number: z, At: now.Add(-40 * 24 * time.Hour), Campaign: "spring", Key: "old"},
		{Number: x, At: now.Add(-2 * 24 * time.Hour), Campaign: "spring", Key: "answered"},
	} {
		if _, err := files.Converse(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	conversations, err := files.RecentConversations(ctx, now)
	if err != nil || len(conversations) != 1 || conversations[0].Number != x {
		t.Fatalf("RecentConversations: %+v, %v; want x's of 2 days ago, not z's of 40", conversations, err)
	}
	url := pgURL(t)
	pg := openPostgres(t, url, "spring", 0, 1)
	for i, want := range []int{1, 0} {
		if added, err := pg.CopyConversations(ctx, conversations); err != nil || added != want {
			t.Fatalf("copy %d: added %d, %v; want %d", i+1, added, err, want)
		}
	}
	second := openPostgres(t, url, "autumn", 0, 1)
	unlock := lockStore(t, second)
	defer unlock()
	j, st, err := second.OpenJournal(ctx, JournalOptions{Pressure: &Pressure{Limits: DefaultPressure, Starts: pgStarts(second), Campaign: "autumn",
		AfterConversation: RegFAfterConversation, Now: func() time.Time { return now }}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer j.Close()
	var h *HeldError
	if err := j.Append(Record{Type: TypeIntent, Agent: "B", Phone: x, Attempt: 1}); !errors.As(err, &h) || !h.Until.Equal(now.Add(5*24*time.Hour)) {
		t.Errorf("x, heard answered on the machine 2 days ago: %v, want held for 5 more days", err)
	}
	if err := j.Append(Record{Type: TypeIntent, Agent: "B", Phone: z, Attempt: 1}); err != nil {
		t.Errorf("z, whose conversation was 40 days ago and not copied: %v", err)
	}
}
