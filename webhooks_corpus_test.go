package main

import (
	"bufio"
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"encoding/xml"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign/phone"
)

// webhookCorpus is the directory of real senders' webhook deliveries that
// testdata/webhooks/README.md describes.
const webhookCorpus = "testdata/webhooks"

// webhookCase is one request of the webhook corpus: NAME.http and
// NAME.want.json. A name NAME.N belongs to the sequence NAME, posted in
// order of N to one store.
type webhookCase struct {
	Name string // the file name without .http
	Seq  string // the sequence, or "" for a case alone
	Step int    // the place in the sequence, from 1; 0 alone
	raw  []byte
	Want webhookWant
}

// webhookWant is a case's .want.json: what `callrun listen` must make of
// the request (see the corpus's README for each key).
type webhookWant struct {
	Number  string `json:"number"`
	Event   string `json:"event"`
	Agent   string `json:"agent"`
	OptOut  bool   `json:"opt_out"`
	Outcome string `json:"outcome"`
	Stored  bool   `json:"stored"`
	Status  int    `json:"status"`
	Source  string `json:"source"`
	Note    string `json:"note"`
	// The optional keys: absent means the default the README gives.
	Via           string   `json:"via,omitempty"`
	Deliveries    *int     `json:"deliveries,omitempty"`
	ServiceStarts *int     `json:"service_starts,omitempty"`
	DoNotCall     []string `json:"do_not_call,omitempty"`
	BlocksRuns    *bool    `json:"blocks_runs,omitempty"`
}

// webhookVars are the values a case's placeholders take.
type webhookVars struct {
	AgentID, OtherAgentID, CallID string
	SigningSecret                 string // signs {{SIGNATURE}}
}

// readWebhookCases reads every case of the corpus, in name order, and
// fails t on a file it cannot read or a want it cannot decode strictly.
func readWebhookCases(t testing.TB) []webhookCase {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(webhookCorpus, "*.http"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no cases in %s: %v", webhookCorpus, err)
	}
	var cases []webhookCase
	for _, p := range paths {
		c := webhookCase{Name: strings.TrimSuffix(filepath.Base(p), ".http")}
		if seq, step, ok := strings.Cut(c.Name, "."); ok {
			n, err := strconv.Atoi(step)
			if err != nil || n < 1 {
				t.Fatalf("%s: a sequence step is NAME.N with N from 1", p)
			}
			c.Seq, c.Step = seq, n
		}
		if c.raw, err = os.ReadFile(p); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(webhookCorpus, c.Name+".want.json"))
		if err != nil {
			t.Fatalf("%s has no want: %v", p, err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.Want); err != nil {
			t.Fatalf("%s.want.json: %v", c.Name, err)
		}
		cases = append(cases, c)
	}
	return cases
}

// request returns the case's request with its placeholders replaced by v,
// its Content-Length set to its body's, and {{SIGNATURE}} computed as the
// README says: over the body as sent when it stands in a header, over the
// body without its signature member when it is that member.
func (c webhookCase) request(t testing.TB, v webhookVars) *http.Request {
	t.Helper()
	head, body, ok := bytes.Cut(c.raw, []byte("\r\n\r\n"))
	if !ok {
		t.Fatalf("%s: no blank line (CRLF CRLF) after the head", c.Name)
	}
	sub := strings.NewReplacer("{{AGENT_ID}}", v.AgentID, "{{OTHER_AGENT_ID}}", v.OtherAgentID, "{{CALL_ID}}", v.CallID)
	h, b := sub.Replace(string(head)), sub.Replace(string(body))
	const member = `,"signature":"{{SIGNATURE}}"}`
	switch {
	case strings.Contains(b, "{{SIGNATURE}}"):
		unsigned, found := strings.CutSuffix(b, member)
		if !found {
			t.Fatalf("%s: {{SIGNATURE}} in the body must be its last member, %s", c.Name, member)
		}
		unsigned += "}"
		b = strings.Replace(b, "{{SIGNATURE}}", signWebhookBody([]byte(unsigned), v.SigningSecret), 1)
	case strings.Contains(h, "{{SIGNATURE}}"):
		h = strings.ReplaceAll(h, "{{SIGNATURE}}", signWebhookBody([]byte(b), v.SigningSecret))
	}
	var lines []string
	for _, l := range strings.Split(h, "\r\n") {
		if name, _, _ := strings.Cut(l, ":"); !strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			lines = append(lines, l)
		}
	}
	if len(b) > 0 || !strings.HasPrefix(h, "GET ") {
		lines = append(lines, "Content-Length: "+strconv.Itoa(len(b)))
	}
	wire := strings.Join(lines, "\r\n") + "\r\n\r\n" + b
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(wire)))
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	return r
}

// signWebhookBody is the documented signature of body under secret:
// "sha256=" and the lowercase hex HMAC-SHA256.
func signWebhookBody(body []byte, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// TestWebhookCorpus checks the corpus is what its README says: every case
// a request net/http reads once its placeholders are replaced, with a body
// its Content-Type describes, and a want whose keys and values are all
// there and make sense together.
func TestWebhookCorpus(t *testing.T) {
	cases := readWebhookCases(t)
	if len(cases) < 55 {
		t.Errorf("%d cases, want 55 or more", len(cases))
	}
	contacts := webhookContacts(t)
	rules := phone.NewRules("US", nil, nil, "")
	vars := webhookVars{AgentID: "agent_07a9005357b35d0943f7359ad9", OtherAgentID: "agent_1b2c3d4e5f60718293a4b5c6d7",
		CallID: "call_41", SigningSecret: "whsec_corpus"}
	required := []string{"number", "event", "agent", "opt_out", "outcome", "stored", "status", "source", "note"}
	steps := map[string][]int{}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(webhookCorpus, c.Name+".want.json"))
			if err != nil {
				t.Fatal(err)
			}
			var keys map[string]json.RawMessage
			if err := json.Unmarshal(raw, &keys); err != nil {
				t.Fatal(err)
			}
			for _, k := range required {
				if _, ok := keys[k]; !ok {
					t.Errorf("want lacks %q", k)
				}
			}
			checkWebhookWant(t, c, contacts, func(s string) bool {
				n, err := phone.Read(s, rules)
				return err == nil && n.E164 == s
			})
			r := c.request(t, vars)
			checkWebhookRequest(t, c, r, vars)
		})
		if c.Seq != "" {
			steps[c.Seq] = append(steps[c.Seq], c.Step)
		}
	}
	for seq, got := range steps {
		slices.Sort(got)
		for i, n := range got {
			if n != i+1 {
				t.Errorf("sequence %s has steps %v, want 1 to %d", seq, got, len(got))
				break
			}
		}
	}
	// No stray file: every other file is a case's want or one the README
	// names.
	entries, err := os.ReadDir(webhookCorpus)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, c := range cases {
		names[c.Name+".http"], names[c.Name+".want.json"] = true, true
	}
	for _, e := range entries {
		if n := e.Name(); !names[n] && !slices.Contains([]string{"README.md", "contacts.csv", "signature-vector.json", ".gitattributes"}, n) {
			t.Errorf("stray file %s (a want without its .http, or the reverse)", n)
		}
	}
}

// webhookContacts reads the numbers of the corpus's contacts.csv.
func webhookContacts(t *testing.T) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(webhookCorpus, "contacts.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 || rows[0][0] != "Phone" {
		t.Fatalf("contacts.csv: %v", err)
	}
	out := map[string]bool{}
	for _, r := range rows[1:] {
		out[r[0]] = true
	}
	return out
}

var webhookOutcomes = []string{"", "started", "answered", "ended", "other", "reported"}

// checkWebhookWant checks a want's values and that they agree: valid
// numbers, known agent, outcome and path, a source to read, and an
// unreadable opt-out always blocking runs.
func checkWebhookWant(t *testing.T, c webhookCase, contacts map[string]bool, valid func(string) bool) {
	w := c.Want
	if w.Number != "" && !valid(w.Number) {
		t.Errorf("number %q is not a valid number in E.164", w.Number)
	}
	if !slices.Contains([]string{"campaign", "other", "none"}, w.Agent) {
		t.Errorf("agent %q: want campaign, other or none", w.Agent)
	}
	if !slices.Contains(webhookOutcomes, w.Outcome) {
		t.Errorf("outcome %q: want one of %q", w.Outcome, webhookOutcomes)
	}
	if w.Outcome != "" && !contacts[w.Number] {
		t.Errorf("outcome %q for %q, which is no contact's number", w.Outcome, w.Number)
	}
	if !slices.Contains([]int{200, 400, 401, 413}, w.Status) {
		t.Errorf("status %d: want 200, 400, 401 or 413", w.Status)
	}
	if w.Status != 200 && w.Stored && (w.Status != 400 || w.Deliveries == nil) {
		t.Errorf("stored with status %d (only an array some of whose elements are refused, 400, stores its deliveries)", w.Status)
	}
	if w.Status == 200 && !w.Stored && c.Step < 2 {
		t.Error("answered 200 and not stored, but it retries nothing before it (not a later step of a sequence)")
	}
	if u, err := url.Parse(w.Source); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		t.Errorf("source %q: want the page's URL", w.Source)
	}
	if strings.TrimSpace(w.Note) == "" {
		t.Error("empty note")
	}
	if !slices.Contains([]string{"", "account", "agent"}, w.Via) {
		t.Errorf("via %q: want account or agent", w.Via)
	}
	if w.Deliveries != nil && *w.Deliveries < 1 {
		t.Errorf("deliveries %d", *w.Deliveries)
	}
	for _, n := range w.DoNotCall {
		if !contacts[n] {
			t.Errorf("do_not_call holds %s, no contact's number", n)
		}
	}
	if w.OptOut && w.Number == "" && w.Status == 200 && (w.BlocksRuns == nil || !*w.BlocksRuns) {
		t.Error("an opt-out whose number is unreadable must block runs (blocks_runs: true)")
	}
	if w.BlocksRuns != nil && *w.BlocksRuns && (!w.OptOut || w.Number != "") {
		t.Error("blocks_runs without an unreadable opt-out")
	}
}

// checkWebhookRequest checks the request read from a case: no placeholder
// left, the path under /hook, a body its Content-Type describes, and a
// signature in the body's last member that signs the bytes before it.
func checkWebhookRequest(t *testing.T, c webhookCase, r *http.Request, v webhookVars) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	if r.URL.Path != "/hook" {
		t.Errorf("path %q, want /hook", r.URL.Path)
	}
	if strings.Contains(r.URL.RawQuery+string(body), "{{") || slices.ContainsFunc(headerValues(r.Header), func(s string) bool { return strings.Contains(s, "{{") }) {
		t.Error("a placeholder is left after substitution")
	}
	if r.Method == http.MethodGet {
		if len(body) != 0 || r.URL.RawQuery == "" {
			t.Errorf("GET with body %q and query %q", body, r.URL.RawQuery)
		}
		if _, err := url.ParseQuery(r.URL.RawQuery); err != nil {
			t.Errorf("query: %v", err)
		}
		return
	}
	if r.Method != http.MethodPost || int64(len(body)) != r.ContentLength || len(body) == 0 {
		t.Fatalf("%s with %d bytes of body (Content-Length %d)", r.Method, len(body), r.ContentLength)
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", r.Header.Get("Content-Type"), err)
	}
	switch mt {
	case "application/json":
		var doc any
		if err := json.Unmarshal(body, &doc); err != nil {
			t.Fatalf("JSON body: %v", err)
		}
		switch d := doc.(type) {
		case map[string]any:
			if sig, ok := d["signature"].(string); ok && strings.Contains(string(c.raw), "{{SIGNATURE}}") {
				unsigned, _ := bytes.CutSuffix(body, []byte(`,"signature":"`+sig+`"}`))
				if want := signWebhookBody(append(slices.Clone(unsigned), '}'), v.SigningSecret); sig != want {
					t.Errorf("signature %s does not sign the body before it (want %s)", sig, want)
				}
			}
		case []any:
			objects := 0 // the elements that are deliveries: objects with members
			for _, e := range d {
				if m, ok := e.(map[string]any); ok && len(m) > 0 {
					objects++
				}
			}
			if want := c.Want.Deliveries; len(d) == 0 || (want != nil && objects != *want) {
				t.Errorf("an array of %d elements, %d of them deliveries; want a non-empty array and deliveries as the want says (%v)", len(d), objects, want != nil)
			}
		default:
			t.Errorf("JSON body is neither an object nor an array: %s", body)
		}
	case "application/x-www-form-urlencoded":
		if _, err := url.ParseQuery(string(body)); err != nil {
			t.Errorf("form body: %v", err)
		}
	case "text/xml":
		// A SOAP envelope: XML that parses.
		dec := xml.NewDecoder(bytes.NewReader(body))
		for {
			if _, err := dec.Token(); err != nil {
				if err != io.EOF {
					t.Errorf("XML body: %v", err)
				}
				break
			}
		}
	case "application/x-ndjson":
		// Newline-delimited JSON: each non-blank line a JSON object.
		lines := 0
		for _, l := range bytes.Split(body, []byte("\n")) {
			if l = bytes.TrimSpace(l); len(l) == 0 {
				continue
			}
			var obj map[string]any
			if err := json.Unmarshal(l, &obj); err != nil {
				t.Errorf("an NDJSON line is no JSON object: %v", err)
			}
			lines++
		}
		if want := c.Want.Deliveries; lines < 2 || want != nil && lines != *want {
			t.Errorf("%d NDJSON lines; want two or more, as the want's deliveries say", lines)
		}
	case "multipart/form-data":
		f, err := multipart.NewReader(bytes.NewReader(body), params["boundary"]).ReadForm(1 << 20)
		if err != nil || len(f.Value) == 0 {
			t.Errorf("multipart body: %v", err)
		}
	default:
		t.Errorf("Content-Type %s", mt)
	}
}

func headerValues(h http.Header) []string {
	var out []string
	for _, vs := range h {
		out = append(out, vs...)
	}
	return out
}

// TestWebhookSignatureVector: the signature the documentation's own
// verify_signature accepts for its example payload (computed with Python,
// kept in signature-vector.json) is what the corpus and the sandbox sign.
func TestWebhookSignatureVector(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(webhookCorpus, "signature-vector.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Page, Secret, Payload, Signature, Note string }
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^sha256=[0-9a-f]{64}$`).MatchString(v.Signature) || v.Secret == "" || v.Payload == "" {
		t.Fatalf("vector %+v", v)
	}
	if got := signWebhookBody([]byte(v.Payload), v.Secret); got != v.Signature {
		t.Errorf("corpus signs %s, the documentation's function %s", got, v.Signature)
	}
	if got := sandbox.SignEnvelope([]byte(v.Payload), v.Secret); got != v.Signature {
		t.Errorf("sandbox signs %s, the documentation's function %s", got, v.Signature)
	}
}
