package campaign

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/callrun/callrun/campaign/sheet"
)

// ReasonHidden is the reason of a row not called because the workbook
// hides it and its sheet says hidden_rows: skip.
const ReasonHidden = "hidden in the workbook (hidden_rows: skip)"

// workbookProblems are the problems of the workbook sheet i is read from
// (r) that stop plan and run before any call: rows the worksheet hides,
// when the sheet does not say what to do with them (hidden_rows:); a tab
// of the workbook named like a list of people not to call ([tabSaysDoNotCall]),
// hidden or not, that no suppress: entry reads and no do_not_call: ignore:
// entry sets aside; and an ignore: entry of a tab the workbook lacks.
// CheckSheets keeps them; none for a text file.
func (f *File) workbookProblems(i int, r *sheet.Reader) []Problem {
	wb := r.Workbook()
	if wb == nil {
		return nil
	}
	spec := &f.Sheets[i]
	key := fmt.Sprintf("sheets[%d].file", i)
	problem := func(key, format string, args ...any) Problem {
		return Problem{File: f.Source, Line: f.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	var out []Problem
	if wb.HiddenRows > 0 && spec.HiddenRows == "" {
		rows := make([]string, len(wb.FirstHidden))
		for k, n := range wb.FirstHidden {
			rows[k] = fmt.Sprint(n)
		}
		which := "rows"
		if wb.HiddenRows == 1 {
			which = "row"
		}
		if wb.HiddenRows > len(wb.FirstHidden) {
			rows = append(rows, "...")
		}
		out = append(out, problem(key, "sheet %s, worksheet %q: %d row(s) are hidden in the workbook (%s %s), by hand or by a filter, perhaps to leave those people out, so nothing is called until the campaign says what they are. Write hidden_rows: skip under sheets[%d] (they are not called, and the report shows them as hidden in the workbook), or hidden_rows: call (they are called like the rest), or show the rows in the workbook and save it",
			spec.File, wb.Worksheet, wb.HiddenRows, which, strings.Join(rows, ", "), i))
	}
	d := f.SheetDoNotCall(i)
	ignored := func(tab string) bool {
		if d == nil {
			return false
		}
		for _, ig := range d.Ignore {
			if tabIgnore(ig) && strings.EqualFold(strings.TrimSpace(ig.Worksheet), tab) {
				return true
			}
		}
		return false
	}
	path := f.Path(spec.File)
	for _, tab := range wb.Tabs {
		if strings.EqualFold(tab.Name, wb.Worksheet) || !tabSaysDoNotCall(tab.Name) || ignored(tab.Name) || f.suppressesTab(path, tab.Name) {
			continue
		}
		what := fmt.Sprintf("a tab %q", tab.Name)
		if tab.Hidden {
			what = fmt.Sprintf("a hidden tab %q", tab.Name)
		}
		if n, err := countTabRows(path, tab.Name); err != nil {
			what += fmt.Sprintf(" (whose rows cannot be read: %s)", tabError(err))
		} else {
			what += fmt.Sprintf(" of %d row(s)", n)
		}
		out = append(out, problem(key, "sheet %s: the workbook has %s, named like a list of people not to call, and the campaign does not read it, so nothing is called until the campaign says what it is. Read it as a do-not-call list, suppress: [{file: %s, worksheet: %q}] (its numbers are then not called), or, if its people are no concern of this campaign, set it aside: do_not_call: {ignore: [{worksheet: %q, reason: \"why its people may be called\"}]}",
			spec.File, what, spec.File, tab.Name, tab.Name))
	}
	if d != nil {
		dkey := f.doNotCallKey(i)
		for k, ig := range d.Ignore {
			if !tabIgnore(ig) || hasTab(wb, ig.Worksheet) {
				continue
			}
			names := make([]string, len(wb.Tabs))
			for t, tab := range wb.Tabs {
				names[t] = fmt.Sprintf("%q", tab.Name)
			}
			ik := fmt.Sprintf("%s.ignore[%d]", dkey, k)
			if !f.has(ik) {
				ik = dkey
			}
			msg := fmt.Sprintf("sheet %s: do_not_call: ignore: names the worksheet %q, which the workbook does not have; its worksheets: %s", spec.File, ig.Worksheet, strings.Join(names, ", "))
			if f.Sheets[i].DoNotCall == nil && len(f.Sheets) > 1 {
				msg += fmt.Sprintf("; the top-level do_not_call: applies to every sheet: give this sheet its own under sheets[%d]", i)
			}
			out = append(out, problem(ik, "%s", msg))
		}
	}
	return out
}

// WorkbookProblems returns the problems CheckSheets found in the sheets'
// workbooks beside their rows: a tab named like a list of people not to
// call that the campaign neither reads nor sets aside, and hidden rows
// without hidden_rows: ([File.workbookProblems]); a *FileError, or nil.
// plan and run stop on them before any call. Commands that call nobody
// (status, report, erase) read the sheets as before: the hidden rows as
// any other.
func (f *File) WorkbookProblems() error {
	if len(f.workbookIssues) == 0 {
		return nil
	}
	return &FileError{Problems: slices.Clone(f.workbookIssues)}
}

// hasTab reports whether the workbook has a tab named name (any case).
func hasTab(wb *sheet.Workbook, name string) bool {
	for _, tab := range wb.Tabs {
		if strings.EqualFold(tab.Name, strings.TrimSpace(name)) {
			return true
		}
	}
	return false
}

// suppressesTab reports whether an entry of suppress: reads the tab of
// the workbook at path.
func (f *File) suppressesTab(path, tab string) bool {
	for _, p := range f.Suppress {
		if p.Worksheet == "" || !strings.EqualFold(strings.TrimSpace(p.Worksheet), tab) {
			continue
		}
		other := f.Path(p.File)
		if filepath.Clean(other) == filepath.Clean(path) {
			return true
		}
		a, err1 := os.Stat(other)
		b, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return true
		}
	}
	return false
}

// countTabRows counts the rows below the header of the tab of the
// workbook at path, for the problem that names it.
func countTabRows(path, tab string) (int, error) {
	r, err := sheet.OpenWith(path, sheet.Options{Worksheet: tab})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			if err == io.EOF {
				return n, nil
			}
			return n, err
		}
		n++
	}
}

// tabError is the sentence of an error reading a tab, without the file
// the problem names already.
func tabError(err error) string {
	var se *sheet.Error
	if errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}

// tabSaysDoNotCall reports whether a workbook tab's name reads as a list
// of people not to call or text, in any language of signalwords.yaml: a
// do_not_call phrase ("Do Not Call", "DNC", "Do not contact", "Nicht
// anrufen"), a block list ("Sperrliste", "Liste d'opposition"), an
// opt-out ("Opted Out", "Unsubscribed"), a suppression list
// ("Suppression"), or a not_allowed word with calls. A list of another
// channel alone ("Email Unsubscribes") is not one.
func tabSaysDoNotCall(name string) bool {
	w, t := words(), readHeaderWords(name)
	if t.joined == "" {
		return false
	}
	calls := t.has(w.calls) || t.has(w.texts)
	if t.has(w.other) && !calls {
		return false
	}
	return w.phrases[t.joined] || t.has(w.dnc) || t.has(w.blocked) || t.has(w.optOut) || t.has(w.suppression) ||
		t.has(w.notAllowed) && calls
}
