package apiclient

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Redacted is what [Redact] puts where a secret was.
const Redacted = "[redacted]"

// minSecretLen is the shortest secret [AddSecret] keeps, and the
// shortest piece of one that redactCut blanks: shorter ones would blank
// out ordinary text, and no real token or client secret is that short.
const minSecretLen = 4

// secrets holds every secret this process has handled (client secret,
// authorization codes, access and refresh tokens), in every form a text
// from the service could carry it in, and a replacer that blanks them
// all. It only grows: a rotated-away token may still be echoed.
var secrets struct {
	mu       sync.RWMutex
	seen     map[string]bool
	forms    []string // every form of every secret, longest first
	replacer *strings.Replacer
}

// AddSecret makes [Redact] blank out s, in every encoding it can take in
// a text from the service: as it is, form- or URL-encoded (a space as +
// or %20, escapes in upper or lower case, and encoded twice),
// JSON-escaped, and in base64, alone or (when it is long enough) inside
// the base64 of a longer text, as itself or form-encoded. The client and
// token source add the secrets they handle; callrun adds the client
// secret of the campaign file. A secret shorter than 4 bytes is not kept.
func AddSecret(s string) {
	if len(s) < minSecretLen {
		return
	}
	secrets.mu.Lock()
	defer secrets.mu.Unlock()
	if secrets.seen[s] {
		return
	}
	if secrets.seen == nil {
		secrets.seen = map[string]bool{}
	}
	secrets.seen[s] = true
	for _, f := range secretForms(s) {
		if !slices.Contains(secrets.forms, f) {
			secrets.forms = append(secrets.forms, f)
		}
	}
	// Longest first: where two forms start at the same place, the
	// replacer takes the first in argument order.
	slices.SortStableFunc(secrets.forms, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(secrets.forms))
	for _, f := range secrets.forms {
		pairs = append(pairs, f, Redacted)
	}
	secrets.replacer = strings.NewReplacer(pairs...)
}

// Redact returns s with every form of every secret given to [AddSecret]
// replaced by [Redacted]. callrun passes through it whatever text from the
// service it keeps or prints: error bodies and call answers (here), log
// lines and error messages (in main).
func Redact(s string) string {
	secrets.mu.RLock()
	r := secrets.replacer
	secrets.mu.RUnlock()
	if r == nil {
		return s
	}
	return r.Replace(s)
}

// redactCut is Redact for a text that was cut off after its end (a body
// read up to a limit): a secret cut in two there is blanked too, when at
// least minSecretLen bytes of it are left.
func redactCut(s string, cut bool) string {
	s = Redact(s)
	if !cut {
		return s
	}
	secrets.mu.RLock()
	defer secrets.mu.RUnlock()
	for _, f := range secrets.forms {
		for k := min(len(f)-1, len(s)); k >= minSecretLen; k-- {
			if strings.HasSuffix(s, f[:k]) {
				return s[:len(s)-k] + Redacted
			}
		}
	}
	return s
}

var percentEscape = regexp.MustCompile(`%[0-9A-F]{2}`)

// secretForms returns s in every encoding a text could carry it in.
func secretForms(s string) []string {
	query := url.QueryEscape(s) // a space as +, / as %2F, + as %2B, = as %3D
	forms := []string{s, query, strings.ReplaceAll(query, "+", "%20"), url.PathEscape(s), url.QueryEscape(query)}
	for _, f := range forms[1:] {
		forms = append(forms, percentEscape.ReplaceAllStringFunc(f, strings.ToLower))
	}
	forms = append(forms, jsonForms(s)...)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(s)))
	}
	forms = append(forms, base64Cores(s)...)
	if query != s {
		forms = append(forms, base64Cores(query)...)
	}
	slices.Sort(forms)
	return slices.Compact(forms)
}

// jsonForms returns s as the inside of a JSON string, as encoders write
// it: with and without HTML-safe escapes, and with / escaped as \/.
func jsonForms(s string) []string {
	var out []string
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		enc.Encode(s) //nolint:errcheck // a string always encodes
		q := strings.TrimSuffix(b.String(), "\n")
		q = q[1 : len(q)-1]
		out = append(out, q, strings.ReplaceAll(q, "/", `\/`))
	}
	return out
}

// minBase64Core is the shortest run of base64 characters base64Cores
// keeps: 72 bits, which ordinary text does not hold by chance.
const minBase64Core = 12

// base64Cores returns the characters that s alone makes in the base64
// (standard and URL alphabets) of a longer text that holds it, at each
// of the three alignments s can start at: a service that echoes a whole
// request in base64 (a form body, a header) holds those, and not the
// base64 of s alone. The characters whose bits the text around s shares
// are left out; a form shorter than minBase64Core is not kept.
func base64Cores(s string) []string {
	var out []string
	for k := range 3 {
		b := append(make([]byte, k), s...)
		// Character i holds bits [6i, 6i+6); s's are [8k, 8k+8*len(s)).
		from, to := (8*k+5)/6, (8*k+8*len(s))/6
		if to-from < minBase64Core {
			continue
		}
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			out = append(out, enc.EncodeToString(b)[from:to])
		}
	}
	return out
}
