package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestWatchMemoryLimitRaisesIt: a live heap past three quarters of the
// limit raises the limit, so that the collector keeps room to work; it is
// never lowered.
func TestWatchMemoryLimitRaisesIt(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)

	debug.SetMemoryLimit(16 << 20)
	live := make([][]byte, 0, 64)
	for range 64 { // 32 MiB live, past the 16 MiB limit
		live = append(live, make([]byte, 512<<10))
	}
	runtime.GC()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { watchMemoryLimit(ctx, 5*time.Millisecond); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for debug.SetMemoryLimit(-1) < 40<<20 {
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB with 32 MiB live, after 10 s", debug.SetMemoryLimit(-1)>>20)
		}
		time.Sleep(5 * time.Millisecond)
	}
	raised := debug.SetMemoryLimit(-1)
	runtime.KeepAlive(live)
	live = nil
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if now := debug.SetMemoryLimit(-1); now < raised {
		t.Errorf("the limit went down from %d to %d MiB", raised>>20, now>>20)
	}
	cancel()
	<-done
}
