package campaign

import (
	"context"
	"errors"
	"io"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/inorder"
)

// rowBatchSize is how many records of a sheet one worker judges at a
// time: enough that handing a batch over costs little beside judging it,
// few enough that the batches in flight hold a few thousand rows. A
// variable so that tests can cut small sheets into many batches.
var rowBatchSize = 1024

// judgeWorkers is how many goroutines judge a sheet's rows at once
// ([ContactReader.judgeInOrder]); 0 means GOMAXPROCS. Tests set it to
// compare one worker with several.
var judgeWorkers = 0

// rowBatch is up to rowBatchSize records of a sheet, in order, and the
// contacts judged from them: the unit the contact reader hands from the
// goroutine that reads the sheet to the workers that judge rows, and
// back, in sheet order, to the one that settles them.
type rowBatch struct {
	recs     []sheet.Record
	contacts []Contact
	counts   rowCounts
	// keys are the dedupe keys of the batch's contacts that judging left
	// valid, for the dedupe table to read ahead ([numbersSeen.warm]).
	keys []uint64
	// spooled are the batch's records encoded for a rowSpool
	// ([encodeRecords]), when the pass over the signal columns keeps
	// them; spoolable is false when they could not be.
	spooled   []byte
	spoolable bool
}

// rowCounts is what judging a batch's rows counted for its sheet's
// notes, added to the sheet's sheetMap in sheet order
// ([sheetMap.addCounts]).
type rowCounts struct {
	// phoneRows counts, by index in sheetMap.phones, the rows with
	// something in a column named for a line callrun never dials.
	phoneRows []int
	// typeSkipped counts the numbers passed over for what their type
	// cell says, typeSkippedExample shows the first.
	typeSkipped        int
	typeSkippedExample string
}

// rowScratch is a worker's own while it judges a sheet's rows: the
// buffers that readRowPhone orders a row's phone columns in, so that it
// costs no allocation, the type and consent cells read so far, and the
// counts of the batch being judged.
type rowScratch struct {
	tryOrder    []int
	typedKinds  []typedPhone
	typedPlaces []int
	// typeKinds caches what each type cell of the phones' type columns
	// says ([phoneLineKind]).
	typeKinds map[string]typeKind
	// consent caches what each consent cell says ([readConsentCell]).
	consent map[string]consentCell
	// scope caches what each cell of the columns that scope consent
	// says ([readScopeCell]), by their kind.
	scope [scopeStatus + 1]map[string]scopeCell
	// zones are the zones of the numbers judged so far.
	zones  phone.ZoneCache
	counts *rowCounts
}

// addCounts adds what judging a batch counted to m, and clears it.
func (m *sheetMap) addCounts(c *rowCounts) {
	if m.notDialledRows == nil {
		m.notDialledRows = make([]int, len(m.phones))
	}
	for k, n := range c.phoneRows {
		m.notDialledRows[k] += n
		c.phoneRows[k] = 0
	}
	m.typeSkipped += c.typeSkipped
	if m.typeSkippedExample == "" {
		m.typeSkippedExample = c.typeSkippedExample
	}
	c.typeSkipped, c.typeSkippedExample = 0, ""
}

// readBatch fills recs with the next records of r, up to rowBatchSize, and
// says whether they are the last: at the end of the sheet, or at the
// error that ended it, which it returns too.
func readBatch(ctx context.Context, r records, recs *[]sheet.Record) (last bool, err error) {
	*recs = (*recs)[:0]
	if err := ctx.Err(); err != nil {
		return true, err
	}
	for len(*recs) < rowBatchSize {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return true, nil
		}
		if err != nil {
			return true, err
		}
		*recs = append(*recs, rec)
	}
	return false, nil
}

// newRowBatch returns an empty batch for a sheet of phones phone columns.
func newRowBatch(phones int) *rowBatch {
	return &rowBatch{
		recs:     make([]sheet.Record, 0, rowBatchSize),
		contacts: make([]Contact, rowBatchSize),
		counts:   rowCounts{phoneRows: make([]int, phones)},
	}
}

// judgeInOrder reads r to its end in batches, has judge judge each batch
// (on judgeWorkers goroutines at once, each with a rowScratch of its own),
// and hands the judged batches to settle one at a time, in sheet order,
// on the calling goroutine ([inorder.Run]): what one row decides for a
// later one (the first row of a number, what the signal columns counted,
// the first rows' sample) is decided there. It returns the first error of
// settle, or of the reading (ctx's included), once every goroutine it
// started has stopped.
func (cr *ContactReader) judgeInOrder(ctx context.Context, r records, phones int, judge func(*rowBatch, *rowScratch), settle func(*rowBatch) error) error {
	newBatch := func() *rowBatch { return newRowBatch(phones) }
	read := func(b *rowBatch) (bool, error) { return readBatch(ctx, r, &b.recs) }
	return inorder.Run(judgeWorkers, newBatch, read, judge, settle)
}
