package store

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// BenchmarkFirstCheckWithArchive is a run's start on the machine of
// BenchmarkCallStarts1M once its 1,000,000 old starts are archived: its
// first batch, with a first attempt of campaign spring-19 (whose 50,000
// starts are all in the archive), read and checked against every start
// of the campaign. build: the archive's index is missing (the first run
// after an upgrade), and is built; indexed: it is there, and the run
// reads its campaign's range of it; no-first-attempt: a batch with no
// first attempt, which reads no archive (a run's first read, as before).
func BenchmarkFirstCheckWithArchive(b *testing.B) {
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	dir := b.TempDir()
	writeBenchStarts(b, filepath.Join(dir, CallStartsFileName), now, 1_000_000, 10_000)
	if moved, _, err := OpenCallStartsFile(dir).Compact(now); err != nil || moved != 1_000_000 {
		b.Fatalf("moved %d, %v", moved, err)
	}
	const campaign, journal = "spring-19", "/home/ops/campaigns/.callrun/spring-19/journal.jsonl"
	check := func(b *testing.B, contact bool) {
		l := OpenCallStartsFile(dir)
		l.Follow(campaign)
		tx, err := l.begin()
		if err != nil {
			b.Fatal(err)
		}
		defer tx.end()
		r := &Record{Type: TypeIntent, Agent: "agent_7f3a", Phone: "+14159999999", N: 0, Attempt: 1}
		op := pressureOp{start: CallStart{Number: r.Phone, ID: startID(journal, r), Campaign: campaign, Agent: r.Agent}}
		if contact {
			op.contact = contactHash(campaign, r.Agent, r.Phone, strconv.Itoa(r.N))
		}
		held, err := tx.checkFor(&Pressure{Campaign: campaign}, 0, now, []pressureOp{op})
		if err != nil || len(held) != 0 {
			b.Fatalf("held %v, %v", held, err)
		}
		// One of the campaign's archived contacts is refused.
		if contact {
			if _, found, err := l.archivedStart(campaign, contactHash(campaign, "agent_7f3a", "+14150999999", "999999"), true); err != nil || !found {
				b.Fatalf("an archived contact of %s not found: %v", campaign, err)
			}
		}
	}
	b.Run("build", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			os.Remove(filepath.Join(dir, ArchiveContactsName))
			b.StartTimer()
			check(b, true)
		}
	})
	b.Run("indexed", func(b *testing.B) {
		for b.Loop() {
			check(b, true)
		}
	})
	b.Run("no-first-attempt", func(b *testing.B) {
		for b.Loop() {
			check(b, false)
		}
	})
}
