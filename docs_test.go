package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown inline link's target: ](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks checks every relative link of the repository's Markdown
// files: the file or directory it names exists, and an #anchor names a
// heading of the page it points to.
func TestDocsLinks(t *testing.T) {
	var pages []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 3 {
		t.Fatalf("found only %d Markdown files: %v", len(pages), pages)
	}
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range outsideCode(string(text)) {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				dest := page
				if path != "" {
					dest = filepath.Join(filepath.Dir(page), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s line %d: link %q: %s does not exist", page, i+1, target, dest)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if !hasAnchor(t, dest, anchor) {
					t.Errorf("%s line %d: link %q: %s has no heading whose anchor is #%s", page, i+1, target, dest, anchor)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

// outsideCode returns the lines of a Markdown text, with the lines inside
// fenced code blocks blanked (their brackets are code, not links).
func outsideCode(text string) []string {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			lines[i] = ""
			continue
		}
		if in {
			lines[i] = ""
		}
	}
	return lines
}

// hasAnchor reports whether a heading of the Markdown file at path has
// anchor as the anchor GitHub gives it.
func hasAnchor(t *testing.T, path, anchor string) bool {
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range outsideCode(string(text)) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		if slug(strings.TrimLeft(l, "#")) == anchor {
			return true
		}
	}
	return false
}

// slug is GitHub's anchor for a heading: lower case, letters, digits,
// hyphens and underscores kept, spaces made hyphens, the rest dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Start from a sheet: `callrun init`":        "start-from-a-sheet-callrun-init",
		"Beyond one machine: PostgreSQL and shards": "beyond-one-machine-postgresql-and-shards",
		"Whom callrun calls, and when":              "whom-callrun-calls-and-when",
		" Exit codes":                               "exit-codes",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
}
