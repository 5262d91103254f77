package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// TestDoNotCallIndexSeesLateOptOuts: a list imported (its index built
// at the import's end) and then added to, as listen adds an opt-out,
// after the index was built: plan counts both numbers as on the list,
// and the run, checked against the sandbox's ledger, calls neither and
// calls everyone else once; a number taken off the list after the index
// is called again. The index file appears beside the list, with its
// mode.
func TestDoNotCallIndexSeesLateOptOuts(t *testing.T) {
	srv := sandbox.NewServer(sandbox.Options{})
	t.Cleanup(srv.Close)
	contacts := e2ePhones(8)
	e := newE2ECampaign(t, srv, e2eSetup{contacts: contacts, perSecond: 50, concurrency: 2})
	home := filepath.Join(t.TempDir(), "callrun-home")
	e.env = append(e.env, "CALLRUN_HOME="+home)

	// An import of many numbers, two of them the campaign's.
	var csv strings.Builder
	csv.WriteString("phone\n")
	for _, area := range []string{"907", "808", "305", "503", "206", "404", "512", "702"} {
		for i := range 100 {
			fmt.Fprintf(&csv, "+1%s55501%02d\n", area, i)
		}
	}
	csv.WriteString(contacts[0].E164 + "\n" + contacts[2].E164 + "\n")
	csvPath := filepath.Join(t.TempDir(), "registry.csv")
	if err := os.WriteFile(csvPath, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if imp := e.run(60*time.Second, "suppress", "import", e.path, csvPath); imp.code != 0 || !strings.Contains(imp.stdout, "802 number(s) of") {
		t.Fatalf("suppress import: %s", imp)
	}
	index, err := os.Stat(filepath.Join(home, store.DoNotCallIndexName))
	if err != nil {
		t.Fatalf("no index after the import: %v", err)
	}
	if hist, _ := os.Stat(filepath.Join(home, store.DoNotCallFileName)); index.Mode().Perm() != hist.Mode().Perm() {
		t.Errorf("the index is %v, the list %v", index.Mode().Perm(), hist.Mode().Perm())
	}

	// After the index: an opt-out, as listen writes it, and a removal.
	list := store.OpenDoNotCallFile(home)
	ctx := context.Background()
	if _, err := list.Add(ctx, []store.DoNotCallEntry{
		{Number: contacts[5].E164, Source: "delivery d-1 of campaign e2e"},
		{Number: contacts[2].E164, Removed: true, Source: "suppress remove", Reason: "asked to be called"},
	}); err != nil {
		t.Fatal(err)
	}
	e.runSkipping(0, 5)
	rows := e.report()
	for _, i := range []int{0, 5} {
		if r := rows[i]; !strings.Contains(r["reason"], "do-not-call list") {
			t.Errorf("report row of contact %d: %v, want it on the do-not-call list", i, r)
		}
	}
}
