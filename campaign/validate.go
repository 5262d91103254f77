package campaign

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/unicode/norm"
)

var safeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// validate checks everything that can be checked without reading the
// sheets or asking the service, and records every problem.
func (l *loader) validate(f *File) {
	switch {
	case f.Name == "":
		l.problem("name", "the campaign needs a name (it names the state directory), e.g. name: spring-promo")
	case !safeName.MatchString(f.Name):
		l.problem("name", "name %q may hold only letters, digits, '.', '_' and '-' (it names a directory)", f.Name)
	}
	l.validateService(&f.Service)
	l.validateAgents(f)
	l.validateSheets(f)
	l.validateDoNotCall("do_not_call", f.DoNotCall)
	l.validateConsent(f)
	for i, s := range f.Suppress {
		key := fmt.Sprintf("suppress[%d]", i)
		if strings.TrimSpace(s.File) == "" {
			l.problem(key, "a suppression file needs its path: suppress: [dnc.csv], [{file: dnc.csv, column: Phone}] or [{file: dnc.csv, columns: [Phone, Mobile]}]")
			continue
		}
		l.checkReadable(key, f.Path(s.File), "suppression file")
		if s.Column != "" && len(s.Columns) > 0 {
			l.problem(key, "suppression file %s has both column: and columns:; list every column under columns: [%q, ...]", s.File, s.Column)
		}
		seen := map[string]bool{}
		for _, c := range s.Columns {
			folded := strings.ToLower(strings.TrimSpace(c))
			switch {
			case folded == "":
				l.problem(key+".columns", "suppression file %s lists an empty column name", s.File)
			case seen[folded]:
				l.problem(key+".columns", "suppression file %s lists the column %q twice", s.File, c)
			}
			seen[folded] = true
		}
		if err := sheet.CheckEncoding(s.Encoding); err != nil {
			l.problem(key+".encoding", "%v", err)
		}
		if _, written := l.lines[key+".worksheet"]; written && strings.TrimSpace(s.Worksheet) == "" {
			l.problem(key+".worksheet", "worksheet is empty: name the tab of the workbook %s to read the numbers from, or remove the key to read its first", s.File)
		}
	}
	l.validateRegion("region", f.Region)
	l.validatePhoneRules("", f.Countries, f.AllowNumberKinds)
	if !slices.Contains([]string{"campaign", "agent", "none"}, f.Dedupe) {
		l.problem("dedupe", "dedupe is %q; allowed: campaign, agent, none", f.Dedupe)
	}
	if f.Pace.PerSecond <= 0 || f.Pace.PerSecond > 1000 {
		l.problem("pace.per_second", "per_second is %v; it must be above 0 and at most 1000", f.Pace.PerSecond)
	}
	if f.Pace.Burst < 1 || f.Pace.Burst > 1000 {
		l.problem("pace.burst", "burst is %d; it must be 1 to 1000", f.Pace.Burst)
	}
	if f.Pace.Concurrency < 1 || f.Pace.Concurrency > 256 {
		l.problem("pace.concurrency", "concurrency is %d; it must be 1 to 256", f.Pace.Concurrency)
	}
	switch {
	case f.Pace.MaxActiveCalls < 0:
		l.problem("pace.max_active_calls", "max_active_calls is %d; it must be 0 (no cap) or more", f.Pace.MaxActiveCalls)
	case f.Pace.MaxActiveCalls > 0 && f.Pace.CallLength <= 0:
		l.problem("pace.call_length", "max_active_calls needs call_length, how long a call lasts (such as 3m): a call counts as in progress for that long from its start")
	case f.Pace.CallLength < 0:
		l.problem("pace.call_length", "call_length is %s; it must be a positive duration such as 3m", f.Pace.CallLength)
	}
	if f.Pace.MaxRetryAfter < time.Second || f.Pace.MaxRetryAfter > 24*time.Hour {
		l.problem("pace.max_retry_after", "max_retry_after is %s; it must be 1s to 24h", f.Pace.MaxRetryAfter)
	}
	if f.Hours != nil {
		l.validateHours(f.Hours)
	}
	l.validateState(f.State)
	l.validateOutcomes(f)
	l.validatePressure(f)
	if d, err := ParseAge(f.Retention); err != nil {
		l.problem("retention", "retention is %v; it is how long a person's data is kept after their last call", err)
	} else if f.has("retention") && d < MinRetention {
		l.problem("retention", "retention is %s; it must be at least 31d (contact pressure looks back 30 days)", f.Retention)
	}
}

// validatePressure checks the pressure: block.
func (l *loader) validatePressure(f *File) {
	p := f.Pressure
	if p == nil {
		return
	}
	if p.Off {
		if p.PerDay != 0 || p.Per14Days != 0 || p.Preset != "" {
			l.problem("pressure.off", "pressure off: true turns contact pressure off; it cannot go with per_day, per_14_days or preset")
		}
		return
	}
	if p.PerDay < 0 || p.PerDay > 24 || p.PerDay == 0 && f.has("pressure.per_day") {
		l.problem("pressure.per_day", "per_day is %d; it must be 1 to 24 (to call without a limit, write pressure: {off: true})", p.PerDay)
	}
	if p.Per14Days < 0 || p.Per14Days > 14*24 || p.Per14Days == 0 && f.has("pressure.per_14_days") {
		l.problem("pressure.per_14_days", "per_14_days is %d; it must be 1 to 336", p.Per14Days)
	}
	if p.Preset != "" && p.Preset != PresetRegF {
		l.problem("pressure.preset", "preset is %q; allowed: %s", p.Preset, PresetRegF)
	}
}

// validateOutcomes checks the outcomes: block, hands the URL's secret to
// the redaction, and gives the URL to every agent that names no webhook
// of its own.
func (l *loader) validateOutcomes(f *File) {
	o := f.Outcomes
	if o == nil {
		return
	}
	switch {
	case !absoluteHTTP(o.URL):
		l.problem("outcomes.url", "outcomes url %q is not an absolute http(s) URL", o.URL)
		return
	case len(o.Secret()) < MinHookSecret && !l.secretUnset && !l.isUnset("outcomes.url"):
		l.problem("outcomes.url", "outcomes url's path must end in a secret of at least %d characters, such as https://hooks.example.com/callrun/${CALLRUN_HOOK_SECRET}: the service signs nothing, so the secret path is what keeps forged deliveries out", MinHookSecret)
		return
	}
	for i, name := range o.Fields {
		if strings.TrimSpace(name) == "" {
			l.problem(fmt.Sprintf("outcomes.fields[%d]", i), "an outcome field needs a name, such as status")
		}
	}
	if o.OptOut == nil {
		// Without one, every opt-out the service reports would be
		// dropped: the field and words services write it in.
		o.OptOut = &OptOut{Field: "disposition", Values: slices.Clone(DefaultOptOutValues)}
	}
	if oo := o.OptOut; oo != nil {
		if strings.TrimSpace(oo.Field) == "" {
			l.problem("outcomes.opt_out.field", "opt_out needs the delivery's field that says \"do not call me\", such as field: disposition")
		}
		if len(oo.Values) == 0 {
			l.problem("outcomes.opt_out.values", "opt_out needs the values of %s that mean \"do not call me\", such as values: [do_not_call, opted_out]", oo.Field)
		}
	}
	if o.PhoneField != "" && strings.TrimSpace(o.PhoneField) == "" {
		l.problem("outcomes.phone_field", "phone_field needs the name of a delivery's field, such as phone_field: lead_phone")
	}
	o.signingUnset = l.signingUnset
	switch {
	case o.SigningSecret != "":
		apiclient.AddSecret(o.SigningSecret)
	case o.RequireSignature && !o.signingUnset:
		l.problem("outcomes.require_signature", "require_signature needs signing_secret, the secret key the service signs its deliveries with: signing_secret: ${CALLRUN_SIGNING_SECRET}")
	}
	for i, n := range o.OwnNumbers {
		e164, _, err := phone.Normalize(n, f.Region)
		if err != nil {
			l.problem(fmt.Sprintf("outcomes.own_numbers[%d]", i), "%q is not a phone number: own_numbers lists the numbers the service calls from, such as \"+14155550100\"", n)
			continue
		}
		o.own = append(o.own, e164)
	}
	for i := range f.Agents {
		if f.Agents[i].Webhook == nil {
			f.Agents[i].Webhook = &Webhook{URL: o.AgentURL(), Method: "POST"}
		}
	}
}

// isUnset reports whether key named a variable that is not set, a
// problem already reported.
func (l *loader) isUnset(key string) bool {
	for _, p := range l.unset {
		if p.Key == key {
			return true
		}
	}
	return false
}

// validateState checks the state: block, and hands the database password
// to the redaction that every printed message goes through.
func (l *loader) validateState(s *StateStore) {
	if s == nil {
		return
	}
	if s.Postgres == "" {
		if l.isUnset("state.postgres") {
			return
		}
		if !l.opts.Offline {
			l.problem("state.postgres", "state.postgres is empty: give a PostgreSQL URL (postgres: ${CALLRUN_DATABASE_URL}), or remove state: to keep the journal in state_dir")
		}
		return
	}
	apiclient.AddSecret(store.PostgresPassword(s.Postgres))
	if err := store.CheckPostgresURL(s.Postgres); err != nil {
		l.problem("state.postgres", "state.postgres is %v", err)
	}
}

func (l *loader) validateService(s *Service) {
	// required reports whether an empty key is a problem of its own: not
	// offline, and not already reported as an unset variable.
	required := func(key string) bool {
		if l.opts.Offline {
			return false
		}
		for _, p := range l.unset {
			if p.Key == key {
				return false
			}
		}
		return true
	}
	if s.BaseURL == "" {
		if required("service.base_url") {
			l.problem("service.base_url", "service.base_url is required, e.g. https://api.example.com")
		}
	} else if _, err := apiclient.ParseBaseURL(s.BaseURL); err != nil {
		l.problem("service.base_url", "%v", err)
	}
	if s.ClientID == "" && required("service.client_id") {
		l.problem("service.client_id", "service.client_id is required (write client_id: ${CALLRUN_CLIENT_ID} to keep it out of the file)")
	}
	if s.ClientSecret == "" && required("service.client_secret") {
		l.problem("service.client_secret", "service.client_secret is required (write client_secret: ${CALLRUN_CLIENT_SECRET} to keep it out of the file)")
	}
	if s.RedirectURI == "" {
		if required("service.redirect_uri") {
			l.problem("service.redirect_uri", "service.redirect_uri is required: the redirect URI registered with the OAuth client")
		}
	} else if !absoluteHTTP(s.RedirectURI) {
		l.problem("service.redirect_uri", "redirect_uri %q is not an absolute http(s) URL", s.RedirectURI)
	}
	if s.AuthorizeURL != "" && !absoluteHTTP(s.AuthorizeURL) {
		l.problem("service.authorize_url", "authorize_url %q is not an absolute http(s) URL", s.AuthorizeURL)
	}
}

// maxAgents is how many agents a campaign may declare: a dedupe key
// holds the agent's index from bit 50 up to bit 62 ([ContactReader.dedupeKey]).
const maxAgents = 1 << 13

func (l *loader) validateAgents(f *File) {
	if len(f.Agents) == 0 {
		l.problem("agents", "declare at least one agent under agents:")
	}
	if len(f.Agents) > maxAgents {
		l.problem("agents", "%d agents are declared; a campaign takes at most %d: split it into campaigns", len(f.Agents), maxAgents)
	}
	seen := map[string]int{}
	for i := range f.Agents {
		a := &f.Agents[i]
		key := fmt.Sprintf("agents[%d]", i)
		if strings.TrimSpace(a.Name) == "" {
			l.problem(key+".name", "every agent needs a name")
		} else if j, dup := seen[a.Name]; dup {
			l.problem(key+".name", "agent name %q is declared twice (also agents[%d]); names must be unique", a.Name, j)
		} else {
			seen[a.Name] = i
		}
		switch {
		case a.Prompt != "" && a.PromptFile != "":
			l.problem(key+".prompt_file", "agent %q has both prompt and prompt_file; keep one", a.Name)
		case a.PromptFile != "":
			b, err := readPrompt(f.Path(a.PromptFile))
			var big *tooLargeError
			if errors.As(err, &big) {
				l.problem(key+".prompt_file", "prompt file %s is %s, larger than %s, the most callrun sends as an agent's prompt (the service does not publish its own limit); is it the right file?", f.Path(a.PromptFile), big.size(), sizeText(MaxPromptSize))
			} else if err != nil && escapedPath(f.Path(a.PromptFile)) {
				l.problem(key+".prompt_file", "prompt file %q: no such file, and its path holds a tab, a line break or another character no one types in a path: %s", f.Path(a.PromptFile), backslashHint)
			} else if err != nil {
				l.problem(key+".prompt_file", "prompt file %s: %s%s", f.Path(a.PromptFile), readProblem(err), sameNameHint(f.Path(a.PromptFile), err))
			} else if b, line := promptText(b); line > 0 {
				l.problem(key+".prompt_file", "prompt file %s is not UTF-8 text (line %d; it was saved in another encoding, such as Windows' ANSI), and the service would get its accented letters as %q: save it as UTF-8 (Notepad: File > Save As, Encoding: UTF-8; TextEdit: File > Save, Plain Text Encoding: Unicode (UTF-8))", f.Path(a.PromptFile), line, "\ufffd")
			} else if strings.TrimSpace(string(b)) == "" {
				l.problem(key+".prompt_file", "prompt file %s is empty", f.Path(a.PromptFile))
			} else {
				a.Prompt = string(b)
			}
		case strings.TrimSpace(a.Prompt) == "":
			l.problem(key, "agent %q needs a prompt: (text) or prompt_file: (a path)", a.Name)
		case len(a.Prompt) > MaxPromptSize:
			l.problem(key+".prompt", "agent %q's prompt is %s, larger than %s, the most callrun sends as an agent's prompt (the service does not publish its own limit)", a.Name, exactSize(int64(len(a.Prompt))), sizeText(MaxPromptSize))
		}
		if strings.HasPrefix(strings.TrimSpace(a.Prompt), "TODO") {
			l.problem(key+".prompt", "agent %q's prompt is still the TODO placeholder from callrun init; write what the agent should say", a.Name)
		}
		if w := a.Webhook; w != nil {
			if !absoluteHTTP(w.URL) {
				l.problem(key+".webhook.url", "webhook url %q is not an absolute http(s) URL", w.URL)
			}
			if w.Method != "GET" && w.Method != "POST" {
				l.problem(key+".webhook.method", "webhook method %q; allowed: GET, POST", w.Method)
			}
		}
		if a.ReadyTimeout < 0 {
			l.problem(key+".ready_timeout", "ready_timeout must not be negative")
		}
	}
}

func (l *loader) validateSheets(f *File) {
	if len(f.Sheets) == 0 {
		l.problem("sheets", "declare at least one contact sheet under sheets:")
	}
	agents := map[string]bool{}
	var names []string
	for _, a := range f.Agents {
		if a.Name == "" {
			continue // a problem of its own
		}
		agents[a.Name] = true
		names = append(names, fmt.Sprintf("%q", a.Name))
	}
	declared := strings.Join(names, ", ")
	if len(names) == 0 {
		declared = "none has a name yet"
	}
	for i := range f.Sheets {
		s := &f.Sheets[i]
		key := fmt.Sprintf("sheets[%d]", i)
		if s.File == "" {
			l.problem(key+".file", "every sheet needs a file: (the CSV path)")
		} else {
			l.checkReadable(key+".file", f.Path(s.File), "sheet")
		}
		switch {
		case s.Agent == "":
			l.problem(key+".agent", "sheet %s needs agent: (one of the agents: %s)", s.File, declared)
		case !agents[s.Agent]:
			l.problem(key+".agent", "agent %q is not declared under agents: (declared: %s)", s.Agent, declared)
		}
		if _, ok := s.Fields["phone_number"]; !ok {
			l.problem(key+".fields", "map the phone number: fields: {phone_number: <CSV column>}")
		}
		seenCol := map[string]bool{}
		for _, pc := range s.PhoneColumns {
			fk := key + ".fields.phone_number"
			c := pc.Column
			switch {
			case strings.TrimSpace(c) == "":
				l.problem(fk, "phone_number lists an empty column name")
			case strings.HasPrefix(strings.ToUpper(strings.TrimSpace(c)), "TODO"):
				l.problem(fk, "phone_number is still TODO: callrun init found no column of phone numbers in %s; write the name of the column that holds them (or several: phone_number: [Mobile, Phone])", s.File)
			case seenCol[strings.ToLower(c)]:
				l.problem(fk, "phone_number lists the column %q twice", c)
			case pc.TypeColumn != "" && strings.EqualFold(strings.TrimSpace(pc.TypeColumn), strings.TrimSpace(c)):
				l.problem(fk, "phone_number's column %q is its own type_column: name the column that says each number's kind (Mobile, Work Fax)", c)
			}
			seenCol[strings.ToLower(c)] = true
		}
		// A name beyond the seven may be a field the account defines: it
		// is checked against the agent's call endpoint online.
		for field, column := range s.Fields {
			fk := key + ".fields." + field
			if !apiclient.IsFieldName(field) {
				l.problem(fk, "%q is not a form field name: a field name holds only letters, digits and _ (the call endpoint's own: %s)%s", field, strings.Join(FormFields, ", "), suggest(field, FormFields))
			}
			if strings.TrimSpace(column) == "" && field != "phone_number" {
				l.problem(fk, "field %s maps to an empty column name", field)
			}
		}
		for field, v := range s.Set {
			sk := key + ".set." + field
			switch {
			case !apiclient.IsFieldName(field):
				l.problem(sk, "%q is not a form field name: a field name holds only letters, digits and _ (the call endpoint's own: %s)%s", field, strings.Join(FormFields, ", "), suggest(field, FormFields))
			case field == "phone_number":
				l.problem(sk, "phone_number cannot be a constant; map it to a column under fields:")
			case s.Fields[field] != "":
				l.problem(sk, "%s is both mapped under fields: and set here; keep one", field)
			case field == "local_presence_number":
				yn, ok := YesNo(v)
				if !ok {
					l.problem(sk, "local_presence_number is %q; use Yes or No", v)
				}
				s.Set[field] = yn
			}
		}
		if err := sheet.CheckEncoding(s.Encoding); err != nil {
			l.problem(key+".encoding", "%v", err)
		}
		if _, written := l.lines[key+".hidden_rows"]; written && s.HiddenRows != HiddenSkip && s.HiddenRows != HiddenCall {
			l.problem(key+".hidden_rows", "hidden_rows is %q; allowed: skip (the rows the workbook hides are not called, and the report says so) or call (they are called like the rest)", s.HiddenRows)
		}
		if _, written := l.lines[key+".region"]; written {
			l.validateRegion(key+".region", s.Region)
		}
		if _, written := l.lines[key+".country_column"]; written && strings.TrimSpace(s.CountryColumn) == "" {
			l.problem(key+".country_column", "country_column is empty: name the column of each row's country, or remove the key")
		}
		l.validatePhoneRules(key+".", s.Countries, s.AllowNumberKinds)
		l.validateDoNotCall(key+".do_not_call", s.DoNotCall)
	}
}

// validateRegion checks a region: key. callrun init writes "TODO" there
// when the sheet does not say which country its numbers are in; that is
// refused until a person decides.
func (l *loader) validateRegion(key, region string) {
	switch {
	case strings.HasPrefix(strings.ToUpper(region), "TODO"):
		l.problem(key, "%s is still TODO: callrun init could not tell which country this sheet's numbers written without +country belong to. "+
			"Set it to the two-letter code of the country most of the contacts are in (the comment beside it says what init saw), "+
			"and if the sheet has a column of each row's country, name it in country_column: so that each row is read as its own country's", key)
	case !phone.ValidRegion(region):
		l.problem(key, "region %q is not a two-letter country code such as US, GB or DE%s", region, countryHint(region))
	}
}

// countryHint suggests the ISO code of a country written otherwise: "UK"
// (the United Kingdom's is GB), "USA", "Germany"; "" when s names none.
func countryHint(s string) string {
	if code, ok := phone.ParseCountry(s); ok && !strings.EqualFold(code, s) {
		return fmt.Sprintf(" (ISO 3166); did you mean %s?", code)
	}
	return ""
}

// validatePhoneRules checks countries: and allow_number_kinds: at prefix
// ("" or "sheets[1]."). A sheet that inherits the campaign's lists is not
// checked again: the lines it would name are the campaign's.
func (l *loader) validatePhoneRules(prefix string, countries, kinds []string) {
	if _, written := l.lines[prefix+"countries"]; written {
		if len(countries) == 0 {
			l.problem(prefix+"countries", "countries is empty: list the countries that may be called, such as [US, CA]")
		}
		for j, c := range countries {
			if !phone.ValidRegion(c) {
				l.problem(fmt.Sprintf("%scountries[%d]", prefix, j), "%q is not a two-letter country code such as US, GB or DE%s", c, countryHint(c))
			}
		}
	}
	if _, written := l.lines[prefix+"allow_number_kinds"]; written {
		for j, k := range kinds {
			if !phone.ValidKind(k) {
				l.problem(fmt.Sprintf("%sallow_number_kinds[%d]", prefix, j), "%q is not a kind of number; the kinds refused unless allowed are %s", k, strings.Join(phone.RefusedKinds(), ", "))
			}
		}
	}
}

var clock = regexp.MustCompile(`^([01]\d|2[0-3]):[0-5]\d$`)

func (l *loader) validateHours(h *Hours) {
	switch {
	case h.Timezone == "":
		l.problem("hours.timezone", "hours needs a timezone: an IANA name such as America/New_York, or contact")
	case summerOf[h.Timezone] != "":
		// See File.Window: read as tzdata's, the window runs an hour late
		// all summer where the clock meant keeps summer time.
		l.problem("hours.timezone", "timezone %q keeps no summer time; name the zone whose clock you mean: %s, or %s for its offset all year", h.Timezone, summerOf[h.Timezone], allYearOf[h.Timezone])
	case h.Timezone != "contact":
		if _, err := loadZone(h.Timezone); errors.Is(err, errLocalZone) {
			l.problem("hours.timezone", "timezone %v", err)
		} else if err != nil {
			l.problem("hours.timezone", "timezone %v (or contact, each contact's own)", err)
		}
	}
	if len(h.Days) == 0 {
		l.problem("hours.days", "hours needs days:, e.g. [mon, tue, wed, thu, fri]")
	}
	for i, d := range h.Days {
		if _, ok := weekdays[strings.ToLower(d)]; !ok {
			l.problem(fmt.Sprintf("hours.days[%d]", i), "day %q; use mon, tue, wed, thu, fri, sat, sun", d)
		}
	}
	okStart, okEnd := clock.MatchString(h.Start), clock.MatchString(h.End) || h.End == "24:00"
	if !okStart {
		l.problem("hours.start", "start %q is not a time of day like 09:00", h.Start)
	}
	if !okEnd {
		l.problem("hours.end", "end %q is not a time of day like 20:00", h.End)
	}
	if okStart && okEnd && h.Start >= h.End {
		l.problem("hours.end", "end %s is not after start %s", h.End, h.Start)
	}
}

var weekdays = map[string]time.Weekday{
	"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday,
	"thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday,
}

// readPrompt reads a prompt file: a regular file only (see
// [sheet.CheckRegular]) of at most [MaxPromptSize] bytes, never read past
// that.
// promptText returns a prompt file's text as UTF-8: a UTF-8 byte order
// mark dropped (Notepad writes one), UTF-16 with its mark (Notepad's
// "Unicode") decoded. A file in neither, not UTF-8, returns the line of
// its first byte that is not: sent as it is, JSON would carry each such
// byte to the service as U+FFFD, a prompt's "Jürgen" as "J\ufffdrgen".
func promptText(b []byte) ([]byte, int) {
	switch {
	case bytes.HasPrefix(b, []byte("\xef\xbb\xbf")):
		b = b[3:]
	case bytes.HasPrefix(b, []byte("\xff\xfe")), bytes.HasPrefix(b, []byte("\xfe\xff")):
		if d, err := xunicode.UTF16(xunicode.LittleEndian, xunicode.ExpectBOM).NewDecoder().Bytes(b); err == nil {
			b = d
		}
	}
	if line := notUTF8Line(b); line > 0 {
		return b, line
	}
	return b, 0
}

func readPrompt(path string) ([]byte, error) {
	if err := sheet.CheckRegular(path); err != nil {
		return nil, err
	}
	return readAtMost(path, MaxPromptSize)
}

func (l *loader) checkReadable(key, path, what string) {
	if err := sheet.CheckRegular(path); err != nil {
		if escapedPath(path) {
			l.problem(key, "%s %q: no such file, and its path holds a tab, a line break or another character no one types in a path: %s", what, path, backslashHint)
			return
		}
		l.problem(key, "%s %s: %s%s", what, path, readProblem(err), sameNameHint(path, err))
		return
	}
	fh, err := os.Open(path)
	if err != nil {
		l.problem(key, "%s %s: %s", what, path, readProblem(err))
		return
	}
	fh.Close()
}

// sameNameHint returns, for a path that does not exist, a note naming
// the file of its folder whose name differs from it only in case or in
// how its accents are encoded (NFC or NFD), or "". macOS and Windows find
// "contacts.CSV" for "Contacts.csv", and a name typed on one system for
// one a Mac wrote decomposed ("Ju" and a combining diaeresis); Linux, where
// cron and CI run the campaign, finds neither, and "no such file" beside
// a folder that shows the file tells nothing.
func sameNameHint(path string, err error) string {
	if !errors.Is(err, os.ErrNotExist) {
		return ""
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	d, err := os.Open(dir)
	if err != nil {
		return ""
	}
	defer d.Close()
	want := norm.NFC.String(base)
	// A folder of exports can be large: the first 10,000 names are enough.
	names, _ := d.Readdirnames(10_000)
	for _, n := range names {
		if n != base && strings.EqualFold(norm.NFC.String(n), want) {
			how, fix := "in case and in how its accents are encoded", "rename the file, typing its name anew"
			switch {
			case norm.NFC.String(n) == want:
				how = "in how its accents are encoded"
			case strings.EqualFold(n, base):
				how, fix = "in case", "write the name as the folder has it"
			}
			return fmt.Sprintf(" (its folder has %q, which differs from it %s: %s; Linux, where cron and CI run, tells the two apart)", n, how, fix)
		}
	}
	return ""
}

// escapedPath reports whether path holds what a double-quoted YAML value
// makes of a backslash escape: a control character ("C:\new\tab.csv" is
// read with a line break and a tab), or \N, \_, \L or \P's U+0085,
// U+00A0, U+2028 and U+2029.
func escapedPath(path string) bool {
	return strings.ContainsFunc(path, func(r rune) bool {
		return r < 0x20 || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029
	})
}

func absoluteHTTP(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Host != "" && (u.Scheme == "http" || u.Scheme == "https")
}

// YesNo reads a local_presence_number value: yes/no/true/false/1/0/y/n in
// any case. It returns the service contract's spelling, Yes or No.
func YesNo(v string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "yes", "y", "true", "1":
		return "Yes", true
	case "no", "n", "false", "0":
		return "No", true
	}
	return "", false
}
