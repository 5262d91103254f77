package campaign

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report/store"
)

// slowSend is a CallStarter whose first call start takes by on the run's
// clock before it reaches the client (a slow token refresh, or a wait
// for another process's refresh): the clock moves between the intent and
// the send check that runs right before the request leaves.
type slowSend struct {
	CallStarter
	clock *dtClock
	by    time.Duration
	n     atomic.Int32
}

func (s *slowSend) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	if s.n.Add(1) == 1 {
		s.clock.mu.Lock()
		s.clock.now = s.clock.now.Add(s.by)
		s.clock.mu.Unlock()
	}
	return s.CallStarter.StartCallForm(ctx, ep, form)
}

// plCheckNotTwiceIn24h fails the test if the sandbox's ledger holds one
// number placed twice within 24 hours.
func plCheckNotTwiceIn24h(t *testing.T, srv *sandbox.Server) {
	t.Helper()
	placed := map[string][]time.Time{}
	for _, c := range srv.Placed() {
		placed[c.Form.Get("phone_number")] = append(placed[c.Form.Get("phone_number")], c.ReceivedAt)
	}
	for p, at := range placed {
		for i := 1; i < len(at); i++ {
			if at[i].Sub(at[i-1]) < 24*time.Hour {
				t.Errorf("%s placed at %v: twice within 24 hours", p, at)
			}
		}
	}
}

// TestRunPressureCountsFromWhenTheCallLeft: campaign A's call start
// waits five minutes for its access token after its intent (and its
// start in contact pressure) was written. Before, it left then on its
// old count: campaign B, 24 hours and a minute after A's intent but 23
// hours and 56 minutes after A's call, called the number again. Now the
// send check finds the start late, gives it back, and writes the intent
// again, counted from then: B holds the number back. The sandbox's
// ledger: placed once; every request it received has an intent of its
// own.
func TestRunPressureCountsFromWhenTheCallLeft(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunPressureCountsFromWhenTheCallLeft(t, kind) })
	}
}

func testRunPressureCountsFromWhenTheCallLeft(t *testing.T, kind string) {
	clock, base, home, url := ptStore(t, kind)
	t0 := clock.Now()
	a := ptEnv(t, base.srv, base, "a", 0, 1, ptSheet(0, 1), home, url, clock.Now)
	b := ptEnv(t, base.srv, base, "b", 0, 1, ptSheet(0, 1), home, url, clock.Now)
	calls := &slowSend{CallStarter: a.client, clock: clock, by: 5 * time.Minute}
	if res := a.mustRun(func(o *RunOptions) { o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, calls }); res.Sent != 1 {
		t.Fatalf("campaign A: %+v", res)
	}
	a.checkIntentBeforeSend(1)
	if n := calls.n.Load(); n != 2 {
		t.Errorf("campaign A started %d call(s), want 2: the late one given back, and the one written again", n)
	}
	clock.mu.Lock()
	clock.now = t0.Add(24*time.Hour + time.Minute)
	clock.mu.Unlock()
	res := b.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	if res.Held != 1 || res.Sent != 0 {
		t.Errorf("campaign B a day and a minute after A's intent, 23h56m after A's call: %+v; want the number held", res)
	}
	if placed := dtPlaced(base.srv); placed[dtPhone(0)] != 1 {
		t.Errorf("%s placed %d times, want once", dtPhone(0), placed[dtPhone(0)])
	}
	plCheckNotTwiceIn24h(t, base.srv)
}

// slowList is a do-not-call list whose first read (the one right before
// a call start, after its intent is on disk) takes by on the run's
// clock: another process's appends to read, a database slow to answer.
type slowList struct {
	store.DoNotCallList
	clock *dtClock
	by    time.Duration
	n     atomic.Int32
}

func (l *slowList) Has(context.Context, string) (bool, error) {
	if l.n.Add(1) == 1 {
		l.clock.mu.Lock()
		l.clock.now = l.clock.now.Add(l.by)
		l.clock.mu.Unlock()
	}
	return false, nil
}

// noSendCheck is a CallStarter whose requests go with no send check, as
// those to a call endpoint on another origin than the service's do
// (the transport adds no token to them, and checks nothing).
type noSendCheck struct{ CallStarter }

func (n noSendCheck) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	return n.CallStarter.StartCallForm(apiclient.WithSendCheck(ctx, nil), ep, form)
}

// TestRunPressureCountsFromAfterASlowListRead: the read of the
// do-not-call list between the intent and the call start takes five
// minutes, and the call start has no send check after it (its endpoint
// is on another origin). The call start does not leave on the count of
// its intent: it is written again, and another campaign a day and a
// minute after the first intent holds the number back.
func TestRunPressureCountsFromAfterASlowListRead(t *testing.T) {
	clock, base, home, _ := ptStore(t, "files")
	t0 := clock.Now()
	a := ptEnv(t, base.srv, base, "a", 0, 1, ptSheet(0, 1), home, "", clock.Now)
	b := ptEnv(t, base.srv, base, "b", 0, 1, ptSheet(0, 1), home, "", clock.Now)
	list := &slowList{clock: clock, by: 5 * time.Minute}
	if res := a.mustRun(func(o *RunOptions) {
		o.Now, o.Sleep, o.DoNotCall, o.Calls = clock.Now, clock.Sleep, list, noSendCheck{a.client}
	}); res.Sent != 1 {
		t.Fatalf("campaign A: %+v", res)
	}
	a.checkIntentBeforeSend(1)
	clock.mu.Lock()
	clock.now = t0.Add(24*time.Hour + time.Minute)
	clock.mu.Unlock()
	if res := b.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep }); res.Held != 1 {
		t.Errorf("campaign B: %+v; want the number held", res)
	}
	plCheckNotTwiceIn24h(t, base.srv)
}

// TestRunPressureLateEveryTimeLeavesPending: a token that takes five
// minutes every time would write the intent again without end; after
// maxLate tries the contact is left pending, never sent late, and its
// start is given back: nothing holds the number.
func TestRunPressureLateEveryTimeLeavesPending(t *testing.T) {
	clock, base, home, _ := ptStore(t, "files")
	a := ptEnv(t, base.srv, base, "a", 0, 1, ptSheet(0, 1), home, "", clock.Now)
	calls := &alwaysSlow{CallStarter: a.client, clock: clock, by: 5 * time.Minute}
	res := a.mustRun(func(o *RunOptions) { o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, calls })
	if res.Pending != 1 || res.Sent != 0 {
		t.Errorf("%+v; want the contact pending", res)
	}
	if n := len(base.srv.Calls()); n != 0 {
		t.Errorf("the sandbox received %d call start(s), want none", n)
	}
	if got := a.intents()[dtPhone(0)]; got != maxLate {
		t.Errorf("%d intents, want %d", got, maxLate)
	}
	counted, err := store.OpenCallStartsFile(home).Counted(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(counted) != 0 {
		t.Errorf("starts still counted: %v", counted)
	}
}

// alwaysSlow is slowSend slow every time.
type alwaysSlow struct {
	CallStarter
	clock *dtClock
	by    time.Duration
}

func (s *alwaysSlow) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	s.clock.mu.Lock()
	s.clock.now = s.clock.now.Add(s.by)
	s.clock.mu.Unlock()
	return s.CallStarter.StartCallForm(ctx, ep, form)
}

// leaveTransport is a base transport that calls leave with each call
// start's request as it leaves, after its token and send check, before
// a byte of it is written.
type leaveTransport struct {
	base  http.RoundTripper
	leave func(*http.Request)
}

func (l *leaveTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.Contains(req.URL.Path, "/call") && req.Method == http.MethodPost {
		l.leave(req)
	}
	return l.base.RoundTrip(req)
}

// plClient is a client of srv, logged in with a token of its own, whose
// requests leave through leaveTransport.
func plClient(t *testing.T, srv *sandbox.Server, leave func(*http.Request)) *apiclient.Client {
	t.Helper()
	tr := apiclient.DefaultTransport()
	conns := &dtConns{}
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err == nil {
			conns.add(c)
		}
		return c, err
	}
	t.Cleanup(conns.closeAll)
	o := &apiclient.OAuth{BaseURL: srv.URL, ClientID: sandbox.DefaultClientID, ClientSecret: sandbox.DefaultClientSecret,
		RedirectURI: "http://127.0.0.1/cb", HTTPClient: &http.Client{Transport: tr}}
	tokens := apiclient.NewStoredTokenSource(o, TokenStore(&store.TokenFile{Path: filepath.Join(t.TempDir(), "tok.json")}))
	if _, err := tokens.Login(context.Background(), sandbox.DefaultCode); err != nil {
		t.Fatal(err)
	}
	c, err := apiclient.New(srv.URL, tokens, &leaveTransport{base: tr, leave: leave})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRunPressureLateKilledAsTheCallLeaves: campaign A's token takes
// five minutes; its run is frozen as the call start's request leaves,
// and the journal and the call starts are copied as a kill -9 at that
// moment would leave them. The copy counts the number's start from no
// more than sendLate before the call left, and its contact reads
// uncertain (never called again without --retry-uncertain). Campaign B,
// run on the copied call starts a day and a minute after A's first
// intent, holds the number; the ledger has the one call of A. Before,
// the copy counted the start from five minutes before the call, and B
// called the number again within 24 hours.
func TestRunPressureLateKilledAsTheCallLeaves(t *testing.T) {
	clock, base, home, _ := ptStore(t, "files")
	t0 := clock.Now()
	a := ptEnv(t, base.srv, base, "a", 0, 1, ptSheet(0, 1), home, "", clock.Now)
	crashHome, crashJournal := t.TempDir(), filepath.Join(t.TempDir(), "journal.jsonl")
	var leftAt time.Time
	var once sync.Once
	copyAll := func(*http.Request) {
		once.Do(func() {
			leftAt = clock.Now()
			for from, to := range map[string]string{filepath.Join(home, store.CallStartsFileName): filepath.Join(crashHome, store.CallStartsFileName), a.journal: crashJournal} {
				data, err := os.ReadFile(from)
				if err != nil {
					t.Error(err)
					return
				}
				dtWrite(t, to, string(data))
			}
		})
	}
	calls := &slowSend{CallStarter: plClient(t, base.srv, copyAll), clock: clock, by: 5 * time.Minute}
	if res := a.mustRun(func(o *RunOptions) { o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, calls }); res.Sent != 1 {
		t.Fatalf("campaign A: %+v", res)
	}
	st, err := store.ReadState(crashJournal)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Counts()[store.Uncertain]; got != 1 {
		t.Errorf("the killed run's journal: %v; want its contact uncertain", st.Counts())
	}
	st.Close()
	counted, err := store.OpenCallStartsFile(crashHome).Counted(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if at := counted[dtPhone(0)]; len(at) != 1 || leftAt.Sub(at[0]) > sendLate {
		t.Errorf("the killed run's call starts count %v for the call that left at %s; want one, at most %s before", at, leftAt, sendLate)
	}

	b := ptEnv(t, base.srv, base, "b", 0, 1, ptSheet(0, 1), crashHome, "", clock.Now)
	clock.mu.Lock()
	clock.now = t0.Add(24*time.Hour + time.Minute)
	clock.mu.Unlock()
	if res := b.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep }); res.Held != 1 {
		t.Errorf("campaign B on the killed run's call starts: %+v; want the number held", res)
	}
	if placed := dtPlaced(base.srv); placed[dtPhone(0)] != 1 {
		t.Errorf("%s placed %d times, want once", dtPhone(0), placed[dtPhone(0)])
	}
	plCheckNotTwiceIn24h(t, base.srv)
}
