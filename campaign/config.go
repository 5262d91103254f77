package campaign

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
	"gopkg.in/yaml.v3"
)

// File is a campaign file as the user wrote it (docs/campaign-file.md), after
// ${VAR} expansion. Paths in it are relative to the file; use [File.Path]
// to resolve them.
type File struct {
	Name     string         `yaml:"name"`
	Service  Service        `yaml:"service"`
	Agents   []AgentSpec    `yaml:"agents"`
	Sheets   []SheetSpec    `yaml:"sheets"`
	Suppress []SuppressFile `yaml:"suppress"`
	Region   string         `yaml:"region"`
	// Countries lists the countries (ISO 3166 alpha-2) whose numbers may be
	// called; empty means each sheet's own region. A sheet may override it.
	Countries []string `yaml:"countries"`
	// AllowNumberKinds allows kinds of number refused by default (see
	// [phone.RefusedKinds]). A sheet may override it.
	AllowNumberKinds []string `yaml:"allow_number_kinds"`
	Dedupe           string   `yaml:"dedupe"`
	Pace             Pace     `yaml:"pace"`
	Hours            *Hours   `yaml:"hours"`
	// UnsafeIgnoreCalledPersonHours turns off the called person's hours
	// (08:00-20:00 in every zone their number may ring in, and national
	// rules such as France's); every plan and run then warns.
	UnsafeIgnoreCalledPersonHours bool   `yaml:"unsafe_ignore_called_person_hours"`
	StateDir                      string `yaml:"state_dir"`
	// State, when set, keeps the journal and the run lock in a shared
	// store rather than in state_dir's files (which still get the
	// report files).
	State *StateStore `yaml:"state"`
	// Outcomes, when set, is where the service delivers what happened on
	// each call, which `callrun listen` receives.
	Outcomes *Outcomes `yaml:"outcomes"`
	// DoNotCall names the columns of the CRM's do-not-call flag; a sheet
	// may name its own.
	DoNotCall *DoNotCallColumns `yaml:"do_not_call"`
	// Consent maps the column of each row's consent; a sheet may
	// override it (see [File.SheetConsent]).
	Consent *Consent `yaml:"consent"`
	// Pressure tightens or loosens how often one number may be called
	// across every campaign on the store; nil is [store.DefaultPressure].
	Pressure *Pressure `yaml:"pressure"`
	// Retention is how long callrun keeps a person's data after their
	// last call, as written ("90d"); "": for ever. See
	// [File.RetentionLimit].
	Retention string `yaml:"retention"`

	// Shard is the part of the campaign this process works on; see
	// [File.SetShard].
	Shard Shard `yaml:"-"`

	// Source is the campaign file's path as given; Dir is its directory.
	Source string `yaml:"-"`
	Dir    string `yaml:"-"`
	lines  map[string]int
	// workbooks keeps the text of the sheets that are workbooks, read
	// once and read again from there ([sheet.Workbooks]).
	workbooks *sheet.Workbooks
	// workbookIssues are the problems of the sheets' workbooks that
	// CheckSheets found ([File.WorkbookProblems]).
	workbookIssues []Problem
}

// Service is the `service:` block: where the service is and who callrun is
// to it.
type Service struct {
	BaseURL      string `yaml:"base_url"`
	ClientID     string `yaml:"client_id"`
	ClientSecret string `yaml:"client_secret"`
	RedirectURI  string `yaml:"redirect_uri"`
	// AuthorizeURL is optional: the service contract does not show the authorize
	// endpoint.
	AuthorizeURL string `yaml:"authorize_url"`
	// Scope is sent on the authorize URL when set; the live service
	// requires one ("*" for full access), the service contract does not show scopes.
	Scope string `yaml:"scope"`
	// TokenFile overrides where the token is kept (default: under the
	// user's configuration directory, one file per service and client).
	TokenFile string `yaml:"token_file"`
}

// StateStore is the `state:` block: where the journal and the run lock
// live when every machine that runs the campaign must share them.
type StateStore struct {
	// Postgres is a PostgreSQL connection URL; keep it, with its password,
	// in an environment variable: postgres: ${CALLRUN_DATABASE_URL}.
	Postgres string `yaml:"postgres"`
}

// Outcomes is the `outcomes:` block: the public URL the service delivers
// its webhooks to (its path ends in a secret, since the service signs
// nothing), and what callrun reads of each delivery. Agents callrun
// creates get the URL as their webhook unless they name their own.
type Outcomes struct {
	URL string `yaml:"url"`
	// Fields are the delivery's fields the report shows as
	// outcome_detail; empty means [DefaultOutcomeFields].
	Fields []string `yaml:"fields"`
	// OptOut names the field and values that mean "do not call me".
	OptOut *OptOut `yaml:"opt_out"`
	// PhoneField names a delivery's field that holds the called person's
	// number, read before [NumberFields].
	PhoneField string `yaml:"phone_field"`
	// OwnNumbers are the numbers the service calls from for the account
	// (its caller ids, local-presence numbers among them): a delivery's
	// caller_number that is one of them is not the called person's.
	OwnNumbers []string `yaml:"own_numbers"`
	// SigningSecret, when set, is the secret key the service signs its
	// deliveries with (HMAC-SHA256): a delivery whose signature does not
	// match it is refused.
	SigningSecret string `yaml:"signing_secret"`
	// RequireSignature refuses a delivery that carries no signature.
	RequireSignature bool `yaml:"require_signature"`

	own []string // OwnNumbers in E.164, read by validateOutcomes
	// signingUnset: loaded offline, signing_secret named a variable that
	// is not set.
	signingUnset bool
}

// SigningUnset reports whether the campaign was loaded offline with
// outcomes.signing_secret naming a variable that is not set: plan
// --offline needs no secret, but listen must not serve unchecked what it
// was told to check.
func (o *Outcomes) SigningUnset() bool { return o != nil && o.signingUnset }

// ReadOptions are how listen reads the campaign's deliveries: their
// signatures checked with outcomes.signing_secret, when it is set, and
// outcomes.phone_field a delivery's own number.
func (o *Outcomes) ReadOptions() apiclient.ReadOptions {
	return apiclient.ReadOptions{SigningSecret: o.SigningSecret, RequireSignature: o.RequireSignature, PhoneField: o.PhoneField,
		KeepWhole: o.saysDoNotCall}
}

// saysDoNotCall reports whether delivery d says its person asked not to
// be called, as listen's intake reads it: outcomes.opt_out, a field that
// says do not call ([FlagsDoNotCall]), the person's words
// ([SaysDoNotCall]) or a sign in one of its arrays
// ([Outcomes.ArraySaysDoNotCall]). An object that wraps an array of
// deliveries and says so itself is read whole
// (apiclient.ReadOptions.KeepWhole), its sign kept.
func (o *Outcomes) saysDoNotCall(d apiclient.Delivery) bool {
	if o.OptsOut(d) {
		return true
	}
	if f, _ := FlagsDoNotCall(d); f != "" {
		return true
	}
	if SaysDoNotCall(d) != "" || TextSaysDoNotCall(d) != "" || ToolCallSaysDoNotCall(d) != "" {
		return true
	}
	at, _ := o.ArraySaysDoNotCall(d)
	return at != ""
}

// DefaultOptOutValues are the values of a delivery's disposition that
// ask not to be called again when outcomes: names no opt_out.
var DefaultOptOutValues = []string{"do_not_call", "dnc", "opted_out", "opt_out", "do_not_contact"}

// OptOut is `outcomes.opt_out`: a delivery whose Field holds one of
// Values is a person asking not to be called again. An outcomes: block
// without one reads the disposition field for [DefaultOptOutValues].
type OptOut struct {
	Field  string   `yaml:"field"`
	Values []string `yaml:"values"`
}

// Pressure is the `pressure:` block: at most PerDay call starts to one
// number in any 24 hours and Per14Days in any 14 days, counted over
// every campaign on the store; Preset "reg_f" adds Reg F's 7 in 7 days,
// and no call within 7 days after a conversation. Off turns contact pressure off, and every plan and run warns.
type Pressure struct {
	PerDay    int    `yaml:"per_day"`
	Per14Days int    `yaml:"per_14_days"`
	Preset    string `yaml:"preset"`
	Off       bool   `yaml:"off"`
}

// MinRetention is the shortest retention: limit. Contact pressure looks
// back 30 days, and a month-long campaign's reports stay whole while it
// runs.
const MinRetention = 31 * 24 * time.Hour

// RetentionLimit returns how long the campaign keeps a person's data
// after their last call, 0 when it keeps it for ever.
func (f *File) RetentionLimit() time.Duration {
	d, _ := ParseAge(f.Retention)
	return d
}

// ParseAge reads an age such as 90d, 12w or 2160h (a Go duration); ""
// is 0. For retention: and `callrun erase --older-than`.
func ParseAge(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	for unit, d := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if n, ok := strings.CutSuffix(s, unit); ok {
			v, err := strconv.Atoi(n)
			if err != nil || v <= 0 || v > int(math.MaxInt64/d) {
				break
			}
			return time.Duration(v) * d, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q is not an age such as 90d, 12w or 2160h", s)
	}
	return d, nil
}

// PressureLimits returns the campaign's contact pressure, nil when it is
// off.
func (f *File) PressureLimits() []store.PressureLimit {
	p := f.Pressure
	if p == nil {
		return store.DefaultPressure
	}
	if p.Off {
		return nil
	}
	day, fortnight := store.DefaultPressure[0], store.DefaultPressure[1]
	if p.PerDay > 0 {
		day.Max = p.PerDay
	}
	if p.Per14Days > 0 {
		fortnight.Max = p.Per14Days
	}
	limits := []store.PressureLimit{day, fortnight}
	if p.Preset == PresetRegF {
		limits = append(limits, store.PressureLimit{Within: 7 * 24 * time.Hour, Max: 7})
	}
	return limits
}

// PressureAfterConversation returns how long after a conversation with
// a number (a call the outcomes say was answered) the campaign does not
// call it: Reg F's 7 days with `preset: reg_f`, else 0, and conversations
// hold nothing.
func (f *File) PressureAfterConversation() time.Duration {
	if p := f.Pressure; p != nil && !p.Off && p.Preset == PresetRegF {
		return store.RegFAfterConversation
	}
	return 0
}

// RegFWarning is what plan and run say of a campaign with Reg F's preset
// and no outcomes: block, whose own answered calls no listen records; ""
// for any other campaign.
func (f *File) RegFWarning() string {
	if f.PressureAfterConversation() == 0 || f.Outcomes != nil {
		return ""
	}
	return "pressure: {preset: reg_f} holds a number 7 days after a conversation, but this campaign has no outcomes: block, so callrun listen records no conversation of its own calls; only those of campaigns on this store whose listen runs hold its numbers"
}

// PresetRegF is `pressure.preset: reg_f`: US debt collection's 7 calls in
// 7 days, and no call within 7 days after a conversation (Reg F, 12 CFR
// 1006.14(b)(2)).
const PresetRegF = "reg_f"

// DefaultOutcomeFields are the delivery fields outcome_detail shows when
// `outcomes.fields` names none: whichever of them a delivery has.
var DefaultOutcomeFields = []string{"status", "call_status", "disposition", "ended_reason", "endedReason", "answered_by", "duration", "summary"}

// MinHookSecret is the shortest secret `outcomes.url`'s path may end in.
const MinHookSecret = 16

// Path returns the path of the outcomes URL, the one `callrun listen`
// serves for this campaign.
func (o *Outcomes) Path() string {
	u, err := url.Parse(o.URL)
	if err != nil {
		return ""
	}
	return u.Path
}

// AgentPathSuffix is the last segment callrun adds to the outcomes URL's
// path for the agents it creates: a delivery to that path is an agent
// webhook's, which the service sends when the agent completes a call.
const AgentPathSuffix = "agent"

// AgentURL returns the outcomes URL with [AgentPathSuffix] at the end of
// its path: the weebhook_endpoint of the agents callrun creates.
func (o *Outcomes) AgentURL() string {
	u, err := url.Parse(o.URL)
	if err != nil {
		return o.URL
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/" + AgentPathSuffix
	if u.RawPath != "" {
		u.RawPath = strings.TrimRight(u.RawPath, "/") + "/" + AgentPathSuffix
	}
	return u.String()
}

// Secret returns the last segment of the URL's path: the secret that
// keeps forged deliveries out.
func (o *Outcomes) Secret() string {
	p := strings.TrimRight(o.Path(), "/")
	return p[strings.LastIndex(p, "/")+1:]
}

// DetailFields returns the fields outcome_detail shows.
func (o *Outcomes) DetailFields() []string {
	if o == nil || len(o.Fields) == 0 {
		return DefaultOutcomeFields
	}
	return o.Fields
}

// SharedState reports whether the campaign keeps its journal in
// PostgreSQL rather than in state_dir's files.
func (f *File) SharedState() bool { return f.State != nil && f.State.Postgres != "" }

// AgentSpec declares one agent. Agents are matched to the service's by
// exact name and created when missing.
type AgentSpec struct {
	Name       string   `yaml:"name"`
	Prompt     string   `yaml:"prompt"`
	PromptFile string   `yaml:"prompt_file"`
	Webhook    *Webhook `yaml:"webhook"`
	// ReadyTimeout bounds how long a run waits for a pending agent to
	// become active; default 10m.
	ReadyTimeout time.Duration `yaml:"ready_timeout"`
}

// Webhook is an agent's completion callback.
type Webhook struct {
	URL    string `yaml:"url"`
	Method string `yaml:"method"`
}

// SheetSpec declares one contact sheet and how its columns map to the call
// endpoint's form fields.
type SheetSpec struct {
	File  string `yaml:"file"`
	Agent string `yaml:"agent"`
	// Fields maps form field names to CSV column names. phone_number may
	// list several columns ([Mobile, Phone]), each of which may name the
	// column of its numbers' kinds ({column: Phone 1 - Value, type_column:
	// Phone 1 - Type}): PhoneColumns holds them, and Fields the first
	// column.
	Fields       map[string]string `yaml:"fields"`
	PhoneColumns []PhoneColumn     `yaml:"-"`
	// Set holds constant form field values for every row.
	Set map[string]string `yaml:"set"`
	// Region applies to numbers written without +country; default the
	// campaign's region.
	Region string `yaml:"region"`
	// TimezoneColumn names a column holding each contact's IANA time zone,
	// used with `hours: {timezone: contact}`.
	TimezoneColumn string `yaml:"timezone_column"`
	// CountryColumn names a column holding each row's country (a code such
	// as DE or DEU, or a name such as Germany or Allemagne). Where a row
	// has one, its national number is read as that country's, and a number
	// of another country is invalid.
	CountryColumn string `yaml:"country_column"`
	// NameColumn names a column of full names ("Ada Lovelace"), split into
	// first_name and last_name where those are not mapped.
	NameColumn string `yaml:"name_column"`
	// Countries and AllowNumberKinds override the campaign's for this sheet.
	Countries        []string `yaml:"countries"`
	AllowNumberKinds []string `yaml:"allow_number_kinds"`
	// Encoding names the code page of a sheet that is not UTF-8
	// ("windows-1252"); Worksheet the worksheet of an .xlsx workbook
	// (default the first).
	Encoding  string `yaml:"encoding"`
	Worksheet string `yaml:"worksheet"`
	// HiddenRows says what to do with the rows an .xlsx workbook hides
	// (by hand, by a filter, in a collapsed outline): HiddenSkip (not
	// called, reported as hidden) or HiddenCall (called like the rest).
	// Unset, a workbook that hides a row stops plan and run before any
	// call: whoever hid it may have meant to leave the person out.
	HiddenRows string `yaml:"hidden_rows"`
	// DoNotCall replaces the campaign's do_not_call: for this sheet.
	DoNotCall *DoNotCallColumns `yaml:"do_not_call"`
	// Consent overrides the campaign's consent: for this sheet.
	Consent *Consent `yaml:"consent"`
}

// SheetOptions returns how sheet i is read: its encoding and worksheet,
// and the campaign's workbooks read so far.
func (f *File) SheetOptions(i int) sheet.Options {
	return sheet.Options{Encoding: f.Sheets[i].Encoding, Worksheet: f.Sheets[i].Worksheet, Workbooks: f.workbooks}
}

// The values of a sheet's hidden_rows: ([SheetSpec.HiddenRows]).
const (
	HiddenSkip = "skip"
	HiddenCall = "call"
)

// SuppressFile is one entry of suppress:, a file of numbers never to
// call: written as its path alone (dnc.csv), or with the column that holds
// the numbers ({file: crm-dnc.csv, column: Phone Number}), or the columns
// ({file: sf-dnc.csv, columns: [Phone, Mobile]}). Without them, every
// column of numbers is read, found by its values and its header. A file
// that is not UTF-8 names its code page ({file: dnc.csv, encoding:
// windows-1252}); a tab of a workbook, its worksheet ({file: leads.xlsx,
// worksheet: "Do Not Call"}).
type SuppressFile struct {
	File    string   `yaml:"file"`
	Column  string   `yaml:"column"`
	Columns []string `yaml:"columns"`
	// Encoding names the file's code page when it is not UTF-8, as a
	// sheet's does.
	Encoding string `yaml:"encoding"`
	// Worksheet names the tab of an .xlsx workbook to read; "" reads the
	// first.
	Worksheet string `yaml:"worksheet"`
}

// options returns how the suppression file is read.
func (s SuppressFile) options() sheet.Options {
	return sheet.Options{Encoding: s.Encoding, Worksheet: s.Worksheet, What: "suppression file", Holds: "numbers"}
}

// Names returns the columns the entry names: column, or columns; none
// when the columns are to be found.
func (s SuppressFile) Names() []string {
	if s.Column != "" {
		return []string{s.Column}
	}
	return s.Columns
}

// UnmarshalYAML reads either form of a suppress: entry.
func (s *SuppressFile) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s.File = n.Value
		return nil
	}
	type plain SuppressFile
	return n.Decode((*plain)(s))
}

// PhoneColumn is one entry of a sheet's phone_number: a column of phone
// numbers, and the column beside it that says, row by row, what kind of
// line each number is ("Phone 1 - Type": Mobile, Work Fax), if any. A
// number whose type cell names a line no person answers, or another
// person's (a fax, a pager, an assistant), is not dialled; the typed
// numbers of a row are tried mobile first, then the person's own lines,
// then work.
type PhoneColumn struct {
	Column     string `yaml:"column"`
	TypeColumn string `yaml:"type_column"`
}

// UnmarshalYAML reads an entry written as a column's name alone, or as
// {column: ..., type_column: ...}.
func (p *PhoneColumn) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		p.Column = n.Value
		return nil
	}
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if k := n.Content[i].Value; k != "column" && k != "type_column" {
				return fmt.Errorf("line %d: phone_number's entry has a key %q: write {column: <numbers>, type_column: <their kinds>}", n.Content[i].Line, k)
			}
		}
	}
	type plain PhoneColumn
	return n.Decode((*plain)(p))
}

// UnmarshalYAML reads a sheet, where fields.phone_number may be a list of
// columns as well as one, and an entry may name its type_column.
func (s *SheetSpec) UnmarshalYAML(n *yaml.Node) error {
	type plain SheetSpec
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			fm := n.Content[i+1]
			if n.Content[i].Value != "fields" || fm.Kind != yaml.MappingNode {
				continue
			}
			for j := 0; j+1 < len(fm.Content); j += 2 {
				v := fm.Content[j+1]
				if fm.Content[j].Value != "phone_number" || (v.Kind != yaml.SequenceNode && v.Kind != yaml.MappingNode) {
					continue
				}
				var cols []PhoneColumn
				if v.Kind == yaml.MappingNode { // one entry: {column: ..., type_column: ...}
					cols = make([]PhoneColumn, 1)
					if err := v.Decode(&cols[0]); err != nil {
						return err
					}
				} else if err := v.Decode(&cols); err != nil {
					return err
				}
				first := ""
				if len(cols) > 0 {
					first = cols[0].Column
				}
				s.PhoneColumns = cols
				if len(cols) == 0 {
					s.PhoneColumns = []PhoneColumn{{}} // refused by the checks, with its line
				}
				fm.Content[j+1] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: first, Line: v.Line, Column: v.Column}
			}
		}
	}
	return n.Decode((*plain)(s))
}

// Pace sets how fast calls start, and how long the service may ask a run
// to wait.
type Pace struct {
	PerSecond   float64 `yaml:"per_second"`
	Burst       int     `yaml:"burst"`
	Concurrency int     `yaml:"concurrency"`
	// MaxActiveCalls, when above 0, keeps at most this many calls in
	// progress, for a service that caps them per account: a call counts
	// from its start for CallLength, which must then be set.
	MaxActiveCalls int           `yaml:"max_active_calls"`
	CallLength     time.Duration `yaml:"call_length"`
	// MaxRetryAfter is the longest Retry-After a run waits out; a service
	// that asks for longer ends the run (exit 75).
	MaxRetryAfter time.Duration `yaml:"max_retry_after"`
}

// Hours is the calling window.
type Hours struct {
	// Timezone is an IANA zone name, or "contact" for each contact's own.
	Timezone string   `yaml:"timezone"`
	Days     []string `yaml:"days"`
	Start    string   `yaml:"start"`
	End      string   `yaml:"end"`
}

// FormFields are the call endpoint's form fields that the service contract names.
var FormFields = []string{"phone_number", "email", "first_name", "last_name", "ghl_contact_id", "override_agent_id", "local_presence_number"}

// Defaults applied by [Load] where the file says nothing.
const (
	DefaultRegion       = "US"
	DefaultDedupe       = "campaign"
	DefaultPerSecond    = 1.0
	DefaultBurst        = 1
	DefaultConcurrency  = 4
	DefaultReadyTimeout = 10 * time.Minute
	// DefaultMaxRetryAfter is pace.max_retry_after when the file says
	// nothing.
	DefaultMaxRetryAfter = 5 * time.Minute
)

// Problem is one thing wrong with a campaign file.
type Problem struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Key  string `json:"key,omitempty"`
	Msg  string `json:"message"`
}

func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, " line %d", p.Line)
	}
	if p.Key != "" {
		fmt.Fprintf(&b, ", %s", p.Key)
	}
	b.WriteString(": ")
	b.WriteString(p.Msg)
	return b.String()
}

// FileError is the error of a campaign file that cannot be used. It lists
// every problem found, not just the first.
type FileError struct {
	Problems []Problem
}

func (e *FileError) Error() string {
	if len(e.Problems) == 1 {
		return e.Problems[0].String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d problems in the campaign file:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// LoadOptions changes what [Load] insists on.
type LoadOptions struct {
	// Offline: the service block is not needed (plan --offline, CI), so
	// unset ${VAR}s and missing values in it are not problems.
	Offline bool
	// ServiceOnly: only the service block is checked (auth and agent
	// commands); unknown keys anywhere are still problems.
	ServiceOnly bool
	// Getenv looks up variables; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
}

// Load reads, expands, checks and completes a campaign file. Any problem
// is reported in a *[FileError] that names the file, the line and the key.
func Load(path string, opts LoadOptions) (*File, error) {
	// Opening a named pipe blocks until something writes to it, and a
	// device such as /dev/zero never ends: neither is opened.
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		what := "is not a regular file"
		switch m := st.Mode(); {
		case m.IsDir():
			what = "is a directory"
		case m&fs.ModeNamedPipe != 0:
			what = "is a named pipe (FIFO), not a regular file"
		case m&fs.ModeDevice != 0:
			what = "is a device, not a regular file"
		}
		return nil, &FileError{[]Problem{{File: path, Msg: what + "; give the campaign's .yaml file"}}}
	}
	data, err := readAtMost(path, MaxCampaignFileSize)
	var big *tooLargeError
	switch {
	case errors.As(err, &big):
		return nil, &FileError{[]Problem{{File: path, Msg: fmt.Sprintf("the campaign file is %s, larger than %s, the most callrun reads of one: a campaign file declares agents, sheets and settings; contacts belong in CSV sheets (sheets:), a long prompt in prompt_file:, numbers not to call in suppress: files", big.size(), sizeText(MaxCampaignFileSize))}}}
	case err != nil:
		return nil, &FileError{[]Problem{{File: path, Msg: readProblem(err)}}}
	}
	return Parse(path, data, opts)
}

// MaxCampaignFileSize is the largest campaign file [Load] reads. A
// campaign file declares agents, sheets and settings; the contacts are in
// the sheets. The bound keeps a wrong path (a sheet or a dump given as the
// campaign file) from filling memory.
const MaxCampaignFileSize = 4 << 20

// MaxPromptSize is the largest prompt, given as prompt: or read from
// prompt_file:, that [Load] accepts for an agent, which callrun sends to
// the service when it creates the agent. The service does not publish a
// limit of its own; this one is far above any prompt a person writes, and
// well below what a wrong file (a sheet, a log) given as prompt_file is.
const MaxPromptSize = 256 << 10

// tooLargeError is what readAtMost returns for a file over its limit.
type tooLargeError struct {
	bytes int64 // the file's size, or -1 when only "more than the limit" is known
	limit int64
}

func (e *tooLargeError) Error() string { return "larger than " + sizeText(e.limit) }

// size is the file's size for people.
func (e *tooLargeError) size() string {
	if e.bytes < 0 {
		return "more than " + sizeText(e.limit)
	}
	return exactSize(e.bytes)
}

// exactSize is sizeText with the exact count of bytes after a rounded
// size: "4.0 MiB (4194305 bytes)".
func exactSize(n int64) string {
	if n < 1<<10 {
		return sizeText(n)
	}
	return fmt.Sprintf("%s (%d bytes)", sizeText(n), n)
}

// readAtMost reads the file at path if it holds at most limit bytes, in
// memory bounded by the limit: a file whose size says it is larger is not
// read at all, and no file is read past limit+1 bytes (one that grows, or
// is not a regular file). A larger file is a *tooLargeError.
func readAtMost(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	room := limit + 1 // a byte past the limit tells a larger file
	if st, err := fh.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > limit {
			return nil, &tooLargeError{bytes: st.Size(), limit: limit}
		}
		room = st.Size() + 1
	}
	// With bytes.MinRead to spare, ReadFrom reads all into one allocation.
	buf := bytes.NewBuffer(make([]byte, 0, room+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(fh, limit+1)); err != nil {
		return nil, err
	}
	if int64(buf.Len()) > limit {
		return nil, &tooLargeError{bytes: -1, limit: limit}
	}
	return buf.Bytes(), nil
}

// sizeText writes a size in bytes for people: "4 MiB", "4.5 MiB",
// "256 KiB", "300.2 KiB", "512 bytes".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func readProblem(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such file; check the path"
	case errors.Is(err, os.ErrPermission):
		return "permission denied; check the file's permissions"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// Parse is [Load] over bytes already read; path names the file in
// problems and anchors relative paths.
func Parse(path string, data []byte, opts LoadOptions) (*File, error) {
	if opts.Getenv == nil {
		opts.Getenv = os.LookupEnv
	}
	l := &loader{path: path, opts: opts, lines: map[string]int{}, values: map[string]string{}}
	f := l.parse(data)
	if f == nil {
		sort.SliceStable(l.problems, func(i, j int) bool { return l.problems[i].Line < l.problems[j].Line })
		return nil, &FileError{append(l.problems, l.unset...)}
	}
	f.Source = path
	f.Dir = filepath.Dir(path)
	f.lines = l.lines
	f.workbooks = &sheet.Workbooks{}
	f.applyDefaults()
	if o := f.Outcomes; o != nil && len(o.Secret()) >= MinHookSecret {
		// Before any check: the agent commands print webhooks too.
		apiclient.AddSecret(o.Secret())
	}
	if opts.ServiceOnly {
		l.validateService(&f.Service)
	} else {
		l.validate(f)
	}
	l.problems = append(l.problems, l.unset...)
	if len(l.problems) > 0 {
		sort.SliceStable(l.problems, func(i, j int) bool { return l.problems[i].Line < l.problems[j].Line })
		return nil, &FileError{l.problems}
	}
	return f, nil
}

type loader struct {
	path   string
	opts   LoadOptions
	lines  map[string]int    // key path -> line
	values map[string]string // key path -> a scalar's text, expanded
	// mappings: key path -> the keys of the mapping it takes, for a key
	// given text where it takes a mapping (consent: Consent Date).
	mappings map[string][]string
	problems []Problem
	// unset holds unset-variable problems apart, so that they do not stop
	// the checks that follow: every problem is reported at once.
	unset []Problem
	// secretUnset: offline, outcomes.url named a variable that is not set,
	// so its secret is not there to check.
	secretUnset bool
	// signingUnset: offline, outcomes.signing_secret named a variable
	// that is not set.
	signingUnset bool
	// nodes counts the YAML nodes walk visits, aliases' copies counted
	// each time: past maxCampaignNodes the file is refused.
	nodes int
}

// maxCampaignNodes is how many YAML values a campaign file may hold once
// its aliases are expanded: far more than any campaign writes (a
// thousand sheets of fifty keys are 50,000), far fewer than a file of
// aliases of aliases makes of a few kilobytes, which would take seconds
// and gigabytes to load.
const maxCampaignNodes = 200_000

// problem records a problem of key. Its line is the key's, or, for a key
// the file does not hold (a name left out), the line of the nearest key
// above it that it does ("agents[0]" for "agents[0].name").
func (l *loader) problem(key, format string, args ...any) {
	line := 0
	for k := key; k != "" && line == 0; {
		line = l.lines[k]
		if i := strings.LastIndexAny(k, ".["); i > 0 {
			k = k[:i]
		} else {
			k = ""
		}
	}
	l.problems = append(l.problems, Problem{File: l.path, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
}

func (l *loader) parse(data []byte) *File {
	if line := notUTF8Line(data); line > 0 {
		// yaml.v3 says only "invalid leading UTF-8 octet", no line, no way out.
		l.problems = append(l.problems, Problem{File: l.path, Line: line, Msg: "the file is not UTF-8 text (it was saved in another encoding, such as Windows' ANSI): save it as UTF-8 (Notepad: File > Save As, Encoding: UTF-8; TextEdit: File > Save, Plain Text Encoding: Unicode (UTF-8))"})
		return nil
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			l.problems = append(l.problems, Problem{File: l.path, Msg: "the file is empty; see examples/ for a campaign file to start from"})
		} else {
			p := l.yamlProblem(err)
			if line := syntaxLine(data, p.Line, err); line != p.Line {
				p.Line, p.Key = line, ""
				if indentation(err) {
					p.Msg += "; check this line's indentation against the lines above"
				}
			}
			if badEscape(err) {
				p.Msg += "; " + backslashHint
			}
			if strings.Contains(err.Error(), "found a tab character") {
				// Notepad and TextEdit put a tab where the Tab key is pressed.
				p.Msg += "; YAML indents with spaces only: replace the tab at the start of the line with spaces, as many as the lines around it have"
			}
			if unquotedRef(data, p.Line) {
				p.Msg += `; inside { } a ${VAR} must be quoted: {postgres: "${CALLRUN_DATABASE_URL}"}`
			}
			l.problems = append(l.problems, p)
		}
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		l.problems = append(l.problems, Problem{File: l.path, Line: 1, Msg: "a campaign file is a YAML mapping of keys such as name:, service:, agents:, sheets:"})
		return nil
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		l.problems = append(l.problems, Problem{File: l.path, Line: extra.Line, Msg: "the file holds more than one YAML document (a second ---); keep one campaign per file"})
	}
	root := doc.Content[0]
	l.walk(root, reflect.TypeOf(File{}), "")
	if l.nodes > maxCampaignNodes {
		l.problems = append(l.problems, Problem{File: l.path, Msg: fmt.Sprintf("the file holds more than %d values once its YAML aliases (*name) are expanded: write the sheets and lists out, or use fewer aliases of aliases", maxCampaignNodes)})
		return nil
	}
	// Unknown keys were reported and dropped by walk; decoding goes on so
	// that type errors and the value checks are reported with them.
	var f File
	if err := root.Decode(&f); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			for _, e := range te.Errors {
				l.problems = append(l.problems, l.yamlProblem(errors.New(e)))
			}
		} else {
			l.problems = append(l.problems, l.yamlProblem(err))
		}
		return nil // a half-decoded file would give misleading value checks
	}
	return &f
}

// syntaxLine finds the line of a YAML syntax error. yaml.v3 reports the
// line where the enclosing block starts (a sheet's "- file:", say), not the
// line that broke it (a key indented one space short, lines further on):
// the broken line is the first one from there on whose prefix of the file
// fails with the same message. A prefix that fails otherwise (cut inside a
// quoted or flow value) is passed over; with none found, line stands.
func syntaxLine(data []byte, line int, err error) int {
	want := yamlLine.ReplaceAllString(err.Error(), "")
	lines := bytes.SplitAfter(data, []byte("\n"))
	if line < 1 || len(lines) > 5000 {
		return line
	}
	for n := line; n <= len(lines); n++ {
		var node yaml.Node
		perr := yaml.Unmarshal(bytes.Join(lines[:n], nil), &node)
		if perr != nil && yamlLine.ReplaceAllString(perr.Error(), "") == want {
			return n
		}
	}
	return line
}

// indentation reports whether a YAML syntax error is one that a line
// indented too far or not far enough gives in block style.
// notUTF8Line returns the line of the first byte of data that is not
// UTF-8, or 0: none, or a file that starts with a UTF-16 byte order mark,
// which yaml.v3 decodes.
func notUTF8Line(data []byte) int {
	if bytes.HasPrefix(data, []byte("\xff\xfe")) || bytes.HasPrefix(data, []byte("\xfe\xff")) || utf8.Valid(data) {
		return 0
	}
	for i := 0; i < len(data); {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n == 1 {
			return bytes.Count(data[:i], []byte("\n")) + 1
		}
		i += n
	}
	return 0
}

// badEscape reports whether err is YAML's refusal of a backslash escape
// in a double-quoted value: what a Windows path written in double quotes
// ("C:\Users\me\leads.csv") gets, \U starting an escape of eight hex digits.
func badEscape(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "found unknown escape character") || strings.Contains(msg, "did not find expected hexdecimal number") ||
		strings.Contains(msg, "found invalid Unicode character escape code")
}

// backslashHint says what to do with a Windows path whose backslashes a
// double-quoted YAML value read as escapes.
const backslashHint = `inside double quotes a backslash starts an escape (\U, \n, \t), so a Windows path cannot be written there as it is: write it in single quotes, 'C:\Users\me\leads.csv', with no quotes, or with forward slashes, "C:/Users/me/leads.csv"`

func indentation(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "did not find expected '-' indicator") || strings.Contains(msg, "did not find expected key") ||
		strings.Contains(msg, "mapping values are not allowed in this context")
}

var (
	yamlLine   = regexp.MustCompile(`line (\d+): `)
	yamlQuoted = regexp.MustCompile("`([^`]*)`")
)

// unquotedRef reports whether line n (from 1) of data holds an unquoted
// ${VAR} inside a flow mapping, which YAML reads as a nested mapping.
func unquotedRef(data []byte, n int) bool {
	lines := bytes.Split(data, []byte("\n"))
	if n < 1 || n > len(lines) {
		return false
	}
	line := lines[n-1]
	i := bytes.Index(line, []byte("${"))
	return i > 0 && bytes.IndexByte(line[:i], '{') >= 0 && !bytes.ContainsAny(line[i-1:i], `"'`)
}

// yamlProblem turns a yaml.v3 error into a Problem with its line and, when
// a key stands on that line, the key, in words a person reads.
func (l *loader) yamlProblem(err error) Problem {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n  ")
	p := Problem{File: l.path}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		fmt.Sscan(m[1], &p.Line)
		msg = strings.Replace(msg, m[0], "", 1)
	}
	// The key whose value the message quotes, on that line; else the most
	// specific key on the line. A flow mapping ({per_second: fast, burst:
	// 1}) puts several keys on one line.
	var quoted string
	if m := yamlQuoted.FindStringSubmatch(msg); m != nil {
		quoted = m[1]
	}
	for key, line := range l.lines {
		if line != p.Line {
			continue
		}
		if v, ok := l.values[key]; ok && quoted != "" && v == quoted {
			p.Key = key
			break
		}
		if len(key) > len(p.Key) {
			p.Key = key
		}
	}
	if keys := l.mappings[p.Key]; len(keys) > 0 && quoted != "" {
		// yaml.v3 names the Go type it reads into: say the keys instead.
		name := p.Key[strings.LastIndex(p.Key, ".")+1:]
		p.Msg = fmt.Sprintf("%s takes keys, not the text `%s`: write %s: {%s: ...} (its keys: %s)", name, quoted, name, keys[0], strings.Join(keys, ", "))
		return p
	}
	msg = yamlWords.Replace(msg)
	msg = strings.ReplaceAll(msg, "campaign.", "")
	// A list of the campaign's own entries (suppress: dnc.csv for
	// suppress: [dnc.csv]) is named by its Go type, []SuppressFile, which
	// tells a person nothing.
	msg = goListType.ReplaceAllString(msg, "as a list such as [a, b]")
	if (strings.Contains(msg, "as a number") || strings.Contains(msg, "as a whole number")) && strings.HasPrefix(msg, "cannot read text") {
		// per_second: "2": a number in quotes is text to YAML, and
		// "cannot read text `2` as a number" reads as nonsense.
		if _, err := strconv.ParseFloat(quoted, 64); err == nil && quoted != "" {
			msg += "; a number in quotes is text: write it without the quotes"
		}
	}
	p.Msg = msg
	return p
}

// yamlUnmarshaler is the interface of a type that reads its YAML itself
// (a suppress: entry may be a file name alone).
var yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// listForm is a block of the campaign file that may be written as the
// list of one of its keys (do_not_call: [...] for do_not_call: {columns:
// [...]}); listField names that key's field, whose type the list's
// entries are checked as.
type listForm interface{ listField() string }

var listFormType = reflect.TypeFor[listForm]()

var goListType = regexp.MustCompile(`into \[\][A-Za-z0-9_.]+`)

var yamlWords = strings.NewReplacer(
	"cannot unmarshal", "cannot read",
	"!!str", "text", "!!int", "a number", "!!float", "a number", "!!bool", "true/false",
	"!!seq", "a list", "!!map", "a mapping",
	"into float64", "as a number", "into int", "as a whole number", "into time.Duration", "as a duration such as 10m",
	"into []string", "as a list such as [a, b]", "into map[string]string", "as a mapping such as {key: value}",
	"into string", "as text", "into bool", "as true or false",
)

// walk checks the keys of node against the yaml tags of t, records the line
// of every key path, and expands ${VAR} in string scalars.
func (l *loader) walk(node *yaml.Node, t reflect.Type, path string) {
	if l.nodes++; l.nodes > maxCampaignNodes {
		return // refused by parse, before anything is decoded
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if node.Kind == yaml.AliasNode {
		// The alias becomes a copy of its anchor's node, so that the keys
		// walk drops from it here (unknown where the alias stands) are
		// not dropped from the anchor's place too.
		*node = *copyNode(node.Alias)
	}
	if path != "" {
		if _, seen := l.lines[path]; !seen {
			l.lines[path] = node.Line
		}
	}
	switch {
	case node.Kind == yaml.ScalarNode:
		l.expand(node, path)
		l.values[path] = node.Value
		reads := reflect.PointerTo(t).Implements(yamlUnmarshaler) && !reflect.PointerTo(t).Implements(listFormType)
		if t.Kind() == reflect.Struct && !reads && node.Tag != "!!null" {
			if l.mappings == nil {
				l.mappings = map[string][]string{}
			}
			for i := range t.NumField() {
				if tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); tag != "" && tag != "-" {
					l.mappings[path] = append(l.mappings[path], tag)
				}
			}
		}
	case t.Kind() == reflect.Struct && node.Kind == yaml.MappingNode:
		fields := map[string]reflect.Type{}
		var names []string
		for i := range t.NumField() {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if tag != "" && tag != "-" {
				fields[tag] = t.Field(i).Type
				names = append(names, tag)
			}
		}
		seen := map[string]bool{}
		kept := node.Content[:0:0]
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			kp := join(path, k.Value)
			l.lines[kp] = k.Line
			ft, ok := fields[k.Value]
			switch {
			case !ok:
				l.problems = append(l.problems, Problem{File: l.path, Line: k.Line, Key: kp,
					Msg: fmt.Sprintf("unknown key %q%s (allowed here: %s)", k.Value, suggestOrHome(k.Value, names), strings.Join(names, ", "))})
				continue // dropped, so decoding can go on
			case seen[k.Value]:
				l.problems = append(l.problems, Problem{File: l.path, Line: k.Line, Key: kp, Msg: fmt.Sprintf("key %q appears twice", k.Value)})
				continue
			default:
				l.walk(v, ft, kp)
			}
			seen[k.Value] = true
			kept = append(kept, k, v)
		}
		node.Content = kept
	case t.Kind() == reflect.Struct && node.Kind == yaml.SequenceNode && reflect.PointerTo(t).Implements(listFormType):
		field, _ := t.FieldByName(reflect.New(t).Interface().(listForm).listField())
		l.walk(node, field.Type, path)
	case t.Kind() == reflect.Map && node.Kind == yaml.MappingNode:
		for i := 0; i+1 < len(node.Content); i += 2 {
			k, v := node.Content[i], node.Content[i+1]
			kp := join(path, k.Value)
			l.lines[kp] = k.Line
			l.walk(v, t.Elem(), kp)
		}
	case t.Kind() == reflect.Slice && node.Kind == yaml.SequenceNode:
		for i, item := range node.Content {
			l.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i))
		}
	}
	// Kind mismatches are left to yaml's Decode, whose errors carry lines.
}

// copyNode returns a deep copy of n, aliases in it left as they are.
func copyNode(n *yaml.Node) *yaml.Node {
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, child := range n.Content {
		c.Content[i] = copyNode(child)
	}
	return &c
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}`)

// expand replaces ${VAR} and ${VAR:-default} in a string scalar. An unset
// variable without a default is a problem, except in the service block when
// the caller is offline.
func (l *loader) expand(node *yaml.Node, path string) {
	if !strings.Contains(node.Value, "${") {
		return
	}
	node.Value = envRef.ReplaceAllStringFunc(node.Value, func(ref string) string {
		m := envRef.FindStringSubmatch(ref)
		if v, ok := l.opts.Getenv(m[1]); ok && v != "" {
			return v
		}
		if m[2] != "" {
			return m[3]
		}
		// The service and the shared store are needed only online: plan
		// --offline (CI) has neither. Nor the outcomes URL's secret, which
		// only the service and listen use.
		inService := strings.HasPrefix(path, "service.") || strings.HasPrefix(path, "state.")
		if path == "outcomes.url" && l.opts.Offline {
			l.secretUnset = true
			return ""
		}
		if path == "outcomes.signing_secret" && l.opts.Offline {
			l.signingUnset = true
			return ""
		}
		if (inService && !l.opts.Offline) || (!inService && !l.opts.ServiceOnly) {
			l.unset = append(l.unset, Problem{File: l.path, Line: node.Line, Key: path,
				Msg: fmt.Sprintf("environment variable %s is not set (export it, or write ${%s:-default})", m[1], m[1])})
		}
		return ""
	})
	if node.Style == 0 || node.Style == yaml.TaggedStyle {
		node.Tag = "" // let the expanded text resolve as a number, bool, ...
	}
}

// suggestOrHome is suggest, or, for a key of the campaign file written at
// the wrong level (encoding: at the top, not under its sheet; timezone:
// beside hours: rather than in it), where it belongs.
func suggestOrHome(key string, allowed []string) string {
	if s := suggest(key, allowed); s != "" {
		return s
	}
	homes := keyHomes()[key]
	if len(homes) == 0 {
		return ""
	}
	homes = slices.Clone(homes)
	// The shallowest first: sheets[].worksheet before do_not_call's.
	slices.SortStableFunc(homes, func(a, b string) int { return strings.Count(a, ".") - strings.Count(b, ".") })
	if len(homes) > 3 {
		homes = homes[:3]
	}
	where := strings.Join(homes, " or ")
	if len(homes) > 2 {
		where = strings.Join(homes[:len(homes)-1], ", ") + " or " + homes[len(homes)-1]
	}
	return fmt.Sprintf("; %s belongs at %s, not here: move it there", key, where)
}

var keyHomesOnce = sync.OnceValue(func() map[string][]string {
	homes := map[string][]string{}
	var visit func(t reflect.Type, path string, depth int)
	visit = func(t reflect.Type, path string, depth int) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			if t.Kind() == reflect.Slice {
				path += "[]"
			}
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || depth > 4 {
			return
		}
		for i := range t.NumField() {
			tag, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
			if tag == "" || tag == "-" {
				continue
			}
			kp := join(path, tag)
			homes[tag] = append(homes[tag], kp)
			visit(t.Field(i).Type, kp, depth+1)
		}
	}
	visit(reflect.TypeFor[File](), "", 0)
	return homes
})

// keyHomes maps each key name of the campaign file to the paths it is a
// key at ("encoding" to "sheets[].encoding", "suppress[].encoding").
func keyHomes() map[string][]string { return keyHomesOnce() }

// suggest returns `; did you mean "x"?` for the allowed name nearest to
// key (a typo away, or containing it), or "" when none is near.
func suggest(key string, allowed []string) string {
	if best := Nearest(key, allowed); best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	return ""
}

// Nearest returns the name of allowed nearest to key: two edits away at
// most, or, failing that, one that contains key; "" when none is near.
// Messages about a misspelt key, flag or command use it.
func Nearest(key string, allowed []string) string {
	key = strings.ToLower(key)
	best, bestD := "", 3
	for _, a := range allowed {
		if d := sheet.EditDistance(key, a); d < bestD {
			best, bestD = a, d
		}
	}
	if best == "" && len(key) >= 3 {
		for _, a := range allowed {
			if strings.Contains(a, key) {
				best = a
				break
			}
		}
	}
	return best
}

func (f *File) applyDefaults() {
	f.Region = strings.ToUpper(f.Region)
	if f.Region == "" {
		f.Region = DefaultRegion
	}
	if f.Dedupe == "" {
		f.Dedupe = DefaultDedupe
	}
	// Defaults fill only keys the file leaves out: a written 0 is reported.
	if !f.has("pace.per_second") {
		f.Pace.PerSecond = DefaultPerSecond
	}
	if !f.has("pace.burst") {
		f.Pace.Burst = DefaultBurst
	}
	if !f.has("pace.concurrency") {
		f.Pace.Concurrency = DefaultConcurrency
	}
	if !f.has("pace.max_retry_after") {
		f.Pace.MaxRetryAfter = DefaultMaxRetryAfter
	}
	for i := range f.Agents {
		if f.Agents[i].ReadyTimeout == 0 {
			f.Agents[i].ReadyTimeout = DefaultReadyTimeout
		}
		if w := f.Agents[i].Webhook; w != nil {
			w.Method = strings.ToUpper(w.Method)
			if w.Method == "" {
				w.Method = "POST"
			}
		}
	}
	for i := range f.Sheets {
		s := &f.Sheets[i]
		if c, ok := s.Fields["phone_number"]; ok && len(s.PhoneColumns) == 0 {
			s.PhoneColumns = []PhoneColumn{{Column: c}}
		}
		s.Region = strings.ToUpper(s.Region)
		if s.Region == "" {
			s.Region = f.Region
		}
		if !f.has(fmt.Sprintf("sheets[%d].countries", i)) {
			s.Countries = f.Countries
		}
		if !f.has(fmt.Sprintf("sheets[%d].allow_number_kinds", i)) {
			s.AllowNumberKinds = f.AllowNumberKinds
		}
	}
	if f.StateDir == "" && f.Name != "" {
		f.StateDir = filepath.Join(".callrun", f.Name)
	}
}

// PhoneRules returns how sheet i's numbers are read and which may be
// called: its region, its countries (default: the region alone) and the
// kinds of number allowed.
func (f *File) PhoneRules(i int) *phone.Rules {
	s := &f.Sheets[i]
	key := "countries"
	if f.has(fmt.Sprintf("sheets[%d].countries", i)) {
		key = fmt.Sprintf("sheets[%d].countries", i)
	}
	return phone.NewRules(s.Region, s.Countries, s.AllowNumberKinds, key)
}

// Path resolves a path written in the campaign file against its directory.
// A campaign file reads the same on every system: both / and \
// separate the parts of its paths, so that a file written on Windows
// (contacts\leads.csv) runs on Linux, in CI say, and the other way round.
// (A file whose name holds a backslash cannot be named from a campaign
// file on Linux or macOS.)
func (f *File) Path(p string) string {
	if p == "" {
		return p
	}
	p = filepath.FromSlash(strings.ReplaceAll(p, `\`, "/"))
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(f.Dir, p)
}

func (f *File) has(key string) bool { _, ok := f.lines[key]; return ok }

// Line returns the line of a key path such as "sheets[0].agent", or 0.
func (f *File) Line(key string) int { return f.lines[key] }
