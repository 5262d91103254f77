package run

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
)

// fakeTerminal keeps what a terminal would show of what is written to it:
// a carriage return goes back to the start of the line, ESC[0K and ESC[K
// clear to its end, ESC[2K clears it, and a newline starts the next.
type fakeTerminal struct {
	mu    sync.Mutex
	lines []string
	line  []rune
	col   int
}

func (ft *fakeTerminal) Write(p []byte) (int, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	s := string(p)
	for s != "" {
		switch {
		case strings.HasPrefix(s, "\033[0K"), strings.HasPrefix(s, "\033[K"):
			ft.line = ft.line[:ft.col]
			s = s[strings.Index(s, "K")+1:]
			continue
		case strings.HasPrefix(s, "\033[2K"):
			ft.line, ft.col = ft.line[:0], 0
			s = s[4:]
			continue
		}
		r := []rune(s)[0]
		s = s[len(string(r)):]
		switch r {
		case '\r':
			ft.col = 0
		case '\n':
			ft.lines = append(ft.lines, string(ft.line))
			ft.line, ft.col = nil, 0
		default:
			if ft.col < len(ft.line) {
				ft.line[ft.col] = r
			} else {
				ft.line = append(ft.line, r)
			}
			ft.col++
		}
	}
	return len(p), nil
}

// screen is the line the cursor is on, as shown.
func (ft *fakeTerminal) screen() string {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return strings.TrimRight(string(ft.line), " ")
}

// TestProgressLineGolden draws the progress line of a run of 1,000
// contacts on a fake terminal 120 columns wide, with an injected clock:
// under way with failures, waiting for the campaign's hours, and done.
func TestProgressLineGolden(t *testing.T) {
	ny, _ := time.LoadLocation("America/New_York")
	f := &campaign.File{Hours: &campaign.Hours{Timezone: "America/New_York", Days: []string{"mon", "tue", "wed", "thu", "fri"}, Start: "09:00", End: "20:00"}}
	window, err := f.Window()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, ny) // a Wednesday, inside hours
	clock := func() time.Time { return now }
	var ft fakeTerminal
	p := newProgress(progressConfig{w: &ft, total: 1000, width: 120, now: clock, window: window})
	var shots []string
	shot := func(what string) {
		p.mu.Lock()
		p.draw(now)
		p.mu.Unlock()
		shots = append(shots, what+":\n"+ft.screen())
	}
	shot("before any call")
	for i := range 300 {
		now = now.Add(500 * time.Millisecond)
		switch {
		case i == 40:
			p.failedWith("422 Unprocessable Entity: phone_number is not a valid number")
			p.settled(store.Failed)
		case i == 120:
			p.failedWith("500 Internal Server Error")
			p.settled(store.Uncertain)
		default:
			p.settled(store.Sent)
		}
	}
	shot("300 settled in 150 s, one failed and one uncertain")
	now = time.Date(2026, 11, 21, 12, 0, 0, 0, ny) // Saturday: closed
	shot("waiting on a Saturday")
	var narrow fakeTerminal
	p80 := newProgress(progressConfig{w: &narrow, total: 1000, width: 80, now: clock, window: window})
	p80.draw(now)
	shots = append(shots, "the same on a terminal 80 columns wide, before any call:\n"+narrow.screen())
	now = time.Date(2026, 11, 23, 9, 0, 0, 0, ny)
	for range 700 {
		now = now.Add(100 * time.Millisecond)
		p.settled(store.Pending)
	}
	shot("all settled")
	p.done()
	if len(ft.lines) != 1 || ft.screen() != "" {
		t.Errorf("done did not end the line: %q, then %q", ft.lines, ft.screen())
	}
	golden(t, "TestProgressLine", strings.Join(shots, "\n")+"\n")
	for _, s := range shots {
		if line := s[strings.Index(s, "\n")+1:]; len([]rune(line)) >= 120 {
			t.Errorf("line longer than the terminal (%d): %q", len([]rune(line)), line)
		}
	}
}

// TestProgressDrawsNothingWithoutATerminal: with no writer (stderr is not
// a terminal) the progress counts but draws nothing.
func TestProgressDrawsNothingWithoutATerminal(t *testing.T) {
	p := newProgress(progressConfig{total: 10})
	p.settled(store.Sent)
	p.run(t.Context(), time.Millisecond)
	p.done()
	if p.bar != nil || p.finished != 1 {
		t.Errorf("bar %v, finished %d", p.bar, p.finished)
	}
}

func TestCallFailureInAFewWords(t *testing.T) {
	err := fmt.Errorf("starting call: %w", &apiclient.Error{Op: "start call", Method: "POST", URL: "http://127.0.0.1/x", StatusCode: 422, Body: "phone_number\n  is invalid"})
	if got, want := callFailure(err), "422 Unprocessable Entity: phone_number is invalid"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLogLinesKeepOffTheProgressLine: a log line written while the
// progress line is drawn takes a row of its own, whole, and the progress
// line is drawn again below it; after done, log lines go straight through.
func TestLogLinesKeepOffTheProgressLine(t *testing.T) {
	now := time.Date(2026, 11, 18, 12, 0, 0, 0, time.UTC)
	var ft fakeTerminal
	p := newProgress(progressConfig{w: &ft, total: 10, width: 100, now: func() time.Time { return now }})
	g := &LineGuard{w: &ft}
	detach := g.attach(p)
	for range 3 {
		now = now.Add(time.Second)
		p.settled(store.Sent)
	}
	before := ft.screen()
	if !strings.Contains(before, "(3/10)") {
		t.Fatalf("progress line %q", before)
	}
	const logLine = "12:00:03 WRN the service answered slowly"
	fmt.Fprintln(g, logLine)
	if len(ft.lines) != 1 || strings.TrimRight(ft.lines[0], " ") != logLine {
		t.Errorf("the log line's row: %q; want %q alone", ft.lines, logLine)
	}
	if got := ft.screen(); got != before {
		t.Errorf("after the log line the progress line is %q; want %q", got, before)
	}
	p.settled(store.Sent)
	p.done()
	detach()
	fmt.Fprintln(g, "after")
	if n := len(ft.lines); n != 3 || ft.lines[2] != "after" || !strings.Contains(ft.lines[1], "(4/10)") {
		t.Errorf("lines after done: %q", ft.lines)
	}
	var none *LineGuard
	none.attach(p)() // no terminal: nothing to do
}
