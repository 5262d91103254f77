package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/callrun/callrun/report"
)

// progress draws one line of counts on a terminal while a run goes on. It
// draws nothing when stderr is not a terminal (cron, CI), where the JSON
// log lines tell the story instead.
type progress struct {
	enabled bool
	w       io.Writer
	mu      sync.Mutex
	counts  map[report.Status]int
	start   time.Time
	last    time.Time
}

func newProgress(enabled bool, w io.Writer) *progress {
	return &progress{enabled: enabled, w: w, counts: map[report.Status]int{}, start: time.Now()}
}

// settled counts one contact's outcome; it is safe for concurrent use.
func (p *progress) settled(s report.Status) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[s]++
	if time.Since(p.last) >= 200*time.Millisecond {
		p.draw()
	}
}

func (p *progress) draw() {
	p.last = time.Now()
	n := p.counts[report.Sent] + p.counts[report.Failed] + p.counts[report.Uncertain]
	rate := float64(n) / max(time.Since(p.start).Seconds(), 0.001)
	fmt.Fprintf(p.w, "\r%d sent, %d failed, %d uncertain, %d pending  (%.1f calls/s)\033[K",
		p.counts[report.Sent], p.counts[report.Failed], p.counts[report.Uncertain], p.counts[report.Pending], rate)
}

func (p *progress) done() {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.draw()
	fmt.Fprintln(p.w)
}
