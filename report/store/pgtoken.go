package store

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// TokenKeyVar is the environment variable that holds the key the tokens
// kept in PostgreSQL are sealed with: 32 random bytes in base64.
const TokenKeyVar = "CALLRUN_TOKEN_KEY"

// ErrTokenKey means the key to seal tokens with is missing or is not 32
// bytes in base64. Its message says how to make one.
var ErrTokenKey = errors.New(TokenKeyVar + " must hold 32 random bytes in base64")

// makeKey says how to make a key, for the errors about it.
const makeKey = "make one with `openssl rand -base64 32`, keep it as a secret beside the database's URL, and give the same key to every machine that runs the campaign"

// ParseTokenKey reads the key of [TokenKeyVar] (its value s): 32 bytes in
// standard base64, as `openssl rand -base64 32` prints them. Its errors
// never repeat s.
func ParseTokenKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: it is not set; with state.postgres the service's token is kept in the database, sealed with that key: %s", ErrTokenKey, makeKey)
	}
	key, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: it is not base64; %s", ErrTokenKey, makeKey)
	}
	if len(key) != 32 {
		return nil, fmt.Errorf("%w: it holds %d bytes; %s", ErrTokenKey, len(key), makeKey)
	}
	return key, nil
}

// ErrTokenSealed means a token in the database cannot be opened with the
// key given: it was sealed with another key, or it was changed.
var ErrTokenSealed = errors.New("the token in the database cannot be opened")

// PGToken is one service's and one client's token, kept in the row of
// callrun_tokens for its base URL and client id, sealed with AES-256-GCM
// under a key of the environment ([TokenKeyVar]), the row's own key as
// the additional data: a sealed token copied to another row does not open.
// Every machine that reaches the database shares it, so the shards of a
// campaign on any number of machines refresh one refresh token in turn.
//
// Its lock is the row's: Lock begins a transaction and takes the row FOR
// UPDATE (creating it, empty, if missing); Load reads in that
// transaction; Save and Remove write and commit it, so that the refreshed
// token is durable before anyone uses it, and the commit ends the lock;
// unlock rolls back when nothing was written. It holds the token's value
// only as bytes, which it never logs; [Postgres.Token] keeps a [Token] in
// it.
type PGToken struct {
	p        *Postgres
	baseURL  string
	clientID string
	aead     cipher.AEAD
	keyID    string
	sem      chan struct{} // one lock holder in this process at a time

	mu  sync.Mutex
	tx  pgx.Tx          // the lock's transaction, while held and not yet committed
	ctx context.Context // the context the lock was taken with
}

// Token returns the token of the service and client r names, kept in
// its row as JSON sealed with r.Key (see [ParseTokenKey]).
func (p *Postgres) Token(r TokenRequest) (KeptToken, error) {
	row, err := p.SealedToken(r.BaseURL, r.ClientID, r.Key)
	if err != nil {
		return nil, err
	}
	return sealedToken{row}, nil
}

// SealedToken returns the row of the token of the service at baseURL for
// clientID, sealed with key (see [ParseTokenKey]).
func (p *Postgres) SealedToken(baseURL, clientID string, key []byte) (*PGToken, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("%w: it holds %d bytes; %s", ErrTokenKey, len(key), makeKey)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(append([]byte("callrun token key id\x00"), key...))
	return &PGToken{p: p, baseURL: strings.TrimRight(baseURL, "/"), clientID: clientID, aead: aead,
		keyID: hex.EncodeToString(sum[:6]), sem: make(chan struct{}, 1)}, nil
}

// String says where the token is kept.
func (t *PGToken) String() string { return "the " + t.p.where + " (table callrun_tokens)" }

// additional is the data a sealed token is bound to: its row.
func (t *PGToken) additional() []byte {
	return []byte("callrun_tokens\x00" + t.baseURL + "\x00" + t.clientID)
}

// sealedVersion is the first byte of a sealed token: the form that
// follows (a 12-byte nonce, then the sealed bytes).
const sealedVersion = 1

func (t *PGToken) seal(plain []byte) ([]byte, error) {
	out := make([]byte, 1+t.aead.NonceSize(), 1+t.aead.NonceSize()+len(plain)+t.aead.Overhead())
	out[0] = sealedVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, err
	}
	return t.aead.Seal(out, out[1:], plain, t.additional()), nil
}

func (t *PGToken) open(sealed []byte, keyID string) ([]byte, error) {
	if keyID != "" && keyID != t.keyID {
		return nil, fmt.Errorf("%w: it was sealed with another %s (key id %s; this one's is %s): give this machine the key that `callrun auth login` had, or log in again with this one", ErrTokenSealed, TokenKeyVar, keyID, t.keyID)
	}
	n := t.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealedVersion {
		return nil, fmt.Errorf("%w: it is not in a form this callrun knows; run `callrun auth login` again", ErrTokenSealed)
	}
	plain, err := t.aead.Open(nil, sealed[1:1+n], sealed[1+n:], t.additional())
	if err != nil {
		return nil, fmt.Errorf("%w with this %s: it was changed, or sealed for another service or client; run `callrun auth login` again", ErrTokenSealed, TokenKeyVar)
	}
	return plain, nil
}

// held returns the lock's transaction and context, or nil when the lock
// is not held (or its transaction was committed).
func (t *PGToken) held() (pgx.Tx, context.Context) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.tx, t.ctx
}

// Lock takes the row's lock, waiting for another holder (in this process
// or any other) until ctx ends. Load, Save and Remove are the holder's
// until unlock: they run in its transaction.
func (t *PGToken) Lock(ctx context.Context) (unlock func(), err error) {
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting for the token's lock in %s: %w", t, ctx.Err())
	}
	tx, err := t.p.pool.Begin(ctx)
	if err == nil {
		// A missing row is created, so that there is one to lock; if nothing
		// is saved the rollback takes it away again.
		_, err = tx.Exec(ctx, `INSERT INTO callrun_tokens (base_url, client_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`, t.baseURL, t.clientID)
		if err == nil {
			_, err = tx.Exec(ctx, `SELECT 1 FROM callrun_tokens WHERE base_url = $1 AND client_id = $2 FOR UPDATE`, t.baseURL, t.clientID)
		}
		if err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
		}
	}
	if err != nil {
		<-t.sem
		return nil, t.p.wrap("locking the token in", err)
	}
	t.mu.Lock()
	t.tx, t.ctx = tx, ctx
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		tx := t.tx
		t.tx, t.ctx = nil, nil
		t.mu.Unlock()
		if tx != nil {
			rctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
			tx.Rollback(rctx) // the lock ends with the transaction, or with its connection
			cancel()
		}
		<-t.sem
	}, nil
}

// Load returns the token's bytes as they were saved and when, or nil
// bytes when none is saved. Under the lock it reads in the lock's
// transaction.
func (t *PGToken) Load() (plain []byte, savedAt time.Time, err error) {
	const q = `SELECT key_id, sealed, saved_at FROM callrun_tokens WHERE base_url = $1 AND client_id = $2`
	var keyID *string
	var sealed []byte
	var at *time.Time
	if tx, ctx := t.held(); tx != nil {
		err = tx.QueryRow(ctx, q, t.baseURL, t.clientID).Scan(&keyID, &sealed, &at)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
		defer cancel()
		err = t.p.pool.QueryRow(ctx, q, t.baseURL, t.clientID).Scan(&keyID, &sealed, &at)
	}
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && sealed == nil) {
		return nil, time.Time{}, nil
	}
	if err != nil {
		return nil, time.Time{}, t.p.wrap("reading the token from", err)
	}
	if at != nil {
		savedAt = *at
	}
	var id string
	if keyID != nil {
		id = *keyID
	}
	plain, err = t.open(sealed, id)
	return plain, savedAt, err
}

// Save seals plain and saves it. Under the lock it commits the lock's
// transaction, which ends the lock: once Save returns, the token is
// durable (synchronous commit) and another holder may take it. It
// finishes even when the lock's context has ended since: a refresh
// token that the service has just rotated must not be lost.
func (t *PGToken) Save(plain []byte) error {
	sealed, err := t.seal(plain)
	if err != nil {
		return err
	}
	return t.write("saving the token to", `
INSERT INTO callrun_tokens (base_url, client_id, key_id, sealed, saved_at) VALUES ($1, $2, $3, $4, now())
ON CONFLICT (base_url, client_id) DO UPDATE SET key_id = excluded.key_id, sealed = excluded.sealed, saved_at = excluded.saved_at`,
		t.baseURL, t.clientID, t.keyID, sealed)
}

// Remove deletes the token. Under the lock it commits the lock's
// transaction, as Save does.
func (t *PGToken) Remove() error {
	return t.write("removing the token from", `DELETE FROM callrun_tokens WHERE base_url = $1 AND client_id = $2`, t.baseURL, t.clientID)
}

// write runs one statement: in the lock's transaction and committed, when
// the lock is held, else on its own.
func (t *PGToken) write(doing, q string, args ...any) error {
	t.mu.Lock()
	tx, lctx := t.tx, t.ctx
	t.tx = nil // committed or not, the transaction is spent
	t.mu.Unlock()
	base := context.Background()
	if lctx != nil {
		base = context.WithoutCancel(lctx)
	}
	ctx, cancel := context.WithTimeout(base, commitTimeout)
	defer cancel()
	if tx == nil {
		if _, err := t.p.pool.Exec(ctx, q, args...); err != nil {
			return t.p.wrap(doing, err)
		}
		return nil
	}
	if _, err := tx.Exec(ctx, q, args...); err != nil {
		tx.Rollback(ctx)
		return t.p.wrap(doing, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return t.p.wrap(doing, err)
	}
	return nil
}
