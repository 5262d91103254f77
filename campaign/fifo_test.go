//go:build unix

package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadRefusesANamedPipe: the campaign file names a named pipe as its
// sheet, its suppression file and its prompt file, and Load says so for
// each without blocking (opening a pipe blocks until something writes to
// it). The sheet package's TestSheetMustBeARegularFile covers devices.
func TestLoadRefusesANamedPipe(t *testing.T) {
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
	camp := filepath.Join(dir, "campaign.yaml")
	os.WriteFile(camp, []byte(`name: fifo
agents:
  - name: A
    prompt_file: leads.csv
sheets:
  - file: leads.csv
    agent: A
    fields: {phone_number: Phone}
suppress: [leads.csv]
`), 0o644)
	done := make(chan error, 1)
	go func() { _, err := Load(camp, LoadOptions{Offline: true}); done <- err }()
	select {
	case err := <-done:
		if err == nil || strings.Count(err.Error(), "named pipe") < 3 {
			t.Errorf("Load = %v, want the FIFO refused as sheet, suppression file and prompt file", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Load: still blocked after 20s")
	}
}

// TestLoadRefusesACampaignFileThatIsANamedPipe: a named pipe given as the
// campaign file itself, with nothing writing to it, is refused at once
// rather than opened (which would block plan and listen until killed).
func TestLoadRefusesACampaignFileThatIsANamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "campaign.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no named pipes here:", err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(fifo, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
	done := make(chan error, 1)
	go func() { _, err := Load(fifo, LoadOptions{Offline: true}); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "named pipe (FIFO)") {
			t.Errorf("Load(a FIFO) = %v, want it refused, naming the file", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Load: still blocked after 20s")
	}
}
