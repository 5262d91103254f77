package campaign

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/callrun/callrun/campaign/sheet"
)

func TestSuggestMapping(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   map[string]string
		tz     string
	}{
		{[]string{"Contact Id", "First Name", "Last Name", "Phone", "Email", "Tags"},
			map[string]string{"ghl_contact_id": "Contact Id", "first_name": "First Name", "last_name": "Last Name", "phone_number": "Phone", "email": "Email"}, ""},
		{[]string{"Vorname", "Nachname", "Telefon", "E-Mail"},
			map[string]string{"first_name": "Vorname", "last_name": "Nachname", "phone_number": "Telefon", "email": "E-Mail"}, ""},
		{[]string{"Record ID", "Mobile Phone Number", "Cell", "email_address", "Time Zone"}, // HubSpot-ish
			map[string]string{"ghl_contact_id": "Record ID", "phone_number": "Cell", "email": "email_address"}, "Time Zone"},
		{[]string{"Name", "Notes"}, map[string]string{}, ""},
	} {
		got, tz := SuggestMapping(tc.header)
		if len(got) != len(tc.want) || tz != tc.tz {
			t.Errorf("%q: mapping %v tz %q, want %v tz %q", tc.header, got, tz, tc.want, tc.tz)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s -> %q, want %q", tc.header, k, got[k], v)
			}
		}
	}
}

// TestInitGolden writes a campaign file for each fixture sheet, compares it
// with its golden file, and checks that plan --offline refuses it until its
// TODO is done and accepts it after.
func TestInitGolden(t *testing.T) {
	sheets, _ := filepath.Glob(filepath.Join("..", "testdata", "sheets", "*"))
	if len(sheets) < 4 {
		t.Fatalf("fixture sheets: %v", sheets)
	}
	for _, file := range sheets {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			r, err := sheet.Open(file)
			if err != nil {
				t.Fatal(err)
			}
			fields, _ := SuggestMapping(r.Header())
			var sample []string
			if col, ok := fields["phone_number"]; ok {
				idx, _ := r.Column(col)
				for {
					rec, err := r.Next()
					if err != nil {
						break
					}
					if rec.Err == nil {
						sample = append(sample, rec.Fields[idx])
					}
				}
			}
			r.Close()
			var b bytes.Buffer
			if err := WriteInit(&b, InitOptions{Sheet: name, SheetName: name, Header: r.Header(), Sample: sample}); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("init", name+".yaml.golden"), b.Bytes())

			dir := t.TempDir()
			data, _ := os.ReadFile(file)
			os.WriteFile(filepath.Join(dir, name), data, 0o644)
			path := filepath.Join(dir, "campaign.yaml")
			os.WriteFile(path, b.Bytes(), 0o644)
			_, err = Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
			var fe *FileError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), "TODO placeholder") {
				t.Fatalf("an unfilled init file was accepted: %v", err)
			}
			filled := strings.Replace(b.String(), `"TODO: write the agent's prompt"`, `"Hello, this is a reminder call."`, 1)
			os.WriteFile(path, []byte(filled), 0o644)
			f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
			if err != nil {
				t.Fatalf("filled init file: %v", err)
			}
			if err := f.CheckSheets(); err != nil {
				t.Fatalf("filled init file's sheet: %v", err)
			}
		})
	}
}

// TestInitMapsAccountFields: given the account's own fields (as init
// reads them from an agent's call endpoint), init maps the columns whose
// header matches one and leaves the others unsent; the file it writes
// loads, with those fields under fields:.
func TestInitMapsAccountFields(t *testing.T) {
	header := []string{"Phone", "First Name", "City", "Zip Code", "Notes"}
	var b bytes.Buffer
	err := WriteInit(&b, InitOptions{Sheet: "leads.csv", SheetName: "leads.csv", Agent: "Spring", Header: header,
		AccountFields: []string{"address", "city", "zip_code"}, AccountFrom: `agent "Spring"'s call endpoint`})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`      city: "City"    # a field of your account, from agent "Spring"'s call endpoint` + "\n",
		`      zip_code: "Zip Code"    # a field of your account, from agent "Spring"'s call endpoint` + "\n",
		`    # Not sent: "Notes"` + "\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("init file lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "address") {
		t.Errorf("init mapped address, which no column matches:\n%s", b.String())
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "leads.csv"), []byte("Phone,First Name,City,Zip Code,Notes\n+14155550132,Ada,Springfield,62701,x\n"), 0o644)
	filled := strings.Replace(b.String(), `"TODO: write the agent's prompt"`, `"Hello."`, 1)
	os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte(filled), 0o644)
	f, err := Load(filepath.Join(dir, "campaign.yaml"), LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got := f.AccountFields(); strings.Join(got, ",") != "city,zip_code" || f.Sheets[0].Fields["zip_code"] != "Zip Code" {
		t.Errorf("loaded: account fields %q, mapping %v", got, f.Sheets[0].Fields)
	}
}

// TestInitListsTheSheetsCountries: init writes countries: when the sheet
// holds numbers of other countries (with +country), so that plan does
// not refuse them unasked.
func TestInitListsTheSheetsCountries(t *testing.T) {
	got := sampleCountries([]string{"+44 20 7946 0123", "(212) 555-0147", "+1 416 555 0163", "0049 30 12345678", "+800 1234 5678", "+1 555 0100"}, "US")
	if want := []string{"CA", "DE", "GB", "US"}; !slices.Equal(got, want) {
		t.Errorf("sampleCountries = %v, want %v", got, want)
	}
}
