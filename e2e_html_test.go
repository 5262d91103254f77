package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// testBrowser returns the headless Chromium the browser tests drive:
// CALLRUN_TEST_BROWSER, or Debian's chromium-headless-shell or chromium
// (`make browser` installs the first). Without one the test skips, or
// fails under CI=true, where it must run; with -short it skips.
func testBrowser(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("drives headless Chromium; skipped with -short (make test-short)")
	}
	if p := os.Getenv("CALLRUN_TEST_BROWSER"); p != "" {
		return p
	}
	for _, name := range []string{"chromium-headless-shell", "chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no headless Chromium: `make browser` (as root: apt-get install chromium-headless-shell) or set CALLRUN_TEST_BROWSER"
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browserContext starts the headless Chromium at browser, asking for
// nothing over the network of its own, and returns a context of one tab
// in it that ends after d; the test's end stops the browser.
func browserContext(t *testing.T, browser string, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true), chromedp.Flag("disable-gpu", true))...)
	t.Cleanup(cancel)
	ctx, cancel = chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, d)
	t.Cleanup(cancel)
	return ctx
}

// pageFigure is one figure report.html marks with data-figure.
type pageFigure struct {
	Figure, Group, Name, Status, Country, Run, Text string
}

// TestReportHTMLInBrowser runs a sandbox campaign in two runs (the first
// stopped by --limit), opens its report.html from file:// in headless
// Chromium and checks that the page logs no error, asks for nothing but
// itself, and shows summary.json's figures, an erased person's among
// them, without her number. It writes screenshots at 1280
// and 390 pixels wide, and of the printed page, for a person to look at:
// the test's output names the directory.
func TestReportHTMLInBrowser(t *testing.T) {
	browser := testBrowser(t)
	var sheet strings.Builder
	sheet.WriteString("First Name,Phone\n")
	for i := range 40 {
		fmt.Fprintf(&sheet, "Ada %d,(415) 555-%04d\n", i, 100+i)
	}
	sheet.WriteString("Dup,(415) 555-0100\nDup,(415) 555-0101\n")
	sheet.WriteString("Empty,\nNA,N/A\nNA2,n/a\nBob <b>bold</b>,<script>alert(1)</script>\nLondon,+44 20 7946 0958\nParis,+33 1 42 68 53 00\n")
	e := newOfflineCampaign(t, strings.NewReader(sheet.String()))
	yml, err := os.ReadFile(e.path)
	if err != nil {
		t.Fatal(err)
	}
	yml = append(yml, "pace: {per_second: 200, burst: 10, concurrency: 4}\ncountries: [US, GB]\n"...)
	if err := os.WriteFile(e.path, yml, 0o644); err != nil {
		t.Fatal(err)
	}
	stateDir := e.stateDir + "-sandbox" // a rehearsal's own
	if res := e.run(60*time.Second, "run", "--sandbox", "--limit", "25", e.path); res.code != 0 {
		t.Fatalf("first run: %s", res)
	}
	// Ada 3, called, is erased (the rehearsal's erased set): the second
	// run's page lists her row erased, by sheet and row alone.
	eraseInRehearsal(t, e, "+14155550103")
	res := e.run(60*time.Second, "run", "--sandbox", e.path)
	if res.code != 0 {
		t.Fatalf("second run: %s", res)
	}
	page := filepath.Join(stateDir, "report.html")
	if !strings.HasSuffix(strings.TrimSpace(res.stdout), "Report page: "+page) {
		t.Errorf("the run's output does not end by naming report.html:\n%s", res.stdout)
	}
	runs, err := store.ReadRuns(filepath.Join(stateDir, store.JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 || runs[0].Ending != report.EndLimit || runs[1].Ending != report.EndComplete || runs[0].Calls != 25 {
		t.Errorf("the journal's runs: %+v; want one stopped at the limit after 25 calls, then one complete", runs)
	}
	b, err := os.ReadFile(filepath.Join(stateDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum report.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}

	ctx := browserContext(t, browser, 60*time.Second)

	var (
		mu       sync.Mutex
		problems []string
		requests []string
	)
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				problems = append(problems, fmt.Sprintf("console.%s %v", ev.Type, ev.Args))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+(&chromedp.ExceptionError{ExceptionDetails: ev.ExceptionDetails}).Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.EntryLevelError || ev.Entry.Level == cdplog.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("log %s: %s %s", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
		}
	}); err != nil {
		t.Fatal(err)
	}
	pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(page)}).String()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(pageURL)); err != nil {
		t.Fatal(err)
	}
	figures, err := chromedp.Run(ctx, chromedp.Evaluate[[]pageFigure](`Array.from(document.querySelectorAll("[data-figure]"), e => ({
		Figure: e.dataset.figure, Group: e.dataset.group || "", Name: e.dataset.name || "", Status: e.dataset.status || "",
		Country: e.dataset.country || "", Run: e.dataset.run || "", Text: e.textContent.trim()}))`))
	if err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(ctx, chromedp.Title())
	if err != nil || !strings.HasPrefix(title, "offline") {
		t.Errorf("title %q (%v)", title, err)
	}

	dir := os.Getenv("CALLRUN_SCREENSHOT_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "callrun-report-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, shot := range []struct {
		name  string
		width int64
		media string
	}{{"report-1280.png", 1280, ""}, {"report-390.png", 390, ""}, {"report-print.png", 800, "print"}} {
		png, err := chromedp.Run(ctx, func(ctx context.Context, tg *chromedp.Target) ([]byte, error) {
			if err := chromedp.Do(ctx, chromedp.EmulateViewport(shot.width, 900), emulateMedia(shot.media)); err != nil {
				return nil, err
			}
			return chromedp.FullScreenshot(100)(ctx, tg)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, shot.name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("screenshots of report.html in %s", dir)

	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("the page logged: %s", p)
	}
	for _, r := range requests {
		if r != pageURL {
			t.Errorf("the page asked for %s", r)
		}
	}
	checkPageFigures(t, figures, &sum)
	if !slices.ContainsFunc(figures, func(f pageFigure) bool {
		return f.Figure == "people" && f.Status == string(store.Erased) && f.Text == "1"
	}) || sum.Counts[string(store.Erased)] != 1 {
		t.Errorf("the page lists no erased person, or summary.json counts %d erased", sum.Counts[string(store.Erased)])
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []string{"4155550103", "555-0103", "5550103"} {
		if strings.Contains(string(html), form) {
			t.Errorf("report.html holds the erased number as %q", form)
		}
	}
}

// eraseInRehearsal puts number in the erased set of e's rehearsals, in
// the CALLRUN_HOME e's commands use (their HOME's).
func eraseInRehearsal(t *testing.T, e *e2eCampaign, number string) {
	t.Helper()
	for _, kv := range e.env {
		if name, v, _ := strings.Cut(kv, "="); name == "HOME" || strings.HasPrefix(name, "XDG_") {
			t.Setenv(name, v)
		}
	}
	for _, name := range []string{"CALLRUN_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME"} {
		if !slices.ContainsFunc(e.env, func(kv string) bool { return strings.HasPrefix(kv, name+"=") }) {
			t.Setenv(name, "")
		}
	}
	s, erasure, keys := openErasure(t, e.path, campaign.LoadOptions{Offline: true}, true) // the sandbox is the service
	if _, err := erasure.AddErased(context.Background(), []store.ErasedEntry{{Hash: keys.Hashes(number)[0], At: time.Now(), Why: "erase"}}); err != nil {
		t.Fatal(err)
	}
	s.Close() // before the run takes the store
}

// checkPageFigures checks the figures of report.html against summary.json.
func checkPageFigures(t *testing.T, figures []pageFigure, sum *report.Summary) {
	t.Helper()
	num := func(f pageFigure) int {
		n, err := strconv.Atoi(strings.ReplaceAll(f.Text, ",", ""))
		if err != nil {
			t.Errorf("figure %+v is not a number", f)
		}
		return n
	}
	c := sum.Counts
	want := map[string]int{
		"rows": sum.Rows, "valid": sum.Rows - c["invalid"], "called": c["sent"] + c["failed"] + c["uncertain"],
		"sent": c["sent"], "calls_this_run": sum.CallsThisRun, "invalid-rows": c["invalid"],
	}
	seen := map[string]bool{}
	countries, statuses, groups, lastRun, people := 0, 0, 0, 0, 0
	for _, f := range figures {
		switch f.Figure {
		case "status":
			statuses++
			if n := num(f); n != c[f.Status] {
				t.Errorf("status %s: the page says %d, summary.json %d", f.Status, n, c[f.Status])
			}
		case "group":
			groups++
			m := sum.Sheets
			if f.Group == "agents" {
				m = sum.Agents
			}
			if n := num(f); n != m[f.Name][f.Status] {
				t.Errorf("%s %s, %s: the page says %d, summary.json %d", f.Group, f.Name, f.Status, n, m[f.Name][f.Status])
			}
		case "people": // everyone listed by name, under their status
			people++
			if n := num(f); n != c[f.Status] {
				t.Errorf("people %s: the page lists %d, summary.json counts %d", f.Status, n, c[f.Status])
			}
		case "country":
			countries += num(f)
		case "run-calls":
			lastRun = num(f)
		default:
			w, ok := want[f.Figure]
			if !ok {
				t.Errorf("unknown figure %+v", f)
				continue
			}
			seen[f.Figure] = true
			if n := num(f); n != w {
				t.Errorf("%s: the page says %d, summary.json %d", f.Figure, n, w)
			}
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("the page has no figure %s", k)
		}
	}
	if statuses != len(report.Statuses) || groups != 2*len(report.Statuses) && groups == 0 {
		t.Errorf("%d status figures, %d sheet and agent figures", statuses, groups)
	}
	listed := 0
	for _, n := range c {
		if n > 0 {
			listed++
		}
	}
	if people != listed {
		t.Errorf("the page lists the people of %d statuses, summary.json counts rows in %d", people, listed)
	}
	if called := want["called"]; countries != called {
		t.Errorf("countries called add up to %d, summary.json has %d called", countries, called)
	}
	if lastRun != sum.CallsThisRun {
		t.Errorf("the last run's chart says %d calls, summary.json %d", lastRun, sum.CallsThisRun)
	}
}

// emulateMedia makes the page use the CSS of media ("print"; "" for the
// screen's).
func emulateMedia(media string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: media})
		return err
	})
}
