package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// judgeFiles writes files into a directory, loads c.yaml from it offline
// and returns every contact of its sheets, judged.
func judgeFiles(t *testing.T, files map[string]string) []Contact {
	t.Helper()
	contacts, _ := judgeFilesSuppressing(t, files)
	return contacts
}

// judgeFilesSuppressing is judgeFiles that also returns the suppression
// lists as loaded, with their problems.
func judgeFilesSuppressing(t *testing.T, files map[string]string) ([]Contact, *Suppression) {
	t.Helper()
	return judgeFilesWith(t, files, nil)
}

// judgeFilesWith is judgeFilesSuppressing that hands the contact reader
// to use, when not nil, before it reads.
func judgeFilesWith(t *testing.T, files map[string]string, use func(*ContactReader)) ([]Contact, *Suppression) {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []Contact
	cr := f.NewContactReader(sup)
	if use != nil {
		use(cr)
	}
	err = cr.Each(context.Background(), func(c *Contact) error {
		out = append(out, *c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, sup
}

// TestCountryColumn: where a row names its country, its national number
// is read as that country's, and a number of another country is invalid
// with a reason naming both, whatever the sheet's region.
func TestCountryColumn(t *testing.T) {
	cs := judgeFiles(t, map[string]string{
		"c.yaml": `name: c
agents: [{name: A, prompt: p}]
sheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}, country_column: Country}]
region: US
countries: [US, MX, IN, DE]
`,
		"s.csv": `Phone,Country
(415) 555-0132,US
55 1234 5678,Mexico
+52 55 1234 5678,US
98765 43210,India
9876543211,Indien
30 1234567,Deutschland
2125550199,
+14155550133,Narnia
+4930123456,Allemagne
`,
	})
	type want struct{ status, phone, reason string }
	wants := []want{
		{ToCall, "+14155550132", ""},
		{ToCall, "+525512345678", ""},
		{Invalid, "", "+525512345678 is a number in Mexico (MX), but the row's country (column \"Country\") is United States (US)"},
		{ToCall, "+919876543210", ""},
		{ToCall, "+919876543211", ""},
		{ToCall, "+49301234567", ""},
		{ToCall, "+12125550199", ""},
		{Invalid, "+14155550133", `"Narnia" is not a country`},
		{ToCall, "+4930123456", ""},
	}
	if len(cs) != len(wants) {
		t.Fatalf("%d contacts, want %d", len(cs), len(wants))
	}
	for i, w := range wants {
		c := cs[i]
		if c.Status != w.status || c.Phone != w.phone || !strings.Contains(c.Reason, w.reason) {
			t.Errorf("row %d: %s %q %q; want %s %q, reason containing %q", c.Row, c.Status, c.Phone, c.Reason, w.status, w.phone, w.reason)
		}
	}
	if cs[7].Field != "country" || cs[7].Column != "Country" {
		t.Errorf("row 9 fails on %s (column %q), want country (Country)", cs[7].Field, cs[7].Column)
	}
}

// TestRegionTODORefused: the region callrun init leaves when it cannot
// decide is refused, with what to do.
func TestRegionTODORefused(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte("Phone\n4155550132\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}}]\nregion: TODO    # seen: US 3, MX 2\n"), 0o644)
	_, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err == nil || !strings.Contains(err.Error(), "region is still TODO") || !strings.Contains(err.Error(), "country_column") {
		t.Fatalf("Load: %v; want the TODO region refused, saying how to choose", err)
	}
}

// TestSeveralPhoneColumns: phone_number: [Mobile, Phone] calls the first
// cell that reads as a number the campaign calls, and says which column;
// name_column splits full names.
func TestSeveralPhoneColumns(t *testing.T) {
	cs := judgeFiles(t, map[string]string{
		"c.yaml": `name: c
agents: [{name: A, prompt: p}]
sheets: [{file: s.csv, agent: A, fields: {phone_number: [Mobile, Phone]}, name_column: Name}]
`,
		"s.csv": `Name,Mobile,Phone
Ada Lovelace,+14155550132,+14155550140
Alan Mathison Turing,,(415) 555-0133
"Hopper, Grace",call me,4155550134
Cher,nope,n/a
Nobody,,
`,
	})
	type want struct{ status, phone, column, first, last string }
	wants := []want{
		{ToCall, "+14155550132", "Mobile", "Ada", "Lovelace"},
		{ToCall, "+14155550133", "Phone", "Alan Mathison", "Turing"},
		{ToCall, "+14155550134", "Phone", "Grace", "Hopper"},
		{Invalid, "", "Mobile", "Cher", ""},
		{Invalid, "", "", "Nobody", ""},
	}
	if len(cs) != len(wants) {
		t.Fatalf("%d contacts, want %d", len(cs), len(wants))
	}
	for i, w := range wants {
		c := cs[i]
		col := c.PhoneColumn
		if c.Status == Invalid {
			col = c.Column
		}
		if c.Status != w.status || c.Phone != w.phone || col != w.column || c.Fields[FieldFirstName] != w.first || c.Fields[FieldLastName] != w.last {
			t.Errorf("row %d: %s %q column %q, %q %q (%s); want %+v", c.Row, c.Status, c.Phone, col, c.Fields[FieldFirstName], c.Fields[FieldLastName], c.Reason, w)
		}
	}
	if !strings.Contains(cs[4].Reason, "every phone column (Mobile, Phone)") {
		t.Errorf("row 6: reason %q", cs[4].Reason)
	}
}

// TestRowCountryToldFirst: a number of another country than its row's is
// told as such even when the campaign does not call that country, rather
// than "add it to countries", which would call it.
func TestRowCountryToldFirst(t *testing.T) {
	cs := judgeFiles(t, map[string]string{
		"c.yaml": "name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A, fields: {phone_number: Phone}, country_column: CC}]\n",
		"s.csv":  "Phone,CC\n+52 55 1234 5678,US\n+52 55 1234 5679,MX\n",
	})
	if c := cs[0]; c.Status != Invalid || !strings.Contains(c.Reason, "but the row's country (column \"CC\") is United States (US)") {
		t.Errorf("row 2: %s %q", c.Status, c.Reason)
	}
	if c := cs[1]; c.Status != Invalid || !strings.Contains(c.Reason, "add MX to countries") {
		t.Errorf("row 3 (a Mexican row in a US campaign): %s %q", c.Status, c.Reason)
	}
}
