package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"time"
)

// Run is what the journal says of one run: when it started and ended,
// how, and how many call starts it sent when. `callrun report` puts the
// latest run's figures in summary.json, so that a report rebuilt after a
// kill -9 keeps the rate and elapsed time of the run that was killed, and
// report.html draws every run's call starts.
type Run struct {
	StartedAt time.Time // the run record's time
	Note      string    // what the run record says: pid, host, shard
	LastAt    time.Time // the time of the run's last record
	// Calls counts the attempts that reached an outcome other than retry
	// or skipped, and those whose intent has no outcome (in flight when
	// the run was killed), as the run itself counts call starts.
	Calls int
	// EndedAt and Ending are the run's end record's time and note (how it
	// ended: complete, interrupted, ...); both are zero when the run left
	// none: it was killed, or was made by a callrun that wrote none.
	EndedAt time.Time
	Ending  string
	// PerMinute counts the intents written in each minute of the run,
	// from the minute StartedAt falls in; PerSecond in each second of its
	// first SecondsKept, from the second StartedAt falls in.
	PerMinute, PerSecond []int
}

// SecondsKept is how much of a run's start Run.PerSecond counts.
const SecondsKept = 10 * time.Minute

// maxRunMinutes bounds Run.PerMinute: an intent dated further from its
// run's start (a clock set wrong) is counted in the last minute.
const maxRunMinutes = 31 * 24 * 60

// ReadRuns scans the journal at path for its runs, oldest first. A
// journal with no run in it, or none at all, gives none.
func ReadRuns(path string) ([]Run, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rs runScan
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		rs.line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return rs.result(), nil
}

var (
	runMark, endMark    = []byte(`"t":"run"`), []byte(`"t":"end"`)
	erasedMark          = []byte(`"t":"erased"`)
	intentMark          = []byte(`"t":"intent"`)
	outcomeMark         = []byte(`"t":"outcome"`)
	retryMark, skipMark = []byte(`"status":"retry"`), []byte(`"status":"skipped"`)
	atMark              = []byte(`"at":"`)
)

// runScan finds the runs in journal lines fed to it in order. Records
// before the first run record (none in a journal callrun wrote) belong
// to no run.
type runScan struct {
	runs              []Run
	cur               *Run
	intents, notCalls int
}

func (s *runScan) line(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 || bytes.Contains(line, erasedMark) {
		return // a tombstone is no call: it moves no run's times
	}
	switch {
	case bytes.Contains(line, runMark):
		var r Record
		if json.Unmarshal(line, &r) != nil {
			return // a torn last line
		}
		s.finish()
		s.runs = append(s.runs, Run{StartedAt: r.At, Note: r.Note, LastAt: r.At})
		s.cur = &s.runs[len(s.runs)-1]
		return
	case s.cur == nil:
		return
	case bytes.Contains(line, endMark):
		var r Record
		if json.Unmarshal(line, &r) != nil {
			return
		}
		s.cur.EndedAt, s.cur.Ending, s.cur.LastAt = r.At, r.Note, r.At
		return
	}
	at, ok := lineTime(line)
	if !ok {
		return // a torn last line
	}
	switch {
	case bytes.Contains(line, intentMark):
		s.intents++
		m := int(at.Sub(s.cur.StartedAt.Truncate(time.Minute)) / time.Minute)
		m = min(max(m, 0), maxRunMinutes)
		for len(s.cur.PerMinute) <= m {
			s.cur.PerMinute = append(s.cur.PerMinute, 0)
		}
		s.cur.PerMinute[m]++
		if sec := at.Sub(s.cur.StartedAt.Truncate(time.Second)); sec < SecondsKept {
			i := max(int(sec/time.Second), 0)
			for len(s.cur.PerSecond) <= i {
				s.cur.PerSecond = append(s.cur.PerSecond, 0)
			}
			s.cur.PerSecond[i]++
		}
	case bytes.Contains(line, outcomeMark) && (bytes.Contains(line, retryMark) || bytes.Contains(line, skipMark)):
		s.notCalls++
	}
	s.cur.LastAt = at
}

// lineTime returns the time of a journal line ("at", the last field
// callrun writes), without decoding the rest; false for a torn line.
func lineTime(line []byte) (time.Time, bool) {
	i := bytes.LastIndex(line, atMark)
	if i < 0 {
		return time.Time{}, false
	}
	v := line[i+len(atMark):]
	j := bytes.IndexByte(v, '"')
	if j < 0 {
		return time.Time{}, false
	}
	var t time.Time
	if t.UnmarshalText(v[:j]) != nil {
		return time.Time{}, false
	}
	return t, true
}

// finish sets the current run's call count.
func (s *runScan) finish() {
	if s.cur != nil {
		s.cur.Calls = max(s.intents-s.notCalls, 0)
	}
	s.intents, s.notCalls = 0, 0
}

func (s *runScan) result() []Run {
	s.finish()
	s.cur = nil
	return s.runs
}
