package campaign

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// withWarnings has the sandbox's answers to call starts that it placed
// carry a warning under "errors" beside their status "success", as a
// service may say what it left out of a call it placed.
func withWarnings(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var obj map[string]any
		if r.Method == http.MethodPost && rec.Code == http.StatusOK && json.Unmarshal(body, &obj) == nil && obj["status"] == "success" {
			obj["errors"] = []string{"local presence number unavailable: called from the default number"}
			body, _ = json.Marshal(obj)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(bytes.TrimSpace(body))
	})
}

// TestRunSuccessWithErrorsIsNotFailed: an answer 200 {"status":
// "success", "call_id": ..., "errors": [a warning]} says the call was
// placed as much as it says error. Read as a refusal (failed), the run
// stopped after five such answers as the service's condition and said to
// send them again with --retry-failed once mended, which phoned each of
// those people a second time. A body that says both is uncertain: never
// sent again without a person's decision.
func TestRunSuccessWithErrorsIsNotFailed(t *testing.T) {
	const n = 3
	srv := sandbox.NewUnstartedServer(sandbox.Options{})
	srv.Config.Handler = withWarnings(srv.Config.Handler)
	srv, client := dtStartSandbox(t, srv)
	e := dtPrepare(t, srv, client, t.TempDir(), dtCampaign(1000, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
	res, err := e.run(t.Context(), nil)
	if err != nil {
		t.Logf("run 1: %v", err)
	}
	if len(srv.Placed()) != n {
		t.Fatalf("%d placed, want %d", len(srv.Placed()), n)
	}
	if res.Failed != 0 {
		t.Errorf("run 1: %+v: a call the service placed counted as refused", res)
	}
	if c := e.state().Counts(); c[store.Failed] != 0 {
		t.Errorf("journal after run 1: %v, want nothing failed", c)
	}
	if en, _ := e.entry(dtPhone(0)); !strings.Contains(en.Reason, "may have started") {
		t.Errorf("reason %q", en.Reason)
	}
	// A person sends the failed ones again, as the run said to.
	e.mustRun(func(o *RunOptions) { o.RetryFailed = true })
	for phone, k := range dtPlaced(srv) {
		if k != 1 {
			t.Errorf("%s placed %d times, want 1", phone, k)
		}
	}
	e.checkIntentBeforeSend(1)
}
