package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Journals in files do not see each other: a state directory keeps to
// one split of its campaign, so that no split calls whom another called.
func TestFilesKeepToOneSplit(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "state")

	u1, err := ShardFiles(dir, 1, 4).Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := ShardFiles(dir, 2, 4).Lock(ctx)
	if err != nil {
		t.Fatalf("shard 2/4 beside 1/4: %v", err)
	}
	if _, err := ShardFiles(dir, 1, 4).Lock(ctx); !errors.Is(err, ErrLocked) {
		t.Errorf("shard 1/4 twice: %v; want ErrLocked", err)
	}
	if _, err := (Files{Dir: dir}).Lock(ctx); !errors.Is(err, ErrShardMismatch) {
		t.Errorf("the whole campaign beside its shards: %v; want ErrShardMismatch", err)
	}
	if _, err := ShardFiles(dir, 0, 2).Lock(ctx); !errors.Is(err, ErrShardMismatch) {
		t.Errorf("shard 0/2 beside shards of 4: %v; want ErrShardMismatch", err)
	}
	u1()
	u2()
	// Once they ended, their directories still say how the campaign was
	// split: reading or running it otherwise is refused.
	if _, err := (Files{Dir: dir}).ReadState(ctx); !errors.Is(err, ErrShardMismatch) {
		t.Errorf("ReadState of the whole campaign: %v; want ErrShardMismatch", err)
	}
	if _, err := ShardFiles(dir, 0, 2).Lock(ctx); !errors.Is(err, ErrShardMismatch) {
		t.Errorf("shard 0/2 after shards of 4: %v; want ErrShardMismatch", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "shard-0-of-2")); !os.IsNotExist(err) {
		t.Errorf("a refused shard left its directory behind: %v", err)
	}
	u, err := ShardFiles(dir, 3, 4).Lock(ctx)
	if err != nil {
		t.Fatalf("shard 3/4 later: %v", err)
	}
	u()

	// And the other way: a campaign run whole refuses shards.
	whole := filepath.Join(t.TempDir(), "state")
	fs := Files{Dir: whole}
	unlock, err := fs.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ShardFiles(whole, 0, 2).Lock(ctx); !errors.Is(err, ErrLocked) {
		t.Errorf("a shard while the whole campaign runs: %v; want ErrLocked", err)
	}
	j, s, err := fs.OpenJournal(ctx, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, j, intent("a", "+15550001"))
	j.Close()
	s.Close()
	unlock()
	if _, err := ShardFiles(whole, 0, 2).Lock(ctx); !errors.Is(err, ErrShardMismatch) {
		t.Errorf("a shard after the whole campaign ran: %v; want ErrShardMismatch", err)
	}
}
