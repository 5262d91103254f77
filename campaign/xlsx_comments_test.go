package campaign

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// commentsWorkbook is a workbook of Phone and Name whose cells carry the
// comments (notes, as Excel writes them) given by cell.
func commentsWorkbook(t *testing.T, rows [][]any, comments map[string]string) string {
	t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			t.Fatal(err)
		}
	}
	for cell, text := range comments {
		if err := f.AddComment("Sheet1", excelize.Comment{Cell: cell, Author: "Sam", Paragraph: []excelize.RichTextRun{{Text: text}}}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := f.WriteToBuffer()
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestCellCommentsHoldRows: a comment on a cell of a row that mentions do
// not call holds the row, and its number on every row (Ben's, on the row
// before his too), as a note in a column of notes does; a comment that is
// a do-not-call phrase whole holds its row too; a comment that says
// nothing of calls, or one on the header, holds nothing. Plan says how
// many comments hold rows and the first; the reason names the cell and
// the comment.
func TestCellCommentsHoldRows(t *testing.T) {
	book := commentsWorkbook(t, [][]any{
		{"Phone", "Name"},
		{"+1 415 555 0101", "Ben (work)"},
		{"+14155550101", "Ben"},
		{"+14155550102", "Cy"},
		{"+14155550103", "Di"},
		{"+14155550104", "Ed"},
	}, map[string]string{
		"A1": "Imported from the CRM on 3/1: do not call list merged",
		"A3": "DO NOT CALL - asked on 3/1, email only",
		"B4": "call after 5pm",
		"B5": "DNC",
	})
	f, err := dncCampaign(t, map[string]string{"leads.xlsx": book}, "dedupe: none\n", "")
	if err != nil {
		t.Fatal(err)
	}
	p, sup := signalPlan(t, f)
	if err := sup.SignalProblems(f); err != nil {
		t.Errorf("SignalProblems: %v; a comment holds, it does not refuse", err)
	}
	want := []string{Suppressed, Suppressed, ToCall, Suppressed, ToCall}
	if got := rowStatuses(t, f, sup); !slices.Equal(got, want) {
		t.Errorf("statuses %v, want %v", got, want)
	}
	var reasons []string
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		reasons = append(reasons, c.Reason)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if r := reasons[1]; !strings.Contains(r, "cell A3") || !strings.Contains(r, "DO NOT CALL - asked on 3/1, email only") {
		t.Errorf("row 3's reason %q names neither the cell nor the comment", r)
	}
	if r := reasons[0]; !strings.Contains(r, "row 3") || !strings.Contains(r, "cell A3") {
		t.Errorf("row 2's reason %q names neither the row nor the cell of the comment", r)
	}
	if r := reasons[3]; !strings.Contains(r, "cell B5") {
		t.Errorf("row 5's reason %q does not name the cell", r)
	}
	i := slices.IndexFunc(p.Sheets[0].Signals, func(s PlanSignal) bool { return s.Kind == "comments" })
	if i < 0 {
		t.Fatalf("plan's signals %+v: none of the comments", p.Sheets[0].Signals)
	}
	if s := p.Sheets[0].Signals[i]; s.Use != "held" || s.Mentions != 2 || !strings.Contains(s.MentionAt, "row 3, cell A3") {
		t.Errorf("plan's comments %+v, want 2 mentions, the first row 3's", s)
	}
	if flagged := sup.Flagged(); len(flagged) != 0 {
		t.Errorf("numbers on the store's list: %+v; a comment's goes on none", flagged)
	}
}

// TestCellCommentPastTheFirstRows: a workbook with comments is read
// whole before any contact is judged, so that a comment that mentions do
// not call past the first rows holds its number on a row long before it.
func TestCellCommentPastTheFirstRows(t *testing.T) {
	n := signalSampleRows + 50
	late := dtPhone(signalSampleRows + 20)
	rows := [][]any{{"Phone", "Name"}}
	for i := range n {
		phone := dtPhone(i)
		if i == 5 {
			phone = late // the same person, no comment, long before
		}
		rows = append(rows, []any{phone, "Name"})
	}
	cell, _ := excelize.CoordinatesToCellName(2, signalSampleRows+22)
	book := commentsWorkbook(t, rows, map[string]string{cell: "Called 3/4, she said: do NOT call me again"})
	f, err := dncCampaign(t, map[string]string{"leads.xlsx": book}, "dedupe: none\n", "")
	if err != nil {
		t.Fatal(err)
	}
	_, sup := signalPlan(t, f)
	held := 0
	if err := f.NewContactReader(sup).Each(context.Background(), func(c *Contact) error {
		if c.Status == Suppressed {
			held++
			if c.Phone != late {
				t.Errorf("row %d (%s) held: %s", c.Row, c.Phone, c.Reason)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if held != 2 {
		t.Errorf("%d rows held, want 2 (the commented row and row 7)", held)
	}
}
