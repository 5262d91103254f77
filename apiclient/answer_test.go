package apiclient

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestCallAnswerBodies: what a 2xx call-start answer's body makes of it.
// A JSON body that says error (a status that is a word of refusal, an
// error or errors key that holds something, success false) is a refusal
// with the service's message; a body that is not JSON, or a status that
// is neither a word of success nor one of refusal, is uncertain (never a
// refusal, which --retry-failed would send again); an empty body or JSON
// without those marks is sent.
func TestCallAnswerBodies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status  int
		ctype   string
		body    string
		want    Outcome
		message string
	}{
		{200, "application/json", `{"status":"success","call_id":"c1"}`, Sent, ""},
		{200, "application/json", `{"status":"QUEUED"}`, Sent, ""},
		{201, "application/json", `{"status":" In_Progress "}`, Sent, ""},
		{202, "application/json", `{"id":"c1"}`, Sent, ""},
		{200, "application/json", `{"status":"ok","error":null,"errors":[],"success":true}`, Sent, ""},
		{200, "application/json", `[1,2]`, Sent, ""},
		{204, "", ``, Sent, ""},
		{200, "text/plain", "  \n", Sent, ""},
		{200, "application/json", `{"status":"error","message":"no credit left"}`, Failed, "no credit left"},
		{200, "application/json", `{"status":"failed"}`, Failed, "status failed"},
		{202, "application/json", `{"error":"the call could not be queued"}`, Failed, "the call could not be queued"},
		{200, "application/json", `{"error":{"code":"x","message":"bad number"}}`, Failed, "bad number"},
		{200, "application/json", `{"errors":[{"message":"phone_number is invalid"}]}`, Failed, "phone_number is invalid"},
		{200, "application/json", `{"success":false,"message":"agent is paused"}`, Failed, "agent is paused"},
		{200, "text/html", `<!DOCTYPE html><html><body>Down for maintenance</body></html>`, Uncertain, ""},
		{200, "text/plain", `OK then`, Uncertain, ""},
		{200, "application/json", `{"status":"success"} trailing`, Uncertain, ""},
		// Success as services write it, in any case, with - or a space.
		{200, "application/json", `{"status":"in-progress"}`, Sent, ""},
		{200, "application/json", `{"status":"In Progress"}`, Sent, ""},
		{200, "application/json", `{"status":"Ringing","call_id":"c2"}`, Sent, ""},
		{201, "application/json", `{"status":"created"}`, Sent, ""},
		{200, "application/json", `{"status":"scheduled"}`, Sent, ""},
		{200, "application/json", `{"status":"rejected","message":"number blocked"}`, Failed, "number blocked"},
		// A status that is no word but a boolean or a number, as PHP and
		// Laravel APIs write it: false, or a code of 400 and above, is a
		// refusal; true, or a code of 2xx, a success.
		{200, "application/json", `{"status":false,"message":"Insufficient balance"}`, Failed, "Insufficient balance"},
		{200, "application/json", `{"status":false}`, Failed, "status false"},
		{200, "application/json", `{"status":422,"message":"The phone number field is required."}`, Failed, "The phone number field is required."},
		{200, "application/json", `{"status":true,"call_id":"c3"}`, Sent, ""},
		{200, "application/json", `{"status":200}`, Sent, ""},
		{200, "application/json", `{"status":1}`, Uncertain, ""},
		// A 5xx in the body is a failure of the service, not a refusal:
		// it may have placed the call first, as a 5xx answer may.
		{200, "application/json", `{"status":500,"message":"Internal Server Error"}`, Uncertain, ""},
		{200, "application/json", `{"status":504}`, Uncertain, ""},
		// A status callrun knows neither way: the call may have started.
		{200, "application/json", `{"status":"Call initiated successfully"}`, Uncertain, ""},
		{200, "application/json", `{"status":"registered"}`, Uncertain, ""},
		// A status of spaces says nothing, as an empty one: it is no
		// refusal, whose message would be empty and which --retry-failed
		// would send again.
		// A refusal written elsewhere than in "status", or a "success"
		// written as a string.
		{200, "application/json", `{"success":"false"}`, Failed, "success false"},
		{200, "application/json", `{"success":"false","message":"agent inactive"}`, Failed, "agent inactive"},
		{200, "application/json", `{"result":"error"}`, Failed, "result error"},
		{200, "application/json", `{"data":{"status":"failed"}}`, Failed, "data.status failed"},
		{200, "application/json", `{"success":"true","call_id":"c4"}`, Sent, ""},
		{200, "application/json", `{"result":"Call placed to +14155550132"}`, Sent, ""},
		{200, "application/json", `{"data":{"status":"queued","call_id":"c5"}}`, Sent, ""},
		{200, "application/json", `{"status":""}`, Sent, ""},
		{200, "application/json", `{"status":"  "}`, Sent, ""},
		// A blank status is none: a refusal in "result" is read as
		// where there is no status at all.
		{200, "application/json", `{"status":" ","result":"error"}`, Failed, "result error"},
		// The message names what refused, not a word of another field
		// that says nothing.
		{200, "application/json", `{"success":"false","result":"queued"}`, Failed, "success false"},
		{200, "application/json", `{"success":false,"data":{"status":"queued"}}`, Failed, "success false"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tc.ctype != "" {
				w.Header().Set("Content-Type", tc.ctype)
			}
			w.WriteHeader(tc.status)
			w.Write([]byte(tc.body))
		}))
		c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
		resp, err := startCall(t, c, srv.URL+"/call")
		srv.Close()
		if got := Classify(err); got != tc.want {
			t.Errorf("%d %s: Classify(%v) = %v, want %v", tc.status, tc.body, err, got, tc.want)
			continue
		}
		if tc.want == Sent {
			if resp == nil || resp.StatusCode != tc.status || resp.Cut != "" {
				t.Errorf("%d %s: %+v", tc.status, tc.body, resp)
			}
			continue
		}
		var e *Error
		unknown := tc.want == Uncertain && strings.HasPrefix(tc.body, `{"status":`) && strings.HasSuffix(tc.body, "}")
		if !asError(err, &e) || e.StatusCode != tc.status || e.Message != tc.message || e.NotJSON != (tc.want == Uncertain && !unknown) || (e.UnknownStatus != "") != unknown {
			t.Errorf("%d %s: error %#v, want status %d, message %q", tc.status, tc.body, e, tc.status, tc.message)
		}
		if !strings.Contains(err.Error(), "/call") && !strings.Contains(err.Error(), srv.URL) {
			t.Errorf("%d %s: %v does not say where", tc.status, tc.body, err)
		}
	}
}

func asError(err error, e **Error) bool { return errors.As(err, e) }

// TestLimited: a 429 always names a limit; a 403, 409 or 503 when its
// message says limit, concurrent, too many or rate; nothing else does.
func TestLimited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status int
		body   string
		want   bool
	}{
		{429, ``, true},
		{403, `{"error":"concurrency limit reached"}`, true},
		{403, `{"error":"max_concurrent_calls"}`, true},
		{409, `{"message":"Too many calls in progress"}`, true},
		{503, `{"error":"rate exceeded"}`, true},
		{503, `{"error":"service_unavailable","message":"the service is temporarily unavailable"}`, false},
		{403, `{"error":"forbidden"}`, false},
		{403, `{"error":"accurate separate generate"}`, false},
		{422, `{"error":"rate limit"}`, false},
		{403, `Concurrency limit reached`, true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tc.status)
			w.Write([]byte(tc.body))
		}))
		c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
		_, err := startCall(t, c, srv.URL+"/call")
		srv.Close()
		if got := Limited(err); got != tc.want {
			t.Errorf("%d %s: Limited = %v, want %v", tc.status, tc.body, got, tc.want)
		}
		if tc.want && Classify(err) != Retryable {
			t.Errorf("%d %s: Classify = %v, want retryable", tc.status, tc.body, Classify(err))
		}
	}
}

// TestCallStartStalledBodyIsSentWithANote: a 2xx whose body stalls after
// the status line is sent once BodyWait is over, long before Timeout, and
// says the answer was cut.
func TestCallStartStalledBodyIsSentWithANote(t *testing.T) {
	t.Parallel()
	srv := stallingServer(t)
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	c.Timeout, c.BodyWait = time.Minute, 100*time.Millisecond
	within(t, "a stalled 200", func() {
		resp, err := c.StartCall(context.Background(), &CallEndpoint{URL: srv.URL + "/200", Method: "POST"}, url.Values{"phone_number": {"+14155550132"}})
		if Classify(err) != Sent || resp == nil || !strings.Contains(resp.Cut, "did not come within 100ms") {
			t.Errorf("StartCall = %+v, %v; want sent, saying the answer was cut", resp, err)
		}
	})
}

// TestCallAnswerMessageIsRedacted: a 2xx that says error and echoes a
// secret shows it blanked, in its message and its body alike.
func TestCallAnswerMessageIsRedacted(t *testing.T) {
	t.Parallel()
	AddSecret(issueClientSecret)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"error","message":"bad client secret ` + issueClientSecret + `"}`))
	}))
	defer srv.Close()
	c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
	_, err := startCall(t, c, srv.URL+"/call")
	var e *Error
	if !errors.As(err, &e) || Classify(err) != Failed {
		t.Fatalf("got %v", err)
	}
	noSecretIn(t, "the message", e.Message, issueClientSecret)
	noSecretIn(t, "the body", e.Body, issueClientSecret)
	noSecretIn(t, "the error", err.Error(), issueClientSecret)
}

// TestCallAnswerSaysBoth: a 2xx whose JSON says error beside a status of
// success or a call id may have started the call (the error a warning):
// it is uncertain, not a refusal, which --retry-failed would send again.
func TestCallAnswerSaysBoth(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"status":"success","call_id":"c3","errors":["local presence number unavailable"]}`,
		`{"status":"queued","error":{"code":1,"message":"caller id not verified"}}`,
		`{"call_id":"c4","success":false}`,
		`{"success":true,"status":false}`,
		`{"success":true,"error":"webhook could not be reached"}`,
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		}))
		c, _ := New(srv.URL, staticTokens{&Token{AccessToken: "x"}}, nil)
		_, err := startCall(t, c, srv.URL+"/call")
		srv.Close()
		var e *Error
		if got := Classify(err); got != Uncertain || !asError(err, &e) || !e.Mixed || !strings.Contains(err.Error(), "says both") {
			t.Errorf("%s: Classify(%v) = %v, want uncertain, Mixed", body, err, got)
		}
	}
}
