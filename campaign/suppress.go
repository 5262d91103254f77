package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/callrun/callrun/campaign/phone"
	"github.com/callrun/callrun/campaign/sheet"
	"github.com/callrun/callrun/report/store"
)

// Suppression holds the numbers never to call, by phoneKey: those of the
// campaign's suppression files, and apart from them those on the store's
// do-not-call list when it was read ([Suppression.SetDoNotCall]).
type Suppression struct {
	set map[uint64]struct{}
	dnc atomic.Pointer[map[uint64]struct{}] // replaced whole: a run's report reads it while the run ends
	// Problems are the first entries that are not phone numbers (at most
	// maxSuppressionProblems); Ignored counts them all.
	Problems []RowProblem
	Ignored  int
	// Several counts the entries that may mean more than one number (each
	// is suppressed), and Example describes the first, for plan's warning.
	Several int
	Example string

	// pressure is the store's counted call starts as read for the report
	// ([Suppression.SetPressure]); replaced whole, as dnc is.
	pressure atomic.Pointer[pressureView]

	// flagged are the numbers a do_not_call: column of the campaign's
	// sheets marks do not call, each with the first row that does: every
	// row with one of them is suppressed, wherever it is.
	flagged     map[uint64]FlaggedNumber
	flagsUnread *sheet.Error // see FlagsUnread
	// signals are, by sheet, the signal columns the same pass read (see
	// SignalProblems).
	signals [][]PlanSignal
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
func (s *Suppression) Len() int { return len(s.set) }

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
// choose its number column.
const suppressionSample = 64

// LoadSuppression reads the suppression files, and the numbers the
// sheets' do_not_call: columns flag and their signal columns
// ([File.ReadFlagged]), streamed: memory
// grows with the numbers, not the files. In each, the first row is a header
// only if none of its cells reads as a phone number; the number column is
// the one named in the campaign file, else the one whose first rows read
// as numbers most often (a header such as Phone, Mobile, Number, Telefon
// or Téléphone breaking ties). Every number an entry may mean is
// suppressed (see phone.Normalizer.Readings): read with the campaign's
// region and each sheet's, and each country a sheet may call, with and
// without a lost '+', each number of a cell that holds several. An entry
// that means no number at all is listed in Problems (plan --strict fails
// on it) and otherwise ignored; a file most of whose entries mean no
// number is an error (a *FileError) that stops plan and run before any
// call: it names the file, the column tried and two of its cells.
func (f *File) LoadSuppression(ctx context.Context, norm *phone.Normalizer) (*Suppression, error) {
	s := &Suppression{set: map[uint64]struct{}{}}
	regions := f.suppressionRegions()
	for i, p := range f.Suppress {
		key := fmt.Sprintf("suppress[%d]", i)
		fail := func(format string, args ...any) error {
			return &FileError{Problems: []Problem{{File: f.Source, Line: f.Line(key), Key: key, Msg: fmt.Sprintf(format, args...)}}}
		}
		if err := s.load(ctx, p, f.Path(p.File), norm, regions, fail); err != nil {
			return nil, err
		}
	}
	fp, err := f.ReadFlagged(ctx, norm)
	if err != nil {
		return nil, err
	}
	s.flagged, s.flagsUnread, s.signals = fp.Flagged, fp.Unread, fp.Signals
	return s, nil
}

// ReadNumbers reads a file of phone numbers as a suppression file is
// read (the number column named, or chosen from the first rows; every
// number an entry may mean), for `callrun suppress import`. It returns
// the numbers in E.164, sorted, and the entries that are no number
// (Problems, Ignored). An error names the file.
func (f *File) ReadNumbers(ctx context.Context, norm *phone.Normalizer, path, column string) ([]string, *Suppression, error) {
	s := &Suppression{set: map[uint64]struct{}{}}
	fail := func(format string, args ...any) error { return fmt.Errorf(format, args...) }
	if err := s.load(ctx, SuppressFile{File: path, Column: column}, path, norm, f.suppressionRegions(), fail); err != nil {
		return nil, nil, err
	}
	numbers := make([]string, 0, len(s.set))
	for k := range s.set {
		numbers = append(numbers, "+"+strconv.FormatUint(k, 10))
	}
	slices.Sort(numbers)
	return numbers, s, nil
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

// load adds the numbers of suppression file p, found at path; fail makes
// its errors.
func (s *Suppression) load(ctx context.Context, p SuppressFile, path string, norm *phone.Normalizer, regions []string, fail func(format string, args ...any) error) error {
	r, err := sheet.OpenWith(path, sheet.Options{Encoding: p.Encoding})
	if err != nil {
		return fail("%v", err)
	}
	defer r.Close()
	header := r.Header()
	// The rows read to choose the column; the header among them when it
	// is a number.
	var sample []sheet.Record
	headerIsData := false
	if p.Column == "" {
		for _, h := range header {
			if len(norm.Readings(h, regions)) > 0 {
				headerIsData = true
				break
			}
		}
	}
	if headerIsData {
		sample = append(sample, sheet.Record{Row: 1, Fields: header})
	}
	for len(sample) < suppressionSample {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail("reading suppression file %s: %v", p.File, err)
		}
		if rec.Err == nil {
			rec.Fields = slices.Clone(rec.Fields)
		}
		sample = append(sample, rec)
	}
	col := 0
	if p.Column != "" {
		if col, err = r.Column(p.Column); err != nil {
			return fail("%v", err)
		}
	} else {
		col = numberColumn(header, headerIsData, sample, norm, regions)
	}
	colName := fmt.Sprintf("column %d", col+1)
	if !headerIsData && header[col] != "" {
		colName = fmt.Sprintf("column %q", header[col])
	}
	var entries, unread int
	var examples []string
	add := func(rec sheet.Record) {
		if rec.Err != nil || col >= len(rec.Fields) {
			return
		}
		cell := strings.TrimSpace(rec.Fields[col])
		if cell == "" {
			return
		}
		entries++
		numbers := norm.Readings(cell, regions)
		if len(numbers) == 0 {
			unread++
			if len(examples) < 2 {
				examples = append(examples, fmt.Sprintf("row %d: %q", rec.Row, cell))
			}
			if s.Ignored++; len(s.Problems) < maxSuppressionProblems {
				_, _, perr := norm.Normalize(cell, regions[0])
				msg := "not a phone number"
				if perr != nil {
					msg = perr.Error()
				}
				field := colName
				if !headerIsData {
					field = header[col]
				}
				s.Problems = append(s.Problems, RowProblem{File: p.File, Row: rec.Row, Field: field, Message: msg})
			}
			return
		}
		for _, e164 := range numbers {
			s.set[phoneKey(e164)] = struct{}{}
		}
		if len(numbers) > 1 {
			if s.Several++; s.Example == "" {
				s.Example = fmt.Sprintf("%s row %d, %q: %s", p.File, rec.Row, cell, strings.Join(numbers, ", "))
			}
		}
	}
	for _, rec := range sample {
		add(rec)
	}
	if len(sample) == suppressionSample {
		if err := eachRecord(ctx, r, func(rec sheet.Record) error { add(rec); return nil }); err != nil {
			return fail("reading suppression file %s: %v", p.File, err)
		}
	}
	if unread*2 > entries {
		how := fmt.Sprintf("name the column that holds the numbers: suppress: [{file: %s, column: <its header>}]", p.File)
		if p.Column != "" {
			how = "check that column: names the column of phone numbers"
		}
		return fail("suppression file %s: %d of its %d entries in %s do not read as phone numbers (%s), so it would block almost nobody; %s",
			p.File, unread, entries, colName, strings.Join(examples, ", "), how)
	}
	return nil
}

// numberColumn chooses a suppression file's number column from its first
// rows: the column with the most cells that read as numbers; among equals,
// one whose header reads as a phone column, then the leftmost.
func numberColumn(header []string, headerIsData bool, sample []sheet.Record, norm *phone.Normalizer, regions []string) int {
	best, bestScore := 0, -1
	for c := range header {
		score := 0
		for _, rec := range sample {
			if rec.Err == nil && c < len(rec.Fields) && strings.TrimSpace(rec.Fields[c]) != "" && len(norm.Readings(strings.TrimSpace(rec.Fields[c]), regions)) > 0 {
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
