package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	pages, checked, problems, err := checkLinks(".")
	if err != nil {
		t.Fatal(err)
	}
	if pages < 3 {
		t.Fatalf("found only %d Markdown files", pages)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if checked == 0 {
		t.Fatal("no relative link checked")
	}
}

// checkLinks checks every relative link of the Markdown files under root:
// the file or directory it names exists under root, and an #anchor names
// a heading of the page it points to. It returns how many pages and links
// it checked and what is wrong, each naming the page and line.
func checkLinks(root string) (pages, checked int, problems []string, _ error) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		return 0, 0, nil, err
	}
	for _, page := range files {
		text, err := os.ReadFile(page)
		if err != nil {
			return 0, 0, nil, err
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
					if rel, err := filepath.Rel(root, dest); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
						problems = append(problems, fmt.Sprintf("%s line %d: link %q: %s is outside %s", page, i+1, target, dest, root))
						continue
					}
					if _, err := os.Stat(dest); err != nil {
						problems = append(problems, fmt.Sprintf("%s line %d: link %q: %s does not exist", page, i+1, target, dest))
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				ok, err := hasAnchor(dest, anchor)
				if err != nil {
					return 0, 0, nil, err
				}
				if !ok {
					problems = append(problems, fmt.Sprintf("%s line %d: link %q: %s has no heading whose anchor is #%s", page, i+1, target, dest, anchor))
				}
			}
		}
	}
	return len(files), checked, problems, nil
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
func hasAnchor(path, anchor string) (bool, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	for _, l := range outsideCode(string(text)) {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		if slug(strings.TrimLeft(l, "#")) == anchor {
			return true, nil
		}
	}
	return false, nil
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

// docBlock is a fenced code block of a Markdown page.
type docBlock struct {
	page   string // the page, relative to the repository's root
	line   int    // the line of its opening fence
	lang   string // the fence's language: sh, text, yaml, ...
	body   string
	notRun string // the reason of a <!-- not-run: reason --> just before it
	marked bool   // whether such a marker is there (the reason may be empty)
}

// notRunMarker is the comment that keeps a command block from being run,
// with the reason: the live service, a system service manager, ...
var notRunMarker = regexp.MustCompile(`^<!--\s*not-run:(.*?)-->$`)

// docBlocks returns the fenced code blocks of a Markdown text, a list
// item's indentation taken off their lines.
func docBlocks(page, text string) []docBlock {
	var blocks []docBlock
	lines := strings.Split(text, "\n")
	last := "" // the last line that was not blank, outside blocks
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		trimmed := strings.TrimSpace(l)
		if !strings.HasPrefix(trimmed, "```") {
			if trimmed != "" {
				last = trimmed
			}
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		b := docBlock{page: page, line: i + 1, lang: strings.Fields(trimmed[3:] + " x")[0]}
		if b.lang == "x" {
			b.lang = ""
		}
		if m := notRunMarker.FindStringSubmatch(last); m != nil {
			b.marked, b.notRun = true, strings.TrimSpace(m[1])
		}
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(strings.TrimSpace(lines[i]), "```"); i++ {
			body = append(body, strings.TrimPrefix(lines[i], strings.Repeat(" ", indent)))
		}
		b.body = strings.Join(body, "\n") + "\n"
		blocks = append(blocks, b)
		last = ""
	}
	return blocks
}

// commandPages are the pages whose command blocks are run: README.md and
// docs/*.md.
func commandPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	return append([]string{"README.md"}, pages...)
}

// Languages of the fenced blocks: the shells the blocks are run with, and
// the command languages that cannot run here (a block of one of them must
// be marked not-run).
var (
	blockShells    = map[string]string{"sh": "sh", "bash": "bash"}
	foreignScripts = []string{"powershell", "pwsh", "ps1", "bat", "cmd", "console", "shell", "zsh", "fish"}
)

// synopsisSign is what a line of a text block that starts with callrun
// shows to be a synopsis rather than a command: [optional], a|b, ... or a
// PLACEHOLDER.
var synopsisSign = regexp.MustCompile(`\[|\||\.\.\.|\b[A-Z][A-Z_]{2,}\b`)

// TestDocsBlocksAreMarked: every fenced block of README.md and docs/*.md
// says its language; a command block in a language that cannot run here
// (PowerShell) is marked not-run with a reason; a marker stands only
// before a command block; and a text block holds no callrun command that
// is not a synopsis (those belong in sh blocks, which TestDocsBlocksRun
// runs).
func TestDocsBlocksAreMarked(t *testing.T) {
	commands := 0
	for _, page := range commandPages(t) {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range docBlocks(page, string(text)) {
			command := blockShells[b.lang] != "" || slices.Contains(foreignScripts, b.lang)
			switch {
			case b.lang == "":
				t.Errorf("%s line %d: a block without a language: write sh for commands (they are run by TestDocsBlocksRun), text for output and synopses, yaml, ...", page, b.line)
			case b.marked && !command:
				t.Errorf("%s line %d: not-run marks a %s block, which is never run", page, b.line, b.lang)
			case b.marked && b.notRun == "":
				t.Errorf("%s line %d: <!-- not-run: --> without a reason", page, b.line)
			case command && !b.marked && blockShells[b.lang] == "":
				t.Errorf("%s line %d: a %s block cannot run here: mark it <!-- not-run: the reason -->, or write it in sh", page, b.line, b.lang)
			}
			if command {
				commands++
			}
			if b.lang != "text" {
				continue
			}
			for n, l := range strings.Split(b.body, "\n") {
				if (strings.HasPrefix(l, "callrun ") || strings.HasPrefix(l, "./callrun ")) && !synopsisSign.MatchString(l) {
					t.Errorf("%s line %d: %q reads as a command: put it in an sh block, which is run", page, b.line+1+n, l)
				}
			}
		}
	}
	if commands == 0 {
		t.Fatal("no command block found")
	}
}

func TestDocBlocks(t *testing.T) {
	text := "# T\n\n<!-- not-run: the live service -->\n```sh\ncallrun run x.yaml\n```\n\n- item:\n\n  ```sh\n  echo a\n    echo b\n  ```\n```\nbare\n```\n"
	got := docBlocks("p.md", text)
	want := []docBlock{
		{page: "p.md", line: 4, lang: "sh", body: "callrun run x.yaml\n", notRun: "the live service", marked: true},
		{page: "p.md", line: 10, lang: "sh", body: "echo a\n  echo b\n"},
		{page: "p.md", line: 14, lang: "", body: "bare\n"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("docBlocks:\n got %+v\nwant %+v", got, want)
	}
}

// TestOutcomesExampleHoldsTheWalkthrough: the comment of
// examples/outcomes/campaign.yaml gives the walkthrough of
// docs/outcomes.md as written there, where TestDocsBlocksRun runs it.
func TestOutcomesExampleHoldsTheWalkthrough(t *testing.T) {
	text, err := os.ReadFile(filepath.Join("docs", "outcomes.md"))
	if err != nil {
		t.Fatal(err)
	}
	var walk string
	for _, b := range docBlocks("docs/outcomes.md", string(text)) {
		if b.lang == "sh" && strings.Contains(b.body, "callrun listen examples/outcomes/campaign.yaml &") {
			walk = b.body
		}
	}
	if walk == "" {
		t.Fatal("docs/outcomes.md has no sh block that starts callrun listen examples/outcomes/campaign.yaml")
	}
	yml, err := os.ReadFile(filepath.Join("examples", "outcomes", "campaign.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var comment strings.Builder
	for l := range strings.Lines(string(yml)) {
		if rest, ok := strings.CutPrefix(l, "#   "); ok {
			comment.WriteString(rest)
		}
	}
	if comment.String() != walk {
		t.Errorf("examples/outcomes/campaign.yaml's comment gives\n%s\ndocs/outcomes.md's walkthrough is\n%s", comment.String(), walk)
	}
}
