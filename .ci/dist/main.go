// Command dist writes callrun's release archives: for each system and
// architecture, callrun_<version>_<os>_<arch>.tar.gz (.zip for Windows)
// holding the binary, README.md, LICENSE, the docs and the examples (so
// that the README's first command runs in the unpacked folder and every
// link of its pages works there), and a
// SHA256SUMS file over them all. `make dist VERSION=v1.2.3` runs it from the repository's root:
//
//	go run ./.ci/dist -version v1.2.3 -out dist
//
// The archives are reproducible: the same commit built with the same Go
// gives the same bytes. The binaries are built with -trimpath (no local
// path), without cgo, for the baseline CPU of each architecture, with the
// commit stamped from git (-buildvcs=true) and the version set with -X;
// the archives' entries have fixed owners, modes and order, and the
// commit's time as their time (SOURCE_DATE_EPOCH overrides it).
//
// It lives under .ci/ because it is release tooling, not part of callrun:
// the go command's ./... skips directories whose name starts with a dot,
// so it is neither built nor tested with the module's packages (CI vets
// it by name), and `go install github.com/callrun/callrun@...` never
// sees it.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Targets are the systems and architectures a release is built for.
var Targets = []string{"darwin/amd64", "darwin/arm64", "linux/amd64", "linux/arm64", "windows/amd64", "windows/arm64"}

// archiveDocs returns the files beside the binary in every archive, with
// "/": the README and the pages it links, the licence, and every file that
// git tracks of examples/ (the pages link to the quickstart, the cron and
// systemd units, the CI workflows, the Kubernetes files, the outcomes
// walkthrough and the marketing team's export, and those use the other
// examples' sheets) and of docs/images (the pages' pictures), so that
// every link works in the unpacked folder; what git does not track there
// (the state a rehearsal left, with its contacts) is never packed.
func archiveDocs() ([]string, error) {
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		return nil, err
	}
	sort.Strings(pages)
	files := []string{"README.md", "LICENSE", "ARCHITECTURE.md"}
	for _, p := range pages {
		files = append(files, filepath.ToSlash(p))
	}
	out, err := exec.Command("git", "ls-files", "-z", "--", "examples", "docs/images").Output()
	if err != nil {
		return nil, fmt.Errorf("listing the examples git tracks: %w", err)
	}
	examples := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	if len(examples) == 0 || examples[0] == "" {
		return nil, errors.New("git tracks no file under examples/ (run from the repository's root)")
	}
	sort.Strings(examples)
	return append(files, examples...), nil
}

// versionRE is what -version accepts: a tag-like version, which becomes
// part of file names.
var versionRE = regexp.MustCompile(`^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$`)

func main() {
	version := flag.String("version", "", "the version the binaries print and the archives are named for (v1.2.3)")
	out := flag.String("out", "dist", "the directory the archives and SHA256SUMS are written to")
	targets := flag.String("targets", strings.Join(Targets, ","), "comma-separated os/arch pairs to build")
	flag.Parse()
	if err := run(*version, *out, strings.Split(*targets, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "dist:", err)
		os.Exit(1)
	}
}

// run builds targets into archives in out, from the module in the current
// directory, and writes SHA256SUMS.
func run(version, out string, targets []string) error {
	if !versionRE.MatchString(version) {
		return fmt.Errorf("-version %q: give a version such as v1.2.3 (make dist VERSION=v1.2.3)", version)
	}
	for _, t := range targets {
		if !slices.Contains(Targets, t) {
			return fmt.Errorf("-targets: %q is none of %s", t, strings.Join(Targets, ", "))
		}
	}
	mtime, err := sourceTime()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	build, err := os.MkdirTemp("", "callrun-dist-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(build)

	sums := map[string]string{}
	for _, t := range targets {
		goos, goarch, _ := strings.Cut(t, "/")
		bin, err := buildBinary(build, version, goos, goarch)
		if err != nil {
			return err
		}
		name, data, err := archive(version, goos, goarch, bin, mtime)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, name), data, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		sums[name] = hex.EncodeToString(sum[:])
		fmt.Fprintf(os.Stderr, "dist: %s\n", filepath.Join(out, name))
	}
	var b strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range sums {
			if !yield(n) {
				return
			}
		}
	}) {
		fmt.Fprintf(&b, "%s  %s\n", sums[name], name) // sha256sum's format: two spaces
	}
	return os.WriteFile(filepath.Join(out, "SHA256SUMS"), []byte(b.String()), 0o644)
}

// sourceTime is the time the archives' entries carry: SOURCE_DATE_EPOCH
// when set (the reproducible-builds convention), else the time of the
// commit checked out.
func sourceTime() (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %v", s, err)
		}
		return time.Unix(n, 0).UTC(), nil
	}
	out, err := exec.Command("git", "log", "-1", "--format=%ct").Output()
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the commit's time with git (%v): build from a clone, or set SOURCE_DATE_EPOCH", err)
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the commit's time %q: %v", out, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

// buildBinary builds callrun for goos/goarch into a directory of its own
// under dir and returns the binary's path.
func buildBinary(dir, version, goos, goarch string) (string, error) {
	bin := filepath.Join(dir, goos+"_"+goarch, exeName(goos))
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=true",
		"-ldflags", "-X main.version="+version, "-o", bin, ".")
	cmd.Env = append(os.Environ(),
		"GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0",
		// The baseline CPU of each architecture, whatever the builder's
		// environment asks: the binary runs on every machine of its kind,
		// and its bytes do not depend on who built it.
		"GOAMD64=v1", "GOARM64=v8.0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building for %s/%s: %v\n%s", goos, goarch, err, stderr.Bytes())
	}
	return bin, nil
}

func exeName(goos string) string {
	if goos == "windows" {
		return "callrun.exe"
	}
	return "callrun"
}

// entry is one file or directory of an archive.
type entry struct {
	name string // inside the archive, with "/"; a directory's ends in "/"
	mode int64
	data []byte
}

// archive returns the name and the bytes of the archive for goos/goarch:
// a directory named like the archive, holding the binary and docs, in
// that order, each directory just before its first file.
func archive(version, goos, goarch, bin string, mtime time.Time) (string, []byte, error) {
	base := fmt.Sprintf("callrun_%s_%s_%s", strings.TrimPrefix(version, "v"), goos, goarch)
	exe, err := os.ReadFile(bin)
	if err != nil {
		return "", nil, err
	}
	files := []entry{{base + "/", 0o755, nil}, {path.Join(base, exeName(goos)), 0o755, exe}}
	docs, err := archiveDocs()
	if err != nil {
		return "", nil, err
	}
	made := map[string]bool{}
	for _, d := range docs {
		b, err := os.ReadFile(filepath.FromSlash(d))
		if err != nil {
			return "", nil, fmt.Errorf("%v (run from the repository's root)", err)
		}
		var dirs []string
		for dir := path.Dir(d); dir != "." && !made[dir]; dir = path.Dir(dir) {
			made[dir] = true
			dirs = append([]string{dir}, dirs...)
		}
		for _, dir := range dirs {
			files = append(files, entry{path.Join(base, dir) + "/", 0o755, nil})
		}
		files = append(files, entry{path.Join(base, d), 0o644, b})
	}
	var buf bytes.Buffer
	if goos == "windows" {
		err = writeZip(&buf, files, mtime)
		return base + ".zip", buf.Bytes(), err
	}
	err = writeTarGz(&buf, files, mtime)
	return base + ".tar.gz", buf.Bytes(), err
}

// writeTarGz writes files as a gzipped tar, owned by root (uid and gid
// 0, no names), every entry at mtime.
func writeTarGz(w io.Writer, files []entry, mtime time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.DefaultCompression) // no name, no time in the gzip header
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, f := range files {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.name, Mode: f.mode, Size: int64(len(f.data)), ModTime: mtime, Format: tar.FormatUSTAR}
		if strings.HasSuffix(f.name, "/") {
			h.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), zw.Close())
}

// writeZip writes files as a zip, every entry at mtime.
func writeZip(w io.Writer, files []entry, mtime time.Time) error {
	zw := zip.NewWriter(w)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate, Modified: mtime}
		mode := os.FileMode(f.mode)
		if strings.HasSuffix(f.name, "/") {
			h.Method, mode = zip.Store, mode|os.ModeDir
		}
		h.SetMode(mode)
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.data); err != nil {
			return err
		}
	}
	return zw.Close()
}
