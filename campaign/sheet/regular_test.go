//go:build unix

package sheet

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSheetMustBeARegularFile: a named pipe as a sheet is refused before
// it is opened (opening it would block until something writes to it), and
// so is a device such as /dev/zero, which never ends; neither is called an
// Excel workbook.
func TestSheetMustBeARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "leads.csv")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	t.Cleanup(func() {
		// Should an open() be stuck on the pipe, a writer lets it go.
		if w, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	within := func(what string, fn func() error) error {
		t.Helper()
		done := make(chan error, 1)
		go func() { done <- fn() }()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: still blocked after 20s", what)
			return nil
		}
	}

	if err := within("Open(fifo)", func() error { _, err := Open(fifo); return err }); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("Open(a FIFO) = %v, want a named pipe refused", err)
	}
	if err := within("Open(/dev/zero)", func() error { _, err := Open("/dev/zero"); return err }); err == nil ||
		!strings.Contains(err.Error(), "device") || strings.Contains(err.Error(), "Excel") {
		t.Errorf("Open(/dev/zero) = %v, want a device refused", err)
	}
	zeros := filepath.Join(dir, "zeros.csv")
	os.WriteFile(zeros, make([]byte, 4096), 0o644)
	if _, err := Open(zeros); err == nil || strings.Contains(err.Error(), "Excel workbook") || !strings.Contains(err.Error(), "binary") {
		t.Errorf("Open(a file of zeros) = %v, want binary data, not an Excel workbook", err)
	}
}
