package store

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPushKeepsWhatCountsOnAClockAhead: state push on a machine whose
// clock is 60 days ahead of the one that wrote CALLRUN_HOME's call
// starts and conversations copies those of the 30 days before the files'
// latest entry, which still count, as a compaction on that clock keeps
// them (beforeHorizon). Before, it copied those of the 30 days before
// its own clock: none, and the database would let a number called
// yesterday be called again.
func TestPushKeepsWhatCountsOnAClockAhead(t *testing.T) {
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("CALLRUN_HOME", home)
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	right := time.Now().Add(-60 * 24 * time.Hour) // the clock the files were written by
	const x, y, z = "+14155550100", "+14155550101", "+14155550102"
	writeLines(t, home, CallStartsFileName, []CallStart{
		{Number: z, At: right.Add(-40 * 24 * time.Hour), ID: "files z 1", Campaign: "spring", Agent: "A"},
		{Number: y, At: right.Add(-20 * 24 * time.Hour), ID: "files y 1", Campaign: "spring", Agent: "A"},
		{Number: x, At: right.Add(-time.Hour), ID: "files x 1", Campaign: "spring", Agent: "A"},
	})
	writeLines(t, home, ConversationsFileName, []Conversation{
		{Number: z, At: right.Add(-40 * 24 * time.Hour), Campaign: "spring", Key: "z"},
		{Number: x, At: right.Add(-2 * time.Hour), Campaign: "spring", Key: "x"},
	})
	p := openPostgres(t, pgURL(t), "c", 0, 1)
	dir := t.TempDir()
	j, _ := openJournal(t, filepath.Join(dir, JournalFile))
	mustAppend(t, j, intent("a", "+15550001"))
	j.Close()
	unlock := lockStore(t, p)
	out, err := p.PushFiles(ctx, dir, []string{filepath.Join(dir, JournalFile)}, false)
	unlock()
	if err != nil || out.Starts != 2 || out.StartsNew != 2 || out.Conversations != 1 || out.ConversationsNew != 1 {
		t.Fatalf("PushFiles = %+v, %v; want x's and y's starts and x's conversation, not z's of 40 days before", out, err)
	}
	starts, _ := p.CallStarts()
	counted, err := starts.Counted(ctx, time.Time{})
	if err != nil || len(counted[x]) != 1 || len(counted[y]) != 1 || len(counted[z]) != 0 {
		t.Errorf("the database counts %v, %v; want x's and y's starts", counted, err)
	}

	// On the files' own clock, the same: nothing newer is left out, and
	// what a compaction would move is.
	files := OpenCallStartsFile(home)
	recent, err := files.Recent(ctx, right)
	if err != nil || len(recent) != 2 || recent[0].Number != y || recent[1].Number != x {
		t.Errorf("Recent on the files' clock: %+v, %v; want y's and x's", recent, err)
	}
	conversations, err := files.RecentConversations(ctx, right)
	if err != nil || len(conversations) != 1 || conversations[0].Number != x {
		t.Errorf("RecentConversations on the files' clock: %+v, %v; want x's", conversations, err)
	}
}
