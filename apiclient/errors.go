package apiclient

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBodyRead bounds how much of any response body the client reads.
const maxBodyRead = 1 << 20

// ExcerptLen is the longest excerpt of a response body that an [Error] keeps.
const ExcerptLen = 300

// Error is a non-2xx answer from the service. It carries what a caller needs
// to decide what to do and what a person needs to read: the HTTP status, a
// bounded excerpt of the body (the spec does not show error bodies, so it is
// kept as opaque text), and the Retry-After the server asked for.
type Error struct {
	Op         string        // what was being done, e.g. "list agents"
	Method     string        // HTTP method
	URL        string        // request URL without query string
	StatusCode int           // HTTP status code
	Body       string        // excerpt of the response body, at most ExcerptLen bytes
	RetryAfter time.Duration // from the Retry-After header; 0 when absent
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s %s: %d %s", e.Op, e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// checkResponse returns nil for a 2xx response and an *Error otherwise. It
// reads (a bounded part of) the body of an error response, and closes it.
func checkResponse(op string, resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, ExcerptLen*4))
	return &Error{
		Op:         op,
		Method:     resp.Request.Method,
		URL:        redactURL(resp.Request.URL.String()),
		StatusCode: resp.StatusCode,
		Body:       excerptBody(b),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
}

// excerptBody is the excerpt of a body read up to ExcerptLen*4 bytes,
// with every secret given to AddSecret blanked out.
func excerptBody(b []byte) string {
	return Excerpt(redactCut(string(b), len(b) == ExcerptLen*4), ExcerptLen)
}

// Excerpt returns s with runs of white space folded to one space, cut to at
// most n bytes on a rune boundary, with "…" appended when it was cut.
func Excerpt(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// parseRetryAfter reads a Retry-After header: delay-seconds or an HTTP date.
// It returns 0 when the header is absent or unreadable.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second)
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// redactURL drops the query string and any user information from a URL, so
// that an error message never repeats a credential that rode in a URL.
func redactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i]
	}
	if i := strings.Index(raw, "://"); i >= 0 {
		rest := raw[i+3:]
		host := rest
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			host = rest[:j]
		}
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			raw = raw[:i+3] + rest[at+1:]
		}
	}
	return raw
}

// originOf returns the scheme and host of a URL and nothing else. A call
// endpoint's path is unique to its agent and may be all it takes to start
// calls, so errors, logs and reports name only its origin.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the call endpoint"
	}
	return u.Scheme + "://" + u.Host
}

// StatusCode returns the HTTP status carried by err, or 0 when err is not
// (and does not wrap) an *Error.
func StatusCode(err error) int {
	var e *Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// RetryAfter returns the Retry-After the service sent with err, or 0.
// Callers cap it: a server may ask for an hour.
func RetryAfter(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) {
		return e.RetryAfter
	}
	return 0
}
