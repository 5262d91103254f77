//go:build unix

package store

import (
	"os"
	"path/filepath"
	"testing"
)

// TestHomeKnowsTheErasureFiles: a CALLRUN_HOME open to other users that
// holds only the erasure key, or only the erased set, is callrun's, and
// Home closes it.
func TestHomeKnowsTheErasureFiles(t *testing.T) {
	for _, name := range []string{ErasureKeyFileName, ErasedFileName} {
		home := filepath.Join(t.TempDir(), "home")
		if err := os.Mkdir(home, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(home, 0o777); err != nil {
			t.Fatal(err)
		}
		t.Setenv("CALLRUN_HOME", home)
		if _, err := Home(); err != nil {
			t.Fatalf("Home holding only %s: %v", name, err)
		}
		if fi, err := os.Stat(home); err != nil || fi.Mode().Perm() != 0o700 {
			t.Errorf("Home holding only %s: mode %v, %v; want it closed to 0700", name, fi.Mode().Perm(), err)
		}
	}
}
