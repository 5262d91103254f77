package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/campaign/run"
	"github.com/rs/zerolog"
	"github.com/urfave/cli/v2"
)

func authCommand(s *session) *cli.Command {
	return &cli.Command{
		Name:  "auth",
		Usage: "log in to the service and manage the saved token",
		Description: `The token is kept in a file (mode 0600) under your configuration directory,
one per service and client id, or at service.token_file, or at $CALLRUN_TOKEN_FILE.
With state: {postgres: ...} it is kept in that database instead, for every machine
that runs the campaign, sealed with the key in $CALLRUN_TOKEN_KEY (make one with
openssl rand -base64 32). It refreshes itself; log in once as a person and cron
runs keep working.`,
		Subcommands: []*cli.Command{
			{
				Name:      "login",
				Usage:     "authorize callrun and save a token",
				ArgsUsage: "CAMPAIGN.yaml",
				Description: `Runs the OAuth authorization-code flow. With service.authorize_url it prints
the URL to open; when redirect_uri is on this machine (127.0.0.1 or localhost)
it catches the redirect itself, otherwise paste the code or the whole redirect URL.
--code skips all that (scripts, the sandbox).

Example: callrun auth login --code sandbox-code examples/quickstart/campaign.yaml`,
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "code", Usage: "authorization code to exchange (no browser needed)"},
					&cli.DurationFlag{Name: "wait", Value: 5 * time.Minute, Usage: "how long to wait for the redirect"},
				},
				Action: func(c *cli.Context) error {
					path, err := campaignArg(c)
					if err != nil {
						return err
					}
					return authLogin(c.Context, s.log, path, c.String("code"), c.Duration("wait"), os.Stdin, s.stdout, s.stderr)
				},
			},
			{
				Name:        "status",
				Usage:       "show whether a token is saved and when it expires (never the token)",
				ArgsUsage:   "CAMPAIGN.yaml",
				Description: "Example: callrun auth status campaign.yaml",
				Action: withService(s, func(_ context.Context, svc *run.Service) error {
					return authStatus(svc, s.stdout)
				}),
			},
			{
				Name:      "refresh",
				Usage:     "refresh the saved token now",
				ArgsUsage: "CAMPAIGN.yaml",
				Description: `Tokens refresh themselves when used; this is for checking that the saved
refresh token still works. If the service refuses it, run callrun auth login again.

Example: callrun auth refresh campaign.yaml`,
				Action: withService(s, func(ctx context.Context, svc *run.Service) error {
					tok, err := svc.Tokens.ForceRefresh(ctx)
					if err != nil {
						return err
					}
					fmt.Fprintf(s.stdout, "Refreshed; the access token expires %s.\n", describeExpiry(tok, time.Now()))
					return nil
				}),
			},
			{
				Name:        "logout",
				Usage:       "delete the saved token",
				ArgsUsage:   "CAMPAIGN.yaml",
				Description: "Example: callrun auth logout campaign.yaml",
				Action: withService(s, func(ctx context.Context, svc *run.Service) error {
					unlock, err := svc.Tokens.Store.Lock(ctx)
					if err != nil {
						return err
					}
					defer unlock()
					if err := svc.Tokens.Store.Remove(); err != nil {
						return err
					}
					fmt.Fprintf(s.stdout, "Logged out: removed the token kept in %s.\n", svc.Tokens.Store)
					return nil
				}),
			},
		},
	}
}

// authLogin gets an authorization code (given, caught on a loopback
// redirect, or pasted) and exchanges it for a saved token.
// Prompts go to prompt (stderr), the result to out.
func authLogin(ctx context.Context, log zerolog.Logger, path, code string, wait time.Duration, in io.Reader, out, prompt io.Writer) error {
	svc, err := openService(ctx, log, path, campaign.LoadOptions{ServiceOnly: true})
	if err != nil {
		return err
	}
	defer svc.Close()
	if code == "" {
		if code, err = run.ObtainCode(ctx, svc.OAuth, wait, in, prompt); err != nil {
			return err
		}
	}
	tok, err := svc.Tokens.Login(ctx, code)
	if err != nil {
		return fmt.Errorf("logging in: %w", err)
	}
	fmt.Fprintf(out, "Logged in to %s. Token saved to %s; the access token expires %s.\n",
		svc.OAuth.BaseURL, svc.Tokens.Store, describeExpiry(tok, time.Now()))
	if rehearsal, _ := run.SandboxService(ctx, svc.File); rehearsal {
		fmt.Fprintf(out, "That is callrun's sandbox, which phones nobody: runs of this campaign against it are rehearsals, their state kept in %s-sandbox, apart from the campaign's own.\n", svc.File.Path(svc.File.StateDir))
	}
	return nil
}

// withService is the action of a command that takes a campaign file and
// needs only its service block.
func withService(s *session, fn func(context.Context, *run.Service) error) cli.ActionFunc {
	return func(c *cli.Context) error {
		path, err := campaignArg(c)
		if err != nil {
			return err
		}
		svc, err := openService(c.Context, s.log, path, campaign.LoadOptions{ServiceOnly: true})
		if err != nil {
			return err
		}
		defer svc.Close()
		return fn(c.Context, svc)
	}
}

func authStatus(svc *run.Service, out io.Writer) error {
	tok, err := svc.Tokens.Store.Load()
	if err != nil {
		return err
	}
	refresh := "yes: it renews itself"
	if tok.RefreshToken == "" {
		refresh = "no: log in again when it expires"
	}
	fmt.Fprintf(out, "Service:       %s\nClient id:     %s\nKept in:       %s\nAccess token:  expires %s\nRefresh token: %s\n",
		svc.OAuth.BaseURL, svc.OAuth.ClientID, svc.Tokens.Store, describeExpiry(tok, time.Now()), refresh)
	return nil
}

func describeExpiry(tok *apiclient.Token, now time.Time) string {
	if tok.Expiry.IsZero() {
		return "at a time the service did not say"
	}
	d := tok.Expiry.Sub(now).Round(time.Second)
	when := tok.Expiry.Local().Format("2006-01-02 15:04:05 MST")
	if d <= 0 {
		return fmt.Sprintf("%s (expired %s ago; it is refreshed on next use)", when, -d)
	}
	return fmt.Sprintf("%s (in %s)", when, d)
}

// openService loads the campaign file at path and prepares its service.
// The caller closes the service.
func openService(ctx context.Context, log zerolog.Logger, path string, opts campaign.LoadOptions) (*run.Service, error) {
	f, err := campaign.Load(path, opts)
	if err != nil {
		return nil, err
	}
	return run.NewService(ctx, log, f, nil)
}
