package run

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
)

// ObtainCode gets an authorization code for `callrun auth login`: it
// prints the service's authorize URL to out, then catches the browser's
// redirect when the redirect URI is a loopback http address (for up to
// wait), or reads the code, or the whole URL redirected to, from in.
func ObtainCode(ctx context.Context, o *apiclient.OAuth, wait time.Duration, in io.Reader, out io.Writer) (string, error) {
	state, err := randomState()
	if err != nil {
		return "", err
	}
	redirect, err := url.Parse(o.RedirectURI)
	if err != nil {
		return "", fmt.Errorf("service.redirect_uri: %w", err)
	}
	authURL, urlErr := o.AuthCodeURL(state)
	if urlErr == nil {
		fmt.Fprintf(out, "Open this URL in a browser and approve access:\n\n  %s\n\n", authURL)
	} else {
		fmt.Fprintf(out, "%v\n", urlErr)
	}
	if urlErr == nil && apiclient.IsLoopbackHost(redirect.Hostname()) && redirect.Scheme == "http" {
		return catchRedirect(ctx, redirect, state, wait, out)
	}
	fmt.Fprint(out, "Paste the authorization code, or the whole URL you were redirected to: ")
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && (line == "" || !errors.Is(err, io.EOF)) {
		return "", UsageError(errors.New("no code given; pass it with --code CODE"))
	}
	return codeFromPaste(strings.TrimSpace(line), state)
}

// codeFromPaste accepts a bare code or a redirect URL holding code and
// state. A URL whose state does not match is refused: it belongs to
// another login attempt.
func codeFromPaste(s, state string) (string, error) {
	if s == "" {
		return "", UsageError(errors.New("no code given; pass it with --code CODE"))
	}
	if !strings.Contains(s, "code=") {
		return s, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", UsageError(fmt.Errorf("cannot read the pasted URL: %v", err))
	}
	q := u.Query()
	if e := q.Get("error"); e != "" {
		return "", fmt.Errorf("authorization refused: %s", e)
	}
	if q.Get("state") != "" && q.Get("state") != state {
		return "", errors.New("the pasted URL belongs to another login attempt (state does not match); start again")
	}
	if q.Get("code") == "" {
		return "", UsageError(errors.New("the pasted URL has no code"))
	}
	return q.Get("code"), nil
}

// catchRedirect serves the loopback redirect URI until the browser arrives
// with a code and the expected state.
func catchRedirect(ctx context.Context, redirect *url.URL, state string, wait time.Duration, out io.Writer) (string, error) {
	ln, err := net.Listen("tcp", redirect.Host)
	if err != nil {
		return "", fmt.Errorf("listening for the redirect on %s: %w (is another login running? or pass --code)", redirect.Host, err)
	}
	type result struct {
		code string
		err  error
	}
	got := make(chan result, 1)
	path := redirect.Path
	if path == "" {
		path = "/"
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		var res result
		switch {
		case q.Get("error") != "":
			res.err = fmt.Errorf("authorization refused: %s", q.Get("error"))
		case q.Get("state") != state:
			http.Error(w, "This redirect belongs to another login attempt; start callrun auth login again.", http.StatusBadRequest)
			return
		case q.Get("code") == "":
			res.err = errors.New("the redirect carried no code")
		default:
			res.code = q.Get("code")
		}
		msg := "callrun is authorized. You can close this tab."
		if res.err != nil {
			msg = "Authorization failed: " + res.err.Error()
		}
		fmt.Fprintf(w, "<!doctype html><title>callrun</title><p>%s</p>", html.EscapeString(msg))
		if f, ok := w.(http.Flusher); ok {
			f.Flush() // the page is on its way before the login goes on
		}
		select {
		case got <- res:
		default:
		}
	})}
	go srv.Serve(ln)
	defer func() {
		// Let the handler that caught the redirect finish its answer: Close
		// could cut the browser's page off (it saw EOF in a test).
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if srv.Shutdown(sctx) != nil {
			srv.Close()
		}
	}()
	fmt.Fprintf(out, "Waiting for the redirect to %s (up to %s; Ctrl-C to stop, or rerun with --code CODE)...\n", redirect.String(), wait)
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case res := <-got:
		return res.code, res.err
	case <-timer.C:
		return "", fmt.Errorf("no redirect arrived within %s; rerun with --code CODE", wait)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// randomState is the OAuth state of one login attempt: 16 random bytes in
// hex, which the redirect must carry back.
func randomState() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
