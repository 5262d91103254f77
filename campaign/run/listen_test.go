package run

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// syncBuffer is a bytes.Buffer that a logger and a test may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestListenWarnsWhenNoDeliveryComes checks the quiet check with an
// injected clock: no warning before the quiet time has passed since the
// first call start, one after it (once), none once a delivery came, and
// one again for a later run's calls that bring none.
func TestListenWarnsWhenNoDeliveryComes(t *testing.T) {
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	os.MkdirAll(stateDir, 0o700)
	start := time.Date(2026, 11, 25, 14, 0, 0, 0, time.UTC)
	runAt := func(at time.Time, phone string) {
		j, _, err := store.OpenJournal(filepath.Join(stateDir, store.JournalFile), store.JournalOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer j.Close()
		for _, r := range []store.Record{
			{Type: store.TypeRun, Note: "test", At: at},
			{Type: store.TypeIntent, Agent: "Agent", Phone: phone, Attempt: 1, At: at.Add(3 * time.Second)},
			{Type: store.TypeOutcome, Agent: "Agent", Phone: phone, Attempt: 1, Status: store.OutcomeSent, At: at.Add(4 * time.Second)},
		} {
			if err := j.Append(r); err != nil {
				t.Fatal(err)
			}
		}
	}
	files := store.Files{Dir: stateDir}
	d, err := files.OpenDeliveries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var logs syncBuffer
	now := start
	tgt := &hookTarget{name: "spring", f: &campaign.File{}, store: files, deliveries: d}
	l := &Listener{log: zerolog.New(&logs), targets: map[string]*hookTarget{"/x": tgt}, now: func() time.Time { return now }, quiet: 15 * time.Minute}
	warnings := func() int { return strings.Count(logs.String(), "no delivery has come since") }
	check := func(at time.Time, want int) {
		t.Helper()
		now = at
		l.checkQuiet(context.Background())
		if got := warnings(); got != want {
			t.Errorf("at %s: %d warnings, want %d\n%s", at.Format(time.TimeOnly), got, want, logs.String())
		}
	}
	check(start.Add(time.Hour), 0) // no call started yet
	runAt(start, "+14155550132")   // its call starts at 14:00:03
	check(start.Add(15*time.Minute), 0)
	check(start.Add(15*time.Minute+3*time.Second), 1)
	if !strings.Contains(logs.String(), `"first_call_start":"2026-11-25T14:00:03Z"`) {
		t.Errorf("the warning does not name the first call start:\n%s", logs.String())
	}
	check(start.Add(time.Hour), 1) // once
	// A later run; a delivery comes for it in time: no warning.
	second := start.Add(2 * time.Hour)
	runAt(second, "+14155550133")
	if _, _, err := d.Append(store.Delivery{Key: "k", At: second.Add(time.Minute), Fields: map[string]string{"phone_number": "+14155550133"}}); err != nil {
		t.Fatal(err)
	}
	check(second.Add(time.Hour), 1)
	// A third run whose calls bring none, with this listen (as after a
	// restart) knowing of no delivery but the store's old one.
	third := start.Add(5 * time.Hour)
	runAt(third, "+14155550134")
	tgt.last.Store(0)
	check(third.Add(14*time.Minute), 1)
	check(third.Add(16*time.Minute), 2)
}

// TestListenLogsAnEraseErrorOnceAMinute: a request to erase that listen
// cannot read (a torn deliveries.erase.* file) fails each second's look;
// over three minutes of the listener's clock it is logged when it first
// comes and once a minute after, and its end once when the file goes.
func TestListenLogsAnEraseErrorOnceAMinute(t *testing.T) {
	t.Setenv("CALLRUN_HOME", filepath.Join(t.TempDir(), "home"))
	stateDir := t.TempDir()
	files := store.Files{Dir: stateDir}
	d, err := files.OpenDeliveries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.ReadNumbersWith(func(map[string]string) []string { return nil })
	request := filepath.Join(stateDir, store.EraseRequestFile+"torn")
	if err := os.WriteFile(request, []byte(`{"hashes":["h1:`), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	now := start
	tgt := &hookTarget{name: "spring", f: &campaign.File{}, store: files, deliveries: d}
	l := &Listener{log: zerolog.New(&logs), targets: map[string]*hookTarget{"/x": tgt}, now: func() time.Time { return now }}
	count := func(msg string) int { return strings.Count(logs.String(), msg) }
	for s := range 3 * 60 {
		now = start.Add(time.Duration(s) * time.Second)
		l.eraseStored(l.log)
	}
	if got := count("could not erase the deliveries"); got != 3 {
		t.Errorf("%d error lines over 3 minutes of the same error, want 3:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), store.EraseRequestFile+"torn") {
		t.Errorf("the error does not name the file:\n%s", logs.String())
	}
	if err := os.Remove(request); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		now = now.Add(time.Second)
		l.eraseStored(l.log)
	}
	if got, back := count("could not erase the deliveries"), count("erasing the deliveries of people erased from the store again"); got != 3 || back != 1 {
		t.Errorf("after the file went: %d error lines and %d lines of its end, want 3 and 1:\n%s", got, back, logs.String())
	}
}

// TestListenBodyBudget: a POST takes its body's Content-Length of the
// bytes listen reads at once (the most a body may be, when it gives none;
// twice that, compressed), a GET nothing; while the budget is taken, a
// delivery is answered 503 with Retry-After and counted, not read, and
// once it is given back the next is taken.
func TestListenBodyBudget(t *testing.T) {
	defer func(wait time.Duration) { listenBodyWait = wait }(listenBodyWait)
	listenBodyWait = 10 * time.Millisecond
	l := NewListener(zerolog.Nop(), 0, time.Now)
	l.targets["/x"] = &hookTarget{name: "spring", f: &campaign.File{}}
	post := func(n int64, encoding string) *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/x", strings.NewReader(strings.Repeat("a", int(max(n, 0)))))
		r.ContentLength = n
		if encoding != "" {
			r.Header.Set("Content-Encoding", encoding)
		}
		return r
	}
	for _, c := range []struct {
		name string
		r    *http.Request
		want int64
	}{
		{"a GET", httptest.NewRequest(http.MethodGet, "/x?phone_number=1", nil), 0},
		{"a POST of 100 bytes", post(100, ""), 100},
		{"a POST of no length", post(-1, ""), apiclient.MaxDeliveryBody + 1},
		{"a gzip POST of 100 bytes", post(100, "gzip"), 100 + apiclient.MaxDeliveryBody},
	} {
		release, ok := l.takeBody(c.r)
		if !ok {
			t.Fatalf("%s: not taken from an empty budget", c.name)
		}
		if got := listenBodyBudget - free(l); got != c.want {
			t.Errorf("%s takes %d bytes, want %d", c.name, got, c.want)
		}
		release()
	}
	// The budget taken whole: the next delivery waits, then is 503.
	if err := l.bodies.Acquire(context.Background(), listenBodyBudget); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	l.ServeHTTP(w, post(100, ""))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || l.refused.Load() != 1 {
		t.Errorf("with the budget taken: answered %d, Retry-After %q, %d refused; want 503, a Retry-After, 1", w.Code, w.Header().Get("Retry-After"), l.refused.Load())
	}
	l.bodies.Release(listenBodyBudget)
	release, ok := l.takeBody(post(100, ""))
	if !ok {
		t.Fatal("given back, the budget takes no delivery")
	}
	release()
}

// free is how many bytes of l's budget are not taken.
func free(l *Listener) int64 {
	lo, hi := int64(0), listenBodyBudget // lo can be taken, hi+1 cannot
	for lo < hi {
		n := (lo + hi + 1) / 2
		if l.bodies.TryAcquire(n) {
			l.bodies.Release(n)
			lo = n
		} else {
			hi = n - 1
		}
	}
	return lo
}
