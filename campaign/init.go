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

	"github.com/callrun/callrun/campaign/sheet"
	"github.com/nyaruka/phonenumbers"
	"golang.org/x/text/unicode/norm"
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
// without accents, so "E-Mail", "e_mail" and "Email " all read "email".
func foldHeader(s string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(strings.ToLower(s)) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r) // accents (marks) are dropped: "País" reads "pais"
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
			if slices.Contains(columnAliases[field], foldHeader(h)) {
				fields[field] = h
				used[i] = true
				break
			}
		}
	}
	for i, h := range header {
		if !used[i] && slices.Contains(timezoneAliases, foldHeader(h)) {
			return fields, h
		}
	}
	return fields, ""
}

// InitOptions are the inputs of [WriteInit].
type InitOptions struct {
	Sheet     string // the sheet's path as it will stand in the campaign file (relative to it)
	SheetName string // the sheet's file name, for the campaign name
	Agent     string // agent name; "" derives one from the sheet's name
	Header    []string
	Region    string // "" guesses from the sheet: its country column, else its numbers written with +country
	// Rows are the sheet's first rows, whose values tell which columns hold
	// phone numbers, countries and contact ids.
	Rows [][]string
	// AccountFields are the form fields beyond the seven that the service
	// listed for the account (an agent's call endpoint); a column whose
	// header matches one is mapped to it. AccountFrom says where they came
	// from, for the comment beside each (agent "X"'s call endpoint).
	AccountFields []string
	AccountFrom   string
	// Encoding is the sheet's code page when it is not UTF-8
	// (sheet.GuessEncoding), written as the sheet's encoding:.
	Encoding string
	// Workbook is what the reader of a workbook learned of it (nil for a
	// text file): its tabs named like a list of people not to call are
	// written as suppression files, and its hidden rows are told of.
	Workbook *sheet.Workbook
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

// WriteInit writes a commented campaign file for one sheet, and returns
// what the person should be told about it. What it could not work out (the
// phone column, the region) is left as a TODO that `callrun plan` refuses
// until it is filled in.
func WriteInit(w io.Writer, o InitOptions) ([]string, error) {
	if len(o.Header) == 0 {
		return nil, errors.New("the sheet has no header row")
	}
	fields, tz := SuggestMapping(o.Header)
	g := guessSheet(o.Header, o.Rows, o.Region)
	nameSplit := g.takeColumns(fields)
	name, agent := initNames(o)
	mapped, todo := g.fieldRows(fields, nameSplit)
	used := map[string]bool{tz: true, g.country: true}
	for _, c := range fields {
		used[c] = true
	}
	for _, c := range slices.Concat(g.phones, g.phoneTypes, g.notDialledCols) {
		used[c] = true // the phone columns, their type columns, those listed as not called
	}
	nameColumn := ""
	if nameSplit {
		used[g.name], nameColumn = true, g.name
	}
	doNotCall := g.doNotCallColumns(o, used)
	account := MatchAccountFields(o.Header, o.AccountFields, used)
	for _, f := range o.AccountFields {
		if account[f] != "" {
			mapped = append(mapped, initRow{Field: f, Column: fmt.Sprintf("%q", account[f]), Note: "a field of your account, from " + o.AccountFrom})
		}
	}
	consent, optIn := consentColumn(o.Header, o.Rows, g.region, used)
	used[consent] = true
	scope := guessConsentScope(o.Header, consent, used)
	for _, sc := range scope {
		used[sc.Column] = true
	}
	var unused []string
	for _, h := range o.Header {
		if !used[h] && h != "" {
			unused = append(unused, h)
		}
	}
	sort.Strings(unused)
	tabs, hidden := initWorkbook(o)
	if hidden != "" {
		g.notes = append(g.notes, hidden)
	}
	err := initTemplate.Execute(w, map[string]any{
		"SuppressTabs": tabs, "HiddenRows": hidden != "",
		"Name": name, "Agent": agent, "Sheet": o.Sheet, "Region": g.region, "RegionNote": g.regionNote,
		"Mapped": mapped, "Todo": todo, "Unused": unused, "Header": o.Header, "TZ": tz,
		"LocalPresence": fields["local_presence_number"] == "", "Zone": regionZone(g.region),
		"Countries": g.countries, "Others": g.others, "CountryColumn": g.country, "NameColumn": nameColumn,
		"Encoding": o.Encoding, "DoNotCall": doNotCall, "Consent": consent, "ConsentScope": scope, "OptIn": optIn, "NotDialled": g.notDialled,
	})
	return g.notes, err
}

// takeColumns maps g's id and e-mail columns in fields, leaving out the columns g
// chose otherwise (a column holds one thing); it reports whether g's name is split.
func (g *sheetGuess) takeColumns(fields map[string]string) (nameSplit bool) {
	delete(fields, "phone_number")
	delete(fields, "ghl_contact_id")
	for f, col := range fields {
		if slices.Contains(g.phones, col) || col == g.country || col == g.id {
			delete(fields, f) // a column holds one thing
		}
	}
	if g.id != "" {
		fields["ghl_contact_id"] = g.id
	}
	if fields["email"] == "" && g.email != "" && !slices.Contains(g.phones, g.email) {
		fields["email"] = g.email
	}
	return g.name != "" && fields["first_name"] == "" && fields["last_name"] == "" && !slices.Contains(g.phones, g.name)
}

// initNames are the campaign's name and its agent's, from the sheet's file name.
func initNames(o InitOptions) (name, agent string) {
	base := strings.TrimSuffix(o.SheetName, filepath.Ext(o.SheetName))
	name = strings.Trim(strings.ToLower(nameChars.ReplaceAllString(base, "-")), "-._")
	if name == "" {
		name = "campaign"
	}
	agent = o.Agent
	if agent == "" {
		agent = strings.Join(strings.Fields(strings.NewReplacer("_", " ", "-", " ").Replace(base)), " ") + " calls"
	}
	return name, agent
}

// initRow is one line under fields:, or with List a field whose entries have lines of their own.
type initRow struct {
	Field, Column, Note string
	List                []string
}

// fieldRows are the lines under fields: of the form fields mapped, and of those to do.
func (g *sheetGuess) fieldRows(fields map[string]string, nameSplit bool) (mapped, todo []initRow) {
	for _, f := range FormFields {
		switch {
		case f == "phone_number" && slices.ContainsFunc(g.phoneTypes, func(t string) bool { return t != "" }):
			r := initRow{Field: f, Note: "each row is called at the first of these that reads as a number; a number whose type column names a fax, a pager or an assistant is not"}
			for i, c := range g.phones {
				if t := g.phoneTypes[i]; t != "" {
					r.List = append(r.List, fmt.Sprintf("{column: %q, type_column: %q}", c, t))
				} else {
					r.List = append(r.List, fmt.Sprintf("%q", c))
				}
			}
			mapped = append(mapped, r)
		case f == "phone_number" && len(g.phones) > 1:
			quoted := make([]string, len(g.phones))
			for i, c := range g.phones {
				quoted[i] = fmt.Sprintf("%q", c)
			}
			mapped = append(mapped, initRow{Field: f, Column: "[" + strings.Join(quoted, ", ") + "]", Note: "the first cell that reads as a number is called"})
		case f == "phone_number" && len(g.phones) == 1:
			mapped = append(mapped, initRow{Field: f, Column: fmt.Sprintf("%q", g.phones[0])})
		case f == "phone_number":
			mapped = append(mapped, initRow{Field: f, Column: `"TODO"`, Note: "TODO: no column of phone numbers found; write the name of the column that holds them (plan refuses this file until then)"})
		case fields[f] != "":
			mapped = append(mapped, initRow{Field: f, Column: fmt.Sprintf("%q", fields[f])})
		case (f == "first_name" || f == "last_name") && nameSplit:
			// name_column fills them.
		case f == "override_agent_id" || f == "local_presence_number":
			// Rarely in a CRM export; set: covers local presence.
		default:
			todo = append(todo, initRow{Field: f})
		}
	}
	return mapped, todo
}

// doNotCallColumns guesses the do-not-call columns not in used, marks them used and
// noted, and returns them as the file's do_not_call:, or "".
func (g *sheetGuess) doNotCallColumns(o InitOptions, used map[string]bool) string {
	dnc := guessDoNotCall(o.Header, o.Rows, used)
	if len(dnc) == 0 {
		return ""
	}
	names := make([]string, len(dnc))
	for i, c := range dnc {
		used[c.Column] = true
		names[i] = c.Column
	}
	g.notes = append(g.notes, fmt.Sprintf("Do-not-call columns: %s; a row whose cell there says yes (1, true, yes, x, ja, oui, sí) or do not call is never called, nor one whose flag says neither yes nor no.", strings.Join(names, ", ")))
	return doNotCallYAML(dnc)
}

var initTemplate = template.Must(template.New("init").Parse(`# Campaign file written by callrun init for {{.Sheet}}.
# Check it with:   callrun plan --offline <this file>
# Then log in and run (see callrun's docs/service.md, "Against the real service"):
#   callrun auth login <this file>
#   callrun run --limit 5 <this file>      # a canary of five calls first
name: {{.Name}}    # names the state directory .callrun/{{.Name}}
service:
  # The service and your OAuth client. Keep secrets in the environment.
  base_url: ${CALLRUN_BASE_URL}                   # the live service: https://app.aisync.link
  client_id: ${CALLRUN_CLIENT_ID}
  client_secret: ${CALLRUN_CLIENT_SECRET}
  redirect_uri: http://127.0.0.1:8765/callback   # as registered with the OAuth client
  authorize_url: https://app.aisync.link/oauth/authorize   # where auth login sends you to approve it: the live service's
  scope: "*"                                     # the live service wants one: "*" is full access
agents:
  - name: {{printf "%q" .Agent}}
    # TODO: what the agent says and does on the call. plan refuses the file
    # until this line is replaced.
    prompt: "TODO: write the agent's prompt"
    # webhook: {url: https://hooks.example.com/call-done, method: POST}   # optional
sheets:
  - file: {{printf "%q" .Sheet}}
{{- if .Encoding}}
    encoding: {{.Encoding}}    # the sheet is not UTF-8; it reads cleanly in this code page
{{- end}}
    agent: {{printf "%q" .Agent}}
    # The header holds: {{range $i, $h := .Header}}{{if $i}}, {{end}}{{printf "%q" $h}}{{end}}
    fields:                      # form field: CSV column
{{- range .Mapped}}
{{- if .List}}
      {{.Field}}:{{if .Note}}    # {{.Note}}{{end}}
{{- range .List}}
        - {{.}}
{{- end}}
{{- else}}
      {{.Field}}: {{.Column}}{{if .Note}}    # {{.Note}}{{end}}
{{- end}}
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
{{- if .NotDialled}}
    # Not called (no person answers them, or they are another person's): {{range $i, $h := .NotDialled}}{{if $i}}, {{end}}{{$h}}{{end}}
{{- end}}
{{- if .HiddenRows}}
    # hidden_rows: skip          # TODO: the workbook hides rows; skip: they are not called, call: they are (plan stops until you choose)
{{- end}}
{{- if .DoNotCall}}
    do_not_call: {{.DoNotCall}}    # a row whose cell there says do not call (a flag's yes: 1, true, x, ja, oui, ...; a label "Do not call") is never called, nor one whose flag says neither yes nor no
{{- end}}
{{- if .NameColumn}}
    name_column: {{printf "%q" .NameColumn}}    # full names, split into first_name and last_name
{{- end}}
{{- if .CountryColumn}}
    country_column: {{printf "%q" .CountryColumn}}    # each row's country: its number is read as that country's, and a number of another country is not called
{{- end}}
{{- if .TZ}}
    # timezone_column: {{printf "%q" .TZ}}   # with hours: {timezone: contact}
{{- end}}
region: {{.Region}}    # {{if eq .Region "TODO"}}TODO: {{end}}{{.RegionNote}}
{{- if gt (len .Countries) 1}}
countries: [{{range $i, $c := .Countries}}{{if $i}}, {{end}}{{$c}}{{end}}]    # the countries the sheet's country column names; only listed ones are called
{{- else if eq .Region "TODO"}}
# countries: [US, CA]       # the countries whose numbers may be called (default: region)
{{- else}}
# countries: [{{.Region}}]       # the countries whose numbers may be called (default: region)
{{- end}}
{{- if .Others}}
# Also seen, and not called unless listed in countries: numbers written with +country of {{.Others}}
{{- end}}
{{- if .Consent}}
# The called person's prior consent, which AI-voice calls need (US TCPA, FCC 24-17;
# UK PECR): a row without a date or a yes in this column is not called.
{{- if .ConsentScope}}
# The columns beside it say what the consent is for, until when, and its status: a
# row whose consent is to another channel than calls, has ended, or is not opted in
# is not called, and an opt-out of calls keeps its number from every call.
{{- end}}
consent: {column: {{printf "%q" .Consent}}, required: true{{range .ConsentScope}}, {{.Key}}: {{printf "%q" .Column}}{{end}}}
{{- else}}
# AI-voice calls need the called person's prior consent (US TCPA, FCC 24-17; UK PECR).
# Map the column that records it, and rows without a date or a yes there are not called:
{{- if .OptIn}}
# consent: {column: {{printf "%q" .OptIn}}, required: true}    # an opt-in, but to what? Not to e-mails: map it only if it records consent to be called
{{- else}}
# consent: {column: "Consent Date", required: true}
{{- end}}
{{- end}}
{{- if .SuppressTabs}}
suppress:                    # the workbook's tabs named like lists of people not to call: their numbers are never called
{{- range .SuppressTabs}}
  - {file: {{printf "%q" $.Sheet}}, worksheet: {{printf "%q" .}}}
{{- end}}
{{- else}}
suppress: []                 # CSV files of numbers never to call, e.g. [do-not-call.csv]
{{- end}}
dedupe: campaign             # call each number once in the campaign (or: agent, none)
pace: {per_second: 1, burst: 1, concurrency: 4}
# Calling hours: calls start only inside them, and never outside 08:00-20:00
# in the called person's own zones (stricter where the law says: France, Canada,
# Australia, some US states). Check they are yours.
hours: {timezone: {{.Zone}}, days: [mon, tue, wed, thu, fri], start: "09:00", end: "20:00"}
`))

// initWorkbook returns the tabs of o's workbook, other than the one
// read, named like a list of people not to call ([tabSaysDoNotCall]),
// which init writes as suppression files, and a note of the rows the
// worksheet hides ("" when none).
func initWorkbook(o InitOptions) (tabs []string, hidden string) {
	wb := o.Workbook
	if wb == nil {
		return nil, ""
	}
	for _, tab := range wb.Tabs {
		if !strings.EqualFold(tab.Name, wb.Worksheet) && tabSaysDoNotCall(tab.Name) {
			tabs = append(tabs, tab.Name)
		}
	}
	if wb.HiddenRows > 0 {
		rows := make([]string, len(wb.FirstHidden))
		for i, n := range wb.FirstHidden {
			rows[i] = fmt.Sprint(n)
		}
		hidden = fmt.Sprintf("The worksheet %q hides %d row(s) (first: %s): the campaign file says hidden_rows: as a TODO; write skip (they are not called) or call (they are), or plan stops.", wb.Worksheet, wb.HiddenRows, strings.Join(rows, ", "))
	}
	return tabs, hidden
}

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
