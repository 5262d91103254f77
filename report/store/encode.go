package store

import (
	"strconv"
	"unicode/utf8"
)

// appendRecord appends r as one JSON line (with its newline) to dst,
// byte for byte what a json.Encoder with SetEscapeHTML(false) writes,
// without reflection: a run encodes two records a call. A time that
// encoding/json cannot encode either (a year outside 0-9999, an offset of
// a day or more) is an error, as there.
func appendRecord(dst []byte, r *Record) ([]byte, error) {
	n0 := len(dst)
	dst = append(dst, `{"t":`...)
	dst = appendJSONString(dst, r.Type)
	dst = appendStringField(dst, `,"agent":`, r.Agent)
	dst = appendStringField(dst, `,"phone":`, r.Phone)
	dst = appendIntField(dst, `,"n":`, r.N)
	dst = appendStringField(dst, `,"agent_id":`, r.AgentID)
	dst = appendStringField(dst, `,"sheet":`, r.Sheet)
	dst = appendIntField(dst, `,"row":`, r.Row)
	dst = appendIntField(dst, `,"attempt":`, r.Attempt)
	dst = appendStringField(dst, `,"status":`, r.Status)
	dst = appendIntField(dst, `,"http":`, r.HTTP)
	dst = appendStringField(dst, `,"reason":`, r.Reason)
	dst = appendStringField(dst, `,"body":`, r.Body)
	dst = appendStringField(dst, `,"note":`, r.Note)
	dst = append(dst, `,"at":"`...)
	out, err := r.At.AppendText(dst) // what Time.MarshalJSON writes, unquoted
	if err != nil {
		return dst[:n0], err
	}
	return append(out, "\"}\n"...), nil
}

// appendStringField appends key and s, unless s is empty (omitempty).
func appendStringField(dst []byte, key, s string) []byte {
	if s == "" {
		return dst
	}
	return appendJSONString(append(dst, key...), s)
}

// appendIntField appends key and n, unless n is 0 (omitempty).
func appendIntField(dst []byte, key string, n int) []byte {
	if n == 0 {
		return dst
	}
	return strconv.AppendInt(append(dst, key...), int64(n), 10)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it with HTML escaping off: quote, backslash and control
// characters; invalid UTF-8 as U+FFFD; U+2028 and U+2029.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
