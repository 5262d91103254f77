package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/rs/zerolog"
)

// accountContacts is the sheet of accountTestCampaign: 40 contacts, each
// with the city and ZIP code the account's own fields carry (written with
// commas, quotes, accents and leading zeros), then one invalid row.
var accountContacts = func() [][]string {
	rows := [][]string{{"Phone", "First Name", "City", "Zip"}}
	for i := range 40 {
		phone := fmt.Sprintf("+1415555%04d", 100+i)
		if i%2 == 1 {
			phone = fmt.Sprintf("(415) 555-%04d", 100+i) // sent as +1415555....
		}
		rows = append(rows, []string{phone, fmt.Sprintf("Contact %d", i), fmt.Sprintf("Town %d, \"Île\" %c", i, 'A'+i%26), fmt.Sprintf("%05d", i*37)})
	}
	return append(rows, []string{"12345", "Nobody", "Nowhere", "99999"})
}()

// accountTestCampaign writes a campaign for the service at baseURL that
// sets local_presence_number and maps two fields an account defines
// (city, zip_code), logs in when srv is given, and returns the campaign
// file's path.
func accountTestCampaign(t *testing.T, srv *sandbox.Server, baseURL string) string {
	t.Helper()
	path := testCampaign(t, baseURL, "http://127.0.0.1:8765/callback")
	var sheet bytes.Buffer
	w := csv.NewWriter(&sheet)
	w.WriteAll(accountContacts) //nolint:errcheck // a bytes.Buffer
	os.WriteFile(filepath.Join(filepath.Dir(path), "contacts.csv"), sheet.Bytes(), 0o644)
	b, _ := os.ReadFile(path)
	y := strings.Replace(string(b), "    fields: {phone_number: Phone, first_name: First Name}\n",
		"    fields: {phone_number: Phone, first_name: First Name, city: City, zip_code: Zip}\n    set: {local_presence_number: \"yes\"}\n"+
			"state_dir: state\npace: {per_second: 1000, burst: 10, concurrency: 8}\n", 1)
	if y == string(b) {
		t.Fatal("test bug: the campaign's fields line moved")
	}
	os.WriteFile(path, []byte(y), 0o644)
	if srv != nil {
		if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestAccountFieldsReachEveryCall runs a campaign that sets
// local_presence_number and maps two fields of the account against a
// sandbox that lists them in the live service's format (local presence
// last, as "local_presence_number=No (Yes/No)<br> [...]"): plan accepts
// it and shows the default, and every call in the sandbox's ledger
// carries the row's values; report.csv has them as columns.
func TestAccountFieldsReachEveryCall(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{AccountFields: []string{"address", "city", "zip_code"}})
	t.Cleanup(srv.Close)
	srv.AddAgent(sandbox.Agent{AgentName: "Declared", GeneralPrompt: "hello"})
	path := accountTestCampaign(t, srv, srv.URL)
	ctx := context.Background()

	var out bytes.Buffer
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}, format: "json"}, &out); err != nil {
		t.Fatalf("online plan: %v", err)
	}
	var plan campaign.Plan
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	fields := plan.Agents[0].Fields
	if n := len(fields); n != 10 || fields[n-1] != (campaign.PlanField{Name: "local_presence_number", Default: "No"}) || fields[7].Name != "city" {
		t.Errorf("plan's form fields: %+v", fields)
	}
	if plan.Totals.ToCall != 40 || plan.Totals.Invalid != 1 || len(plan.Warnings) != 3 { // the warnings: the called person's hours off, no hours:, no consent:
		t.Errorf("plan: %+v, warnings %q", plan.Totals, plan.Warnings)
	}
	out.Reset()
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "form fields: phone_number, email, first_name, last_name, ghl_contact_id, override_agent_id, address, city, zip_code, local_presence_number (default No)\n") {
		t.Errorf("plan text does not show the endpoint's fields and default:\n%s", out.String())
	}

	if err := runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard); err != nil {
		t.Fatalf("run: %v", err)
	}
	// Eight workers: the ledger is in the order the calls arrived, not
	// the sheet's; each call is matched to its row by number.
	calls := srv.Calls()
	if len(calls) != len(accountContacts)-2 {
		t.Fatalf("%d calls in the ledger, want %d", len(calls), len(accountContacts)-2)
	}
	rowOf := map[string][]string{}
	for i, row := range accountContacts[1 : len(accountContacts)-1] {
		rowOf[fmt.Sprintf("+1415555%04d", 100+i)] = row
	}
	for _, c := range calls {
		row, ok := rowOf[c.Form.Get("phone_number")]
		if !ok {
			t.Errorf("ledger #%d: phone_number %q is not in the sheet, or called twice", c.Seq, c.Form.Get("phone_number"))
			continue
		}
		delete(rowOf, c.Form.Get("phone_number"))
		want := map[string]string{"first_name": row[1], "city": row[2], "zip_code": row[3], "local_presence_number": "Yes"}
		for k, v := range want {
			if got := c.Form.Get(k); got != v {
				t.Errorf("ledger #%d %s = %q, want %q (form %v)", c.Seq, k, got, v, c.Form)
			}
		}
		if !c.Placed || len(c.Form) != len(want)+1 {
			t.Errorf("ledger #%d: placed %v, form %v", c.Seq, c.Placed, c.Form)
		}
	}

	data, err := os.ReadFile(filepath.Join(filepath.Dir(path), "state", "report.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := recs[0]
	lp := slices.Index(head, "local_presence_number")
	if lp < 0 || !slices.Equal(head[lp+1:lp+4], []string{"city", "zip_code", "status"}) {
		t.Fatalf("report header %q: want city and zip_code after local_presence_number", head)
	}
	for i, rec := range recs[1:] {
		if rec[lp+1] != accountContacts[i+1][2] || rec[lp+2] != accountContacts[i+1][3] {
			t.Errorf("report row %d: city %q zip %q, want %q %q", i+2, rec[lp+1], rec[lp+2], accountContacts[i+1][2], accountContacts[i+1][3])
		}
	}

	// A rehearsal with --sandbox gets a sandbox whose account has the
	// campaign's fields.
	if err := runCampaign(ctx, nolog, runOptions{Path: path, Sandbox: true}, io.Discard); err != nil {
		t.Fatalf("run --sandbox: %v", err)
	}
}

// TestAccountFieldsTheEndpointLacks: online, plan and run refuse a
// campaign whose sheet sends a field the agent's call endpoint does not
// list, naming the file, key and the fields it takes, and nobody is
// called; offline, plan warns and goes on.
func TestAccountFieldsTheEndpointLacks(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{AccountFields: []string{"city"}})
	t.Cleanup(srv.Close)
	srv.AddAgent(sandbox.Agent{AgentName: "Declared", GeneralPrompt: "hello"})
	path := accountTestCampaign(t, srv, srv.URL)
	ctx := context.Background()

	want := path + " line 14, sheets[0].fields.zip_code: sheet contacts.csv sends zip_code, which agent \"Declared\"'s call endpoint does not take " +
		"(it takes phone_number, email, first_name, last_name, ghl_contact_id, override_agent_id, city, local_presence_number)"
	planErr := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}}, io.Discard)
	runErr := runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard)
	for what, err := range map[string]error{"plan": planErr, "run": runErr} {
		var fe *campaign.FileError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), want) || exitCode(ctx, err) != run.ExitUsage {
			t.Errorf("%s: exit %d, err = %v\nwant %q", what, exitCode(ctx, err), err, want)
		}
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d calls reached the sandbox", n)
	}

	var out bytes.Buffer
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true}}, &out); err != nil {
		t.Fatalf("offline plan: %v", err)
	}
	for _, w := range []string{
		path + " line 14, sheets[0].fields.city: \"city\" is not one of the seven form fields the service contract names, so it must be a field of your account; checked against the agent's call endpoint when online",
		path + " line 14, sheets[0].fields.zip_code: \"zip_code\"",
		"40 to call",
	} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("offline plan lacks %q:\n%s", w, out.String())
		}
	}
}

// TestAccountFieldsOfAnAgentToCreate: online, an agent that does not
// exist yet has no call endpoint to ask; plan warns and run checks once
// it has created the agent.
func TestAccountFieldsOfAnAgentToCreate(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	path := accountTestCampaign(t, srv, srv.URL)
	ctx := context.Background()
	var out bytes.Buffer
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path}}, &out); err != nil {
		t.Fatalf("plan: %v", err)
	}
	if !strings.Contains(out.String(), `sheets[0].fields.city: "city" is not one of the seven form fields the service contract names, so it must be a field of your account; agent "Declared" does not exist yet`) {
		t.Errorf("plan:\n%s", out.String())
	}
	err := runCampaign(ctx, nolog, runOptions{Path: path}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "sheets[0].fields.city: sheet contacts.csv sends city, which agent \"Declared\"'s call endpoint does not take") {
		t.Errorf("run: %v", err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d calls reached the sandbox", n)
	}
}

// TestInitAsksTheServiceForAccountFields: with the variables the file it
// writes reads, and a saved token, init reads an agent's call endpoint
// and maps the columns whose header matches a field of the account; it
// leaves the others, and without the variables (or with --offline) asks
// nothing.
func TestInitAsksTheServiceForAccountFields(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{AccountFields: []string{"city", "country", "zip_code"}})
	t.Cleanup(srv.Close)
	srv.AddAgent(sandbox.Agent{AgentName: "Other", GeneralPrompt: "hello"})
	srv.AddAgent(sandbox.Agent{AgentName: "Spring", GeneralPrompt: "hello"})
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback") // sets CALLRUN_TOKEN_FILE
	if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	sheet := filepath.Join(dir, "leads.csv")
	os.WriteFile(sheet, []byte("Phone,First Name,City,ZIP Code,Notes\n+14155550132,Ada,Springfield,62701,x\n"), 0o644)
	vars := map[string]string{"CALLRUN_BASE_URL": srv.URL, "CALLRUN_CLIENT_ID": sandbox.DefaultClientID, "CALLRUN_CLIENT_SECRET": sandbox.DefaultClientSecret}
	getenv := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }

	initFile := func(agent string, getenv func(string) (string, bool)) (said, written string) {
		t.Helper()
		var out bytes.Buffer
		if err := initCampaign(context.Background(), nolog, initOptions{sheet: sheet, agent: agent, force: true, getenv: getenv}, &out, io.Discard); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(dir, "campaign.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		return out.String(), string(b)
	}

	said, written := initFile("Spring", getenv)
	for _, want := range []string{
		`      city: "City"    # a field of your account, from agent "Spring"'s call endpoint`,
		`      zip_code: "ZIP Code"    # a field of your account, from agent "Spring"'s call endpoint`,
		`    # Not sent: "Notes"`,
	} {
		if !strings.Contains(written, want) {
			t.Errorf("campaign.yaml lacks %q:\n%s", want, written)
		}
	}
	if !strings.Contains(said, `Your account's own form fields, from agent "Spring"'s call endpoint: city, country, zip_code.`) {
		t.Errorf("init said %q", said)
	}
	noSecrets(t, "init's output and file", said+written)

	// An agent the service does not have yet: another agent of the
	// account tells the account's fields.
	if said, written = initFile("New Agent", getenv); !strings.Contains(written, `city: "City"    # a field of your account, from agent "Other"'s call endpoint`) {
		t.Errorf("new agent: said %q, wrote:\n%s", said, written)
	}

	reads := srv.Stats().EndpointReads
	for name, g := range map[string]func(string) (string, bool){
		"no variables":  func(string) (string, bool) { return "", false },
		"--offline":     nil,
		"no secret set": func(k string) (string, bool) { v, ok := vars[k]; return v, ok && k != "CALLRUN_CLIENT_SECRET" },
	} {
		said, written := initFile("Spring", g)
		if strings.Contains(written, "city:") || !strings.Contains(written, `# Not sent: "City", "Notes", "ZIP Code"`) {
			t.Errorf("%s: said %q, wrote:\n%s", name, said, written)
		}
		if name == "no secret set" && !strings.Contains(said, "Could not ask the service for your account's own form fields") {
			t.Errorf("%s: init said %q", name, said)
		}
	}
	if srv.Stats().EndpointReads != reads {
		t.Error("init asked the service without what it needs, or with --offline")
	}
}

// TestRehearsalSaysItTookTheCampaignsFields: run --sandbox gives its
// sandbox an account with every field the campaign sends beyond the
// seven, so a rehearsal of a campaign that maps a field the live
// account lacks (a misspelt one) "sent" everyone, and the live service
// then refuses every call. The rehearsal says which fields it took on
// trust, and what checks them.
func TestRehearsalSaysItTookTheCampaignsFields(t *testing.T) {
	path := accountTestCampaign(t, nil, "http://127.0.0.1:8089")
	var logs e2eBuffer // the run's workers log at once
	log := zerolog.New(&logs)
	if err := runCampaign(context.Background(), log, runOptions{Path: path, Sandbox: true}, io.Discard); err != nil {
		t.Fatalf("run --sandbox: %v", err)
	}
	var warned bool
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, `"level":"warn"`) && strings.Contains(line, "city, zip_code") && strings.Contains(line, "callrun plan") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("the rehearsal does not say it took city and zip_code as the account's fields:\n%s", logs.String())
	}
}
