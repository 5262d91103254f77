package run

import (
	"bytes"
	"log"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// logGate lets listen's refusals reach the log at most once a second in
// all, on the listener's clock, however many forged or mistaken requests
// come: each line it lets through says how many it held back, and the
// counts in /metrics keep every one.
type logGate struct {
	mu   sync.Mutex
	last time.Time
	held int64
}

// pass reports whether a line may be written at now, and how many were
// held back since the last that was.
func (g *logGate) pass(now time.Time) (held int64, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.last.IsZero() && now.Sub(g.last) < time.Second {
		g.held++
		return 0, false
	}
	held, g.held, g.last = g.held, 0, now
	return held, true
}

// serverLog is the error log of listen's HTTP server (accept errors such
// as too many open files, broken handshakes): JSON lines through log, at
// most one a second with gate's refusals.
func serverLog(lg zerolog.Logger, gate *logGate, now func() time.Time) *log.Logger {
	return log.New(gatedWriter{log: lg, gate: gate, now: now}, "", 0)
}

type gatedWriter struct {
	log  zerolog.Logger
	gate *logGate
	now  func() time.Time
}

func (w gatedWriter) Write(p []byte) (int, error) {
	if held, ok := w.gate.pass(w.now()); ok {
		w.log.Warn().Int64("not_logged", held).Msg(string(bytes.TrimRight(p, "\n")))
	}
	return len(p), nil
}
