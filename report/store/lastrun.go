package store

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"time"
)

// LastRun is what the journal says of its latest run: when it started,
// when its last record was written, and how many call starts it sent.
// `callrun report` puts it in summary.json, so that a report rebuilt after
// a kill -9 keeps the rate and elapsed time of the run that was killed.
type LastRun struct {
	StartedAt, LastAt time.Time
	Calls             int
}

// ReadLastRun scans the journal at path for its latest run. A journal
// with no run in it, or none at all, gives a zero LastRun. Calls counts the
// attempts that reached an outcome other than retry or skipped, and those
// whose intent has no outcome (in flight when the run was killed), as the
// run itself counts call starts.
func ReadLastRun(path string) (LastRun, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return LastRun{}, nil
	}
	if err != nil {
		return LastRun{}, err
	}
	defer f.Close()
	var lr lastRunScan
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		lr.line(sc.Bytes())
	}
	if err := sc.Err(); err != nil {
		return LastRun{}, err
	}
	return lr.result(), nil
}

var (
	runMark, intentMark = []byte(`"t":"run"`), []byte(`"t":"intent"`)
	outcomeMark         = []byte(`"t":"outcome"`)
	retryMark, skipMark = []byte(`"status":"retry"`), []byte(`"status":"skipped"`)
)

// lastRunScan finds the latest run in journal lines fed to it in order.
type lastRunScan struct {
	lr                LastRun
	intents, notCalls int
	last, beforeLast  []byte
}

func (s *lastRunScan) line(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	switch {
	case bytes.Contains(line, runMark):
		var r Record
		if json.Unmarshal(line, &r) == nil {
			s.lr, s.intents, s.notCalls = LastRun{StartedAt: r.At}, 0, 0
		}
	case bytes.Contains(line, intentMark):
		s.intents++
	case bytes.Contains(line, outcomeMark) && (bytes.Contains(line, retryMark) || bytes.Contains(line, skipMark)):
		s.notCalls++
	}
	s.beforeLast, s.last = s.last, append(s.beforeLast[:0], line...)
}

func (s *lastRunScan) result() LastRun {
	if s.lr.StartedAt.IsZero() {
		return LastRun{}
	}
	lr := s.lr
	lr.Calls = max(s.intents-s.notCalls, 0)
	for _, line := range slices.Backward([][]byte{s.beforeLast, s.last}) {
		var r Record
		if json.Unmarshal(line, &r) == nil { // a torn last line is passed over
			lr.LastAt = r.At
			break
		}
	}
	return lr
}
