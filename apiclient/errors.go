package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// maxBodyRead bounds how much of any response body the client reads.
const maxBodyRead = 1 << 20

// ExcerptLen is the longest excerpt of a response body that an [Error] keeps.
const ExcerptLen = 300

// Error is an answer from the service that is not a success: a non-2xx,
// or a 2xx call-start answer whose body says error or is not JSON. It
// carries what a caller needs to decide what to do and what a person needs
// to read: the HTTP status, a bounded excerpt of the body (the service contract does
// not show error bodies, so it is kept as opaque text), what a JSON body
// said went wrong, and the Retry-After the server asked for.
type Error struct {
	Op         string        // what was being done, e.g. "list agents"
	Method     string        // HTTP method
	URL        string        // request URL without query string
	StatusCode int           // HTTP status code
	Body       string        // excerpt of the response body, at most ExcerptLen bytes
	RetryAfter time.Duration // from the Retry-After header; 0 when absent
	// Message is what a JSON body said went wrong (its error, errors or
	// message, or a status that is not a success word), "" when it said
	// nothing readable.
	Message string
	// NotJSON is set on a 2xx call-start answer whose body is not the
	// service's kind of answer (an HTML page, plain text): it may come of
	// a proxy or of the service, and the call may have started.
	NotJSON bool
	// UnknownStatus is set on a 2xx call-start answer whose JSON "status"
	// is neither a word of success nor one of refusal: the call may have
	// started.
	UnknownStatus string
	// Mixed is set on a 2xx call-start answer whose JSON says error (an
	// error or errors that holds something, success: false) beside a
	// status of success or a call id: the call may have started, with a
	// warning, so it is not a refusal.
	Mixed bool
}

func (e *Error) Error() string {
	msg := fmt.Sprintf("%s: %s %s: %d %s", e.Op, e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	switch {
	case e.NotJSON:
		msg += " with a body that is not the service's JSON"
	case e.UnknownStatus != "":
		msg += fmt.Sprintf(" with a status callrun does not know (%q)", e.UnknownStatus)
	case e.Mixed:
		msg += " with a body that says both that the call started and error"
	case e.StatusCode >= 200 && e.StatusCode < 300:
		msg += " with a body that says error"
	}
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
	e := answerError(op, resp, b)
	if v, _ := decodeJSON(b); v != nil {
		e.Message = Excerpt(Redact(errorMessage(v)), ExcerptLen)
	}
	return e
}

// answerError is the *Error of an answer to op whose body b was read.
func answerError(op string, resp *http.Response, b []byte) *Error {
	return &Error{
		Op:         op,
		Method:     resp.Request.Method,
		URL:        redactURL(resp.Request.URL.String()),
		StatusCode: resp.StatusCode,
		Body:       excerptBody(b),
		RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
	}
}

// successWords are the values of a JSON "status" that say a call start
// went well, folded ([foldStatus]).
var successWords = []string{"success", "successful", "ok", "queued", "accepted", "started", "initiated", "in_progress", "ringing",
	"dialing", "dialling", "calling", "created", "scheduled", "pending", "processing", "active", "completed"}

// refusalWords are the values of a JSON "status" that say the service
// refused a call start, folded ([foldStatus]).
var refusalWords = []string{"error", "failed", "failure", "fail", "rejected", "refused", "denied", "declined", "invalid",
	"unauthorized", "forbidden", "blocked", "not_found", "cancelled", "canceled"}

// foldStatus is a "status" as the word lists hold it: lower case, with
// "-" and spaces written "_" ("In-Progress", "in progress": "in_progress").
func foldStatus(s string) string {
	return strings.NewReplacer("-", "_", " ", "_").Replace(strings.ToLower(strings.TrimSpace(s)))
}

// answerSaysError reads the whole body b of a 2xx call-start answer and
// returns an *Error when it is not the plain success it seems:
//
//   - a JSON object whose "status" is a word of refusal, or with an
//     "error" or "errors" key that holds something, or with "success":
//     false, says error: the service refused the call;
//   - a JSON object whose "status" is a string that is neither a word of
//     success nor one of refusal (UnknownStatus), or a body that is not
//     JSON (an HTML page, plain text; NotJSON), is not an answer callrun
//     can read: the call may have started.
//
// An empty body, or JSON without those marks, is a success: nil.
func answerSaysError(resp *http.Response, b []byte) *Error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return nil
	}
	v, err := decodeJSON(trimmed)
	if err != nil {
		if len(b) == answerRead && (trimmed[0] == '{' || trimmed[0] == '[') {
			return nil // JSON too long to judge: the service's kind of answer
		}
		e := answerError("start call", resp, b)
		e.NotJSON = true
		return e
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	says, unknown, started := false, "", false
	switch st := obj["status"].(type) {
	case string:
		switch w := foldStatus(st); {
		case w == "":
			// Blank: no status, as an empty one is.
		case slices.Contains(refusalWords, w):
			says = true
		case slices.Contains(successWords, w):
			started = true
		default:
			unknown = st
		}
	case bool:
		// {"status": false, "message": "Insufficient balance"}, as many
		// PHP and Laravel APIs answer: a refusal, as "success": false is.
		if st {
			started = true
		} else {
			says = true
		}
	case float64:
		// A status written as an HTTP code inside a 2xx: 200-299 is a
		// success, 400-499 a refusal, anything else unreadable. A 5xx
		// in the body is what a 5xx answer is (Classify): the service
		// failed, perhaps after it placed the call; read as a refusal,
		// --retry-failed would call the person again.
		switch {
		case st >= 200 && st < 300:
			started = true
		case st >= 400 && st < 500:
			says = true
		default:
			unknown = strconv.FormatFloat(st, 'f', -1, 64)
		}
	}
	for _, k := range []string{"error", "errors"} {
		if holds(obj[k]) {
			says = true
		}
	}
	if st, has := obj["status"]; !has || st == nil || isBlank(st) {
		// No status: a "result", or a "status" of the answer's "data",
		// that is a word of refusal ({"result": "error"}, {"data":
		// {"status": "failed"}}) is one too. Another word there says
		// nothing: services put anything in them.
		if w, _ := statusElsewhere(obj); slices.Contains(refusalWords, foldStatus(w)) {
			says = true
		}
	}
	if s, isString := obj["success"].(string); isString {
		// A boolean written as a string: "success": "false".
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "false", "0", "no":
			says = true
		case "true", "1", "yes":
			started = true
		}
	}
	if ok, isBool := obj["success"].(bool); isBool && !ok {
		says = true
	} else if isBool {
		// "success": true beside a status of false or an error: the
		// service says it placed the call, so it is no refusal.
		started = true
	}
	if !says && unknown != "" {
		e := answerError("start call", resp, b)
		e.UnknownStatus = Excerpt(Redact(unknown), 60)
		return e
	}
	if !says {
		return nil
	}
	e := answerError("start call", resp, b)
	e.Message = Excerpt(Redact(errorMessage(obj)), ExcerptLen)
	// A status of success, or a call id, beside the error: the service
	// may have placed the call and said what went wrong with it (a
	// warning). Sent again as a refusal would be, with --retry-failed,
	// the person would be called twice.
	e.Mixed = started || answerCallID(trimmed) != ""
	return e
}

// holds reports whether a JSON value says something: not null, false, an
// empty string, array or object.
func holds(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		return strings.TrimSpace(v) != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// isBlank reports whether v is a string of spaces alone ("" too).
func isBlank(v any) bool {
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) == ""
}

// decodeJSON decodes b, one JSON value and nothing after it.
func decodeJSON(b []byte) (any, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the JSON value")
	}
	return v, nil
}

// errorMessage is what a decoded JSON answer says went wrong: its
// "error" (a string, or an object's "message"), its first "errors", its
// "message", or its "status"; "" when it says none of these.
func errorMessage(v any) string {
	obj, ok := v.(map[string]any)
	if !ok {
		return ""
	}
	text := func(v any) string {
		switch v := v.(type) {
		case string:
			return strings.TrimSpace(v)
		case map[string]any:
			for _, k := range []string{"message", "detail", "error", "code"} {
				if s, ok := v[k].(string); ok && strings.TrimSpace(s) != "" {
					return strings.TrimSpace(s)
				}
			}
		case []any:
			if len(v) > 0 {
				if s, ok := v[0].(string); ok {
					return strings.TrimSpace(s)
				}
				if m, ok := v[0].(map[string]any); ok {
					if s, ok := m["message"].(string); ok {
						return strings.TrimSpace(s)
					}
				}
			}
		}
		return ""
	}
	var parts []string
	for _, k := range []string{"error", "errors", "message"} {
		if s := text(obj[k]); s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		switch s := obj["status"].(type) {
		case string:
			if strings.TrimSpace(s) != "" {
				return "status " + s
			}
		case bool, float64:
			return fmt.Sprint("status ", s)
		}
		// Only a word of refusal there is what refused; another
		// ("queued") says nothing of it.
		if w, where := statusElsewhere(obj); slices.Contains(refusalWords, foldStatus(w)) {
			return where + " " + w
		}
		switch s := obj["success"].(type) {
		case string:
			return "success " + s
		case bool:
			return fmt.Sprint("success ", s)
		}
	}
	return strings.Join(parts, ": ")
}

// statusElsewhere returns, for a call-start answer without a "status",
// the word that stands for one, and where: its "result", or its "data"'s
// "status"; "" when neither is a string.
func statusElsewhere(obj map[string]any) (word, where string) {
	if s, ok := obj["result"].(string); ok && strings.TrimSpace(s) != "" {
		return s, "result"
	}
	if d, ok := obj["data"].(map[string]any); ok {
		if s, ok := d["status"].(string); ok {
			return s, "data.status"
		}
	}
	return "", ""
}

// limitWords finds, in a service's message, the words that name a limit
// on the account (concurrent calls, a rate): "limit", "concurrent",
// "too many", "rate".
var limitWords = regexp.MustCompile(`(?i)\b(limit\w*|concurren\w*|too many|rate)\b`)

// Limited reports whether err is an answer that names a limit of the
// service, not a fault of the request: a 429, or a 403, 409 or 503 whose
// message says limit, concurrent, too many or rate. The service did not
// act on it; a run holds every call start back for a while and sends the
// contact again.
func Limited(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden, http.StatusConflict, http.StatusServiceUnavailable:
		msg := e.Message
		if msg == "" {
			msg = e.Body
		}
		return limitWords.MatchString(strings.NewReplacer("_", " ", "-", " ").Replace(msg))
	}
	return false
}

// excerptBody is the excerpt of a body read up to ExcerptLen*4 bytes (or
// more: the rest is left out), with every secret given to AddSecret
// blanked out.
func excerptBody(b []byte) string {
	b = b[:min(len(b), ExcerptLen*4)]
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
