package campaign

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
)

// accountCampaign maps two fields the account defines (city, zip_code)
// and sets a third (country) beside local_presence_number; its second
// sheet sets only city.
const accountCampaign = `name: account
agents: [{name: A, prompt: p}, {name: B, prompt: p}]
sheets:
  - file: leads.csv
    agent: A
    fields:
      phone_number: Phone
      city: City
      zip_code: ZIP
    set: {local_presence_number: "yes", country: US}
  - file: more.csv
    agent: B
    fields: {phone_number: Phone}
    set: {city: Boston}
`

const accountLeads = "Phone,City,ZIP\n" +
	"+14155550132, Springfield ,62701\n" +
	"bogus,=cmd,00501\n" +
	"+12125550101,,\n"

// loadAccountCampaign writes accountCampaign and its sheets into a
// temporary directory and loads it offline.
func loadAccountCampaign(t *testing.T) *File {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"c.yaml": accountCampaign, "leads.csv": accountLeads, "more.csv": "Phone\n+13105550201\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckSheets(); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestAccountFieldsAreRead: fields beyond the seven are accepted offline,
// read from their columns or set, and go into the form that is sent.
func TestAccountFieldsAreRead(t *testing.T) {
	f := loadAccountCampaign(t)
	if got := f.AccountFields(); !slices.Equal(got, []string{"city", "country", "zip_code"}) {
		t.Fatalf("AccountFields = %q", got)
	}
	if got := f.Sheets[0].SentFields(); !slices.Equal(got, []string{"phone_number", "local_presence_number", "city", "country", "zip_code"}) {
		t.Errorf("SentFields = %q", got)
	}
	var cs []Contact
	err := f.NewContactReader(nil).Each(context.Background(), func(c *Contact) error {
		cs = append(cs, *c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status, form string
		extra        []FormValue
	}{
		{ToCall, "city=Springfield&country=US&local_presence_number=Yes&phone_number=%2B14155550132&zip_code=62701",
			[]FormValue{{"city", "Springfield"}, {"country", "US"}, {"zip_code", "62701"}}},
		{Invalid, "", []FormValue{{"city", "=cmd"}, {"country", "US"}, {"zip_code", "00501"}}},
		{ToCall, "country=US&local_presence_number=Yes&phone_number=%2B12125550101",
			[]FormValue{{"city", ""}, {"country", "US"}, {"zip_code", ""}}},
		{ToCall, "city=Boston&phone_number=%2B13105550201", []FormValue{{"city", "Boston"}, {"country", ""}, {"zip_code", ""}}},
	}
	if len(cs) != len(want) {
		t.Fatalf("%d contacts, want %d", len(cs), len(want))
	}
	for i, w := range want {
		c := &cs[i]
		if c.Status != w.status || !slices.Equal(c.Extra, w.extra) {
			t.Errorf("contact %d: %s %q, want %s %q", i, c.Status, c.Extra, w.status, w.extra)
		}
		if w.form != "" && c.EncodeForm() != w.form {
			t.Errorf("contact %d sends %q, want %q", i, c.EncodeForm(), w.form)
		}
	}
	// The reader gives each row a slice of its own: a contact copied out
	// (as dispatch copies it into a job) keeps its values.
	if &cs[0].Extra[0] == &cs[2].Extra[0] {
		t.Error("two rows share one Extra slice")
	}
}

// TestAccountFieldsOffline: a name beyond the seven is a warning naming
// the file, line and key; a name that is not a plain field name is an
// error.
func TestAccountFieldsOffline(t *testing.T) {
	f := loadAccountCampaign(t)
	warnings := f.AccountFieldWarnings(nil)
	want := []string{
		"line 8, sheets[0].fields.city:", "line 10, sheets[0].set.country:", "line 9, sheets[0].fields.zip_code:", "line 14, sheets[1].set.city:",
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings:\n%s", strings.Join(warnings, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(warnings[i], f.Source+" "+w) || !strings.Contains(warnings[i], "checked against the agent's call endpoint when online") {
			t.Errorf("warning %d = %q, want it to start %q", i, warnings[i], w)
		}
	}
	if only := f.AccountFieldWarnings([]string{"B"}); len(only) != 1 || !strings.Contains(only[0], `agent "B" does not exist yet`) {
		t.Errorf("warnings for agent B alone: %q", only)
	}

	for _, bad := range []struct{ from, to, want string }{
		{"      zip_code: ZIP", `      "zip code": ZIP`, `line 9, sheets[0].fields.zip code: "zip code" is not a form field name`},
		{"country: US}", `"local_presence_number=No": x}`, `line 10, sheets[0].set.local_presence_number=No: "local_presence_number=No" is not a form field name`},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "c.yaml"), []byte(strings.Replace(accountCampaign, bad.from, bad.to, 1)), 0o644)
		os.WriteFile(filepath.Join(dir, "leads.csv"), []byte(accountLeads), 0o644)
		os.WriteFile(filepath.Join(dir, "more.csv"), []byte("Phone\n"), 0o644)
		_, err := Load(filepath.Join(dir, "c.yaml"), LoadOptions{Offline: true})
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "c.yaml")+" "+bad.want) {
			t.Errorf("%s: err = %v, want %q", bad.to, err, bad.want)
		}
	}
}

// liveFormData is an agent's form_data as the live service writes it,
// with city and zip_code defined by the account.
var liveFormData = []string{"phone_number", "email", "first_name", "last_name", "ghl_contact_id", "override_agent_id", "city", "zip_code",
	"local_presence_number=No (Yes/No)<br> [If Yes, then the call will be made from AI local presence number]"}

// TestCheckEndpointFields: online, every field a sheet sends must be one
// its agent's call endpoint lists; the error names the key and the fields
// the endpoint takes.
func TestCheckEndpointFields(t *testing.T) {
	f := loadAccountCampaign(t)
	ep := &apiclient.CallEndpoint{FormData: liveFormData}
	err := f.CheckEndpointFields("A", ep)
	var fe *FileError
	if !errors.As(err, &fe) || len(fe.Problems) != 1 {
		t.Fatalf("err = %v, want one problem (country)", err)
	}
	p := fe.Problems[0]
	if p.Key != "sheets[0].set.country" || p.Line != 10 ||
		!strings.Contains(p.Msg, `sheet leads.csv sends country, which agent "A"'s call endpoint does not take (it takes phone_number, email, first_name, last_name, ghl_contact_id, override_agent_id, city, zip_code, local_presence_number)`) {
		t.Errorf("problem = %+v", p)
	}
	if err := f.CheckEndpointFields("B", ep); err != nil {
		t.Errorf("agent B sends city, which the endpoint takes: %v", err)
	}
	ep.FormData = append(slices.Clone(liveFormData), "country")
	if err := f.CheckEndpointFields("A", ep); err != nil {
		t.Errorf("every field taken: %v", err)
	}
	// The service contract's seven alone: every account field is refused.
	ep.FormData = []string{"phone_number", "email", "first_name", "last_name", "ghl_contact_id", "override_agent_id", "local_presence_number (Yes/No)"}
	if err := f.CheckEndpointFields("A", ep); !errors.As(err, &fe) || len(fe.Problems) != 3 {
		t.Errorf("the seven alone: %v", err)
	}
	ep.FormData = nil // the service contract promises no list: nothing to check against
	if err := f.CheckEndpointFields("A", ep); err != nil {
		t.Errorf("no form_data: %v", err)
	}
}

// TestReportAccountColumns: report.csv and report.xlsx carry the account
// fields as columns after the seven, with each row's values, an invalid
// row's too.
func TestReportAccountColumns(t *testing.T) {
	f := loadAccountCampaign(t)
	dir := t.TempDir()
	st, err := store.ReadState(filepath.Join(dir, store.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := WriteReport(context.Background(), f, st, nil, nil, dir, &report.Summary{Campaign: f.Name}); err != nil {
		t.Fatal(err)
	}
	book, err := report.ReadXLSX(filepath.Join(dir, ReportXLSX))
	if err != nil {
		t.Fatal(err)
	}
	rows := dtReadCSV(t, filepath.Join(dir, ReportCSV))
	data, err := os.ReadFile(filepath.Join(dir, ReportCSV))
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Split(strings.SplitN(string(data), "\n", 2)[0], ",") // no cell of the header is quoted
	for name, header := range map[string][]string{"report.csv": header, "report.xlsx": book[0]} {
		if i := slices.Index(header, "local_presence_number"); i < 0 || !slices.Equal(header[i+1:i+5], []string{"city", "country", "zip_code", "status"}) {
			t.Errorf("%s header %q: want city, country, zip_code after local_presence_number", name, header)
		}
	}
	want := []map[string]string{
		{"phone_number": "+14155550132", "city": "Springfield", "country": "US", "zip_code": "62701", "status": "pending"},
		{"phone_number": "bogus", "city": "'=cmd", "country": "US", "zip_code": "00501", "status": "invalid"},
		{"phone_number": "+12125550101", "city": "", "country": "US", "zip_code": "", "status": "pending"},
		{"phone_number": "+13105550201", "city": "Boston", "country": "", "zip_code": "", "status": "pending"},
	}
	if len(rows) != len(want)+1 || len(book) != len(want)+1 {
		t.Fatalf("%d csv rows, %d workbook rows, want %d", len(rows)-1, len(book)-1, len(want))
	}
	for i, w := range want {
		for col, v := range w {
			if rows[i+1][col] != v {
				t.Errorf("report.csv row %d %s = %q, want %q", i+1, col, rows[i+1][col], v)
			}
		}
		if zip := book[i+1][slices.Index(book[0], "zip_code")]; zip != w["zip_code"] {
			t.Errorf("report.xlsx row %d zip_code = %q, want %q (as text)", i+1, zip, w["zip_code"])
		}
	}
}
