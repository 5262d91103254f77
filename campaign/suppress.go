package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/inorder"
	"github.com/callrun/callrun/report/store"
)

// Suppression holds the numbers never to call, by phoneKey: those of the
// campaign's suppression files, and apart from them those on the store's
// do-not-call list when it was read ([Suppression.SetDoNotCall]).
type Suppression struct {
	set map[uint64]struct{}
	// read are the numbers of a file [File.ReadNumbers] read, sorted, each
	// once: 8 bytes a number, where set would take several times that.
	// With textOrder, each is its textKey, and they sort as text.
	read      []uint64
	textOrder bool
	// callNumbers are the campaign's contacts' numbers, as LoadDoNotCall
	// read them for a long do-not-call list.
	callNumbers []string
	dnc         atomic.Pointer[map[uint64]struct{}] // replaced whole: a run's report reads it while the run ends
	// Problems are the first entries that are not phone numbers (at most
	// maxSuppressionProblems); Ignored counts them all.
	Problems []RowProblem
	Ignored  int
	// Several counts the entries that may mean more than one number (each
	// is suppressed), and Example describes the first, for plan's warning.
	Several int
	Example string
	// Empty are the suppression files that hold no entry at all (a
	// header and no rows): each suppresses nobody, for plan's warning.
	Empty []string

	// pressure is the store's counted call starts as read for the report
	// ([Suppression.SetPressure]); replaced whole, as dnc is.
	pressure atomic.Pointer[pressureView]

	// flagged are the numbers a do_not_call: column of the campaign's
	// sheets marks do not call, each with the first row that does: every
	// row with one of them is suppressed, wherever it is.
	flagged     map[uint64]FlaggedNumber
	flagsUnread *sheet.Error // see FlagsUnread
	// signals are, by sheet, the signal columns the same pass read (see
	// SignalProblems); spools the records it kept (see rowSpool).
	signals [][]PlanSignal
	spools  []*rowSpool
	// unnumbered are the first phone cells of flagged rows that read as
	// no number, unnumberedCells counts them by sheet (see
	// FlagPass.Unnumbered and SignalProblems).
	unnumbered      []UnnumberedFlag
	unnumberedCells []int
}

// pressureView is contact pressure's starts as read at a time.
type pressureView struct {
	p  *PlanPressure
	at time.Time
}

// maxSuppressionProblems bounds the entries Problems lists: a file of
// millions of numbers may hold thousands of stray cells.
const maxSuppressionProblems = 100

// Has reports whether the E.164 number is suppressed.
func (s *Suppression) Has(e164 string) bool {
	_, ok := s.set[phoneKey(e164)]
	return ok
}

// Len returns how many numbers the suppression files hold.
func (s *Suppression) Len() int { return len(s.set) + len(s.read) }

// addNumber adds the number whose phoneKey is k: to set, or to read
// when there is no set.
func (s *Suppression) addNumber(k uint64) {
	if s.set == nil {
		s.read = append(s.read, k)
		return
	}
	s.set[k] = struct{}{}
}

// ReasonDoNotCall is the reason of a contact not called because its
// number is on the store's do-not-call list.
const ReasonDoNotCall = "the number is on the do-not-call list"

// SetDoNotCall sets the numbers (E.164) on the store's do-not-call list,
// as read before plan, run or the report: a contact with one of them is
// read with Contact.DoNotCall set, and suppressed unless it was called
// already.
func (s *Suppression) SetDoNotCall(numbers []string) {
	dnc := make(map[uint64]struct{}, len(numbers))
	for _, n := range numbers {
		dnc[phoneKey(n)] = struct{}{}
	}
	s.dnc.Store(&dnc)
}

// OnDoNotCall reports whether the E.164 number was on the do-not-call
// list when it was read.
func (s *Suppression) OnDoNotCall(e164 string) bool {
	dnc := s.dnc.Load()
	if dnc == nil {
		return false
	}
	_, ok := (*dnc)[phoneKey(e164)]
	return ok
}

// SetPressure sets the contact pressure and the store's counted call
// starts as read at now, for the report: a contact not called has the
// reason contact pressure holds it back for, with when it may be called.
func (s *Suppression) SetPressure(p *PlanPressure, now time.Time) {
	s.pressure.Store(&pressureView{p: p, at: now})
}

// heldBack returns why contact pressure holds number back, nil when it
// does not (or s is nil).
func (s *Suppression) heldBack(number string) *store.HeldError {
	if s == nil {
		return nil
	}
	v := s.pressure.Load()
	if v == nil {
		return nil
	}
	return v.p.hold(number, v.at)
}

// suppressionHeaders are folded header names of a suppression file's
// number column, beyond the phone aliases callrun init knows.
var suppressionHeaders = []string{"number", "nummer", "rufnummer", "numerodetelephone", "phonenumbers", "donotcall", "dnc", "msisdn", "e164"}

// suppressionSample is how many rows of a suppression file are read to
// choose its number columns.
const suppressionSample = 64

// LoadSuppression reads the suppression files, and the numbers the
// sheets' do_not_call: columns flag and their signal columns
// ([File.ReadFlagged]), streamed: memory
// grows with the numbers, not the files. In each, the first row is a header
// only if none of its cells reads as a phone number; the numbers are read
// from the columns named in the campaign file, else from every column of
// numbers (see [numberSources]): a do-not-call report with a Phone and a
// Mobile column blocks both, and a registry download in an area code
// column and a number column is read joined. Every number an entry may
// mean is suppressed (see phone.Readings): read with the
// campaign's region and each sheet's, and each country a sheet may call,
// with and without a lost '+', each number of a cell that holds several.
// An entry that means no number at all, and a row that cannot be read,
// are listed in Problems (plan --strict fails on them) and otherwise
// ignored; a file with a column most of whose entries mean no number is
// an error (a *FileError) that stops plan and run before any call: it
// names the file, the column and two of its cells.
func (f *File) LoadSuppression(ctx context.Context) (*Suppression, error) {
	s := &Suppression{set: map[uint64]struct{}{}}
	regions := f.suppressionRegions()
	for i, p := range f.Suppress {
		key := fmt.Sprintf("suppress[%d]", i)
		fail := func(format string, args ...any) error {
			return &FileError{Problems: []Problem{{File: f.Source, Line: f.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}}}
		}
		if err := s.load(ctx, p, f.Path(p.File), regions, fail); err != nil {
			return nil, err
		}
	}
	fp, err := f.ReadFlagged(ctx)
	if err != nil {
		return nil, err
	}
	s.flagged, s.flagsUnread, s.signals, s.spools = fp.Flagged, fp.Unread, fp.Signals, fp.spools
	s.unnumbered, s.unnumberedCells = fp.Unnumbered, fp.UnnumberedCells
	return s, nil
}

// ReadNumbers reads a file of phone numbers as a suppression file is
// read (the number column named, or every column of numbers; every
// number an entry may mean), for `callrun suppress import`: the numbers
// ([Suppression.Batches]) and the entries that are no number (Problems,
// Ignored). The whole file is read before any number is put on a list, so
// that a file that is not one of numbers imports nothing; it holds each
// number as 8 bytes. An error names the file.
func (f *File) ReadNumbers(ctx context.Context, path, column string) (*Suppression, error) {
	s := &Suppression{}
	if fi, err := os.Stat(path); err == nil {
		// Room for a number a short line, up to a bound: a list of
		// millions grown by append is copied over and over, and a wide
		// export holds fewer numbers than its bytes suggest.
		s.read = make([]uint64, 0, min(fi.Size()/numberLineBytes, maxNumbersReserved))
	}
	fail := func(format string, args ...any) error { return fmt.Errorf(format, args...) }
	if err := s.load(ctx, SuppressFile{File: path, Column: column}, path, f.suppressionRegions(), fail); err != nil {
		return nil, err
	}
	s.textOrder = len(s.read) > 0 && slices.Max(s.read) < pow10[15]
	if s.textOrder {
		for i, k := range s.read {
			s.read[i] = textKey(k)
		}
	}
	slices.Sort(s.read)
	s.read = slices.Compact(s.read)
	return s, nil
}

// pow10 are the powers of ten up to 10^15.
var pow10 = func() (p [16]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// textKey maps the phoneKey of a number of at most 15 digits (E.164's
// most) to a key that sorts as the number's text does: its digits
// left-aligned to 15 places, then how many they are, so that a number
// sorts before the longer ones it begins. A database's index sorts the
// numbers so, and an import's batches ([Suppression.Batches]) are each
// after the ones before in that order, as PostgreSQL's import asks to
// put two in at once.
func textKey(k uint64) uint64 {
	d := 1
	for d < 15 && k >= pow10[d] {
		d++
	}
	return k*pow10[15-d]<<4 | uint64(d)
}

// fromTextKey is the phoneKey a textKey was made from.
func fromTextKey(t uint64) uint64 {
	d := t & 15
	return (t >> 4) / pow10[15-d]
}

// numberLineBytes is about the fewest bytes a line of a list of numbers
// takes: ten digits and a line end.
const numberLineBytes = 11

// maxNumbersReserved bounds the numbers ReadNumbers makes room for before
// it reads them (128 MiB); more grow the slice as they come.
const maxNumbersReserved = 16 << 20

// Batches returns a function that returns the numbers ReadNumbers read
// in E.164, sorted (as text when none is longer than 15 digits), at most
// n at a time, and none at their end; s holds
// them no more.
func (s *Suppression) Batches(n int) func() []string {
	keys := s.read
	s.read = nil
	return func() []string {
		batch := make([]string, 0, min(n, len(keys)))
		for _, k := range keys[:min(n, len(keys))] {
			if s.textOrder {
				k = fromTextKey(k)
			}
			batch = append(batch, "+"+strconv.FormatUint(k, 10))
		}
		if keys = keys[len(batch):]; len(keys) == 0 {
			keys = nil // the numbers' memory is free once the last batch is taken
		}
		return batch
	}
}

// suppressionRegions are the regions a suppression entry written without
// its country code is read in: the campaign's, each sheet's, and each
// country a sheet may call.
func (f *File) suppressionRegions() []string {
	regions := []string{f.Region}
	addRegion := func(r string) {
		if r = strings.ToUpper(r); r != "" && !slices.Contains(regions, r) {
			regions = append(regions, r)
		}
	}
	for _, sh := range f.Sheets {
		addRegion(sh.Region)
		if sh.CountryColumn != "" {
			for _, c := range sh.Countries {
				addRegion(c)
			}
		}
	}
	return regions
}

// numberSource is where a suppression file's rows hold numbers: one
// column, or an area code column and the number column right after it,
// read joined (the US National Do Not Call Registry's downloads, and
// state registries', are "201,5550123"). It counts the entries it read
// and those that mean no number.
type numberSource struct {
	col, area int    // the column of the numbers and of their area codes (-1: none)
	name      string // for messages: column "Mobile", columns "AreaCode" and "PhoneNumber"
	field     string // for the problems: the header of col, or its name
	entries   int
	unread    int
	examples  []string // the first two entries that are no number
}

// readings returns every number the source's cells in fields may mean
// (see phone.Readings); an empty cell, nil and empty true.
func (src *numberSource) readings(fields []string, regions []string) (cell string, numbers []string, empty bool) {
	cell = strings.TrimSpace(fields[src.col])
	if cell == "" {
		return "", nil, true
	}
	numbers = phone.Readings(cell, regions)
	if src.area >= 0 {
		if area := strings.TrimSpace(fields[src.area]); area != "" {
			cell = joinAreaCode(area, cell)
			for _, n := range phone.Readings(cell, regions) {
				if !slices.Contains(numbers, n) {
					numbers = append(numbers, n)
				}
			}
		}
	}
	return cell, numbers, false
}

// joinAreaCode writes an area code and a number as one: "2015550123" for
// "201" and "5550123", "(201) 555-0123" for "(201)" and "555-0123".
func joinAreaCode(area, number string) string {
	if onlyDigits(area) && onlyDigits(number) {
		return area + number
	}
	return area + " " + number
}

func onlyDigits(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return r < '0' || r > '9' })
}

// isAreaCode reports whether a cell can be an area code: one to five
// digits, perhaps in parentheses or after a '+' (a country code column
// reads the same way).
func isAreaCode(cell string) bool {
	d := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(cell), "("), ")"), "+")
	return len(d) <= 5 && onlyDigits(d)
}

// restOfNumber reports whether a cell can be a number without its area
// code: four to eight digits, perhaps grouped by a space, '-' or '.'.
func restOfNumber(cell string) bool {
	d := strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '.' {
			return -1
		}
		return r
	}, cell)
	return len(d) >= 4 && len(d) <= 8 && onlyDigits(d)
}

// areaPair reports whether two cells, side by side, are an area code and
// the rest of a number that read as a number joined. The number alone
// may read too, as a number of some other country: both are suppressed
// (see numberSource.readings).
func areaPair(area, number string, regions []string) bool {
	area, number = strings.TrimSpace(area), strings.TrimSpace(number)
	return isAreaCode(area) && restOfNumber(number) && len(phone.Readings(joinAreaCode(area, number), regions)) > 0
}

// load adds the numbers of suppression file p, found at path; fail makes
// its errors.
func (s *Suppression) load(ctx context.Context, p SuppressFile, path string, regions []string, fail func(format string, args ...any) error) error {
	r, err := openSuppressFile(path, p)
	if err != nil {
		return fail("%v", err)
	}
	defer r.Close()
	header := r.Header()
	named := p.Names()
	headerIsData := len(named) == 0 && rowOfNumbers(header, regions)
	sample, err := readSuppressionSample(r, headerIsData)
	if err != nil {
		return fail("reading suppression file %s: %v", p.File, err)
	}
	var srcs []*numberSource
	if len(named) > 0 {
		cols := make([]int, len(named))
		for i, name := range named {
			if cols[i], err = r.Column(name); err != nil {
				return fail("%v", err)
			}
		}
		srcs = namedSources(header, cols, sample, regions)
	} else {
		srcs = numberSources(header, headerIsData, sample, regions)
	}
	// Each row's cells are read on every core (readRow), and what they
	// hold is added in the file's order (addRow): the problems listed
	// and the examples are the first ones.
	readRow := func(rec sheet.Record, out []cellReading) {
		if rec.Err == nil {
			for i, src := range srcs {
				out[i].cell, out[i].numbers, out[i].empty = src.readings(rec.Fields, regions)
			}
		}
	}
	addRow := func(rec sheet.Record, read []cellReading) {
		if rec.Err != nil {
			s.addUnreadRow(p.File, srcs, rec)
			return
		}
		for i, src := range srcs {
			cell, numbers, empty := read[i].cell, read[i].numbers, read[i].empty
			if empty {
				continue
			}
			src.entries++
			if len(numbers) == 0 {
				if src.unread++; len(src.examples) < 2 {
					src.examples = append(src.examples, fmt.Sprintf("row %d: %q", rec.Row, cell))
				}
				if s.Ignored++; len(s.Problems) < maxSuppressionProblems {
					_, _, perr := phone.Normalize(cell, regions[0])
					msg := "not a phone number"
					if perr != nil {
						msg = perr.Error()
					}
					s.Problems = append(s.Problems, RowProblem{File: p.File, Row: rec.Row, Field: src.field, Message: msg})
				}
				continue
			}
			for _, e164 := range numbers {
				s.addNumber(phoneKey(e164))
			}
			if len(numbers) > 1 {
				if s.Several++; s.Example == "" {
					s.Example = fmt.Sprintf("%s row %d, %q: %s", p.File, rec.Row, cell, strings.Join(numbers, ", "))
				}
			}
		}
	}
	read := make([]cellReading, len(srcs))
	for _, rec := range sample {
		readRow(rec, read)
		addRow(rec, read)
	}
	if len(sample) == suppressionSample {
		newBatch := func() *readingBatch { return &readingBatch{} }
		next := func(b *readingBatch) (bool, error) { return readBatch(ctx, r, &b.recs) }
		work := func(b *readingBatch, _ *struct{}) {
			b.read = slices.Grow(b.read[:0], len(b.recs)*len(srcs))[:len(b.recs)*len(srcs)]
			for i, rec := range b.recs {
				readRow(rec, b.read[i*len(srcs):(i+1)*len(srcs)])
			}
		}
		settle := func(b *readingBatch) error {
			for i, rec := range b.recs {
				addRow(rec, b.read[i*len(srcs):(i+1)*len(srcs)])
			}
			return nil
		}
		if err := inorder.Run(0, newBatch, next, work, settle); err != nil {
			return fail("reading suppression file %s: %v", p.File, err)
		}
	}
	entries := 0
	for _, src := range srcs {
		entries += src.entries
	}
	if entries == 0 {
		s.Empty = append(s.Empty, p.File)
	}
	return mostlyUnread(p.File, len(named) > 0, srcs, fail)
}

// openSuppressFile opens the suppression file p at path: its worksheet,
// when it names one, which only a workbook has.
func openSuppressFile(path string, p SuppressFile) (*sheet.Reader, error) {
	r, err := sheet.OpenWith(path, p.options())
	if sheet.IsEmpty(err) {
		return nil, emptySuppressFile(p, path, err)
	}
	if err != nil {
		return nil, err
	}
	if p.Worksheet != "" && r.Workbook() == nil {
		r.Close()
		return nil, fmt.Errorf("suppression file %s names the worksheet %q, but it is a text file, not an .xlsx workbook; remove its worksheet key", p.File, p.Worksheet)
	}
	return r, nil
}

// emptySuppressFile is the error for suppression file p, at path, that
// holds no row at all: the sheet reader's, "the sheet is empty", named
// it a sheet and said nothing of what such a file means here. It blocks
// nobody, and is most often an export that failed or was cut short, so
// it stops plan and run (a list that is truly empty says so with its
// header row alone, which plan warns of).
func emptySuppressFile(p SuppressFile, path string, err error) error {
	what := "has blank lines alone"
	if fi, serr := os.Stat(path); serr == nil && fi.Size() == 0 {
		what = "is empty (0 bytes)"
	} else if isZipFile(path) {
		what = "has an empty worksheet" // a workbook holds no blank lines
	}
	var se *sheet.Error
	if errors.As(err, &se) && strings.HasPrefix(se.Msg, "the worksheet is empty") {
		hint := strings.TrimPrefix(se.Msg, "the worksheet is empty: it has no header row; ")
		what = "has an empty worksheet (" + hint + ")"
	}
	return fmt.Errorf("suppression file %s %s, no phone numbers: it would stop nobody from being called. An export that failed or was cut short leaves such a file: export the do-not-call list into it again (a list with no numbers at all is its header row alone, such as Phone)", p.File, what)
}

// isZipFile reports whether the file at path starts as a zip archive
// does, as an .xlsx workbook does.
func isZipFile(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4)
	_, err = io.ReadFull(f, head)
	return err == nil && string(head) == "PK\x03\x04"
}

// cellReading is what a number source's cell of a row may mean
// ([numberSource.readings]).
type cellReading struct {
	cell    string
	numbers []string
	empty   bool
}

// readingBatch is rows of a suppression file and their cells' readings,
// a source after another for each row.
type readingBatch struct {
	recs []sheet.Record
	read []cellReading
}

// readSuppressionSample reads the rows r's columns are chosen by, with its header if headerIsData.
func readSuppressionSample(r *sheet.Reader, headerIsData bool) ([]sheet.Record, error) {
	var sample []sheet.Record
	if headerIsData {
		sample = append(sample, sheet.Record{Row: r.HeaderRow(), Fields: r.Header()})
	}
	for len(sample) < suppressionSample {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if rec.Err == nil {
			rec.Fields = slices.Clone(rec.Fields)
		}
		sample = append(sample, rec)
	}
	return sample, nil
}

// addUnreadRow counts a row that cannot be read as an entry of each of srcs that is no
// number (it may hold one in any), and lists it once.
func (s *Suppression) addUnreadRow(file string, srcs []*numberSource, rec sheet.Record) {
	for _, src := range srcs {
		src.entries++
		if src.unread++; len(src.examples) < 2 {
			src.examples = append(src.examples, fmt.Sprintf("row %d: %s", rec.Row, rowReason(rec.Err)))
		}
	}
	if s.Ignored++; len(s.Problems) < maxSuppressionProblems {
		s.Problems = append(s.Problems, RowProblem{File: file, Row: rec.Row, Message: rowReason(rec.Err)})
	}
}

// mostlyUnread returns fail's error for the first of srcs whose entries are mostly no
// number, saying how to name the right columns (named: the file names some); else nil.
func mostlyUnread(file string, named bool, srcs []*numberSource, fail func(format string, args ...any) error) error {
	for _, src := range srcs {
		if src.unread*2 <= src.entries {
			continue
		}
		what := "it would block almost nobody"
		if len(srcs) > 1 {
			what = "the numbers listed there would be called"
		}
		how := fmt.Sprintf("name the column that holds the numbers: suppress: [{file: %s, column: <its header>}]", file)
		switch {
		case named:
			how = "check that column: names the column of phone numbers"
		case len(srcs) > 1:
			how = fmt.Sprintf("name the columns that hold numbers: suppress: [{file: %s, columns: [<their headers>]}]", file)
		}
		return fail("suppression file %s: %d of its %d entries in %s do not read as phone numbers (%s), so %s; %s",
			file, src.unread, src.entries, src.name, strings.Join(src.examples, ", "), what, how)
	}
	return nil
}

// rowOfNumbers reports whether the cells of a first row are numbers,
// not a header: one of them reads as a phone number, or two side by side
// as an area code and the rest of a number.
func rowOfNumbers(cells []string, regions []string) bool {
	for c, cell := range cells {
		if len(phone.Readings(strings.TrimSpace(cell), regions)) > 0 || c > 0 && areaPair(cells[c-1], cell, regions) {
			return true
		}
	}
	return false
}

// numberSources chooses where a suppression file's numbers are, from its
// header and first rows: each column most of whose cells there read as
// numbers, and each whose header names a phone column (Phone, Mobile,
// Telefon, ...) and that has no cell there, so that a column filled
// further down is not left out. A column most of whose cells are the rest
// of a number that the column before completes (an area code) is read
// with it. With no such column, the one whose cells read as numbers most
// often is read, a phone header breaking ties (see numberColumn), so that
// a file of no numbers is named by its likeliest column.
func numberSources(header []string, headerIsData bool, sample []sheet.Record, regions []string) []*numberSource {
	srcs := numberColumns(header, headerIsData, sample, regions)
	if len(srcs) == 0 {
		c := numberColumn(header, headerIsData, sample, regions)
		srcs = append(srcs, newNumberSource(header, headerIsData, c, false))
	}
	return srcs
}

// numberColumns returns the columns [numberSources] chooses by their
// header and first rows, without the likeliest column it falls back on
// when none is chosen: none then. The pass over a contact sheet before
// any contact is judged reads a flagged row's other numbers in them
// ([otherPhones]).
func numberColumns(header []string, headerIsData bool, sample []sheet.Record, regions []string) []*numberSource {
	area := areaColumns(len(header), sample, regions)
	var srcs []*numberSource
	for c := range header {
		if c+1 < len(header) && area[c+1] {
			continue // the area codes of the column after
		}
		src := newNumberSource(header, headerIsData, c, area[c])
		nonEmpty, reads := 0, 0
		for _, rec := range sample {
			if rec.Err != nil {
				continue
			}
			if _, numbers, empty := src.readings(rec.Fields, regions); !empty {
				nonEmpty++
				if len(numbers) > 0 {
					reads++
				}
			}
		}
		if reads > 0 && reads*2 >= nonEmpty || nonEmpty == 0 && !headerIsData && phoneHeader(header[c]) {
			srcs = append(srcs, src)
		}
	}
	return srcs
}

// namedSources are the columns the campaign file names, each read with
// the area code column before it when its cells are the rest of numbers
// that column completes; a named area code column is read with the
// column after it.
func namedSources(header []string, cols []int, sample []sheet.Record, regions []string) []*numberSource {
	area := areaColumns(len(header), sample, regions)
	var srcs []*numberSource
	for _, c := range cols {
		if c+1 < len(header) && area[c+1] {
			c++
		}
		if !slices.ContainsFunc(srcs, func(s *numberSource) bool { return s.col == c }) {
			srcs = append(srcs, newNumberSource(header, false, c, area[c]))
		}
	}
	return srcs
}

// areaColumns reports, for each column, whether most of its cells in the
// sample are the rest of a number whose area code is in the column
// before (see areaPair).
func areaColumns(width int, sample []sheet.Record, regions []string) []bool {
	area := make([]bool, width)
	for c := 1; c < width; c++ {
		nonEmpty, pairs := 0, 0
		for _, rec := range sample {
			if rec.Err != nil || c >= len(rec.Fields) || strings.TrimSpace(rec.Fields[c]) == "" {
				continue
			}
			nonEmpty++
			if areaPair(rec.Fields[c-1], rec.Fields[c], regions) {
				pairs++
			}
		}
		area[c] = pairs > 0 && pairs*2 >= nonEmpty
	}
	return area
}

// newNumberSource is column c of a suppression file, with the column
// before it as its area codes if withArea.
func newNumberSource(header []string, headerIsData bool, c int, withArea bool) *numberSource {
	src := &numberSource{col: c, area: -1, name: fmt.Sprintf("column %d", c+1), field: fmt.Sprintf("column %d", c+1)}
	if !headerIsData && header[c] != "" {
		src.name, src.field = fmt.Sprintf("column %q", header[c]), header[c]
	}
	if withArea {
		src.area = c - 1
		src.name = fmt.Sprintf("columns %d and %d", c, c+1)
		if !headerIsData && header[c-1] != "" && header[c] != "" {
			src.name = fmt.Sprintf("columns %q and %q", header[c-1], header[c])
		}
	}
	return src
}

// numberColumn chooses a suppression file's likeliest number column from
// its first rows: the column with the most cells that read as numbers;
// among equals, one whose header reads as a phone column, then the
// leftmost.
func numberColumn(header []string, headerIsData bool, sample []sheet.Record, regions []string) int {
	best, bestScore := 0, -1
	for c := range header {
		score := 0
		for _, rec := range sample {
			if rec.Err == nil && c < len(rec.Fields) && strings.TrimSpace(rec.Fields[c]) != "" && len(phone.Readings(strings.TrimSpace(rec.Fields[c]), regions)) > 0 {
				score += 2
			}
		}
		if !headerIsData && phoneHeader(header[c]) {
			score++
		}
		if score > bestScore {
			best, bestScore = c, score
		}
	}
	return best
}

// phoneHeader reports whether a header names a column of phone numbers.
func phoneHeader(h string) bool {
	k := foldHeader(h)
	return k != "" && (slices.Contains(columnAliases["phone_number"], k) || slices.Contains(suppressionHeaders, k) ||
		strings.Contains(k, "phone") || strings.Contains(k, "mobile") || strings.Contains(k, "telef") || strings.Contains(k, "telep"))
}
