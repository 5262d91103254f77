package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// TestProxy503AfterTheCallStartedIsNotSentAgain puts a proxy in front of
// the sandbox that, as Envoy does when its upstream resets the
// connection before answering, passes each call start on (the sandbox
// places the call) and answers 503 "upstream connect error or
// disconnect/reset before headers", with no Retry-After. The call
// started, so the contact is uncertain, and the ledger shows one call
// each: a 503 that is not the service's own answer is never sent again.
func TestProxy503AfterTheCallStartedIsNotSentAgain(t *testing.T) {
	const ada, bo = "+14155550132", "+14155550133"
	srv := sandbox.NewServer(sandbox.Options{CallDuration: 10 * time.Millisecond})
	t.Cleanup(srv.Close)
	target, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var proxyURL string
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if strings.HasPrefix(resp.Request.URL.Path, "/call/") {
			resp.Body.Close()
			body := "upstream connect error or disconnect/reset before headers. reset reason: connection termination"
			resp.StatusCode, resp.Status = http.StatusServiceUnavailable, "503 Service Unavailable"
			resp.Header = http.Header{"Content-Type": {"text/plain"}, "Server": {"envoy"}}
			resp.Body, resp.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
			return nil
		}
		// The agents' call endpoints are the proxy's, as a service
		// behind it would give them.
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(srv.URL), []byte(proxyURL))
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	proxy := httptest.NewServer(rp)
	t.Cleanup(proxy.Close)
	proxyURL = proxy.URL

	path := campaignsOnOneStore(t, proxy.URL, e2eDatabase(t, "files"))("behind-envoy", "region: US\npressure: {off: true}\n")
	writeContacts(t, path, "Phone,First Name\n"+ada+",Ada\n"+bo+",Bo\n")
	runCampaign(context.Background(), nolog, runOptions{Path: path}, io.Discard) //nolint:errcheck // uncertain contacts end the run 1
	for _, p := range []string{ada, bo} {
		if n := placedTo(srv, p); n != 1 {
			t.Errorf("%s was placed %d times, want once: the 503 came after the call started", p, n)
		}
	}
	rows := readReportRows(t, filepath.Join(filepath.Dir(path), ".callrun", "behind-envoy", "report.csv"))
	for _, p := range []string{ada, bo} {
		if rows[p]["status"] != "uncertain" {
			t.Errorf("the report's row of %s: %v, want uncertain", p, rows[p])
		}
	}
}
