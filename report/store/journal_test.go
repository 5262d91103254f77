package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// openJournal opens the journal at path and closes it (and its state) when
// the test ends.
func openJournal(t *testing.T, path string) (*Journal, *State) {
	t.Helper()
	j, s, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		j.Close()
		s.Close()
	})
	return j, s
}

// readState replays the journal at path and closes the state when the test
// ends.
func readState(t *testing.T, path string) *State {
	t.Helper()
	s, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func intent(agent, phone string) Record {
	return Record{Type: TypeIntent, Agent: agent, Phone: phone}
}

func outcome(agent, phone, status string) Record {
	return Record{Type: TypeOutcome, Agent: agent, Phone: phone, Status: status}
}

func mustAppend(t *testing.T, j *Journal, recs ...Record) {
	t.Helper()
	for _, r := range recs {
		if err := j.Append(r); err != nil {
			t.Fatal(err)
		}
	}
}

// journalLines returns the lines of a journal file, checking that each is
// a whole JSON record.
func journalLines(t *testing.T, path string) []Record {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		t.Fatalf("journal does not end with a newline: ...%q", b[max(0, len(b)-40):])
	}
	var recs []Record
	for i, line := range bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) {
		if len(line) == 0 && len(b) == 0 {
			break
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("line %d: %v: %q", i+1, err, line)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestJournalRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, s := openJournal(t, path)
	t0 := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	mustAppend(t, j,
		Record{Type: TypeRun, Note: "run 1", At: t0},
		Record{Type: TypeIntent, Agent: "east", Phone: "+14155550100", AgentID: "ag_1", Sheet: "a.csv", Row: 2, Attempt: 1, At: t0.Add(time.Second)},
		Record{Type: TypeIntent, Agent: "east", Phone: "+14155550101", AgentID: "ag_1", Sheet: "a.csv", Row: 3, Attempt: 1, At: t0.Add(2 * time.Second)},
		Record{Type: TypeOutcome, Agent: "east", Phone: "+14155550100", AgentID: "ag_1", Sheet: "a.csv", Row: 2, Attempt: 1, Status: OutcomeSent, HTTP: 201, Body: `{"call_id":"c1"}`, At: t0.Add(3 * time.Second)},
		Record{Type: TypeOutcome, Agent: "east", Phone: "+14155550101", AgentID: "ag_1", Sheet: "a.csv", Row: 3, Attempt: 1, Status: OutcomeFailed, HTTP: 422, Reason: "the service refused the call", Body: "bad <number> & such\nline 2", At: t0.Add(4 * time.Second)},
		Record{Type: TypeIntent, Agent: "west", Phone: "+442071838750", N: 2, AgentID: "ag_2", Attempt: 1, At: t0.Add(5 * time.Second)},
	)

	check := func(t *testing.T, s *State) {
		t.Helper()
		if got := s.Len(); got != 3 {
			t.Errorf("Len = %d, want 3", got)
		}
		want := map[Status]int{Sent: 1, Failed: 1, Uncertain: 1, Pending: 0, Erased: 0}
		if got := s.Counts(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Counts = %v, want %v", got, want)
		}
		e, ok := s.Lookup(Key{"east", "+14155550100", 0})
		wantE := Entry{Status: Sent, Attempts: 1, HTTP: 201, FirstAt: t0.Add(time.Second), LastAt: t0.Add(3 * time.Second), Body: `{"call_id":"c1"}`, AgentID: "ag_1"}
		if !ok || !entryEqual(e, wantE) {
			t.Errorf("Lookup sent = %+v, %v; want %+v", e, ok, wantE)
		}
		e, ok = s.Lookup(Key{"east", "+14155550101", 0})
		wantE = Entry{Status: Failed, Attempts: 1, HTTP: 422, FirstAt: t0.Add(2 * time.Second), LastAt: t0.Add(4 * time.Second), Reason: "the service refused the call", Body: "bad <number> & such\nline 2", AgentID: "ag_1"}
		if !ok || !entryEqual(e, wantE) {
			t.Errorf("Lookup failed = %+v, %v; want %+v", e, ok, wantE)
		}
		e, ok = s.Lookup(Key{"west", "+442071838750", 2})
		wantE = Entry{Status: Uncertain, Attempts: 1, FirstAt: t0.Add(5 * time.Second), LastAt: t0.Add(5 * time.Second), Reason: noOutcome, AgentID: "ag_2"}
		if !ok || !entryEqual(e, wantE) {
			t.Errorf("Lookup uncertain = %+v, %v; want %+v", e, ok, wantE)
		}
		for _, k := range []Key{{"west", "+442071838750", 0}, {"east", "+14155550102", 0}, {"north", "+14155550100", 0}} {
			if st, ok := s.Status(k); ok {
				t.Errorf("Status(%v) = %q, want none", k, st)
			}
			if _, ok := s.Lookup(k); ok {
				t.Errorf("Lookup(%v) found an entry", k)
			}
		}
	}
	t.Run("live", func(t *testing.T) { check(t, s) })
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	t.Run("reopened", func(t *testing.T) {
		_, s := openJournal(t, path)
		check(t, s)
	})
	t.Run("ReadState", func(t *testing.T) { check(t, readState(t, path)) })

	recs := journalLines(t, path)
	if len(recs) != 6 || recs[0].Type != TypeRun || recs[0].Note != "run 1" {
		t.Errorf("journal holds %d records, first %+v", len(recs), recs[0])
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("journal mode %v, want 0600", fi.Mode().Perm())
	}
}

func entryEqual(a, b Entry) bool {
	return a.Status == b.Status && a.Attempts == b.Attempts && a.HTTP == b.HTTP &&
		a.FirstAt.Equal(b.FirstAt) && a.LastAt.Equal(b.LastAt) &&
		a.Reason == b.Reason && a.Body == b.Body && a.AgentID == b.AgentID
}

func TestStatusDerivation(t *testing.T) {
	I := func() Record { return intent("a", "+15550001") }
	O := func(st string) Record { return outcome("a", "+15550001", st) }
	tests := []struct {
		name     string
		recs     []Record
		want     Status
		attempts int
	}{
		{"intent alone", []Record{I()}, Uncertain, 1},
		{"sent", []Record{I(), O(OutcomeSent)}, Sent, 1},
		{"failed", []Record{I(), O(OutcomeFailed)}, Failed, 1},
		{"uncertain outcome", []Record{I(), O(OutcomeUncertain)}, Uncertain, 1},
		{"retry", []Record{I(), O(OutcomeRetry)}, Pending, 1},
		{"skipped", []Record{I(), O(OutcomeSkipped)}, Pending, 0},
		{"retry then skipped", []Record{I(), O(OutcomeRetry), I(), O(OutcomeSkipped)}, Pending, 1},
		{"skipped then sent", []Record{I(), O(OutcomeSkipped), I(), O(OutcomeSent)}, Sent, 1},
		{"retry then intent", []Record{I(), O(OutcomeRetry), I()}, Uncertain, 2},
		{"retry then sent", []Record{I(), O(OutcomeRetry), I(), O(OutcomeSent)}, Sent, 2},
		{"failed then re-sent", []Record{I(), O(OutcomeFailed), I(), O(OutcomeSent)}, Sent, 2},
		{"uncertain then re-sent and failed", []Record{I(), I(), O(OutcomeFailed)}, Failed, 2},
		{"sent then re-sent in flight", []Record{I(), O(OutcomeSent), I()}, Uncertain, 2},
		{"skipped without intent", []Record{O(OutcomeSkipped)}, Pending, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal")
			j, s := openJournal(t, path)
			// Another contact, so that counts have to be kept apart.
			mustAppend(t, j, intent("a", "+15550002"), outcome("a", "+15550002", OutcomeSent))
			mustAppend(t, j, tt.recs...)
			check := func(t *testing.T, s *State) {
				t.Helper()
				k := Key{"a", "+15550001", 0}
				if st, ok := s.Status(k); !ok || st != tt.want {
					t.Errorf("Status = %q, %v; want %q", st, ok, tt.want)
				}
				e, ok := s.Lookup(k)
				if !ok || e.Status != tt.want || e.Attempts != tt.attempts {
					t.Errorf("Lookup = %+v, %v; want status %q, %d attempts", e, ok, tt.want, tt.attempts)
				}
				if n := s.Attempts(k); n != tt.attempts {
					t.Errorf("Attempts = %d, want %d", n, tt.attempts)
				}
				if tt.attempts > 0 && e.FirstAt.IsZero() {
					t.Errorf("FirstAt is zero")
				}
				counts := s.Counts()
				want := map[Status]int{Sent: 1, Failed: 0, Uncertain: 0, Pending: 0, Erased: 0}
				want[tt.want]++
				if fmt.Sprint(counts) != fmt.Sprint(want) {
					t.Errorf("Counts = %v, want %v", counts, want)
				}
			}
			check(t, s)
			j.Close()
			check(t, readState(t, path))
		})
	}
}

func TestAppendRejectsBadRecords(t *testing.T) {
	j, s := openJournal(t, filepath.Join(t.TempDir(), "journal"))
	for _, r := range []Record{
		{Type: "start", Agent: "a", Phone: "+1"},
		{Type: TypeIntent, Phone: "+1"},
		{Type: TypeIntent, Agent: "a"},
		{Type: TypeIntent, Agent: "a", Phone: "+1", Status: OutcomeSent},
		{Type: TypeOutcome, Agent: "a", Phone: "+1"},
		{Type: TypeOutcome, Agent: "a", Phone: "+1", Status: "maybe"},
		{Type: TypeIntent, Agent: "a", Phone: "+1", N: -1},
		{Type: TypeIntent, Agent: "a", Phone: "+1", N: 1 << 31},
		{Type: TypeRun, Body: strings.Repeat("x", maxLine)},
		{Type: TypeRun, At: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)},                   // encoding/json cannot write the year
		{Type: TypeRun, At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", 25*3600))}, // nor an offset of a day
	} {
		if err := j.Append(r); err == nil {
			t.Errorf("Append(%+v) succeeded", r)
		}
	}
	if s.Len() != 0 {
		t.Errorf("state has %d contacts", s.Len())
	}
	// The journal still works.
	mustAppend(t, j, intent("a", "+1"))
	if st, _ := s.Status(Key{"a", "+1", 0}); st != Uncertain {
		t.Errorf("status %q", st)
	}
}

func TestTornLastLine(t *testing.T) {
	for _, tail := range []string{
		`{"t":"outcome","agent":"a","phone":"+15550001","sta`,                                         // cut mid-record
		`{"t":"outcome","agent":"a","phone":"+15550001","status":"sent","at":"2026-01-01T00:00:00Z"}`, // cut before its newline
		"\x00\x00\x00\x00\x00\x00",           // zeros after a crash
		"{\"t\":\"outcome\",\"agent\"\x00\n", // garbage on the last line, newline and all
	} {
		t.Run(fmt.Sprintf("%.20q", tail), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal")
			j, _ := openJournal(t, path)
			mustAppend(t, j, intent("a", "+15550001"), intent("a", "+15550002"), outcome("a", "+15550002", OutcomeSent))
			j.Close()
			good, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			appendRaw(t, path, tail)

			// A reader ignores the tail and leaves the file alone.
			s := readState(t, path)
			if st, _ := s.Status(Key{"a", "+15550001", 0}); st != Uncertain {
				t.Errorf("ReadState: status %q, want uncertain (the torn outcome ignored)", st)
			}
			if fi, _ := os.Stat(path); fi.Size() != int64(len(good)+len(tail)) {
				t.Errorf("ReadState changed the file: %d bytes", fi.Size())
			}

			j, s = openJournal(t, path)
			if st, _ := s.Status(Key{"a", "+15550001", 0}); st != Uncertain {
				t.Errorf("status %q, want uncertain", st)
			}
			if st, _ := s.Status(Key{"a", "+15550002", 0}); st != Sent {
				t.Errorf("status %q, want sent", st)
			}
			now, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(now, good) {
				t.Errorf("journal not cut back to its last complete line:\n%q\nwant\n%q", now, good)
			}
			mustAppend(t, j, outcome("a", "+15550001", OutcomeFailed))
			j.Close()
			if recs := journalLines(t, path); len(recs) != 4 || recs[3].Status != OutcomeFailed {
				t.Errorf("journal after the next append: %+v", recs)
			}
			if st, _ := readState(t, path).Status(Key{"a", "+15550001", 0}); st != Failed {
				t.Errorf("status %q after append, want failed", st)
			}
		})
	}
}

func appendRaw(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestCorruptJournal(t *testing.T) {
	const (
		good1 = `{"t":"intent","agent":"a","phone":"+15550001","at":"2026-01-01T00:00:00Z"}` + "\n"
		good2 = `{"t":"outcome","agent":"a","phone":"+15550001","status":"sent","at":"2026-01-01T00:00:01Z"}` + "\n"
	)
	tests := []struct {
		name, content, want string
	}{
		{"bad JSON", good1 + "{\"t\":\"intent\",\"ag\n" + good2, "line 2"},
		{"zeros", good1 + good1 + "\x00\x00\x00\n" + good2, "line 3"},
		{"bad line before a torn one", good1 + "garbage\n" + `{"t":"in`, "line 2"},
		{"unknown type", `{"t":"maybe","agent":"a","phone":"+1"}` + "\n" + good1, "line 1"},
		{"unknown type last", good1 + `{"t":"maybe","agent":"a","phone":"+1"}` + "\n", "line 2"},
		{"unknown status", good1 + `{"t":"outcome","agent":"a","phone":"+15550001","status":"done"}` + "\n" + good2, "line 2"},
		{"no phone", good1 + `{"t":"intent","agent":"a"}` + "\n" + good2, "line 2"},
		{"occurrence number out of range", good1 + `{"t":"intent","agent":"a","phone":"+15550001","n":2147483648}` + "\n" + good2, "line 2"},
		{"names cased otherwise", good1 + `{"T":"outcome","agent":"a","phone":"+15550001","status":"sent"}` + "\n" + good2, "line 2"},
		{"long line", good1 + strings.Repeat("x", maxLine+10) + "\n" + good2, "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "journal")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, _, err := OpenJournal(path, JournalOptions{})
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tt.want+":") {
				t.Errorf("OpenJournal: %v; want an error naming %s and %s", err, path, tt.want)
			}
			if _, err := ReadState(path); err == nil || !strings.Contains(err.Error(), tt.want+":") {
				t.Errorf("ReadState: %v; want an error naming %s", err, tt.want)
			}
			if b, _ := os.ReadFile(path); string(b) != tt.content {
				t.Errorf("the corrupt journal was changed")
			}
		})
	}
}

func TestReplayToleratesBlankAndLongLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	long := Record{Type: TypeOutcome, Agent: "a", Phone: "+15550001", Status: OutcomeFailed, Body: strings.Repeat("é", 100_000)}
	j, _ := openJournal(t, path)
	mustAppend(t, j, intent("a", "+15550001"), long)
	j.Close()
	appendRaw(t, path, "\n  \n")
	s := readState(t, path)
	e, ok := s.Lookup(Key{"a", "+15550001", 0})
	if !ok || e.Status != Failed || e.Body != long.Body {
		t.Errorf("Lookup = %v, %v, body of %d bytes", e.Status, ok, len(e.Body))
	}
}

func TestReadStateMissing(t *testing.T) {
	s := readState(t, filepath.Join(t.TempDir(), "nope"))
	if s.Len() != 0 {
		t.Errorf("Len = %d", s.Len())
	}
	if _, ok := s.Lookup(Key{"a", "+1", 0}); ok {
		t.Errorf("Lookup found something")
	}
}

func TestConcurrentAppend(t *testing.T) {
	const goroutines, each = 64, 500
	path := filepath.Join(t.TempDir(), "journal")
	j, s := openJournal(t, path)
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				phone := fmt.Sprintf("+1%03d%06d", g, i)
				r := intent(fmt.Sprintf("agent-%d", g%3), phone)
				r.Body = strings.Repeat("b", i%200) // lines of many lengths
				if err := j.Append(r); err != nil {
					errs <- err
					return
				}
				// The state follows the file: the record is in it on return.
				if st, ok := s.Status(r.Key()); !ok || st != Uncertain {
					errs <- fmt.Errorf("%s: status %q, %v right after Append", phone, st, ok)
					return
				}
				if i%50 == 0 {
					if e, ok := s.Lookup(r.Key()); !ok || e.Body != r.Body {
						errs <- fmt.Errorf("%s: Lookup %+v", phone, e)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	recs := journalLines(t, path) // every line a whole record: none interleaved
	if len(recs) != goroutines*each {
		t.Fatalf("journal holds %d records, want %d", len(recs), goroutines*each)
	}
	seen := make(map[string]bool)
	for _, r := range recs {
		seen[r.Phone] = true
	}
	s2 := readState(t, path)
	if s2.Len() != goroutines*each || len(seen) != goroutines*each {
		t.Errorf("replayed %d contacts, %d distinct phones; want %d", s2.Len(), len(seen), goroutines*each)
	}
	for g := range goroutines {
		for i := range each {
			k := Key{fmt.Sprintf("agent-%d", g%3), fmt.Sprintf("+1%03d%06d", g, i), 0}
			if st, ok := s2.Status(k); !ok || st != Uncertain {
				t.Fatalf("%v: %q, %v", k, st, ok)
			}
		}
	}
}

func TestStickyWriteError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, s := openJournal(t, path)
	mustAppend(t, j, intent("a", "+15550001"))
	j.sink.(*fileSink).f.Close() // the next write fails

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = j.Append(intent("a", fmt.Sprintf("+1555100%d", i))) })
	}
	wg.Wait()
	for i, err := range errs {
		if err == nil {
			t.Errorf("Append %d succeeded on a closed file", i)
		}
	}
	err := j.Append(intent("a", "+15550009"))
	if err == nil || !strings.Contains(err.Error(), "writing journal") {
		t.Errorf("Append after a failed write: %v; want the sticky write error", err)
	}
	if s.Len() != 1 {
		t.Errorf("state has %d contacts; the failed appends must not be in it", s.Len())
	}
	if err := j.Close(); err == nil {
		t.Errorf("Close returned no error after a failed write")
	}
}

func TestStickySyncError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, s := openJournal(t, path)
	mustAppend(t, j, intent("a", "+15550001"))
	boom := errors.New("disk on fire")
	j.sink.(*fileSink).beforeSync = func() error { return boom }
	if err := j.Append(outcome("a", "+15550001", OutcomeSent)); !errors.Is(err, boom) {
		t.Fatalf("Append: %v; want the fsync error", err)
	}
	// The outcome was written again after the cut, and synced (only the
	// first fsync fails here): the state says what the file says.
	disk, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	want, _ := disk.Status(Key{"a", "+15550001", 0})
	if st, _ := s.Status(Key{"a", "+15550001", 0}); st != want || st != Sent {
		t.Errorf("status %q, the file's %q: the outcome written again after the failed fsync is on disk, and counts", st, want)
	}
	if err := j.Append(intent("a", "+15550002")); !errors.Is(err, boom) {
		t.Errorf("second Append: %v; want the sticky error", err)
	}
	// The outcome was written again after the cut (it is true whether or
	// not its caller learns it), and the sink counts the file's bytes.
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if k := j.sink.(*fileSink); k.size != fi.Size() {
		t.Errorf("the sink counts %d bytes after the cut; the file has %d", k.size, fi.Size())
	}
}

func TestAppendAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, s := openJournal(t, path)
	mustAppend(t, j, intent("a", "+15550001"))
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Append(intent("a", "+15550002")); !errors.Is(err, errJournalClosed) {
		t.Errorf("Append after Close: %v", err)
	}
	// The state stays readable after the journal is closed.
	if e, ok := s.Lookup(Key{"a", "+15550001", 0}); !ok || e.Status != Uncertain || e.FirstAt.IsZero() {
		t.Errorf("Lookup after Close: %+v, %v", e, ok)
	}
}

// TestCloseWaitsForAppends checks that records appended while Close runs
// are either written (Append returned nil) or refused, never lost.
func TestCloseWaitsForAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _ := openJournal(t, path)
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := map[string]bool{}
	for g := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				phone := fmt.Sprintf("+1%02d%06d", g, i)
				if err := j.Append(intent("a", phone)); err != nil {
					return
				}
				mu.Lock()
				acked[phone] = true
				mu.Unlock()
			}
		})
	}
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= 200 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s := readState(t, path)
	for phone := range acked {
		if _, ok := s.Status(Key{"a", phone, 0}); !ok {
			t.Errorf("acknowledged %s missing after Close", phone)
		}
	}
}

// TestJournalFileIsPlainJSONLines checks the file format that people and
// tools read: one JSON object per line, HTML characters not escaped.
func TestJournalFileIsPlainJSONLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, _ := openJournal(t, path)
	at := time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC)
	mustAppend(t, j, Record{Type: TypeOutcome, Agent: "a", Phone: "+15550001", Status: OutcomeFailed, HTTP: 422, Reason: "x < y & z", At: at})
	j.Close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan()
	want := `{"t":"outcome","agent":"a","phone":"+15550001","status":"failed","http":422,"reason":"x < y & z","at":"2026-11-21T09:30:00Z"}`
	if sc.Text() != want {
		t.Errorf("line\n%s\nwant\n%s", sc.Text(), want)
	}
}

func TestLookupWithoutFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	j, s := openJournal(t, path)
	mustAppend(t, j, intent("a", "+15550001"), outcome("a", "+15550001", OutcomeFailed))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Statuses stay; details are gone, and Lookup says so.
	e, ok := s.Lookup(Key{"a", "+15550001", 0})
	if !ok || e.Status != Failed || e.Attempts != 1 || !strings.HasPrefix(e.Reason, "details unavailable") {
		t.Errorf("Lookup after State.Close = %+v, %v", e, ok)
	}
	// The journal goes on without the state's file.
	mustAppend(t, j, intent("a", "+15550002"))
	if st, _ := s.Status(Key{"a", "+15550002", 0}); st != Uncertain {
		t.Errorf("status %q", st)
	}
}

// TestEnqueueIsDurableOnceALaterAppendReturns: a queued record is on disk
// as soon as any Append after it has returned, and Close flushes the rest.
func TestEnqueueIsDurableOnceALaterAppendReturns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, st, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	out := Record{Type: TypeOutcome, Agent: "A", Phone: "+14155550132", Attempt: 1, Status: OutcomeSent}
	if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: "+14155550132", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	queued, err := j.Enqueue(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: "+12125550199", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	disk, err := ReadState(path) // what a crash right now would leave
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := disk.Status(Key{Agent: "A", Phone: "+14155550132"}); s != Sent {
		t.Errorf("the queued outcome is not on disk after a later Append: %s", s)
	}
	disk.Close()
	if err := queued.Wait(); err != nil {
		t.Fatal(err)
	}
	last, err := j.Enqueue(Record{Type: TypeOutcome, Agent: "A", Phone: "+12125550199", Attempt: 1, Status: OutcomeFailed, HTTP: 422})
	if err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := last.Wait(); err != nil {
		t.Fatal(err)
	}
	disk, err = ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	if s, _ := disk.Status(Key{Agent: "A", Phone: "+12125550199"}); s != Failed {
		t.Errorf("Close did not flush the queued outcome: %s", s)
	}
}

// TestEnqueueRidesAlongWithTheNextAppend: a queued record costs no commit
// of its own; it is written and synced with the next Append's batch.
func TestEnqueueRidesAlongWithTheNextAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, st, err := OpenJournal(path, JournalOptions{Linger: time.Hour}) // the linger never fires here
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var syncs atomic.Int32
	j.sink.(*fileSink).beforeSync = func() error { syncs.Add(1); return nil }
	phones := []string{"+14155550132", "+14155550133", "+14155550134"}
	for _, p := range phones {
		if _, err := j.Enqueue(Record{Type: TypeOutcome, Agent: "A", Phone: p, Attempt: 1, Status: OutcomeSent}); err != nil {
			t.Fatal(err)
		}
	}
	if n := syncs.Load(); n != 0 {
		t.Fatalf("%d commits for queued records alone", n)
	}
	if err := j.Append(Record{Type: TypeIntent, Agent: "A", Phone: "+12125550199", Attempt: 1}); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load(); n != 1 {
		t.Errorf("%d commits for three queued records and an Append, want 1", n)
	}
	disk, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	for _, p := range phones {
		if s, _ := disk.Status(Key{Agent: "A", Phone: p}); s != Sent {
			t.Errorf("%s: %q on disk after the Append, want sent", p, s)
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestEnqueueWaitCommits: calling wait commits a queued record at once,
// without waiting for the linger.
func TestEnqueueWaitCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, st, err := OpenJournal(path, JournalOptions{Linger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	queued, err := j.Enqueue(Record{Type: TypeOutcome, Agent: "A", Phone: "+14155550132", Attempt: 1, Status: OutcomeFailed, HTTP: 422})
	if err != nil {
		t.Fatal(err)
	}
	if err := queued.Wait(); err != nil { // would block for an hour if it did not commit
		t.Fatal(err)
	}
	disk, err := ReadState(path)
	if err != nil {
		t.Fatal(err)
	}
	defer disk.Close()
	if s, _ := disk.Status(Key{Agent: "A", Phone: "+14155550132"}); s != Failed {
		t.Errorf("%q on disk after wait, want failed", s)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := queued.Wait(); err != nil { // after Close too
		t.Fatal(err)
	}
}

// TestEnqueueCommitsAfterTheLinger: with nothing else happening, a queued
// record still reaches the disk, within the linger.
func TestEnqueueCommitsAfterTheLinger(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, st, err := OpenJournal(path, JournalOptions{Linger: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	defer j.Close()
	if _, err := j.Enqueue(Record{Type: TypeOutcome, Agent: "A", Phone: "+14155550132", Attempt: 1, Status: OutcomeSent}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second) // generous: a busy machine
	for {
		disk, err := ReadState(path)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := disk.Status(Key{Agent: "A", Phone: "+14155550132"})
		disk.Close()
		if s == Sent {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queued record is not on disk 10s after Enqueue (%q)", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSubmitCommitsAtOnceWithoutWaiting: Submit returns while the fsync
// is still under way, the writer commits the record without a Wait and
// without the linger, and Wait returns only once it is durable, or with
// the fsync's error.
func TestSubmitCommitsAtOnceWithoutWaiting(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	inSync, release := make(chan struct{}, 8), make(chan struct{})
	var fail atomic.Bool
	boom := errors.New("disk gone")
	j, st, err := OpenJournal(path, JournalOptions{Linger: time.Hour, BeforeSync: func() error {
		inSync <- struct{}{}
		<-release
		if fail.Load() {
			return boom
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	key := Key{Agent: "A", Phone: "+14155550132"}
	q, err := j.Submit(Record{Type: TypeIntent, Agent: "A", Phone: key.Phone, Attempt: 1})
	if err != nil {
		t.Fatal(err)
	}
	<-inSync // the writer took it on its own: no Wait, and the linger is an hour
	waited := make(chan error, 1)
	go func() { waited <- q.Wait() }()
	select {
	case err := <-waited:
		t.Fatalf("Wait returned (%v) while the fsync was still under way", err)
	case <-time.After(20 * time.Millisecond):
	}
	if s, _ := st.Status(key); s != "" {
		t.Errorf("the state shows %q before the record is durable", s)
	}
	release <- struct{}{}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if s, _ := st.Status(key); s != Uncertain {
		t.Errorf("the state shows %q once the intent is durable, want uncertain (an intent without an outcome)", s)
	}

	fail.Store(true)
	q, err = j.Submit(Record{Type: TypeOutcome, Agent: "A", Phone: key.Phone, Attempt: 1, Status: OutcomeSent})
	if err != nil {
		t.Fatal(err)
	}
	<-inSync
	release <- struct{}{}
	if err := q.Wait(); !errors.Is(err, boom) {
		t.Errorf("Wait after a failed fsync: %v, want %v", err, boom)
	}
	close(release)
	j.Close()
}

// TestJournalOpenInOneProcessAtATime: while a journal is open, opening it
// again fails with ErrLocked (the state directory's lock file may have
// been deleted under a running process: the journal still keeps a second
// run out), and once it is closed it opens again.
func TestJournalOpenInOneProcessAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal.jsonl")
	j, st, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if j2, st2, err := OpenJournal(path, JournalOptions{}); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), path) {
		if err == nil {
			j2.Close()
			st2.Close()
		}
		t.Fatalf("second open while the first is open: %v, want ErrLocked naming %s", err, path)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j, st3, err := OpenJournal(path, JournalOptions{})
	if err != nil {
		t.Fatalf("open after Close: %v", err)
	}
	st3.Close()
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}
