package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// runAppOut runs callrun in process with args and returns its exit code
// and what it printed (stdout and stderr together, then the error main
// would print).
func runAppOut(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	ctx := context.Background()
	app := newApp(&session{stdout: &out, stderr: &out})
	err := app.RunContext(ctx, append([]string{"callrun", "--no-progress", "--log-format", "console"}, args...))
	if err != nil {
		out.WriteString(err.Error())
	}
	return exitCode(ctx, err), out.String()
}

// inProcessSandbox starts a sandbox for the test and points the commands
// runAppOut runs at it, with their token file in dir.
func inProcessSandbox(t *testing.T, dir string) *sandbox.Server {
	t.Helper()
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(func() {
		// The commands leave connections they dialled and never used
		// open, which http.Server.Shutdown waits 5 seconds for (it takes
		// a connection that has sent no request for idle only then):
		// close them all, as nothing more is asked of the sandbox.
		srv.Config.Close()
		srv.Close()
	})
	t.Setenv("CALLRUN_BASE_URL", srv.URL)
	t.Setenv("CALLRUN_CLIENT_ID", sandbox.DefaultClientID)
	t.Setenv("CALLRUN_CLIENT_SECRET", sandbox.DefaultClientSecret)
	t.Setenv("CALLRUN_TOKEN_FILE", filepath.Join(dir, "token.json"))
	return srv
}

// TestCRMExportsEndToEnd takes each export of testdata/crm (see its
// README) the way a new user would: callrun init, a prompt and the
// do-not-call list written in, plan, login and a run against the sandbox.
// The sandbox's ledger must hold exactly the numbers of the rows written
// well: none read as another country's than its row's (a wrong-country
// row is invalid), nobody on the do-not-call list, each once. A sheet
// whose country nothing says is refused by plan, --strict or not, until
// a person sets its region.
func TestCRMExportsEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		sheet string
		// What init must have seen.
		phone, country, region string
		// The numbers the sandbox must place.
		placed []string
	}{
		{"mailchimp.csv", `phone_number: "Phone Number"`, `country_column: "CC"`, "region: US",
			[]string{"+14155550101", "+14155550105", "+14155550106"}},
		{"zoho.csv", `phone_number: ["Mobile", "Home Phone", "Phone", "Other Phone"]`, `country_column: "Mailing Country"`, "region: IN",
			[]string{"+919123456789", "+919000012345", "+919876543211"}},
		{"hubspot.csv", `phone_number: ["Mobile Phone Number", "Phone Number"]`, `country_column: "Country/Region"`, "region: US",
			[]string{"+12125550111", "+19175550113", "+19175550114", "+33123456780"}},
		{"salesforce.csv", `phone_number: ["MobilePhone", "Phone"]`, `country_column: "MailingCountry"`, "region: US",
			[]string{"+13125550131", "+14165550123", "+13125550124", "+13125550126", "+13125550127"}},
		// A report export with labels: its "Do Not Call" column is mapped
		// under do_not_call:, and "Email Opt Out" (another channel) is not.
		{"salesforce-report.csv", `phone_number: ["Mobile", "Phone"]`, `country_column: "Mailing Country"`, "region: US",
			[]string{"+13125550151", "+13125550153", "+13125550155"}},
		{"pipedrive.csv", `phone_number: ["Person - Phone - Mobile", "Person - Phone - Work"]`, "", "region: US",
			[]string{"+13035550141", "+13035550143", "+13035550134"}},
		{"french.csv", `phone_number: ["Portable", "Téléphone"]`, `country_column: "Pays"`, "region: FR",
			[]string{"+33123456789", "+33612345678", "+3212345678", "+33556000002"}},
		{"german.csv", `phone_number: ["Handy", "Telefon"]`, `country_column: "Land"`, "region: DE",
			[]string{"+493012345678", "+493012345679", "+4312345678", "+49891234567"}},
		{"undecided.csv", `phone_number: "Phone"`, "", "region: TODO", nil},
	} {
		t.Run(tc.sheet, func(t *testing.T) {
			dir, srv := exportsE2E(t, "crm", tc.sheet, "dnc.csv")

			code, out := runAppOut(t, "init", "--offline", filepath.Join(dir, tc.sheet))
			if code != 0 {
				t.Fatalf("init: exit %d\n%s", code, out)
			}
			path := filepath.Join(dir, "campaign.yaml")
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			file := string(data)
			for _, want := range []string{tc.phone, tc.country, tc.region} {
				if !strings.Contains(file, want) {
					t.Errorf("init did not write %q:\n%s", want, file)
				}
			}
			if tc.sheet == "salesforce-report.csv" && (!strings.Contains(file, `do_not_call: {column: "Do Not Call"}`) || !strings.Contains(file, `# Not sent: "Contact ID", "Email Opt Out", "Lead Source"`)) {
				t.Errorf("init listed the Do Not Call column as not sent, or mapped Email Opt Out:\n%s", file)
			}
			if tc.country == "" && strings.Contains(file, "country_column:") {
				t.Errorf("init mapped a country column in a sheet without one:\n%s", file)
			}
			// What a person adds: the prompt, the do-not-call list; and, as
			// nobody is phoned, no hours (the test runs at any hour).
			file = strings.Replace(file, `"TODO: write the agent's prompt"`, `"Hello, this is a test call."`, 1)
			file = strings.Replace(file, "suppress: []", "suppress: [dnc.csv]", 1)
			file = regexp.MustCompile(`(?m)^hours: .*$`).ReplaceAllString(file, "unsafe_ignore_called_person_hours: true")
			os.WriteFile(path, []byte(file), 0o644)

			if tc.placed == nil {
				for _, args := range [][]string{{"plan", "--offline", path}, {"plan", "--offline", "--strict", path}, {"run", path}} {
					code, out := runAppOut(t, args...)
					if code != run.ExitUsage || !strings.Contains(out, "region is still TODO") {
						t.Errorf("%s on a sheet whose country init could not decide: exit %d, want %d with the TODO named\n%s", args[0], code, run.ExitUsage, out)
					}
				}
				if n := len(srv.Calls()); n != 0 {
					t.Errorf("the sandbox received %d calls", n)
				}
				return
			}

			if tc.sheet == "mailchimp.csv" {
				checkUnreadableSuppression(t, srv, dir, path, file)
			}
			planAndRun(t, path, len(tc.placed))
			var placed []string
			for _, c := range srv.Placed() {
				placed = append(placed, c.Form.Get("phone_number"))
			}
			slices.Sort(placed)
			want := slices.Clone(tc.placed)
			slices.Sort(want)
			if !slices.Equal(placed, want) {
				t.Errorf("the sandbox placed %v, want %v", placed, want)
			}
			if n := len(srv.Calls()); n != len(want) {
				t.Errorf("the sandbox received %d call starts, want %d", n, len(want))
			}
			if tc.sheet == "pipedrive.csv" {
				checkReportReason(t, filepath.Join(dir, ".callrun", "pipedrive", "report.csv"), "5", `number from column "Person - Phone - Work"`)
			}
		})
	}
}

// checkReportReason checks that report.csv's row for sheet row row has a
// reason holding want.
func checkReportReason(t *testing.T, path, row, want string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, r := range recs[1:] {
		if r[col["row"]] == row {
			if !strings.Contains(r[col["reason"]], want) {
				t.Errorf("report.csv row %s: reason %q, want it to hold %q", row, r[col["reason"]], want)
			}
			return
		}
	}
	t.Errorf("report.csv has no row %s", row)
}

// checkUnreadableSuppression: a do-not-call export whose column read is
// record ids, not numbers, stops plan and run before anything is asked of
// the service: no agent created, no call. file is the campaign file's
// text at path, put back after.
func checkUnreadableSuppression(t *testing.T, srv *sandbox.Server, dir, path, file string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, "crm-dnc.csv"), []byte("Record ID,Name\n0035g00000XyZ01AAB,Ann\n0035g00000XyZ02AAB,Bo\n"), 0o644)
	os.WriteFile(path, []byte(strings.Replace(file, "suppress: [dnc.csv]", "suppress: [crm-dnc.csv]", 1)), 0o644)
	if code, out := runAppOut(t, "auth", "login", "--code", sandbox.DefaultCode, path); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, out)
	}
	for _, cmd := range []string{"plan", "run"} {
		code, out := runAppOut(t, cmd, path)
		if code != run.ExitUsage || !strings.Contains(out, `crm-dnc.csv: 2 of its 2 entries in column "Record ID" do not read as phone numbers`) {
			t.Errorf("%s with a do-not-call file of record ids: exit %d\n%s", cmd, code, out)
		}
	}
	if n, m := len(srv.Agents()), len(srv.Calls()); n != 0 || m != 0 {
		t.Errorf("the service saw %d agents created and %d calls", n, m)
	}
	os.WriteFile(path, []byte(file), 0o644)
}
