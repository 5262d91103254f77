package campaign

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWindowsPathInDoubleQuotes: a path copied from Windows Explorer into
// double quotes is read by YAML as escapes. "C:\Users\..." is refused by
// YAML itself (\U wants eight hex digits), whose own words ("did not find
// expected hexdecimal number") tell a marketing user nothing; "C:\new\tab.csv"
// is read as a line break and a tab, and was reported as a missing file
// whose name printed on two lines. Both say now what to write instead.
func TestWindowsPathInDoubleQuotes(t *testing.T) {
	for _, c := range []struct{ path, want string }{
		{`"C:\Users\me\leads.csv"`, "line 12: did not find expected hexdecimal number; inside double quotes a backslash starts an escape"},
		{`"C:\data\leads.csv"`, "line 12: found unknown escape character; inside double quotes a backslash starts an escape"},
		{`"C:\new\tab.csv"`, `C:\new\tab.csv": no such file, and its path holds a tab, a line break`},
		{`"C:\bob\files\a.csv"`, `line 12, sheets[0].file: sheet "`},
	} {
		bad := strings.Replace(goodCampaign, "  - file: leads.csv", "  - file: "+c.path, 1)
		got := problems(t, bad, LoadOptions{})
		expectProblems(t, got, c.want, `write it in single quotes, 'C:\Users\me\leads.csv'`)
	}
	// A prompt file's path, the same.
	bad := strings.Replace(goodCampaign, "prompt_file: prompt.txt", `prompt_file: "prompts\new.txt"`, 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), `agents[0].prompt_file: prompt file "`, `new.txt": no such file, and its path holds a tab, a line break`, "write it in single quotes")
	// The same path in single quotes, or bare, is a plain missing file.
	for _, p := range []string{`'C:\new\tab.csv'`, `C:\new\tab.csv`} {
		bad := strings.Replace(goodCampaign, "  - file: leads.csv", "  - file: "+p, 1)
		got := problems(t, bad, LoadOptions{})
		expectProblems(t, got, "tab.csv: no such file; check the path")
		for _, g := range got {
			if strings.Contains(g, "single quotes") {
				t.Errorf("%s: %q blames the quotes", p, g)
			}
		}
	}
}

// TestTabIndentSaysUseSpaces: the Tab key in Notepad or TextEdit puts a
// tab where YAML wants spaces; yaml.v3's "found a tab character that
// violates indentation" said what but not what to do.
func TestTabIndentSaysUseSpaces(t *testing.T) {
	for _, bad := range []string{
		strings.Replace(goodCampaign, "    agent: Spring Promo", "\tagent: Spring Promo", 1),
		strings.Replace(goodCampaign, "    prompt_file: prompt.txt", "    prompt: |\n\tHello", 1),
	} {
		expectProblems(t, problems(t, bad, LoadOptions{}), "found a tab character", "YAML indents with spaces only: replace the tab at the start of the line with spaces")
	}
}

// TestCampaignFileNotUTF8NamesLineAndWhatToDo: a campaign file saved by
// Notepad as ANSI (Windows-1252) with an agent named Jürgen was refused
// with yaml.v3's "invalid leading UTF-8 octet": no line, nothing to do.
// A file in UTF-16 with its mark (Notepad's "Unicode") is still read.
func TestCampaignFileNotUTF8NamesLineAndWhatToDo(t *testing.T) {
	bad := strings.Replace(goodCampaign, "  - name: Spring Promo", "  - name: J\xfcrgen", 1)
	bad = strings.Replace(bad, "    agent: Spring Promo", "    agent: J\xfcrgen", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), "campaign.yml line 8: the file is not UTF-8 text", "save it as UTF-8 (Notepad: File > Save As, Encoding: UTF-8")
	// UTF-16 little-endian with its byte order mark.
	u16 := []byte{0xff, 0xfe}
	for _, r := range goodCampaign {
		u16 = append(u16, byte(r), byte(r>>8))
	}
	if _, err := Load(writeCampaign(t, string(u16)), LoadOptions{Getenv: testEnv}); err != nil {
		t.Errorf("UTF-16 campaign file: %v", err)
	}
}

// TestPromptFileEncodings: a prompt file saved by Notepad as ANSI was
// read as it was, and JSON sent each accented letter to the service as
// U+FFFD ("J\ufffdrgen"), the user's words changed without a word; one
// saved as "Unicode" (UTF-16) was sent with a NUL byte after every
// letter. ANSI is refused, naming the line; UTF-16 is decoded, and
// UTF-8's byte order mark dropped.
func TestPromptFileEncodings(t *testing.T) {
	path := writeCampaign(t, goodCampaign)
	prompt := filepath.Join(filepath.Dir(path), "prompt.txt")
	os.WriteFile(prompt, []byte("Hallo,\nhier ist J\xfcrgen.\n"), 0o600)
	_, err := Load(path, LoadOptions{Getenv: testEnv})
	if err == nil || !strings.Contains(err.Error(), "agents[0].prompt_file: prompt file ") || !strings.Contains(err.Error(), "prompt.txt is not UTF-8 text (line 2;") {
		t.Errorf("ANSI prompt: %v", err)
	}
	for name, body := range map[string][]byte{
		"UTF-16": append([]byte{0xff, 0xfe}, []byte("H\x00i\x00 \x00J\x00\xfc\x00r\x00g\x00e\x00n\x00")...),
		"BOM":    []byte("\xef\xbb\xbfHi J\xc3\xbcrgen"),
	} {
		os.WriteFile(prompt, body, 0o600)
		f, err := Load(path, LoadOptions{Getenv: testEnv})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := f.Agents[0].Prompt; got != "Hi J\u00fcrgen" {
			t.Errorf("%s: prompt %q, want %q", name, got, "Hi J\u00fcrgen")
		}
	}
}
