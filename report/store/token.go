package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/callrun/callrun/report/durable"
	"github.com/gofrs/flock"
)

// ErrNoToken means there is no saved token for the service and client:
// no one is logged in.
var ErrNoToken = errors.New("not logged in")

// Token is the service's OAuth token as a store keeps it.
type Token struct {
	AccessToken  string    `json:"access_token"`
	TokenType    string    `json:"token_type"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	IssuedAt     time.Time `json:"issued_at,omitzero"`
}

// KeptToken is one service's and one client's token where a store keeps
// it between runs: a [TokenFile] on this machine, or a row of the
// database every machine running a campaign reaches ([Postgres.Token]).
// Its lock keeps two holders of one refresh token from spending it twice.
type KeptToken interface {
	// Lock takes the token's lock, waiting for another holder until ctx
	// ends; Load, Save and Remove made while it is held see and change
	// the token under it.
	Lock(ctx context.Context) (unlock func(), err error)
	// Load returns the saved token, or an error wrapping [ErrNoToken].
	Load() (*Token, error)
	// Save replaces the saved token durably.
	Save(tok *Token) error
	// Remove deletes the saved token; none saved is not an error.
	Remove() error
	// String says where the token is kept, for people; never a secret.
	String() string
}

// TokenRequest names the token a store is asked for: the service's and
// client's, in the token file File (a store of files) or sealed with Key
// (a database).
type TokenRequest struct {
	BaseURL, ClientID string
	File              string
	Key               []byte
}

// TokenFile is the file that keeps one service's and one client's tokens
// between runs. It is written with mode 0600, replaced atomically, and
// guarded by a lock file beside it so that two processes (a cron run and a
// person, say) never refresh with the same refresh token.
type TokenFile struct {
	Path     string
	BaseURL  string // recorded in the file and checked on load
	ClientID string // recorded in the file and checked on load
}

var _ KeptToken = (*TokenFile)(nil)

// DefaultTokenPath returns where the token of a service and client lives
// when the campaign file does not say: under the user's configuration
// directory, one file per base URL and client id.
func DefaultTokenPath(baseURL, clientID string) (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("finding the user configuration directory for the token file: %w (set service.token_file in the campaign file)", err)
	}
	sum := sha256.Sum256([]byte(strings.TrimRight(baseURL, "/") + "\x00" + clientID))
	return filepath.Join(dir, "callrun", "tokens", hex.EncodeToString(sum[:8])+".json"), nil
}

// tokenJSON is the on-disk form of a token file.
type tokenJSON struct {
	BaseURL  string `json:"base_url"`
	ClientID string `json:"client_id"`
	Token
}

// String is the token file's path.
func (f *TokenFile) String() string { return f.Path }

// Load reads the saved token. It returns an error wrapping [ErrNoToken]
// when there is none.
func (f *TokenFile) Load() (*Token, error) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w (no token file at %s)", ErrNoToken, f.Path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading token file: %w", err)
	}
	var tj tokenJSON
	if err := json.Unmarshal(b, &tj); err != nil {
		return nil, fmt.Errorf("token file %s is damaged (%v); run `callrun auth login` again", f.Path, errors.Unwrap(err))
	}
	if tj.BaseURL != "" && f.BaseURL != "" && strings.TrimRight(tj.BaseURL, "/") != strings.TrimRight(f.BaseURL, "/") {
		return nil, fmt.Errorf("token file %s belongs to %s, not %s; run `callrun auth login` for this service", f.Path, tj.BaseURL, f.BaseURL)
	}
	if tj.ClientID != "" && f.ClientID != "" && tj.ClientID != f.ClientID {
		return nil, fmt.Errorf("token file %s belongs to another client id; run `callrun auth login` for this client", f.Path)
	}
	if tj.AccessToken == "" {
		return nil, fmt.Errorf("%w (token file %s holds no token)", ErrNoToken, f.Path)
	}
	return &tj.Token, nil
}

// Save replaces the token file atomically with tok, mode 0600 whatever the
// mode of the file it replaces, and makes the replacement durable so the
// new refresh token survives a crash. (On Windows the mode is no access
// control: the file is as private as the folder it is in.)
func (f *TokenFile) Save(tok *Token) error {
	dir := filepath.Dir(f.Path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating token directory: %w", err)
	}
	b, err := json.MarshalIndent(tokenJSON{BaseURL: f.BaseURL, ClientID: f.ClientID, Token: *tok}, "", "  ")
	if err != nil {
		return err
	}
	if err := durable.WriteFile(f.Path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing token file: %w", err)
	}
	return nil
}

// Remove deletes the token file; a missing file is not an error.
func (f *TokenFile) Remove() error {
	if err := os.Remove(f.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing token file: %w", err)
	}
	return nil
}

// Lock takes the token file's lock, waiting for another holder until ctx
// ends. The kernel releases it if the process dies.
func (f *TokenFile) Lock(ctx context.Context) (unlock func(), err error) {
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o700); err != nil {
		return nil, fmt.Errorf("creating token directory: %w", err)
	}
	fl := flock.New(f.Path+".lock", flock.SetFlag(os.O_CREATE|os.O_RDWR), flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		return nil, fmt.Errorf("locking token file: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("locking token file: %w", ctx.Err())
	}
	return func() { _ = fl.Unlock() }, nil
}

// TokenDamagedError means the token in a database's row opened with the
// key but is not a token: a person must log in again.
type TokenDamagedError struct{ Where string }

func (e *TokenDamagedError) Error() string {
	return fmt.Sprintf("the token in %s is damaged; run `callrun auth login` again", e.Where)
}

// sealedToken is a [Token] kept as JSON in a [PGToken]'s row: the row's
// Lock, Remove and String, and Load and Save of a Token rather than of
// the row's bytes.
type sealedToken struct{ *PGToken }

// Load opens the saved token; a token the key does not open wraps
// [ErrTokenSealed], one that opens and is no token is a
// [*TokenDamagedError].
func (d sealedToken) Load() (*Token, error) {
	plain, _, err := d.PGToken.Load()
	switch {
	case err != nil:
		return nil, err
	case plain == nil:
		return nil, fmt.Errorf("%w (no token in %s)", ErrNoToken, d)
	}
	var t Token
	if err := json.Unmarshal(plain, &t); err != nil || t.AccessToken == "" {
		return nil, &TokenDamagedError{Where: d.String()}
	}
	return &t, nil
}

func (d sealedToken) Save(tok *Token) error {
	plain, err := json.Marshal(tok)
	if err != nil {
		return err
	}
	return d.PGToken.Save(plain)
}
