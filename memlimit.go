package main

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// memoryLimit is the soft limit on the Go runtime's memory that callrun
// starts with: the garbage collector works harder near it instead of
// letting the heap double. About 10 MiB of it is the runtime's own
// (metadata, stacks, fragmentation), and the process peaks at about the
// limit plus the 16 MiB of its binary's mapped pages. A million-contact
// run keeps about 29 MB of heap live (the journal state's index, 19 MB;
// the dedupe set, 7.5 MB; package data such as phone-number metadata,
// 3 MB). A larger campaign raises the limit as it goes (watchMemoryLimit),
// rather than leave the collector running without pause. GOMEMLIMIT in
// the environment replaces all this.
const memoryLimit = 44 << 20

// setMemoryLimit sets memoryLimit unless GOMEMLIMIT is set, and returns
// whether it did.
func setMemoryLimit() bool {
	if os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetMemoryLimit(memoryLimit)
	return true
}

// liftMemoryLimit removes the limit, for commands whose memory grows with
// their work and that nobody sized (the sandbox keeps every call), unless
// GOMEMLIMIT is set.
func liftMemoryLimit() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(math.MaxInt64)
	}
}

// watchMemoryLimit raises the memory limit whenever the live heap passes
// three quarters of it, to one and a half times the live heap, until ctx
// ends: the collector keeps room to work in, so a campaign bigger than
// memoryLimit was sized for slows down no more than a smaller one. It
// never lowers the limit.
func watchMemoryLimit(ctx context.Context, every time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		live := int64(sample[0].Value.Uint64())
		if limit := debug.SetMemoryLimit(-1); live > limit/4*3 {
			debug.SetMemoryLimit(live / 2 * 3)
		}
	}
}
