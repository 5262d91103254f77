package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/run"
	"github.com/callrun/callrun/report"
	"github.com/chromedp/chromedp"
)

// marketingShots is where TestMarketingPath writes its screenshots 1280
// pixels wide under -update: the pictures docs/marketing.md shows.
const marketingShots = "docs/images"

// TestMarketingPath is docs/marketing.md as a test: marketing staff's
// ten-row CRM export (examples/marketing) through callrun init, plan
// --report and run --sandbox, and both pages in headless Chromium at 1280
// and 390 pixels wide. On a Tuesday at 20:30 UTC (15:30 in New York,
// 20:30 in London and Guernsey, the injected clock), each person's
// decision is found on each page by their name, with its reason: the
// London and Guernsey contacts wait, from Wednesday 14:00 UTC, when their
// own hours and the campaign's New York hours are open together; the
// rehearsal's page is labelled as one, and says a real run would have
// waited for them. It writes its screenshots into CALLRUN_SCREENSHOT_DIR or a
// temporary directory it names, and with -update those docs/marketing.md
// shows into docs/images.
func TestMarketingPath(t *testing.T) {
	browser := testBrowser(t)
	ctx := context.Background()
	dir := t.TempDir()
	for _, name := range []string{"contacts-export.csv", "do-not-call.csv"} {
		b, err := os.ReadFile(filepath.Join("examples", "marketing", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("CALLRUN_HOME", filepath.Join(dir, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))

	// init, and what a person then writes in: the prompt, the team's
	// do-not-call list.
	if code, out := runAppOut(t, "init", "--offline", "--agent", "Winter Offer", filepath.Join(dir, "contacts-export.csv")); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	path := filepath.Join(dir, "campaign.yaml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	yml := strings.Replace(string(b), `"TODO: write the agent's prompt"`, `"Tell the customer about the winter offer."`, 1)
	yml = strings.Replace(yml, "suppress: []", "suppress: [do-not-call.csv]", 1)
	for _, want := range []string{"countries: [GB, GG, US]", `country_column: "Country/Region"`, "hours: {timezone: America/New_York"} {
		if !strings.Contains(yml, want) {
			t.Fatalf("init did not write %q:\n%s", want, yml)
		}
	}
	if err := os.WriteFile(path, []byte(yml), 0o644); err != nil {
		t.Fatal(err)
	}

	at := time.Date(2027, 1, 5, 20, 30, 0, 0, time.UTC) // a Tuesday
	const from = "2027-01-06T14:00:00Z"                 // 09:00 in New York, 14:00 in London
	type person struct {
		name, row      string
		plan, run, why string // the sections they are in, and what their reason says
	}
	people := []person{
		{"Mary Jackson", "2", "to_call", "sent", ""},
		{"Annie Easley", "3", "to_call", "sent", `number from column "Mobile Phone Number"`},
		{"Evelyn Boyd", "4", "to_call", "sent", ""},
		{"Oliver Bennett", "5", "waiting", "sent", "outside the called person's calling hours (their time: Europe/London); may be called from " + from},
		{"Isla Le Page", "6", "waiting", "sent", "outside the called person's calling hours (their time: Europe/Guernsey); may be called from " + from},
		{"Ruth Teitelbaum", "7", "to_call", "sent", ""},
		{"Katherine Johnson", "8", "invalid", "invalid", `"555-1234" is not a valid phone number for region US`},
		{"Mary Jackson", "9", "duplicate", "duplicate", "the number appears in an earlier row"},
		{"Dorothy Vaughan", "10", "suppressed", "suppressed", "the number is in a suppression file"},
		{"Grace Hopper", "11", "to_call", "sent", ""},
	}

	// plan --report, before any call.
	planDir := filepath.Join(dir, "plan")
	var out bytes.Buffer
	if err := runPlan(ctx, nolog, planOptions{PlanOptions: run.PlanOptions{Path: path, Offline: true, Report: planDir, Now: at}, format: "text"}, &out); err != nil {
		t.Fatalf("plan --report: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Plan page: "+filepath.Join(planDir, "report.html")) {
		t.Errorf("plan does not name its page:\n%s", out.String())
	}
	rows := readReportBy(t, "row", filepath.Join(planDir, "report.csv"))
	for _, p := range people {
		r := rows[p.row]
		if r["status"] != p.plan || !strings.Contains(r["reason"], p.why) || strings.TrimSpace(r["first_name"]+" "+r["last_name"]) != p.name {
			t.Errorf("the plan's report.csv row %s: %v; want %s %s, the reason saying %q", p.row, r, p.name, p.plan, p.why)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".callrun")); !os.IsNotExist(err) {
		t.Errorf("plan --report wrote into the state directory: %v", err)
	}

	// The rehearsal, on the same clock.
	t0 := time.Now()
	clock := func() time.Time { return at.Add(time.Since(t0)) }
	out.Reset()
	err = runCampaign(ctx, nolog, runOptions{Path: path, Sandbox: true, Now: clock}, &out)
	if err != nil {
		t.Fatalf("run --sandbox: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "Campaign contacts-export (a rehearsal: nobody was phoned): 10 rows, complete.") {
		t.Errorf("the rehearsal's summary does not say it was one:\n%s", out.String())
	}
	state := filepath.Join(dir, ".callrun", "contacts-export-sandbox")
	var sum report.Summary
	if b, err := os.ReadFile(filepath.Join(state, "summary.json")); err != nil || json.Unmarshal(b, &sum) != nil || !sum.Rehearsal || sum.Counts["sent"] != 7 {
		t.Errorf("summary.json: %+v (%v); want a rehearsal with 7 sent", sum, err)
	}
	rows = readReportBy(t, "row", filepath.Join(state, "report.csv"))
	for _, p := range people {
		r := rows[p.row]
		why := p.why
		if p.plan == "waiting" {
			why = "a real run would have waited: " + why
		}
		if r["status"] != p.run || !strings.Contains(r["reason"], why) {
			t.Errorf("the rehearsal's report.csv row %s: %v; want %s, the reason saying %q", p.row, r, p.run, why)
		}
	}

	// Both pages in the browser, at both widths: everyone found by name,
	// under their decision, with its reason.
	shots := os.Getenv("CALLRUN_SCREENSHOT_DIR")
	if shots == "" {
		shots = t.TempDir()
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	bctx := browserContext(t, browser, 90*time.Second)
	type found struct {
		Section, Text string
		Found         bool // the browser's find found the name
	}
	for _, page := range []struct {
		name, path, label string
		section           func(person) string
	}{
		{"plan", filepath.Join(planDir, "report.html"), "Plan: what callrun run would do, before any call.", func(p person) string { return p.plan }},
		{"report", filepath.Join(state, "report.html"), "Rehearsal: nobody was phoned.", func(p person) string { return p.run }},
	} {
		pageURL := (&url.URL{Scheme: "file", Path: filepath.ToSlash(page.path)}).String()
		for _, width := range []int64{1280, 390} {
			if err := chromedp.Do(bctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(pageURL)); err != nil {
				t.Fatal(err)
			}
			text, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.body.innerText`))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, page.label) {
				t.Errorf("%s page at %d px: %q is not on it", page.name, width, page.label)
			}
			for _, p := range people {
				js := fmt.Sprintf(`(() => {
					const name = %q, row = %q;
					const found = window.find(name, true, false, true);
					for (const tr of document.querySelectorAll("table.people tbody tr")) {
						const td = tr.querySelectorAll("td");
						if (td[0].textContent === name && td[2].textContent.endsWith(" row " + row)) {
							return {Section: tr.closest(".people-group").id, Text: tr.innerText, Found: found};
						}
					}
					return {Section: "", Text: "", Found: found};
				})()`, p.name, p.row)
				got, err := chromedp.Run(bctx, chromedp.Evaluate[found](js))
				if err != nil {
					t.Fatal(err)
				}
				// The page shows the time apart, in bold, before the reason.
				why, _, _ := strings.Cut(p.why, "; may be called from")
				want := "people-" + page.section(p)
				if !got.Found || got.Section != want || !strings.Contains(got.Text, why) {
					t.Errorf("%s page at %d px, %s (row %s): %+v; want it found under %s, saying %q", page.name, width, p.name, p.row, got, want, p.why)
				}
				if p.plan == "waiting" && page.name == "plan" && !strings.Contains(got.Text, "from Wed 6 Jan 2027 14:00 UTC") {
					t.Errorf("%s page at %d px: %s does not show from when: %q", page.name, width, p.name, got.Text)
				}
			}
			// The last find's selection is no part of the picture.
			if _, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`(window.getSelection().removeAllRanges(), window.scrollTo(0, 0), true)`)); err != nil {
				t.Fatal(err)
			}
			png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("marketing-%s-%d.png", page.name, width)
			if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
				t.Fatal(err)
			}
			if *update && width == 1280 { // the pictures of docs/marketing.md
				if err := os.WriteFile(filepath.Join(marketingShots, name), png, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	t.Logf("screenshots of the plan's and the rehearsal's pages in %s", shots)
	// The page names countries, not codes, and keeps the run's own notes
	// to itself.
	b, err = os.ReadFile(filepath.Join(state, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`data-country="Guernsey (GG)"`)) || regexp.MustCompile(`pid \d+`).Match(b) {
		t.Error("the rehearsal's page names a country by its code, or shows the run's pid")
	}
}
