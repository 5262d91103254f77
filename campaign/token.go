package campaign

import (
	"errors"

	"github.com/callrun/callrun/apiclient"
	"github.com/callrun/callrun/report/store"
)

// TokenStore is the token the campaign's store keeps (a token file, or a
// database's row) as apiclient's token source wants it: the token's
// values handed to [apiclient.AddSecret] as they are loaded and saved, no
// token saved an [apiclient.ErrNotLoggedIn], and a token that needs a
// person (sealed with another key, or damaged in the database) an
// [apiclient.AuthError], which stops every worker at once rather than
// each trying again.
func TokenStore(k store.KeptToken) apiclient.TokenStore { return keptToken{k} }

type keptToken struct{ store.KeptToken }

// notLoggedIn is the store's word that no token is saved, with its own
// message, as [apiclient.ErrNotLoggedIn] too.
type notLoggedIn struct{ err error }

func (e notLoggedIn) Error() string   { return e.err.Error() }
func (e notLoggedIn) Unwrap() []error { return []error{apiclient.ErrNotLoggedIn, e.err} }

func (k keptToken) Load() (*apiclient.Token, error) {
	t, err := k.KeptToken.Load()
	var damaged *store.TokenDamagedError
	switch {
	case errors.Is(err, store.ErrNoToken):
		return nil, notLoggedIn{err}
	case errors.Is(err, store.ErrTokenSealed), errors.As(err, &damaged):
		return nil, &apiclient.AuthError{Err: err}
	case err != nil:
		return nil, err
	}
	apiclient.AddSecret(t.AccessToken)
	apiclient.AddSecret(t.RefreshToken)
	return (*apiclient.Token)(t), nil // the same fields: store.Token adds only their JSON names
}

func (k keptToken) Save(t *apiclient.Token) error {
	apiclient.AddSecret(t.AccessToken)
	apiclient.AddSecret(t.RefreshToken)
	return k.KeptToken.Save((*store.Token)(t))
}
