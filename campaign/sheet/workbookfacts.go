package sheet

import (
	"fmt"
	"strings"

	"github.com/xuri/excelize/v2"
)

// Workbook is what the reader of an .xlsx workbook learned of it before
// any row was read: the workbook's tabs, the rows of the worksheet read
// that the workbook hides ([surveyWorksheet] finds them in the same pass
// as its merged ranges), and the comments on its cells
// ([Workbook.RowComments]). The campaign reads it to stop on a tab of
// people not to call it would not read, on hidden rows it was not told
// what to do with, and on a comment that asks not to call a row's
// person ([Reader.Workbook]). Its memory is bounded
// whatever the rows hidden: a count, the first few row numbers, and one
// bit for each row up to the last one hidden (at most Excel's 1,048,576
// rows, 128 KiB).
type Workbook struct {
	// Worksheet is the name of the worksheet read.
	Worksheet string
	// Tabs are the workbook's sheets, in its order, the one read
	// included.
	Tabs []Tab
	// HiddenRows counts the rows of the worksheet read that the workbook
	// hides and that hold cells; FirstHidden holds the first
	// [maxFirstHidden] of their numbers.
	HiddenRows  int
	FirstHidden []int
	// hidden has bit n set for row n hidden.
	hidden []uint64
	// comments are the comments on the worksheet's cells, by row.
	comments map[int][]Comment
}

// Tab is a sheet of a workbook: its name, and whether the workbook hides
// it (state="hidden" or "veryHidden").
type Tab struct {
	Name   string
	Hidden bool
}

// maxFirstHidden is how many hidden rows' numbers a [Workbook] keeps.
const maxFirstHidden = 5

// RowHidden reports whether the workbook hides row n (counted as a
// spreadsheet counts it, the header row 1 when it is the first) of the
// worksheet read; false on a nil w.
func (w *Workbook) RowHidden(n int) bool {
	if w == nil || n < 0 || n/64 >= len(w.hidden) {
		return false
	}
	return w.hidden[n/64]&(1<<(n%64)) != 0
}

// hide records row n as hidden; rows come in order.
func (w *Workbook) hide(n int) {
	if n < 0 || n > excelize.TotalRows {
		return
	}
	if w.RowHidden(n) {
		return
	}
	for len(w.hidden) <= n/64 {
		w.hidden = append(w.hidden, 0)
	}
	w.hidden[n/64] |= 1 << (n % 64)
	if w.HiddenRows++; len(w.FirstHidden) < maxFirstHidden {
		w.FirstHidden = append(w.FirstHidden, n)
	}
}

// Workbook returns what the reader learned of the workbook it reads
// before its rows, or nil when the sheet is a text file.
func (s *Reader) Workbook() *Workbook { return s.workbook }

// tabsHint tells, for a workbook of more than one tab, which worksheet
// was read and which others it has, so that a sheet whose contacts are on
// another tab (a cover or notes tab first) says how to name theirs; "" for
// a workbook of one tab, or a nil w.
func (w *Workbook) tabsHint(holds string) string {
	if w == nil || len(w.Tabs) < 2 {
		return ""
	}
	names := make([]string, 0, len(w.Tabs))
	other := ""
	for _, t := range w.Tabs {
		names = append(names, t.Name)
		if other == "" && !t.Hidden && !strings.EqualFold(t.Name, w.Worksheet) {
			other = t.Name
		}
	}
	if other == "" {
		return ""
	}
	return fmt.Sprintf("worksheet %q was read; the workbook's tabs are %s: if the %s are on another, name it in the campaign file, worksheet: %q", w.Worksheet, quoteAll(names), holds, other)
}
