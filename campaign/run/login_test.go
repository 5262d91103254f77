package run

import "testing"

// TestCodeFromPaste: a pasted code, or a redirect URL of this login
// attempt, gives the code; another attempt's URL, a refusal and nothing
// do not.
func TestCodeFromPaste(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{"abc123", "abc123", true},
		{"http://127.0.0.1:8765/callback?code=xyz&state=S", "xyz", true},
		{"https://example.com/cb?code=xyz", "xyz", true},
		{"http://127.0.0.1:8765/callback?code=xyz&state=OTHER", "", false},
		{"http://127.0.0.1:8765/callback?error=access_denied&state=S&code=", "", false},
		{"", "", false},
	} {
		got, err := codeFromPaste(tc.in, "S")
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("codeFromPaste(%q) = %q, %v", tc.in, got, err)
		}
	}
}
