package store

import (
	"bytes"
	"unicode/utf8"
)

// rawRecord is the part of a journal line that replay needs, scanned
// without allocating: typ and status are the package's constants (or ""
// when absent), agent and phone point into the line.
type rawRecord struct {
	typ, status  string
	agent, phone []byte
	n            int
}

// scanRecord reads t, agent, phone, n and status from a journal line that
// json.Valid accepted. It handles the plain shape that Append writes, and
// returns false for anything else (an escape in a key or in one of those
// values, a key repeated or cased differently, a value of another type, an
// unknown type or status), which the caller then decodes with
// encoding/json. It is replay's fast path: a third of the time of
// json.Unmarshal, and no garbage.
func scanRecord(line []byte) (r rawRecord, ok bool) {
	i := skipSpace(line, 0)
	if i == len(line) || line[i] != '{' {
		return r, false
	}
	i++
	var seen uint8
	for {
		i = skipSpace(line, i)
		if i == len(line) {
			return r, false
		}
		switch line[i] {
		case '}':
			return r, true
		case ',':
			i = skipSpace(line, i+1)
		}
		key, j, ok := plainString(line, i)
		if !ok {
			return r, false
		}
		i = skipSpace(line, j)
		if i == len(line) || line[i] != ':' {
			return r, false
		}
		i = skipSpace(line, i+1)

		var bit uint8
		switch string(key) {
		case "t":
			bit = 1
		case "agent":
			bit = 2
		case "phone":
			bit = 4
		case "n":
			bit = 8
		case "status":
			bit = 16
		default:
			// encoding/json matches keys without regard to case (and
			// 'ſ', two bytes, folds to 's': hence the length bound).
			for _, f := range [...]string{"t", "agent", "phone", "n", "status"} {
				if len(key) <= 2*len(f) && bytes.EqualFold(key, []byte(f)) {
					return r, false
				}
			}
			if i, ok = skipValue(line, i); !ok {
				return r, false
			}
			continue
		}
		if seen&bit != 0 {
			return r, false
		}
		seen |= bit
		if bit == 8 {
			if r.n, i, ok = plainInt(line, i); !ok {
				return r, false
			}
			continue
		}
		v, j, ok := plainString(line, i)
		if !ok {
			return r, false
		}
		i = j
		switch bit {
		case 1:
			switch string(v) {
			case TypeIntent:
				r.typ = TypeIntent
			case TypeOutcome:
				r.typ = TypeOutcome
			case TypeRun:
				r.typ = TypeRun
			default:
				return r, false
			}
		case 2, 4:
			if !utf8.Valid(v) {
				return r, false // encoding/json would replace the bad bytes
			}
			if bit == 2 {
				r.agent = v
			} else {
				r.phone = v
			}
		case 16:
			switch string(v) {
			case OutcomeSent:
				r.status = OutcomeSent
			case OutcomeFailed:
				r.status = OutcomeFailed
			case OutcomeUncertain:
				r.status = OutcomeUncertain
			case OutcomeRetry:
				r.status = OutcomeRetry
			case OutcomeSkipped:
				r.status = OutcomeSkipped
			default:
				return r, false
			}
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString returns the contents of the JSON string at b[i] and the
// index after it, or false if there is no string there or it has an
// escape.
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i == len(b) || b[i] != '"' {
		return nil, 0, false
	}
	end := bytes.IndexByte(b[i+1:], '"')
	if end < 0 {
		return nil, 0, false
	}
	s := b[i+1 : i+1+end]
	if bytes.IndexByte(s, '\\') >= 0 {
		return nil, 0, false
	}
	return s, i + 2 + end, true
}

// plainInt returns the JSON integer at b[i] and the index after it, or
// false if there is none there, or it has a fraction or an exponent, or
// it might not fit an int.
func plainInt(b []byte, i int) (int, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start, n := i, 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int(b[i]-'0')
		i++
	}
	if i == start || i-start > 18 || (i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E')) {
		return 0, 0, false
	}
	if neg {
		n = -n
	}
	return n, i, true
}

// skipValue returns the index after the JSON value at b[i], which is
// known to be valid.
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				j, ok := skipString(b, i)
				if !ok {
					return 0, false
				}
				i = j
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default: // a number, true, false or null
		for i < len(b) && bytes.IndexByte([]byte(",}] \t\r\n"), b[i]) < 0 {
			i++
		}
		return i, true
	}
}

// skipString returns the index after the JSON string at b[i].
func skipString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return 0, false
}
