package campaign

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/phone"
)

// writeCampaign writes a campaign file and the files it refers to into a
// temporary directory and returns the campaign file's path.
func writeCampaign(t *testing.T, yaml string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"leads.csv":    "Phone,First Name\n+14155550132,Ada\n",
		"dnc.csv":      "phone\n+14155550100\n",
		"prompt.txt":   "Be kind.\n",
		"empty.txt":    "  \n",
		"campaign.yml": yaml,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "campaign.yml")
}

const goodCampaign = `name: spring-promo
service:
  base_url: https://api.example.com
  client_id: ${TEST_CLIENT_ID}
  client_secret: ${TEST_CLIENT_SECRET}
  redirect_uri: http://127.0.0.1:8765/callback
agents:
  - name: Spring Promo
    prompt_file: prompt.txt
    webhook: {url: "https://hooks.example.com/done"}
sheets:
  - file: leads.csv
    agent: Spring Promo
    fields: {phone_number: Phone, first_name: First Name}
    set: {local_presence_number: "yes"}
suppress: [dnc.csv]
pace:
  per_second: ${TEST_RATE:-2.5}
  concurrency: 8
hours: {timezone: America/New_York, days: [mon, Tue], start: "09:00", end: "20:00"}
`

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

var testEnv = env(map[string]string{"TEST_CLIENT_ID": "cid", "TEST_CLIENT_SECRET": "csecret"})

func TestLoadGood(t *testing.T) {
	path := writeCampaign(t, goodCampaign)
	f, err := Load(path, LoadOptions{Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if f.Service.ClientID != "cid" || f.Service.ClientSecret != "csecret" {
		t.Errorf("service = %+v", f.Service)
	}
	if f.Pace.PerSecond != 2.5 || f.Pace.Burst != DefaultBurst || f.Pace.Concurrency != 8 || f.Pace.MaxRetryAfter != DefaultMaxRetryAfter || f.Pace.MaxActiveCalls != 0 {
		t.Errorf("pace = %+v (the ${VAR:-default} must resolve as a number)", f.Pace)
	}
	a := f.Agents[0]
	if a.Prompt != "Be kind.\n" || a.Webhook.Method != "POST" || a.ReadyTimeout != DefaultReadyTimeout {
		t.Errorf("agent = %+v", a)
	}
	s := f.Sheets[0]
	if s.Region != "US" || s.Set["local_presence_number"] != "Yes" {
		t.Errorf("sheet = %+v", s)
	}
	if f.Dedupe != "campaign" || f.StateDir != filepath.Join(".callrun", "spring-promo") {
		t.Errorf("defaults: dedupe %q state_dir %q", f.Dedupe, f.StateDir)
	}
	if got := f.Path("leads.csv"); got != filepath.Join(filepath.Dir(path), "leads.csv") {
		t.Errorf("Path = %s", got)
	}
	if f.Line("sheets[0].agent") != 13 {
		t.Errorf("line of sheets[0].agent = %d, want 13", f.Line("sheets[0].agent"))
	}
}

// problems loads yaml and returns the problems' strings, failing the test
// when the file loads.
func problems(t *testing.T, yaml string, opts LoadOptions) []string {
	t.Helper()
	if opts.Getenv == nil {
		opts.Getenv = testEnv
	}
	_, err := Load(writeCampaign(t, yaml), opts)
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FileError", err)
	}
	var out []string
	for _, p := range fe.Problems {
		if !strings.HasSuffix(p.File, "campaign.yml") {
			t.Errorf("problem does not name the file: %+v", p)
		}
		out = append(out, p.String())
	}
	return out
}

func expectProblems(t *testing.T, got []string, want ...string) {
	t.Helper()
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.Contains(g, w) {
				found = true
			}
		}
		if !found {
			t.Errorf("no problem contains %q; problems:\n  %s", w, strings.Join(got, "\n  "))
		}
	}
}

func TestUnknownKeyNamesLineAndSuggests(t *testing.T) {
	bad := strings.Replace(goodCampaign, "    fields:", "    feilds:", 1)
	got := problems(t, bad, LoadOptions{})
	expectProblems(t, got, `line 14, sheets[0].feilds: unknown key "feilds"; did you mean "fields"?`, "allowed here: file, agent, fields")
}

// TestMissingKeyNamesTheLineAbove: a problem of a key the file leaves
// out (an agent's name) names the line of the entry it is missing from,
// and a sheet's agent: problem does not offer the unnamed agent.
func TestMissingKeyNamesTheLineAbove(t *testing.T) {
	bad := `name: x
service:
  base_url: http://api.example.com
  client_id: id
  client_secret: x
agents:
  - prompt: hi
sheets:
  - file: contacts.csv
    fields: {phone_number: Phone}
`
	got := problems(t, bad, LoadOptions{})
	expectProblems(t, got,
		"line 7, agents[0].name: every agent needs a name",
		"line 9, sheets[0].agent: sheet contacts.csv needs agent: (one of the agents: none has a name yet)")
}

func TestAllProblemsAtOnce(t *testing.T) {
	bad := `name: "bad name!"
service:
  base_url: http://api.example.com
  client_id: ${UNSET_VAR}
  client_secret: x
  redirect_uri: not-a-url
agents:
  - name: A
    prompt: hi
    webhook: {url: "/relative", method: PUT}
  - name: A
    prompt_file: missing.txt
  - name: B
    prompt_file: empty.txt
sheets:
  - file: nowhere.csv
    agent: C
    fields: {phone number: Phone, first_name: ""}
    set: {local_presence_number: maybe, "zip code": "62701"}
    region: XX
suppress: [gone.csv]
dedupe: sometimes
pace: {per_second: -1, burst: 0, concurrency: 1000}
hours: {timezone: Mars/Olympus, days: [funday], start: "9am", end: "20:00"}
`
	got := problems(t, bad, LoadOptions{})
	expectProblems(t, got,
		`line 1, name: name "bad name!"`,
		"line 3, service.base_url: ", "non-loopback",
		"line 4, service.client_id: environment variable UNSET_VAR is not set",
		"line 6, service.redirect_uri:",
		"line 10, agents[0].webhook.url:",
		"agents[0].webhook.method: webhook method \"PUT\"",
		"line 11, agents[1].name: agent name \"A\" is declared twice",
		"agents[1].prompt_file: prompt file", "no such file",
		"agents[2].prompt_file:", "is empty",
		"line 16, sheets[0].file: sheet",
		"line 17, sheets[0].agent: agent \"C\" is not declared",
		"sheets[0].fields: map the phone number",
		"sheets[0].fields.phone number: \"phone number\" is not a form field name: a field name holds only letters, digits and _", `did you mean "phone_number"?`,
		"sheets[0].fields.first_name: field first_name maps to an empty column name",
		"sheets[0].set.local_presence_number: local_presence_number is \"maybe\"; use Yes or No",
		"sheets[0].set.zip code: \"zip code\" is not a form field name",
		"line 20, sheets[0].region: region \"XX\"",
		"suppress[0]: suppression file",
		"dedupe: dedupe is \"sometimes\"",
		"pace.per_second", "pace.burst", "pace.concurrency",
		"hours.timezone: timezone \"Mars/Olympus\"", "hours.days[0]: day \"funday\"", "hours.start: start \"9am\"",
	)
}

// TestPaceLimits: pace.max_active_calls needs pace.call_length;
// pace.max_retry_after is 1s to 24h; both read as durations.
func TestPaceLimits(t *testing.T) {
	pace := "pace:\n  per_second: ${TEST_RATE:-2.5}\n  concurrency: 8\n"
	if !strings.Contains(goodCampaign, pace) {
		t.Fatalf("goodCampaign has no %q", pace)
	}
	with := func(p string) string { return strings.Replace(goodCampaign, pace, p+"\n", 1) }
	f, err := Load(writeCampaign(t, with("pace: {max_active_calls: 20, call_length: 3m, max_retry_after: 10m}")), LoadOptions{Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if f.Pace.MaxActiveCalls != 20 || f.Pace.CallLength != 3*time.Minute || f.Pace.MaxRetryAfter != 10*time.Minute {
		t.Errorf("pace = %+v", f.Pace)
	}
	for p, want := range map[string]string{
		"pace: {max_active_calls: 20}":                   "pace.call_length: max_active_calls needs call_length",
		"pace: {max_active_calls: -1}":                   "pace.max_active_calls: max_active_calls is -1",
		"pace: {max_retry_after: 0s}":                    "pace.max_retry_after: max_retry_after is 0s; it must be 1s to 24h",
		"pace: {max_retry_after: 48h}":                   "pace.max_retry_after: max_retry_after is 48h0m0s",
		"pace: {max_active_calls: 2, call_length: soon}": "pace.call_length",
	} {
		expectProblems(t, problems(t, with(p), LoadOptions{Getenv: testEnv}), want)
	}
}

func TestOfflineNeedsNoService(t *testing.T) {
	noService := strings.Replace(goodCampaign, "  base_url: https://api.example.com\n", "", 1)
	if _, err := Load(writeCampaign(t, noService), LoadOptions{Offline: true, Getenv: env(nil)}); err != nil {
		t.Fatalf("offline load with unset secrets and no base_url: %v", err)
	}
	got := problems(t, noService, LoadOptions{Getenv: env(nil)})
	expectProblems(t, got, "service.base_url is required", "environment variable TEST_CLIENT_ID is not set", "TEST_CLIENT_SECRET")
}

func TestServiceOnlyIgnoresTheRest(t *testing.T) {
	y := goodCampaign + "region: ${NOT_SET_ANYWHERE}\n"
	y = strings.Replace(y, "file: leads.csv", "file: missing.csv", 1)
	if _, err := Load(writeCampaign(t, y), LoadOptions{ServiceOnly: true, Getenv: testEnv}); err != nil {
		t.Fatalf("service-only load: %v", err)
	}
	// Unknown keys are still errors.
	got := problems(t, y+"colour: red\n", LoadOptions{ServiceOnly: true})
	expectProblems(t, got, `unknown key "colour"`)
}

func TestYAMLSyntaxAndTypeErrorsCarryLines(t *testing.T) {
	expectProblems(t, problems(t, "name: x\nagents: [\n", LoadOptions{}), "campaign.yml line 2")
	expectProblems(t, problems(t, strings.Replace(goodCampaign, "concurrency: 8", "concurrency: lots", 1), LoadOptions{}),
		"line 19, pace.concurrency: cannot read text `lots` as a whole number")
	expectProblems(t, problems(t, "", LoadOptions{}), "the file is empty")
	// Text where a mapping goes: its keys, not the Go type yaml.v3 names.
	expectProblems(t, problems(t, goodCampaign+"do_not_call: Do Not Call\n", LoadOptions{}),
		"do_not_call: do_not_call takes keys, not the text `Do Not ...`: write do_not_call: {column: ...} (its keys: column, values, columns, ignore)")
	expectProblems(t, problems(t, goodCampaign+"consent: Consent Date\n", LoadOptions{}),
		"consent: consent takes keys, not the text `Consent...`: write consent: {column: ...}")
	expectProblems(t, problems(t, "- a\n- b\n", LoadOptions{}), "a campaign file is a YAML mapping")
	expectProblems(t, problems(t, goodCampaign+"---\nname: two\n", LoadOptions{}), "more than one YAML document")
	expectProblems(t, problems(t, goodCampaign+"name: again\n", LoadOptions{}), `key "name" appears twice`)
}

func TestMissingCampaignFile(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), LoadOptions{})
	if err == nil || !strings.Contains(err.Error(), "nope.yaml: no such file") {
		t.Fatalf("err = %v", err)
	}
}

func TestEnvDefaultAndEmpty(t *testing.T) {
	y := strings.Replace(goodCampaign, "${TEST_CLIENT_ID}", "${EMPTY_ID:-fallback}", 1)
	f, err := Load(writeCampaign(t, y), LoadOptions{Getenv: env(map[string]string{"EMPTY_ID": "", "TEST_CLIENT_SECRET": "s"})})
	if err != nil {
		t.Fatal(err)
	}
	if f.Service.ClientID != "fallback" {
		t.Errorf("client_id = %q, want the default for an empty variable", f.Service.ClientID)
	}
}

func TestReadyTimeoutParses(t *testing.T) {
	y := strings.Replace(goodCampaign, "    prompt_file: prompt.txt\n", "    prompt_file: prompt.txt\n    ready_timeout: 90s\n", 1)
	f, err := Load(writeCampaign(t, y), LoadOptions{Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if f.Agents[0].ReadyTimeout != 90*time.Second {
		t.Errorf("ready_timeout = %v", f.Agents[0].ReadyTimeout)
	}
}

func TestYesNo(t *testing.T) {
	for _, in := range []string{"yes", "YES", "y", "True", "1", " Yes "} {
		if v, ok := YesNo(in); !ok || v != "Yes" {
			t.Errorf("YesNo(%q) = %q %v", in, v, ok)
		}
	}
	for _, in := range []string{"no", "N", "false", "0"} {
		if v, ok := YesNo(in); !ok || v != "No" {
			t.Errorf("YesNo(%q) = %q %v", in, v, ok)
		}
	}
	for _, in := range []string{"", "maybe", "2"} {
		if _, ok := YesNo(in); ok {
			t.Errorf("YesNo(%q) accepted", in)
		}
	}
}

// TestUnknownKeyDoesNotHideOtherProblems: a typo'd key, a missing sheet
// and a bad value are reported together, not one per try.
func TestUnknownKeyDoesNotHideOtherProblems(t *testing.T) {
	bad := strings.Replace(goodCampaign, "dnc.csv", "missing-dnc.csv", 1)
	bad = strings.Replace(bad, "dedupe:", "dedup:", 1) + "dedup: campaign\ndedupe: sometimes\n"
	expectProblems(t, problems(t, bad, LoadOptions{}),
		`unknown key "dedup"; did you mean "dedupe"?`,
		"suppress[0]: suppression file",
		`dedupe is "sometimes"`)
}

func TestCountriesAndKindsKeys(t *testing.T) {
	bad := goodCampaign + `countries: [US, Canada]
allow_number_kinds: [premium_rate, expensive]
`
	bad = strings.Replace(bad, "    set: {local_presence_number: \"yes\"}\n", "    set: {local_presence_number: \"yes\"}\n    countries: []\n    allow_number_kinds: [PAGER, tollfree]\n", 1)
	got := problems(t, bad, LoadOptions{})
	expectProblems(t, got,
		`line 23, countries[1]: "Canada" is not a two-letter country code`,
		`line 24, allow_number_kinds[1]: "expensive" is not a kind of number; the kinds refused unless allowed are premium_rate, shared_cost, personal_number, pager, voicemail, international_non_geographic`,
		"sheets[0].countries: countries is empty",
		`sheets[0].allow_number_kinds[1]: "tollfree" is not a kind of number`,
	)

	// A sheet inherits the campaign's lists unless it writes its own.
	two := strings.Replace(goodCampaign, "suppress: [dnc.csv]\n", `  - file: leads.csv
    agent: Spring Promo
    fields: {phone_number: Phone}
suppress: [dnc.csv]
region: CA
countries: [us, ca]
allow_number_kinds: [premium_rate]
`, 1)
	path := writeCampaign(t, strings.Replace(two, "  - file: leads.csv\n", "  - file: leads.csv\n    countries: [GB]\n", 1))
	f, err := Load(path, LoadOptions{Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sheet       int
		cell, want  string
		errContains string
	}{
		{0, "+44 20 7946 0123", "+442079460123", ""},
		{0, "+1 212 555 0147", "", "add US to sheets[0].countries (now GB)"},
		{1, "+1 212 555 0147", "+12125550147", ""},
		{1, "(416) 555-0163", "+14165550163", ""},
		{1, "1-900-234-5678", "+19002345678", ""}, // premium rate, allowed
		{1, "+44 20 7946 0123", "", "add GB to countries (now US, CA)"},
	} {
		ph, err := phone.Read(tc.cell, f.PhoneRules(tc.sheet))
		if tc.errContains != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errContains) {
				t.Errorf("sheet %d %q: %+v, %v; want an error containing %q", tc.sheet, tc.cell, ph, err, tc.errContains)
			}
		} else if err != nil || ph.E164 != tc.want {
			t.Errorf("sheet %d %q: %+v, %v; want %s", tc.sheet, tc.cell, ph, err, tc.want)
		}
	}
}

// TestTypeErrorInAFlowMappingBlamesItsKey: in pace: {per_second: fast,
// burst: 1, concurrency: 4} every key stands on one line; the message
// names the key whose value it quotes.
func TestTypeErrorInAFlowMappingBlamesItsKey(t *testing.T) {
	for key, flow := range map[string]string{
		"pace.per_second":  "pace: {per_second: fast, burst: 1, concurrency: 4}",
		"pace.burst":       "pace: {per_second: 2, burst: lots, concurrency: 4}",
		"pace.concurrency": "pace: {per_second: 2, burst: 1, concurrency: many}",
	} {
		bad := strings.Replace(goodCampaign, "pace:\n  per_second: ${TEST_RATE:-2.5}\n  concurrency: 8", flow, 1)
		got := problems(t, bad, LoadOptions{})
		if len(got) != 1 || !strings.Contains(got[0], "line 17, "+key+": cannot read text") {
			t.Errorf("%s: problems %q, want one blaming %s", flow, got, key)
		}
	}
}

// TestIndentationErrorPointsAtTheLine: yaml.v3 reports where the enclosing
// block starts; the problem names the line whose indentation broke it.
func TestIndentationErrorPointsAtTheLine(t *testing.T) {
	// Line 14 ("   fields:") is indented one space short of its sheet's keys.
	bad := strings.Replace(goodCampaign, "    fields: {phone_number", "   fields: {phone_number", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}),
		"campaign.yml line 14: did not find expected '-' indicator; check this line's indentation against the lines above")
	// A key of the second agent two lines below its "- name:" line, one
	// space too far in.
	bad = strings.Replace(goodCampaign, "    webhook: {url", "     webhook: {url", 1)
	expectProblems(t, problems(t, bad, LoadOptions{}), "campaign.yml line 10: mapping values are not allowed in this context")
	// An unclosed flow mapping: the line where it should have closed.
	expectProblems(t, problems(t, "name: x\npace: {per_second: 1,\n  burst: 2\nhours: x\n", LoadOptions{}), "campaign.yml line 3: did not find expected ',' or '}'")
}

// TestStateKey: state: {postgres: ...} reads a URL from the environment;
// unquoted inside { } the ${VAR} breaks the YAML, and the problem says to
// quote it; offline an unset variable is no problem, online it is.
func TestStateKey(t *testing.T) {
	withURL := func(v string) LoadOptions {
		vars := map[string]string{"TEST_CLIENT_ID": "cid", "TEST_CLIENT_SECRET": "csecret"}
		if v != "" {
			vars["CALLRUN_DATABASE_URL"] = v
		}
		return LoadOptions{Getenv: env(vars)}
	}
	withState := goodCampaign + "state: {postgres: \"${CALLRUN_DATABASE_URL}\"}\n"
	f, err := Load(writeCampaign(t, withState), withURL("postgres://u:pw1234@db.example:5432/calls"))
	if err != nil || !f.SharedState() || f.State.Postgres != "postgres://u:pw1234@db.example:5432/calls" {
		t.Fatalf("state.postgres: %+v, %v", f, err)
	}
	offline := withURL("")
	offline.Offline = true
	if _, err := Load(writeCampaign(t, withState), offline); err != nil {
		t.Errorf("offline with the variable unset: %v", err)
	}
	got := problems(t, withState, withURL(""))
	if len(got) != 1 || !strings.Contains(got[0], "CALLRUN_DATABASE_URL is not set") {
		t.Errorf("online with the variable unset: %q", got)
	}
	got = problems(t, goodCampaign+"state: {postgres: \"mysql://x\"}\n", LoadOptions{})
	if len(got) != 1 || !strings.Contains(got[0], "state.postgres is not a PostgreSQL connection URL") {
		t.Errorf("a URL of another database: %q", got)
	}
	got = problems(t, goodCampaign+"state: {postgres: ${CALLRUN_DATABASE_URL}}\n", withURL("postgres://u@h/db"))
	if len(got) != 1 || !strings.Contains(got[0], `inside { } a ${VAR} must be quoted`) {
		t.Errorf("unquoted ${VAR} in a flow mapping: %q", got)
	}
}

// TestPathTakesEitherSlash: a campaign file written on Windows, with
// backslashes in its paths, loads on Linux and macOS as it does there, and
// the paths it names are the files beside it.
func TestPathTakesEitherSlash(t *testing.T) {
	dir := filepath.Dir(writeCampaign(t, ""))
	for name, body := range map[string]string{
		"contacts/leads.csv": "Phone,First Name\n+14155550132,Ada\n",
		"contacts/dnc.csv":   "phone\n+14155550100\n",
		"prompts/prompt.txt": "Be kind.\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y := strings.NewReplacer(
		"file: leads.csv", `file: contacts\leads.csv`, // a plain scalar keeps its backslash
		"prompt_file: prompt.txt", "prompt_file: prompts/prompt.txt",
		"suppress: [dnc.csv]", `suppress: ['.\contacts/dnc.csv']`,
	).Replace(goodCampaign)
	path := filepath.Join(dir, "campaign.yml")
	if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path, LoadOptions{Getenv: testEnv})
	if err != nil {
		t.Fatalf("a campaign with both slashes in its paths: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{f.Sheets[0].File, filepath.Join(dir, "contacts", "leads.csv")},
		{f.Suppress[0].File, filepath.Join(dir, "contacts", "dnc.csv")},
		{`..\shared\dnc.csv`, filepath.Join(filepath.Dir(dir), "shared", "dnc.csv")},
		{"/srv/callrun/leads.csv", filepath.FromSlash("/srv/callrun/leads.csv")},
		{"", ""},
	} {
		if got := f.Path(tc.in); got != tc.want {
			t.Errorf("Path(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestAliasUsedAmissLeavesItsAnchorAlone: a mapping anchored where it
// belongs (pace: &p {per_second: 5, ...}) and aliased where it does not
// (pressure: *p) is one problem, the alias's unknown keys. Dropping them
// from the one node both share emptied pace too, and the file was told
// "pace.per_second: per_second is 0" when it says 5.
func TestAliasUsedAmissLeavesItsAnchorAlone(t *testing.T) {
	path := writeCampaign(t, strings.Replace(goodCampaign, "pace:\n  per_second: ${TEST_RATE:-2.5}\n  concurrency: 8\n",
		"pace: &p {per_second: 5, burst: 1, concurrency: 4}\npressure: *p\n", 1))
	_, err := Load(path, LoadOptions{Getenv: testEnv})
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want a *FileError", err)
	}
	for _, p := range fe.Problems {
		if strings.HasPrefix(p.Key, "pace") {
			t.Errorf("a problem with pace, which is well written: %s", p)
		}
	}
	if !strings.Contains(err.Error(), `pressure.per_second: unknown key "per_second"`) {
		t.Errorf("the alias's unknown keys are not named: %v", err)
	}
}

// TestAliasReadsAsItsAnchor: a mapping anchored once and aliased where it
// belongs reads the same in both places.
func TestAliasReadsAsItsAnchor(t *testing.T) {
	path := writeCampaign(t, strings.Replace(goodCampaign,
		"    fields: {phone_number: Phone, first_name: First Name}\n    set: {local_presence_number: \"yes\"}\n",
		"    fields: &f {phone_number: Phone, first_name: First Name}\n    set: {local_presence_number: \"yes\"}\n  - file: leads.csv\n    agent: Spring Promo\n    fields: *f\n", 1))
	f, err := Load(path, LoadOptions{Getenv: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sheets) != 2 || len(f.Sheets[1].Fields) != 2 || f.Sheets[1].Fields["first_name"] == "" {
		t.Errorf("the aliased fields read as %+v", f.Sheets[1].Fields)
	}
}

// TestAliasesOfAliasesAreRefused: a few kilobytes of aliases of aliases
// (120 sheets, each aliasing 120 do-not-call columns, each aliasing 120
// values: 1.7 million values) took seconds and most of a gigabyte to
// load. The file is refused at once, naming the aliases, before anything
// is decoded.
func TestAliasesOfAliasesAreRefused(t *testing.T) {
	const n = 120
	var b strings.Builder
	b.WriteString("name: x\nagents:\n  - name: A\n    prompt: hi\n")
	b.WriteString("do_not_call:\n  columns: &cols\n    - &col {column: C, values: [" + strings.TrimSuffix(strings.Repeat("v,", n), ",") + "]}\n")
	b.WriteString(strings.Repeat("    - *col\n", n-1))
	b.WriteString("sheets:\n  - &s {file: a.csv, agent: A, fields: {phone_number: Phone}, do_not_call: {columns: *cols}}\n")
	b.WriteString(strings.Repeat("  - *s\n", n-1))
	dir := t.TempDir()
	path := filepath.Join(dir, "campaign.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte("Phone,C\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Load(path, LoadOptions{Getenv: testEnv})
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "aliases") {
		t.Fatalf("Load = %v, want the file refused for its aliases", err)
	}
	if mb := (after.TotalAlloc - before.TotalAlloc) >> 20; mb > 200 {
		t.Errorf("loading it allocated %d MiB before refusing it", mb)
	}
}
