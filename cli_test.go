package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/run"
)

// binResult is what one run of the callrun binary printed and exited with.
type binResult struct {
	stdout, stderr string
	code           int
}

// runBinary runs the callrun binary in dir with env added to the test's
// environment, and gives it at most two minutes.
func runBinary(t *testing.T, dir string, env []string, args ...string) binResult {
	t.Helper()
	cmd := exec.Command(callrunBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	res := binResult{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return res
}

// offlineCampaign writes a small valid campaign (one sheet, no service
// needed offline) into a temporary directory and returns that directory.
// hours is its hours: line; "" gives New York's weekdays, 09:00-20:00.
func offlineCampaign(t *testing.T, hours string) string {
	t.Helper()
	if hours == "" {
		hours = `hours: {timezone: America/New_York, days: [mon, tue, wed, thu, fri], start: "09:00", end: "20:00"}`
	}
	dir := t.TempDir()
	files := map[string]string{
		"contacts.csv": "Phone,First Name\n+14155550132,Ada\n+14155550133,Bob\n",
		"campaign.yaml": `name: cli
agents:
  - name: Caller
    prompt: hello
sheets:
  - file: contacts.csv
    agent: Caller
    fields: {phone_number: Phone, first_name: First Name}
` + hours + "\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestGlobalFlagsAfterTheCommand: README says flags may come anywhere; the
// global ones too, and --log-level debug then shows debug lines.
func TestGlobalFlagsAfterTheCommand(t *testing.T) {
	dir := offlineCampaign(t, "")
	res := runBinary(t, dir, nil, "plan", "campaign.yaml", "--offline", "--log-level", "debug", "--no-progress")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if !strings.Contains(res.stderr, `"level":"debug"`) || !strings.Contains(res.stderr, "callrun starting") {
		t.Errorf("--log-level debug printed no debug line:\n%s", res.stderr)
	}
	res = runBinary(t, dir, nil, "plan", "--quiet", "campaign.yaml", "--offline")
	if res.code != 0 || strings.Contains(res.stderr, `"level":"info"`) {
		t.Errorf("--quiet after the command: exit %d\n%s", res.code, res.stderr)
	}
	res = runBinary(t, dir, nil, "plan", "--offline", "campaign.yaml")
	if strings.Contains(res.stderr, `"level":"debug"`) {
		t.Errorf("debug lines at the default level:\n%s", res.stderr)
	}
}

// TestSessionStreams: in process, what a command prints and logs goes to
// its session's streams, and what main reports from comes back in it.
func TestSessionStreams(t *testing.T) {
	path := filepath.Join(offlineCampaign(t, ""), "campaign.yaml")
	var stdout, stderr bytes.Buffer
	s := &session{stdout: &stdout, stderr: &stderr}
	if err := newApp(s).RunContext(context.Background(), []string{"callrun", "--log-level", "debug", "plan", "--offline", path}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "2 to call") || !s.logJSON {
		t.Errorf("plan printed %q; logJSON %v", stdout.String(), s.logJSON)
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.HasPrefix(l, "{") {
			t.Errorf("a log line on a buffer is not JSON: %q", l)
		}
	}
	if !strings.Contains(stderr.String(), `"message":"campaign loaded"`) {
		t.Errorf("makePlan's debug line is not in the session's log:\n%s", stderr.String())
	}
	s = &session{stdout: io.Discard, stderr: io.Discard}
	if err := newApp(s).RunContext(context.Background(), []string{"callrun", "paln"}); err != nil || s.unknownCommand != "paln" || s.unknownNearest != "plan" {
		t.Errorf("callrun paln: err %v, unknown %q, nearest %q", err, s.unknownCommand, s.unknownNearest)
	}
}

// TestHelpConventions: `callrun help` exits 0, and a command's help shows
// its usage once, wherever --help stands.
func TestHelpConventions(t *testing.T) {
	dir := offlineCampaign(t, "")
	for _, args := range [][]string{{"help"}, {"help", "status"}, {"status", "--help"}, {"status", "campaign.yaml", "--help"}, {"status", "-h", "campaign.yaml"}} {
		res := runBinary(t, dir, nil, args...)
		if res.code != 0 {
			t.Errorf("callrun %s: exit %d\n%s", strings.Join(args, " "), res.code, res.stderr)
		}
		if n := strings.Count(res.stdout, "USAGE:"); n != 1 {
			t.Errorf("callrun %s: usage shown %d times:\n%s", strings.Join(args, " "), n, res.stdout)
		}
		if args[0] == "status" && !strings.Contains(res.stdout, "callrun status [command options] CAMPAIGN.yaml") {
			t.Errorf("callrun %s: not status's usage:\n%s", strings.Join(args, " "), res.stdout)
		}
	}
}

// TestFirstTimeAndSandboxFlags: callrun help leads a newcomer to the one
// command; the sandbox's --opt-out wants FIELD=VALUE, its --webhook-shape
// a known shape, its --signing-secret a shape that signs; listen has no
// --sandbox (run --sandbox receives its own deliveries).
func TestFirstTimeAndSandboxFlags(t *testing.T) {
	dir := offlineCampaign(t, "")
	res := runBinary(t, dir, nil, "help")
	first, _, _ := strings.Cut(res.stdout[strings.Index(res.stdout, "First time?")+1:], "GLOBAL OPTIONS")
	if res.code != 0 || !strings.Contains(first, "callrun run --sandbox examples/quickstart/campaign.yaml") || strings.Contains(first, "callrun sandbox &") {
		t.Errorf("callrun help's first steps:\n%s", res.stdout)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"sandbox", "--opt-out", "dnc"}, `--opt-out "dnc": give FIELD=VALUE`},
		{[]string{"sandbox", "--webhook-shape", "xml"}, `unknown shape "xml" (want one of form, contact-only, envelope,`},
		{[]string{"sandbox", "--signing-secret", "s"}, `a signing secret signs envelopes, and shape "form" sends none`},
		{[]string{"listen", "--sandbox", "campaign.yaml"}, "listen: no flag --sandbox"},
	} {
		res := runBinary(t, dir, []string{"CALLRUN_LOG_FORMAT=console"}, tc.args...)
		if res.code != run.ExitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("callrun %s: exit %d, want 2 and %q in:\n%s", strings.Join(tc.args, " "), res.code, tc.want, res.stderr)
		}
	}
}

// TestUnknownFlagAndCommandSayWhatWasMeant: a mistyped flag names the
// command and the nearest flag; a mistyped command the nearest command.
func TestUnknownFlagAndCommandSayWhatWasMeant(t *testing.T) {
	dir := offlineCampaign(t, "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "campaign.yaml", "--offlin"}, "plan: no flag --offlin; did you mean --offline? (see callrun plan --help)"},
		{[]string{"run", "--retry-faild", "campaign.yaml"}, "run: no flag --retry-faild; did you mean --retry-failed? (see callrun run --help)"},
		{[]string{"agents", "list", "--formt", "json", "campaign.yaml"}, "agents list: no flag --formt; did you mean --format? (see callrun agents list --help)"},
		{[]string{"run", "--limit", "ten", "campaign.yaml"}, `run: invalid value "ten" for flag --limit`},
		{[]string{"--log-levl", "debug", "plan", "campaign.yaml"}, "no flag --log-levl; did you mean --log-level? (see callrun --help)"},
		{[]string{"plna", "campaign.yaml"}, `no command "plna"; did you mean "plan"?`},
	} {
		res := runBinary(t, dir, []string{"CALLRUN_LOG_FORMAT=console"}, tc.args...)
		if res.code != run.ExitUsage || !strings.Contains(res.stderr, tc.want) {
			t.Errorf("callrun %s: exit %d, want 2 and %q in:\n%s", strings.Join(tc.args, " "), res.code, tc.want, res.stderr)
		}
	}
}

// TestShellCompletionThroughTheBinary sources the bash script that
// `callrun completion bash` prints and asks it, as bash would on TAB, to
// complete `callrun run --re`: urfave/cli's own completion, end to end.
func TestShellCompletionThroughTheBinary(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash here")
	}
	bin := callrunBinary(t)
	script := `source <(callrun completion bash)
complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _callrun_complete; echo "${COMPREPLY[*]}"; }
complete_words callrun run --re
complete_words callrun pl
complete_words callrun plan --off
`
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{"--retry-failed --retry-uncertain", "plan", "--offline"}
	if len(lines) != len(want) {
		t.Fatalf("completions:\n%s", out)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("completion %d: %q, want %q", i, lines[i], want[i])
		}
	}
}

// TestInitToStdout: `init -o -` writes the campaign file to stdout and no
// file at all (not one named "-").
func TestInitToStdout(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "leads.csv"), []byte("Phone,First Name\n+14155550132,Ada\n"), 0o644)
	res := runBinary(t, dir, nil, "init", "-o", "-", "--offline", "leads.csv")
	if res.code != 0 {
		t.Fatalf("exit %d\n%s", res.code, res.stderr)
	}
	if !strings.HasPrefix(res.stdout, "# Campaign file written by callrun init") || !strings.Contains(res.stdout, `file: "leads.csv"`) {
		t.Errorf("stdout is not the campaign file:\n%s", res.stdout)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("init -o - wrote files: %v", entries)
	}
}

// TestServiceDownSaysWhatToCheck: a service that cannot be reached is
// named with what to check, not only "dial tcp ...".
func TestServiceDownSaysWhatToCheck(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	path := testCampaign(t, srv.URL, "http://127.0.0.1:8765/callback")
	ctx := context.Background()
	if err := authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, strings.NewReader(""), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	want := "(the service at " + addr + " could not be reached: is it up? check service.base_url in the campaign file"
	err := agentsList(ctx, nolog, path, "text", io.Discard)
	if got := message(err); !strings.Contains(got, "connection refused") || !strings.Contains(got, want) {
		t.Errorf("agents list with the service down: %q", got)
	}
	err = authLogin(ctx, nolog, path, sandbox.DefaultCode, time.Second, strings.NewReader(""), io.Discard, io.Discard)
	if got := message(err); !strings.Contains(got, want) {
		t.Errorf("login with the service down: %q", got)
	}
	if got := message(errors.New("listing agents: 500 Internal Server Error")); strings.Contains(got, "could not be reached") {
		t.Errorf("a service that answered got the hint: %q", got)
	}
}
