package campaign

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"
)

// consentCorpus reads testdata/consent/corpus.csv: consent cells as CRM
// exports write them, each with the evidence callrun must read from it
// in region US ("" for none).
func consentCorpus(t *testing.T) [][2]string {
	t.Helper()
	fh, err := os.Open(filepath.Join("testdata", "consent", "corpus.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, r := range recs[1:] {
		out = append(out, [2]string{r[0], r[1]})
	}
	return out
}

// consentNow is the fake clock of the consent tests.
var consentNow = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func TestReadConsentCorpus(t *testing.T) {
	for _, c := range consentCorpus(t) {
		got, why := ReadConsent(c[0], "US", consentNow)
		if got != c[1] {
			t.Errorf("ReadConsent(%q) = %q (%s), want %q", c[0], got, why, c[1])
		}
		if got == "" && why == "" {
			t.Errorf("ReadConsent(%q): no evidence and no reason why", c[0])
		}
	}
}

// TestReadConsentRegionAndFuture: a day and month that could be either
// are read as the sheet's region writes them; a date is in the future
// only once it is not today anywhere on earth.
func TestReadConsentRegionAndFuture(t *testing.T) {
	for _, c := range []struct {
		cell, region string
		now          time.Time
		want         string
	}{
		{"05/03/2024", "US", consentNow, "2024-05-03"},
		{"05/03/2024", "GB", consentNow, "2024-03-05"},
		{"05/03/2024", "DE", consentNow, "2024-03-05"},
		{"05-03-2024", "FR", consentNow, "2024-03-05"},
		{"05.03.2024", "US", consentNow, "2024-03-05"}, // dots are day first everywhere
		{"13/03/2024", "US", consentNow, "2024-03-13"}, // only one reading
		{"03/13/2024", "GB", consentNow, "2024-03-13"},
		{"2026-11-25", "US", consentNow, "2026-11-25"},
		// At 09:00 UTC it is the 25th everywhere, the 26th nowhere yet.
		{"2026-11-26", "US", consentNow, ""},
		// At 10:00 UTC it is the 26th in Kiribati (UTC+14).
		{"2026-11-26", "US", consentNow.Add(time.Hour), "2026-11-26"},
		{"11/27/2026", "US", consentNow.Add(time.Hour), ""},
		{"2024-03-05T25:00:00", "US", consentNow, ""},
		{"3/5/2024 13:30 PM", "US", consentNow, ""},
	} {
		got, why := ReadConsent(c.cell, c.region, c.now)
		if got != c.want {
			t.Errorf("ReadConsent(%q, %s, %s) = %q (%s), want %q", c.cell, c.region, c.now.Format(time.RFC3339), got, why, c.want)
		}
	}
	if _, why := ReadConsent("2099-01-01", "US", consentNow); !strings.Contains(why, "future") {
		t.Errorf("a future date's reason %q does not say so", why)
	}
}

// consentCampaign writes a one-sheet campaign whose sheet holds the
// corpus, one distinct number per cell, with the consent block given.
func consentCampaign(t *testing.T, consent string) (*File, [][2]string) {
	t.Helper()
	dir := t.TempDir()
	corpus := consentCorpus(t)
	var b strings.Builder
	w := csv.NewWriter(&b)
	w.Write([]string{"Phone", "Consent Date"})
	for i, c := range corpus {
		w.Write([]string{fmt.Sprintf("+1212555%04d", 100+i), c[0]})
	}
	w.Flush()
	yaml := "name: c\nagents: [{name: A, prompt: p}]\nsheets:\n  - {file: s.csv, agent: A, fields: {phone_number: Phone}}\n" + consent
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o644)
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte(b.String()), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	return f, corpus
}

func eachContact(t *testing.T, f *File, now time.Time) []Contact {
	t.Helper()
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	cr := f.NewContactReader(nil)
	cr.Now = func() time.Time { return now }
	var out []Contact
	if err := cr.Each(context.Background(), func(c *Contact) error { out = append(out, *c); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConsentRequired: with required, every corpus row without evidence
// is invalid, its reason naming the column and what the cell held, and
// every row with evidence is to call, the evidence read kept beside it;
// without required every row is to call, but those that withdraw
// consent, and the evidence is still read.
func TestConsentRequired(t *testing.T) {
	f, corpus := consentCampaign(t, "consent: {column: Consent Date, required: true}\n")
	cs := eachContact(t, f, consentNow)
	if len(cs) != len(corpus) {
		t.Fatalf("%d contacts for %d corpus rows", len(cs), len(corpus))
	}
	for i, c := range cs {
		want := corpus[i][1]
		if c.Consent != want {
			t.Errorf("row %d %q: consent %q, want %q", c.Row, corpus[i][0], c.Consent, want)
		}
		switch {
		case want != "" && c.Status != ToCall:
			t.Errorf("row %d %q has evidence but is %s: %s", c.Row, corpus[i][0], c.Status, c.Reason)
		case want == "" && (c.Status != Invalid || c.Field != "consent" || c.Column != "Consent Date" || !strings.Contains(c.Reason, "no consent on record")):
			t.Errorf("row %d %q has no evidence but is %s, field %q, column %q: %s", c.Row, corpus[i][0], c.Status, c.Field, c.Column, c.Reason)
		}
	}

	f, _ = consentCampaign(t, "consent: {column: Consent Date}\n")
	for i, c := range eachContact(t, f, consentNow) {
		want := ToCall
		if ConsentRevoked(corpus[i][0]) { // consent withdrawn: never called
			want = Suppressed
		}
		if c.Status != want || c.Consent != corpus[i][1] {
			t.Errorf("not required, row %d %q: %s, consent %q; want %s", c.Row, corpus[i][0], c.Status, c.Consent, want)
		}
	}
	if w := ConsentWarnings(f); len(w) != 0 {
		t.Errorf("a campaign that maps consent is warned: %v", w)
	}
	f, _ = consentCampaign(t, "")
	if w := ConsentWarnings(f); len(w) != 1 || !strings.Contains(w[0], "TCPA") || !strings.Contains(w[0], "consent: {column:") {
		t.Errorf("a campaign without consent: is warned %v, want the law and how to map it", w)
	}
}

// TestConsentPerSheet: a sheet's consent: block overrides the keys it
// sets, and keeps the campaign's others.
func TestConsentPerSheet(t *testing.T) {
	dir := t.TempDir()
	yaml := `name: c
agents: [{name: A, prompt: p}]
consent: {column: Consent Date, required: true}
sheets:
  - {file: a.csv, agent: A, fields: {phone_number: Phone}}
  - {file: b.csv, agent: A, fields: {phone_number: Phone}, consent: {required: false}}
  - {file: c.csv, agent: A, fields: {phone_number: Phone}, consent: {column: Opt In}}
`
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o644)
	os.WriteFile(filepath.Join(dir, "a.csv"), []byte("Phone,Consent Date\n+12125550101,\n+12125550102,2024-01-02\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "b.csv"), []byte("Phone,Consent Date\n+12125550103,\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.csv"), []byte("Phone,Opt In\n+12125550104,no\n+12125550105,Yes\n"), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]Consent{f.SheetConsent(0), f.SheetConsent(1), f.SheetConsent(2)}; got != [3]Consent{{Column: "Consent Date", Required: true}, {Column: "Consent Date"}, {Column: "Opt In", Required: true}} {
		t.Errorf("sheet consent %+v", got)
	}
	var got []string
	for _, c := range eachContact(t, f, consentNow) {
		got = append(got, c.Status+"/"+c.Consent)
	}
	if want := "invalid/ to_call/2024-01-02 to_call/ invalid/ to_call/yes"; strings.Join(got, " ") != want {
		t.Errorf("statuses %q, want %q", strings.Join(got, " "), want)
	}
}

// TestConsentFileProblems: a consent block without a column is refused
// at load, naming the file, line and key; a column the sheet lacks stops
// the campaign before any call, naming consent.column and the column; a
// key the block does not know is refused with the ones it does.
func TestConsentFileProblems(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte("Phone,Consent\n+12125550101,yes\n"), 0o644)
	load := func(consent string) (*File, error) {
		yaml := "name: c\nagents: [{name: A, prompt: p}]\nsheets:\n  - {file: s.csv, agent: A, fields: {phone_number: Phone}}\n" + consent
		path := filepath.Join(dir, "c.yaml")
		os.WriteFile(path, []byte(yaml), 0o644)
		return Load(path, LoadOptions{Offline: true})
	}
	for _, c := range []struct{ consent, want string }{
		{"consent: {required: true}\n", `c.yaml line 5, consent: consent needs the column`},
		{"consent: {column: Consent, requried: true}\n", `unknown key "requried"; did you mean "required"?`},
		{"consent: {column: Consent, required: sure}\n", `line 5`},
	} {
		_, err := load(c.consent)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", strings.TrimSpace(c.consent), err, c.want)
		}
	}
	f, err := load("consent: {column: Consent Date, required: true}\n")
	if err != nil {
		t.Fatal(err)
	}
	err = f.CheckSheets()
	if err == nil || !strings.Contains(err.Error(), `has no column "Consent Date"`) || !strings.Contains(err.Error(), "consent.column: ") || !strings.Contains(err.Error(), "c.yaml") {
		t.Errorf("unknown consent column: %v", err)
	}
}

// TestConsentFromWorkbook: a date of consent in an .xlsx cell, stored as
// Excel's serial number and shown as a date, is read as that date.
func TestConsentFromWorkbook(t *testing.T) {
	dir := t.TempDir()
	book := excelize.NewFile()
	book.SetSheetRow("Sheet1", "A1", &[]any{"Phone", "Consent Date"})
	book.SetCellValue("Sheet1", "A2", "+12125550101")
	book.SetCellValue("Sheet1", "B2", time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC))
	book.SetCellValue("Sheet1", "A3", "+12125550102")
	book.SetCellValue("Sheet1", "B3", time.Date(2024, 3, 6, 14, 30, 0, 0, time.UTC))
	if err := book.SaveAs(filepath.Join(dir, "s.xlsx")); err != nil {
		t.Fatal(err)
	}
	yaml := "name: c\nagents: [{name: A, prompt: p}]\nsheets:\n  - {file: s.xlsx, agent: A, fields: {phone_number: Phone}, region: GB}\nconsent: {column: Consent Date, required: true}\ncountries: [US]\n"
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	cs := eachContact(t, f, consentNow)
	if len(cs) != 2 || cs[0].Consent != "2024-03-05" || cs[0].Status != ToCall || cs[1].Consent != "2024-03-06" || cs[1].Status != ToCall {
		t.Errorf("workbook dates read as %+v", cs)
	}
}

func TestIsConsentHeader(t *testing.T) {
	for h, want := range map[string]bool{
		"Consent Date": true, "Consent": true, "TCPA Consent Date": true, "Opt-In": true, "Opted In": true,
		"OptIn Date": true, "Calls Opt In": true, "Einwilligung": true, "Consentement appel": true, "consented_at": true,
		"Opt Out": false, "Opted Out": false, "Consent Revoked": false, "Consent Withdrawn Date": false, "No Consent": false,
		"Email Opt In": false, "SMS Consent": false, "Consent Source": false, "Do Not Call": false, "Phone": false, "Notes": false,
		// A withdrawal, a refusal or the end of consent is no column of
		// consent: its date is no evidence to call on.
		"Consent withdrawal date": false, "Withdrawal of consent": false, "Revocation of consent": false, "Consent removed": false,
		"Consent cancelled": false, "Consent declined": false, "Call consent refused": false, "Consent expiry": false,
		"Consent Expires": false, "Consent valid until": false, "Consent end date": false, "Widerruf Einwilligung": false,
		"Einwilligung Widerruf Datum": false, "Rétractation consentement": false, "Retirada del consentimiento": false,
		"Intrekking toestemming": false,
		// Permission to be called, as CRMs name it.
		"OK to Call": true, "Contact Allowed": true, "Telefonwerbung erlaubt": true,
	} {
		if got := isConsentHeader(h); got != want {
			t.Errorf("isConsentHeader(%q) = %v, want %v", h, got, want)
		}
	}
}

// TestInitMapsConsent: init maps the column whose header says consent
// or opt-in (the one whose cells read as evidence first), never an
// e-mail opt-in or a revocation (which it maps under do_not_call:); the
// file it writes loads and reads each row's evidence, and a row whose
// consent was revoked is suppressed. A sheet without one gets the
// mapping as a comment.
func TestInitMapsConsent(t *testing.T) {
	header := []string{"First Name", "Phone", "Email Opt In", "Consent Source", "Consent Revoked", "TCPA Consent Date"}
	rows := [][]string{{"Ada", "+12125550101", "yes", "web form", "", "2024-03-05"}, {"Alan", "+12125550102", "no", "", "2024-05-01", ""}}
	var b strings.Builder
	if _, err := WriteInit(&b, InitOptions{Sheet: "s.csv", SheetName: "s.csv", Header: header, Rows: rows, Region: "US"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\nconsent: {column: \"TCPA Consent Date\", required: true}\n") {
		t.Fatalf("init did not map the consent column:\n%s", b.String())
	}
	dir := t.TempDir()
	var sheetText strings.Builder
	w := csv.NewWriter(&sheetText)
	w.Write(header)
	w.WriteAll(rows)
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte(sheetText.String()), 0o644)
	filled := strings.Replace(b.String(), `"TODO: write the agent's prompt"`, `"Hello."`, 1)
	filled = strings.Replace(filled, "region: TODO", "region: US", 1)
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(filled), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		t.Fatalf("init's file: %v\n%s", err, filled)
	}
	f.UnsafeIgnoreCalledPersonHours = true
	cs := eachContact(t, f, consentNow)
	if !strings.Contains(b.String(), "do_not_call: {column: \"Consent Revoked\"}") {
		t.Errorf("init did not map the revocation under do_not_call:\n%s", b.String())
	}
	if len(cs) != 2 || cs[0].Status != ToCall || cs[0].Consent != "2024-03-05" || cs[1].Status != Suppressed || cs[1].DoNotCallColumn != "Consent Revoked" {
		t.Errorf("init's consent mapping read the rows as %+v", cs)
	}

	b.Reset()
	if _, err := WriteInit(&b, InitOptions{Sheet: "s.csv", SheetName: "s.csv", Header: []string{"Phone", "Email Opt In"}, Rows: [][]string{{"+12125550101", "yes"}}, Region: "US"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\n# consent: {column: \"Consent Date\", required: true}\n") || strings.Contains(b.String(), "\nconsent:") {
		t.Errorf("init of a sheet without a consent column:\n%s", b.String())
	}
}

// TestConsentWordsPutTogether: a consent cell that puts a yes, or the
// word for consent, before a word of consent given ("Yes - confirmed",
// "Yes, PEWC", "Zustimmung erteilt") reads as a yes, in a consent cell
// and in a status cell; the word for consent before a no, a refusal or a
// consent not yet given reads as a no; a withdrawal beside any of them
// withdraws; and a cell that says yes and no at once, or puts a negation
// between the words, is no yes: its row is not called.
func TestConsentWordsPutTogether(t *testing.T) {
	for cell, want := range map[string]cellSays{
		"Zustimmung erteilt": saysYes, "Yes - confirmed": saysYes, "Yes, PEWC": saysYes, "Yes (PEWC)": saysYes,
		"YES - CONFIRMED": saysYes, "Yes: Express Written Consent": saysYes, "Yes - Double Opt-In": saysYes,
		"Consent: Yes": saysYes, "Consent - Confirmed": saysYes, "TCPA Consent Given": saysYes, "PEWC: Obtained": saysYes,
		"Ja, bestätigt": saysYes, "Einwilligung: ja": saysYes, "Zustimmung gegeben": saysYes,
		"Oui - confirmé": saysYes, "Consentement: oui": saysYes, "Sí, confirmado": saysYes, "Toestemming gegeven": saysYes,

		// Negated, refused, pending, withdrawn: never a yes.
		"Zustimmung nicht erteilt": saysNo, "Einwilligung nicht erteilt": saysNo, "Zustimmung verweigert": saysWithdrawn,
		"Zustimmung: nein": saysNo, "Zustimmung ausstehend": saysNo, "Consent: No": saysNo, "Consent - Not Given": saysNo,
		"Consent: Not Confirmed": saysNo, "Consent - Unconfirmed": saysNo, "Consentement refusé": saysWithdrawn,

		"Zustimmung widerrufen": saysWithdrawn, "Einwilligung zurückgezogen": saysWithdrawn, "Yes - revoked": saysWithdrawn,
		"Yes, PEWC revoked": saysWithdrawn, "Yes - opted out": saysWithdrawn, "Yes - do not call": saysWithdrawn,
		"Confirmed - withdrawn": saysWithdrawn, "Zustimmung erteilt, widerrufen": saysWithdrawn,

		"No - not confirmed": saysUnclear, "Yes? no": saysUnclear, "Yes - not confirmed": saysUnclear,
		"Yes - unconfirmed": saysUnclear, "Yes - pending": saysUnclear, "Yes, no PEWC": saysUnclear, "No, PEWC": saysUnclear,
		"Not confirmed - yes": saysUnclear, "Keine Zustimmung erteilt": saysUnclear, "Zustimmung nicht gegeben": saysUnclear,
		"Ja, nicht bestätigt": saysUnclear, "Yes confirmed no": saysUnclear, "Confirmed - no": saysUnclear,
		"X confirmed": saysUnclear, "Yes, declined": saysWithdrawn,
		// A yes with a question mark is a question, not consent.
		"Yes?": saysUnclear, "Consent: Yes?": saysUnclear, "Zustimmung erteilt?": saysUnclear, "¿Sí?": saysUnclear,
		"Yes - confirmed?": saysUnclear,
	} {
		checkConsentWord(t, cell, want)
	}
}

// TestConsentWordsOfCRMs: the words CRMs and lead vendors write for
// consent given (a double opt-in, TCPA's express written consent, Zoho's
// Consent - Obtained, the languages' "I agree") read as a yes, in a
// consent cell and in a status cell; a withdrawal or refusal written
// beside them still withdraws or refuses; a status that is neither yet
// (unconfirmed, HubSpot's Not specified, Pipedrive's no_consent) is a
// no, not a withdrawal; a word callrun does not know holds its row.
func TestConsentWordsOfCRMs(t *testing.T) {
	for cell, want := range map[string]cellSays{
		"Double Opt-In": saysYes, "Double Opted In": saysYes, "DOI": saysYes, "Confirmed": saysYes, "CONFIRMED_OPT_IN": saysYes,
		"Single Opt-In": saysYes, "Opt-In Confirmed": saysYes, "opted_in": saysYes, "Express": saysYes, "Express Written": saysYes,
		"Express Consent": saysYes, "Express Written Consent": saysYes, "Prior Express Consent": saysYes,
		"Prior Express Written Consent": saysYes, "PEWC": saysYes, "Consent - Obtained": saysYes, "Obtained": saysYes,
		"Consent Given": saysYes, "Consent Granted": saysYes, "Accepted": saysYes,
		"Bestätigt": saysYes, "DOI bestätigt": saysYes, "Einverstanden": saysYes, "Einwilligung liegt vor": saysYes, "Angemeldet": saysYes,
		"Confirmé": saysYes, "Accepté": saysYes, "Inscrit": saysYes, "Abonné": saysYes,
		"Confirmado": saysYes, "Acepto": saysYes, "Autorizado": saysYes, "Suscrito": saysYes, "Concordo": saysYes, "Consentimento dado": saysYes,
		"Confermato": saysYes, "Acconsento": saysYes, "Do il consenso": saysYes, "Iscritto": saysYes,
		"Bevestigd": saysYes, "Aangemeld": saysYes, "Bekräftat": saysYes, "Bekræftet": saysYes, "Bekreftet": saysYes,
		"Wyrażam zgodę": saysYes, "Potwierdzona": saysYes, "Vahvistettu": saysYes, "Souhlasím": saysYes, "Potvrzeno": saysYes,
		"Onay": saysYes, "Kabul ediyorum": saysYes, "İzin verildi": saysYes,

		"Double Opt-Out": saysWithdrawn, "Opt-Out Confirmed": saysWithdrawn, "Confirmed Opt-Out": saysWithdrawn,
		"PEWC Revoked": saysWithdrawn, "Express consent withdrawn": saysWithdrawn, "DOI widerrufen": saysWithdrawn, "RET": saysWithdrawn,

		// A refusal (Zoho's Consent - Denied, the languages' "I do not
		// consent", a consent API's REJECTED: Octopus Energy's
		// ConsentValue ACCEPTED, REJECTED, UNKNOWN, PENDING,
		// https://developer.octopus.energy/graphql/reference/enums/consentvalue/)
		// is read as a withdrawal.
		"Non acconsento": saysWithdrawn, "Nego il consenso": saysWithdrawn, "Nie wyrażam zgody": saysWithdrawn, "Nesouhlasím": saysWithdrawn,
		"Kabul etmiyorum": saysWithdrawn, "Consent - Denied": saysWithdrawn, "Consent Refused": saysWithdrawn, "DENIED": saysWithdrawn,
		"Declined": saysWithdrawn, "Refused": saysWithdrawn, "REJECTED": saysWithdrawn, "Abgelehnt": saysWithdrawn, "Refusé": saysWithdrawn, "Rechazado": saysWithdrawn,
		"Consent - Not Given": saysNo, "Not given": saysNo, "Brak zgody": saysNo, "No consent": saysNo,
		"Unconfirmed": saysNo, "Not Confirmed": saysNo, "Never Confirmed": saysNo, "Not Specified": saysNo, "Consent - Pending": saysNo,
		"Consent - Awaiting": saysNo, "Consent - Not Responded": saysNo, "no_consent": saysNo, "Seen": saysNo, "NotSeen": saysNo,

		"Implied": saysUnclear, "Blorp": saysUnclear, "Legitimate Interests": saysUnclear, "Double": saysUnclear,
	} {
		checkConsentWord(t, cell, want)
	}
}

// checkConsentWord checks that cell reads as want (saysYes, saysNo,
// saysWithdrawn or saysUnclear) in a consent cell, as a withdrawal, and in
// a status cell.
func checkConsentWord(t *testing.T, cell string, want cellSays) {
	t.Helper()
	ev, why := ReadConsent(cell, "US", consentNow)
	if (ev == "yes") != (want == saysYes) {
		t.Errorf("consent cell %q reads %q (%s); want a yes: %v", cell, ev, why, want == saysYes)
	}
	if ConsentRevoked(cell) != (want == saysWithdrawn) {
		t.Errorf("consent cell %q: withdrawn %v, want %v", cell, !(want == saysWithdrawn), want == saysWithdrawn)
	}
	if got := readScopeCell(scopeStatus, cell, "US").status; got != want {
		t.Errorf("status cell %q reads as %d, want %d", cell, got, want)
	}
}
