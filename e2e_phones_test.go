package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// exportsE2E copies the files names of testdata/from into a new
// directory, and starts a sandbox whose settings a campaign file init
// writes reads, with a token file and the call starts of their own. It
// returns the directory and the sandbox.
func exportsE2E(t *testing.T, from string, names ...string) (string, *sandbox.Server) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join("testdata", from, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), data, 0o600)
	}
	srv := inProcessSandbox(t, dir)
	t.Setenv("CALLRUN_HOME", filepath.Join(dir, "home"))
	return dir, srv
}

// planAndRun plans the campaign file at path offline, checking that the
// plan counts toCall contacts to call, then logs in to the sandbox and
// runs it, which must end with exit 0.
func planAndRun(t *testing.T, path string, toCall int) {
	t.Helper()
	code, out := runAppOut(t, "plan", "--offline", "--format", "json", path)
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	var plan struct {
		Totals map[string]int `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, out)
	}
	if plan.Totals["to_call"] != toCall {
		t.Errorf("plan: %v; want %d to call", plan.Totals, toCall)
	}
	if code, out := runAppOut(t, "auth", "login", "--code", sandbox.DefaultCode, path); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, out)
	}
	if code, out := runAppOut(t, "run", path); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
}

// handCampaign writes a campaign file by hand at dir/campaign.yaml, for
// the sandbox exportsE2E started: one agent, and sheet, the YAML of its
// sheet's entry (file:, fields: and the rest, one key a line, as they
// stand under "  - "). It returns the file's path.
func handCampaign(t *testing.T, dir, sheet string) string {
	t.Helper()
	path := filepath.Join(dir, "campaign.yaml")
	entry := strings.ReplaceAll(strings.TrimSpace(sheet), "\n", "\n    ")
	os.WriteFile(path, []byte(`name: by-hand
service:
  base_url: ${CALLRUN_BASE_URL}
  client_id: ${CALLRUN_CLIENT_ID}
  client_secret: ${CALLRUN_CLIENT_SECRET}
  redirect_uri: http://127.0.0.1:8765/callback
agents:
  - name: Calls
    prompt: "Hello, this is a test call."
sheets:
  - agent: Calls
    `+entry+`
region: US
unsafe_ignore_called_person_hours: true
`), 0o600)
	return path
}

// TestPhoneColumnsEndToEnd takes Outlook's and Google Contacts' exports
// (legacy and 2024; see testdata/phones/README.md) through callrun init, a
// prompt, plan, login and a run against the sandbox, and counts the
// sandbox's ledger: each contact with a line callrun calls is called
// once, at the number its order gives (the mobile before the others,
// Google's mobile in Phone 2 rather than the Work Fax in Phone 1, a
// cell's second number when its first is not callable), and no
// assistant's line, fax, pager, TTY, telex, callback or ISDN number is
// called at all.
func TestPhoneColumnsEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		sheet string
		// placed are the numbers the sandbox must place, each once;
		// never are numbers of the sheet it must not be asked to call.
		placed, never []string
	}{
		{"outlook.csv",
			[]string{"+19175550152", "+12125550154", "+17185550156", "+19175550158", "+12125550160", "+16465550163", "+19175550166", "+12125550167", "+17185550175"},
			// Assistants, faxes, a pager, a TTY, a callback, a telex, an
			// ISDN line; and the lines after each row's first callable one.
			[]string{"+12125550150", "+12125550153", "+12125550155", "+12125550157", "+12125550168",
				"+12125550159", "+17185550161", "+12125550169", "+19175550162", "+19175550174",
				"+12125550170", "+12125550171", "+12125550172", "+12125550173",
				"+12125550151", "+12125550164", "+12125550165", "+19175550176"}},
		{"google.csv",
			[]string{"+13125550181", "+13125550182", "+13125550183", "+13125550185", "+13125550188", "+13125550189", "+13125550190"},
			// Work Fax before the mobile, Pager, Home Fax, Assistant; the
			// UK number first in a cell; the second number of a cell whose
			// first is called.
			[]string{"+13125550180", "+13125550184", "+13125550186", "+13125550187", "+442079460958", "+13125550191"}},
		{"google-2024.csv",
			[]string{"+14155550111", "+14155550112", "+14155550113", "+14155550115", "+14155550118", "+14155550119", "+14155550120"},
			[]string{"+14155550110", "+14155550114", "+14155550116", "+14155550117", "+442079460959", "+14155550121", "+14155550122"}},
	} {
		t.Run(tc.sheet, func(t *testing.T) {
			dir, srv := exportsE2E(t, "phones", tc.sheet)
			if code, out := runAppOut(t, "init", "--offline", filepath.Join(dir, tc.sheet)); code != 0 {
				t.Fatalf("init: exit %d\n%s", code, out)
			}
			path := filepath.Join(dir, "campaign.yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			// What a person adds: the prompt; and, as nobody is phoned, no
			// hours (the test runs at any hour).
			file := strings.Replace(string(data), `"TODO: write the agent's prompt"`, `"Hello, this is a test call."`, 1)
			file = regexp.MustCompile(`(?m)^hours: .*$`).ReplaceAllString(file, "unsafe_ignore_called_person_hours: true")
			os.WriteFile(path, []byte(file), 0o600)

			planAndRun(t, path, len(tc.placed))
			calls := callsByNumber(srv.Calls())
			for _, n := range tc.placed {
				if calls[n] != 1 {
					t.Errorf("%s was asked to be called %d time(s), want once", n, calls[n])
				}
			}
			for _, n := range tc.never {
				if calls[n] != 0 {
					t.Errorf("%s, which must not be called, was asked to be called %d time(s)", n, calls[n])
				}
			}
			if n := len(srv.Calls()); n != len(tc.placed) {
				t.Errorf("the sandbox received %d call starts, want %d: %v", n, len(tc.placed), calls)
			}
		})
	}
}

// TestPhoneColumnMappedByHandNotDialled: a campaign file written by hand
// whose phone_number lists Outlook's "Assistant's Phone" and "Business
// Fax" is not silently changed: plan warns, naming each column and how
// many rows had a number there, plan --strict exits 4, run warns the
// same way; and no number of those columns is called, each row falling
// to its next column.
func TestPhoneColumnMappedByHandNotDialled(t *testing.T) {
	dir, srv := exportsE2E(t, "phones", "outlook.csv")
	path := handCampaign(t, dir, `
file: outlook.csv
fields:
  phone_number: ["Assistant's Phone", "Business Fax", "Primary Phone", "Business Phone"]
`)
	warnings := []string{
		`sheet outlook.csv: phone_number lists column "Assistant's Phone", which is named for an assistant's line: callrun does not call its numbers; 5 row(s) have one there`,
		`sheet outlook.csv: phone_number lists column "Business Fax", which is named for a fax: callrun does not call its numbers; 2 row(s) have one there`,
	}
	code, out := runAppOut(t, "plan", "--offline", path)
	if code != 0 {
		t.Errorf("plan: exit %d, want 0 (it warns)\n%s", code, out)
	}
	for _, w := range warnings {
		if !strings.Contains(out, w) {
			t.Errorf("plan does not warn %q:\n%s", w, out)
		}
	}
	code, out = runAppOut(t, "plan", "--offline", "--strict", path)
	if code != run.ExitInvalidRows || !strings.Contains(out, "plan --strict: phone_number lists 2 column(s) named for a line callrun does not call") {
		t.Errorf("plan --strict: exit %d, want %d naming the columns\n%s", code, run.ExitInvalidRows, out)
	}
	if code, out := runAppOut(t, "auth", "login", "--code", sandbox.DefaultCode, path); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, out)
	}
	code, out = runAppOut(t, "run", path)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, out)
	}
	for _, w := range warnings {
		if !strings.Contains(out, w) {
			t.Errorf("run does not warn %q:\n%s", w, out)
		}
	}
	var placed []string
	for n := range callsByNumber(srv.Calls()) {
		placed = append(placed, n)
	}
	slices.Sort(placed)
	// Grace's primary phone, and the business phones of Ada, Edsger and
	// Donald: their assistants and faxes are passed over.
	if want := []string{"+12125550151", "+12125550154", "+12125550160", "+12125550165"}; !slices.Equal(placed, want) {
		t.Errorf("the sandbox was asked to call %v, want %v", placed, want)
	}
}

// TestFlaggedListCellEndToEnd: a row the CRM flags do not call whose
// phone cell lists several numbers (Google's " ::: ", ";") blocks each of
// them, in every other row that holds one; a row whose first listed
// number is not callable is called at its second; the ledger shows it.
func TestFlaggedListCellEndToEnd(t *testing.T) {
	dir, srv := exportsE2E(t, "phones")
	os.WriteFile(filepath.Join(dir, "crm.csv"), []byte("Name,Phone,Do Not Call\n"+
		"Ann,+1 415-555-0501 ::: +1 415-555-0502,1\n"+ // flagged: both numbers blocked
		"Ben,\"(415) 555-0503; (415) 555-0504\",1\n"+ // flagged: both numbers blocked
		"Cy,+1 415-555-0502,\n"+ // Ann's second number
		"Di,(415) 555-0504,\n"+ // Ben's second number
		"Ed,+44 20 7946 0960 ::: +1 415-555-0505,\n"+ // not callable first: the second
		"Flo,+1 415-555-0506,\n"), 0o600)
	path := handCampaign(t, dir, `
file: crm.csv
fields: {phone_number: Phone, first_name: Name}
do_not_call: {column: Do Not Call}
`)
	planAndRun(t, path, 2)
	calls := callsByNumber(srv.Calls())
	if len(calls) != 2 || calls["+14155550505"] != 1 || calls["+14155550506"] != 1 {
		t.Errorf("the sandbox was asked to call %v, want +14155550505 and +14155550506 once each", calls)
	}
}

// TestCallingCodeColumnEndToEnd: a sheet that keeps the phone's calling
// code in a column of its own beside the number has its numbers written
// without it. Real shapes: a Google Apps Script job-application form
// appends "Nationality", "Country of Residence", "Country Code", "Phone
// Number" to its sheet; an Experian business list's columns are "COUNTRY
// CODE", "PHONE NUMBER" (public repositories found by the code index's
// find_string "\"Country Code\",\"Phone Number\"", ids 39365633546 and
// 44497265085). In a US campaign a UK landline
// written so, "20 7946 0961" beside "44", reads as a valid number in
// Maine: another person. Such a row is not called, and the reason names
// the column; a row whose code agrees is called.
func TestCallingCodeColumnEndToEnd(t *testing.T) {
	dir, srv := exportsE2E(t, "phones")
	os.WriteFile(filepath.Join(dir, "leads.csv"), []byte("Name,Country Code,Phone Number\n"+
		"Ann,44,20 7946 0961\n"+ // +1 207 946 0961 in Maine
		"Ben,+44,2079460962\n"+ // the same, a bare number
		"Cy,1,(212) 555-0163\n"+
		"Di,US,(212) 555-0164\n"+
		"Ed,(+1),415 555 0165\n"+
		"Fay,GB,(212) 555-0166\n"+ // a country named, the number without its code
		"Gil,GB,+1 212 555 0167\n"+ // a country named (an address's?), the number with its code
		"Hal,,415 555 0168\n"), 0o600)
	path := handCampaign(t, dir, `
file: leads.csv
fields: {phone_number: Phone Number, first_name: Name}
`)
	code, out := runAppOut(t, "plan", "--offline", path)
	if !strings.Contains(out, `column "Country Code" says "44" (+44), but the number reads as +12079460961 (+1)`) {
		t.Errorf("plan does not name the calling code column (exit %d):\n%s", code, out)
	}
	planAndRun(t, path, 5)
	calls := callsByNumber(srv.Calls())
	for _, n := range []string{"+12079460961", "+12079460962", "+12125550166"} {
		if calls[n] != 0 {
			t.Errorf("%s, another person's number, was asked to be called %d time(s)", n, calls[n])
		}
	}
	for _, n := range []string{"+12125550163", "+12125550164", "+14155550165", "+12125550167", "+14155550168"} {
		if calls[n] != 1 {
			t.Errorf("%s was asked to be called %d time(s), want once", n, calls[n])
		}
	}
	if n := len(srv.Calls()); n != 5 {
		t.Errorf("the sandbox received %d call starts, want 5: %v", n, calls)
	}
}

// TestAddressCountryColumnEndToEnd: a German sheet whose campaign maps no
// country_column, with a few Austrian numbers written as Austria writes
// them (an export's "Land" column says Österreich): "0664 1234567" reads
// in Germany as a valid landline in Lauterbach (06641), another person's.
// Such a row is not called; a row whose country agrees, is empty, or whose
// number carries its +country is.
func TestAddressCountryColumnEndToEnd(t *testing.T) {
	dir, srv := exportsE2E(t, "phones")
	os.WriteFile(filepath.Join(dir, "kunden.csv"), []byte("Name,Land,Telefon\n"+
		"Anna,Österreich,0664 1234567\n"+ // +49 6641 234567 in Lauterbach
		"Bernd,Deutschland,030 1234567\n"+
		"Clara,,030 1234568\n"+
		"Dora,Schweiz,+49 30 1234569\n"), 0o600)
	path := handCampaign(t, dir, `
file: kunden.csv
fields: {phone_number: Telefon, first_name: Name}
`)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte(strings.Replace(string(data), "region: US", "region: DE", 1)), 0o600)
	code, out := runAppOut(t, "plan", "--offline", path)
	if !strings.Contains(out, `column "Land" says "Österreich", Austria (AT), but the number, written without its country code, reads as +496641234567`) {
		t.Errorf("plan does not name the country column (exit %d):\n%s", code, out)
	}
	planAndRun(t, path, 3)
	calls := callsByNumber(srv.Calls())
	if calls["+496641234567"] != 0 {
		t.Errorf("+496641234567, a number in Lauterbach read from an Austrian mobile, was asked to be called %d time(s)", calls["+496641234567"])
	}
	for _, n := range []string{"+49301234567", "+49301234568", "+49301234569"} {
		if calls[n] != 1 {
			t.Errorf("%s was asked to be called %d time(s), want once", n, calls[n])
		}
	}
	if n := len(srv.Calls()); n != 3 {
		t.Errorf("the sandbox received %d call starts, want 3: %v", n, calls)
	}
}

// TestPlusBeforeNationalNumberEndToEnd: a web form whose phone field
// shows a "+" before the box gets "+(479) 950-5111" from a person in
// Arkansas: grouped as a US number is written, and with its '+' a valid
// mobile in Norway. In a campaign that calls both countries, the row is
// not called (which is meant cannot be told) and the reason says so; a
// Norwegian number grouped as Norway writes it is called.
func TestPlusBeforeNationalNumberEndToEnd(t *testing.T) {
	dir, srv := exportsE2E(t, "phones")
	os.WriteFile(filepath.Join(dir, "form.csv"), []byte("Name,Phone\n"+
		"Ann,+(479) 950-5111\n"+ // +47 99 50 51 11 in Norway
		"Ben,+47 99 50 51 12\n"+
		"Cy,+1 (479) 950-5113\n"), 0o600)
	path := handCampaign(t, dir, `
file: form.csv
fields: {phone_number: Phone, first_name: Name}
`)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte(strings.Replace(string(data), "region: US", "region: US\ncountries: [US, NO]", 1)), 0o600)
	code, out := runAppOut(t, "plan", "--offline", path)
	if !strings.Contains(out, `"+(479) 950-5111" is ambiguous: with its + it is +4799505111, a number in Norway (NO), but its digits are grouped as region US writes +14799505111`) {
		t.Errorf("plan does not call the cell ambiguous (exit %d):\n%s", code, out)
	}
	planAndRun(t, path, 2)
	calls := callsByNumber(srv.Calls())
	if calls["+4799505111"] != 0 || calls["+14799505111"] != 0 {
		t.Errorf("the ambiguous cell was called: %v", calls)
	}
	if len(calls) != 2 || calls["+4799505112"] != 1 || calls["+14799505113"] != 1 {
		t.Errorf("the sandbox was asked to call %v, want +4799505112 and +14799505113 once each", calls)
	}
}
