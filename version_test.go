package main

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionString: --version's line comes from the build information a
// plain `go build` or `go install` embeds; -X main.version overrides the
// version alone.
func TestVersionString(t *testing.T) {
	stamped := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/callrun/callrun", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "dbef50ca7d5e6ad1c027649801edc334bd4223d2"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
	dirty := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/callrun/callrun", Version: "v0.0.0-20261125174634-dbef50ca7d5e+dirty"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "dbef50ca7d5e6ad1c027649801edc334bd4223d2"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	unstamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/callrun/callrun", Version: "(devel)"}}
	sys := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name, override string
		info           *debug.BuildInfo
		ok             bool
		want           string
	}{
		{"a tagged commit", "", stamped, true, "v1.4.0 (commit dbef50ca7d5e, go1.26.8, " + sys + ")"},
		{"-X wins over the tag", "v1.4.1-rc1", stamped, true, "v1.4.1-rc1 (commit dbef50ca7d5e, go1.26.8, " + sys + ")"},
		{"uncommitted changes", "", dirty, true, "v0.0.0-20261125174634-dbef50ca7d5e+dirty (commit dbef50ca7d5e, modified, go1.26.8, " + sys + ")"},
		{"no version control", "", unstamped, true, "dev (commit unknown, go1.26.8, " + sys + ")"},
		{"no build information", "", nil, false, "dev (commit unknown, " + runtime.Version() + ", " + sys + ")"},
	} {
		if got := versionString(tc.override, tc.info, tc.ok); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := appOutput(t, "--version"); !strings.HasPrefix(got, "callrun version ") || !strings.Contains(got, runtime.Version()) {
		t.Errorf("--version printed %q; want the version line with %s", got, runtime.Version())
	}
}
