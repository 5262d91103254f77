package campaign

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/callrun/callrun/campaign/phone"
)

// suppressCampaign is a campaign of six contacts, rows 2 to 7 of s.csv,
// with the suppress: list given.
func suppressCampaign(suppress string) map[string]string {
	return map[string]string{
		"c.yaml": "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}}]\nsuppress: " + suppress + "\n",
		"s.csv":  "Phone\n+14155550132\n+14155550133\n+14155550134\n+14155550135\n+14155550136\n+14155550137\n",
	}
}

func suppressedRows(cs []Contact) []int {
	var rows []int
	for _, c := range cs {
		if c.Status == Suppressed {
			rows = append(rows, c.Row)
		}
	}
	return rows
}

// TestSuppressionFilesAsTheyAre: the do-not-call lists people keep and
// CRMs export each block the numbers they hold: without a header, of one
// line, with the record id in the first column, with the column named.
func TestSuppressionFilesAsTheyAre(t *testing.T) {
	for _, tc := range []struct {
		name, suppress string
		files          map[string]string
		want           string
	}{
		{"no header", "[dnc.csv]", map[string]string{"dnc.csv": "+14155550132\n(415) 555-0133\n"}, "[2 3]"},
		{"one line", "[dnc.csv]", map[string]string{"dnc.csv": "4155550134\n"}, "[4]"},
		{"record id first", "[crm.csv]", map[string]string{"crm.csv": "Record ID,First Name,Phone Number,Do Not Call\n0035g00000XyZ01AAB,Ann,+1 415 555 0135,true\n0035g00000XyZ02AAB,Bo,+1 415 555 0136,true\n"}, "[5 6]"},
		{"column named", "[{file: crm.csv, column: Mobile}]", map[string]string{"crm.csv": "Id;Phone;Mobile\n1;+14155550199;+14155550137\n2;;\n"}, "[7]"},
		{"both forms", "[dnc.csv, {file: crm.csv, column: Phone}]", map[string]string{"dnc.csv": "Telefon\n+14155550132\n", "crm.csv": "Phone,Id\n+14155550133,9\n"}, "[2 3]"},
		{"Téléphone header", "[dnc.csv]", map[string]string{"dnc.csv": "Nom;Téléphone\nDupont;4155550134\nMartin;\n"}, "[4]"},
		{"Windows-1252 named", "[{file: dnc.csv, encoding: windows-1252}]", map[string]string{"dnc.csv": "Nom;T\xe9l\xe9phone\nM\xfcller;4155550134\n"}, "[4]"},
		{"UTF-16 with its mark", "[dnc.csv]", map[string]string{"dnc.csv": "\xff\xfe4\x001\x005\x005\x005\x005\x000\x001\x003\x004\x00\n\x00"}, "[4]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := suppressCampaign(tc.suppress)
			for k, v := range tc.files {
				files[k] = v
			}
			got := suppressedRows(judgeFiles(t, files))
			if got := fmt.Sprint(got); got != tc.want {
				t.Errorf("rows suppressed %v, want %s", got, tc.want)
			}
		})
	}
}

// TestSuppressionFileThatDoesNotRead: a file most of whose entries are
// no number stops plan and run, naming the file, the column tried and two
// of its cells.
func TestSuppressionFileThatDoesNotRead(t *testing.T) {
	for name, tc := range map[string]struct{ suppress, file string }{
		"ids only":     {"[crm.csv]", "Record ID,Name\n0035g00000XyZ01AAB,Ann\n0035g00000XyZ02AAB,Bo\n0035g00000XyZ03AAB,Cy\n"},
		"wrong column": {"[{file: crm.csv, column: Name}]", "Name,Phone\nAnn,+14155550132\nBo,+14155550133\n"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for k, v := range suppressCampaign(tc.suppress) {
				os.WriteFile(filepath.Join(dir, k), []byte(v), 0o644)
			}
			os.WriteFile(filepath.Join(dir, "crm.csv"), []byte(tc.file), 0o644)
			f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.LoadSuppression(context.Background(), phone.NewNormalizer())
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("LoadSuppression = %v, want a *FileError", err)
			}
			msg := err.Error()
			for _, want := range []string{"crm.csv", "do not read as phone numbers", "row 2:", "row 3:", "suppress[0]"} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q does not say %q", msg, want)
				}
			}
			if !strings.Contains(msg, `column "Record ID"`) && !strings.Contains(msg, `column "Name"`) {
				t.Errorf("error %q does not name the column tried", msg)
			}
		})
	}
}

// TestSuppressionFileWithBlankLines: a do-not-call list of one column with
// a blank line in it loses no number after the blank line (the sheet
// reader's footer rule, one-field lines after a blank one, must not end
// a list of numbers), nor a first line the reader could take for a title.
func TestSuppressionFileWithBlankLines(t *testing.T) {
	files := suppressCampaign("[dnc.csv]")
	files["dnc.csv"] = "+14155550132\n\n+14155550133\n+14155550134\n\n\n+14155550135\n"
	if got := fmt.Sprint(suppressedRows(judgeFiles(t, files))); got != "[2 3 4 5]" {
		t.Errorf("rows suppressed %v, want [2 3 4 5]", got)
	}
	files["dnc.csv"] = "Do not call\n\nPhone\n+14155550136\n\n+14155550137\n"
	if got := fmt.Sprint(suppressedRows(judgeFiles(t, files))); got != "[6 7]" {
		t.Errorf("with a title: rows suppressed %v, want [6 7]", got)
	}
}
