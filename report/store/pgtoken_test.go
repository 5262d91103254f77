package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func testKey(b byte) []byte { return bytes.Repeat([]byte{b}, 32) }

func pgToken(t *testing.T, p *Postgres, clientID string, key []byte) *PGToken {
	t.Helper()
	tok, err := p.SealedToken("https://api.example.com/", clientID, key)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func lockToken(t *testing.T, tok *PGToken) func() {
	t.Helper()
	unlock, err := tok.Lock(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return unlock
}

func TestParseTokenKey(t *testing.T) {
	good := base64.StdEncoding.EncodeToString(testKey(7))
	if key, err := ParseTokenKey(" " + good + "\n"); err != nil || !bytes.Equal(key, testKey(7)) {
		t.Errorf("ParseTokenKey(the output of openssl rand -base64 32): %v", err)
	}
	short := base64.StdEncoding.EncodeToString([]byte("sixteen-byte-key"))
	for _, bad := range []string{"", "not*base64*at*all", short} {
		_, err := ParseTokenKey(bad)
		if !errors.Is(err, ErrTokenKey) || !strings.Contains(err.Error(), "openssl rand -base64 32") {
			t.Errorf("ParseTokenKey(%q): %v; want ErrTokenKey saying how to make one", bad, err)
		}
		if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("ParseTokenKey's error repeats the key: %v", err)
		}
	}
}

// TestPGTokenSealedRoundTrip: a token saved under the lock reads back
// from another connection; the row holds no byte of it in the clear; the
// wrong key, or the sealed bytes moved to another client's row, do not
// open it, and say so.
func TestPGTokenSealedRoundTrip(t *testing.T) {
	url := pgURL(t)
	p := openPostgres(t, url, "c", 0, 1)
	tok := pgToken(t, p, "client-a", testKey(1))
	if plain, _, err := tok.Load(); err != nil || plain != nil {
		t.Fatalf("Load before any save: %q, %v; want nothing", plain, err)
	}
	secret := []byte(`{"access_token":"at_0123456789abcdef","refresh_token":"rt_fedcba9876543210"}`)
	unlock := lockToken(t, tok)
	if plain, _, err := tok.Load(); err != nil || plain != nil {
		t.Fatalf("Load under the first lock: %q, %v; want nothing", plain, err)
	}
	if err := tok.Save(secret); err != nil {
		t.Fatal(err)
	}
	unlock()

	other := openPostgres(t, url, "c", 0, 1) // another machine
	plain, at, err := pgToken(t, other, "client-a", testKey(1)).Load()
	if err != nil || !bytes.Equal(plain, secret) || time.Since(at) > time.Minute {
		t.Fatalf("Load from another connection: %q saved %v, %v", plain, at, err)
	}

	admin, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var sealed []byte
	if err := admin.QueryRow(context.Background(), `SELECT sealed FROM callrun_tokens WHERE client_id = 'client-a'`).Scan(&sealed); err != nil {
		t.Fatal(err)
	}
	for _, part := range []string{"at_0123456789abcdef", "rt_fedcba9876543210", "access_token"} {
		if bytes.Contains(sealed, []byte(part)) {
			t.Errorf("the row holds %q in the clear", part)
		}
	}

	_, _, err = pgToken(t, other, "client-a", testKey(2)).Load()
	if !errors.Is(err, ErrTokenSealed) || !strings.Contains(err.Error(), "another "+TokenKeyVar) {
		t.Errorf("Load with another key: %v; want ErrTokenSealed saying it was sealed with another key", err)
	}
	// The same key but another row: the sealed bytes are bound to theirs.
	if _, err := admin.Exec(context.Background(), `INSERT INTO callrun_tokens (base_url, client_id, key_id, sealed, saved_at)
SELECT base_url, 'client-b', key_id, sealed, saved_at FROM callrun_tokens WHERE client_id = 'client-a'`); err != nil {
		t.Fatal(err)
	}
	_, _, err = pgToken(t, other, "client-b", testKey(1)).Load()
	if !errors.Is(err, ErrTokenSealed) || !strings.Contains(err.Error(), "auth login") {
		t.Errorf("Load of a token moved from another row: %v; want ErrTokenSealed", err)
	}
	// One byte changed: flipped, as setting it to a value it may hold
	// already (one time in 256) would change nothing.
	if _, err := admin.Exec(context.Background(), `UPDATE callrun_tokens SET sealed = set_byte(sealed, 19, get_byte(sealed, 19) # 255) WHERE client_id = 'client-a'`); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tok.Load(); !errors.Is(err, ErrTokenSealed) {
		t.Errorf("Load of a changed token: %v; want ErrTokenSealed", err)
	}

	unlock = lockToken(t, tok)
	if err := tok.Remove(); err != nil {
		t.Fatal(err)
	}
	unlock()
	if plain, _, err := tok.Load(); err != nil || plain != nil {
		t.Errorf("Load after Remove: %q, %v; want nothing", plain, err)
	}
}

// TestPGTokenLockSerialisesRefreshers: holders on separate connections
// (machines, in effect) refresh a rotating refresh token at once: each
// takes the row's lock, reads the token, spends it and saves the next.
// A holder that read a token someone else had spent already would be
// refused, as the service refuses a rotated-away refresh token; there
// must be no refusal, and no refresh lost.
func TestPGTokenLockSerialisesRefreshers(t *testing.T) {
	const holders, rounds = 6, 8
	url := pgURL(t)
	key := testKey(3)
	first := pgToken(t, openPostgres(t, url, "c", 0, 1), "client", key)
	unlock := lockToken(t, first)
	if err := first.Save([]byte("rt-0")); err != nil {
		t.Fatal(err)
	}
	unlock()

	var (
		mu       sync.Mutex
		valid    = "rt-0" // the one refresh token the service accepts
		spent    int
		refusals atomic.Int32
	)
	refresh := func(rt string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		if rt != valid {
			return "", false
		}
		spent++
		valid = fmt.Sprintf("rt-%d", spent)
		return valid, true
	}
	var wg sync.WaitGroup
	for h := range holders {
		tok := pgToken(t, openPostgres(t, url, "c", 0, 1), "client", key)
		wg.Go(func() {
			for range rounds {
				unlock, err := tok.Lock(context.Background())
				if err != nil {
					t.Errorf("holder %d: %v", h, err)
					return
				}
				rt, _, err := tok.Load()
				if err != nil {
					unlock()
					t.Errorf("holder %d: %v", h, err)
					return
				}
				time.Sleep(time.Millisecond) // the token endpoint's round trip, when the race would show
				next, ok := refresh(string(rt))
				if !ok {
					refusals.Add(1)
					unlock()
					continue
				}
				if err := tok.Save([]byte(next)); err != nil {
					t.Errorf("holder %d: %v", h, err)
				}
				unlock()
			}
		})
	}
	wg.Wait()
	if n := refusals.Load(); n != 0 {
		t.Errorf("%d refreshes were refused: two holders spent the same refresh token", n)
	}
	if spent != holders*rounds {
		t.Errorf("%d refreshes, want %d", spent, holders*rounds)
	}
	if plain, _, err := first.Load(); err != nil || string(plain) != valid {
		t.Errorf("the row holds %q (%v), want the newest, %q", plain, err, valid)
	}
}

// TestPGTokenLockWaitsAndUnlockRollsBack: a second holder waits for the
// first (until its context ends); a lock released without a save leaves
// the token as it was, and no empty row behind.
func TestPGTokenLockWaitsAndUnlockRollsBack(t *testing.T) {
	url := pgURL(t)
	a := pgToken(t, openPostgres(t, url, "c", 0, 1), "client", testKey(4))
	b := pgToken(t, openPostgres(t, url, "c", 0, 1), "client", testKey(4))
	unlockA := lockToken(t, a)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := b.Lock(ctx); err == nil {
		t.Fatal("a second holder took the lock while the first held it")
	}
	got := make(chan error, 1)
	go func() {
		unlock, err := b.Lock(context.Background())
		if err == nil {
			unlock()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("the second holder did not wait: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	unlockA() // nothing saved: rolled back
	if err := <-got; err != nil {
		t.Fatalf("the second holder, once the first let go: %v", err)
	}
	admin, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var rows int
	if err := admin.QueryRow(context.Background(), `SELECT count(*) FROM callrun_tokens`).Scan(&rows); err != nil || rows != 0 {
		t.Errorf("after locks with no save: %d rows (%v), want none", rows, err)
	}
}

// TestPostgresMigratesVersion1: a database set up by the callrun before
// tokens were kept there gets the later tables, and keeps its journal.
func TestPostgresMigratesVersion1(t *testing.T) {
	url := pgURL(t)
	p := openPostgres(t, url, "c", 0, 1)
	func() {
		defer lockStore(t, p)()
		j, _ := openStoreJournal(t, p)
		mustAppend(t, j, intent("a", "+15550001"), outcome("a", "+15550001", OutcomeSent))
		j.Close()
	}()
	admin, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(context.Background(), `DROP TABLE callrun_tokens; DROP TABLE callrun_do_not_call; DROP TABLE callrun_deliveries; DROP TABLE callrun_call_starts; DROP TABLE callrun_conversations; DROP TABLE callrun_opt_out_holds; DROP TABLE callrun_keys; DROP TABLE callrun_erased; DROP TABLE callrun_report_dirs; DROP TABLE callrun_do_not_call_sources; DROP TABLE callrun_agents_created; ALTER TABLE callrun_runs DROP COLUMN campaign_file, DROP COLUMN state_dir; UPDATE callrun_schema SET version = 1`); err != nil {
		t.Fatal(err)
	}
	p2 := openPostgres(t, url, "c", 0, 1)
	var v int
	if err := admin.QueryRow(context.Background(), `SELECT version FROM callrun_schema`).Scan(&v); err != nil || v != schemaVersion {
		t.Errorf("schema version after opening a version-1 database: %d (%v), want %d", v, err, schemaVersion)
	}
	st, err := p2.ReadState(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if e, ok := st.Lookup(Key{"a", "+15550001", 0}); !ok || e.Status != Sent {
		t.Errorf("the journal after the migration: %+v, %v", e, ok)
	}
	tok := pgToken(t, p2, "client", testKey(5))
	unlock := lockToken(t, tok)
	if err := tok.Save([]byte("x")); err != nil {
		t.Errorf("saving a token after the migration: %v", err)
	}
	unlock()
}

// TestPGTokenSaveOutlivesTheLocksContext: the caller's context ends
// between the refresh and the save (a run stopping, say). The service has
// rotated the refresh token by then, so the save must still happen: the
// old one is dead, and losing the new one would need a person to log in.
func TestPGTokenSaveOutlivesTheLocksContext(t *testing.T) {
	tok := pgToken(t, openPostgres(t, pgURL(t), "c", 0, 1), "client", testKey(6))
	ctx, cancel := context.WithCancel(context.Background())
	unlock, err := tok.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := tok.Save([]byte("rt-new")); err != nil {
		t.Errorf("Save after the lock's context ended: %v", err)
	}
	unlock()
	if plain, _, err := tok.Load(); err != nil || string(plain) != "rt-new" {
		t.Errorf("the row holds %q (%v), want the token saved", plain, err)
	}
}
