package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// consentCorpus reads the consent cells CRM exports write, each with the
// evidence callrun reads from it in region US ("" for none).
func consentCorpus(t *testing.T) [][2]string {
	t.Helper()
	fh, err := os.Open(filepath.Join("campaign", "testdata", "consent", "corpus.csv"))
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

// TestConsentRequiredEndToEnd runs the binary over a sheet whose
// consent column holds the corpus (dates in several formats, yes/no
// words, empty, future dates, revoked) with consent required: plan's
// JSON lists every row without evidence as invalid with the column named,
// plan --strict fails on them, and the run calls every row with evidence
// once and no row without it, as the sandbox's ledger shows; report.csv
// carries the evidence as read. A campaign without consent: is told, once
// by plan and once by run, what the law asks and how to map it.
func TestConsentRequiredEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	corpus := consentCorpus(t)
	contacts := e2ePhones(len(corpus))
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 2})

	res := e.run(30*time.Second, "plan", "--offline", e.path)
	if res.code != 0 || strings.Count(res.stdout+res.stderr, "prior express consent") != 1 || !strings.Contains(res.stdout, `consent: {column: "Consent Date", required: true}`) {
		t.Errorf("plan of a campaign without consent: does not say once what the law asks and how to map it: %s", res)
	}

	var sheet strings.Builder
	w := csv.NewWriter(&sheet)
	w.Write([]string{"Contact Id", "First Name", "Phone", "Email", "Consent Date"})
	want := map[string]string{} // E.164 -> evidence
	for i, c := range contacts {
		w.Write([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com", corpus[i][0]})
		want[c.E164] = corpus[i][1]
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(sheet.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	e.appendYAML("consent: {column: Consent Date, required: true}\n")
	none := 0
	for _, v := range want {
		if v == "" {
			none++
		}
	}

	res = e.run(30*time.Second, "plan", "--offline", "--format", "json", e.path)
	var plan struct {
		Totals   map[string]int `json:"totals"`
		Problems []struct {
			Row     int    `json:"row"`
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"problems"`
		Warnings []string `json:"warnings"`
	}
	if res.code != 0 {
		t.Fatalf("plan: %s", res)
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, res.stdout)
	}
	if plan.Totals["invalid"] != none || plan.Totals["to_call"] != len(corpus)-none || len(plan.Problems) != none {
		t.Errorf("plan: totals %v, %d problems; want %d invalid for want of consent, %d to call", plan.Totals, len(plan.Problems), none, len(corpus)-none)
	}
	for _, p := range plan.Problems {
		if p.Field != "consent" || !strings.Contains(p.Message, `column "Consent Date": no consent on record`) || want[contacts[p.Row-2].E164] != "" {
			t.Errorf("plan problem %+v, want a row without evidence, field consent, naming the column", p)
		}
	}
	for _, w := range plan.Warnings {
		if strings.Contains(w, "prior express consent") {
			t.Errorf("plan of a campaign that maps consent still warns: %s", w)
		}
	}
	if res := e.run(30*time.Second, "plan", "--offline", "--strict", e.path); res.code != run.ExitInvalidRows || !strings.Contains(res.stderr, "invalid row") {
		t.Errorf("plan --strict with rows without consent: %s; want exit %d", res, run.ExitInvalidRows)
	}

	if res := e.run(2*time.Minute, "run", e.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	for phone, evidence := range want {
		switch n := l.placed[phone]; {
		case evidence == "" && len(l.byPhone[phone]) > 0:
			t.Errorf("%s has no consent on record but reached the service %d time(s)", phone, len(l.byPhone[phone]))
		case evidence != "" && n != 1:
			t.Errorf("%s has consent %s but was placed %d times", phone, evidence, n)
		}
	}
	rows := e.report()
	e.checkReportAgainstLedger(rows, l)
	for i, r := range rows {
		ev := corpus[i][1]
		if r["consent"] != ev {
			t.Errorf("report row %s (%q): consent %q, want %q", r["row"], corpus[i][0], r["consent"], ev)
		}
		if ev == "" && (r["status"] != "invalid" || !strings.HasPrefix(r["reason"], `column "Consent Date": no consent on record`)) {
			t.Errorf("report row %s (%q): %s, %q; want invalid naming the column", r["row"], corpus[i][0], r["status"], r["reason"])
		}
		if ev != "" && r["status"] != "sent" {
			t.Errorf("report row %s (%q) has consent but is %s", r["row"], corpus[i][0], r["status"])
		}
	}

	// report.html lists the rows without consent under the column, with
	// their cells as written and what to do.
	page, err := os.ReadFile(filepath.Join(e.stateDir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`column &#34;Consent Date&#34;: no consent on record`, "<code>no</code>", "<code>2099-01-01</code>", "record the person&#39;s consent in the CRM"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("report.html does not show %q of the rows without consent", s)
		}
	}

	// A run of a campaign without consent: says so once.
	other := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 50, concurrency: 2})
	other.rename("noconsent")
	res = other.run(time.Minute, "run", other.path)
	if res.code != 0 || strings.Count(res.stdout+res.stderr, "prior express consent") != 1 {
		t.Errorf("run of a campaign without consent: does not say once what the law asks: %s", res)
	}
}

// TestConsentUnknownColumnEndToEnd: a consent column the sheet lacks
// stops plan and run before any call, naming the file, consent.column
// and the column.
func TestConsentUnknownColumnEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: e2ePhones(3), perSecond: 50, concurrency: 2})
	e.appendYAML("consent: {column: Consent Date, required: true}\n")
	for _, args := range [][]string{{"plan", "--offline", e.path}, {"run", e.path}} {
		res := e.run(30*time.Second, args...)
		if res.code != run.ExitUsage || !strings.Contains(res.stderr, "campaign.yaml") || !strings.Contains(res.stderr, `consent.column: sheet`) || !strings.Contains(res.stderr, `has no column \"Consent Date\"`) {
			t.Errorf("%s with an unknown consent column: %s; want exit %d naming the file, consent.column and the column", args[0], res, run.ExitUsage)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("the sandbox received %d calls", n)
	}
}

// TestConsentScopeEndToEnd runs the binary over a Salesforce-shaped
// export of consent records (Contact Point Type, Privacy Consent Status,
// Effective From, Effective To), consent mapped to its Effective From
// date and required, the columns that scope it found by their headers:
// plan names the rows whose consent is to e-mails, has ended, or was
// opted out of; the run calls only the Phone, OptIn, current row and
// the one whose end is still to come, as the sandbox's ledger shows; the
// report says why each other row was not called; and the opt-out of
// calls goes on the store's do-not-call list.
func TestConsentScopeEndToEnd(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	contacts := e2ePhones(5)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 2})
	rows := [][]string{
		// Contact Point Type, Privacy Consent Status, Effective From, Effective To, Capture Source
		{"Phone", "OptIn", "2024-03-05", "", "Web form"},
		{"Email", "OptIn", "2024-03-05", "", "Web form"},
		{"Phone", "OptIn", "2023-01-10", "2024-01-10", "Web form"},
		{"Phone", "OptOut", "2024-03-05", "", "Call centre"},
		{"Phone", "OptIn", "2024-03-05", "2099-12-31", "Web form"},
	}
	var sheet strings.Builder
	w := csv.NewWriter(&sheet)
	w.Write([]string{"Contact Id", "First Name", "Phone", "Email", "Contact Point Type", "Privacy Consent Status", "Effective From", "Effective To", "Capture Source"})
	for i, c := range contacts {
		w.Write(append([]string{c.ID, c.First, c.Raw, strings.ToLower(c.ID) + "@example.com"}, rows[i]...))
	}
	w.Flush()
	if err := os.WriteFile(filepath.Join(e.dir, "contacts.csv"), []byte(sheet.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	e.appendYAML("consent: {column: Effective From, required: true}\n")
	called := map[string]bool{contacts[0].E164: true, contacts[4].E164: true}
	why := map[int]string{
		1: `column "Contact Point Type": no consent to be called on record: column "Contact Point Type" says "Email"`,
		2: `column "Effective To": no consent to be called on record: column "Effective To" says "2024-01-10": the consent ended on 2024-01-10`,
		3: `the consent's status column "Privacy Consent Status" says "OptOut": the contact withdrew consent to be called`,
	}

	res := e.run(30*time.Second, "plan", "--offline", "--format", "json", e.path)
	var plan struct {
		Totals         map[string]int `json:"totals"`
		FlaggedNumbers int            `json:"flagged_numbers"`
	}
	if res.code != 0 {
		t.Fatalf("plan: %s", res)
	}
	if err := json.Unmarshal([]byte(res.stdout), &plan); err != nil {
		t.Fatalf("plan JSON: %v\n%s", err, res.stdout)
	}
	if plan.Totals["to_call"] != 2 || plan.Totals["invalid"] != 2 || plan.Totals["suppressed"] != 1 || plan.FlaggedNumbers != 1 {
		t.Errorf("plan: totals %v, %d flagged; want 2 to call, 2 invalid, 1 suppressed and flagged", plan.Totals, plan.FlaggedNumbers)
	}

	if res := e.run(2*time.Minute, "run", e.path); res.code != 0 {
		t.Fatalf("run: %s", res)
	}
	l := e.ledger()
	l.checkNobodyTwice(t)
	for _, c := range contacts {
		switch n := len(l.byPhone[c.E164]); {
		case called[c.E164] && l.placed[c.E164] != 1:
			t.Errorf("%s has consent to be called, now, but was placed %d times", c.E164, l.placed[c.E164])
		case !called[c.E164] && n > 0:
			t.Errorf("%s has no consent to be called but reached the service %d time(s)", c.E164, n)
		}
	}
	for i, r := range e.report() {
		if want, ok := why[i]; ok && !strings.HasPrefix(r["reason"], want) {
			t.Errorf("report row %s: %s, %q; want a reason starting %q", r["row"], r["status"], r["reason"], want)
		}
	}
	listed := false
	for _, en := range e.dncList(false) {
		listed = listed || en.Number == contacts[3].E164
	}
	if !listed {
		t.Errorf("the number that opted out of calls in its consent status is not on the store's do-not-call list")
	}
}

// TestConsentOfOneLineEndToEnd: a consent column named for one of the
// person's lines ("Mobile Consent") is no consent to call another line of
// the row. Real shape: a CRM export's SQL (public, found by the code
// index's find_string "Mobile Phone Consent", id 7909308884) writes
// "Mobile phone consent Y" or "N" from the consent flags of the person's
// mobile numbers alone, beside their other phone columns. Ann's consent is her mobile's, and phone_number
// tries her Phone first: she is not called at it, and the reason says to
// list Mobile first; Ben, with only a mobile, is called at it.
func TestConsentOfOneLineEndToEnd(t *testing.T) {
	dir, srv := exportsE2E(t, "phones")
	os.WriteFile(filepath.Join(dir, "leads.csv"), []byte("Name,Phone,Mobile,Mobile Consent\n"+
		"Ann,(415) 555-0171,(415) 555-0172,Yes\n"+
		"Ben,,(415) 555-0173,Yes\n"+
		"Cy,(415) 555-0174,(415) 555-0175,No\n"), 0o600)
	path := handCampaign(t, dir, `
file: leads.csv
fields: {phone_number: [Phone, Mobile], first_name: Name}
consent: {column: Mobile Consent, required: true}
`)
	code, out := runAppOut(t, "plan", "--offline", path)
	if !strings.Contains(out, `column "Mobile Consent" records consent to calls to the line of column "Mobile", but the row would be called at column "Phone"`) {
		t.Errorf("plan does not say the consent is the mobile's (exit %d):\n%s", code, out)
	}
	planAndRun(t, path, 1)
	calls := callsByNumber(srv.Calls())
	if len(calls) != 1 || calls["+14155550173"] != 1 {
		t.Errorf("the sandbox was asked to call %v, want +14155550173 once (Ann's landline has no consent)", calls)
	}
}

// TestConsentSignedOneEndToEnd: a consent cell of "-1" or "+1" is no yes.
// The word reading drops signs, so both read as "1"; but -1 is the
// "unknown" of many systems (and Access's true), and a cell callrun
// cannot read is no consent. Only the row whose cell is 1 is called.
func TestConsentSignedOneEndToEnd(t *testing.T) {
	dir, srv := exportsE2E(t, "phones")
	os.WriteFile(filepath.Join(dir, "leads.csv"), []byte("Name,Phone,Consent\n"+
		"Ann,(415) 555-0181,-1\n"+
		"Ben,(415) 555-0182,+1\n"+
		"Cy,(415) 555-0183,1\n"), 0o600)
	path := handCampaign(t, dir, `
file: leads.csv
fields: {phone_number: Phone, first_name: Name}
consent: {column: Consent, required: true}
`)
	code, out := runAppOut(t, "plan", "--offline", path)
	if !strings.Contains(out, `"-1" is neither a date nor a yes`) {
		t.Errorf("plan does not say why -1 is no consent (exit %d):\n%s", code, out)
	}
	planAndRun(t, path, 1)
	calls := callsByNumber(srv.Calls())
	if len(calls) != 1 || calls["+14155550183"] != 1 {
		t.Errorf("the sandbox was asked to call %v, want +14155550183 once", calls)
	}
}
