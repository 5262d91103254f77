package report

import (
	"bufio"
	"bytes"
	"fmt"
	"html/template"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/callrun/callrun/report/store"
)

// Person is one row of a sheet as report.html lists it, by name, under
// its status: so that a person can find anyone on the page with the
// browser's find and read what was (or will be) done with them, and why.
type Person struct {
	Name   string // first and last name as the sheet has them; "" when it has none
	Number string // the number as called, or the cell as written
	Sheet  string
	Row    int
	Why    string    // the row's reason, as report.csv has it
	From   time.Time // when a waiting contact may be called; zero: no time
}

// Statuses of a plan's rows (plan --report), beside invalid, duplicate
// and suppressed: what run would do with each contact.
const (
	PlanToCall  = "to_call" // run calls it now
	PlanWaiting = "waiting" // to call, once its hours open
	PlanHeld    = "held"    // contact pressure holds its number back until a time
	PlanDone    = "done"    // an earlier run settled it
	// PlanCalledElsewhere: the campaign started a call to it already
	// from another journal (a second state directory, or this one before
	// a backup was restored), and run stops before calling it.
	PlanCalledElsewhere = "called_elsewhere"
)

// PlanStatuses lists the statuses of a plan's rows in the order its page
// shows them.
var PlanStatuses = []string{PlanCalledElsewhere, PlanToCall, PlanWaiting, PlanHeld, PlanDone, string(store.Suppressed), string(store.Duplicate), string(store.Invalid)}

// peopleList is the people of one status, spooled to a temporary file in
// the report's directory as rendered table rows, so that the page's
// memory does not grow with the rows of the sheets.
type peopleList struct {
	n    int
	f    *os.File
	w    *bufio.Writer
	from bool // some person has a From time
}

// AddPerson lists p under status. The people of a status go to a
// temporary file beside report.html (".report.html.people-*.tmp", which
// [RemoveStale] knows), removed once the page is written or dropped: the
// page lists everyone, and memory stays bounded. An error is kept and
// returned by [WriteHTML].
func (p *Page) AddPerson(status string, who Person) {
	if p.err != nil {
		return
	}
	l := p.people[status]
	if l == nil {
		f, err := os.CreateTemp(p.dir, ".report.html.people-*.tmp")
		if err != nil {
			p.err = fmt.Errorf("listing the people of report.html: %w", err)
			return
		}
		l = &peopleList{f: f, w: bufio.NewWriter(f)}
		p.people[status] = l
	}
	l.n++
	if !who.From.IsZero() {
		l.from = true
	}
	w := l.w
	w.WriteString("<tr><td>")
	if who.Name == "" {
		w.WriteString(`<span class="small">(no name)</span>`)
	} else {
		template.HTMLEscape(w, []byte(who.Name))
	}
	w.WriteString("</td><td>")
	template.HTMLEscape(w, []byte(who.Number))
	w.WriteString(`</td><td class="where">`)
	template.HTMLEscape(w, []byte(who.Sheet))
	w.WriteString(" row ")
	w.WriteString(strconv.Itoa(who.Row))
	w.WriteString("</td><td>")
	if !who.From.IsZero() {
		w.WriteString(`<strong class="from">from `)
		w.WriteString(whenText(who.From))
		w.WriteString("</strong>")
		if who.Why != "" {
			w.WriteString(": ")
		}
	}
	template.HTMLEscape(w, []byte(who.Why))
	if _, err := w.WriteString("</td></tr>\n"); err != nil {
		p.err = fmt.Errorf("listing the people of report.html: %w", err)
	}
}

// Close removes the temporary files of the people listed. WriteHTML
// calls it; a caller that drops the page without writing it calls it
// too.
func (p *Page) Close() {
	for _, l := range p.people {
		l.f.Close()
		os.Remove(l.f.Name())
	}
	clear(p.people)
}

// peopleMarker stands in the rendered page where the people of a status
// go: an HTML comment that no escaped cell can make.
func peopleMarker(status string) template.HTML {
	return template.HTML("<!--callrun:people:" + template.HTMLEscapeString(status) + "-->")
}

var markerOpen = []byte("<!--callrun:people:")

// writeWithPeople writes the rendered page to w with each people marker
// replaced by the people spooled for its status.
func (p *Page) writeWithPeople(w io.Writer, page []byte) error {
	for {
		i := bytes.Index(page, markerOpen)
		if i < 0 {
			_, err := w.Write(page)
			return err
		}
		if _, err := w.Write(page[:i]); err != nil {
			return err
		}
		page = page[i+len(markerOpen):]
		j := bytes.Index(page, []byte("-->"))
		l := p.people[string(page[:j])]
		page = page[j+len("-->"):]
		if l == nil {
			continue
		}
		if err := l.w.Flush(); err != nil {
			return err
		}
		if _, err := l.f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(w, l.f); err != nil {
			return err
		}
	}
}
