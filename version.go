package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// version overrides the version that --version prints, when set at build
// time with -ldflags "-X main.version=v1.2.3" (make build and make dist
// set it from VERSION). Without it the build information says: a build
// from a tagged commit, or `go install github.com/callrun/callrun@v1.2.3`,
// knows its version.
var version = ""

// versionString is what `callrun --version` prints after "callrun
// version ": the version, then the commit and the Go toolchain that built
// the binary and the system it is for, all from the build information Go
// embeds in every binary. It names no local path: a reproducible build
// prints the same from the same commit.
func versionString(override string, info *debug.BuildInfo, ok bool) string {
	v, commit, goVersion := override, "unknown", runtime.Version()
	if ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = info.Main.Version
		}
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
				if len(commit) > 12 {
					commit = commit[:12]
				}
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if modified && commit != "unknown" {
			commit += ", modified"
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
	}
	if v == "" {
		v = "dev"
	}
	return fmt.Sprintf("%s (commit %s, %s, %s/%s)", v, commit, goVersion, runtime.GOOS, runtime.GOARCH)
}

// buildVersion is versionString for this binary.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionString(version, info, ok)
}
