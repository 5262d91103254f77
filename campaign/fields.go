package campaign

import (
	"fmt"
	"slices"
	"strings"

	"github.com/callrun/callrun/apiclient"
)

// The form fields a campaign sends are the seven the service contract names
// ([FormFields]) and, on the live service, fields the account defines
// (address, city, zip_code, phone_number1, custom ones), which the
// agent's call endpoint lists beside the seven. callrun knows those only
// from the call endpoint: offline they are taken on trust, with a
// warning; online every field a sheet sends must be one its agent's call
// endpoint lists.

// FormValue is one form field of a contact beyond the seven: its name and
// the value to send.
type FormValue struct {
	Name, Value string
}

// AccountFields returns the form fields the sheets map or set beyond the
// seven the service contract names, sorted, each once. The report has a column for
// each, after the seven.
func (f *File) AccountFields() []string {
	var names []string
	for i := range f.Sheets {
		for _, name := range f.Sheets[i].SentFields() {
			if !slices.Contains(FormFields, name) && !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return names
}

// SentFields returns the form fields a sheet sends, mapped under fields:
// or constant under set:: those of the seven in their order, then the
// others sorted.
func (s *SheetSpec) SentFields() []string {
	var seven, others []string
	for _, name := range FormFields {
		if s.sends(name) {
			seven = append(seven, name)
		}
	}
	for _, m := range []map[string]string{s.Fields, s.Set} {
		for name := range m {
			if !slices.Contains(FormFields, name) && !slices.Contains(others, name) {
				others = append(others, name)
			}
		}
	}
	slices.Sort(others)
	return append(seven, others...)
}

func (s *SheetSpec) sends(name string) bool {
	_, mapped := s.Fields[name]
	_, set := s.Set[name]
	return mapped || set
}

// fieldKey is the key path of a field a sheet sends, as problems name it:
// sheets[0].fields.city or sheets[0].set.city.
func (f *File) fieldKey(sheet int, name string) string {
	if _, mapped := f.Sheets[sheet].Fields[name]; mapped {
		return fmt.Sprintf("sheets[%d].fields.%s", sheet, name)
	}
	return fmt.Sprintf("sheets[%d].set.%s", sheet, name)
}

// AccountFieldWarnings returns a warning, naming the file, line and key,
// for each field beyond the seven that a sheet sends and that no call
// endpoint could be asked about: every sheet's offline (agents nil),
// else the sheets of the agents named in agents. plan shows them.
func (f *File) AccountFieldWarnings(agents []string) []string {
	var warnings []string
	for i := range f.Sheets {
		s := &f.Sheets[i]
		if agents != nil && !slices.Contains(agents, s.Agent) {
			continue
		}
		for _, name := range s.SentFields() {
			if slices.Contains(FormFields, name) {
				continue
			}
			when := "checked against the agent's call endpoint when online"
			if agents != nil {
				when = fmt.Sprintf("agent %q does not exist yet: run checks it against its call endpoint before calling anyone", s.Agent)
			}
			key := f.fieldKey(i, name)
			p := Problem{File: f.Source, Line: f.Line(key), Key: key,
				Msg: fmt.Sprintf("%q is not one of the seven form fields the service contract names, so it must be a field of your account; %s%s", name, when, suggest(name, FormFields))}
			warnings = append(warnings, p.String())
		}
	}
	return warnings
}

// CheckEndpointFields checks that every form field the sheets of agent
// send is one that agent's call endpoint lists in its data.form_data. It
// returns nil or a *FileError naming each sheet key the endpoint does
// not take and the fields it does. An endpoint that lists no fields is
// not checked: the service contract promises no list.
func (f *File) CheckEndpointFields(agent string, ep *apiclient.CallEndpoint) error {
	taken := ep.Fields()
	if len(taken) == 0 {
		return nil
	}
	var problems []Problem
	for i := range f.Sheets {
		s := &f.Sheets[i]
		if s.Agent != agent {
			continue
		}
		for _, name := range s.SentFields() {
			if slices.Contains(taken, name) {
				continue
			}
			key := f.fieldKey(i, name)
			problems = append(problems, Problem{File: f.Source, Line: f.Line(key), Key: key,
				Msg: fmt.Sprintf("sheet %s sends %s, which agent %q's call endpoint does not take (it takes %s)%s; map a field it takes, or remove this one",
					s.File, name, agent, strings.Join(taken, ", "), suggest(name, taken))})
		}
	}
	if len(problems) > 0 {
		return &FileError{Problems: problems}
	}
	return nil
}

// PlanField is a form field of an agent's call endpoint as plan shows it:
// its name and, when the endpoint gives one, its default.
type PlanField struct {
	Name    string `json:"name"`
	Default string `json:"default,omitempty"`
}

// PlanFields returns the form fields of a call endpoint for plan.
func PlanFields(ep *apiclient.CallEndpoint) []PlanField {
	var fields []PlanField
	for _, ff := range ep.FormFields() {
		fields = append(fields, PlanField{Name: ff.Name, Default: ff.Default})
	}
	return fields
}

// fieldsLine writes form fields for a person: names, and a default in
// parentheses where there is one.
func fieldsLine(fields []PlanField) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Name
		if f.Default != "" {
			parts[i] += fmt.Sprintf(" (default %s)", f.Default)
		}
	}
	return strings.Join(parts, ", ")
}
