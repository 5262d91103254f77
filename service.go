package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// service is what a command needs to talk to the service of a campaign.
type service struct {
	file   *campaign.File
	oauth  *apiclient.OAuth
	tokens *apiclient.FileTokenSource
	client *apiclient.Client
	db     *store.Postgres // the database the token is kept in, when this service opened it
}

// Close releases the database connections the service opened, if any.
func (s *service) Close() {
	if s.db != nil {
		s.db.Close()
	}
}

// openService reads the campaign file's service block and prepares the
// token source and client. It sends nothing to the service. The caller
// closes the service.
func openService(ctx context.Context, log zerolog.Logger, path string, opts campaign.LoadOptions) (*service, error) {
	f, err := campaign.Load(path, opts)
	if err != nil {
		return nil, err
	}
	return newService(ctx, log, f, nil)
}

// newService prepares the campaign's service with its token. With
// state.postgres the token is kept in that database, sealed with the key
// of $CALLRUN_TOKEN_KEY: db when the caller has the campaign's database
// open already, else a connection of its own. Otherwise it is kept in a
// file: $CALLRUN_TOKEN_FILE, else service.token_file, else one under the
// user's configuration directory. The caller closes the service.
func newService(ctx context.Context, log zerolog.Logger, f *campaign.File, db *store.Postgres) (*service, error) {
	s := f.Service
	if f.SharedState() {
		return serviceWithDatabase(ctx, log, f, db)
	}
	tokenPath := os.Getenv("CALLRUN_TOKEN_FILE")
	if tokenPath == "" && s.TokenFile != "" {
		tokenPath = f.Path(s.TokenFile)
	}
	if tokenPath == "" {
		p, err := apiclient.DefaultTokenPath(s.BaseURL, s.ClientID)
		if err != nil {
			return nil, err
		}
		tokenPath = p
	}
	return serviceWithToken(log, f, tokenPath)
}

// serviceWithDatabase is newService for a campaign whose state is in
// PostgreSQL: the shards of a campaign on any number of machines share
// the database's token and its lock, where a token file's lock holds on
// one machine only.
//
// service.token_file is then refused: the campaign file would say two
// things. $CALLRUN_TOKEN_FILE is ignored with a warning: it is set for a
// shell, a cron table or a pod, often for campaigns of both kinds, and
// whatever it names, a campaign whose state is shared reads its token
// only from the database, so no refresh token is ever spent from two
// places by one campaign.
func serviceWithDatabase(ctx context.Context, log zerolog.Logger, f *campaign.File, db *store.Postgres) (*service, error) {
	s := f.Service
	if s.TokenFile != "" {
		return nil, usageError(fmt.Errorf("%s: service.token_file: with state.postgres the token is kept in the database, for every machine that runs the campaign; remove service.token_file", f.Source))
	}
	if os.Getenv("CALLRUN_TOKEN_FILE") != "" {
		log.Warn().Msg("CALLRUN_TOKEN_FILE is ignored: with state.postgres the token is kept in the database")
	}
	raw := os.Getenv(store.TokenKeyVar)
	apiclient.AddSecret(strings.TrimSpace(raw))
	key, err := store.ParseTokenKey(raw)
	if err != nil {
		return nil, usageError(err)
	}
	var own *store.Postgres
	if db == nil {
		if own, err = store.OpenPostgres(ctx, f.State.Postgres, f.Name, 0, 1); err != nil {
			return nil, err
		}
		db = own
	}
	row, err := db.Token(s.BaseURL, s.ClientID, key)
	if err != nil {
		if own != nil {
			own.Close()
		}
		return nil, err
	}
	svc, err := serviceWithStore(log, f, dbToken{row})
	if err != nil {
		if own != nil {
			own.Close()
		}
		return nil, err
	}
	svc.db = own
	return svc, nil
}

// serviceWithToken is newService with the token file at tokenPath,
// whatever the environment and the state: block say: a rehearsal's token
// must never replace the one of the live service.
func serviceWithToken(log zerolog.Logger, f *campaign.File, tokenPath string) (*service, error) {
	s := f.Service
	return serviceWithStore(log, f, &apiclient.TokenFile{Path: tokenPath, BaseURL: s.BaseURL, ClientID: s.ClientID})
}

func serviceWithStore(log zerolog.Logger, f *campaign.File, kept apiclient.TokenStore) (*service, error) {
	s := f.Service
	apiclient.AddSecret(s.ClientSecret) // for messages that quote the campaign file's values
	log.Debug().Str("campaign", f.Source).Str("base_url", s.BaseURL).Stringer("token", kept).Msg("service")
	o := &apiclient.OAuth{
		BaseURL: s.BaseURL, ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		RedirectURI: s.RedirectURI, AuthorizeURL: s.AuthorizeURL, Scope: s.Scope,
	}
	tokens := apiclient.NewFileTokenSource(o, kept)
	client, err := apiclient.New(s.BaseURL, tokens, nil)
	if err != nil {
		return nil, err
	}
	return &service{file: f, oauth: o, tokens: tokens, client: client}, nil
}

// dbToken is the token kept in the campaign's PostgreSQL database, as the
// token source wants it: the token's JSON, sealed in its row.
type dbToken struct{ row *store.PGToken }

var _ apiclient.TokenStore = dbToken{}

// dbTokenJSON is the form a token is sealed in.
type dbTokenJSON struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	IssuedAt     time.Time `json:"issued_at,omitzero"`
}

func (d dbToken) Lock(ctx context.Context) (func(), error) { return d.row.Lock(ctx) }
func (d dbToken) Remove() error                            { return d.row.Remove() }
func (d dbToken) String() string                           { return d.row.String() }

// Load opens the saved token. A token the key does not open needs a
// person (the right key, or a new login): it is an [apiclient.AuthError],
// which stops every worker at once rather than each trying again.
func (d dbToken) Load() (*apiclient.Token, error) {
	plain, _, err := d.row.Load()
	switch {
	case errors.Is(err, store.ErrTokenSealed):
		return nil, &apiclient.AuthError{Err: err}
	case err != nil:
		return nil, err
	case plain == nil:
		return nil, fmt.Errorf("%w (no token in %s)", apiclient.ErrNotLoggedIn, d)
	}
	var tj dbTokenJSON
	if err := json.Unmarshal(plain, &tj); err != nil || tj.AccessToken == "" {
		return nil, &apiclient.AuthError{Err: fmt.Errorf("the token in %s is damaged; run `callrun auth login` again", d)}
	}
	apiclient.AddSecret(tj.AccessToken)
	apiclient.AddSecret(tj.RefreshToken)
	return &apiclient.Token{AccessToken: tj.AccessToken, TokenType: tj.TokenType, RefreshToken: tj.RefreshToken, Expiry: tj.Expiry, IssuedAt: tj.IssuedAt}, nil
}

func (d dbToken) Save(tok *apiclient.Token) error {
	apiclient.AddSecret(tok.AccessToken)
	apiclient.AddSecret(tok.RefreshToken)
	plain, err := json.Marshal(dbTokenJSON{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry, IssuedAt: tok.IssuedAt})
	if err != nil {
		return err
	}
	return d.row.Save(plain)
}
