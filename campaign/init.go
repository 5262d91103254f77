package campaign

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"text/template"
	"unicode"

	"github.com/nyaruka/phonenumbers"
)

// columnAliases are header names, folded (lower case, letters and digits
// only), that CRM and spreadsheet exports use for each form field.
var columnAliases = map[string][]string{
	"phone_number": {"phone", "phonenumber", "mobile", "mobilephone", "mobilenumber", "cell", "cellphone", "cellular",
		"telephone", "tel", "telefon", "telefonnummer", "handy", "mobil", "telephone1", "phone1", "primaryphone",
		"telefono", "numero", "contactphone", "businessphone", "workphone"},
	"first_name":            {"firstname", "first", "givenname", "forename", "vorname", "prenom", "nombre", "contactfirstname"},
	"last_name":             {"lastname", "last", "surname", "familyname", "nachname", "nom", "apellido", "apellidos", "contactlastname"},
	"email":                 {"email", "emailaddress", "mail", "email1", "primaryemail", "courriel", "correo", "contactemail"},
	"ghl_contact_id":        {"contactid", "recordid", "id", "crmid", "hubspotid", "ghlcontactid", "externalid", "customerid"},
	"local_presence_number": {"localpresence", "localpresencenumber"},
}

// timezoneAliases are folded header names of a time zone column.
var timezoneAliases = []string{"timezone", "tz", "zeitzone", "fuseauhoraire"}

// foldHeader lowers a header name and keeps only its letters and digits,
// so "E-Mail", "e_mail" and "Email " all read "email".
func foldHeader(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch r {
		case 'é', 'è', 'ê':
			r = 'e'
		case 'ñ':
			r = 'n'
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SuggestMapping maps the columns of a header it recognises to form fields.
// The first matching column wins for each field; a column is used once.
func SuggestMapping(header []string) (fields map[string]string, tzColumn string) {
	fields = map[string]string{}
	used := map[int]bool{}
	for _, field := range FormFields {
		for i, h := range header {
			if used[i] || h == "" {
				continue
			}
			if containsString(columnAliases[field], foldHeader(h)) {
				fields[field] = h
				used[i] = true
				break
			}
		}
	}
	for i, h := range header {
		if !used[i] && containsString(timezoneAliases, foldHeader(h)) {
			return fields, h
		}
	}
	return fields, ""
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// InitOptions are the inputs of [WriteInit].
type InitOptions struct {
	Sheet     string // the sheet's path as it will stand in the campaign file (relative to it)
	SheetName string // the sheet's file name, for the campaign name
	Agent     string // agent name; "" derives one from the sheet's name
	Header    []string
	Region    string // "" guesses from the sheet, else US
	// Sample holds a few phone cells of the sheet, to guess the region.
	Sample []string
	// AccountFields are the form fields beyond the seven that the service
	// listed for the account (an agent's call endpoint); a column whose
	// header matches one is mapped to it. AccountFrom says where they came
	// from, for the comment beside each (agent "X"'s call endpoint).
	AccountFields []string
	AccountFrom   string
}

// MatchAccountFields maps the columns of header whose name matches one of
// the account's fields (case, spaces and punctuation aside: "Zip Code"
// matches zip_code) to that field, leaving out the columns in used.
func MatchAccountFields(header, account []string, used map[string]bool) map[string]string {
	fields := map[string]string{}
	for _, field := range account {
		for _, h := range header {
			if h != "" && !used[h] && foldHeader(h) == foldHeader(field) {
				fields[field] = h
				used[h] = true
				break
			}
		}
	}
	return fields
}

var nameChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WriteInit writes a commented campaign file for one sheet. What it could
// not work out is left as a TODO that `callrun plan --offline` refuses
// until it is filled in.
func WriteInit(w io.Writer, o InitOptions) error {
	if len(o.Header) == 0 {
		return errors.New("the sheet has no header row")
	}
	fields, tz := SuggestMapping(o.Header)
	base := strings.TrimSuffix(o.SheetName, filepath.Ext(o.SheetName))
	name := strings.Trim(strings.ToLower(nameChars.ReplaceAllString(base, "-")), "-._")
	if name == "" {
		name = "campaign"
	}
	agent := o.Agent
	if agent == "" {
		agent = strings.Join(strings.Fields(strings.NewReplacer("_", " ", "-", " ").Replace(base)), " ") + " calls"
	}
	region, regionNote := o.Region, ""
	if region == "" {
		region, regionNote = guessRegion(o.Sample)
	}
	type row struct{ Field, Column, Note string }
	var mapped, todo []row
	for _, f := range FormFields {
		switch {
		case fields[f] != "":
			mapped = append(mapped, row{Field: f, Column: fields[f]})
		case f == "phone_number":
			mapped = append(mapped, row{Field: f, Column: "TODO", Note: "no phone column recognised: write the column's name from the header above"})
		case f == "override_agent_id" || f == "local_presence_number":
			// Rarely in a CRM export; set: covers local presence.
		default:
			todo = append(todo, row{Field: f})
		}
	}
	used := map[string]bool{tz: true}
	for _, c := range fields {
		used[c] = true
	}
	account := MatchAccountFields(o.Header, o.AccountFields, used)
	for _, f := range o.AccountFields {
		if account[f] != "" {
			mapped = append(mapped, row{Field: f, Column: account[f], Note: "a field of your account, from " + o.AccountFrom})
		}
	}
	var unused []string
	for _, h := range o.Header {
		if !used[h] && h != "" {
			unused = append(unused, h)
		}
	}
	sort.Strings(unused)
	return initTemplate.Execute(w, map[string]any{
		"Name": name, "Agent": agent, "Sheet": o.Sheet, "Region": region, "RegionNote": regionNote,
		"Mapped": mapped, "Todo": todo, "Unused": unused, "Header": o.Header, "TZ": tz,
		"LocalPresence": fields["local_presence_number"] == "", "Zone": regionZone(region),
		"Countries": sampleCountries(o.Sample, region),
	})
}

// guessRegion picks the region of the country code most numbers in the
// sample are written with, if they carry one.
func guessRegion(sample []string) (string, string) {
	counts := map[int]int{}
	n := 0
	for _, s := range sample {
		s = strings.TrimSpace(s)
		if !strings.HasPrefix(s, "+") && !strings.HasPrefix(s, "00") {
			continue
		}
		num, err := phonenumbers.Parse(s, "ZZ")
		if err != nil {
			continue
		}
		counts[int(num.GetCountryCode())]++
		n++
	}
	best, bestN := 0, 0
	for cc, c := range counts {
		if c > bestN || (c == bestN && cc < best) {
			best, bestN = cc, c
		}
	}
	if bestN*2 > n && bestN > 0 {
		if r := phonenumbers.GetRegionCodeForCountryCode(best); r != "" && r != "ZZ" && r != "001" {
			return r, fmt.Sprintf("guessed from the sheet: most numbers start with +%d", best)
		}
	}
	return "US", "TODO: the country of numbers written without +country code"
}

// sampleCountries returns region and the countries of the numbers in the
// sample written with +country, sorted: what countries: must list for
// every number of the sheet to be called.
func sampleCountries(sample []string, region string) []string {
	countries := []string{region}
	for _, s := range sample {
		s = strings.TrimSpace(s)
		if rest, ok := strings.CutPrefix(s, "00"); ok {
			s = "+" + rest
		}
		if !strings.HasPrefix(s, "+") {
			continue
		}
		num, err := phonenumbers.Parse(s, "ZZ")
		if err != nil || !phonenumbers.IsValidNumber(num) {
			continue
		}
		if r := phonenumbers.GetRegionCodeForNumber(num); r != "" && r != "001" && !slices.Contains(countries, r) {
			countries = append(countries, r)
		}
	}
	slices.Sort(countries)
	return countries
}

var initTemplate = template.Must(template.New("init").Parse(`# Campaign file written by callrun init for {{.Sheet}}.
# Check it with:   callrun plan --offline <this file>
# Then log in and run (see callrun's docs/service.md, "Against the real service"):
#   callrun auth login <this file>
#   callrun run --limit 5 <this file>      # a canary of five calls first
name: {{.Name}}    # names the state directory .callrun/{{.Name}}
service:
  # The service and your OAuth client. Keep secrets in the environment.
  base_url: ${CALLRUN_BASE_URL}
  client_id: ${CALLRUN_CLIENT_ID}
  client_secret: ${CALLRUN_CLIENT_SECRET}
  redirect_uri: http://127.0.0.1:8765/callback   # as registered with the OAuth client
agents:
  - name: {{printf "%q" .Agent}}
    # TODO: what the agent says and does on the call. plan refuses the file
    # until this line is replaced.
    prompt: "TODO: write the agent's prompt"
    # webhook: {url: https://hooks.example.com/call-done, method: POST}   # optional
sheets:
  - file: {{printf "%q" .Sheet}}
    agent: {{printf "%q" .Agent}}
    # The header holds: {{range $i, $h := .Header}}{{if $i}}, {{end}}{{printf "%q" $h}}{{end}}
    fields:                      # form field: CSV column
{{- range .Mapped}}
      {{.Field}}: {{printf "%q" .Column}}{{if .Note}}    # {{.Note}}{{end}}
{{- end}}
{{- range .Todo}}
      # {{.Field}}: ""           # no column recognised; map one if the sheet has it
{{- end}}
{{- if .LocalPresence}}
    set: {local_presence_number: "No"}   # Yes: call from a local number
{{- end}}
{{- if .Unused}}
    # Not sent: {{range $i, $h := .Unused}}{{if $i}}, {{end}}{{printf "%q" $h}}{{end}}
{{- end}}
{{- if .TZ}}
    # timezone_column: {{printf "%q" .TZ}}   # with hours: {timezone: contact}
{{- end}}
region: {{.Region}}    # {{.RegionNote}}
{{- if gt (len .Countries) 1}}
countries: [{{range $i, $c := .Countries}}{{if $i}}, {{end}}{{$c}}{{end}}]    # the sheet holds numbers of these countries; only listed ones are called
{{- else}}
# countries: [{{.Region}}]       # the countries whose numbers may be called (default: region)
{{- end}}
suppress: []                 # CSV files of numbers never to call, e.g. [do-not-call.csv]
dedupe: campaign             # call each number once in the campaign (or: agent, none)
pace: {per_second: 1, burst: 1, concurrency: 4}
# Calling hours: calls start only inside them, and never outside 08:00-20:00
# in the called person's own zones (stricter in France). TODO: your own.
hours: {timezone: {{.Zone}}, days: [mon, tue, wed, thu, fri], start: "09:00", end: "20:00"}
`))

// regionZone is a sensible default zone for a region's calling hours: the
// zone of the region's example number, or New York for the US (whose
// example number is in no single zone).
func regionZone(region string) string {
	if region == "US" || region == "CA" {
		return "America/New_York"
	}
	if num := phonenumbers.GetExampleNumber(region); num != nil {
		if zones, err := phonenumbers.GetTimezonesForNumber(num); err == nil && len(zones) == 1 && zones[0] != "Etc/Unknown" {
			return zones[0]
		}
	}
	return "America/New_York"
}
