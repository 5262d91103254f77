package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// writeLines writes entries as the JSON lines of the file name in dir.
func writeLines[T any](t testing.TB, dir, name string, entries []T) {
	t.Helper()
	var buf []byte
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		buf = append(append(buf, line...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, name), buf, 0o600); err != nil {
		t.Fatal(err)
	}
}

// lineCount counts the lines of the file name in dir.
func lineCount(t *testing.T, dir, name string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

// startsView is what a fresh reader of the call starts in dir sees:
// every start with whether it counts, from History's scan, and the
// starts a run counts.
func startsView(t *testing.T, dir string) ([]CallStart, map[string][]time.Time) {
	t.Helper()
	l := OpenCallStartsFile(dir)
	all, err := l.scan(func(CallStart) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	counted, err := l.Counted(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return all, counted
}

// agedStarts is a file of call starts over a fake clock: 50 starts from
// 40 days before now, one of them given back, 5 from the last days, one
// given back, then an old start written late (a clock that was behind)
// and the release of an old one: they stay in the file.
func agedStarts(now time.Time) []CallStart {
	var ss []CallStart
	for i := range 50 {
		ss = append(ss, CallStart{Number: fmt.Sprintf("+1415555%04d", i), At: now.Add(-40*24*time.Hour + time.Duration(i)*time.Minute), ID: fmt.Sprintf("old %d", i), Campaign: "spring", Agent: "A"})
	}
	ss = append(ss, CallStart{Number: "+14155550007", ID: "old 7", Released: true})
	for i := range 5 {
		ss = append(ss, CallStart{Number: fmt.Sprintf("+1415555%04d", i), At: now.Add(-time.Duration(5-i) * 24 * time.Hour), ID: fmt.Sprintf("new %d", i), Campaign: "autumn", Agent: "B"})
	}
	ss = append(ss,
		CallStart{Number: "+14155550002", ID: "new 2", Released: true},
		CallStart{Number: "+14155550099", At: now.Add(-31 * 24 * time.Hour), ID: "late", Campaign: "summer", Agent: "C"},
		CallStart{Number: "+14155550003", ID: "old 3", Released: true},
	)
	return ss
}

// TestCompactMovesOldLines: over a fake clock, the leading starts older
// than 30 days (and the release among them) move to the archive, the
// recent ones stay, a run counts exactly what it counted before, and
// history still shows every start, released as before. Too little to
// move, or already moved, moves nothing.
func TestCompactMovesOldLines(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	writeLines(t, dir, CallStartsFileName, agedStarts(now))
	allBefore, countedBefore := startsView(t, dir)
	if len(allBefore) != 56 {
		t.Fatalf("%d starts before, want 56", len(allBefore))
	}

	l := OpenCallStartsFile(dir)
	if moved, _, err := l.Compact(now); err != nil || moved != 0 || lineCount(t, dir, CallStartsArchiveName) != 0 {
		t.Fatalf("under 1 MiB of old lines: moved %d, %v; want nothing moved", moved, err)
	}
	l.compactMin = 0
	moved, _, err := l.Compact(now)
	if err != nil || moved != 50 {
		t.Fatalf("Compact: moved %d, %v; want the 50 leading old starts", moved, err)
	}
	if a, f := lineCount(t, dir, CallStartsArchiveName), lineCount(t, dir, CallStartsFileName); a != 51 || f != 8 {
		t.Errorf("archive %d lines, file %d; want 51 (50 starts, a release) and 8", a, f)
	}
	allAfter, countedAfter := startsView(t, dir)
	if !reflect.DeepEqual(allAfter, allBefore) {
		t.Errorf("history after compaction:\n got %v\nwant %v", allAfter, allBefore)
	}
	if !reflect.DeepEqual(countedAfter, countedBefore) {
		t.Errorf("counted after compaction: %v, want %v", countedAfter, countedBefore)
	}
	// The compacting reader's own memory is as a fresh reader's.
	if got, err := l.Counted(ctx, time.Time{}); err != nil || !reflect.DeepEqual(got, countedBefore) {
		t.Errorf("the compacting process counts %v, %v; want %v", got, err, countedBefore)
	}
	h, err := l.History(ctx, "+14155550003")
	if err != nil || len(h) != 2 || !h[0].Released || h[0].Campaign != "spring" || h[1].Released || h[1].Campaign != "autumn" {
		t.Errorf("history of a number called 40 days ago (given back since) and 2 days ago: %+v, %v", h, err)
	}
	if moved, _, err := l.Compact(now); err != nil || moved != 0 {
		t.Errorf("a second compaction: moved %d, %v; want nothing", moved, err)
	}
	// 30 days on, with no start since, nothing moves: the file's own
	// latest start is as new as ever, and a clock a month ahead (a run
	// compacts before it checks its clock) must not move what still
	// counts by the right one (TestRunPressureCompactionWithAClockAhead
	// in campaign).
	if moved, _, err := l.Compact(now.Add(StartsHorizon)); err != nil || moved != 0 || lineCount(t, dir, CallStartsFileName) != 8 {
		t.Errorf("30 days later, nothing newer: moved %d, %v, %d lines left; want none moved", moved, err, lineCount(t, dir, CallStartsFileName))
	}
	if all, _ := startsView(t, dir); !reflect.DeepEqual(all, allBefore) {
		t.Errorf("history after the second compaction:\n got %v\nwant %v", all, allBefore)
	}
}

// TestCompactStoppedBetweenSteps: a compaction stopped after the archive
// was written and before the file was replaced (as by a crash) loses
// nothing and double-counts nothing: runs count as before, history lists
// each start once. The next compaction, finding a torn line at the
// archive's end as well, finishes the move; history still lists each
// start once.
func TestCompactStoppedBetweenSteps(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	writeLines(t, dir, CallStartsFileName, agedStarts(now))
	file := filepath.Join(dir, CallStartsFileName)
	before, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	allBefore, countedBefore := startsView(t, dir)

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
	if a := lineCount(t, dir, CallStartsArchiveName); a != 51 {
		t.Fatalf("archive has %d lines, want the 51 moved", a)
	}
	all, counted := startsView(t, dir)
	if !reflect.DeepEqual(all, allBefore) || !reflect.DeepEqual(counted, countedBefore) {
		t.Errorf("after the stop:\nhistory %v\n   want %v\ncounted %v\n   want %v", all, allBefore, counted, countedBefore)
	}
	if got, err := l.Counted(context.Background(), time.Time{}); err != nil || !reflect.DeepEqual(got, countedBefore) {
		t.Errorf("the stopped process counts %v, %v; want %v", got, err, countedBefore)
	}
	// A killed compaction's torn line and temporary file.
	a, err := os.OpenFile(filepath.Join(dir, CallStartsArchiveName), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteString(`{"number":"+1415555`)
	a.Close()
	tmp := filepath.Join(dir, "."+CallStartsFileName+".123.tmp")
	if err := os.WriteFile(tmp, []byte("half"), 0o600); err != nil {
		t.Fatal(err)
	}

	again := OpenCallStartsFile(dir)
	again.compactMin = 0
	if moved, _, err := again.Compact(now); err != nil || moved != 50 {
		t.Fatalf("the next compaction: moved %d, %v", moved, err)
	}
	if a, f := lineCount(t, dir, CallStartsArchiveName), lineCount(t, dir, CallStartsFileName); a != 102 || f != 8 {
		t.Errorf("archive %d lines, file %d; want 102 (the moved lines twice, the torn one cut) and 8", a, f)
	}
	if _, err := os.Stat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the killed compaction's temporary file is still there (%v)", err)
	}
	all, counted = startsView(t, dir)
	if !reflect.DeepEqual(all, allBefore) || !reflect.DeepEqual(counted, countedBefore) {
		t.Errorf("after the second compaction:\nhistory %v\n   want %v\ncounted %v\n   want %v", all, allBefore, counted, countedBefore)
	}
}

// countStart counts a start to number at now through l, as a journal's
// batch does, and reports whether it was held.
func countStart(t testing.TB, l *CallStartsFile, now time.Time, number, id string) bool {
	tx, err := l.begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.end()
	held, err := tx.check(DefaultPressure, 0, now, []pressureOp{{start: CallStart{Number: number, ID: id, Campaign: "c", Agent: "A"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.commit(); err != nil {
		t.Fatal(err)
	}
	return held[0] != nil
}

// TestCompactUnderAReader: a process that read the file before another
// compacted it, and that other appended past where the first stopped
// reading, reads the new file from its start: it counts what a fresh
// reader counts, and holds a number the other called.
func TestCompactUnderAReader(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	writeLines(t, dir, CallStartsFileName, agedStarts(now))
	a := OpenCallStartsFile(dir)
	if _, err := a.Counted(ctx, time.Time{}); err != nil {
		t.Fatal(err)
	}
	read := a.starts.off
	b := OpenCallStartsFile(dir)
	b.compactMin = 0
	if moved, _, err := b.Compact(now); err != nil || moved != 50 {
		t.Fatalf("Compact: %d, %v", moved, err)
	}
	for i := 0; ; i++ {
		if countStart(t, b, now, fmt.Sprintf("+1212555%04d", i), fmt.Sprint("b ", i)) {
			t.Fatal("a new number held")
		}
		if fi, err := os.Stat(filepath.Join(dir, CallStartsFileName)); err != nil || fi.Size() > read+100 {
			break
		}
	}
	_, want := startsView(t, dir)
	if got, err := a.Counted(ctx, time.Time{}); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("the process that read before the compaction counts\n%v, %v\nwant\n%v", got, err, want)
	}
	if !countStart(t, a, now, "+12125550000", "a 0") {
		t.Error("a number the compacting process called was not held")
	}
}

// TestCompactWhileAnotherCounts: one process counts a start a (fake) day
// for 200 days while another compacts, as a run's start would, as often
// as it can: nothing either counts is lost or counted twice, and the
// counting process counts what a fresh reader does.
func TestCompactWhileAnotherCounts(t *testing.T) {
	dir := t.TempDir()
	t0 := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	const days = 200
	var day atomic.Int64
	var wg sync.WaitGroup
	done := make(chan struct{})
	var compactions atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			c := OpenCallStartsFile(dir)
			c.compactMin = 0
			moved, _, err := c.Compact(t0.Add(time.Duration(day.Load()) * 24 * time.Hour))
			if err != nil {
				t.Error(err)
				return
			}
			if moved > 0 {
				compactions.Add(1)
			}
		}
	}()
	a := OpenCallStartsFile(dir)
	for d := range days {
		day.Store(int64(d))
		now := t0.Add(time.Duration(d) * 24 * time.Hour)
		if countStart(t, a, now, "+14155550100", fmt.Sprint("day ", d)) {
			t.Fatalf("day %d: held, though called a day before at most", d)
		}
		if d%3 == 0 && !countStart(t, a, now.Add(time.Hour), "+14155550100", fmt.Sprint("again ", d)) {
			t.Fatalf("day %d: a second call the same day was not held", d)
		}
		if countStart(t, a, now, fmt.Sprintf("+1415555%04d", 1000+d), fmt.Sprint("other ", d)) {
			t.Fatalf("day %d: a new number held", d)
		}
	}
	close(done)
	wg.Wait()
	if compactions.Load() == 0 {
		t.Fatal("no compaction moved anything: the test tested nothing")
	}
	all, want := startsView(t, dir)
	if len(all) != 2*days {
		t.Errorf("history has %d starts, want %d", len(all), 2*days)
	}
	seen := map[string]bool{}
	for _, s := range all {
		if seen[s.ID] || s.Released || strings.HasPrefix(s.ID, "again") {
			t.Errorf("history: %+v twice, given back or held", s)
		}
		seen[s.ID] = true
	}
	if got, err := a.Counted(context.Background(), time.Time{}); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("the counting process counts\n%v, %v\nwant\n%v", got, err, want)
	}
	t.Logf("%d compactions moved lines", compactions.Load())
}
