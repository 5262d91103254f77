package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

// testCampaign writes a campaign file for a sandbox at baseURL into a
// temporary directory, points the token file there too, and returns the
// campaign file's path.
func testCampaign(t *testing.T, baseURL, redirect string) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("CALLRUN_TOKEN_FILE", filepath.Join(dir, "token.json"))
	// A CALLRUN_HOME of the test's own: the do-not-call list and the call
	// starts contact pressure counts are shared by every campaign on it,
	// and the tests call the same numbers.
	t.Setenv("CALLRUN_HOME", filepath.Join(dir, "home"))
	files := map[string]string{
		"contacts.csv": "Phone,First Name\n+14155550132,Ada\n",
		"campaign.yaml": fmt.Sprintf(`name: test
service:
  base_url: %s
  client_id: %s
  client_secret: ${TEST_SECRET}
  redirect_uri: %s
  authorize_url: %s/oauth/authorize
agents:
  - name: Declared
    prompt: hello
sheets:
  - file: contacts.csv
    agent: Declared
    fields: {phone_number: Phone, first_name: First Name}
unsafe_ignore_called_person_hours: true # the tests run at any hour
`, baseURL, sandbox.DefaultClientID, redirect, baseURL),
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("TEST_SECRET", sandbox.DefaultClientSecret)
	return filepath.Join(dir, "campaign.yaml")
}

// secretsIn fails the test if s holds a secret of the sandbox or a token.
func noSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, secret := range []string{sandbox.DefaultClientSecret, sandbox.DefaultCode} {
		if strings.Contains(s, secret) {
			t.Errorf("%s shows the secret %q:\n%s", what, secret, s)
		}
	}
	if regexp.MustCompile(`(at|rt)_[0-9a-f]{8,}`).MatchString(s) {
		t.Errorf("%s shows a token:\n%s", what, s)
	}
}

func TestLoginWithCodeThenListAgents(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	srv.AddAgent(sandbox.Agent{AgentName: "Declared", Status: "active", GeneralPrompt: "hello"})
	srv.AddAgent(sandbox.Agent{AgentName: "Other", Status: "pending", GeneralPrompt: "x", WebhookEndpoint: "https://h.example.com/x", WebhookEndpointMethod: "GET"})
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	ctx := context.Background()

	var out, prompt bytes.Buffer
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, strings.NewReader(""), &out, &prompt); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Logged in to "+srv.URL) {
		t.Errorf("login said %q", out.String())
	}
	noSecrets(t, "login output", out.String()+prompt.String())
	st, err := os.Stat(os.Getenv("CALLRUN_TOKEN_FILE"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v %v", st, err)
	}

	out.Reset()
	svc, err := openService(ctx, nolog, path, campaign.LoadOptions{ServiceOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := authStatus(svc, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Refresh token: yes") || !strings.Contains(out.String(), "(in 1h0m0s)") {
		t.Errorf("status said %q", out.String())
	}
	noSecrets(t, "status output", out.String())

	out.Reset()
	if err := agentsList(ctx, nolog, path, "text", &out); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !regexp.MustCompile(`(?m)^Declared\s+\S+\s+active\s+-\s+yes$`).MatchString(text) ||
		!regexp.MustCompile(`(?m)^Other\s+\S+\s+pending\s+GET https://h.example.com/x\s*$`).MatchString(text) {
		t.Errorf("agents list:\n%s", text)
	}

	out.Reset()
	if err := agentsList(ctx, nolog, path, "json", &out); err != nil {
		t.Fatal(err)
	}
	var rows []map[string]any
	if err := json.Unmarshal(out.Bytes(), &rows); err != nil {
		t.Fatalf("json: %v\n%s", err, out.String())
	}
	if len(rows) != 2 || rows[0]["agent_name"] != "Declared" || rows[0]["declared"] != true || rows[1]["weebhook_endpoint_method"] != "GET" {
		t.Errorf("json rows = %v", rows)
	}
}

// TestLoginCatchesLoopbackRedirect plays the browser: it opens the printed
// authorize URL, the sandbox approves and redirects to callrun's listener.
func TestLoginCatchesLoopbackRedirect(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	redirect := "http://" + ln.Addr().String() + "/callback"
	ln.Close() // free the port for callrun to listen on
	path := testCampaign(t, srv.URL, redirect)

	pr, pw := io.Pipe()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- authLogin(context.Background(), nolog, path, "", 30*time.Second, strings.NewReader(""), &out, pw)
		pw.Close()
	}()
	// Read the prompt until the authorize URL and the waiting line appear.
	var prompt strings.Builder
	urlRe := regexp.MustCompile(`http://\S+/oauth/authorize\?\S+`)
	buf := make([]byte, 4096)
	for !strings.Contains(prompt.String(), "Waiting for the redirect") {
		n, err := pr.Read(buf)
		prompt.Write(buf[:n])
		if err != nil {
			t.Fatalf("prompt ended early: %q (%v)", prompt.String(), err)
		}
	}
	go io.Copy(io.Discard, pr)
	authURL := urlRe.FindString(prompt.String())
	if authURL == "" {
		t.Fatalf("no authorize URL in %q", prompt.String())
	}
	resp, err := http.Get(authURL) // follows the sandbox's redirect to callrun
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "callrun is authorized") {
		t.Errorf("browser page = %q", body)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if srv.Stats().TokenExchanges != 1 {
		t.Errorf("exchanges = %d", srv.Stats().TokenExchanges)
	}
	noSecrets(t, "login output", out.String()+prompt.String())
}

// TestScopeOnAuthorizeURL: service.scope in the campaign file reaches
// the authorize URL auth login prints, beside response_type=code, as the
// live service requires; without it no scope is sent.
func TestScopeOnAuthorizeURL(t *testing.T) {
	path := testCampaign(t, "https://app.aisync.link", "http://127.0.0.1:8765/callback")
	for _, tc := range []struct{ scope, want string }{{`  scope: "*"` + "\n", "*"}, {"", ""}} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		yaml := strings.Replace(string(b), "  authorize_url: https://app.aisync.link/oauth/authorize\n",
			"  authorize_url: https://app.aisync.link/oauth/authorize\n"+tc.scope, 1)
		scoped := filepath.Join(filepath.Dir(path), "scoped.yaml")
		if err := os.WriteFile(scoped, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		svc, err := openService(context.Background(), nolog, scoped, campaign.LoadOptions{ServiceOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := svc.OAuth.AuthCodeURL("st4te")
		if err != nil {
			t.Fatal(err)
		}
		u, _ := url.Parse(got)
		q := u.Query()
		_, sent := q["scope"]
		if u.Host != "app.aisync.link" || u.Path != "/oauth/authorize" || q.Get("response_type") != "code" ||
			q.Get("client_id") != sandbox.DefaultClientID || q.Get("scope") != tc.want || sent != (tc.want != "") {
			t.Errorf("scope %q: authorize URL %s", tc.want, got)
		}
	}
}

// TestInitDraftLogsInToTheLiveService: the campaign file init drafts
// can log in to the live service as written, once the environment names
// it and the OAuth client: auth login's authorize URL is the live
// service's, with response_type=code and the scope it wants.
func TestInitDraftLogsInToTheLiveService(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "leads.csv"), []byte("Phone,First Name\n+14155550132,Ada\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "campaign.yaml")
	if code := runApp(t, "init", "--offline", "-o", path, filepath.Join(dir, "leads.csv")); code != 0 {
		t.Fatalf("init: exit %d", code)
	}
	t.Setenv("CALLRUN_BASE_URL", "https://app.aisync.link")
	t.Setenv("CALLRUN_CLIENT_ID", "my-client")
	t.Setenv("CALLRUN_CLIENT_SECRET", "my-secret")
	t.Setenv("CALLRUN_TOKEN_FILE", filepath.Join(dir, "token.json"))
	svc, err := openService(context.Background(), nolog, path, campaign.LoadOptions{ServiceOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	got, err := svc.OAuth.AuthCodeURL("st4te")
	if err != nil {
		t.Fatalf("auth login would have no authorize URL to print: %v", err)
	}
	u, _ := url.Parse(got)
	q := u.Query()
	if u.Scheme != "https" || u.Host != "app.aisync.link" || u.Path != "/oauth/authorize" || q.Get("response_type") != "code" ||
		q.Get("scope") != "*" || q.Get("client_id") != "my-client" || q.Get("redirect_uri") != "http://127.0.0.1:8765/callback" {
		t.Errorf("authorize URL %s", got)
	}
}

// nolog drops what it is given to log, at every level: the commands
// build their debug lines too, as with --log-level debug.
var nolog = zerolog.New(io.Discard)

// runApp runs callrun with args and returns its exit code.
func runApp(t *testing.T, args ...string) int {
	t.Helper()
	ctx := context.Background()
	app := newApp(&session{stdout: io.Discard, stderr: io.Discard})
	return exitCode(ctx, app.RunContext(ctx, append([]string{"callrun"}, args...)))
}

func TestExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.yaml")
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"agents", "list"}, run.ExitUsage},
		{[]string{"agents", "list", "a.yaml", "b.yaml"}, run.ExitUsage},
		{[]string{"agents", "list", missing}, run.ExitUsage},
		{[]string{"agents", "list", "--format", "xml", missing}, run.ExitUsage},
		{[]string{"--log-format", "xml", "agents", "list", missing}, run.ExitUsage},
		{[]string{"agents", "list", "--no-such-flag", missing}, run.ExitUsage},
		{[]string{"sandbox", "extra"}, run.ExitUsage},
		{[]string{"sandbox", "--share-500", "2"}, run.ExitUsage},
		{[]string{"sandbox", "--share-403-limit", "2"}, run.ExitUsage},
		{[]string{"sandbox", "--max-active", "-1"}, run.ExitUsage},
		{[]string{"sandbox", "--account-fields", "zip code"}, run.ExitUsage},
		{[]string{"sandbox", "--account-fields", "city,email"}, run.ExitUsage},
	} {
		if got := runApp(t, tc.args...); got != tc.want {
			t.Errorf("callrun %s: exit %d, want %d", strings.Join(tc.args, " "), got, tc.want)
		}
	}
}

func TestExitCodeMapping(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	bg := context.Background()
	for _, tc := range []struct {
		ctx  context.Context
		err  error
		want int
	}{
		{bg, nil, exitOK},
		{bg, errors.New("boom"), exitRuntime},
		{bg, &campaign.FileError{}, run.ExitUsage},
		{bg, fmt.Errorf("wrapped: %w", &campaign.FileError{}), run.ExitUsage},
		{bg, run.WithExitCode(run.ExitTryLater, errors.New("locked")), run.ExitTryLater},
		{cancelled, fmt.Errorf("stopping: %w", context.Canceled), exitInterrupted},
		{bg, context.Canceled, exitRuntime}, // cancelled, but not by a signal
		// Sentinels keep their meaning through any wrapping.
		{bg, fmt.Errorf("%w: what was sent is in the journal", campaign.ErrInterrupted), exitInterrupted},
		{bg, fmt.Errorf("%w past --until", campaign.ErrOutsideHours), run.ExitTryLater},
		{bg, fmt.Errorf("opening the journal: %w; try again", store.ErrLocked), run.ExitTryLater},
		{bg, fmt.Errorf("%w: the service answered 429 and asked to be called again in 24h", campaign.ErrCallLater), run.ExitTryLater},
		{bg, fmt.Errorf("%w (403 Forbidden: suspended)", campaign.ErrRefusing), run.ExitTryLater},
		{bg, fmt.Errorf("%w (the last: answered 500)", campaign.ErrBreaker), exitRuntime},
	} {
		if got := exitCode(tc.ctx, tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

func TestNotLoggedInSaysWhatToDo(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	err := agentsList(context.Background(), nolog, path, "text", io.Discard)
	if err == nil || !strings.Contains(message(err), "callrun auth login") {
		t.Fatalf("err = %v, printed as %q", err, message(err))
	}
}

// TestSandboxCommandServes starts `callrun sandbox` on a free port and logs
// in to it over HTTP, then stops it by cancelling its context.
func TestSandboxCommandServes(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- newApp(&session{stdout: &out, stderr: io.Discard}).RunContext(ctx, []string{"callrun", "sandbox", "--addr", addr, "--account-fields", "city, zip_code,", "--account-fields", "country"})
	}()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "Ctrl-C to stop") {
		if time.Now().After(deadline) {
			t.Fatalf("sandbox did not start: %q", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "base_url:      http://"+addr) || !strings.Contains(out.String(), "client_id:     sandbox-client") ||
		!strings.Contains(out.String(), "account fields: city, zip_code, country") {
		t.Errorf("banner = %q", out.String())
	}
	path := testCampaign(t, "http://"+addr, "http://127.0.0.1:8765/callback")
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, strings.NewReader(""), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// copyQuickstart copies examples/quickstart into a temporary directory
// as quickstart/, changes into that directory and returns it; no hook
// secret is set, as for a newcomer.
func copyQuickstart(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"campaign.yaml", "contacts.csv", "prompts/reminder.txt"} {
		b, err := os.ReadFile(filepath.Join("examples", "quickstart", name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, "quickstart", filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "quickstart", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	t.Setenv("CALLRUN_HOOK_SECRET", "")
	os.Unsetenv("CALLRUN_HOOK_SECRET")
	return dir
}

// TestRunSandboxKeepsItsStateApart runs the quickstart the way a newcomer
// does, from the repository root with a relative path: the sandbox run's
// files all land in its own state directory, and a second run calls
// nobody.
func TestRunSandboxKeepsItsStateApart(t *testing.T) {
	dir := copyQuickstart(t)
	path := filepath.Join("quickstart", "campaign.yaml")
	var out bytes.Buffer
	if err := runCampaign(context.Background(), nolog, runOptions{Path: path, Sandbox: true}, &out); err != nil {
		t.Fatalf("first run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "sent    5") {
		t.Errorf("first run summary:\n%s", out.String())
	}
	state := filepath.Join("quickstart", ".callrun", "quickstart-sandbox")
	for _, name := range []string{"journal.jsonl", "report.csv", "summary.json", "sandbox-token.json"} {
		if _, err := os.Stat(filepath.Join(state, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join("quickstart", ".callrun", "quickstart")); !os.IsNotExist(err) {
		t.Errorf("a sandbox run touched the real state directory (%v)", err)
	}
	var stray []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(p, filepath.Join(dir, "quickstart", ".callrun", "quickstart-sandbox")) &&
			!strings.HasPrefix(p, filepath.Join(dir, "quickstart")+string(filepath.Separator)) {
			stray = append(stray, p)
		}
		return nil
	})
	if len(stray) > 0 {
		t.Errorf("files written outside the campaign: %v", stray)
	}
	out.Reset()
	if err := runCampaign(context.Background(), nolog, runOptions{Path: path, Sandbox: true}, &out); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if !strings.Contains(out.String(), "This run: 0 calls") {
		t.Errorf("second run called someone:\n%s", out.String())
	}
}

func TestInitNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	sheet := filepath.Join(dir, "leads.csv")
	os.WriteFile(sheet, []byte("Phone,First Name\n+14155550132,Ada\n"), 0o644)
	var out bytes.Buffer
	if err := initCampaign(context.Background(), nolog, initOptions{sheet: sheet, agent: "Spring"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	written, err := os.ReadFile(filepath.Join(dir, "campaign.yaml"))
	if err != nil || !strings.Contains(string(written), `phone_number: "Phone"`) || !strings.Contains(string(written), `file: "leads.csv"`) {
		t.Fatalf("campaign.yaml: %v\n%s", err, written)
	}
	os.WriteFile(filepath.Join(dir, "campaign.yaml"), []byte("# mine\n"), 0o644)
	err = initCampaign(context.Background(), nolog, initOptions{sheet: sheet, agent: "Spring"}, &out, io.Discard)
	if exitCode(context.Background(), err) != run.ExitUsage || !strings.Contains(fmt.Sprint(err), "--force") {
		t.Fatalf("second init: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "campaign.yaml")); string(b) != "# mine\n" {
		t.Fatal("init overwrote an existing file")
	}
	if err := initCampaign(context.Background(), nolog, initOptions{sheet: sheet, agent: "Spring", force: true}, &out, io.Discard); err != nil {
		t.Fatalf("--force: %v", err)
	}
	// A workbook saved under .csv is named as such.
	xlsx := filepath.Join(dir, "book.csv")
	os.WriteFile(xlsx, []byte("PK\x03\x04rest-of-a-zip"), 0o644)
	if err := initCampaign(context.Background(), nolog, initOptions{sheet: xlsx}, &out, io.Discard); err == nil || !strings.Contains(err.Error(), "Excel") {
		t.Fatalf("xlsx as csv: %v", err)
	}
}

// TestExamplesPlanOffline keeps the examples from rotting: every example
// campaign passes plan --offline with no credentials in the environment,
// the outcomes URL's secret among them.
func TestExamplesPlanOffline(t *testing.T) {
	for _, v := range []string{"CALLRUN_BASE_URL", "CALLRUN_CLIENT_ID", "CALLRUN_CLIENT_SECRET", "CALLRUN_AUTHORIZE_URL", "CALLRUN_HOOK_SECRET"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	campaigns, _ := filepath.Glob(filepath.Join("examples", "*", "campaign.yaml"))
	if len(campaigns) < 2 {
		t.Fatalf("example campaigns: %v", campaigns)
	}
	for _, path := range campaigns {
		var out bytes.Buffer
		// The quickstart's sheet has an invalid row on purpose (the
		// outcomes example reads it too); the others are clean.
		strict := !strings.Contains(path, "quickstart") && !strings.Contains(path, "outcomes")
		if err := runPlan(context.Background(), nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true}, strict: strict, format: "json"}, &out); err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		var plan struct {
			Totals map[string]int `json:"totals"`
		}
		// Rows, not to_call: a rehearsal may have left state that counts as done.
		if err := json.Unmarshal(out.Bytes(), &plan); err != nil || plan.Totals["rows"] == 0 {
			t.Errorf("%s: plan %v %s", path, err, out.String())
		}
	}
}

// appOutput runs callrun with args and returns what it printed.
func appOutput(t *testing.T, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	app := newApp(&session{stdout: &out, stderr: &out})
	// urfave/cli's completion reads os.Args rather than its arguments.
	oldArgs := os.Args
	os.Args = append([]string{"callrun"}, args...)
	defer func() { os.Args = oldArgs }()
	if err := app.RunContext(context.Background(), os.Args); err != nil {
		t.Fatalf("callrun %s: %v", strings.Join(args, " "), err)
	}
	return out.String()
}

func TestVersionAndCompletion(t *testing.T) {
	old := version
	version = "v9.8.7"
	t.Cleanup(func() { version = old })
	if got := appOutput(t, "--version"); !strings.Contains(got, "callrun version v9.8.7") {
		t.Errorf("--version printed %q", got)
	}
	words := strings.Fields(appOutput(t, "--generate-bash-completion"))
	for _, want := range []string{"run", "plan", "status", "report", "init", "auth", "agents", "sandbox", "completion"} {
		if !slices.Contains(words, want) {
			t.Errorf("completion lacks %q: %v", want, words)
		}
	}
	if got := appOutput(t, "run", "--re", "--generate-bash-completion"); !strings.Contains(got, "--retry-failed") {
		t.Errorf("flag completion: %q", got)
	}
	for _, shell := range []string{"bash", "zsh"} {
		var b bytes.Buffer
		if err := writeCompletion(newApp(&session{}), shell, &b); err != nil || !strings.Contains(b.String(), "--generate-bash-completion") {
			t.Errorf("%s script: %v", shell, err)
		}
	}
	var fish bytes.Buffer
	if err := writeCompletion(newApp(&session{}), "fish", &fish); err != nil || !strings.Contains(fish.String(), "__fish_seen_subcommand_from run' -f -l retry-failed") {
		t.Errorf("fish script: %v\n%s", err, fish.String())
	}
	if err := writeCompletion(newApp(&session{}), "tcsh", io.Discard); exitCode(context.Background(), err) != run.ExitUsage {
		t.Errorf("tcsh: %v", err)
	}
}

// TestEveryCommandHelpHasPurposeAndExample: each command's help says what it
// is for in one line and shows an example; the app's help lists exit codes.
func TestEveryCommandHelpHasPurposeAndExample(t *testing.T) {
	if got := appOutput(t, "--help"); !strings.Contains(got, "EXIT CODES") || !strings.Contains(got, "75") {
		t.Errorf("app help lacks exit codes:\n%s", got)
	}
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := append(slices.Clone(prefix), c.Name)
			if c.Name == "help" {
				continue
			}
			if c.Usage == "" || strings.Contains(c.Usage, "\n") {
				t.Errorf("%s: usage must be one line: %q", strings.Join(path, " "), c.Usage)
			}
			if len(c.Subcommands) > 0 {
				walk(path, c.Subcommands)
				continue
			}
			if !strings.Contains(c.Description, "callrun ") || !strings.Contains(strings.ToLower(c.Description), "example") {
				t.Errorf("%s: help has no example:\n%s", strings.Join(path, " "), c.Description)
			}
		}
	}
	walk(nil, newApp(&session{}).Commands)
}

func TestAuthFailuresPrintOneSentence(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	err := agentsList(context.Background(), nolog, path, "text", io.Discard)
	if got := message(err); !strings.HasPrefix(got, "not logged in (no token file at ") || !strings.HasSuffix(got, "; run `callrun auth login CAMPAIGN.yaml` first") {
		t.Errorf("not logged in: %q", got)
	}
	if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	srv.ExpireAccessTokens()
	srv.RevokeRefreshTokens()
	err = agentsList(context.Background(), nolog, path, "text", io.Discard)
	if got := message(err); !strings.HasPrefix(got, "the service refused the saved refresh token: ") || !strings.HasSuffix(got, "; run `callrun auth login` again") {
		t.Errorf("revoked: %q", got)
	}
	noSecrets(t, "revoked-token message", message(err))
}

// TestPlanCountsDoneFromTheJournal: after a canary run, plan counts the
// contacts the journal settled as done, and the rest as to call.
func TestPlanCountsDoneFromTheJournal(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	os.WriteFile(filepath.Join(filepath.Dir(path), "contacts.csv"), []byte("Phone,First Name\n+14155550132,Ada\n+12125550199,Grace\n+13125550182,Barbara\n"), 0o644)
	if err := authLogin(context.Background(), nolog, path, sandbox.DefaultCode, time.Second, nil, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if err := runCampaign(context.Background(), nolog, runOptions{Path: path, Limit: 2}, io.Discard); err != nil {
		t.Fatalf("canary: %v", err)
	}
	var out bytes.Buffer
	if err := runPlan(context.Background(), nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true}, format: "json"}, &out); err != nil {
		t.Fatal(err)
	}
	var plan campaign.Plan
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Totals.Done != 2 || plan.Totals.ToCall != 1 || plan.Totals.Rows != 3 {
		t.Errorf("totals = %+v, want 2 done and 1 to call", plan.Totals)
	}
	if n := len(srv.Placed()); n != 2 {
		t.Errorf("%d calls placed by a --limit 2 run", n)
	}
}

// TestPlanStrictFailsOnRepairs: a sheet with no invalid row but a number
// callrun had to repair (Excel's scientific notation) passes plan, and
// fails plan --strict with exit 4, naming the repair in the JSON.
func TestPlanStrictFailsOnRepairs(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"contacts.csv": "Phone\n1.4155550142E+10\n+1 212 555 0147\n",
		"campaign.yaml": `name: repairs
agents: [{name: A, prompt: hello}]
sheets: [{file: contacts.csv, agent: A, fields: {phone_number: Phone}}]
`,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "campaign.yaml")
	ctx := context.Background()
	var out bytes.Buffer
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true}, format: "json"}, &out); err != nil {
		t.Fatalf("plan: %v", err)
	}
	var plan campaign.Plan
	if err := json.Unmarshal(out.Bytes(), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Repairs) != 1 || plan.Repairs[0] != (campaign.PlanRepair{File: "contacts.csv", Row: 2, Field: "phone_number", Cell: "1.4155550142E+10",
		Number: "+14155550142", Country: "US", Why: plan.Repairs[0].Why}) || plan.Countries["US"] != 2 {
		t.Errorf("plan: repairs %+v, countries %v", plan.Repairs, plan.Countries)
	}
	err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true}, strict: true}, io.Discard)
	if code := exitCode(ctx, err); code != 4 || !strings.Contains(fmt.Sprint(err), "1 repaired number(s)") {
		t.Errorf("plan --strict: exit %d, %v; want 4 naming the repair", code, err)
	}
}

// TestReportKeepsTheLastRunsRate: `callrun report` rebuilds summary.json
// with the rate and elapsed time of the journal's last run, not zeros.
func TestReportKeepsTheLastRunsRate(t *testing.T) {
	dir := offlineCampaign(t, "unsafe_ignore_called_person_hours: true # the test runs at any hour")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	path := filepath.Join(dir, "campaign.yaml")
	if err := runCampaign(context.Background(), nolog, runOptions{Path: path, Sandbox: true}, io.Discard); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := rebuildReport(context.Background(), nolog, savedOptions{Path: path, Sandbox: true}, &out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ".callrun", "cli-sandbox", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Calls   int     `json:"calls_this_run"`
		Rate    float64 `json:"rate_per_second"`
		Elapsed float64 `json:"elapsed_seconds"`
		Ending  string  `json:"ending"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Calls != 2 || sum.Rate <= 0 || sum.Elapsed <= 0 || sum.Ending != "rebuilt" {
		t.Errorf("summary.json after report: %s", b)
	}
	if !strings.Contains(out.String(), "Note: the last run started") {
		t.Errorf("report printed:\n%s", out.String())
	}
}
