package store

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sync"
)

// CallIndex answers, as [CallKeysOf] does, which of some call ids the
// campaign's journal holds the outcome of, and its contact, for a
// process that asks for every call it hears of (`callrun listen`, which
// must tell callrun's own calls from those the service placed on its
// own). In files it keeps, a journal file (a shard's) each, where in the
// file the last line that names each call id begins: it reads each file
// whole on first use, then only the lines appended since ([follower]),
// and reads it whole again when it was cut under the lines read or
// replaced (an erase); every answer first catches up to the end of every
// journal file, so a line written before the question is in it. A call
// id found is read back from its line (a line that does not say so
// after all, or an id the journal writes escaped, is looked for in the
// whole journal, as CallKeysOf does). In PostgreSQL it asks the table,
// by the index of the lines' call ids. Safe for concurrent use.
type CallIndex struct {
	s Store

	mu    sync.Mutex
	files map[string]*journalCalls // by journal path
}

// journalCalls is what a CallIndex knows of one journal file.
type journalCalls struct {
	fl follower[callLine]
	at map[string]int64 // call id: where its last line begins
}

// callLine is a journal line as a CallIndex reads it: the call id it
// names, and its length; id "" for none, or for one written with a JSON
// escape (the journal writes the ids it is asked, [plainQuoted], as they
// are, as CallKeysOf assumes too).
type callLine struct {
	id string
	n  int64
}

var callIDKey = []byte(`"call_id":"`)

// decodeCallLine reads the call id of a journal line without decoding
// the line: the first "call_id" of a line is the record's own (the
// fields before it are strings, whose quotes JSON escapes).
func decodeCallLine(line []byte, c *callLine) error {
	c.n = int64(len(line))
	i := bytes.Index(line, callIDKey)
	if i < 0 {
		return nil
	}
	rest := line[i+len(callIDKey):]
	if j := bytes.IndexAny(rest, `"\`); j >= 0 && rest[j] == '"' {
		c.id = string(rest[:j])
	}
	return nil
}

// NewCallIndex returns the index of the call ids of s's journal.
func NewCallIndex(s Store) *CallIndex {
	return &CallIndex{s: s, files: map[string]*journalCalls{}}
}

// Keys returns the contact of each call id of ids that the journal holds
// the outcome of, as [CallKeysOf] does.
func (x *CallIndex) Keys(ctx context.Context, ids map[string]bool) (map[string]Key, error) {
	f, ok := x.s.(Files)
	if !ok || len(ids) == 0 || plainQuoted(ids) == nil {
		return CallKeysOf(ctx, x.s, ids)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	journals, err := f.journals()
	if err != nil {
		return nil, err
	}
	keys := map[string]Key{}
	seen := map[string]bool{}
	for _, j := range journals { // a later journal's outcome of a call id wins, as in CallKeysOf
		path := j.Journal()
		seen[path] = true
		jc := x.files[path]
		if jc == nil {
			jc = &journalCalls{
				fl: follower[callLine]{path: path, what: "a journal line", valid: func(*callLine) bool { return true }, lenient: true, decode: decodeCallLine},
				at: map[string]int64{},
			}
			x.files[path] = jc
		}
		file, err := os.Open(path)
		if err != nil && !os.IsNotExist(err) {
			return nil, err
		}
		if file == nil {
			jc.fl.forget()
			jc.at = map[string]int64{}
			continue
		}
		found, err := jc.keys(file, ids)
		file.Close()
		if err != nil {
			jc.fl.forget()
			jc.at = map[string]int64{}
			return nil, fmt.Errorf("reading journal %s: %w", path, err)
		}
		for id, k := range found {
			keys[id] = k
		}
	}
	for path := range x.files {
		if !seen[path] {
			delete(x.files, path) // a shard's journal no longer of the campaign's
		}
	}
	return keys, nil
}

// keys catches jc up to the end of file, its journal open, and returns
// the contacts of the ids of ids whose outcome it holds.
func (jc *journalCalls) keys(file *os.File, ids map[string]bool) (map[string]Key, error) {
	if _, err := jc.fl.read(file, func() { jc.at = map[string]int64{} }, func(c callLine, end int64) {
		if c.id != "" {
			jc.at[c.id] = end - c.n
		}
	}); err != nil {
		return nil, err
	}
	keys := map[string]Key{}
	whole := false
	var scratch []byte
	for id := range ids {
		at, ok := jc.at[id]
		if !ok {
			continue
		}
		line, err := lineAt(file, at, &scratch)
		if err != nil {
			return nil, err
		}
		before := len(keys)
		callKey(line, ids, keys)
		if len(keys) == before {
			whole = true // not the outcome it was taken for: read as CallKeysOf does
		}
	}
	if whole {
		// CallKeysOf's reading of the file, as it is now, decides.
		keys = map[string]Key{}
		quoted := plainQuoted(ids)
		err := (&fileRecords{path: jc.fl.path, f: file}).eachLine(func(line []byte) {
			if containsAnyOf(line, quoted) {
				callKey(line, ids, keys)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	return keys, nil
}

func containsAnyOf(line []byte, quoted [][]byte) bool {
	for _, q := range quoted {
		if bytes.Contains(line, q) {
			return true
		}
	}
	return false
}

// lineAt reads the line of file that begins at off, with its newline.
func lineAt(file *os.File, off int64, scratch *[]byte) ([]byte, error) {
	buf := (*scratch)[:0]
	chunk := make([]byte, 512)
	for {
		n, err := file.ReadAt(chunk, off+int64(len(buf)))
		if i := bytes.IndexByte(chunk[:n], '\n'); i >= 0 {
			buf = append(buf, chunk[:i+1]...)
			*scratch = buf
			return buf, nil
		}
		buf = append(buf, chunk[:n]...)
		if err != nil {
			*scratch = buf
			return buf, nil // the file's last line, without its newline
		}
	}
}
