package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/run"
)

func BenchmarkZZRetainInProcess(b *testing.B) {
	dir, _ := writeEraseStore(b, 1_000_000, 100*24*time.Hour)
	os.Setenv("CALLRUN_HOME", filepath.Join(dir, "home"))
	b.ResetTimer()
	for range b.N {
		if _, err := run.Retain(context.Background(), nolog, run.RetainOptions{Path: filepath.Join(dir, "c.yaml"), OlderThan: 200 * 24 * time.Hour}, io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}
