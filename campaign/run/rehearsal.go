package run

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/campaign"
	"github.com/rs/zerolog"
)

// probeTimeout bounds the one request that asks a service on loopback
// whether it is callrun's sandbox.
const probeTimeout = 10 * time.Second

// SandboxService reports whether the campaign's service is callrun's own
// sandbox (`callrun sandbox`), which says so in the header
// sandbox.RehearsalHeader of its answers: a run against it phones nobody,
// and is a rehearsal, kept apart from the campaign's own state as a run
// --sandbox is. Only a service on loopback is asked, with one GET of its
// base URL that carries no credential, and believed: a service elsewhere
// is never taken for the sandbox, whatever it answers, so that no real
// run is ever kept from the campaign's do-not-call list and contact
// pressure. An error says the service could not be asked.
func SandboxService(ctx context.Context, f *campaign.File) (bool, error) {
	u, err := url.Parse(f.Service.BaseURL)
	if err != nil || f.Service.BaseURL == "" || !apiclient.IsLoopbackHost(u.Hostname()) {
		return false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.Service.BaseURL, nil)
	if err != nil {
		return false, err
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		return false, fmt.Errorf("asking the service at %s whether it is callrun's sandbox: %w", f.Service.BaseURL, err)
	}
	resp.Body.Close()
	return resp.Header.Get(sandbox.RehearsalHeader) == sandbox.RehearsalValue, nil
}

// Rehearsing reports whether a command that reads or keeps a campaign's
// state (status, outcomes, suppress) works on a rehearsal's: with
// --sandbox (sandbox), or while the campaign's service is callrun's
// sandbox, served on its own and answering now ([SandboxService]), as
// its runs and listen did. A service that does not answer is taken for a
// real one.
func Rehearsing(ctx context.Context, f *campaign.File, sandbox bool) bool {
	if sandbox {
		return true
	}
	rehearsal, _ := SandboxService(ctx, f)
	return rehearsal
}

// RehearsalNote says, for the logs and plan, where a rehearsal against
// the standalone sandbox at baseURL keeps its state.
func RehearsalNote(baseURL, dir string) string {
	return fmt.Sprintf("the service at %s is callrun's sandbox, which phones nobody: this is a rehearsal, its state kept in %s, apart from the campaign's own (status, report, outcomes and suppress read it while the sandbox answers, or with --sandbox)", baseURL, dir)
}

// ListenRehearsal reports whether listen receives a rehearsal's
// deliveries for f: its service is callrun's sandbox, served on its own.
// Their opt-outs then go to the rehearsals' own do-not-call list and
// their answered calls count against nobody's contact pressure. A
// service on loopback that does not answer is taken for a real one (its
// opt-outs are kept on the campaign's own list, never lost), and listen
// says to start the sandbox first.
func ListenRehearsal(ctx context.Context, log zerolog.Logger, f *campaign.File) bool {
	rehearsal, err := SandboxService(ctx, f)
	if err != nil {
		log.Warn().Err(err).Str("campaign", f.Name).Msg("cannot tell whether the campaign's service is callrun's sandbox: its deliveries go to the campaign's own store; to keep a rehearsal's apart, start callrun sandbox before listen")
		return false
	}
	if rehearsal {
		log.Info().Str("campaign", f.Name).Msgf("the service at %s is callrun's sandbox: its deliveries are a rehearsal's, kept in %s-sandbox, their opt-outs on the rehearsals' own do-not-call list", f.Service.BaseURL, f.Path(f.StateDir))
	}
	return rehearsal
}
