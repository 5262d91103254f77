package campaign

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPhoneLineKind: the headers of real exports (Outlook, Google
// Contacts, Salesforce, Zoho, HubSpot, Pipedrive, German and French
// Outlook) and Google's type cells are told by the kind of line they
// name; those of another person's line or of a device no person answers
// are not dialled.
func TestPhoneLineKind(t *testing.T) {
	for want, texts := range map[lineKind][]string{
		lineMobile:      {"Mobile Phone", "Mobile", "MobilePhone", "Mobile Phone Number", "Person - Phone - Mobile", "* Mobile", "Work Mobile", "Handy", "Mobiltelefon", "Portable", "Tél. mobile", "Cell", "SMS"},
		lineHome:        {"Home Phone", "Home Phone 2", "Home", "Person - Phone - Home", "Telefon (privat)", "Téléphone (domicile)", "LANDLINE_NUMBER", "Festnetz", "Festnetznummer", "Téléphone fixe", "Teléfono fijo"},
		linePrimary:     {"Primary Phone", "Phone", "Phone Number", "Phone 1 - Value", "Main", "Telefon", "Haupttelefon", ""},
		lineOther:       {"Other Phone", "Car Phone", "Radio Phone", "Other", "Google Voice", "Person - Phone - Other", "Autotelefon", "Weiteres Telefon"},
		lineWork:        {"Business Phone", "Business Phone 2", "Work", "Person - Phone - Work", "Telefon geschäftlich", "Téléphone bureau"},
		lineCompanyMain: {"Company Main Phone", "Haupttelefon (Firma)", "Switchboard"},
		lineNotDialled: {"Assistant's Phone", "Asst. Phone", "Asst Phone", "Business Fax", "Home Fax", "Other Fax", "Fax", "Work Fax", "Fax Number",
			"Pager", "Work Pager", "TTY/TDD Phone", "Telex", "Callback", "ISDN", "Telefon Assistent", "Fax geschäftlich", "Télécopie bureau", "Sekretariat", "Emergency Contact Phone", "Voicemail", "Modem",
			// Another person's line, as debt collectors', lenders', schools'
			// and HR's sheets name them, and Google Contacts' own labels.
			"Reference 1 Phone", "Relative Phone", "Parent/Guardian Phone", "Mother's Phone", "Father Phone", "Husband's Phone",
			"Wife Phone", "Next of Kin Phone", "Neighbour Phone", "Friend Phone", "Employer Phone", "Landlord Phone",
			"Guarantor Phone", "Attorney Phone", "Supervisor Phone", "Caregiver Phone", "Child's Phone", "Mom", "Dad",
			"Telefon Ehepartner", "Telefon Arbeitgeber", "Téléphone du conjoint"},
	} {
		for _, text := range texts {
			if got, what := phoneLineKind(text); got != want || (got == lineNotDialled) != (what != "") {
				t.Errorf("phoneLineKind(%q) = %d %q, want %d", text, got, what, want)
			}
		}
	}
}

// TestPhoneLineHeader: a header that names a phone line and nothing else
// is one init maps with no values seen; a column about the number (its
// type, whether to call it) is not.
func TestPhoneLineHeader(t *testing.T) {
	for h, want := range map[string]bool{
		"Home Phone 2": true, "Car Phone": true, "Assistant's Phone": true, "Phone 2 - Value": true, "Person - Phone - Other": true,
		"Mobile Phone Number": true, "Téléphone (domicile)": true, "Phone": true,
		"Phone 1 - Type": false, "Phone 1 - Label": false, "Do Not Phone": false, "Phone Opt In": false, "Phone Extension": false,
		"Phone Verified": false, "Last Name": false, "Email": false, "Mobile Consent Date": false,
		"LANDLINE_NUMBER": true, "Festnetz": true, "SMS": false, "Préfixe téléphone": false,
		"Reference 1 Phone": true, "Employer Phone": true, "Relative Name": false,
	} {
		if got := phoneLineHeader(h); got != want {
			t.Errorf("phoneLineHeader(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestPhoneTypeColumn: a number whose type cell names a fax, a pager or an
// assistant is never dialled, and the row is called at its next number;
// typed numbers are tried mobile first, then the person's own lines, then
// work, whatever their columns' order; a company's main line is tried
// after the row's other numbers; a row
// with nothing else is invalid, naming the type cell; plan is told how
// many numbers were passed over.
func TestPhoneTypeColumn(t *testing.T) {
	var notes []string
	cs := judgeWithNotes(t, map[string]string{
		"c.yaml": `name: c
agents: [{name: A, prompt: p}]
sheets:
  - file: s.csv
    agent: A
    fields:
      phone_number:
        - {column: Phone 1 - Value, type_column: Phone 1 - Type}
        - {column: Phone 2 - Value, type_column: Phone 2 - Type}
region: US
unsafe_ignore_called_person_hours: true
`,
		"s.csv": `Name,Phone 1 - Type,Phone 1 - Value,Phone 2 - Type,Phone 2 - Value
Fax first,Work Fax,+1 415 555 0101,Mobile,+1 415 555 0102
Mobile first,* Mobile,+1 415 555 0103,Work Fax,+1 415 555 0104
Pager only,Pager,+1 415 555 0105,,
Company first,Company Main,+1 415 555 0106,Work,+1 415 555 0107
Company only,Company Main,+1 415 555 0108,,
Assistant,Assistant,+1 415 555 0109,Home,+1 415 555 0110
Untyped,,+1 415 555 0111,,
Work then mobile,Work,+1 415 555 0112,Mobile,+1 415 555 0113
Work then home,Work,+1 415 555 0114,Home,+1 415 555 0115
Mobile then home,Mobile,+1 415 555 0116,Home,+1 415 555 0117
Company then home,Company Main,+1 415 555 0118,Home,+1 415 555 0119
Work mobile unreadable,Work,+1 415 555 0120,Mobile,+1 415 555
`,
	}, &notes)
	type want struct{ status, phone, column string }
	wants := []want{
		{ToCall, "+14155550102", "Phone 2 - Value"},
		{ToCall, "+14155550103", "Phone 1 - Value"},
		{Invalid, "", "Phone 1 - Value"},
		{ToCall, "+14155550107", "Phone 2 - Value"},
		{ToCall, "+14155550108", "Phone 1 - Value"},
		{ToCall, "+14155550110", "Phone 2 - Value"},
		{ToCall, "+14155550111", "Phone 1 - Value"},
		{ToCall, "+14155550113", "Phone 2 - Value"},
		{ToCall, "+14155550115", "Phone 2 - Value"},
		{ToCall, "+14155550116", "Phone 1 - Value"},
		{ToCall, "+14155550119", "Phone 2 - Value"},
		{ToCall, "+14155550120", "Phone 1 - Value"},
	}
	if len(cs) != len(wants) {
		t.Fatalf("%d contacts, want %d", len(cs), len(wants))
	}
	for i, w := range wants {
		c := cs[i]
		if c.Status != w.status || c.Phone != w.phone || c.PhoneColumn != w.column {
			t.Errorf("row %d: %s %q column %q (%s); want %+v", c.Row, c.Status, c.Phone, c.PhoneColumn, c.Reason, w)
		}
	}
	if r := cs[2].Reason; r != `column "Phone 1 - Type" says "Pager": the number in column "Phone 1 - Value" is a pager, which callrun does not call` || cs[2].Column != "Phone 1 - Value" {
		t.Errorf("row 4: column %q reason %q", cs[2].Column, r)
	}
	if !slices.ContainsFunc(notes, func(n string) bool {
		return strings.Contains(n, "4 number(s) were not called because their type column names") && strings.Contains(n, `row 2: column "Phone 1 - Type" says "Work Fax"`)
	}) {
		t.Errorf("notes %q; want the 4 numbers passed over for their type told (rows 2, 3, 4 and 7)", notes)
	}
}

// TestPhoneColumnNotDialled: a column mapped by hand whose header names a
// fax or an assistant's line is read and passed over, never silently:
// each row falls to its next column, a row with nothing else is invalid
// naming the column, and the note names the column and its rows.
func TestPhoneColumnNotDialled(t *testing.T) {
	var notes []string
	files := map[string]string{
		"c.yaml": `name: c
agents: [{name: A, prompt: p}]
sheets: [{file: s.csv, agent: A, fields: {phone_number: [Assistant's Phone, Business Fax, Mobile Phone]}}]
region: US
unsafe_ignore_called_person_hours: true
`,
		"s.csv": `Assistant's Phone,Business Fax,Mobile Phone
+1 415 555 0201,+1 415 555 0202,+1 415 555 0203
,+1 415 555 0204,
,,+1 415 555 0205
`,
	}
	var cr *ContactReader
	cs, _ := judgeFilesWith(t, files, func(r *ContactReader) {
		cr = r
		cr.SheetNote = func(_ int, note string) { notes = append(notes, note) }
	})
	if cs[0].Status != ToCall || cs[0].Phone != "+14155550203" || cs[0].PhoneColumn != "Mobile Phone" {
		t.Errorf("row 2: %s %s from %q (%s); want the mobile", cs[0].Status, cs[0].Phone, cs[0].PhoneColumn, cs[0].Reason)
	}
	if cs[1].Status != Invalid || cs[1].Column != "Business Fax" || cs[1].Reason != `column "Business Fax" is named for a fax, which callrun does not call` {
		t.Errorf("row 3: %s column %q %q", cs[1].Status, cs[1].Column, cs[1].Reason)
	}
	if cs[2].Status != ToCall || cs[2].Phone != "+14155550205" {
		t.Errorf("row 4: %s %s", cs[2].Status, cs[2].Phone)
	}
	for _, want := range []string{
		`sheet s.csv: phone_number lists column "Assistant's Phone", which is named for an assistant's line: callrun does not call its numbers; 1 row(s) have one there`,
		`sheet s.csv: phone_number lists column "Business Fax", which is named for a fax: callrun does not call its numbers; 2 row(s) have one there`,
	} {
		if !slices.ContainsFunc(notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
			t.Errorf("notes %q; want one starting %q", notes, want)
		}
	}
	if n := cr.NotDialledColumns(); n != 2 {
		t.Errorf("NotDialledColumns = %d, want 2", n)
	}
}

// TestPhoneCellWithSeveralNumbers: a cell that lists several numbers
// (" ::: ", ";", a line break) offers each in turn, as another column
// would: the first the campaign calls wins; a '/' stays in one number;
// the shapes of two numbers that are refused stay refused.
func TestPhoneCellWithSeveralNumbers(t *testing.T) {
	cs := judgeFiles(t, map[string]string{
		"c.yaml": `name: c
agents: [{name: A, prompt: p}]
sheets: [{file: s.csv, agent: A, fields: {phone_number: [Phone, Other]}, region: DE}]
countries: [DE]
unsafe_ignore_called_person_hours: true
`,
		"s.csv": "Phone,Other\n" +
			"+1 415 555 0301 ::: 0171 1234567,\n" + // a US number first: the German second
			"\"030 1234567; 0171 7654321\",\n" + // both callable: the first
			"\"+44 20 7946 0958\n089 1234567\",\n" + // a line break
			"030/1234567,\n" + // one number with a slash
			"+1 415 555 0302 ::: +1 415 555 0303,0171 2345678\n" + // neither in the cell: the next column
			"\"030 1234567, 030 7654321\",\n" + // refused as before
			"0171 1234567;12,\n", // a suffix after ';': refused as before
	})
	type want struct{ status, phone, reason string }
	wants := []want{
		{ToCall, "+491711234567", ""},
		{ToCall, "+49301234567", ""},
		{ToCall, "+49891234567", ""},
		{Duplicate, "+49301234567", ""},
		{ToCall, "+491712345678", ""},
		{Invalid, "", "holds more than one phone number"},
		{Invalid, "", "has an extension or dialling suffix"},
	}
	for i, w := range wants {
		c := cs[i]
		if c.Status != w.status || c.Phone != w.phone || !strings.Contains(c.Reason, w.reason) {
			t.Errorf("row %d: %s %q (%s); want %+v", c.Row, c.Status, c.Phone, c.Reason, w)
		}
	}
	if cs[0].Reason != "" || cs[0].PhoneColumn != "Phone" {
		t.Errorf("row 2: from %q", cs[0].PhoneColumn)
	}
}

// TestDoNotCallFlagEveryNumberOfACell: a flagged row whose cell lists
// several numbers flags each of them, so that no other row calls any; a
// number its own call would pass over (a fax column, a type cell's pager)
// is flagged too.
func TestDoNotCallFlagEveryNumberOfACell(t *testing.T) {
	cs, sup := judgeFilesSuppressing(t, map[string]string{
		"c.yaml": `name: c
agents: [{name: A, prompt: p}]
sheets:
  - file: s.csv
    agent: A
    fields: {phone_number: [{column: Phone 1 - Value, type_column: Phone 1 - Type}, Business Fax]}
    do_not_call: {column: Do Not Call}
region: US
unsafe_ignore_called_person_hours: true
`,
		"s.csv": `Phone 1 - Type,Phone 1 - Value,Business Fax,Do Not Call
Mobile,+1 415 555 0401 ::: +1 415 555 0402 ::: (415) 555-0403,+1 415 555 0404,1
Pager,+1 415 555 0405,,yes
,+1 415 555 0402,,
,(415) 555-0403,,
,+1 415 555 0404,,
,+1 415 555 0405,,
,+1 415 555 0406,,
`,
	})
	var flagged []string
	for _, fl := range sup.Flagged() {
		flagged = append(flagged, fl.Number)
	}
	if want := []string{"+14155550401", "+14155550402", "+14155550403", "+14155550404", "+14155550405"}; !slices.Equal(flagged, want) {
		t.Errorf("flagged %v, want %v", flagged, want)
	}
	var statuses []string
	for _, c := range cs {
		statuses = append(statuses, c.Status)
	}
	if want := []string{Suppressed, Suppressed, Suppressed, Suppressed, Suppressed, Suppressed, ToCall}; !slices.Equal(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
}

// TestPhoneTypeColumnConfig: a type_column the sheet lacks stops the
// sheet, naming it; an entry with an unknown key is refused with its
// line; a column that is its own type column is refused; one entry may
// stand without a list.
func TestPhoneTypeColumnConfig(t *testing.T) {
	for _, tc := range []struct{ phone, want string }{
		{`[{column: Phone, type_column: Kind}]`, `type_column of "Phone": `},
		{`[{column: Phone, type: Kind}]`, `line 4, sheets[0].fields.phone_number: phone_number's entry has a key "type": write {column: <numbers>, type_column: <their kinds>}`},
		{`[{column: Phone, type_column: Phone}]`, `phone_number's column "Phone" is its own type_column`},
		{`{column: Phone, type_column: Kind}`, `type_column of "Phone": `},
		{`{column: Phone, type_column: Type}`, ""},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "s.csv"), []byte("Phone,Type\n+14155550101,Mobile\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("name: c\nagents: [{name: A, prompt: p}]\nsheets: [{file: s.csv, agent: A,\n  fields: {phone_number: "+tc.phone+"}}]\nregion: US\n"), 0o644)
		f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true, Getenv: env(nil)})
		if err == nil {
			err = f.CheckSheets()
		}
		if tc.want == "" {
			if err != nil || f.Sheets[0].PhoneColumns[0] != (PhoneColumn{Column: "Phone", TypeColumn: "Type"}) {
				t.Errorf("%s: %v", tc.phone, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.phone, err, tc.want)
		}
	}
}

// judgeWithNotes is judgeFiles that also gathers the reader's notes.
func judgeWithNotes(t *testing.T, files map[string]string, notes *[]string) []Contact {
	t.Helper()
	cs, _ := judgeFilesWith(t, files, func(cr *ContactReader) {
		cr.SheetNote = func(_ int, note string) { *notes = append(*notes, note) }
	})
	return cs
}

// TestInitPhoneColumns: on Outlook's and Google Contacts' exports (legacy
// and 2024) init maps every phone column, the mobile first, then the
// person's other lines, then work, then the company's switchboard; never
// an assistant's line, a fax, a pager, a TTY, a telex, a callback or an
// ISDN line, which it lists as not called; and each of Google's value
// columns with the type column beside it.
func TestInitPhoneColumns(t *testing.T) {
	for _, tc := range []struct {
		file string
		want []string
	}{
		{"outlook.csv", []string{
			`      phone_number: ["Mobile Phone", "Home Phone", "Home Phone 2", "Primary Phone", "Car Phone", "Other Phone", "Radio Phone", "Business Phone", "Business Phone 2", "Company Main Phone"]    # the first cell that reads as a number is called` + "\n",
			`    # Not called (no person answers them, or they are another person's): "Assistant's Phone" (an assistant's line), "Business Fax" (a fax), "Callback" (a callback number, whose owner the sheet does not say), "Home Fax" (a fax), "ISDN" (an ISDN line, a data line for a fax, a modem or a video call), "Other Fax" (a fax), "Pager" (a pager), "TTY/TDD Phone" (a TTY/TDD text phone), "Telex" (a telex)` + "\n",
		}},
		{"google.csv", []string{
			"      phone_number:    # each row is called at the first of these that reads as a number; a number whose type column names a fax, a pager or an assistant is not\n" +
				`        - {column: "Phone 1 - Value", type_column: "Phone 1 - Type"}` + "\n" +
				`        - {column: "Phone 2 - Value", type_column: "Phone 2 - Type"}` + "\n" +
				`        - {column: "Phone 3 - Value", type_column: "Phone 3 - Type"}` + "\n",
		}},
		{"google-2024.csv", []string{
			`        - {column: "Phone 1 - Value", type_column: "Phone 1 - Label"}` + "\n" +
				`        - {column: "Phone 2 - Value", type_column: "Phone 2 - Label"}` + "\n" +
				`        - {column: "Phone 3 - Value", type_column: "Phone 3 - Label"}` + "\n",
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "phones", tc.file)
			header, rows := sheetRows(t, path)
			var b bytes.Buffer
			if _, err := WriteInit(&b, InitOptions{Sheet: tc.file, SheetName: tc.file, Header: header, Rows: rows}); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(b.String(), want) {
					t.Errorf("init wrote no line\n%s\nin\n%s", want, b.String())
				}
			}
			for _, line := range strings.Split(b.String(), "\n") {
				if strings.HasPrefix(line, "    # Not sent:") && (strings.Contains(line, `"Phone 1 - Type"`) || strings.Contains(line, `"Phone 1 - Label"`)) {
					t.Errorf("a type column is listed as not sent: %s", line)
				}
			}
			// The file loads, and its sheet's header has every column it maps.
			dir := t.TempDir()
			data, _ := os.ReadFile(path)
			os.WriteFile(filepath.Join(dir, tc.file), data, 0o644)
			campaign := filepath.Join(dir, "c.yaml")
			os.WriteFile(campaign, []byte(strings.Replace(b.String(), `"TODO: write the agent's prompt"`, "Hello.", 1)), 0o644)
			f, err := Load(campaign, LoadOptions{Offline: true, Getenv: env(nil)})
			if err == nil {
				err = f.CheckSheets()
			}
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestInitPhoneColumnsByValues: init maps the columns whose values are
// phone numbers before any column mapped for its header alone, whose first
// rows are empty (Brevo's WHATSAPP), and a company's switchboard after
// both; Brevo's SMS attribute (the contact's mobile number) is a mobile
// column when its values are numbers, never for its name alone, and a
// column about texts (their consent, an opt-in, SMS_BLACKLISTED) never
// is, whatever its cells look like; LANDLINE_NUMBER, Festnetz, fixe and
// fijo name the person's landline. Brevo's header is its contact
// attributes as its export writes them (EMAIL, LASTNAME, FIRSTNAME, SMS,
// LANDLINE_NUMBER, WHATSAPP, EMAIL_BLACKLISTED, SMS_BLACKLISTED,
// ADDED_TIME, MODIFIED_TIME).
func TestInitPhoneColumnsByValues(t *testing.T) {
	brevo := []string{"EMAIL", "LASTNAME", "FIRSTNAME", "SMS", "LANDLINE_NUMBER", "WHATSAPP", "EMAIL_BLACKLISTED", "SMS_BLACKLISTED", "ADDED_TIME", "MODIFIED_TIME"}
	for _, tc := range []struct {
		name   string
		header []string
		rows   [][]string
		want   string
	}{
		{"Brevo", brevo, [][]string{
			{"amelie@example.fr", "Roux", "Amélie", "+33612345601", "", "", "No", "No", "2025-03-03 10:12:33", "2025-10-03 08:40:05"},
			{"damien@example.fr", "Fabre", "Damien", "", "+33123456704", "", "No", "Yes", "2025-03-06 10:12:33", "2025-10-06 08:40:05"},
			{"elise@example.fr", "Girard", "Élise", "33612345605", "", "", "Yes", "No", "2025-03-07 10:12:33", "2025-10-07 08:40:05"},
		}, "SMS, LANDLINE_NUMBER, WHATSAPP"},
		{"Brevo with no SMS number in the first rows", brevo, [][]string{
			{"damien@example.fr", "Fabre", "Damien", "", "+33123456704", "", "No", "No", "2025-03-06 10:12:33", "2025-10-06 08:40:05"},
		}, "LANDLINE_NUMBER, WHATSAPP"},
		{"columns about texts", []string{"Name", "SMS Consent Date", "SMS Opt-In Date", "SMS Opt Out", "SMS_BLACKLISTED", "SMS Status", "Phone"}, [][]string{
			{"Ada", "2025-03-03", "2025-03-03", "2025-03-04", "20250305", "2025-03-03", "+1 415 555 0101"},
			{"Bo", "2025-03-04", "2025-03-04", "", "20250306", "2025-03-04", "+1 415 555 0102"},
		}, "Phone"},
		{"values before a header alone", []string{"Name", "Mobile", "Number"}, [][]string{
			{"Ada", "", "+1 415 555 0101"},
			{"Bo", "", "+1 415 555 0102"},
		}, "Number, Mobile"},
		{"landlines by name", []string{"Name", "Festnetz", "Handy", "Firmenzentrale Telefon", "Telefon geschäftlich 2"}, [][]string{
			{"Ada", "030 1234567", "0151 2345678", "030 9999999", ""},
		}, "Handy, Festnetz, Telefon geschäftlich 2, Firmenzentrale Telefon"},
		{"French and Spanish", []string{"Nom", "Fixe", "Portable", "Teléfono fijo", "Préfixe"}, [][]string{
			{"Roux", "01 23 45 67 89", "06 12 34 56 78", "91 123 45 67", "+33"},
		}, "Portable, Fixe, Teléfono fijo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(guessSheet(tc.header, tc.rows, "").phones, ", "); got != tc.want {
				t.Errorf("phone columns %q, want %q", got, tc.want)
			}
		})
	}
}
