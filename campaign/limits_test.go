package campaign

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// padTo returns yaml with comment lines appended up to exactly n bytes.
func padTo(t *testing.T, yaml string, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(yaml)
	line := "# " + strings.Repeat("x", 77) + "\n"
	for b.Len()+len(line) <= n {
		b.WriteString(line)
	}
	if rest := n - b.Len(); rest > 0 {
		b.WriteString("#" + strings.Repeat("y", rest-2) + "\n")
	}
	if b.Len() != n {
		t.Fatalf("test bug: padded to %d, want %d", b.Len(), n)
	}
	return b.String()
}

// loadProblems loads path and returns its problems, one string each.
func loadProblems(t *testing.T, path string, opts LoadOptions) []string {
	t.Helper()
	_, err := Load(path, opts)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("Load: %v, want a FileError", err)
	}
	var out []string
	for _, p := range fe.Problems {
		out = append(out, p.String())
	}
	return out
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestCampaignFileSizeLimit(t *testing.T) {
	opts := LoadOptions{Getenv: testEnv}
	path := writeCampaign(t, padTo(t, goodCampaign, MaxCampaignFileSize))
	if _, err := Load(path, opts); err != nil {
		t.Fatalf("a campaign file of exactly %d bytes: %v", MaxCampaignFileSize, err)
	}

	os.WriteFile(path, []byte(padTo(t, goodCampaign, MaxCampaignFileSize+1)), 0o644)
	got := loadProblems(t, path, opts)
	want := path + ": the campaign file is 4.0 MiB (4194305 bytes), larger than 4 MiB, the most callrun reads of one"
	if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], "contacts belong in CSV sheets") {
		t.Errorf("problems %q, want one starting %q", got, want)
	}

	// A file of 100 MiB (sparse where the file system can) is refused
	// without being read.
	if err := os.Truncate(path, 100<<20); err != nil {
		t.Fatal(err)
	}
	var big []string
	if n := allocated(func() { big = loadProblems(t, path, opts) }); n > 1<<20 {
		t.Errorf("refusing a 100 MiB campaign file allocated %d bytes", n)
	}
	if len(big) != 1 || !strings.Contains(big[0], "the campaign file is 100 MiB (104857600 bytes), larger than 4 MiB") {
		t.Errorf("problems %q", big)
	}
}

// TestCampaignFileSizeLimitNotRegular: a campaign file that is not a
// regular file (a device here; a named pipe in fifo_test.go), whose size
// is not known beforehand and which may never end, is refused before it
// is opened.
func TestCampaignFileSizeLimitNotRegular(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	var got []string
	if n := allocated(func() { got = loadProblems(t, "/dev/zero", LoadOptions{}) }); n > 1<<20 {
		t.Errorf("refusing /dev/zero as a campaign file allocated %d bytes", n)
	}
	if len(got) != 1 || got[0] != "/dev/zero: is a device, not a regular file; give the campaign's .yaml file" {
		t.Errorf("problems %q", got)
	}
}

func TestPromptSizeLimit(t *testing.T) {
	opts := LoadOptions{Getenv: testEnv}
	path := writeCampaign(t, goodCampaign)
	prompt := filepath.Join(filepath.Dir(path), "prompt.txt")
	if err := os.WriteFile(prompt, []byte(strings.Repeat("p", MaxPromptSize)), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, opts)
	if err != nil {
		t.Fatalf("a prompt file of exactly %d bytes: %v", MaxPromptSize, err)
	}
	if len(f.Agents[0].Prompt) != MaxPromptSize {
		t.Errorf("prompt of %d bytes read", len(f.Agents[0].Prompt))
	}

	for _, size := range []int64{MaxPromptSize + 1, 100 << 20} {
		if err := os.Truncate(prompt, size); err != nil { // sparse past what was written
			t.Fatal(err)
		}
		var got []string
		if n := allocated(func() { got = loadProblems(t, path, opts) }); n > 1<<20 {
			t.Errorf("refusing a prompt file of %d bytes allocated %d bytes", size, n)
		}
		want := path + " line 9, agents[0].prompt_file: prompt file " + prompt + " is "
		if len(got) != 1 || !strings.HasPrefix(got[0], want) || !strings.Contains(got[0], "larger than 256 KiB, the most callrun sends as an agent's prompt (the service does not publish its own limit)") {
			t.Errorf("size %d: problems %q, want one starting %q", size, got, want)
		}
	}

	// An inline prompt, here from a variable, has the same limit.
	inline := strings.Replace(goodCampaign, "prompt_file: prompt.txt", "prompt: ${TEST_PROMPT}", 1)
	os.WriteFile(path, []byte(inline), 0o644)
	for _, tc := range []struct {
		size int
		ok   bool
	}{{MaxPromptSize, true}, {MaxPromptSize + 1, false}} {
		opts.Getenv = env(map[string]string{"TEST_CLIENT_ID": "cid", "TEST_CLIENT_SECRET": "csecret", "TEST_PROMPT": strings.Repeat("q", tc.size)})
		_, err := Load(path, opts)
		if tc.ok {
			if err != nil {
				t.Errorf("an inline prompt of %d bytes: %v", tc.size, err)
			}
			continue
		}
		got := loadProblems(t, path, opts)
		want := path + ` line 9, agents[0].prompt: agent "Spring Promo"'s prompt is 256.0 KiB (262145 bytes), larger than 256 KiB, the most callrun sends as an agent's prompt (the service does not publish its own limit)`
		if len(got) != 1 || got[0] != want {
			t.Errorf("problems %q, want %q", got, want)
		}
	}
}
