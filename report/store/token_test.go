package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTokenFileModeAndAtomicReplace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "tok.json")
	f := &TokenFile{Path: path, BaseURL: "https://api.example.com", ClientID: "c"}
	if _, err := f.Load(); !errors.Is(err, ErrNoToken) {
		t.Fatalf("missing file: err = %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil { // an older, too-open file
		t.Fatal(err)
	}
	want := &Token{AccessToken: "a", RefreshToken: "r", TokenType: "Bearer", Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := f.Save(want); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	got, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if *got != *want {
		t.Errorf("loaded %#v, want %#v", got, want)
	}
	other := &TokenFile{Path: path, BaseURL: "https://other.example.com", ClientID: "c"}
	if _, err := other.Load(); err == nil {
		t.Error("a token file of another service was accepted")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range entries {
		if e.Name() != "tok.json" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
	if err := os.WriteFile(path, []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Load(); err == nil || !strings.Contains(err.Error(), "auth login") {
		t.Errorf("damaged file: err = %v", err)
	}
}

func TestDefaultTokenPathPerServiceAndClient(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	a, _ := DefaultTokenPath("https://a.example.com", "c1")
	b, _ := DefaultTokenPath("https://a.example.com/", "c1")
	c, _ := DefaultTokenPath("https://a.example.com", "c2")
	d, _ := DefaultTokenPath("https://b.example.com", "c1")
	if a != b || a == c || a == d || c == d {
		t.Errorf("paths: %s %s %s %s", a, b, c, d)
	}
	if !strings.Contains(a, filepath.Join("callrun", "tokens")) {
		t.Errorf("path %s is not under callrun/tokens", a)
	}
}

// TestTokenFileOfTheOldCode: a token file written before the file moved
// into the store (apiclient's TokenFile wrote this very text, mode 0600)
// is read as it was, and written back in the same bytes.
func TestTokenFileOfTheOldCode(t *testing.T) {
	old := `{
  "base_url": "https://api.example.com",
  "client_id": "client-1",
  "access_token": "at-1",
  "token_type": "Bearer",
  "refresh_token": "rt-1",
  "expiry": "2030-01-01T00:00:00Z",
  "issued_at": "2029-12-31T23:00:00Z"
}
`
	path := filepath.Join(t.TempDir(), "tok.json")
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	f := &TokenFile{Path: path, BaseURL: "https://api.example.com/", ClientID: "client-1"}
	tok, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := Token{AccessToken: "at-1", TokenType: "Bearer", RefreshToken: "rt-1",
		Expiry: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC), IssuedAt: time.Date(2029, 12, 31, 23, 0, 0, 0, time.UTC)}
	if !tok.Expiry.Equal(want.Expiry) || !tok.IssuedAt.Equal(want.IssuedAt) || tok.AccessToken != want.AccessToken || tok.RefreshToken != want.RefreshToken || tok.TokenType != want.TokenType {
		t.Fatalf("loaded %#v, want %#v", tok, want)
	}
	f.BaseURL = "https://api.example.com" // as the old code was given it
	if err := f.Save(tok); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != old {
		t.Errorf("saved\n%s\nwant the old code's bytes\n%s", b, old)
	}
}
