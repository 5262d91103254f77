package main

// Tests that run the examples' commands as written, against an in-process
// sandbox, so that the examples cannot rot. What cannot run here is
// replaced, and each replacement is named where it is made: the install
// paths (/srv/campaigns, /usr/local/bin/callrun, /var/lib/callrun, the
// container's mounts) become temporary directories, an interactive login
// gets --code, and `--until 19:45` becomes `--until 1m`: before 09:00 New
// York time, 19:45 would make the run wait for the window to open, and a
// test must pass at any hour.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
	"gopkg.in/yaml.v3"
)

// exampleEnv is the environment the examples' commands run in: the test's,
// without any CALLRUN_ or XDG_ variable of the machine, plus extra.
func exampleEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CALLRUN_") && !strings.HasPrefix(kv, "XDG_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// copyExample copies examples/<name> (without its state) to dir/<name>.
func copyExample(t *testing.T, name, dir string) {
	t.Helper()
	src := filepath.Join(e2eBin.pkgDir, "examples", name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".callrun") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, name, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, name, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// shell runs script with sh -c in dir and env, for at most two minutes,
// and returns its combined output and exit code.
func shell(t *testing.T, dir string, env []string, script string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("timed out: %s\n%s", script, out)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", script, err)
	}
	return string(out), 0
}

// binDir is a directory holding the callrun binary (as callrun) and a
// mail command that records what it is sent, for PATH.
func binDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Symlink(callrunBinary(t), filepath.Join(dir, "callrun")); err != nil {
		t.Fatal(err)
	}
	mail := "#!/bin/sh\ncat >> \"" + filepath.Join(dir, "mail.txt") + "\"\n"
	if err := os.WriteFile(filepath.Join(dir, "mail"), []byte(mail), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readExample(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e2eBin.pkgDir, "examples", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkNobodyTwice fails if the sandbox received two calls to one number.
func checkNobodyTwice(t *testing.T, srv *sandbox.Server) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range srv.Calls() {
		key := c.AgentID + " " + c.Form.Get("phone_number")
		if seen[key] {
			t.Errorf("called twice: %s", key)
		}
		seen[key] = true
	}
}

// checkExampleMetrics checks the metrics file an example's run left: it
// parses, says the run has ended and how, as summary.json does, and counts
// the contacts by status as summary.json does.
func checkExampleMetrics(t *testing.T, path, summaryPath string) {
	t.Helper()
	got := readMetrics(t, path)
	b, err := os.ReadFile(summaryPath)
	if err != nil {
		t.Fatal(err)
	}
	var sum e2eSummary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	const l = `campaign="spring-promo"`
	if got["callrun_running{"+l+"}"] != 0 || got["callrun_run_ending{"+l+`,ending="`+sum.Ending+`"}`] != 1 {
		t.Errorf("the metrics file does not say the run ended %s: %v", sum.Ending, got)
	}
	total := 0
	for st, n := range sum.Counts {
		total += n
		if v, ok := got["callrun_contacts{"+l+`,status="`+st+`"}`]; !ok || v != float64(n) {
			t.Errorf("metrics file: %s contacts %v (present %v), summary.json %d", st, v, ok, n)
		}
	}
	if total == 0 || total != sum.Rows {
		t.Errorf("summary.json counts %v, rows %d", sum.Counts, sum.Rows)
	}
}

// TestCrontabExampleRuns installs examples/cron/crontab as its comments
// say, and runs its line with sh, as cron would, twice.
func TestCrontabExampleRuns(t *testing.T) {
	crontab := readExample(t, "cron/crontab")
	var line string
	env := []string{}
	for l := range strings.Lines(crontab) {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.HasPrefix(l, "#"):
		case regexp.MustCompile(`^[A-Z_]+=`).MatchString(l):
			env = append(env, l) // cron sets these for the command
		default:
			line = strings.Join(strings.Fields(l)[5:], " ")
		}
	}
	if !strings.Contains(line, "run --until 19:45 spring-promo/campaign.yaml") {
		t.Fatalf("crontab line: %q", line)
	}
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	root := t.TempDir()
	home, campaigns, bin := filepath.Join(root, "home"), filepath.Join(root, "srv", "campaigns"), binDir(t)
	copyExample(t, "spring-promo", campaigns)
	envFile := fmt.Sprintf("export CALLRUN_BASE_URL=%s\nexport CALLRUN_CLIENT_ID=%s\nexport CALLRUN_CLIENT_SECRET=%s\nexport CALLRUN_HOOK_SECRET=%s\n", srv.URL, sandbox.DefaultClientID, sandbox.DefaultClientSecret, hookSecret)
	writeFiles(t, home, map[string]string{".config/callrun/env": envFile})
	env = exampleEnv(append(env, "HOME="+home, "PATH="+bin+":/usr/bin:/bin")...)
	// Install steps 2 and 3, as the comments give them (--code: no browser here).
	if out, code := shell(t, campaigns, env, `. ~/.config/callrun/env && cd `+campaigns+` && callrun auth login --code sandbox-code spring-promo/campaign.yaml`); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "callrun", "tokens")); err != nil {
		t.Fatalf("the token is not under ~/.config/callrun: %v", err)
	}
	shell(t, home, env, "mkdir -p ~/callrun-logs")
	line = strings.NewReplacer("/srv/campaigns", campaigns, "/usr/local/bin/callrun", filepath.Join(bin, "callrun"), "--until 19:45", "--until 1m").Replace(line)
	for range 2 {
		if out, code := shell(t, home, env, line); code != 0 || out != "" {
			t.Fatalf("the line: exit %d\n%s", code, out)
		}
	}
	if b, err := os.ReadFile(filepath.Join(bin, "mail.txt")); err == nil {
		t.Errorf("the line sent mail: %s", b)
	}
	logs, err := os.ReadFile(filepath.Join(home, "callrun-logs", "spring-promo.jsonl"))
	if err != nil || !bytes.Contains(logs, []byte(`"message":"calling"`)) {
		t.Fatalf("log: %v\n%s", err, logs)
	}
	for l := range strings.Lines(string(logs)) {
		if !strings.HasPrefix(l, "{") {
			t.Errorf("a log line that is not JSON: %q", l)
		}
	}
	if summaries, err := os.ReadFile(filepath.Join(home, "callrun-logs", "spring-promo.txt")); err != nil || strings.Count(string(summaries), "Report: ") != 2 {
		t.Errorf("summaries: %v\n%s", err, summaries)
	}
	checkNobodyTwice(t, srv)
}

// writeSpringPromoEnv writes the systemd units' environment file,
// /etc/callrun/spring-promo.env, under root, as their comments say.
func writeSpringPromoEnv(t *testing.T, root string, srv *sandbox.Server) {
	t.Helper()
	writeFiles(t, filepath.Join(root, "etc", "callrun"), map[string]string{"spring-promo.env": fmt.Sprintf(
		"CALLRUN_BASE_URL=%s\nCALLRUN_CLIENT_ID=%s\nCALLRUN_CLIENT_SECRET=%s\nCALLRUN_HOOK_SECRET=%s\n", srv.URL, sandbox.DefaultClientID, sandbox.DefaultClientSecret, hookSecret)})
}

// unitSettings reads the [Service] settings of a systemd unit, each
// setting's values in order.
func unitSettings(unit string) map[string][]string {
	m := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(unit))
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
			m[k] = append(m[k], v)
		}
	}
	return m
}

// TestSystemdExampleRuns runs the unit's login command and its ExecStart
// with its environment, and has systemd-analyze verify the unit and the
// timer where it is installed.
func TestSystemdExampleRuns(t *testing.T) {
	unit := readExample(t, "cron/callrun-spring-promo.service")
	s := unitSettings(unit)
	if !slices.Contains(s["StateDirectory"], "callrun") || !slices.Contains(s["SuccessExitStatus"], "75 130") {
		t.Errorf("StateDirectory %q, SuccessExitStatus %q", s["StateDirectory"], s["SuccessExitStatus"])
	}
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	root, bin := t.TempDir(), binDir(t)
	paths := strings.NewReplacer("/srv/campaigns", filepath.Join(root, "srv", "campaigns"), "/etc/callrun", filepath.Join(root, "etc", "callrun"),
		"/var/lib/callrun", filepath.Join(root, "var", "lib", "callrun"), "/usr/local/bin/callrun", filepath.Join(bin, "callrun"), "--until 19:45", "--until 1m",
		"/var/lib/prometheus/node-exporter", filepath.Join(root, "node-exporter"))
	copyExample(t, "spring-promo", filepath.Join(root, "srv", "campaigns"))
	os.MkdirAll(filepath.Join(root, "var", "lib", "callrun"), 0o700) // StateDirectory=
	os.MkdirAll(filepath.Join(root, "node-exporter"), 0o755)         // the textfile collector's directory
	writeSpringPromoEnv(t, root, srv)
	env := exampleEnv("HOME="+filepath.Join(root, "nohome"), "PATH="+bin+":/usr/bin:/bin")

	// The login of the comments: the part sudo -u callrun runs.
	m := regexp.MustCompile(`(?s)sudo -u callrun sh -c '(.*?)'`).FindStringSubmatch(unit)
	if m == nil {
		t.Fatal("no login command in the unit's comments")
	}
	login := strings.ReplaceAll(m[1], "\n#", "\n")
	login = strings.Replace(paths.Replace(login), "auth login ", "auth login --code sandbox-code ", 1)
	if out, code := shell(t, root, env, login); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(root, "var", "lib", "callrun", "spring-promo-token.json")); err != nil {
		t.Fatalf("the token is not where the unit looks: %v", err)
	}

	// ExecStart, with EnvironmentFile= and Environment=.
	runEnv := slices.Clone(env)
	for _, f := range s["EnvironmentFile"] {
		b, err := os.ReadFile(paths.Replace(f))
		if err != nil {
			t.Fatal(err)
		}
		runEnv = append(runEnv, strings.Fields(string(b))...)
	}
	for _, e := range s["Environment"] {
		runEnv = append(runEnv, paths.Replace(e))
	}
	argv := strings.Fields(paths.Replace(s["ExecStart"][0]))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = paths.Replace(s["WorkingDirectory"][0]), runEnv
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if ok := code == 0 || slices.Contains(strings.Fields(s["SuccessExitStatus"][0]), fmt.Sprint(code)); !ok {
		t.Errorf("ExecStart: exit %d, which the unit counts as failed\n%s", code, out)
	}
	checkNobodyTwice(t, srv)
	checkExampleMetrics(t, filepath.Join(root, "node-exporter", "callrun-spring-promo.prom"),
		filepath.Join(root, "srv", "campaigns", "spring-promo", ".callrun", "spring-promo", "summary.json"))

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is not verified")
		return
	}
	dir := t.TempDir()
	for _, name := range []string{"callrun-spring-promo.service", "callrun-spring-promo.timer"} {
		body := strings.ReplaceAll(readExample(t, "cron/"+name), "/usr/local/bin/callrun", filepath.Join(bin, "callrun"))
		writeFiles(t, dir, map[string]string{name: body})
	}
	vcmd := exec.Command(analyze, "verify", filepath.Join(dir, "callrun-spring-promo.service"), filepath.Join(dir, "callrun-spring-promo.timer"))
	vout, verr := vcmd.CombinedOutput()
	// Only what it says about these files counts; a container without a
	// running systemd adds complaints about the system's own units.
	for l := range strings.Lines(string(vout)) {
		if strings.Contains(l, "callrun-spring-promo") {
			t.Errorf("systemd-analyze verify: %s", l)
		}
	}
	t.Logf("systemd-analyze verify: %v %s", verr, vout)
}

// k8sContainer is what the Kubernetes examples' tests read of a pod's
// container.
type k8sContainer struct {
	WorkingDir string              `yaml:"workingDir"`
	Command    []string            `yaml:"command"`
	Args       []string            `yaml:"args"`
	Env        []map[string]string `yaml:"env"`
	Mounts     []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

// k8sPod prepares to run container c of a Kubernetes example against srv,
// as the examples' comments say: the Secret's settings (and secretEnv) in
// the environment, a token logged in for campaign (under the campaigns
// mount) and put in the Secret, or, when secretEnv names a database, in
// that database, each volume a directory under root. It
// returns the container's environment and a replacer that maps the
// container's paths (and extra pairs) to those directories.
func k8sPod(t *testing.T, srv *sandbox.Server, root, campaign string, c k8sContainer, secretEnv []string, extra ...string) ([]string, *strings.Replacer) {
	t.Helper()
	if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || len(c.Args) != 1 {
		t.Fatalf("command %q args %q", c.Command, c.Args)
	}
	secretEnv = append([]string{"CALLRUN_BASE_URL=" + srv.URL, "CALLRUN_CLIENT_ID=" + sandbox.DefaultClientID, "CALLRUN_CLIENT_SECRET=" + sandbox.DefaultClientSecret, "CALLRUN_HOOK_SECRET=" + hookSecret}, secretEnv...)
	copyExample(t, "spring-promo", filepath.Join(root, "campaigns"))
	env := exampleEnv(append(secretEnv, "HOME="+filepath.Join(root, "nohome"), "PATH="+binDir(t)+":/usr/bin:/bin")...)
	login := "callrun auth login --code sandbox-code " + campaign
	if !slices.ContainsFunc(secretEnv, func(kv string) bool { return strings.HasPrefix(kv, "CALLRUN_DATABASE_URL=") }) {
		// The token of the Secret: a login with CALLRUN_TOKEN_FILE=token.json, as the comments say.
		secret := filepath.Join(root, "secret")
		os.MkdirAll(secret, 0o700)
		login = "CALLRUN_TOKEN_FILE=token.json " + login + " && mv token.json " + secret + "/token.json"
	}
	if out, code := shell(t, filepath.Join(root, "campaigns"), env, login); code != 0 {
		t.Fatalf("login: exit %d\n%s", code, out)
	}
	var mounts []string
	for _, m := range c.Mounts {
		dir := filepath.Join(root, m.Name)
		os.MkdirAll(dir, 0o700)
		mounts = append(mounts, m.MountPath, dir)
	}
	paths := strings.NewReplacer(append(append(mounts, "--until 19:45", "--until 1m"), extra...)...)
	for _, e := range c.Env {
		env = append(env, e["name"]+"="+paths.Replace(e["value"]))
	}
	return env, paths
}

// TestKubernetesExampleRuns runs the CronJob's container command with its
// environment, its Secret and its mounts as directories.
func TestKubernetesExampleRuns(t *testing.T) {
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Schedule          string `yaml:"schedule"`
			TimeZone          string `yaml:"timeZone"`
			ConcurrencyPolicy string `yaml:"concurrencyPolicy"`
			JobTemplate       struct {
				Spec struct {
					Template struct {
						Spec struct {
							Containers []k8sContainer `yaml:"containers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			} `yaml:"jobTemplate"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readExample(t, "kubernetes/cronjob.yaml")), &job); err != nil {
		t.Fatal(err)
	}
	if job.Kind != "CronJob" || job.Spec.TimeZone != "America/New_York" || job.Spec.ConcurrencyPolicy != "Forbid" || len(job.Spec.JobTemplate.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("cronjob: %+v", job)
	}
	c := job.Spec.JobTemplate.Spec.Template.Spec.Containers[0]
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	root := t.TempDir()
	env, paths := k8sPod(t, srv, root, "spring-promo/campaign.yaml", c, nil)
	for round := range 2 {
		if out, code := shell(t, paths.Replace(c.WorkingDir), env, paths.Replace(c.Args[0])); code != 0 {
			t.Fatalf("round %d: the container exits %d (75 must be 0)\n%s", round, code, out)
		}
	}
	st, err := os.Stat(filepath.Join(root, "state", "token.json"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("token on the volume: %v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(root, "state", "spring-promo", "journal.jsonl")); err != nil {
		t.Errorf("no journal on the state volume: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "campaigns", "spring-promo", ".callrun")); err == nil {
		t.Error("the run wrote into the campaign's read-only mount")
	}
	checkNobodyTwice(t, srv)
	checkExampleMetrics(t, filepath.Join(root, "metrics", "callrun.prom"), filepath.Join(root, "state", "spring-promo", "summary.json"))
	// The sidecar that serves the file reads the volume callrun writes to.
	var pod struct {
		Spec struct {
			JobTemplate struct {
				Spec struct {
					Template struct {
						Spec struct {
							InitContainers []struct {
								RestartPolicy string   `yaml:"restartPolicy"`
								Args          []string `yaml:"args"`
								Mounts        []struct {
									Name      string `yaml:"name"`
									MountPath string `yaml:"mountPath"`
								} `yaml:"volumeMounts"`
							} `yaml:"initContainers"`
						} `yaml:"spec"`
					} `yaml:"template"`
				} `yaml:"spec"`
			} `yaml:"jobTemplate"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readExample(t, "kubernetes/cronjob.yaml")), &pod); err != nil {
		t.Fatal(err)
	}
	side := pod.Spec.JobTemplate.Spec.Template.Spec.InitContainers
	if len(side) != 1 || side[0].RestartPolicy != "Always" || !slices.Contains(side[0].Args, "--collector.textfile.directory=/metrics") ||
		len(side[0].Mounts) != 1 || side[0].Mounts[0].Name != "metrics" || side[0].Mounts[0].MountPath != "/metrics" {
		t.Errorf("the metrics sidecar: %+v", side)
	}
}

// TestCIExamplesRun runs the GitHub workflow's and the GitLab job's
// commands in a repository of campaigns: a clean one passes, a broken one
// fails the job with an annotation on its line. The install step builds
// callrun from a clone of this repository at its HEAD commit, into a
// GOPATH of the test's own.
func TestCIExamplesRun(t *testing.T) {
	var gh struct {
		Env  map[string]string `yaml:"env"`
		Jobs map[string]struct {
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	if err := yaml.Unmarshal([]byte(readExample(t, "ci/github-actions.yml")), &gh); err != nil {
		t.Fatal(err)
	}
	var gl map[string]struct {
		Variables map[string]string `yaml:"variables"`
		Script    []string          `yaml:"script"`
	}
	if err := yaml.Unmarshal([]byte(readExample(t, "ci/gitlab-ci.yml")), &gl); err != nil {
		t.Fatal(err)
	}
	steps := map[string]string{}
	for _, s := range gh.Jobs["plan"].Steps {
		steps[s.Name] = s.Run
	}
	install, plan := steps["install callrun"], steps["plan every campaign"]
	glScript := gl["campaign-plan"].Script
	if install == "" || plan == "" || len(glScript) != 5 {
		t.Fatalf("steps %q, gitlab script %q", steps, glScript)
	}
	for _, ref := range []string{gh.Env["CALLRUN_REF"], gl["campaign-plan"].Variables["CALLRUN_REF"]} {
		if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(ref) {
			t.Errorf("CALLRUN_REF %q pins no commit", ref)
		}
	}
	if strings.Contains(install+strings.Join(glScript, "\n"), "@latest") {
		t.Error("an example installs @latest")
	}

	t.Run("plan", func(t *testing.T) {
		repo, bin := t.TempDir(), binDir(t)
		copyExample(t, "spring-promo", filepath.Join(repo, "campaigns"))
		env := exampleEnv("HOME="+filepath.Join(repo, "nohome"), "PATH="+bin+":/usr/bin:/bin")
		bash := func(script string) (string, int) { return shell(t, repo, env, "set -e\n"+script) }
		if out, code := bash(plan); code != 0 || !strings.Contains(out, "::group::campaigns/spring-promo/campaign.yaml") {
			t.Fatalf("github plan step: exit %d\n%s", code, out)
		}
		if out, code := bash(glScript[4]); code != 0 {
			t.Fatalf("gitlab plan script: exit %d\n%s", code, out)
		}
		if _, err := os.Stat(filepath.Join(repo, "plan-spring-promo.json")); err != nil {
			t.Errorf("gitlab artifact: %v", err)
		}
		writeFiles(t, repo, map[string]string{"campaigns/broken/campaign.yaml": "name: broken\nagents:\n  - name: A\n    promt: hi\n"})
		out, code := bash(plan)
		if code == 0 || !strings.Contains(out, "::error file=campaigns/broken/campaign.yaml,line=4,title=agents[0].promt::unknown key") {
			t.Errorf("github plan step with a broken campaign: exit %d\n%s", code, out)
		}
		if _, code := bash(glScript[4]); code == 0 {
			t.Error("gitlab plan script passed a broken campaign")
		}
		// The broken campaign's artifact holds its errors, as JSON.
		var artifact struct {
			Errors []planError `json:"errors"`
		}
		b, err := os.ReadFile(filepath.Join(repo, "plan-broken.json"))
		if err != nil || json.Unmarshal(b, &artifact) != nil || !slices.ContainsFunc(artifact.Errors, func(e planError) bool {
			return e.File == "campaigns/broken/campaign.yaml" && e.Line == 4 && e.Key == "agents[0].promt" && strings.HasPrefix(e.Message, `unknown key "promt"`)
		}) {
			t.Errorf("gitlab artifact of the broken campaign: %v\n%s", err, b)
		}
	})

	t.Run("install", func(t *testing.T) {
		head, err := exec.Command("git", "-C", e2eBin.pkgDir, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Skipf("not a git checkout (%v): the install step clones one", err)
		}
		modcache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
		goroot, _ := exec.Command("go", "env", "GOROOT").Output()
		tmp := t.TempDir()
		env := exampleEnv("HOME="+os.Getenv("HOME"), "PATH="+filepath.Join(strings.TrimSpace(string(goroot)), "bin")+":/usr/bin:/bin",
			"GOPATH="+filepath.Join(tmp, "gopath"), "GOMODCACHE="+strings.TrimSpace(string(modcache)), "GOFLAGS=-modcacherw",
			"CALLRUN_REPO="+e2eBin.pkgDir, "CALLRUN_REF="+strings.TrimSpace(string(head)),
			"RUNNER_TEMP="+tmp, "GITHUB_PATH="+filepath.Join(tmp, "github_path"))
		if out, code := shell(t, tmp, env, "set -e\n"+install); code != 0 {
			t.Fatalf("github install step: exit %d\n%s", code, out)
		}
		path, _ := os.ReadFile(filepath.Join(tmp, "github_path"))
		if out, code := shell(t, tmp, append(env, "PATH="+strings.TrimSpace(string(path))+":/usr/bin:/bin"), "callrun --version"); code != 0 || !strings.Contains(out, "callrun version") {
			t.Errorf("installed callrun: exit %d %s", code, out)
		}
		gitlab := strings.ReplaceAll(strings.Join(glScript[:4], "\n"), "/tmp/callrun", filepath.Join(tmp, "gitlab-callrun"))
		if out, code := shell(t, tmp, env, "set -e\n"+gitlab+"\ncallrun --version"); code != 0 {
			t.Fatalf("gitlab install lines: exit %d\n%s", code, out)
		}
	})
}

// TestKubernetesIndexedJobRuns runs the Indexed Job's container command
// once for each completion index, all at once, with the journal and the
// token in a PostgreSQL database of the test's own, logged in to from
// elsewhere as the comments say, and tokens that live 2 seconds and rotate:
// each pod takes its shard, no token request is refused, and nobody is
// phoned twice. The pods share no volume.
func TestKubernetesIndexedJobRuns(t *testing.T) {
	var job struct {
		Kind string `yaml:"kind"`
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Parallelism    int    `yaml:"parallelism"`
			Template       struct {
				Spec struct {
					Containers []k8sContainer `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(readExample(t, "kubernetes/indexed-job.yaml")), &job); err != nil {
		t.Fatal(err)
	}
	spec := job.Spec
	if job.Kind != "Job" || spec.CompletionMode != "Indexed" || spec.Completions != 4 || spec.Parallelism != 4 || len(spec.Template.Spec.Containers) != 1 {
		t.Fatalf("indexed job: %+v", job)
	}
	c := spec.Template.Spec.Containers[0]
	if len(c.Command) != 2 || c.Command[0] != "/bin/sh" || len(c.Args) != 1 || !strings.Contains(c.Args[0], fmt.Sprintf(`--shard "$JOB_COMPLETION_INDEX/%d"`, spec.Completions)) {
		t.Fatalf("command %q args %q: want --shard \"$JOB_COMPLETION_INDEX/%d\"", c.Command, c.Args, spec.Completions)
	}
	for _, m := range c.Mounts {
		if m.Name != "campaigns" {
			t.Errorf("the pods mount %s at %s: they need no volume but the campaigns'", m.Name, m.MountPath)
		}
	}
	for _, e := range c.Env {
		if e["name"] == "CALLRUN_TOKEN_FILE" {
			t.Errorf("the pods set CALLRUN_TOKEN_FILE: their token is in the database")
		}
	}
	srv := sandbox.NewServer(sandbox.Options{AccessTokenLifetime: 2 * time.Second})
	t.Cleanup(srv.Close)
	root := t.TempDir()
	env, paths := k8sPod(t, srv, root, "spring-promo/shared.yaml", c, []string{"CALLRUN_DATABASE_URL=" + pgtest.URL(t), "CALLRUN_TOKEN_KEY=" + e2eTokenKey},
		"/tmp/callrun-report", filepath.Join(root, "report"))
	type pod struct {
		out  string
		code int
	}
	pods := make([]pod, spec.Completions)
	var wg sync.WaitGroup
	for k := range pods {
		wg.Go(func() {
			out, code := shell(t, paths.Replace(c.WorkingDir), append(slices.Clone(env), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", k)), paths.Replace(c.Args[0]))
			pods[k] = pod{out, code}
		})
	}
	wg.Wait()
	for k, p := range pods {
		if p.code != 0 {
			t.Errorf("pod %d exits %d (75 must be 0)\n%s", k, p.code, p.out)
		}
		if want := fmt.Sprintf(`"shard":"%d/4"`, k); !strings.Contains(p.out, want) {
			t.Errorf("pod %d does not log its shard (%s):\n%s", k, want, p.out)
		}
	}
	checkNobodyTwice(t, srv)
	if n := srv.Stats().TokenErrors; n != 0 {
		t.Errorf("the service refused %d token requests", n)
	}
	// Four pods started at once create each of the two agents once.
	if agents := srv.Agents(); len(agents) != 2 {
		t.Errorf("the sandbox has %d agents, want 2: %v", len(agents), agents)
	}
	// The status of the whole campaign, from the database, counts every
	// contact of all four shards.
	out, code := shell(t, filepath.Join(root, "campaigns"), env, "callrun status --format json spring-promo/shared.yaml")
	if code != 0 || !strings.Contains(out, `"pending"`) {
		t.Fatalf("status of all shards: exit %d\n%s", code, out)
	}
	t.Logf("%d calls; status: %s", len(srv.Calls()), out)
}

// startExampleListen starts an example's listen command (argv, in dir
// with env) and returns once it listens; it is stopped when the test ends
// unless the test stopped it.
func startExampleListen(t *testing.T, dir string, env []string, argv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir, cmd.Env = dir, env
	var logs e2eBuffer
	cmd.Stderr = &logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("%s:\n%s", strings.Join(argv, " "), logs.String())
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "listening on") {
		t.Fatalf("listen did not start: %q %v\n%s", line, err, logs.String())
	}
	return cmd
}

// placeCallsAndWaitForDeliveries places n calls through a new agent of
// srv, whose account webhook names the listen under test, and waits until
// the sandbox saw each of their deliveries (three a call) acknowledged.
func placeCallsAndWaitForDeliveries(t *testing.T, srv *sandbox.Server, n int) {
	t.Helper()
	agent := srv.AddAgent(sandbox.Agent{AgentName: "Spring Promo"})
	endpoint, _ := srv.CallEndpoint(agent.AgentID)
	c := &http.Client{Timeout: 10 * time.Second}
	for i := range n {
		resp, err := c.PostForm(endpoint, url.Values{"phone_number": {fmt.Sprintf("+1415555%04d", i)}, "first_name": {"Ada"}})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	waitFor(t, 60*time.Second, "every delivery acknowledged", func() bool {
		acked := 0
		for _, d := range srv.Deliveries() {
			if d.Acked && !d.Duplicate {
				acked++
			}
		}
		return acked == 3*n
	})
}

// stopExampleListen sends SIGTERM, as systemd and Kubernetes stop it, and
// checks that it exits 0.
func stopExampleListen(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("listen after SIGTERM: %v", err)
	}
}

// TestSystemdListenExampleRuns runs the listen unit's ExecStart with its
// environment while the sandbox delivers its webhooks to it: every
// delivery is stored in the campaign's state directory, where the run
// unit's reports read them; a second one exits 75; SIGTERM ends it with
// 0. systemd-analyze verifies the unit where it is installed.
func TestSystemdListenExampleRuns(t *testing.T) {
	unit := readExample(t, "cron/callrun-listen.service")
	s := unitSettings(unit)
	if !slices.Contains(s["Restart"], "always") || !slices.Contains(s["KillSignal"], "SIGTERM") || len(s["ExecStart"]) != 1 {
		t.Errorf("Restart %q, KillSignal %q, ExecStart %q", s["Restart"], s["KillSignal"], s["ExecStart"])
	}
	root, bin := t.TempDir(), binDir(t)
	addr := freePort(t)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond, AccountWebhook: sandbox.AccountWebhook{
		URL: "http://" + addr + "/callrun/spring-promo/" + hookSecret, Retry: 10 * time.Millisecond, MaxRetry: 100 * time.Millisecond, ShareDuplicate: 0.3, Seed: 5}})
	t.Cleanup(srv.Close)
	paths := strings.NewReplacer("/srv/campaigns", filepath.Join(root, "srv", "campaigns"), "/etc/callrun", filepath.Join(root, "etc", "callrun"),
		"/usr/local/bin/callrun", filepath.Join(bin, "callrun"), "127.0.0.1:8080", addr)
	copyExample(t, "spring-promo", filepath.Join(root, "srv", "campaigns"))
	writeSpringPromoEnv(t, root, srv)
	env := exampleEnv("HOME="+filepath.Join(root, "nohome"), "PATH="+bin+":/usr/bin:/bin")
	for _, f := range s["EnvironmentFile"] {
		b, err := os.ReadFile(paths.Replace(f))
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, strings.Fields(string(b))...)
	}
	argv := strings.Fields(paths.Replace(s["ExecStart"][0]))
	wd := paths.Replace(s["WorkingDirectory"][0])
	l := startExampleListen(t, wd, env, argv...)
	placeCallsAndWaitForDeliveries(t, srv, 5)
	// A second listen on the same campaign's files, as the comments say.
	second := exec.Command(argv[0], append(argv[1:3:3], "listen", "--addr", "127.0.0.1:0", argv[len(argv)-1])...)
	second.Dir, second.Env = wd, env
	if out, err := second.CombinedOutput(); second.ProcessState.ExitCode() != 75 {
		t.Errorf("a second listen: %v\n%s", err, out)
	}
	stopExampleListen(t, l)
	ds, err := store.ReadDeliveries(filepath.Join(wd, "spring-promo", ".callrun", "spring-promo"))
	if err != nil || len(ds) != 15 {
		t.Errorf("%d deliveries in the campaign's state directory, want 15: %v", len(ds), err)
	}

	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze is not installed: the unit is not verified")
		return
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"callrun-listen.service": strings.ReplaceAll(unit, "/usr/local/bin/callrun", filepath.Join(bin, "callrun"))})
	vout, verr := exec.Command(analyze, "verify", filepath.Join(dir, "callrun-listen.service")).CombinedOutput()
	for l := range strings.Lines(string(vout)) {
		if strings.Contains(l, "callrun-listen") {
			t.Errorf("systemd-analyze verify: %s", l)
		}
	}
	t.Logf("systemd-analyze verify: %v %s", verr, vout)
}

// TestKubernetesListenExampleRuns runs the Deployment's container command
// twice, as its two replicas, with the Secret's settings and a database of
// the test's own, behind a proxy that sends each request to them in turn
// as the Service does, while the sandbox delivers its webhooks: every
// delivery is in the database once, and SIGTERM ends each replica with 0.
func TestKubernetesListenExampleRuns(t *testing.T) {
	type port struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
		TargetPort    string `yaml:"targetPort"`
	}
	type probe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
			Port string `yaml:"port"`
		} `yaml:"httpGet"`
	}
	var deploy struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Replicas int `yaml:"replicas"`
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata struct {
					Labels map[string]string `yaml:"labels"`
				} `yaml:"metadata"`
				Spec struct {
					TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
					Containers                    []struct {
						k8sContainer `yaml:",inline"`
						Ports        []port `yaml:"ports"`
						Readiness    probe  `yaml:"readinessProbe"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	var svc struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []port            `yaml:"ports"`
		} `yaml:"spec"`
	}
	dec := yaml.NewDecoder(strings.NewReader(readExample(t, "kubernetes/listen.yaml")))
	if err := dec.Decode(&deploy); err != nil {
		t.Fatal(err)
	}
	if err := dec.Decode(&svc); err != nil {
		t.Fatal(err)
	}
	spec := deploy.Spec
	if deploy.Kind != "Deployment" || spec.Replicas != 2 || len(spec.Template.Spec.Containers) != 1 || svc.Kind != "Service" {
		t.Fatalf("deployment %+v, service %+v", deploy, svc)
	}
	c := spec.Template.Spec.Containers[0]
	if !maps.Equal(svc.Spec.Selector, spec.Template.Metadata.Labels) || !maps.Equal(spec.Selector.MatchLabels, spec.Template.Metadata.Labels) {
		t.Errorf("the Service's selector %v, the Deployment's %v, the pods' labels %v", svc.Spec.Selector, spec.Selector.MatchLabels, spec.Template.Metadata.Labels)
	}
	if len(c.Ports) != 1 || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != c.Ports[0].Name || c.Readiness.HTTPGet.Path != "/healthz" || c.Readiness.HTTPGet.Port != c.Ports[0].Name {
		t.Errorf("ports %+v, the Service's %+v, readiness %+v", c.Ports, svc.Spec.Ports, c.Readiness)
	}
	if !strings.Contains(c.Args[0], fmt.Sprintf("--addr 0.0.0.0:%d", c.Ports[0].ContainerPort)) || spec.Template.Spec.TerminationGracePeriodSeconds <= int(listenDrainTimeout/time.Second) {
		t.Errorf("args %q, terminationGracePeriodSeconds %d: listen must listen on the container port, and have its %v to drain", c.Args, spec.Template.Spec.TerminationGracePeriodSeconds, listenDrainTimeout)
	}
	replicas := freePorts(t, 2)
	var turn atomic.Uint64
	service := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.Out.URL.Scheme, r.Out.URL.Host = "http", replicas[turn.Add(1)%2]
	}})
	t.Cleanup(service.Close)
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond, AccountWebhook: sandbox.AccountWebhook{
		URL: service.URL + "/callrun/spring-promo-shared/" + hookSecret, Retry: 10 * time.Millisecond, MaxRetry: 100 * time.Millisecond, ShareDuplicate: 0.3, Seed: 9}})
	t.Cleanup(srv.Close)
	root := t.TempDir()
	db := pgtest.URL(t)
	env, paths := k8sPod(t, srv, root, "spring-promo/shared.yaml", c.k8sContainer, []string{"CALLRUN_DATABASE_URL=" + db, "CALLRUN_TOKEN_KEY=" + e2eTokenKey})
	var pods []*exec.Cmd
	for _, addr := range replicas {
		script := strings.Replace(paths.Replace(c.Args[0]), fmt.Sprintf("0.0.0.0:%d", c.Ports[0].ContainerPort), addr, 1)
		pods = append(pods, startExampleListen(t, paths.Replace(c.WorkingDir), env, c.Command[0], c.Command[1], script))
	}
	placeCallsAndWaitForDeliveries(t, srv, 10)
	for _, p := range pods {
		stopExampleListen(t, p) // exec: the shell's SIGTERM is callrun's
	}
	p, err := store.OpenPostgres(context.Background(), db, "spring-promo-shared", 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ds, err := p.ReadDeliveries(context.Background())
	if err != nil || len(ds) != 30 {
		t.Errorf("%d deliveries in the database, want 30: %v", len(ds), err)
	}
	if _, err := os.Stat(filepath.Join(root, "campaigns", "spring-promo", ".callrun")); err == nil {
		t.Error("listen wrote into the campaigns' read-only mount")
	}
}
