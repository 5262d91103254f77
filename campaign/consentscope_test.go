package campaign

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// salesforceConsentSheet is a Salesforce report of Contacts with their
// ContactPointTypeConsent records, one row a record, as its fields are
// labelled (Contact Point Type, Privacy Consent Status, Effective From,
// Effective To, Capture Contact Point Type, Capture Source, Data Use
// Purpose), and the number each row's call would need.
const salesforceConsentSheet = `First Name,Phone,Contact Point Type,Privacy Consent Status,Effective From,Effective To,Capture Contact Point Type,Capture Source,Data Use Purpose
Ada,+12125550101,Phone,OptIn,2024-03-05,,Web,Signup form,Marketing
Bo,+12125550102,Email,OptIn,2024-03-05,,Web,Signup form,Marketing
Cy,+12125550103,Phone,OptIn,2024-03-05,2025-01-31,Web,Signup form,Marketing
Di,+12125550104,Phone,OptOut,2024-03-05,,Phone,Call centre,Marketing
Ed,+12125550105,Phone,OptIn,2024-03-05,2026-12-31,Web,Signup form,Marketing
Fa,+12125550106,Pigeon,OptIn,2024-03-05,,Web,Signup form,Marketing
Gu,+12125550107,Phone,OptIn,2024-03-05,soon,Web,Signup form,Marketing
Hu,+12125550108,Phone,NotSeen,2024-03-05,,Web,Signup form,Marketing
Io,+12125550109,Email,OptOut,2024-03-05,,Web,Signup form,Marketing
Jo,+12125550109,Phone,OptIn,2024-03-05,,Web,Signup form,Service
Ka,+12125550110,Phone,Maybe,2024-03-05,,Web,Signup form,Marketing
Lu,+12125550104,Phone,OptIn,2024-03-05,,Web,Signup form,Service
Mo,+12125550111,SMS,OptOut,2024-03-05,,Web,Signup form,Marketing
Ny,+12125550111,Phone,OptIn,2024-03-05,,Web,Signup form,Service
`

// scopeCampaign writes a one-sheet campaign of sheet with the consent
// block given, and loads it.
func scopeCampaign(t *testing.T, sheet, consent string) *File {
	t.Helper()
	dir := t.TempDir()
	yaml := "name: c\nagents: [{name: A, prompt: p}]\nsheets:\n  - {file: s.csv, agent: A, region: US, fields: {phone_number: Phone, first_name: First Name}}\n" + consent
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(yaml), 0o644)
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte(sheet), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// scopeContacts reads f's contacts as plan does, its sheets' flags
// first, on the clock now.
func scopeContacts(t *testing.T, f *File, now time.Time) map[string]Contact {
	t.Helper()
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cr := f.NewContactReader(sup)
	cr.Now = func() time.Time { return now }
	out := map[string]Contact{}
	if err := cr.Each(context.Background(), func(c *Contact) error { out[c.Fields[FieldFirstName]] = *c; return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConsentScopeSalesforce: with consent mapped to a Salesforce
// export's date column and required, the columns beside it that scope
// consent are read on every row, found by their headers: a row whose
// channel is Email or another than calls, whose Effective To has passed
// on the run's clock, or whose status is not OptIn is not called, its
// reason naming the column; a cell callrun cannot read (a channel
// Pigeon, an end "soon", a status Maybe) holds its row. An OptOut of
// calls or texts withdraws consent for the number in every row, as a
// do-not-call flag does; an OptOut of e-mails does not.
func TestConsentScopeSalesforce(t *testing.T) {
	f := scopeCampaign(t, salesforceConsentSheet, "consent: {column: Effective From, required: true}\n")
	cs := scopeContacts(t, f, consentNow)
	want := map[string]struct {
		status string
		reason string
	}{
		"Ada": {ToCall, ""},
		"Bo":  {Invalid, `column "Contact Point Type" says "Email": the consent is to another channel than calls`},
		"Cy":  {Invalid, `column "Effective To" says "2025-01-31": the consent ended on 2025-01-31`},
		"Di":  {Suppressed, `status column "Privacy Consent Status" says "OptOut": the contact withdrew consent`},
		"Ed":  {ToCall, ""},
		"Fa":  {Invalid, `column "Contact Point Type" says "Pigeon", which callrun cannot read as the channel`},
		"Gu":  {Invalid, `column "Effective To" says "soon", which callrun cannot read as the date`},
		"Hu":  {Invalid, `column "Privacy Consent Status" says "NotSeen": the person has not opted in`},
		"Io":  {Invalid, `column "Contact Point Type" says "Email"`},
		"Jo":  {ToCall, ""},
		"Ka":  {Invalid, `column "Privacy Consent Status" says "Maybe", which callrun cannot read`},
		"Lu":  {Suppressed, `consent to be called was withdrawn in sheet s.csv, row 5 (consent column "Privacy Consent Status" says "OptOut")`},
		"Mo":  {Suppressed, `status column "Privacy Consent Status" says "OptOut"`},
		"Ny":  {Suppressed, `withdrawn in sheet s.csv, row 14`},
	}
	for name, w := range want {
		c, ok := cs[name]
		if !ok {
			t.Errorf("no contact %s", name)
			continue
		}
		if c.Status != w.status || !strings.Contains(c.Reason, w.reason) {
			t.Errorf("%s: %s, %q; want %s, a reason holding %q", name, c.Status, c.Reason, w.status, w.reason)
		}
		if c.Status == Invalid && (c.Field != "consent" || c.Consent != "") {
			t.Errorf("%s: invalid in field %q with consent %q; want field consent and no evidence", name, c.Field, c.Consent)
		}
	}
	if c := cs["Ada"]; c.Consent != "2024-03-05" {
		t.Errorf("Ada's consent %q, want the date", c.Consent)
	}
	// plan lists the columns that scope consent, found by their headers.
	fp, err := f.ReadFlagged(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]string{}
	for _, s := range fp.Signals[0] {
		listed[s.Column] = s.Kind + " " + s.Use + " " + s.Found
	}
	for col, want := range map[string]string{
		"Contact Point Type":     "consent_channel read header",
		"Effective To":           "consent_end read header",
		"Privacy Consent Status": "consent_status read header",
	} {
		if listed[col] != want {
			t.Errorf("plan lists %q as %q, want %q", col, listed[col], want)
		}
	}
	// The run's clock decides what has ended: on the first day of 2027
	// Ed's consent has ended too.
	if c := scopeContacts(t, f, time.Date(2027, 1, 1, 12, 0, 0, 0, time.UTC))["Ed"]; c.Status != Invalid || !strings.Contains(c.Reason, "ended on 2026-12-31") {
		t.Errorf("Ed in 2027: %s, %q; want invalid, his consent ended", c.Status, c.Reason)
	}
	// An end date lasts its day wherever it is still that day, and not
	// past its end anywhere.
	for _, tc := range []struct {
		now   time.Time
		ended bool
	}{
		{time.Date(2026, 12, 31, 9, 59, 0, 0, time.UTC), false},
		{time.Date(2026, 12, 31, 10, 0, 0, 0, time.UTC), true},
	} {
		if c := scopeContacts(t, f, tc.now)["Ed"]; (c.Status == Invalid) != tc.ended {
			t.Errorf("Ed at %s: %s, %q; ended %v", tc.now, c.Status, c.Reason, tc.ended)
		}
	}
}

// TestConsentScopeNamed: the consent: block names the columns that
// scope consent (channel_column, end_column, status_column) where their
// headers say nothing callrun reads; a column it names that the sheet
// lacks stops the sheet, naming the key; and without required, a row
// whose consent is out of scope is called with no evidence, but an opt-out
// of calls still is not; a column found by its header is taken out of
// the reading by do_not_call: ignore:; a withdrawal in the consent column of a row of
// consent to e-mails keeps no other row of its number from being called.
func TestConsentScopeNamed(t *testing.T) {
	sheet := "First Name,Phone,Agreed,Medium,Until,Opt\n" +
		"Ada,+12125550101,2024-03-05,Phone,,OptIn\n" +
		"Bo,+12125550102,2024-03-05,Email,,OptIn\n" +
		"Cy,+12125550103,2024-03-05,Phone,2025-01-31,OptIn\n" +
		"Di,+12125550104,2024-03-05,Phone,,OptOut\n"
	f := scopeCampaign(t, sheet, "consent: {column: Agreed, required: true, channel_column: Medium, end_column: Until, status_column: Opt}\n")
	cs := scopeContacts(t, f, consentNow)
	for name, want := range map[string]string{"Ada": ToCall, "Bo": Invalid, "Cy": Invalid, "Di": Suppressed} {
		if cs[name].Status != want {
			t.Errorf("named columns, %s: %s, %q; want %s", name, cs[name].Status, cs[name].Reason, want)
		}
	}
	f = scopeCampaign(t, sheet, "consent: {column: Agreed, channel_column: Medium, end_column: Until, status_column: Opt}\n")
	cs = scopeContacts(t, f, consentNow)
	for name, want := range map[string]string{"Ada": ToCall, "Bo": ToCall, "Cy": ToCall, "Di": Suppressed} {
		if cs[name].Status != want {
			t.Errorf("not required, %s: %s, %q; want %s", name, cs[name].Status, cs[name].Reason, want)
		}
	}
	if c := cs["Bo"]; c.Consent != "" {
		t.Errorf("Bo's consent to e-mails is read as evidence %q", c.Consent)
	}
	// A withdrawal in the consent column itself, on a row of consent to
	// e-mails, is no withdrawal of consent to be called, when the channel
	// column says it is the consent's.
	withdrawn := "First Name,Phone,Consent,Consent Channel\n" +
		"Ada,+12125550101,revoked,Email\n" +
		"Bo,+12125550101,2024-03-05,Phone\n" +
		"Cy,+12125550102,revoked,Phone\n" +
		"Di,+12125550102,2024-03-05,Phone\n"
	cs = scopeContacts(t, scopeCampaign(t, withdrawn, "consent: {column: Consent, required: true}\n"), consentNow)
	for name, want := range map[string]string{"Ada": Invalid, "Bo": ToCall, "Cy": Invalid, "Di": Suppressed} {
		if cs[name].Status != want {
			t.Errorf("withdrawn in the consent column, %s: %s, %q; want %s", name, cs[name].Status, cs[name].Reason, want)
		}
	}
	// A lead's channel found by its header ("Channel", "Sales Channel")
	// sets no withdrawal aside: Ada's revoked holds Bo's number too.
	sales := strings.Replace(withdrawn, "Consent Channel", "Sales Channel", 1)
	cs = scopeContacts(t, scopeCampaign(t, sales, "consent: {column: Consent, required: true}\n"), consentNow)
	for name, want := range map[string]string{"Ada": Invalid, "Bo": Suppressed, "Cy": Invalid, "Di": Suppressed} {
		if cs[name].Status != want {
			t.Errorf("withdrawn beside a lead's channel, %s: %s, %q; want %s", name, cs[name].Status, cs[name].Reason, want)
		}
	}
	// A column found by its header that is something else is taken out of
	// the reading by do_not_call: ignore:.
	lead := "First Name,Phone,Consent Date,Channel\nAda,+12125550101,2024-03-05,Referral\n"
	if c := scopeContacts(t, scopeCampaign(t, lead, "consent: {column: Consent Date, required: true}\n"), consentNow)["Ada"]; c.Status != Invalid || c.Column != "Channel" {
		t.Errorf("a Channel of Referral: %s, column %q, %q; want invalid, naming the column", c.Status, c.Column, c.Reason)
	}
	ignored := "consent: {column: Consent Date, required: true}\ndo_not_call: {ignore: [{column: Channel, reason: where the lead came from}]}\n"
	if c := scopeContacts(t, scopeCampaign(t, lead, ignored), consentNow)["Ada"]; c.Status != ToCall {
		t.Errorf("a Channel ignored: %s, %q; want to call", c.Status, c.Reason)
	}
	f = scopeCampaign(t, sheet, "consent: {column: Agreed, required: true, channel_column: Chanel}\n")
	err := f.CheckSheets()
	if err == nil || !strings.Contains(err.Error(), "channel_column") || !strings.Contains(err.Error(), "Chanel") {
		t.Errorf("a channel_column the sheet lacks: %v", err)
	}
}

// TestConsentScopeHeader: the headers the CRMs' consent exports write
// for a consent's channel, end and status are read as such; those of how
// consent was captured, its ids, its source, another channel's consent,
// and a contract's end are not; the channels and statuses their cells
// write are read as what they say.
func TestConsentScopeHeader(t *testing.T) {
	for h, want := range map[string]scopeKind{
		"Contact Point Type":         scopeChannel,
		"ContactPointType":           scopeChannel,
		"Channel":                    scopeChannel,
		"Communication Channel":      scopeChannel,
		"Kanal":                      scopeChannel,
		"Effective To":               scopeEnd,
		"EffectiveTo":                scopeEnd,
		"EffectiveToDate":            scopeEnd,
		"Consent Expires":            scopeEnd,
		"Valid Until":                scopeEnd,
		"Expiry Date":                scopeEnd,
		"Privacy Consent Status":     scopeStatus,
		"PrivacyConsentStatus":       scopeStatus,
		"Consent Status":             scopeStatus,
		"Opt-In Status":              scopeStatus,
		"Capture Contact Point Type": scopeNone,
		"CaptureContactPointType":    scopeNone,
		"Capture Source":             scopeNone,
		"Engagement Channel Type ID": scopeNone,
		"Email Consent Expires":      scopeNone,
		"SMS Consent Status":         scopeNone,
		"Contract End Date":          scopeNone,
		"Effective From":             scopeNone,
		"Data Use Purpose":           scopeNone,
		"Lead Status":                scopeNone,
	} {
		if got := consentScopeHeader(h); got != want {
			t.Errorf("%q reads as %v, want %v", h, got, want)
		}
	}
	for cell, want := range map[string]consentChannelSays{
		"Phone": channelCalls, "Call": channelCalls, "Telefon": channelCalls, "Email; Phone": channelCalls,
		"Email": channelOther, "MailingAddress": channelOther, "Social": channelOther, "Web": channelOther,
		"SMS": channelTexts, "Text": channelTexts, "WhatsApp": channelTexts,
		"": channelUnknown, "Pigeon": channelUnknown, "Email; Pigeon": channelUnknown,
		// A phone line by its kind or its short name is the number itself:
		// calls, unless the cell names another channel beside it.
		"Mobile": channelCalls, "Cell": channelCalls, "Cell Phone": channelCalls, "Tel": channelCalls, "Telephone": channelCalls,
		"Voice": channelCalls, "Handy": channelCalls, "Mobil": channelCalls, "Portable": channelCalls, "Móvil": channelCalls,
		"Celular": channelCalls, "Cellulare": channelCalls, "Mobiel": channelCalls, "GSM": channelCalls, "Tlf": channelCalls,
		"Landline": channelCalls, "Mobile; Email": channelCalls, "Telemóvel": channelCalls, "Komórka": channelCalls,
		"Kännykkä": channelCalls, "Cep": channelCalls, "ARAMA": channelCalls,
		"Mobile SMS": channelTexts, "Cell Text": channelTexts, "MESAJ": channelTexts,
		"MobilePush": channelOther, "Mobile Email": channelOther, "Double Opt-In": channelOther,
		"Mobile App": channelUnknown, "MobileConnect": channelUnknown, "Mobile Pigeon": channelUnknown,
		// A phone line beside its fax, as a letterhead gives them, names
		// the phone line; a fax alone or beside another channel does not.
		"Tel/Fax": channelCalls, "Tel / Fax": channelCalls, "Tel. + Fax": channelCalls, "Fax/Tel": channelCalls,
		"Phone/Fax": channelCalls, "Telefon/Fax": channelCalls, "Handy/Telefax": channelCalls, "Tél/Télécopie": channelCalls,
		"Fax": channelOther, "Email/Fax": channelOther, "Fax SMS": channelTexts, "Tel/Fax/Email": channelOther,
		"Mobile/Email": channelOther,
	} {
		if got := readChannelCell(cell); got != want {
			t.Errorf("channel cell %q reads as %d, want %d", cell, got, want)
		}
	}
	// The statuses of Salesforce (OptIn, OptOut, Seen, NotSeen), Dynamics
	// 365 and HubSpot (Opted in, Opted out, Not opted in or out).
	for cell, want := range map[string]cellSays{
		"OptIn": saysYes, "Opted in": saysYes, "granted": saysYes,
		"OptOut": saysWithdrawn, "Opted out": saysWithdrawn, "Unsubscribed": saysWithdrawn,
		"Seen": saysNo, "NotSeen": saysNo, "Not opted in or out": saysNo, "": saysNo, "Denied": saysWithdrawn, "Declined": saysWithdrawn, "Not Responded": saysNo,
		"Maybe": saysUnclear, "Active": saysUnclear,
	} {
		if got := readScopeCell(scopeStatus, cell, "US").status; got != want {
			t.Errorf("status cell %q reads as %d, want %d", cell, got, want)
		}
	}
}

// TestInitMapsConsentScope: callrun init on a Salesforce export of
// consent records maps its status as the evidence (no other column holds
// it) and the columns that scope it, Contact Point Type and Effective To,
// beside it; on a sheet with a date of consent and a status, the date is
// the evidence and the status a scope. The file it writes calls the
// Phone, OptIn, current rows whose number no other row opts out of.
func TestInitMapsConsentScope(t *testing.T) {
	lines := strings.Split(strings.TrimSpace(salesforceConsentSheet), "\n")
	header := strings.Split(lines[0], ",")
	var rows [][]string
	for _, l := range lines[1:] {
		rows = append(rows, strings.Split(l, ","))
	}
	var b strings.Builder
	if _, err := WriteInit(&b, InitOptions{Sheet: "s.csv", SheetName: "s.csv", Header: header, Rows: rows, Region: "US"}); err != nil {
		t.Fatal(err)
	}
	want := "\nconsent: {column: \"Privacy Consent Status\", required: true, channel_column: \"Contact Point Type\", end_column: \"Effective To\"}\n"
	if !strings.Contains(b.String(), want) {
		t.Fatalf("init of a Salesforce consent export does not write %s:\n%s", want, b.String())
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "s.csv"), []byte(salesforceConsentSheet), 0o644)
	filled := strings.Replace(b.String(), `"TODO: write the agent's prompt"`, `"Hello."`, 1)
	os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(filled), 0o644)
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		t.Fatalf("init's file: %v\n%s", err, filled)
	}
	f.UnsafeIgnoreCalledPersonHours = true
	var called []string
	for _, c := range scopeContactsList(t, f, consentNow) {
		if c.Status == ToCall {
			called = append(called, c.Phone)
		}
	}
	if strings.Join(called, " ") != "+12125550101 +12125550105 +12125550109" {
		t.Errorf("init's mapping calls %v; want Ada's, Ed's and Jo's numbers only (Jo's opted out of e-mails only; Lu's and Ny's numbers opted out of calls and texts on other rows)", called)
	}

	b.Reset()
	if _, err := WriteInit(&b, InitOptions{Sheet: "s.csv", SheetName: "s.csv", Header: []string{"Phone", "Consent Status", "Consent Date", "Channel"},
		Rows: [][]string{{"+12125550101", "Opted in", "2024-03-05", "Phone"}}, Region: "US"}); err != nil {
		t.Fatal(err)
	}
	if want := "\nconsent: {column: \"Consent Date\", required: true, channel_column: \"Channel\", status_column: \"Consent Status\"}\n"; !strings.Contains(b.String(), want) {
		t.Errorf("init of a sheet with a date and a status of consent does not write %s:\n%s", want, b.String())
	}
}

// scopeContactsList is scopeContacts in sheet order.
func scopeContactsList(t *testing.T, f *File, now time.Time) []Contact {
	t.Helper()
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cr := f.NewContactReader(sup)
	cr.Now = func() time.Time { return now }
	var out []Contact
	if err := cr.Each(context.Background(), func(c *Contact) error { out = append(out, *c); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestConsentScopeEndInstant: an end of consent given as an instant with
// its zone (Salesforce's DateTime) ends consent at that instant, not at
// the end of its day: at 06:30 UTC, consent that ended at 05:00 UTC that
// day is none, one that ends at 23:00 UTC still holds.
func TestConsentScopeEndInstant(t *testing.T) {
	sheet := "First Name,Phone,Contact Point Type,Privacy Consent Status,Effective From,Effective To\n" +
		"Ada,+12125550101,Phone,OptIn,2025-01-05T00:00:00.000+0000,2026-11-29T05:00:00.000+0000\n" +
		"Bo,+12125550102,Phone,OptIn,2025-01-05T00:00:00.000+0000,2026-11-29T23:00:00.000+0000\n" +
		"Cy,+12125550103,Phone,OptIn,2025-01-05T00:00:00.000+0000,2026-11-29T00:01:00Z\n"
	f := scopeCampaign(t, sheet, "consent: {column: Effective From, required: true}\n")
	cs := scopeContacts(t, f, time.Date(2026, 11, 29, 6, 30, 0, 0, time.UTC))
	for name, want := range map[string]string{"Ada": Invalid, "Bo": ToCall, "Cy": Invalid} {
		if cs[name].Status != want {
			t.Errorf("%s: %s, %q; want %s", name, cs[name].Status, cs[name].Reason, want)
		}
	}
}

// TestConsentScopePhoneWords: under required, a consent record whose
// channel names the phone line as exports write it (Mobile, Cell, Tel,
// Handy, Portable, Móvil, Celular, Cellulare) is consent to be called;
// one of texts or an app on the mobile is not. A consent cell that says
// Double Opt-In is consent given, to the channel its row names: beside
// Email it is no consent to be called. A withdrawal beside the phone
// still withdraws, and a word callrun does not know still holds its row.
func TestConsentScopePhoneWords(t *testing.T) {
	sheet := "First Name,Phone,Contact Point Type,Privacy Consent Status,Effective From\n" +
		"Ada,+12125550101,Mobile,OptIn,2024-03-05\n" +
		"Bo,+12125550102,Cell,OptIn,2024-03-05\n" +
		"Cy,+12125550103,Tel,OptIn,2024-03-05\n" +
		"Di,+12125550104,Handy,OptIn,2024-03-05\n" +
		"Ed,+12125550105,Portable,OptIn,2024-03-05\n" +
		"Fa,+12125550106,Móvil,OptIn,2024-03-05\n" +
		"Gu,+12125550107,Celular,OptIn,2024-03-05\n" +
		"Hu,+12125550108,Cellulare,OptIn,2024-03-05\n" +
		"Io,+12125550109,Mobile SMS,OptIn,2024-03-05\n" +
		"Jo,+12125550110,MobilePush,OptIn,2024-03-05\n" +
		"Ka,+12125550111,Mobile,Double Opt-In,2024-03-05\n" +
		"Lu,+12125550112,Email,Double Opt-In,2024-03-05\n" +
		"Mo,+12125550113,Mobile,Blorp,2024-03-05\n" +
		"Ny,+12125550114,Cell,OptOut,2024-03-05\n"
	cs := scopeContacts(t, scopeCampaign(t, sheet, "consent: {column: Effective From, required: true}\n"), consentNow)
	for name, want := range map[string]string{
		"Ada": ToCall, "Bo": ToCall, "Cy": ToCall, "Di": ToCall, "Ed": ToCall, "Fa": ToCall, "Gu": ToCall, "Hu": ToCall,
		"Io": Invalid, "Jo": Invalid, "Ka": ToCall, "Lu": Invalid, "Mo": Invalid, "Ny": Suppressed,
	} {
		if c := cs[name]; c.Status != want {
			t.Errorf("%s: %s, %q; want %s", name, c.Status, c.Reason, want)
		}
	}
	// Double Opt-In in the consent column itself: its channel is the
	// row's, and beside Email it is none.
	doi := "First Name,Phone,Consent,Consent Channel\n" +
		"Ada,+12125550101,Double Opt-In,Phone\n" +
		"Bo,+12125550102,Double Opt-In,Email\n" +
		"Cy,+12125550103,Double Opt-In,Mobile\n" +
		"Di,+12125550104,Double Opt-Out,Mobile\n" +
		"Ed,+12125550105,Double Opt-Out,Email\n" +
		"Fa,+12125550105,Express Written Consent,Cell\n" +
		"Gu,+12125550106,Blorp,Phone\n" +
		"Hu,+12125550107,Non acconsento,Cellulare\n"
	cs = scopeContacts(t, scopeCampaign(t, doi, "consent: {column: Consent, required: true}\n"), consentNow)
	for name, want := range map[string]string{
		"Ada": ToCall, "Bo": Invalid, "Cy": ToCall, "Di": Invalid, "Ed": Invalid, "Fa": ToCall, "Gu": Invalid, "Hu": Invalid,
	} {
		if c := cs[name]; c.Status != want {
			t.Errorf("consent column, %s: %s, %q; want %s", name, c.Status, c.Reason, want)
		}
	}
	if c := cs["Bo"]; c.Column != "Consent Channel" || !strings.Contains(c.Reason, `"Email": the consent is to another channel than calls`) {
		t.Errorf("Bo's double opt-in to e-mails: column %q, %q; want the channel column's reason", c.Column, c.Reason)
	}
	if c := cs["Ada"]; c.Consent != "yes" {
		t.Errorf("Ada's double opt-in to the phone reads as evidence %q, want yes", c.Consent)
	}
}
