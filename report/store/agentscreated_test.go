package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/callrun/callrun/report/private"
)

// TestFilesRememberAgents: the agents a campaign's runs created are read
// back in the order remembered, by the campaign and by its shards alike,
// from a file of the state directory's mode.
func TestFilesRememberAgents(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	want := []CreatedAgent{{Name: "Sales", ID: "agent_1", At: at, Run: "pid 1 on a"}, {Name: "Sales", ID: "agent_2", At: at.Add(time.Hour), Run: "pid 2 on b, shard 1/2"}}
	if err := (Files{Dir: dir}).RememberAgent(ctx, want[0]); err != nil {
		t.Fatal(err)
	}
	if err := ShardFiles(dir, 1, 2).RememberAgent(ctx, want[1]); err != nil {
		t.Fatal(err)
	}
	for _, s := range []Store{Files{Dir: dir}, ShardFiles(dir, 0, 2)} {
		got, err := s.CreatedAgents(ctx)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s remembers %v (%v), want %v", s, got, err, want)
		}
	}
	fi, err := os.Stat(filepath.Join(dir, AgentsCreatedFile))
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm() != private.FileMode(dir) {
		t.Errorf("%s has mode %v, want %v", AgentsCreatedFile, fi.Mode().Perm(), private.FileMode(dir))
	}
	if got, err := (Files{Dir: t.TempDir()}).CreatedAgents(ctx); err != nil || len(got) != 0 {
		t.Errorf("a new state directory remembers %v (%v), want none", got, err)
	}
}

// TestPGCreatedAgentsMigratesVersion10: a database of version 10 gets
// the table of the agents callrun created, and each campaign reads back
// its own, in the order remembered.
func TestPGCreatedAgentsMigratesVersion10(t *testing.T) {
	ctx := context.Background()
	url, admin := pgMigrated(t)
	if _, err := admin.Exec(ctx, `DROP TABLE callrun_agents_created; UPDATE callrun_schema SET version = 10`); err != nil {
		t.Fatal(err)
	}
	p := openPostgres(t, url, "c", 0, 1)
	var v int
	if err := admin.QueryRow(ctx, `SELECT version FROM callrun_schema`).Scan(&v); err != nil || v != schemaVersion {
		t.Errorf("schema version after opening a version-10 database: %d (%v), want %d", v, err, schemaVersion)
	}
	at := time.Date(2026, 11, 29, 9, 0, 0, 123456000, time.UTC)
	want := []CreatedAgent{{Name: "Sales", ID: "agent_1", At: at, Run: "pid 1 on a"}, {Name: "Support", ID: "agent_2", At: at.Add(time.Minute), Run: "pid 2 on b"}}
	for _, a := range want {
		if err := p.RememberAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	other := openPostgres(t, url, "other", 0, 1)
	if err := other.RememberAgent(ctx, CreatedAgent{Name: "Sales", ID: "agent_3", At: at, Run: "pid 3 on c"}); err != nil {
		t.Fatal(err)
	}
	got, err := openPostgres(t, url, "c", 1, 2).CreatedAgents(ctx)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("campaign c (read by a shard) remembers %v (%v), want %v", got, err, want)
	}
}

// TestPushCopiesTheCreatedAgents: state push copies the agents a state
// directory remembers into the database, each once: pushed again, or
// remembered there already, an agent is not copied again.
func TestPushCopiesTheCreatedAgents(t *testing.T) {
	ctx := context.Background()
	t.Setenv("CALLRUN_HOME", filepath.Join(t.TempDir(), "home"))
	dir := t.TempDir()
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	want := []CreatedAgent{{Name: "Sales", ID: "agent_1", At: at, Run: "pid 1 on a"}, {Name: "Support", ID: "agent_2", At: at.Add(time.Hour), Run: "pid 2 on a"}}
	for _, a := range want {
		if err := (Files{Dir: dir}).RememberAgent(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	j, _ := openJournal(t, filepath.Join(dir, JournalFile))
	mustAppend(t, j, intent("a", "+15550001"))
	j.Close()
	p := openPostgres(t, pgURL(t), "c", 0, 1)
	if err := p.RememberAgent(ctx, want[0]); err != nil {
		t.Fatal(err)
	}
	for i, merge := range []bool{false, true} {
		os.Remove(filepath.Join(dir, PushedFile))
		unlock := lockStore(t, p)
		out, err := p.PushFiles(ctx, dir, []string{filepath.Join(dir, JournalFile)}, merge)
		unlock()
		if err != nil || out.Agents != 2 || out.AgentsNew != 1-i {
			t.Errorf("push %d: %+v, %v; want 2 agents, %d new", i+1, out, err, 1-i)
		}
	}
	got, err := p.CreatedAgents(ctx)
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the database remembers %v (%v), want %v", got, err, want)
	}
}
