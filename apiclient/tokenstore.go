package apiclient

import (
	"context"
	"errors"
)

// ErrNotLoggedIn means there is no saved token for the service and client.
// Its message says what happened; the CLI adds how to log in when it
// prints it.
var ErrNotLoggedIn = errors.New("not logged in")

// TokenStore is where one service's and one client's token is kept between
// runs, for a [StoredTokenSource]: a token file on this machine, or a row
// of a database that every machine running a campaign reaches (both are
// the campaign's store's, report/store).
//
// Its lock is what keeps two holders of the same refresh token (two
// processes, two machines, or two sources in one process) from spending it
// twice when the service rotates refresh tokens: a refresh takes the lock,
// loads the token again, and saves the new one before anyone uses it.
type TokenStore interface {
	// Lock takes the store's lock, waiting for another holder until ctx
	// ends. Load, Save and Remove made while it is held see and change the
	// token under it. The lock ends with unlock, or when the process dies.
	Lock(ctx context.Context) (unlock func(), err error)
	// Load returns the saved token, or an error wrapping [ErrNotLoggedIn]
	// when there is none. It hands the token's values to [AddSecret].
	Load() (*Token, error)
	// Save replaces the saved token with tok durably: once it returns, the
	// new refresh token survives a crash.
	Save(tok *Token) error
	// Remove deletes the saved token; none saved is not an error.
	Remove() error
	// String says where the token is kept, for people; never a secret.
	String() string
}
