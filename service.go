package main

import (
	"os"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/rs/zerolog"
)

// service is what a command needs to talk to the service of a campaign.
type service struct {
	file   *campaign.File
	oauth  *apiclient.OAuth
	tokens *apiclient.FileTokenSource
	client *apiclient.Client
}

// openService reads the campaign file's service block and prepares the
// token source and client. It sends nothing.
func openService(log zerolog.Logger, path string, opts campaign.LoadOptions) (*service, error) {
	f, err := campaign.Load(path, opts)
	if err != nil {
		return nil, err
	}
	return newService(log, f)
}

// newService prepares the campaign's service with its token file:
// $CALLRUN_TOKEN_FILE, else service.token_file, else one under the user's
// configuration directory.
func newService(log zerolog.Logger, f *campaign.File) (*service, error) {
	s := f.Service
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

// serviceWithToken is newService with the token file at tokenPath,
// whatever the environment says: a rehearsal's token must never replace
// the one of the live service that $CALLRUN_TOKEN_FILE names.
func serviceWithToken(log zerolog.Logger, f *campaign.File, tokenPath string) (*service, error) {
	s := f.Service
	apiclient.AddSecret(s.ClientSecret) // for messages that quote the campaign file's values
	log.Debug().Str("campaign", f.Source).Str("base_url", s.BaseURL).Str("token_file", tokenPath).Msg("service")
	o := &apiclient.OAuth{
		BaseURL: s.BaseURL, ClientID: s.ClientID, ClientSecret: s.ClientSecret,
		RedirectURI: s.RedirectURI, AuthorizeURL: s.AuthorizeURL, Scope: s.Scope,
	}
	tokens := apiclient.NewFileTokenSource(o, &apiclient.TokenFile{Path: tokenPath, BaseURL: s.BaseURL, ClientID: s.ClientID})
	client, err := apiclient.New(s.BaseURL, tokens, nil)
	if err != nil {
		return nil, err
	}
	return &service{file: f, oauth: o, tokens: tokens, client: client}, nil
}
