package campaign

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// flagPhonesCampaign is a campaign of a.csv, whose rows are to call,
// and b.csv, whose rows say do not call in column "Do Not Call" (its
// do_not_call:, written as given) and hold the person's mobile beside the
// phone_number column.
func flagPhonesCampaign(dnc string) string {
	return "name: allphones\nagents:\n  - {name: A, prompt: Hello.}\nsheets:\n" +
		"  - {file: a.csv, agent: A, fields: {phone_number: Phone}}\n" +
		"  - {file: b.csv, agent: A, fields: {phone_number: Phone}, do_not_call: " + dnc + "}\n" +
		"region: US\nunsafe_ignore_called_person_hours: true\n"
}

// loadFlagPhones writes sheets and campaign into a directory of their own
// and loads it, checked.
func loadFlagPhones(t *testing.T, campaign string, sheets map[string]string) *File {
	t.Helper()
	dir := t.TempDir()
	for name, body := range sheets {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(campaign), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestFlaggedRowHoldsEveryNumber: a row the sheet marks do not call holds
// the numbers of its other columns of the person's lines too (a Mobile, a
// Home Phone, an Other Phone, found by header), not a company's, a fax's
// or an id's, in every sheet: another sheet's row with one of them is not called, its reason
// names the flagged row and the column, plan counts them, and the yes
// ones are what run puts on the store's list. A cell that reads neither
// yes nor no holds them, on no list.
func TestFlaggedRowHoldsEveryNumber(t *testing.T) {
	sheets := map[string]string{
		// a.csv: Ben's mobile, Cy's home phone, Di's second number, Ed
		// (another person), Flo's mobile (her flag reads neither).
		"a.csv": "Name,Phone\nBen,415.555.0102\nCy,(415) 555-0103\nDi,+1 415 555 0104\nEd,+14155550105\nFlo,+14155550107\n",
		// b.csv: Mobile, Home Phone and Other Phone found by their
		// header (Home Phone empty in every row but one). Ben's Company
		// Phone (Ed's direct line), his Fax and an Account Number whose
		// values read as numbers are no number of his: not held.
		"b.csv": "Name,Phone,Mobile,Home Phone,Other Phone,Company Phone,Fax,Account Number,Email,Do Not Call\n" +
			"Ben,+1 650 555 0177,+1 415 555 0102,,,+14155550105,+1 415 555 0190,4155550191,ben@example.com,Yes\n" +
			"Cy,+1 650 555 0178,,415-555-0103,,,,4155550192,cy@example.com,Yes\n" +
			"Di,+1 650 555 0179,,,+1 415 555 0104,,,4155550193,di@example.com,1\n" +
			"Eve,+1 650 555 0180,+1 415 555 0106,,+1 415 555 0108,,,4155550194,eve@example.com,No\n" +
			"Flo,+1 650 555 0181,+1 415 555 0107,,,,,4155550195,flo@example.com,maybe\n",
	}
	f := loadFlagPhones(t, flagPhonesCampaign(`{column: "Do Not Call"}`), sheets)
	p, sup := signalPlan(t, f)
	got := rowStatuses(t, f, sup)
	want := []string{Suppressed, Suppressed, Suppressed, ToCall, Suppressed, Suppressed, Suppressed, Suppressed, ToCall, Suppressed}
	if !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v (a.csv's Ben, Cy, Di and Flo held by b.csv's flags; Ed called)", got, want)
	}
	// 4 flagged rows, each with 2 numbers; Eve's are not flagged; Flo's
	// flag reads neither, so her 2 are held and go on no list.
	if p.FlaggedNumbers != 6 || p.HeldNumbers != 2 {
		t.Errorf("plan counts %d flagged numbers and %d held, want 6 and 2", p.FlaggedNumbers, p.HeldNumbers)
	}
	var listed []string
	for _, fl := range sup.Flagged() {
		listed = append(listed, fl.Number)
	}
	wantListed := []string{"+14155550102", "+16505550177", "+14155550103", "+16505550178", "+14155550104", "+16505550179"}
	if !slices.Equal(listed, wantListed) {
		t.Errorf("numbers for the store's list %v, want %v (not Flo's, whose flag reads neither)", listed, wantListed)
	}
	var reasons []string
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		if c.Sheet == 0 {
			reasons = append(reasons, c.Reason)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	wantBen := `the number is marked do not call in sheet b.csv, row 2 (column "Do Not Call" says "Yes"), where it is in the column "Mobile"`
	if len(reasons) != 5 || !strings.Contains(reasons[0], wantBen) || !strings.Contains(reasons[1], `"Home Phone"`) || !strings.Contains(reasons[2], `"Other Phone"`) ||
		!strings.Contains(reasons[4], "reads neither yes nor no") || !strings.Contains(reasons[4], `"Mobile"`) {
		t.Errorf("a.csv's reasons:\n%s\nwant Ben's to hold %q, and Cy's, Di's and Flo's to name their column", strings.Join(reasons, "\n"), wantBen)
	}
	if err := sup.SignalProblems(f); err != nil {
		t.Errorf("SignalProblems: %v", err)
	}
}

// TestFlaggedRowOtherPhoneUnread: a flagged row's cell that holds five
// digits or more and reads as no number stops plan and run in a column
// whose header names a phone line, as its phone_number cell does; in a
// column found by its values alone, it is passed over.
func TestFlaggedRowOtherPhoneUnread(t *testing.T) {
	for _, tc := range []struct {
		b    string
		stop string
	}{
		{"Name,Phone,Mobile,Do Not Call\nBen,+1 650 555 0177,415 555 01O2,Yes\nAl,+1 650 555 0176,+1 415 555 0101,No\n", `phone column "Mobile" says "415 555 01O2", which reads as no phone number`},
		{"Name,Phone,Alt,Do Not Call\nAl,+1 650 555 0176,+1 415 555 0101,No\nCal,+1 650 555 0175,+1 415 555 0109,No\nBen,+1 650 555 0177,ACC-20240017,Yes\n", ""},
	} {
		f := loadFlagPhones(t, flagPhonesCampaign(`{column: "Do Not Call"}`), map[string]string{"a.csv": "Name,Phone\nBen,+14155550102\n", "b.csv": tc.b})
		sup, err := f.LoadSuppression(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		err = sup.SignalProblems(f)
		switch {
		case tc.stop == "" && err != nil:
			t.Errorf("%q: %v; want no problem", tc.b, err)
		case tc.stop != "" && (err == nil || !strings.Contains(err.Error(), tc.stop)):
			t.Errorf("%q: %v; want a problem holding %q", tc.b, err, tc.stop)
		}
	}
}

// TestFlaggedRowPastTheSample: the other columns of numbers are chosen
// from a sheet's first rows; a flagged row among them and one far past
// them both hold their mobile.
func TestFlaggedRowPastTheSample(t *testing.T) {
	var b strings.Builder
	b.WriteString("Name,Phone,Mobile,Do Not Call\n")
	for i := range 3 * suppressionSample {
		dnc := "No"
		if i == 3 || i == 2*suppressionSample {
			dnc = "Yes"
		}
		b.WriteString("P," + dtPhone(i) + "," + dtPhone(1000+i) + "," + dnc + "\n")
	}
	a := "Name,Phone\nEarly," + dtPhone(1003) + "\nLate," + dtPhone(1000+2*suppressionSample) + "\nOther," + dtPhone(1001) + "\n"
	f := loadFlagPhones(t, flagPhonesCampaign(`{column: "Do Not Call"}`), map[string]string{"a.csv": a, "b.csv": b.String()})
	_, sup := signalPlan(t, f)
	if got := rowStatuses(t, f, sup)[:3]; !slices.Equal(got, []string{Suppressed, Suppressed, ToCall}) {
		t.Errorf("a.csv's statuses %v, want the two flagged mobiles held and the other called", got)
	}
}

// TestRunFlaggedRowsMobile: run never places the mobile of a row another
// sheet marks do not call, and puts it on the store's list; a.csv's other
// rows are called.
func TestRunFlaggedRowsMobile(t *testing.T) {
	sheets := map[string]string{
		"leads.csv": "Phone,First Name\n415.555.0102\n" + dtPhone(1) + ",Ann\n" + dtPhone(2) + ",Bo\n",
		"b.csv":     "Name,Phone,Mobile,Email,Do Not Call\nBen,+1 650 555 0177,+1 415 555 0102,ben@example.com,Yes\n",
	}
	yaml := strings.Replace(dtCampaign(1000, 4, ""), "region: US\n",
		"  - {file: b.csv, agent: Alpha, fields: {phone_number: Phone}, do_not_call: {column: \"Do Not Call\"}}\nregion: US\n", 1)
	e := newDtEnv(t, sandbox.Options{}, yaml, sheets)
	// What run does before its first call: the flagged numbers go on the
	// store's list, the mobile's entry naming its column.
	list := store.OpenDoNotCallFile(t.TempDir())
	if _, err := e.f.AddFlagged(context.Background(), list, e.sup); err != nil {
		t.Fatal(err)
	}
	es, err := list.Entries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mobile string
	for _, en := range es {
		if en.Number == "+14155550102" {
			mobile = en.Source
		}
	}
	if len(es) != 2 || !strings.Contains(mobile, `(sheet b.csv, row 2), the number in its column "Mobile"`) {
		t.Errorf("the store's list after AddFlagged: %+v; want Ben's phone and mobile, the mobile's source naming its column", es)
	}
	res := e.mustRun(nil)
	placed := dtPlaced(e.srv)
	if placed["+14155550102"] != 0 || placed["+16505550177"] != 0 || placed[dtPhone(1)] != 1 || placed[dtPhone(2)] != 1 || res.Sent != 2 {
		t.Errorf("the sandbox placed %v, the run sent %d; want Ben's mobile and phone never placed, and leads.csv's other two rows once each", placed, res.Sent)
	}
}
