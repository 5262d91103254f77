package campaign

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestDoNotCallForms: do_not_call: takes one column, several, a list of
// columns with or without values, and ignore: beside them; each mistake
// is a problem of the campaign file at the key that holds it.
func TestDoNotCallForms(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,Labels,DND,SMS_BLACKLISTED\n+14155550101,,,\n"}
	for _, tc := range []struct {
		top  string
		want []DoNotCallColumn
	}{
		{"do_not_call: [{column: Labels, values: [\"Do not call\"]}, {column: DND}]\n", []DoNotCallColumn{{"Labels", []string{"Do not call"}}, {"DND", nil}}},
		{"do_not_call: [Labels, DND]\n", []DoNotCallColumn{{"Labels", nil}, {"DND", nil}}},
		{"do_not_call: {column: Labels, values: [DNC], ignore: [{column: SMS_BLACKLISTED, reason: texts only}]}\n", []DoNotCallColumn{{"Labels", []string{"DNC"}}}},
		{"do_not_call: {columns: [DND, {column: Labels, values: [x]}]}\n", []DoNotCallColumn{{"DND", nil}, {"Labels", []string{"x"}}}},
		{"do_not_call:\n  ignore:\n    - column: SMS_BLACKLISTED\n      reason: \"Brevo's texts list; calls are asked for apart\"\n", nil},
	} {
		f, err := dncCampaign(t, sheets, tc.top, "")
		if err != nil {
			t.Errorf("%q: %v", tc.top, err)
			continue
		}
		got := f.SheetDoNotCall(0).Entries()
		if !slices.EqualFunc(got, tc.want, func(a, b DoNotCallColumn) bool { return a.Column == b.Column && slices.Equal(a.Values, b.Values) }) {
			t.Errorf("%q: columns %+v, want %+v", tc.top, got, tc.want)
		}
	}
	for _, tc := range []struct{ top, sheet, want string }{
		{"do_not_call: {ignore: [{column: SMS_BLACKLISTED}]}\n", "", `, do_not_call.ignore[0]: do_not_call: ignore: the column "SMS_BLACKLISTED" needs the reason it is not honoured`},
		{"do_not_call: {ignore: [{column: DND, reason: \" \"}]}\n", "", `do_not_call.ignore[0]: do_not_call: ignore: the column "DND" needs the reason`},
		{"do_not_call: [{colum: DND}]\n", "", `do_not_call[0].colum: unknown key "colum"`},
		{"do_not_call: [{column: DND}, {column: \"\"}]\n", "", `do_not_call[1]: do_not_call lists an empty column name`},
		{"do_not_call: {values: [x]}\n", "", `do_not_call.values: values: goes beside the column it belongs to`},
		{"do_not_call: {columns: [DND], ignore: [{column: dnd, reason: r}]}\n", "", `do_not_call.ignore[0]: do_not_call: the column "dnd" is both honoured and ignored`},
		{"do_not_call: [{column: Labels, values: [\"!!\"]}]\n", "", `do_not_call[0]: do_not_call: the column "Labels" lists the value "!!", which has no letter or digit`},
		{"", "do_not_call: {ignore: [{column: Status, reason: r}]}", `a.csv has no column "Status"`},
		{"do_not_call: Labels\n", "", "do_not_call takes keys, not the text `Labels`"},
	} {
		_, err := dncCampaign(t, sheets, tc.top, tc.sheet)
		var fe *FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("top %q, sheet %q: error %v; want a *FileError holding %q", tc.top, tc.sheet, err, tc.want)
		}
	}
}

// TestConsentChannelRefused: consent to e-mails or texts is no consent to
// be phoned: a consent: column named for one is refused at its key,
// unless channel_checked says the column records consent to be called.
func TestConsentChannelRefused(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,SMS Consent,Email Opt In,DOUBLE_OPT-IN,TCPA Consent (calls and texts)\n+14155550101,yes,yes,yes,yes\n"}
	for _, tc := range []struct{ top, sheet, want string }{
		{"consent: {column: SMS Consent, required: true}\n", "", `, consent.column: consent: the column "SMS Consent" is named for consent to texts, which is no consent to be phoned`},
		{"consent: {column: Email Opt In}\n", "", `consent.column: consent: the column "Email Opt In" is named for consent to e-mails`},
		{"consent: {column: DOUBLE_OPT-IN}\n", "", `consent: the column "DOUBLE_OPT-IN" is named for consent to e-mails`},
		{"", "consent: {column: SMS Consent}", `sheets[0].consent.column: consent: the column "SMS Consent" is named for consent to texts`},
		{"consent: {column: SMS Consent, channel_checked: true}\n", "", ""},
		{"consent: {column: TCPA Consent (calls and texts), required: true}\n", "", ""},
	} {
		_, err := dncCampaign(t, sheets, tc.top, tc.sheet)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("top %q, sheet %q: %v", tc.top, tc.sheet, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "channel_checked: true")):
			t.Errorf("top %q, sheet %q: error %v; want one holding %q and the key to add", tc.top, tc.sheet, err, tc.want)
		}
	}
	for h, want := range map[string]bool{"SMS Consent": false, "Email Opt In": false, "DOUBLE_OPT-IN": false, "OPT_IN": true, "TCPA Consent (calls and texts)": true,
		"Einwilligung Telefon": true, "Einwilligung E-Mail": false, "Consentement SMS": false, "Zgoda": true, "Keine Einwilligung": false} {
		if got := isConsentHeader(h); got != want {
			t.Errorf("isConsentHeader(%q) = %v, want %v", h, got, want)
		}
	}
}

// signalPlan plans f offline with its suppression read, as plan does.
func signalPlan(t *testing.T, f *File) (*Plan, *Suppression) {
	t.Helper()
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	return p, sup
}

// rowStatuses reads f's contacts with sup and returns each row's status.
func rowStatuses(t *testing.T, f *File, sup *Suppression) []string {
	t.Helper()
	var out []string
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		out = append(out, c.Status)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSignalsInAnyColumn: a column whose cells say do not call is found
// by its header or by its first rows, and until the campaign maps or
// ignores it, the pass before any call refuses the campaign (run stops on
// SignalProblems) and plan does too; mapped as a list with values, its
// rows and their numbers elsewhere are not called, and the numbers go on
// the store's list; ignored, they are called.
func TestSignalsInAnyColumn(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Phone,Calling,Labels\n" +
			"+14155550101,,* myContacts\n" +
			"+14155550102,Do not call,* myContacts ::: Do not call\n" + // row 3
			"+14155550103,,do not call before 10am\n" +
			"+14155550104,,\n",
		"b.csv": "Phone\n(415) 555-0102\n+14155550105\n", // row 3's number again
	}
	f, err := dncCampaign(t, sheets, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, sup := signalPlan(t, f)
	err = sup.SignalProblems(f)
	for _, want := range []string{`in column "Calling", 1 row(s) say do not call (row 3: "Do not call")`, `in column "Labels", 1 row(s) say do not call (row 3: "* myContacts ::: Do not call")`,
		`do_not_call: [{column: "Labels", values: ["Do not call"]}]`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("SignalProblems: %v; want it to hold %q", err, want)
		}
	}
	// Row 4's "do not call before 10am" in Labels, not mapped, counts
	// too: it mentions do not call, and its row is held.
	if !strings.Contains(err.Error(), `and 1 cell(s) mention do not call without saying it whole (row 4: "do not call before 10am")`) {
		t.Errorf("SignalProblems: %v; want Labels' mention named", err)
	}
	if len(p.SheetProblems) != 2 || p.UnmappedDoNotCall != 3 {
		t.Errorf("plan's problems %+v, %d unmapped; want the two columns'", p.SheetProblems, p.UnmappedDoNotCall)
	}
	found := map[string]string{}
	for _, s := range p.Sheets[0].Signals {
		found[s.Column] = s.Use + "/" + s.Kind + "/" + s.Found
	}
	if found["Calling"] != "refused/values/cells" || found["Labels"] != "refused/values/header" {
		t.Errorf("plan's signal columns %v", found)
	}

	f, err = dncCampaign(t, sheets, "", "do_not_call: [{column: Labels, values: [\"Do not call\"]}, {column: Calling, values: [\"Do not call\"]}]")
	if err != nil {
		t.Fatal(err)
	}
	p, sup = signalPlan(t, f)
	if err := sup.SignalProblems(f); err != nil || len(p.SheetProblems) != 0 {
		t.Errorf("mapped: %v, %+v", err, p.SheetProblems)
	}
	// Row 4's label mentions do not call without saying it: held.
	if got := rowStatuses(t, f, sup); !slices.Equal(got, []string{ToCall, Suppressed, Suppressed, ToCall, Suppressed, ToCall}) {
		t.Errorf("statuses %v; want rows 3 and 4 of a.csv and row 3's number in b.csv suppressed", got)
	}
	if fl := sup.Flagged(); len(fl) != 1 || fl[0].Number != "+14155550102" || fl[0].Column != "Labels" {
		t.Errorf("flagged %+v; want row 3's number, for Labels", fl)
	}
	var mentioned bool
	for _, s := range p.Sheets[0].Signals {
		mentioned = mentioned || (s.Column == "Labels" && s.Mentions == 1 && s.MentionAt == `row 4: "do not call before 10am"`)
	}
	if !mentioned || !strings.Contains(strings.Join(p.Warnings, "\n"), `1 cell(s) of column "Labels" mention a do-not-call phrase without being one (row 4: "do not call before 10am")`) {
		t.Errorf("plan does not tell of the mention: %+v\n%s", p.Sheets[0].Signals, strings.Join(p.Warnings, "\n"))
	}

	f, err = dncCampaign(t, sheets, "", "do_not_call: {ignore: [{column: Labels, reason: \"our labels, not the person's\"}, {column: Calling, reason: \"old dialer field\"}]}")
	if err != nil {
		t.Fatal(err)
	}
	p, sup = signalPlan(t, f)
	if err := sup.SignalProblems(f); err != nil || len(p.SheetProblems) != 0 || p.Totals.ToCall != 5 || p.Totals.Duplicate != 1 {
		t.Errorf("ignored: %v, %+v, %+v", err, p.SheetProblems, p.Totals)
	}
	if s := p.Sheets[0].Signals; len(s) != 2 || s[0].Column != "Labels" || s[0].Use != "ignored" || s[0].Reason != "our labels, not the person's" {
		t.Errorf("plan's signals with both ignored: %+v", s)
	}
}

// TestSignalsPastTheFirstRows: a column of labels or of notes (found by
// its header) whose first do-not-call cell comes past the first rows is
// read by the pass before any call, which refuses the campaign for it;
// its row is not called, and plan refuses the campaign too. A column of
// another name whose first do-not-call cell comes past the first rows is
// not read at all: callrun reads every cell of the first rows only.
func TestSignalsPastTheFirstRows(t *testing.T) {
	var b strings.Builder
	b.WriteString("Phone,Tags,Notes,Misc\n")
	n := signalSampleRows + 200
	for i := range n {
		tags, notes, misc := "lead", "", ""
		if i == signalSampleRows+100 {
			tags, notes, misc = "lead,DNC", "Customer asked: do not call", "Do not call"
		}
		if i == signalSampleRows+150 {
			notes = "Said do not call again!"
		}
		phone := i
		if i == 5 {
			phone = signalSampleRows + 150 // the noted person, on an earlier row
		}
		fmt.Fprintf(&b, "+1415555%04d,%q,%s,%s\n", phone, tags, notes, misc)
	}
	f, err := dncCampaign(t, map[string]string{"a.csv": b.String()}, "", "")
	if err != nil {
		t.Fatal(err)
	}
	p, sup := signalPlan(t, f)
	if err := sup.SignalProblems(f); err == nil || !strings.Contains(err.Error(), `in column "Tags", 1 row(s) say do not call (row 1102: "lead,DNC")`) {
		t.Errorf("the pass before any call: %v; want it to refuse the campaign for Tags", err)
	}
	// Rows 1102 (Tags and Notes), 1152 (Notes) and 7 (1152's number).
	if p.Totals.Suppressed != 3 || p.Totals.ToCall != n-3 || len(p.SheetProblems) != 1 || !strings.Contains(p.SheetProblems[0].Msg, `in column "Tags", 1 row(s) say do not call (row 1102: "lead,DNC")`) {
		t.Errorf("plan: %+v, %+v; want rows 7, 1102 and 1152 not called and Tags refused", p.Totals, p.SheetProblems)
	}
	var notes bool
	for _, s := range p.Sheets[0].Signals {
		notes = notes || (s.Column == "Notes" && s.Found == "header" && s.Use == "unmapped" && s.Mentions == 2 && s.MentionAt == `row 1102: "Customer asked: do not call"`)
		if s.Column == "Misc" {
			t.Errorf("plan read column Misc past the first rows: %+v", s)
		}
	}
	if !notes {
		t.Errorf("plan did not read the Notes of rows 1102 and 1152: %+v", p.Sheets[0].Signals)
	}
	var rows []string
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		if c.Status != ToCall {
			rows = append(rows, fmt.Sprintf("%d %s %s", c.Row, c.Status, c.Reason))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{
		`7 suppressed `, // held for the note of row 1152
		`1102 suppressed column "Notes" says "Customer asked: do not call", which mentions do not call`,
		`1152 suppressed column "Notes" says "Said do not call again!", which mentions do not call`,
	} {
		if i >= len(rows) || !strings.HasPrefix(rows[i], want) {
			t.Errorf("the rows not called: %q; want %q", rows, want)
		}
	}
}

// TestSignalUnclearHoldsTheNumber: a number whose do-not-call cell reads
// neither yes nor no is not called in any row, and goes on no list; a
// yes for it elsewhere wins.
func TestSignalUnclearHoldsTheNumber(t *testing.T) {
	sheets := map[string]string{
		"a.csv": "Phone,Do Not Call\n+14155550101,\n+14155550102,\n+14155550101,maybe\n+14155550103,?\n",
		"b.csv": "Phone,Do Not Call\n+14155550103,1\n",
	}
	f, err := dncCampaign(t, sheets, "do_not_call: {column: Do Not Call}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	p, sup := signalPlan(t, f)
	if got := rowStatuses(t, f, sup); !slices.Equal(got, []string{Suppressed, ToCall, Suppressed, Suppressed, Suppressed}) {
		t.Errorf("statuses %v; want every row of +14155550101 and +14155550103 not called", got)
	}
	if fl := sup.Flagged(); len(fl) != 1 || fl[0].Number != "+14155550103" || fl[0].Cell != "1" {
		t.Errorf("flagged %+v; want +14155550103 alone, for b.csv's yes", fl)
	}
	if p.UnclearDoNotCall != 2 || p.FlaggedNumbers != 1 || p.HeldNumbers != 1 {
		t.Errorf("plan: %d unclear, %d flagged numbers, %d held; want 2, 1 (+14155550103, listed) and 1 (+14155550101, on no list)", p.UnclearDoNotCall, p.FlaggedNumbers, p.HeldNumbers)
	}
	var text bytes.Buffer
	p.WriteText(&text)
	if out := text.String(); !strings.Contains(out, "Marked do not call (or consent withdrawn) in the sheets: 1 number(s)") || !strings.Contains(out, "mention do not call): 1 number(s) of the rows so marked, suppressed in every row that holds them and put on no list") {
		t.Errorf("plan text does not count the listed and the held numbers apart:\n%s", out)
	}
	var reason string
	f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		if c.Row == 2 && reason == "" {
			reason = c.Reason
		}
		return nil
	})
	if want := `the number's do-not-call cell in sheet a.csv, row 4 (column "Do Not Call" says "maybe") reads neither yes nor no`; !strings.HasPrefix(reason, want) {
		t.Errorf("row 2's reason %q, want %q", reason, want)
	}
}

// TestSignalConsentColumnUnmapped: a column of consent to be called that
// the campaign does not map, one of whose cells withdraws consent, is a
// signal: plan and run stop until it is mapped (as consent:) or ignored.
func TestSignalConsentColumnUnmapped(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,Einwilligung Telefon\n+14155550101,12.03.2024\n+14155550102,widerrufen\n"}
	f, err := dncCampaign(t, sheets, "", "")
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	if err := sup.SignalProblems(f); err == nil || !strings.Contains(err.Error(), `in column "Einwilligung Telefon", 1 row(s) withdraw consent (row 3: "widerrufen")`) || !strings.Contains(err.Error(), `consent: {column: "Einwilligung Telefon"}`) {
		t.Errorf("SignalProblems: %v", err)
	}
	f, err = dncCampaign(t, sheets, "consent: {column: Einwilligung Telefon}\n", "")
	if err != nil {
		t.Fatal(err)
	}
	p, sup := signalPlan(t, f)
	if err := sup.SignalProblems(f); err != nil || p.Totals.ToCall != 1 || p.FlaggedNumbers != 1 {
		t.Errorf("mapped as consent: %v, %+v", err, p.Totals)
	}
}

// TestRunSignalPastTheFirstRows: a column of tags that says do not call
// only past the first rows is read whole before the first call, so the
// same number on an earlier row is held too: unmapped, the campaign is
// refused before any call; mapped, a run never calls that number, on its
// tagged row or the earlier one (the sandbox's ledger), and calls every
// other once.
func TestRunSignalPastTheFirstRows(t *testing.T) {
	var b strings.Builder
	b.WriteString("Phone,First Name,Tags\n")
	n := signalSampleRows + 50
	late := dtPhone(signalSampleRows + 20)
	for i := range n {
		phone, tags := dtPhone(i), "lead"
		switch {
		case i == 5:
			phone = late // the same person, untagged, long before
		case phone == late:
			tags = "lead;Do Not Call"
		}
		fmt.Fprintf(&b, "%s,Name %d,%s\n", phone, i, tags)
	}
	sheets := map[string]string{"leads.csv": b.String()}
	e := newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 8, ""), sheets)
	want := fmt.Sprintf(`sheet leads.csv: in column "Tags", 1 row(s) say do not call (row %d: "lead;Do Not Call"), and the campaign does not map the column`, signalSampleRows+22)
	if err := e.sup.SignalProblems(e.f); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), `do_not_call: [{column: "Tags", values: ["Do Not Call"]}]`) {
		t.Fatalf("the pass before the run: %v; want it to refuse the campaign with %q", err, want)
	}
	e = newDtEnv(t, sandbox.Options{}, dtCampaign(1000, 8, "do_not_call: [{column: Tags, values: [\"Do Not Call\"]}]\n"), sheets)
	if err := e.sup.SignalProblems(e.f); err != nil {
		t.Fatalf("mapped: %v", err)
	}
	res := e.mustRun(nil)
	placed := dtPlaced(e.srv)
	if placed[late] != 0 || len(placed) != n-2 || res.Sent != n-2 {
		t.Errorf("the sandbox placed %d numbers (%s %d times), the run sent %d; want every number but %s (and row 7's, which is %s) once", len(placed), late, placed[late], res.Sent, late, late)
	}
}

// TestNotesMentions: a column of notes is read for a mention of do not
// call however its header also names a list ("Lead Status Notes"), and
// in the phrases people write; a word of the table that free text uses
// for other things ("stop", "Robinson", "remove") mentions nothing in a
// note. Each
// sheet's second row has the first's number: a mention holds both.
func TestNotesMentions(t *testing.T) {
	for _, tc := range []struct {
		header, note string
		held         bool
	}{
		{"Lead Status Notes", "Customer asked: do not call", true},
		{"Stage Notes", "Left VM. Asked us to stop calling", true},
		{"Notes", "Asked us not to call again - email only", true},
		{"Comments", "Spoke 3/4: remove from call list", true},
		{"Background", "no more calls please", true},
		{"Hinweise", "Kunde sagt: bitte nicht anrufen", true},
		{"Notes", "Will stop by the office Tuesday", false},
		{"Notes", "Met Mrs Robinson at the fair", false},
		{"Notes", "Customer asked to be removed", true},
		{"Notes", "Remove the old address, moved in May", false},
		{"Notes", "Interested in the spring offer", false},
	} {
		sheet := fmt.Sprintf("Phone,Name,%s\n+14155550101,Ada,\n+1 415 555 0101,Ada L,%q\n+14155550102,Bob,\n", tc.header, tc.note)
		f, err := dncCampaign(t, map[string]string{"a.csv": sheet}, "dedupe: none\n", "")
		if err != nil {
			t.Fatal(err)
		}
		_, sup := signalPlan(t, f)
		want := []string{ToCall, ToCall, ToCall}
		if tc.held {
			want = []string{Suppressed, Suppressed, ToCall}
		}
		if got := rowStatuses(t, f, sup); !slices.Equal(got, want) {
			t.Errorf("%s %q: statuses %v, want %v", tc.header, tc.note, got, want)
		}
	}
}

// TestRunNotesPastTheFirstRows: a column of notes, mapped to a form field
// for the agent, whose note mentions do not call only past the first
// rows is read whole before the first call: the campaign is not refused,
// but the run never calls that number, on the noted row or an earlier
// one (the sandbox's ledger), and calls every other once.
func TestRunNotesPastTheFirstRows(t *testing.T) {
	var b strings.Builder
	b.WriteString("Phone,First Name,Notes\n")
	n := signalSampleRows + 50
	late := dtPhone(signalSampleRows + 20)
	for i := range n {
		phone, notes := dtPhone(i), "met at the fair"
		switch {
		case i == 5:
			phone = late // the same person, no note, long before
		case phone == late:
			notes = "Called 3/4, she said: do NOT call me again"
		}
		fmt.Fprintf(&b, "%s,Name %d,%q\n", phone, i, notes)
	}
	sheets := map[string]string{"leads.csv": b.String()}
	// The sandbox's account has no notes field: any form field will do.
	campaign := strings.Replace(dtCampaign(1000, 8, ""), "first_name: First Name}", "first_name: First Name, last_name: Notes}", 1)
	e := newDtEnv(t, sandbox.Options{}, campaign, sheets)
	if err := e.sup.SignalProblems(e.f); err != nil {
		t.Fatalf("the pass before the run: %v; a mention holds, it does not refuse", err)
	}
	res := e.mustRun(nil)
	placed := dtPlaced(e.srv)
	if placed[late] != 0 || len(placed) != n-2 || res.Sent != n-2 {
		t.Errorf("the sandbox placed %d numbers (%s %d times), the run sent %d; want every number but %s (and row 7's, which is %s) once", len(placed), late, placed[late], res.Sent, late, late)
	}
}

// TestInitConsentOnlyToCalls: init maps a column of consent to be called,
// never one of consent to e-mails or texts, and a bare opt-in (Mailchimp's
// OPTIN_TIME, most often an e-mail list's) only as a comment to decide.
func TestInitConsentOnlyToCalls(t *testing.T) {
	for _, tc := range []struct {
		header []string
		want   string
	}{
		{[]string{"Email Address", "Phone Number", "OPTIN_TIME", "OPTIN_IP"}, "\n# consent: {column: \"OPTIN_TIME\", required: true}    # an opt-in, but to what?"},
		{[]string{"EMAIL", "SMS", "DOUBLE_OPT-IN", "SMS Consent"}, "\n# consent: {column: \"Consent Date\", required: true}\n"},
		{[]string{"Phone", "Email Opt In", "Call Opt In"}, "\nconsent: {column: \"Call Opt In\", required: true}\n"},
		{[]string{"Vorname", "Telefon", "Einwilligung Telefon"}, "\nconsent: {column: \"Einwilligung Telefon\", required: true}\n"},
	} {
		var b strings.Builder
		if _, err := WriteInit(&b, InitOptions{Sheet: "s.csv", SheetName: "s.csv", Header: tc.header, Region: "US"}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("%v: init's file lacks %q:\n%s", tc.header, tc.want, b.String())
		}
	}
}

// TestSignalsRowsLongerOrShorter: a row shorter than the header, or with
// an empty field past its last (as Excel writes), is read like any other.
func TestSignalsRowsLongerOrShorter(t *testing.T) {
	sheets := map[string]string{"a.csv": "Phone,Name,DND\n+14155550101,Ada,\n+14155550102,Do not call,\n+14155550103\n+14155550104,Bea,1,\n"}
	f, err := dncCampaign(t, sheets, "do_not_call: [{column: DND}, {column: Name, values: [Do not call]}]\n", "")
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	if got := rowStatuses(t, f, sup); !slices.Equal(got, []string{ToCall, Suppressed, ToCall, Suppressed}) {
		t.Errorf("statuses %v", got)
	}
}

// TestSignalGroups: a group of rows whose title is a do-not-call phrase
// of the table, in any of its languages, holds every row of the group,
// with a reason naming the group and its title's row, and its numbers in
// every other row of the campaign's sheets, though the group comes after
// the rows the pass before any call reads of a sheet without a signal
// column; its numbers go on the store's list. A title that mentions do
// not call without being one cannot be read either way: its rows are held
// (not called, and their numbers go on no list), and --strict fails on
// them. plan lists both among the sheet's signals.
func TestSignalGroups(t *testing.T) {
	var b strings.Builder
	b.WriteString("Leads\nName,Phone\n")
	n := signalSampleRows + 100
	for i := range n {
		fmt.Fprintf(&b, "Lead %d,+1415555%04d\n", i, i)
	}
	late := n + 6 // the row of the group's first contact: after the leads (rows 3 to n+2), a blank row, its title and its header
	b.WriteString("\nNicht anrufen\nName,Phone\nEarly again,+14155550007\nOnly here,+14155559001\n")
	b.WriteString("\nCall back - do not call before 10am\nName,Phone\nLater,+14155559002\n")
	sheets := map[string]string{
		"a.csv": b.String(),
		"b.csv": "Name,Phone\nElsewhere,(415) 555-9001\n",
	}
	f, err := dncCampaign(t, sheets, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	p, sup := signalPlan(t, f)
	if err := sup.SignalProblems(f); err != nil {
		t.Errorf("a group's title needs no mapping: %v", err)
	}
	if got := p.Totals; got.Suppressed != 5 || got.DoNotCallFlag != 5 || got.ToCall != n-1 || got.Invalid != 0 || p.FlaggedNumbers != 2 || p.HeldNumbers != 1 || p.UnclearDoNotCall != 1 {
		t.Errorf("plan: %+v, %d flagged, %d held, %d unclear; want rows 10, %d, %d, %d and b.csv's not called, every other row called", got, p.FlaggedNumbers, p.HeldNumbers, p.UnclearDoNotCall, late, late+1, late+5)
	}
	var groups []string
	for _, s := range p.Sheets[0].Signals {
		groups = append(groups, fmt.Sprintf("%s %s %q row %d: %d rows %v, %d mentions %s", s.Kind, s.Use, s.Group, s.TitleRow, s.Rows, s.Examples, s.Mentions, s.MentionAt))
	}
	want := []string{
		fmt.Sprintf(`group honoured "Nicht anrufen" row %d: 2 rows [row %d row %d], 0 mentions `, late-2, late, late+1),
		fmt.Sprintf(`group held "Call back - do not call before 10am" row %d: 0 rows [], 1 mentions row %d: "Call back - do not call before 10am"`, late+3, late+3),
	}
	if !slices.Equal(groups, want) {
		t.Errorf("plan's signals of a.csv:\n%q\nwant\n%q", groups, want)
	}
	if fl := sup.Flagged(); len(fl) != 2 || fl[0].Group != "Nicht anrufen" || fl[0].GroupRow != late-2 || fl[0].Row != late {
		t.Errorf("flagged %+v; want the group's two numbers, from row %d", fl, late)
	}
	cr := f.NewContactReader(sup)
	cr.SheetNote = func(_ int, note string) { notes = append(notes, note) }
	var reasons []string
	if err := cr.Each(context.Background(), func(c *Contact) error {
		if c.Status != ToCall {
			reasons = append(reasons, fmt.Sprintf("%s %d: %s", f.Sheets[c.Sheet].File, c.Row, c.Reason))
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		fmt.Sprintf(`a.csv 10: the number is in a group of rows whose title says do not call: sheet a.csv, row %d (in the group "Nicht anrufen", its title in row %d)`, late, late-2),
		fmt.Sprintf(`a.csv %d: the row is in the group "Nicht anrufen" (its title in row %d), whose title says do not call: no row of the group is called`, late+1, late-2),
		fmt.Sprintf(`b.csv 2: the number is in a group of rows whose title says do not call: sheet a.csv, row %d (in the group "Nicht anrufen", its title in row %d)`, late+1, late-2),
		fmt.Sprintf(`a.csv %d: the row is in the group "Call back - do not call before 10am" (its title in row %d), whose title mentions do not call without saying it: no row of the group is called until the title says which (title it "Do Not Call" if it means it; else without the phrase)`, late+5, late+3),
	} {
		if !slices.Contains(reasons, want) {
			t.Errorf("no row's reason is %q:\n%q", want, reasons)
		}
	}
	if len(reasons) != 5 {
		t.Errorf("rows not called: %q; want 5", reasons)
	}
	if note := strings.Join(notes, "\n"); !strings.Contains(note, fmt.Sprintf(`mentions a do-not-call phrase without being one (row %d: "Call back - do not call before 10am"), and its 1 row(s) are not called until it says which`, late+3)) {
		t.Errorf("no note of the mention:\n%s", note)
	}
}
