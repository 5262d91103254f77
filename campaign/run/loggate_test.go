package run

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// TestRefusalsLoggedOnceASecond: 20,000 forged requests over 2.5 seconds
// of the listener's clock are each refused and counted, and give 3 log
// lines in all, JSON, each saying how many it stands for; the HTTP
// server's own errors (too many open files) share the gate and are JSON
// too.
func TestRefusalsLoggedOnceASecond(t *testing.T) {
	var logs syncBuffer
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	now := t0
	l := NewListener(zerolog.New(&logs), 0, func() time.Time { return now })
	const n = 20000
	step := 2500 * time.Millisecond / n
	for i := range n {
		now = t0.Add(time.Duration(i) * step)
		w := httptest.NewRecorder()
		l.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/callrun/wrong-secret", strings.NewReader("a=1")))
		if w.Code != http.StatusNotFound {
			t.Fatalf("forged request %d: %d, want 404", i, w.Code)
		}
	}
	if got := l.forged.Load(); got != n {
		t.Errorf("%d forged requests counted, want %d", got, n)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines for %d refusals over 2.5 s, want 3:\n%s", len(lines), n, strings.Join(lines[:min(len(lines), 10)], "\n"))
	}
	for i, want := range []int64{0, 7999, 7999} {
		var rec struct {
			Forged    int64 `json:"forged_total"`
			NotLogged int64 `json:"not_logged"`
		}
		if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil || rec.NotLogged != want {
			t.Errorf("line %d: %s (%v); want JSON with not_logged %d", i, lines[i], err, want)
		}
	}

	// A second later the server's accept error gets through, as JSON;
	// the next in the same second does not.
	now = now.Add(time.Second)
	errLog := serverLog(l.log, &l.gate, l.now)
	errLog.Printf("http: Accept error: accept tcp [::]:8080: accept4: too many open files; retrying in 5ms")
	errLog.Printf("http: Accept error: accept tcp [::]:8080: accept4: too many open files; retrying in 10ms")
	lines = strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 4 || !json.Valid([]byte(lines[3])) || !strings.Contains(lines[3], "too many open files; retrying in 5ms") || !strings.Contains(lines[3], `"not_logged":3999`) {
		t.Errorf("the server's error: %d lines, the last %s; want one more JSON line that counts the 3999 refusals held back", len(lines), lines[len(lines)-1])
	}
}
