package run

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
	"github.com/schollz/progressbar/v3"
)

// progress shows a run on a terminal: one line, redrawn, with the contacts
// settled of those to call this run, the rate, the time left, the failed
// and uncertain counts with the latest reason, and, while the campaign's
// calling hours are closed, when they open. progressbar
// (github.com/schollz/progressbar) draws the bar and the count and keeps
// the line to itself; the words are callrun's, computed from an
// injectable clock. It draws nothing when stderr is not a terminal (cron,
// CI), where the log lines tell the story; progressbar itself would write
// its carriage returns there too. Its methods are safe for concurrent use.
type progress struct {
	bar      *progressbar.ProgressBar // nil: draw nothing
	w        io.Writer
	total    int
	width    int // of the terminal, in columns
	barWidth int
	now      func() time.Time
	window   *campaign.Window // the campaign's hours; nil when none

	mu                                  sync.Mutex
	start, last                         time.Time
	finished, called, failed, uncertain int
	reason                              string // why the latest failed or uncertain contact was
	ended                               bool   // done has ended the line
	stop                                func() // ends run's redraws
}

// progressConfig are the inputs of newProgress.
type progressConfig struct {
	w      io.Writer
	total  int // contacts to call this run
	width  int // the terminal's columns; 0: 100
	now    func() time.Time
	window *campaign.Window
}

// newProgress returns a progress line for c; nil c.w or a total of 0
// gives one that draws nothing.
func newProgress(c progressConfig) *progress {
	if c.now == nil {
		c.now = time.Now
	}
	if c.width <= 0 {
		c.width = 100
	}
	bar := 20
	if c.width < 100 {
		bar = 10 // leave room for the words
	}
	p := &progress{barWidth: bar, w: c.w, total: c.total, width: c.width, now: c.now, window: c.window, start: c.now()}
	if c.w == nil || c.total <= 0 {
		return p
	}
	p.bar = progressbar.NewOptions(c.total,
		progressbar.OptionSetWriter(c.w),
		progressbar.OptionSetWidth(bar),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(false), // its clock is not injectable; callrun says the time left
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionShowDescriptionAtLineEnd(),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionThrottle(0), // settled throttles, with the injected clock
	)
	return p
}

// settled counts one contact's outcome (RunOptions.Settled).
func (p *progress) settled(s store.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	if s != store.Pending && s != store.Suppressed { // on the do-not-call list: not called
		p.called++
	}
	switch s {
	case store.Failed:
		p.failed++
	case store.Uncertain:
		p.uncertain++
	}
	if now := p.now(); now.Sub(p.last) >= 200*time.Millisecond || p.finished == p.total {
		p.draw(now)
	}
}

// failedWith keeps the reason of the latest call start that failed or
// ended uncertain.
func (p *progress) failedWith(reason string) {
	p.mu.Lock()
	p.reason = reason
	p.mu.Unlock()
}

// run redraws the line every interval until done is called, so that the
// rate, the time left and the wait for calling hours stay true while no
// contact settles.
func (p *progress) run(ctx context.Context, interval time.Duration) {
	if p.bar == nil {
		return
	}
	p.stop = every(ctx, interval, func() {
		p.mu.Lock()
		p.draw(p.now())
		p.mu.Unlock()
	})
}

// every calls fn every interval, in a goroutine of its own, until ctx
// ends or stop is called; stop returns once fn has returned for the last
// time.
func every(ctx context.Context, interval time.Duration, fn func()) (stop func()) {
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				fn()
			case <-quit:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return func() { close(quit); wg.Wait() }
}

// done draws the last line and ends it.
func (p *progress) done() {
	if p.bar == nil {
		return
	}
	if p.stop != nil {
		p.stop()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw(p.now())
	fmt.Fprintln(p.w)
	p.ended = true
}

// interrupt writes b, a log line, to w, which shares the terminal with
// the progress line: it clears the line's row first, and draws the line
// again below b, so that b neither shares the row nor is drawn over.
func (p *progress) interrupt(w io.Writer, b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar == nil || p.ended {
		return w.Write(b)
	}
	_ = p.bar.Clear()
	n, err := w.Write(b)
	p.draw(p.now())
	return n, err
}

// NewLineGuard returns the guard of the logs written to w.
func NewLineGuard(w io.Writer) *LineGuard { return &LineGuard{w: w} }

// LineGuard is the writer of the logs of a session on a terminal. While
// a progress line is attached, each log line goes through its interrupt,
// so that the line keeps its row to itself.
type LineGuard struct {
	w  io.Writer
	mu sync.Mutex
	p  *progress
}

func (g *LineGuard) Write(b []byte) (int, error) {
	g.mu.Lock()
	p := g.p
	g.mu.Unlock()
	if p == nil {
		return g.w.Write(b)
	}
	return p.interrupt(g.w, b)
}

// attach routes the log lines through p until detach is called. A nil
// guard (logs that do not go to a terminal) does nothing.
func (g *LineGuard) attach(p *progress) (detach func()) {
	if g == nil {
		return func() {}
	}
	g.mu.Lock()
	g.p = p
	g.mu.Unlock()
	return func() {
		g.mu.Lock()
		g.p = nil
		g.mu.Unlock()
	}
}

func (p *progress) draw(now time.Time) {
	p.last = now
	if p.bar == nil {
		return
	}
	if p.finished > p.bar.GetMax() {
		p.bar.ChangeMax(p.finished)
	}
	// progressbar's part: " 30% |" + the bar + "| (300/1000) ", and a
	// space at the end; the last column stays free, or the terminal wraps.
	digits := len(fmt.Sprint(p.bar.GetMax()))
	p.bar.Describe(p.words(now, p.width-1-(14+p.barWidth+2*digits)))
	_ = p.bar.Set(p.finished)
}

// words is the line's text after the bar and the count, at most max
// characters: the rate and the time left, or when the calling hours open;
// then the failed and uncertain contacts and why the latest one was.
func (p *progress) words(now time.Time, max int) string {
	var b strings.Builder
	elapsed := now.Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(p.called) / elapsed.Seconds()
	}
	switch at := p.opens(now); {
	case !at.IsZero():
		fmt.Fprintf(&b, "opens %s", campaign.Opening(at, now))
	case p.finished >= p.total:
		fmt.Fprintf(&b, "%.1f calls/s, done in %s", rate, roughDuration(elapsed))
	case elapsed < time.Second || rate == 0:
		b.WriteString("starting")
	default:
		left := time.Duration(float64(p.total-p.finished) / rate * float64(time.Second))
		fmt.Fprintf(&b, "%.1f calls/s, %s left", rate, roughDuration(left))
	}
	if p.failed+p.uncertain > 0 {
		fmt.Fprintf(&b, " · %d failed, %d uncertain", p.failed, p.uncertain)
		if p.reason != "" {
			fmt.Fprintf(&b, " (last: %s)", p.reason)
		}
	}
	return cut(b.String(), max)
}

// opens is when the campaign's calling hours open, when they are closed
// at now; zero otherwise.
func (p *progress) opens(now time.Time) time.Time {
	if p.window == nil {
		return time.Time{}
	}
	if at := p.window.NextOpening(now); at.After(now) {
		return at
	}
	return time.Time{}
}

// roughDuration is HumanDuration, but in seconds under a minute.
func roughDuration(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%d s", int(d.Round(time.Second)/time.Second))
	}
	return campaign.HumanDuration(d)
}

// cut shortens s to max characters, marking the cut with "…".
func cut(s string, max int) string {
	if max < 1 {
		max = 1
	}
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}

// watchedCalls is the service's call starter as the progress line and the
// debug log see it: each call start's outcome is logged at debug level,
// and the reason of one that failed or ended uncertain goes to failed.
type watchedCalls struct {
	campaign.CallStarter
	failed  func(reason string)
	started func() // if set, told of each call start sent (one that got a token)
	log     zerolog.Logger
}

func (w watchedCalls) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	start := time.Now()
	resp, err := w.CallStarter.StartCallForm(ctx, ep, form)
	if w.started != nil && !apiclient.NoToken(err) {
		w.started()
	}
	outcome := apiclient.Classify(err)
	ev := w.log.Debug().Str("outcome", outcome.String()).Dur("took", time.Since(start))
	if s := apiclient.StatusCode(err); s != 0 {
		ev = ev.Int("http_status", s)
	}
	ev.Msg("call start")
	if outcome == apiclient.Failed || outcome == apiclient.Uncertain {
		w.failed(callFailure(err))
	}
	return resp, err
}

// callFailure says in a few words why a call start failed: the service's
// status and answer, or what went wrong on the way.
func callFailure(err error) string {
	var ae *apiclient.Error
	if errors.As(err, &ae) {
		s := fmt.Sprintf("%d %s", ae.StatusCode, http.StatusText(ae.StatusCode))
		if ae.Body != "" {
			s += ": " + strings.Join(strings.Fields(ae.Body), " ")
		}
		return apiclient.Redact(s)
	}
	return Message(err)
}
