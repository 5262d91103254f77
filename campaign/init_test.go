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
			header, rows := sheetRows(t, file)
			var b bytes.Buffer
			if _, err := WriteInit(&b, InitOptions{Sheet: name, SheetName: name, Header: header, Rows: rows}); err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("init", name+".yaml.golden"), b.Bytes())

			dir := t.TempDir()
			data, _ := os.ReadFile(file)
			os.WriteFile(filepath.Join(dir, name), data, 0o644)
			path := filepath.Join(dir, "campaign.yaml")
			os.WriteFile(path, b.Bytes(), 0o644)
			_, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
			var fe *FileError
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), "TODO placeholder") {
				t.Fatalf("an unfilled init file was accepted: %v", err)
			}
			filled := strings.Replace(b.String(), `"TODO: write the agent's prompt"`, `"Hello, this is a reminder call."`, 1)
			if strings.Contains(filled, "region: TODO") {
				// A person decides the region: refused until then.
				os.WriteFile(path, []byte(filled), 0o644)
				if _, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)}); err == nil || !strings.Contains(err.Error(), "region is still TODO") {
					t.Fatalf("a TODO region was accepted: %v", err)
				}
				filled = strings.Replace(filled, "region: TODO", "region: US", 1)
			}
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

// sheetRows reads a sheet's header and its rows (those that read), as
// callrun init gives them to WriteInit.
func sheetRows(t *testing.T, path string) (header []string, rows [][]string) {
	t.Helper()
	r, err := sheet.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if rec.Err == nil {
			rows = append(rows, slices.Clone(rec.Fields))
		}
	}
	return r.Header(), rows
}

// TestInitMapsAccountFields: given the account's own fields (as init
// reads them from an agent's call endpoint), init maps the columns whose
// header matches one and leaves the others unsent; the file it writes
// loads, with those fields under fields:.
func TestInitMapsAccountFields(t *testing.T) {
	header := []string{"Phone", "First Name", "City", "Zip Code", "Notes"}
	var b bytes.Buffer
	_, err := WriteInit(&b, InitOptions{Sheet: "leads.csv", SheetName: "leads.csv", Agent: "Spring", Header: header, Region: "US",
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

// TestInitReadsTheValues: init maps what the values show, not only the
// names: the cases of CRM exports and hand-kept lists where names alone
// mapped the wrong column, or none, or guessed the region from a few.
func TestInitReadsTheValues(t *testing.T) {
	for _, tc := range []struct {
		name      string
		header    []string
		rows      [][]string
		phones    string
		country   string
		region    string
		countries string
		id, full  string
	}{
		{"US with one Mexican", []string{"Name", "Phone", "Country"},
			[][]string{{"A", "(212) 555-0101", "US"}, {"B", "212-555-0102", "US"}, {"C", "+52 55 1234 5678", "US"}, {"D", "2125550104", "US"}, {"E", "(415) 555-0105", "United States"}},
			"Phone", "Country", "US", "US", "", "Name"},
		{"Zoho India", []string{"First Name", "Last Name", "Mobile", "Mailing Country"},
			[][]string{{"A", "K", "98765 43210", "India"}, {"B", "L", "9876543211", "India"}, {"C", "M", "91234 56789", "India"}},
			"Mobile", "Mailing Country", "IN", "IN", "", ""},
		{"French list", []string{"Numéro", "Nom", "Prénom", "Téléphone", "Pays"},
			[][]string{{"C-10023", "Dupont", "Jean", "01 23 45 67 89", "France"}, {"C-10024", "Martin", "Léa", "06 12 34 56 78", "France"}, {"C-10026", "Petit", "Luc", "04 72 00 00 01", "FRA"}, {"C-10025", "Roux", "Max", "+32 2 123 45 67", "Belgique"}},
			"Téléphone", "Pays", "FR", "BE FR", "", ""},
		{"Pipedrive", []string{"Person - Name", "Person - Phone - Work", "Person - Phone - Mobile", "Person - ID"},
			[][]string{{"Ada Lovelace", "+1 415 555 0101", "+1 415 555 0201", "17"}, {"Bo Bo", "+1 415 555 0102", "", "18"}, {"Cy Cy", "", "+1 415 555 0203", "19"}},
			"Person - Phone - Mobile, Person - Phone - Work", "", "US", "US", "", "Person - Name"},
		{"minority with +", []string{"Phone"},
			[][]string{{"(212) 555-0101"}, {"212-555-0102"}, {"+52 55 1234 5678"}, {"2125550104"}},
			"Phone", "", "TODO", "", "", ""},
		{"HubSpot ids are not HighLevel ids", []string{"Record ID", "Phone Number", "Country/Region"},
			[][]string{{"51234567801", "+1 212 555 0101", "United States"}, {"51234567802", "+1 212 555 0102", "United States"}},
			"Phone Number", "Country/Region", "US", "US", "", ""},
		{"HighLevel ids", []string{"Contact Id", "Phone"},
			[][]string{{"ZBnVDZSvmYH7RBq5K4Ku", "+1 212 555 0101"}, {"a8Xk2LmQ9pRt4VwYz3Bc", "+1 212 555 0102"}, {"Qw3Er5Ty7Ui9Op1As2Df", "+1 212 555 0103"}},
			"Phone", "", "US", "US", "Contact Id", ""},
		{"no phone column", []string{"Name", "Email", "Notes"},
			[][]string{{"Ada", "ada@example.com", "call back"}},
			"", "", "TODO", "", "", "Name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := guessSheet(tc.header, tc.rows, "")
			if got := strings.Join(g.phones, ", "); got != tc.phones {
				t.Errorf("phone columns %q, want %q", got, tc.phones)
			}
			if g.country != tc.country || g.region != tc.region || strings.Join(g.countries, " ") != tc.countries || g.id != tc.id || g.name != tc.full {
				t.Errorf("country column %q, region %q (%s), countries %v, id %q, name %q; want %q, %q, %q, %q, %q",
					g.country, g.region, g.regionNote, g.countries, g.id, g.name, tc.country, tc.region, tc.countries, tc.id, tc.full)
			}
		})
	}
}

// TestInitWithNoPhoneColumn: init says so, and so does the file it
// writes, which plan refuses with what to write.
func TestInitWithNoPhoneColumn(t *testing.T) {
	var b bytes.Buffer
	notes, err := WriteInit(&b, InitOptions{Sheet: "s.csv", SheetName: "s.csv", Header: []string{"Name", "Email"}, Rows: [][]string{{"Ada", "ada@example.com"}}, Region: "US"})
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) == 0 || !strings.Contains(notes[0], "No column of phone numbers") {
		t.Errorf("notes %q", notes)
	}
	if !strings.Contains(b.String(), `phone_number: "TODO"    # TODO: no column of phone numbers found`) {
		t.Errorf("the file does not say so:\n%s", b.String())
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte("Name,Email\nAda,ada@example.com\n"), 0o644)
	filled := strings.Replace(b.String(), `"TODO: write the agent's prompt"`, `"Hello."`, 1)
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(filled), 0o644)
	_, err = Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true, Getenv: env(nil)})
	if err == nil || !strings.Contains(err.Error(), "phone_number is still TODO") {
		t.Errorf("Load = %v; want the TODO phone column refused", err)
	}
}

// TestInitCountryHeaders: the country columns of CRM exports and lists
// in the main languages are found by their names, when their values are
// countries.
func TestInitCountryHeaders(t *testing.T) {
	for _, h := range []string{"Country", "CC", "Mailing Country", "Country/Region", "Land", "Pays", "País", "MailingCountry", "Billing Country", "Person - Country"} {
		g := guessSheet([]string{"Phone", h}, [][]string{{"+49 30 1234567", "Deutschland"}, {"030 1234568", "DE"}, {"030 1234569", "Germany"}}, "")
		if g.country != h || g.region != "DE" {
			t.Errorf("header %q: country column %q, region %q", h, g.country, g.region)
		}
	}
	if g := guessSheet([]string{"Person - Email - Work"}, [][]string{{"ada@example.com"}}, "US"); g.email != "Person - Email - Work" {
		t.Errorf("Pipedrive's e-mail column: %q", g.email)
	}
	if g := guessSheet([]string{"Phone", "Land"}, [][]string{{"+49 30 1234567", "Flurstück 12"}, {"030 1234568", "Acker"}}, ""); g.country != "" {
		t.Errorf("a Land column of plots was read as countries: %q", g.country)
	}
}

// TestInitCountsAddUp: when init cannot tell the region, the cells it
// says are written with +country add up by country, those that read as
// no country's number (a typo, +800) counted too.
func TestInitCountsAddUp(t *testing.T) {
	rows := [][]string{
		{"+44 20 7946 0958"}, {"+44 1481 256789"}, {"+44 1481 256790"}, {"+1 212 555 0101"}, {"+1 415 555 0102"}, {"+800 1234 5678"},
		{"020 7946 0001"}, {"020 7946 0002"}, {"(212) 555-0103"}, {"212 555 0104"}, {"01481 256791"}, {"07700 900123"}, {"0161 496 0000"},
	}
	g := guessSheet([]string{"Phone"}, rows, "")
	const want = "(6 of 13 are written with +country: GB 1, GG 2, US 2, and 1 that read as no country's number)"
	if g.region != "TODO" || !strings.Contains(g.regionNote, want) {
		t.Fatalf("region %q, note %q; want TODO and %q", g.region, g.regionNote, want)
	}
	// And where every one reads as a country's, none is said to be none.
	g = guessSheet([]string{"Phone"}, rows[:5], "")
	if !strings.Contains(g.regionNote, "(5 of 5 are written with +country: GB 1, GG 2, US 2)") {
		t.Errorf("note %q", g.regionNote)
	}
}
