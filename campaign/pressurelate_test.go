package campaign

import (
	"context"
	"errors"
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
// and what a kill -9 at that moment would leave is read: with files, the
// journal and the call starts copied; with PostgreSQL, what is committed.
// The store counts the number's start from no more than sendLate before
// the call left, and its contact reads uncertain (never called again
// without --retry-uncertain). Campaign B, run on those call starts a day
// and a minute after A's first intent, holds the number; the ledger has
// the one call of A. Before, the store counted the start from five
// minutes before the call, and B called the number again within 24
// hours.
func TestRunPressureLateKilledAsTheCallLeaves(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) { testRunPressureLateKilledAsTheCallLeaves(t, kind) })
	}
}

func testRunPressureLateKilledAsTheCallLeaves(t *testing.T, kind string) {
	clock, base, home, url := ptStore(t, kind)
	t0 := clock.Now()
	a := ptEnv(t, base.srv, base, "a", 0, 1, ptSheet(0, 1), home, url, clock.Now)
	crashHome, crashJournal := t.TempDir(), filepath.Join(t.TempDir(), "journal.jsonl")
	var leftAt time.Time
	var counted map[string][]time.Time
	var last store.Record // the contact's last record in the journal
	var once sync.Once
	kill := func(*http.Request) {
		once.Do(func() {
			leftAt = clock.Now()
			if kind == "postgres" {
				// Nothing is copied: a kill leaves what is committed.
				recs := dtPostgresRecords(t, url)
				last = recs[len(recs)-1]
				starts, _ := a.pg.CallStarts()
				var err error
				if counted, err = starts.Counted(context.Background(), time.Time{}); err != nil {
					t.Error(err)
				}
				return
			}
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
	calls := &slowSend{CallStarter: plClient(t, base.srv, kill), clock: clock, by: 5 * time.Minute}
	if res := a.mustRun(func(o *RunOptions) { o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, calls }); res.Sent != 1 {
		t.Fatalf("campaign A: %+v", res)
	}
	if leftAt.IsZero() {
		t.Fatal("no call start left")
	}
	if kind == "files" {
		st, err := store.ReadState(crashJournal)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Counts()[store.Uncertain]; got != 1 {
			t.Errorf("the killed run's journal: %v; want its contact uncertain", st.Counts())
		}
		st.Close()
		if counted, err = store.OpenCallStartsFile(crashHome).Counted(context.Background(), time.Time{}); err != nil {
			t.Fatal(err)
		}
	} else if last.Type != store.TypeIntent {
		t.Errorf("the killed run's last record: %+v; want the intent of the call start that left (uncertain)", last)
	}
	if at := counted[dtPhone(0)]; len(at) != 1 || leftAt.Sub(at[0]) > sendLate {
		t.Errorf("the killed run's call starts count %v for the call that left at %s; want one, at most %s before", at, leftAt, sendLate)
	}

	bHome := crashHome
	if kind == "postgres" {
		bHome = home
	}
	b := ptEnv(t, base.srv, base, "b", 0, 1, ptSheet(0, 1), bHome, url, clock.Now)
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

// nthSlow is slowSend slow on its n-th call start only.
type nthSlow struct {
	CallStarter
	clock *dtClock
	nth   int32
	by    time.Duration
	n     atomic.Int32
}

func (s *nthSlow) StartCallForm(ctx context.Context, ep *apiclient.CallEndpoint, form string) (*apiclient.CallResponse, error) {
	if s.n.Add(1) == s.nth {
		s.clock.mu.Lock()
		s.clock.now = s.clock.now.Add(s.by)
		s.clock.mu.Unlock()
	}
	return s.CallStarter.StartCallForm(ctx, ep, form)
}

// TestRunPressureLateJournalFailureLeavesNobodyUncertain: the second
// contact's call start is late, and the journal's fsync fails on the
// commit that gives its start back and writes its intent again (a disk
// gone full). The run stops; no contact reads uncertain whose call start
// the sandbox never received, and the next run places each number once.
// Another campaign a day and a minute after the first intent calls the
// first number again, called then, and holds the others, called from
// five minutes later: in the ledger, none is placed twice within 24
// hours.
func TestRunPressureLateJournalFailureLeavesNobodyUncertain(t *testing.T) {
	const n = 4
	clock, base, home, _ := ptStore(t, "files")
	t0 := clock.Now()
	e := ptEnv(t, base.srv, base, "a", 0, 1, ptSheet(0, n), home, "", clock.Now)
	b := ptEnv(t, base.srv, base, "b", 0, 1, ptSheet(0, n), home, "", clock.Now)
	e.f.Pace.Concurrency = 1
	var syncs atomic.Int32
	e.beforeSync = func() error {
		// 1: the first intent; 2: its outcome and the second intent; 3:
		// the second's late skip and its intent written again.
		if syncs.Add(1) == 3 {
			return errors.New("no space left on device")
		}
		return nil
	}
	e.journalClosed.Store(true)
	calls := &nthSlow{CallStarter: e.client, clock: clock, nth: 2, by: 5 * time.Minute}
	_, err := e.run(context.Background(), func(o *RunOptions) { o.Now, o.Sleep, o.Calls = clock.Now, clock.Sleep, calls })
	e.beforeSync = nil
	if calls.n.Load() != 2 {
		t.Fatalf("%d call starts before the journal failed, want 2", calls.n.Load())
	}
	e.checkNothingUnsentUncertain(n, err, func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
	clock.mu.Lock()
	clock.now = t0.Add(24*time.Hour + time.Minute)
	clock.mu.Unlock()
	if res := b.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep }); res.Held != n-1 || res.Sent != 1 {
		t.Errorf("campaign B: %+v; want the first number called again, the others held", res)
	}
	plCheckNotTwiceIn24h(t, base.srv)
}
