package store

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestHolders: each store names the run that holds its lock, and none
// once it is released; asking does not take the lock from anyone.
func TestHolders(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			s := kind.open(t, "c", 1, 2)
			if h, err := s.Holders(context.Background()); err != nil || len(h) != 0 {
				t.Fatalf("Holders before any run: %v, %v", h, err)
			}
			unlock := lockStore(t, s)
			h, err := s.Holders(context.Background())
			if err != nil || len(h) != 1 || h[0].PID != os.Getpid() || time.Since(h[0].Since) > time.Minute {
				t.Fatalf("Holders while this process holds the lock: %+v, %v", h, err)
			}
			if kind.name == "postgres" && (h[0].Index != 1 || h[0].Count != 2) {
				t.Errorf("Holders names shard %d/%d, want 1/2", h[0].Index, h[0].Count)
			}
			if _, err := kind.open(t, "c", 1, 2).Lock(context.Background()); err == nil {
				t.Errorf("a second run took the lock after Holders asked")
			}
			unlock()
			if h, err := s.Holders(context.Background()); err != nil || len(h) != 0 {
				t.Errorf("Holders after the run: %v, %v", h, err)
			}
		})
	}
}
