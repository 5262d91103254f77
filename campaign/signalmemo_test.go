package campaign

import (
	"strings"
	"testing"
)

// TestSignalMemoKeepsNoLongNote: the memo of a column's cells
// (signalColumn.readCells) is for labels and tags, which repeat from row
// to row; it kept a copy of each of the first 4,096 distinct cells of a
// column of notes too, where no cell repeats and one may run to the
// reader's 4 MiB bound: a CRM export of call notes or transcripts held
// up to gigabytes for nothing. A long cell is read as before, and not
// kept; a short label still is, and reads the same from the memo.
func TestSignalMemoKeepsNoLongNote(t *testing.T) {
	s := &signalColumn{kind: signalValues, notes: true}
	note := "Spoke with her about the renewal. " + strings.Repeat("She asked about pricing and the contract terms. ", 200) + "Please do not call again."
	for range 2 {
		if says, _ := s.read(note); says != saysMention {
			t.Fatalf("a long note that says do not call reads %v, want a mention", says)
		}
	}
	if _, kept := s.readCells[note]; kept {
		t.Errorf("a note of %d bytes was kept in the column's memo", len(note))
	}
	labels := &signalColumn{kind: signalValues}
	for range 2 {
		if says, tag := labels.read("Customer; Do not call"); says != saysYes || tag != " Do not call" && tag != "Do not call" {
			t.Fatalf("a label cell reads %v %q, want yes, Do not call", says, tag)
		}
	}
	if len(labels.readCells) != 1 {
		t.Errorf("the label cell is not kept in the memo: %d cells kept", len(labels.readCells))
	}
}
