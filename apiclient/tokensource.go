package apiclient

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// Refresh backoff bounds: after a failed refresh, callers get the same error
// back without a new request until the pause is over, so a broken token
// endpoint sees one request per pause, not one per worker.
const (
	minRefreshPause = time.Second
	maxRefreshPause = time.Minute
)

// StoredTokenSource is the [TokenSource] behind every command that talks to the
// service. It keeps the current token in memory and refreshes it shortly
// before it expires, or when the service answered 401. The token is saved
// in a [TokenStore].
//
// However many goroutines ask at once, one refresh is made. A refresh first
// takes the store's lock and loads the token again, so a token that another
// process refreshed meanwhile is adopted instead of spending the same
// refresh token twice. The refreshed token, with the rotated refresh token,
// is saved in the store before anyone uses it.
type StoredTokenSource struct {
	OAuth *OAuth
	Store TokenStore

	sem       chan struct{} // one holder at a time; a channel so waiting honours ctx
	tok       *Token        // current token; guarded by sem
	stale     string        // access token the service rejected; guarded by sem
	fatal     error         // a refusal that needs a person; guarded by sem
	failErr   error         // last transient refresh error; guarded by sem
	failUntil time.Time     // no new refresh before this; guarded by sem
	failures  int           // consecutive failed refreshes; guarded by sem

	refreshes atomic.Int64
}

// NewStoredTokenSource returns a token source over the token kept in
// store, refreshing with o.
func NewStoredTokenSource(o *OAuth, store TokenStore) *StoredTokenSource {
	return &StoredTokenSource{OAuth: o, Store: store, sem: make(chan struct{}, 1)}
}

// Refreshes returns how many refresh requests this source has sent.
func (s *StoredTokenSource) Refreshes() int64 { return s.refreshes.Load() }

func (s *StoredTokenSource) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *StoredTokenSource) release() { <-s.sem }

// usable reports whether tok can be handed out at now.
func (s *StoredTokenSource) usable(tok *Token, now time.Time) bool {
	return tok.Fresh(now) && tok.AccessToken != s.stale
}

// Token implements [TokenSource].
func (s *StoredTokenSource) Token(ctx context.Context) (*Token, error) {
	if err := s.acquire(ctx); err != nil {
		return nil, err
	}
	defer s.release()
	now := s.OAuth.now()
	if s.tok != nil && s.usable(s.tok, now) {
		return s.tok, nil
	}
	if s.fatal != nil {
		return nil, s.fatal
	}
	if s.failErr != nil && now.Before(s.failUntil) {
		return nil, s.failErr
	}
	tok, err := s.renew(ctx, now)
	if err != nil {
		var ae *AuthError
		switch {
		case errors.As(err, &ae): // the store's own: a token it cannot open
			s.fatal = ae
			return nil, s.fatal
		case errors.Is(err, ErrReauthorize) || errors.Is(err, ErrNotLoggedIn):
			s.fatal = &AuthError{Err: err}
			return nil, s.fatal
		}
		if ctx.Err() == nil {
			s.failures++
			pause := min(minRefreshPause<<min(s.failures-1, 10), maxRefreshPause)
			s.failErr = fmt.Errorf("%w (next try in %s)", err, pause)
			s.failUntil = now.Add(pause)
		}
		return nil, err
	}
	s.failures, s.failErr = 0, nil
	s.tok = tok
	return tok, nil
}

// AuthError is a failure that only a person can mend, by logging in again:
// there is no token, or the service refused the saved one. Its message is
// a whole sentence, meant to be shown on its own.
type AuthError struct{ Err error }

func (e *AuthError) Error() string { return e.Err.Error() }
func (e *AuthError) Unwrap() error { return e.Err }

// ForceRefresh refreshes the token now, even if it is still fresh. It is
// what `callrun auth refresh` does.
func (s *StoredTokenSource) ForceRefresh(ctx context.Context) (tok *Token, err error) {
	err = s.exclusive(ctx, func() error {
		disk, err := s.Store.Load()
		if err != nil {
			return err
		}
		if tok, err = s.refreshWith(ctx, disk); err != nil {
			return err
		}
		s.tok, s.fatal, s.failErr = tok, nil, nil
		return nil
	})
	return tok, err
}

// exclusive runs fn holding both this source's semaphore and the token
// store's lock: no goroutine here and no other process touches the token
// meanwhile.
func (s *StoredTokenSource) exclusive(ctx context.Context, fn func() error) error {
	if err := s.acquire(ctx); err != nil {
		return err
	}
	defer s.release()
	unlock, err := s.Store.Lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	return fn()
}

// renew returns a usable token: the one in the store if it is newer than the
// one in memory and still fresh, else a refreshed one. It holds the store's
// lock throughout.
func (s *StoredTokenSource) renew(ctx context.Context, now time.Time) (*Token, error) {
	unlock, err := s.Store.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	disk, err := s.Store.Load()
	if err != nil {
		return nil, err
	}
	if s.usable(disk, now) {
		return disk, nil // first load, or another process refreshed already
	}
	return s.refreshWith(ctx, disk)
}

// refreshWith refreshes with disk's refresh token and saves the result
// before returning it. The caller holds the store's lock.
func (s *StoredTokenSource) refreshWith(ctx context.Context, disk *Token) (*Token, error) {
	if disk.RefreshToken == "" {
		return nil, fmt.Errorf("%w: the saved access token has expired and the service gave no refresh token", ErrReauthorize)
	}
	s.refreshes.Add(1)
	tok, err := s.OAuth.Refresh(ctx, disk.RefreshToken)
	if err != nil {
		return nil, err
	}
	// Save before use: if the service rotated the refresh token, the old
	// one is dead now and the new one must not be lost.
	if err := s.Store.Save(tok); err != nil {
		return nil, fmt.Errorf("saving the refreshed token (log in again if this run stops): %w", err)
	}
	return tok, nil
}

// Invalidate implements [TokenSource]. Only the first report about a given
// token counts; later ones, from requests that were already under way, find
// the token replaced.
func (s *StoredTokenSource) Invalidate(tok *Token) {
	s.sem <- struct{}{}
	defer s.release()
	if tok != nil && s.tok != nil && s.tok.AccessToken == tok.AccessToken {
		s.stale = tok.AccessToken
	}
}

// Login exchanges an authorization code and saves the token, under the
// store's lock. It returns the saved token.
func (s *StoredTokenSource) Login(ctx context.Context, code string) (*Token, error) {
	tok, err := s.OAuth.Exchange(ctx, code)
	if err != nil {
		return nil, err
	}
	err = s.exclusive(ctx, func() error {
		if err := s.Store.Save(tok); err != nil {
			return err
		}
		s.tok, s.stale, s.fatal, s.failErr, s.failures = tok, "", nil, nil, 0
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tok, nil
}
