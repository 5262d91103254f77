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
	var (
		lr                  LastRun
		intents, notCalls   int
		last, beforeLast    []byte
		runMark, intentMark = []byte(`"t":"run"`), []byte(`"t":"intent"`)
		outcomeMark         = []byte(`"t":"outcome"`)
		retryMark, skipMark = []byte(`"status":"retry"`), []byte(`"status":"skipped"`)
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		switch {
		case bytes.Contains(line, runMark):
			var r Record
			if json.Unmarshal(line, &r) == nil {
				lr, intents, notCalls = LastRun{StartedAt: r.At}, 0, 0
			}
		case bytes.Contains(line, intentMark):
			intents++
		case bytes.Contains(line, outcomeMark) && (bytes.Contains(line, retryMark) || bytes.Contains(line, skipMark)):
			notCalls++
		}
		beforeLast, last = last, append(beforeLast[:0], line...)
	}
	if err := sc.Err(); err != nil {
		return LastRun{}, err
	}
	if lr.StartedAt.IsZero() {
		return LastRun{}, nil
	}
	lr.Calls = max(intents-notCalls, 0)
	for _, line := range slices.Backward([][]byte{beforeLast, last}) {
		var r Record
		if json.Unmarshal(line, &r) == nil { // a torn last line is passed over
			lr.LastAt = r.At
			break
		}
	}
	return lr, nil
}
