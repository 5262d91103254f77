package campaign

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/sheet"
)

// TestReadFlagCell: a flag cell reads as yes, as no, or as neither, in the
// languages of the table; a row whose cell reads neither is not called.
func TestReadFlagCell(t *testing.T) {
	for _, cell := range []string{"1", "true", "TRUE", "True", "yes", "Yes", "YES", "y", "Y", "x", "X", "checked", "CHECKED", " 1 ", "\tyes ", "✓", "✔", "☑",
		// A check mark typed on a phone or pasted from a chat carries the
		// emoji variation selector (U+FE0F); ✅ and ☒ are check marks too.
		"✔\ufe0f", "✓\ufe0f", "☑\ufe0f", "✅", "☒",
		// PostgreSQL's COPY writes booleans as t and f.
		"t", "T", "on", "ON",
		// Dynamics 365 writes its "Do not allow Phone Calls" as Do Not Allow or Allow.
		"Do Not Allow", "do not allow",
		// A 0/1 column with blanks, written by pandas, holds 1.0 and 0.0.
		"1.0",
		// Other languages, and a do-not-call phrase in a flag column.
		"ja", "Ja", "J", "oui", "sí", "Si", "sim", "sì", "tak", "kyllä", "ano", "evet", "wahr", "vrai", "Nicht anrufen", "Do not call", "DNC",
		// The day the flag was set ("DNC Date", "Consent Withdrawal Date").
		"2024-01-02", "1/2/2024", "02.01.2024", "2024-01-02T10:00:00Z", "Jan 2, 2024"} {
		if got := readFlagCell(cell); got != saysYes {
			t.Errorf("readFlagCell(%q) = %v; want a yes", cell, got)
		}
	}
	for _, cell := range []string{"", " ", "0", "false", "FALSE", "no", "No", "n", "N", "unchecked", "0 ", "off", "Allow", "0.0", "null", "☐",
		"nein", "Nein", "non", "não", "nee", "nej", "nei", "nie", "ei", "ne", "hayır", "falsch", "faux", "falso", "zulassen"} {
		if got := readFlagCell(cell); got != saysNothing {
			t.Errorf("readFlagCell(%q) = %v; want a no", cell, got)
		}
	}
	for _, cell := range []string{"not checked", "10", "yes please", "-", "1.5", "11.0", "Pending", "see notes", "maybe",
		// E is Turkish for yes (evet) and Finnish for no (ei): neither.
		"E", "e"} {
		if got := readFlagCell(cell); got != saysUnclear {
			t.Errorf("readFlagCell(%q) = %v; want neither yes nor no", cell, got)
		}
	}
}

func TestDoNotCallHeader(t *testing.T) {
	for _, h := range []string{
		"Do Not Call", "DoNotCall", "do_not_call", "DNC", "DNC Flag", "Phone DNC", "DND", "DND Calls", "DND Calls and SMS",
		"Don't Call", "Do Not Contact", "Do Not Disturb", "No Call", "Opted out of calls", "Phone Opt Out",
		"Unsubscribed from calls", "Call Opt-Out", "Voice Opted Out", "HasOptedOutOfPhone",
		// Microsoft Dynamics 365's contact export.
		"Do not allow Phone Calls",
		// Texts go to the number called: an opt-out of texts, or a block
		// list of them (Brevo's), is one of calls too.
		"DND SMS", "SMS Opt-Out", "SMS_BLACKLISTED", "WHATSAPP_BLACKLISTED", "Blacklisted", "Blocked",
		// The table's other languages.
		"Nicht anrufen", "Keine Anrufe", "Werbewiderspruch Telefon", "Telefon gesperrt", "Robinsonliste", "robinsonlist", "Ne pas appeler",
		"Bloctel", "Opposition démarchage téléphonique", "No llamar", "Lista Robinson", "Não ligar", "Non chiamare",
		"Registro delle opposizioni", "Niet bellen", "Bel-me-niet", "Ring inte", "NIX-Telefon", "Ring ikke", "Ikke ring",
		"Reservert mot telefonsalg", "Nie dzwonić", "Älä soita", "Soittokielto", "Nevolat", "Aramayın", "Rahatsız etmeyin",
		// An opt-out that names no channel may be one of calls: callrun
		// asks rather than call (plan stops on it until it is mapped or
		// ignored).
		"Unsubscribed", "Opted Out",
		// Texts, marketing and solicitation (Salesforce's Individual),
		// and consent to be called withdrawn or refused, in any language.
		"Do Not Text", "Do Not SMS", "No Texts", "No Telemarketing", "Don't Market", "Don't Solicit", "Forget this Individual",
		"Consent Revoked", "Consent Withdrawn", "Revoked", "Withdrawal of consent", "Consent Withdrawal", "Revocation of consent",
		"Consent removed", "Consent cancelled", "Consent declined", "Call consent refused", "Widerruf Einwilligung",
		"Einwilligung widerrufen", "Widerruf", "Rétractation consentement", "Retirada del consentimiento", "Intrekking toestemming",
		"Deceased",
		// A call center's disposition: remove from the list.
		"Remove", "Remove from list",
	} {
		if !DoNotCallHeader(h) {
			t.Errorf("DoNotCallHeader(%q) = false; want a do-not-call flag", h)
		}
	}
	for _, h := range []string{
		"", "Email Opt Out", "HasOptedOutOfEmail", "Fax Opt Out", "HasOptedOutOfFax", "DND Email", "Unsubscribed from all email",
		"Email Consent Withdrawn", "Consent Date", "Consent Expires", "OK to Call",
		"Phone", "Mobile", "Do Not Call Reason", "DNC Date", "DoNotCallDate", "Do Not Call Updated By",
		"Lead Source", "Recall date", "Mailing Country", "Do not allow Bulk Emails", "Do not allow Emails",
		"EMAIL_BLACKLISTED", "Newsletter abgemeldet", "E-Mail gesperrt", "Désinscrit newsletter", "Retail Phone", "Einwilligung Telefon",
		"Nicht anrufen Grund", "Telefon", "Labels", "Tags", "Status",
		// "remove" is a whole word of a header, never letters of one.
		"Removed Tags", "RemovedAt",
	} {
		if DoNotCallHeader(h) {
			t.Errorf("DoNotCallHeader(%q) = true; want no do-not-call flag", h)
		}
	}
}

// TestDoNotCallAboutHeader: the date or the reason of a do-not-call flag
// or of consent withdrawn is read as the flag by a sheet without one;
// a column of other dates, reasons or channels is not.
func TestDoNotCallAboutHeader(t *testing.T) {
	for _, h := range []string{"Do Not Call Reason", "DNC Date", "DoNotCallDate", "Do Not Call Updated By", "Nicht anrufen Grund",
		"Date Added to DNC", "Do Not Call Date", "Call Opt-Out Date", "Consent Revoked Date", "Consent withdrawal date",
		"Einwilligung Widerruf Datum", "Consent Withdrawn Date"} {
		if !doNotCallAboutHeader(h) {
			t.Errorf("doNotCallAboutHeader(%q) = false; want the date or reason of a flag", h)
		}
	}
	for _, h := range []string{"", "Do Not Call", "Consent Date", "Consent Source", "Email Opt Out Date", "Lead Source",
		"Recall date", "Unsubscribed from all email", "Consent Expires", "Last Modified Date"} {
		if doNotCallAboutHeader(h) {
			t.Errorf("doNotCallAboutHeader(%q) = true; want none", h)
		}
	}
}

// TestWithdrawalColumnsAreNoConsent: a column of consent withdrawn, or
// of the date or the reason of a do-not-call flag, is never read as
// consent: init maps it under do_not_call: (a date there says do not
// call), and a campaign that maps neither it nor a flag is refused until
// it does, whatever the row's number.
func TestWithdrawalColumnsAreNoConsent(t *testing.T) {
	for _, h := range []string{"Consent withdrawal date", "Withdrawal of consent", "Widerruf Einwilligung", "DNC Date", "Do Not Call Reason"} {
		header := []string{"First Name", "Last Name", "Phone", "Email", h}
		sheet := strings.Join(header, ",") + "\nAda,L,(212) 555-0100,a@x.com,2024-06-01\nBob,L,(212) 555-0101,b@x.com,\n"
		var b strings.Builder
		if _, err := WriteInit(&b, InitOptions{Sheet: "s.csv", SheetName: "s.csv", Header: header, Rows: [][]string{{"Ada", "L", "(212) 555-0100", "a@x.com", "2024-06-01"}}, Region: "US"}); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), "\nconsent:") || !strings.Contains(b.String(), fmt.Sprintf("do_not_call: {column: %q}", h)) {
			t.Errorf("%s: init did not map it under do_not_call:, or mapped it as consent:\n%s", h, b.String())
		}
		// Unmapped: plan stops on it.
		f, err := dncCampaign(t, map[string]string{"a.csv": sheet}, "", "")
		if err != nil {
			t.Fatal(err)
		}
		p, sup := signalPlan(t, f)
		if err := sup.SignalProblems(f); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("in column %q", h)) {
			t.Errorf("%s unmapped: the campaign is not refused (%v); plan %+v", h, err, p.Totals)
		}
		// Mapped: Ada is not called, Bob is.
		f, err = dncCampaign(t, map[string]string{"a.csv": sheet}, "", fmt.Sprintf("do_not_call: {column: %q}", h))
		if err != nil {
			t.Fatal(err)
		}
		p, sup = signalPlan(t, f)
		if err := sup.SignalProblems(f); err != nil || p.Totals.ToCall != 1 || p.Totals.Suppressed+p.Totals.Invalid != 1 {
			t.Errorf("%s mapped: %v, plan %+v; want Ada not called, Bob called", h, err, p.Totals)
		}
	}
}

// dncCampaign writes a campaign over sheets (file name -> body) with the
// YAML lines top at the top level and sheet under its first sheet, and
// loads it.
func dncCampaign(t *testing.T, sheets map[string]string, top, sheet string) (*File, error) {
	t.Helper()
	dir := t.TempDir()
	var names []string
	for name, body := range sheets {
		names = append(names, name)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var b strings.Builder
	b.WriteString("name: dnc\nagents:\n  - {name: A, prompt: Hello.}\nsheets:\n")
	slices.Sort(names)
	for i, name := range names {
		b.WriteString("  - file: " + name + "\n    agent: A\n    fields: {phone_number: Phone}\n")
		if i == 0 && sheet != "" {
			b.WriteString("    " + sheet + "\n")
		}
	}
	b.WriteString("region: US\nunsafe_ignore_called_person_hours: true\n" + top)
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		return nil, err
	}
	return f, f.CheckSheets()
}

// TestDoNotCallConfig: do_not_call: is checked when the file is loaded,
// and a column a sheet lacks stops plan and run before any call, naming
// the campaign file and do_not_call.
func TestDoNotCallConfig(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,Do Not Call\n+14155550101,1\n"}
	for _, tc := range []struct{ top, sheet, want string }{
		{"do_not_call: {}\n", "", "do_not_call names no column"},
		{"do_not_call: {column: X, columns: [Y]}\n", "", "both column: and columns:"},
		{"do_not_call: {columns: [X, x]}\n", "", `lists the column "x" twice`},
		{"do_not_call: {columns: [\" \"]}\n", "", "lists an empty column name"},
		{"do_not_call: {colum: X}\n", "", "colum"},
		{"", "do_not_call: {}", "sheets[0].do_not_call"},
		{"do_not_call: {column: DoNotCall}\n", "", `do_not_call: sheet`},
		{"", "do_not_call: {columns: [Do Not Call, DND]}", `has no column "DND"`},
	} {
		_, err := dncCampaign(t, sheets, tc.top, tc.sheet)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "campaign.yaml") {
			t.Errorf("top %q, sheet %q: error %v; want a *FileError naming campaign.yaml and holding %q", tc.top, tc.sheet, err, tc.want)
		}
	}
}

// TestDoNotCallRows: a row whose flag column says yes is suppressed with
// the column in its reason, whatever else is wrong with it; a sheet's
// own do_not_call: replaces the campaign's; plan counts the flagged rows
// and warns of a flag column left unmapped.
func TestDoNotCallRows(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Phone,Do Not Call,DND\n" +
			"+14155550101,1,\n" + // flagged
			"+14155550102,0,\n" +
			"not a number,yes,\n" + // flagged: not invalid, never called anyway
			"+14155550104,, x \n" + // DND only
			"+14155550105,no,\n",
		"b.csv": "Phone,DNC\n+14155550201,TRUE\n+14155550202,\n",
	}
	f, err := dncCampaign(t, sheets, "do_not_call: {column: DNC}\n", "do_not_call: {columns: [Do Not Call, DND]}")
	if err != nil {
		t.Fatal(err)
	}
	type got struct{ status, col, reason string }
	var rows []got
	cr := f.NewContactReader(nil)
	if err := cr.Each(context.Background(), func(c *Contact) error {
		rows = append(rows, got{c.Status, c.DoNotCallColumn, c.Reason})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []got{
		{Suppressed, "Do Not Call", `column "Do Not Call" says "1": the contact is marked do not call`},
		{ToCall, "", ""},
		{Suppressed, "Do Not Call", `column "Do Not Call" says "yes": the contact is marked do not call`},
		{Suppressed, "DND", `column "DND" says "x": the contact is marked do not call`},
		{ToCall, "", ""},
		{Suppressed, "DNC", `column "DNC" says "TRUE": the contact is marked do not call`},
		{ToCall, "", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("read %d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i := range want {
		if rows[i] != want[i] {
			t.Errorf("row %d: %+v, want %+v", i, rows[i], want[i])
		}
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Totals.Suppressed != 4 || plan.Totals.DoNotCallFlag != 4 || plan.Totals.ToCall != 3 || plan.Totals.Invalid != 0 || plan.UnmappedDoNotCall != 0 {
		t.Errorf("plan totals %+v, unmapped %d; want 4 suppressed, all flagged, 3 to call", plan.Totals, plan.UnmappedDoNotCall)
	}
	var text bytes.Buffer
	plan.WriteText(&text)
	if !strings.Contains(text.String(), "(3 marked do not call in the sheet)") || strings.Contains(text.String(), "reads as a do-not-call flag") {
		t.Errorf("plan text:\n%s", text.String())
	}

	// Nothing mapped: the rows that say yes are not called, and plan
	// refuses the campaign, naming each column, two rows and the ways on.
	f, err = dncCampaign(t, sheets, "", "")
	if err != nil {
		t.Fatal(err)
	}
	plan, err = BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Totals.Suppressed != 3 || plan.Totals.DoNotCallFlag != 0 || plan.Totals.Invalid != 1 || plan.Totals.ToCall != 3 || plan.UnmappedDoNotCall != 4 {
		t.Errorf("unmapped: plan totals %+v, unmapped %d; want the 3 rows that say yes and are no worse not called, 1 invalid, 4 rows unmapped", plan.Totals, plan.UnmappedDoNotCall)
	}
	var problems []string
	for _, p := range plan.SheetProblems {
		problems = append(problems, p.Key+": "+p.Msg)
	}
	for _, want := range []string{
		`sheets[0].file: sheet a.csv: in column "Do Not Call", 2 row(s) say do not call (row 2: "1", row 4: "yes"), and the campaign does not map the column`,
		`sheets[0].file: sheet a.csv: in column "DND", 1 row(s) say do not call (row 5: "x")`,
		`sheets[1].file: sheet b.csv: in column "DNC", 1 row(s) say do not call (row 2: "TRUE")`,
		`Map it (do_not_call: {column: "DNC"}, beside any column mapped there already; its rows are then not called), or ignore it on purpose: do_not_call: {ignore: [{column: "DNC", reason: "why these rows may be called"}]}`,
	} {
		if !strings.Contains(strings.Join(problems, "\n"), want) {
			t.Errorf("plan's problems lack %q:\n%s", want, strings.Join(problems, "\n"))
		}
	}
	if len(problems) != 3 {
		t.Errorf("plan has %d problems, want one a column:\n%s", len(problems), strings.Join(problems, "\n"))
	}
}

// TestInitMapsDoNotCall: init maps every column whose header says do not
// call under do_not_call:, not under "Not sent", and leaves another
// channel's opt-out alone; the file it writes loads.
func TestInitMapsDoNotCall(t *testing.T) {
	for _, tc := range []struct {
		header          []string
		want, notSent   string
		wantNoDoNotCall bool
	}{
		{[]string{"Phone", "First Name", "Do Not Call", "Email Opt Out"}, `    do_not_call: {column: "Do Not Call"}`, `    # Not sent: "Email Opt Out"`, false},
		{[]string{"Phone", "DND", "Opted out of calls", "Notes"}, `    do_not_call: {columns: ["DND", "Opted out of calls"]}`, `    # Not sent: "Notes"`, false},
		{[]string{"Phone", "Unsubscribed from all email"}, "", `    # Not sent: "Unsubscribed from all email"`, true},
	} {
		var b bytes.Buffer
		notes, err := WriteInit(&b, InitOptions{Sheet: "leads.csv", SheetName: "leads.csv", Header: tc.header, Region: "US"})
		if err != nil {
			t.Fatal(err)
		}
		file := b.String()
		if tc.wantNoDoNotCall {
			if strings.Contains(file, "do_not_call:") {
				t.Errorf("%v: init mapped a do-not-call column:\n%s", tc.header, file)
			}
		} else if !strings.Contains(file, tc.want+"    #") || !strings.Contains(strings.Join(notes, "\n"), "Do-not-call columns:") {
			t.Errorf("%v: init file lacks %q, or its notes the flag (%q):\n%s", tc.header, tc.want, notes, file)
		}
		if !strings.Contains(file, tc.notSent+"\n") {
			t.Errorf("%v: init file lacks %q:\n%s", tc.header, tc.notSent, file)
		}
		dir := t.TempDir()
		row := make([]string, len(tc.header))
		row[0] = "+14155550132"
		os.WriteFile(filepath.Join(dir, "leads.csv"), []byte(strings.Join(tc.header, ",")+"\n"+strings.Join(row, ",")+"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte(strings.Replace(file, `"TODO: write the agent's prompt"`, `"Hello."`, 1)), 0o644)
		f, err := Load(filepath.Join(dir, "campaign.yaml"), LoadOptions{Offline: true, Getenv: env(nil)})
		if err == nil {
			err = f.CheckSheets()
		}
		if err != nil {
			t.Errorf("%v: the file init wrote does not load: %v", tc.header, err)
		}
	}
}

// TestDoNotCallTopLevelNeedsEverySheet: the campaign's do_not_call:
// applies to every sheet, so a sheet without the column is an error that
// says how to give it its own.
func TestDoNotCallTopLevelNeedsEverySheet(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone\n+14155550101\n", "b.csv": "Phone,Do Not Call\n+14155550201,1\n"}
	_, err := dncCampaign(t, sheets, "do_not_call: {column: Do Not Call}\n", "")
	if err == nil || !strings.Contains(err.Error(), `do_not_call: sheet`) || !strings.Contains(err.Error(), "give this sheet its own under sheets[0]") {
		t.Errorf("top-level do_not_call over a sheet without the column: %v", err)
	}
	f, err := dncCampaign(t, sheets, "do_not_call: {column: Do Not Call}\n", "do_not_call: {column: Phone}")
	if err != nil {
		t.Fatalf("the sheet's own do_not_call: %v", err)
	}
	if got := f.SheetDoNotCall(0).Entries(); len(got) != 1 || got[0].Column != "Phone" {
		t.Errorf("sheet 0's columns: %q, want its own", got)
	}
}

// TestDoNotCallUnclearCells: a row whose do-not-call cell says neither
// yes nor no is not called, and plan says how many there are, with the
// first.
func TestDoNotCallUnclearCells(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,Do Not Call\n+14155550101,Pending\n+14155550102,1\n+14155550103,0\n+14155550104,see notes\n+14155550105,off\n"}
	f, err := dncCampaign(t, sheets, "do_not_call: {column: Do Not Call}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Totals.ToCall != 2 || plan.Totals.DoNotCallFlag != 1 || plan.Totals.Suppressed != 3 || plan.UnclearDoNotCall != 2 {
		t.Errorf("plan totals %+v, %d unclear; want 2 to call, 3 suppressed, 1 of them flagged, 2 unclear", plan.Totals, plan.UnclearDoNotCall)
	}
	want := `sheet a.csv: 2 cell(s) of the do-not-call column "Do Not Call" say neither yes nor no (row 2: "Pending"), and their rows are not called`
	if !strings.Contains(strings.Join(plan.Warnings, "\n"), want) {
		t.Errorf("plan warnings lack %q:\n%s", want, strings.Join(plan.Warnings, "\n"))
	}
}

// TestDoNotCallFlagHoldsForTheNumber: a number a do_not_call: column
// flags in one row is suppressed in every row of every sheet of the
// campaign, before the flagged row and after it, however it is written,
// with a reason that names the flagged sheet, row and column; plan
// counts those rows as the reader judges them.
func TestDoNotCallFlagHoldsForTheNumber(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Phone,Do Not Call\n" +
			"(415) 555-0101,\n" + // row 2: X, flagged in row 5
			"+14155550102,0\n" + // row 3: Y, called
			"415-555-0103,\n" + // row 4: Z, flagged in b.csv
			"+1 415 555 0101,1\n" + // row 5: X flagged
			"4155550101,no\n", // row 6: X again
		"b.csv": "Phone,DND\n" +
			"+14155550101,\n" + // X
			"(415) 555-0103,yes\n" + // Z flagged
			"+14155550104,\n", // W, called
	}
	f, err := dncCampaign(t, sheets, "do_not_call: {column: DND}\n", "do_not_call: {column: Do Not Call}")
	if err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		sheet, row int
		status     string
		reason     string
	}
	var rows []got
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		rows = append(rows, got{c.Sheet, c.Row, c.Status, c.Reason})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	fromA5 := `the number is marked do not call in sheet a.csv, row 5 (column "Do Not Call" says "1")`
	fromB3 := `the number is marked do not call in sheet b.csv, row 3 (column "DND" says "yes")`
	want := []got{
		{0, 2, Suppressed, fromA5},
		{0, 3, ToCall, ""},
		{0, 4, Suppressed, fromB3},
		{0, 5, Suppressed, `column "Do Not Call" says "1": the contact is marked do not call`},
		{0, 6, Suppressed, fromA5},
		{1, 2, Suppressed, fromA5},
		{1, 3, Suppressed, `column "DND" says "yes": the contact is marked do not call`},
		{1, 4, ToCall, ""},
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows:\n%+v\nwant\n%+v", rows, want)
	}
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if plan.Totals.Suppressed != 6 || plan.Totals.DoNotCallFlag != 6 || plan.Totals.ToCall != 2 || plan.Totals.Duplicate != 0 || plan.FlaggedNumbers != 2 {
		t.Errorf("plan totals %+v, %d flagged numbers; want 6 suppressed, all for the flag, 2 to call, 2 numbers", plan.Totals, plan.FlaggedNumbers)
	}
	var text bytes.Buffer
	plan.WriteText(&text)
	if !strings.Contains(text.String(), "Marked do not call (or consent withdrawn) in the sheets: 2 number(s)") {
		t.Errorf("plan text does not say run puts the flagged numbers on the list:\n%s", text.String())
	}
}

// TestConsentRevokedHoldsForTheNumber: a consent cell that withdraws
// consent (revoked, opted out, withdrawn) or refuses it (denied,
// declined) holds for the number as a
// do_not_call: yes does: every other row of every sheet with it is
// suppressed, before the withdrawing row and after it, with a reason
// naming the sheet, row and consent column; a plain no flags nothing.
// The withdrawing row itself stays invalid when consent is required,
// and is suppressed when it is not; plan counts each row as the reader
// judges it, and FlaggedNumbers holds the withdrawn numbers.
func TestConsentRevokedHoldsForTheNumber(t *testing.T) {
	for _, cell := range []string{"revoked", "Withdrawn", " opted  out ", "Opt-Out", "optout", "OptedOut", "opted-out", "Unsubscribed",
		// A withdrawal among other words, a date among them.
		"withdrawn 2024-06-01", "Revoked: 2024-06-01", "Consent withdrawn", "Yes - do not call", "2024-03-05 DNC",
		"ja, widerrufen 2024", "x (withdrawn)", "Opted out by phone",
		// A refusal, alone or among other words, is read as a withdrawal.
		"denied", "declined", "Consent - Denied", "Declined by phone", "abgelehnt", "non acconsento"} {
		if !ConsentRevoked(cell) {
			t.Errorf("ConsentRevoked(%q) = false, want true", cell)
		}
	}
	for _, cell := range []string{"", "no", "N", "false", "0", "none", "not given", "no_consent", "Consent - Not Responded", "yes", "2024-01-02", "opted in",
		"2024-03-01T10:00:00Z", "3/4/2024 2:30 PM", "web form", "Opted in 2024-01-02", "Jan 2, 2024"} {
		if ConsentRevoked(cell) {
			t.Errorf("ConsentRevoked(%q) = true: it is no evidence, not a withdrawal", cell)
		}
	}
	sheets := map[string]string{
		"a.csv": "Phone,Consent\n" +
			"(415) 555-0101,2024-01-02\n" + // row 2: X, withdrawn in row 5
			"+14155550102,no\n" + // row 3: Y, no evidence only
			"415-555-0103,yes\n" + // row 4: Z, withdrawn in b.csv row 3
			"+1 415 555 0101,Revoked\n" + // row 5: X withdraws
			"4155550101,3/4/2024\n", // row 6: X again
		"b.csv": "Phone,Consent\n" +
			"+14155550101,\n" + // row 2: X
			"(415) 555-0103,Opted Out\n" + // row 3: Z withdraws
			"+14155550102,2024-05-06\n" + // row 4: Y again
			"+14155550104,2024-05-06\n" + // row 5: W
			"+14155550101,withdrawn\n", // row 6: X withdraws again
	}
	fromA5 := `consent to be called was withdrawn in sheet a.csv, row 5 (consent column "Consent" says "Revoked")`
	fromB3 := `consent to be called was withdrawn in sheet b.csv, row 3 (consent column "Consent" says "Opted Out")`
	type got struct {
		sheet, row int
		status     string
		reason     string
	}
	for _, c := range []struct {
		required bool
		want     []got
		totals   Counts
	}{
		{true, []got{
			{0, 2, Suppressed, fromA5},
			{0, 3, Invalid, `no consent on record: the cell says "no"; a row is called only with a date of consent or a yes in this column (consent.required)`},
			{0, 4, Suppressed, fromB3},
			{0, 5, Invalid, `no consent on record: the cell says "Revoked"; a row is called only with a date of consent or a yes in this column (consent.required)`},
			{0, 6, Suppressed, fromA5},
			{1, 2, Suppressed, fromA5},
			{1, 3, Invalid, `no consent on record: the cell says "Opted Out"; a row is called only with a date of consent or a yes in this column (consent.required)`},
			{1, 4, ToCall, ""},
			{1, 5, ToCall, ""},
			{1, 6, Invalid, `no consent on record: the cell says "withdrawn"; a row is called only with a date of consent or a yes in this column (consent.required)`},
		}, Counts{Rows: 10, ToCall: 2, Invalid: 4, Suppressed: 4, DoNotCallFlag: 4}},
		{false, []got{
			{0, 2, Suppressed, fromA5},
			{0, 3, ToCall, ""},
			{0, 4, Suppressed, fromB3},
			{0, 5, Suppressed, `consent column "Consent" says "Revoked": the contact withdrew consent to be called`},
			{0, 6, Suppressed, fromA5},
			{1, 2, Suppressed, fromA5},
			{1, 3, Suppressed, `consent column "Consent" says "Opted Out": the contact withdrew consent to be called`},
			{1, 4, Duplicate, "the number appears in an earlier row"},
			{1, 5, ToCall, ""},
			{1, 6, Suppressed, `consent column "Consent" says "withdrawn": the contact withdrew consent to be called`},
		}, Counts{Rows: 10, ToCall: 2, Duplicate: 1, Suppressed: 7, DoNotCallFlag: 7}},
	} {
		f, err := dncCampaign(t, sheets, fmt.Sprintf("consent: {column: Consent, required: %t}\n", c.required), "")
		if err != nil {
			t.Fatal(err)
		}
		sup, err := f.LoadSuppression(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var rows []got
		if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
			rows = append(rows, got{c.Sheet, c.Row, c.Status, c.Reason})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rows, c.want) {
			t.Errorf("required %t, rows:\n%+v\nwant\n%+v", c.required, rows, c.want)
		}
		plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: time.Now()})
		if err != nil {
			t.Fatal(err)
		}
		if plan.Totals != c.totals || plan.FlaggedNumbers != 2 {
			t.Errorf("required %t: plan totals %+v, %d flagged numbers; want %+v, 2 numbers", c.required, plan.Totals, plan.FlaggedNumbers, c.totals)
		}
		fl := sup.Flagged()
		if len(fl) != 2 || fl[0].Number != "+14155550101" || fl[0].Row != 5 || !fl[0].Consent || fl[0].Column != "Consent" || fl[1].Number != "+14155550103" || fl[1].Sheet != 1 || fl[1].Row != 3 {
			t.Errorf("required %t: flagged %+v; want X from a.csv row 5 and Z from b.csv row 3, both consent", c.required, fl)
		}
	}
}

// TestDoNotCallFlagCellNoCallReads: a flagged row whose phone cell its own
// call could not use (two numbers in one cell, an extension) still flags
// the numbers the cell holds, as a suppression file's entry would: the
// person asked not to be called, and another row with one of those
// numbers is not called.
func TestDoNotCallFlagCellNoCallReads(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Phone,Do Not Call\n" +
			"415-555-0601 / 415-555-0602,1\n" + // row 2: two numbers, flagged
			"415-555-0603 x12,1\n" + // row 3: an extension, flagged
			"415 555 0604,0\n", // row 4: called
		"b.csv": "Phone,DND\n" +
			"+14155550601,\n" +
			"(415) 555-0602,\n" +
			"415.555.0603,\n",
	}
	f, err := dncCampaign(t, sheets, "do_not_call: {column: DND}\n", "do_not_call: {column: Do Not Call}")
	if err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var called []string
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		if c.Status == ToCall {
			called = append(called, fmt.Sprintf("%d/%d %s", c.Sheet, c.Row, c.Phone))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(called, []string{"0/4 +14155550604"}) {
		t.Errorf("rows to call %v; want only sheet 0 row 4: the others hold numbers the flagged rows hold", called)
	}
	var numbers []string
	for _, fl := range sup.Flagged() {
		numbers = append(numbers, fl.Number)
	}
	if !slices.Equal(numbers, []string{"+14155550601", "+14155550602", "+14155550603"}) {
		t.Errorf("flagged numbers %v; want the three the flagged cells hold", numbers)
	}
}

// TestDoNotCallFlagEveryPhoneColumn: a flagged row's numbers are read as
// its own call would read them, each of its phone columns, with its
// country column: each number it holds, one written in its country's
// national form included, is suppressed in the rows that call it.
func TestDoNotCallFlagEveryPhoneColumn(t *testing.T) {
	dir := t.TempDir()
	sheet := "Mobile,Phone,Country,DNC\n" +
		"+14155550101,,US,\n" + // row 2: called
		"+14155550102,(415) 555-0199,US,1\n" + // row 3: flagged, two numbers
		"+1 415 555 0199,,,\n" + // row 4: its second
		"(415) 555-0102,,US,\n" + // row 5: its first
		",030 1234567,DE,yes\n" + // row 6: flagged, a German number
		"+49 30 1234567,,DE,\n" // row 7: that number
	yml := "name: dnc\nagents:\n  - {name: A, prompt: Hello.}\nsheets:\n  - file: a.csv\n    agent: A\n" +
		"    fields: {phone_number: [Mobile, Phone]}\n    country_column: Country\n    countries: [US, DE]\n" +
		"region: US\ndo_not_call: {column: DNC}\nunsafe_ignore_called_person_hours: true\n"
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte(sheet), 0o644)
	os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte(yml), 0o644)
	f, err := Load(filepath.Join(dir, "campaign.yaml"), LoadOptions{Offline: true, Getenv: env(nil)})
	if err == nil {
		err = f.CheckSheets()
	}
	if err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []FlaggedNumber{
		{Number: "+14155550102", Row: 3, Column: "DNC", Cell: "1"},
		{Number: "+14155550199", Row: 3, Column: "DNC", Cell: "1"},
		{Number: "+49301234567", Row: 6, Column: "DNC", Cell: "yes"},
	}
	if got := sup.Flagged(); !slices.Equal(got, want) {
		t.Errorf("flagged %+v, want %+v", got, want)
	}
	var statuses []string
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		statuses = append(statuses, c.Status)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(statuses, []string{ToCall, Suppressed, Suppressed, Suppressed, Suppressed, Suppressed}) {
		t.Errorf("statuses %v; want the first row called, the others suppressed", statuses)
	}
}

// TestDoNotCallFlagsUnread: a sheet that maps do_not_call: and cannot be
// read to its end (a quote never closed) leaves the flags after the break
// unknown, and FlagsUnread says so, naming the sheet and row; the flags
// before it are read.
func TestDoNotCallFlagsUnread(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,Do Not Call\n" +
		"+14155550101,1\n" +
		"+14155550102,\n" +
		"\"+14155550103,\n+14155550104,1\n+14155550105,\n"} // row 4 opens a quote it never closes
	f, err := dncCampaign(t, sheets, "do_not_call: {column: Do Not Call}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var se *sheet.Error
	if err := sup.FlagsUnread(); !errors.As(err, &se) || filepath.Base(se.File) != "a.csv" || se.Row != 4 {
		t.Errorf("FlagsUnread: %v; want the sheet error of a.csv row 4", err)
	}
	if got := sup.Flagged(); len(got) != 1 || got[0].Number != "+14155550101" {
		t.Errorf("flagged %+v; want row 2's number", got)
	}
	f, err = dncCampaign(t, map[string]string{"a.csv": "Phone,Do Not Call\n+14155550101,1\n"}, "do_not_call: {column: Do Not Call}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	if sup, err = f.LoadSuppression(context.Background()); err != nil || sup.FlagsUnread() != nil {
		t.Errorf("a sheet read to its end: %v, FlagsUnread %v", err, sup.FlagsUnread())
	}
}

// TestDoNotCallFlagNumberUnread: a row that asks not to call its number
// (a do_not_call: yes, a consent withdrawn, a flag that reads neither yes
// nor no) whose phone cell holds five digits or more and reads as no
// number at all (a letter O for a zero) stops plan and run: the person
// may be on another row under a number callrun can read. The first few
// such cells are named with their sheet, row and columns, the rest
// counted by sheet. A phone cell of fewer digits ("N/A", "123") names
// nobody and stops nothing.
func TestDoNotCallFlagNumberUnread(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Phone,Do Not Call,Consent\n" +
			"(212) 555-01O0,true,\n" + // row 2: flagged, a letter O
			"(212) 555-0100,,\n" + // row 3: the same person, it may be
			"N/A,1,\n" + // row 4: flagged, no number
			"123,yes,\n" + // row 5: flagged, too few digits for one
			"555-12OO-99,,revoked\n" + // row 6: consent withdrawn, unread
			"(212) 555-O1O1,maybe,\n" + // row 7: neither yes nor no, unread
			"+14155550101,1,\n", // row 8: flagged, read
		"b.csv": "Phone,Do Not Call,Consent\n" +
			"(415) 555-01O1,1,\n(415) 555-01O2,1,\n(415) 555-01O3,1,\n(415) 555-01O4,1,\n(415) 555-01O5,1,\n(415) 555-01O6,1,\n",
	}
	f, err := dncCampaign(t, sheets, "do_not_call: {column: Do Not Call}\nconsent: {column: Consent}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	p, sup := signalPlan(t, f)
	err = sup.SignalProblems(f)
	var fe *FileError
	if !errors.As(err, &fe) || len(fe.Problems) != 6 {
		t.Fatalf("SignalProblems: %v; want a FileError of 6 problems (5 cells named, b.csv's 4 more)", err)
	}
	for _, want := range []string{
		`sheet a.csv, row 2: it is marked do not call (column "Do Not Call" says "true"), but its phone column "Phone" says "(212) 555-01O0", which reads as no phone number`,
		`sheet a.csv, row 6: its consent column "Consent" says "revoked": consent to be called was withdrawn, but its phone column "Phone" says "555-12OO-99"`,
		`sheet a.csv, row 7: its do-not-call column "Do Not Call" says "maybe", neither yes nor no, but its phone column "Phone" says "(212) 555-O1O1"`,
		`sheet b.csv, row 2: it is marked do not call`,
		`sheet b.csv, row 3: it is marked do not call`,
		`sheet b.csv: 4 more phone cell(s)`,
		`Correct the number in the sheet`,
		`suppression file (suppress:)`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("SignalProblems lacks %q:\n%v", want, err)
		}
	}
	for _, pr := range fe.Problems {
		if pr.Key != "sheets[0].file" && pr.Key != "sheets[1].file" || pr.Line == 0 {
			t.Errorf("problem at key %q line %d; want the sheet's file: key and its line", pr.Key, pr.Line)
		}
		if strings.Contains(pr.Msg, `"N/A"`) || strings.Contains(pr.Msg, `"123"`) || strings.Contains(pr.Msg, "row 8") {
			t.Errorf("a cell that names nobody, or a number read, is a problem: %s", pr.Msg)
		}
	}
	if len(p.SheetProblems) != 6 || p.UnnumberedDoNotCall != 9 {
		t.Errorf("plan: %d sheet problems, %d unnumbered; want 6 and 9:\n%+v", len(p.SheetProblems), p.UnnumberedDoNotCall, p.SheetProblems)
	}

	// Without them, nothing stops: the flagged "N/A" and "123" rows are
	// suppressed, the others called.
	sheets = map[string]string{"a.csv": "Phone,Do Not Call,Consent\nN/A,1,\n123,yes,\n(212) 555-0100,,\n"}
	if f, err = dncCampaign(t, sheets, "do_not_call: {column: Do Not Call}\nconsent: {column: Consent}\n", ""); err != nil {
		t.Fatal(err)
	}
	p, sup = signalPlan(t, f)
	if err := sup.SignalProblems(f); err != nil || len(p.SheetProblems) != 0 || p.UnnumberedDoNotCall != 0 {
		t.Errorf("flagged rows whose phone cell names nobody: %v, plan problems %+v", err, p.SheetProblems)
	}
	if got := rowStatuses(t, f, sup); !slices.Equal(got, []string{Suppressed, Suppressed, ToCall}) {
		t.Errorf("statuses %v; want the two flagged rows suppressed, the third to call", got)
	}
}

// TestDoNotCallRowWithMoreFieldsHoldsItsNumbers: a row with more fields
// than the header (a comma not in quotes) cannot be lined up with the
// columns, so whether its flag says do not call is unknown: every number
// it holds is held, and the same person's other rows are not called. A
// sheet with no column that says do not call holds nothing for it.
func TestDoNotCallRowWithMoreFieldsHoldsItsNumbers(t *testing.T) {
	sheetText := "Phone,Name,Do Not Call\n+14155550101,Ada,\n+14155550102,Bob,\n" +
		"+1 415 555 0101,Lovelace, Ada,yes\n+14155550101,Ada again,\n"
	f, err := dncCampaign(t, map[string]string{"a.csv": sheetText}, "", "do_not_call: {column: Do Not Call}")
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	got := rowStatuses(t, f, sup)
	if want := []string{Suppressed, ToCall, Invalid, Suppressed}; !slices.Equal(got, want) {
		t.Errorf("rows %v; want %v: the number of the row that cannot be lined up is held", got, want)
	}
	plain := "Phone,Name\n+14155550101,Ada\n+1 415 555 0101,Lovelace, Ada\n+14155550101,Ada again\n"
	f, err = dncCampaign(t, map[string]string{"a.csv": plain}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, sup = signalPlan(t, f)
	if got, want := rowStatuses(t, f, sup), []string{ToCall, Invalid, Duplicate}; !slices.Equal(got, want) {
		t.Errorf("a sheet without do-not-call columns: rows %v; want %v", got, want)
	}
}

// TestDoNotCallFlagOfARowWithANUL: a row that a NUL byte in one of its
// cells makes invalid (past the first bytes, which make a file binary)
// still says do not call for its number: the same person's other row,
// before it or after it, is suppressed, not called.
func TestDoNotCallFlagOfARowWithANUL(t *testing.T) {
	var b strings.Builder
	b.WriteString("Phone,Name,Do Not Call\n+14155550101,Ada,\n")
	for n := 0; b.Len() <= 4<<10; n++ {
		fmt.Fprintf(&b, "+1212555%04d,Filler %d,\n", n, n)
	}
	b.WriteString("+1 415 555 0101,Ad\x00a,yes\n+14155550101,Ada again,\n")
	f, err := dncCampaign(t, map[string]string{"a.csv": b.String()}, "", "do_not_call: {column: Do Not Call}")
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	got := rowStatuses(t, f, sup)
	if n := len(got); got[0] != Suppressed || got[n-2] != Invalid || got[n-1] != Suppressed {
		t.Errorf("the number's rows: %s, the flagged row with a NUL %s, after it %s; want suppressed, invalid, suppressed", got[0], got[n-2], got[n-1])
	}
}
