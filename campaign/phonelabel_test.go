package campaign

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPhoneLabelMentionsDoNotCall: Google Contacts' label of a number
// ("Phone 1 - Label") is the person's own text for it. One that mentions
// do not call ("Mobile (do not call)", "Old - DNC") holds the row, as a
// note that mentions it does, whether the campaign names the label as the
// number's type_column or maps the number alone: the row is not called at
// that number nor at its other one.
func TestPhoneLabelMentionsDoNotCall(t *testing.T) {
	body, err := os.ReadFile(filepath.Join("testdata", "crm", "google-phone-labels.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, phones := range []string{
		`[{column: "Phone 1 - Value", type_column: "Phone 1 - Label"}, {column: "Phone 2 - Value", type_column: "Phone 2 - Label"}]`,
		`["Phone 1 - Value", "Phone 2 - Value"]`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "contacts.csv"), body, 0o644); err != nil {
			t.Fatal(err)
		}
		yaml := "name: labels\nagents:\n  - {name: A, prompt: Hello.}\nsheets:\n  - file: contacts.csv\n    agent: A\n" +
			"    fields: {first_name: First Name, phone_number: " + phones + "}\n" +
			"region: US\nunsafe_ignore_called_person_hours: true\n"
		path := filepath.Join(dir, "campaign.yaml")
		if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := Load(path, LoadOptions{Offline: true, Getenv: env(nil)})
		if err == nil {
			err = f.CheckSheets()
		}
		if err != nil {
			t.Fatal(err)
		}
		p, sup := signalPlan(t, f)
		if got := rowStatuses(t, f, sup); !slices.Equal(got, []string{ToCall, Suppressed, Suppressed}) {
			t.Errorf("%s: statuses %v; want the rows whose number's label mentions do not call held", phones, got)
		}
		if w := strings.Join(p.Warnings, "\n"); !strings.Contains(w, `"Phone 1 - Label" mention a do-not-call phrase`) || !strings.Contains(w, `"Phone 2 - Label" mention a do-not-call phrase`) {
			t.Errorf("%s: plan does not warn of the labels:\n%s", phones, w)
		}
	}
}
