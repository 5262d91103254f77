package store

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// agedConversations is a file of conversations over a fake clock: 50 from 40
// days before now, 5 from the last days (the latest with +14155550004,
// a day ago), then an old one written late (a clock that was behind): it
// stays in the file.
func agedConversations(now time.Time) []Conversation {
	var cs []Conversation
	for i := range 50 {
		cs = append(cs, Conversation{Number: fmt.Sprintf("+1415555%04d", i), At: now.Add(-40*24*time.Hour + time.Duration(i)*time.Minute), Campaign: "spring", Key: fmt.Sprint("old ", i)})
	}
	for i := range 5 {
		cs = append(cs, Conversation{Number: fmt.Sprintf("+1415555%04d", i), At: now.Add(-time.Duration(5-i) * 24 * time.Hour), Campaign: "autumn", Key: fmt.Sprint("new ", i)})
	}
	return append(cs, Conversation{Number: "+14155550099", At: now.Add(-31 * 24 * time.Hour), Campaign: "summer", Key: "late"})
}

// talksView is what a fresh reader of the conversations in dir sees:
// every conversation, as history and state push read them, and the latest
// of each number a campaign holds.
func talksView(t *testing.T, dir string) ([]Conversation, map[string]time.Time) {
	t.Helper()
	l := OpenCallStartsFile(dir)
	all, err := l.RecentConversations(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	latest, err := l.Conversed(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return all, latest
}

// heldByTalk checks a start to number at now through l as a reg_f
// campaign's batch does, without counting it, and reports whether a
// conversation held it.
func heldByTalk(t *testing.T, l *CallStartsFile, now time.Time, number string) bool {
	t.Helper()
	tx, err := l.begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.end()
	held, err := tx.check(nil, RegFAfterConversation, now, []pressureOp{{start: CallStart{Number: number, ID: "check " + number, Campaign: "c", Agent: "A"}}})
	if err != nil {
		t.Fatal(err)
	}
	var h *HeldError
	return errors.As(held[0], &h) && !h.Conversation.IsZero()
}

// TestCompactMovesOldConversations: over a fake clock, the leading
// conversations older than 30 days move to their archive, the recent
// ones stay, a reg_f campaign holds what it held before, and history and
// state push still read every conversation once. Too little to move, or
// already moved, moves nothing.
func TestCompactMovesOldConversations(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	writeLines(t, dir, ConversationsFileName, agedConversations(now))
	allBefore, latestBefore := talksView(t, dir)
	if len(allBefore) != 56 || len(latestBefore) != 5 {
		t.Fatalf("%d conversations, %d numbers held before; want 56 and 5", len(allBefore), len(latestBefore))
	}

	l := OpenCallStartsFile(dir)
	if starts, conversations, err := l.Compact(now); err != nil || starts != 0 || conversations != 0 || lineCount(t, dir, ConversationsArchiveName) != 0 {
		t.Fatalf("under 1 MiB of old lines: moved %d, %d, %v; want nothing moved", starts, conversations, err)
	}
	l.compactMin = 0
	if starts, conversations, err := l.Compact(now); err != nil || starts != 0 || conversations != 50 {
		t.Fatalf("Compact: moved %d starts, %d conversations, %v; want the 50 leading old conversations", starts, conversations, err)
	}
	if a, f := lineCount(t, dir, ConversationsArchiveName), lineCount(t, dir, ConversationsFileName); a != 50 || f != 6 {
		t.Errorf("archive %d lines, file %d; want 50 and 6", a, f)
	}
	allAfter, latestAfter := talksView(t, dir)
	if !reflect.DeepEqual(allAfter, allBefore) {
		t.Errorf("conversations after compaction:\n got %v\nwant %v", allAfter, allBefore)
	}
	if !reflect.DeepEqual(latestAfter, latestBefore) {
		t.Errorf("held after compaction: %v, want %v", latestAfter, latestBefore)
	}
	if got, err := l.Conversed(ctx, time.Time{}); err != nil || !reflect.DeepEqual(got, latestBefore) {
		t.Errorf("the compacting process holds %v, %v; want %v", got, err, latestBefore)
	}
	h, err := l.Conversations(ctx, "+14155550003")
	if err != nil || len(h) != 2 || h[0].Campaign != "spring" || h[1].Campaign != "autumn" {
		t.Errorf("history of a number conversedAt to 40 days ago and 2 days ago: %+v, %v", h, err)
	}
	if starts, conversations, err := l.Compact(now); err != nil || starts != 0 || conversations != 0 {
		t.Errorf("a second compaction: moved %d, %d, %v; want nothing", starts, conversations, err)
	}
	// 30 days on, with no conversation since, nothing moves (see
	// TestCompactMovesOldLines).
	if _, conversations, err := l.Compact(now.Add(StartsHorizon)); err != nil || conversations != 0 || lineCount(t, dir, ConversationsFileName) != 6 {
		t.Errorf("30 days later, nothing newer: moved %d, %v, %d lines left; want none moved", conversations, err, lineCount(t, dir, ConversationsFileName))
	}
	if all, _ := talksView(t, dir); !reflect.DeepEqual(all, allBefore) {
		t.Errorf("conversations after the second compaction:\n got %v\nwant %v", all, allBefore)
	}
}

// TestCompactConversationsStoppedBetweenSteps: a compaction stopped after
// the archive was written and before the conversations file was replaced
// (as by a crash) loses nothing and counts nothing twice: campaigns hold
// as before, history lists each conversation once. The next compaction
// finishes the move, with the lines in the archive twice; history still
// lists each once.
func TestCompactConversationsStoppedBetweenSteps(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	writeLines(t, dir, ConversationsFileName, agedConversations(now))
	file := filepath.Join(dir, ConversationsFileName)
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	allBefore, latestBefore := talksView(t, dir)

	l := OpenCallStartsFile(dir)
	l.compactMin = 0
	crash := errors.New("killed")
	l.beforeReplace = func() error { return crash }
	if _, _, err := l.Compact(now); !errors.Is(err, crash) {
		t.Fatalf("Compact: %v, want it stopped between its steps", err)
	}
	if after, err := os.ReadFile(file); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the file changed though the compaction stopped before replacing it (%v)", err)
	}
	if a := lineCount(t, dir, ConversationsArchiveName); a != 50 {
		t.Fatalf("archive has %d lines, want the 50 moved", a)
	}
	all, latest := talksView(t, dir)
	if !reflect.DeepEqual(all, allBefore) || !reflect.DeepEqual(latest, latestBefore) {
		t.Errorf("after the stop:\nhistory %v\n   want %v\nheld %v\nwant %v", all, allBefore, latest, latestBefore)
	}
	if !heldByTalk(t, l, now, "+14155550004") || heldByTalk(t, l, now, "+14155550049") {
		t.Error("the stopped process does not hold the number conversedAt to a day ago alone")
	}

	again := OpenCallStartsFile(dir)
	again.compactMin = 0
	if _, conversations, err := again.Compact(now); err != nil || conversations != 50 {
		t.Fatalf("the next compaction: moved %d, %v", conversations, err)
	}
	if a, f := lineCount(t, dir, ConversationsArchiveName), lineCount(t, dir, ConversationsFileName); a != 100 || f != 6 {
		t.Errorf("archive %d lines, file %d; want 100 (the moved lines twice) and 6", a, f)
	}
	all, latest = talksView(t, dir)
	if !reflect.DeepEqual(all, allBefore) || !reflect.DeepEqual(latest, latestBefore) {
		t.Errorf("after the second compaction:\nhistory %v\n   want %v\nheld %v\nwant %v", all, allBefore, latest, latestBefore)
	}
}

// TestCompactConversationsUnderAReader: a process that read the
// conversations before another compacted them, and that other recorded
// conversations past where the first stopped reading, reads the new file
// from its start: a reg_f check in it holds a number the other conversedAt to
// just after the compaction, and one conversedAt to before it.
func TestCompactConversationsUnderAReader(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	writeLines(t, dir, ConversationsFileName, agedConversations(now))
	a := OpenCallStartsFile(dir)
	if _, err := a.Conversed(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	read := a.conversations.lines.off
	b := OpenCallStartsFile(dir)
	b.compactMin = 0
	if _, conversations, err := b.Compact(now); err != nil || conversations != 50 {
		t.Fatalf("Compact: %d, %v", conversations, err)
	}
	for i := 0; ; i++ {
		c := Conversation{Number: fmt.Sprintf("+1212555%04d", i), At: now.Add(-time.Hour), Campaign: "b", Key: fmt.Sprint("b ", i)}
		if isNew, err := b.Converse(ctx, c); err != nil || !isNew {
			t.Fatalf("recording %+v: %v, %v", c, isNew, err)
		}
		if fi, err := os.Stat(filepath.Join(dir, ConversationsFileName)); err != nil || fi.Size() > read+100 {
			break
		}
	}
	if !heldByTalk(t, a, now, "+12125550000") {
		t.Error("a number conversedAt to just after the compaction was not held")
	}
	if !heldByTalk(t, a, now, "+14155550004") {
		t.Error("a number conversedAt to a day ago was not held")
	}
	if heldByTalk(t, a, now, "+14155550049") {
		t.Error("a number conversedAt to 40 days ago was held")
	}
	_, want := talksView(t, dir)
	if got, err := a.Conversed(ctx, time.Time{}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("the process that read before the compaction holds\n%v, %v\nwant\n%v", got, err, want)
	}
}
