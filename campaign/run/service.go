package run

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// Service is what a command needs to talk to the service of a campaign:
// the OAuth endpoints, the token source over the token the campaign's
// store keeps, and the client.
type Service struct {
	File   *campaign.File
	OAuth  *apiclient.OAuth
	Tokens *apiclient.StoredTokenSource
	Client *apiclient.Client
	own    store.Store // the store this service opened for its token, if any
}

// Close releases the database connections the service opened, if any.
func (s *Service) Close() {
	if s.own != nil {
		s.own.Close()
	}
}

// NewService prepares the campaign's service with its token, kept in st,
// the campaign's store, when the caller has it open already; with st nil
// it opens the store that keeps the token if it needs one. It sends
// nothing to the service. With
// state.postgres the token is kept in that database, sealed with the key
// of $CALLRUN_TOKEN_KEY: the shards of a campaign on any number of
// machines share the database's token and its lock, where a token file's
// lock holds on one machine only. Otherwise it is kept in a file:
// $CALLRUN_TOKEN_FILE, else service.token_file, else one under the
// user's configuration directory. The caller closes the service.
//
// With state.postgres, service.token_file is refused: the campaign file
// would say two things. $CALLRUN_TOKEN_FILE is ignored with a warning: it
// is set for a shell, a cron table or a pod, often for campaigns of both
// kinds, and whatever it names, a campaign whose state is shared reads
// its token only from the database, so no refresh token is ever spent
// from two places by one campaign.
func NewService(ctx context.Context, log zerolog.Logger, f *campaign.File, st store.Store) (*Service, error) {
	s := f.Service
	req := store.TokenRequest{BaseURL: s.BaseURL, ClientID: s.ClientID}
	var own store.Store
	if f.SharedState() {
		if s.TokenFile != "" {
			return nil, UsageError(fmt.Errorf("%s: service.token_file: with state.postgres the token is kept in the database, for every machine that runs the campaign; remove service.token_file", f.Source))
		}
		if os.Getenv("CALLRUN_TOKEN_FILE") != "" {
			log.Warn().Msg("CALLRUN_TOKEN_FILE is ignored: with state.postgres the token is kept in the database")
		}
		raw := os.Getenv(store.TokenKeyVar)
		apiclient.AddSecret(strings.TrimSpace(raw))
		key, err := store.ParseTokenKey(raw)
		if err != nil {
			return nil, UsageError(err)
		}
		req.Key = key
		if st == nil {
			if own, err = store.OpenPostgres(ctx, f.State.Postgres, f.Name, 0, 1); err != nil {
				return nil, err
			}
			st = own
		}
	} else {
		req.File = os.Getenv("CALLRUN_TOKEN_FILE")
		if req.File == "" && s.TokenFile != "" {
			req.File = f.Path(s.TokenFile)
		}
		if req.File == "" {
			p, err := store.DefaultTokenPath(s.BaseURL, s.ClientID)
			if err != nil {
				return nil, err
			}
			req.File = p
		}
		if st == nil {
			st = store.Files{}
		}
	}
	svc, err := serviceWithToken(log, f, st, req)
	if err != nil {
		if own != nil {
			own.Close()
		}
		return nil, err
	}
	svc.own = own
	return svc, nil
}

// serviceWithToken prepares the service of f with the token st keeps as
// req asks.
func serviceWithToken(log zerolog.Logger, f *campaign.File, st store.Store, req store.TokenRequest) (*Service, error) {
	kept, err := st.Token(req)
	if err != nil {
		return nil, err
	}
	s := f.Service
	apiclient.AddSecret(s.ClientSecret) // for messages that quote the campaign file's values
	log.Debug().Str("campaign", f.Source).Str("base_url", s.BaseURL).Stringer("token", kept).Msg("service")
	o := &apiclient.OAuth{
		BaseURL: s.BaseURL, ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		RedirectURI: s.RedirectURI, AuthorizeURL: s.AuthorizeURL, Scope: s.Scope,
	}
	tokens := apiclient.NewStoredTokenSource(o, campaign.TokenStore(kept))
	client, err := apiclient.New(s.BaseURL, tokens, nil)
	if err != nil {
		return nil, err
	}
	return &Service{File: f, OAuth: o, Tokens: tokens, Client: client}, nil
}

// SandboxedService prepares the service of a rehearsal against the
// in-process sandbox: its token is in the file service.token_file names,
// in the rehearsal's store st, whatever the environment and the state:
// block say, so that a rehearsal's token never replaces the live one.
func SandboxedService(log zerolog.Logger, f *campaign.File, st store.Store) (*Service, error) {
	return serviceWithToken(log, f, st, store.TokenRequest{BaseURL: f.Service.BaseURL, ClientID: f.Service.ClientID, File: f.Service.TokenFile})
}
