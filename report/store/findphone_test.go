package store

import (
	"path/filepath"
	"testing"
)

// TestFindPhoneTakesTheAgentThatMayHaveCalled: under dedupe: campaign a
// number is settled by the agent whose record says most that it may have
// been called, not by the first agent the journal met: a try under Beta
// that was never placed (retry) does not hide Alpha's call (sent), nor
// Gamma's uncertain one; among records that say as much, the first.
func TestFindPhoneTakesTheAgentThatMayHaveCalled(t *testing.T) {
	j, s := openJournal(t, filepath.Join(t.TempDir(), JournalFile))
	mustAppend(t, j,
		intent("Beta", "+15550001"), outcome("Beta", "+15550001", OutcomeRetry),
		intent("Gamma", "+15550001"), outcome("Gamma", "+15550001", OutcomeUncertain),
		intent("Alpha", "+15550001"), outcome("Alpha", "+15550001", OutcomeSent),
		intent("Beta", "+15550002"), outcome("Beta", "+15550002", OutcomeRetry),
		intent("Gamma", "+15550002"), // no outcome: uncertain
		intent("Beta", "+15550003"), outcome("Beta", "+15550003", OutcomeFailed),
		intent("Alpha", "+15550003"), outcome("Alpha", "+15550003", OutcomeRetry))
	for phone, want := range map[string]string{"+15550001": "Alpha", "+15550002": "Gamma", "+15550003": "Beta"} {
		if k, ok := s.FindPhone(phone); !ok || k.Agent != want {
			t.Errorf("FindPhone(%s) = %+v, %v; want agent %s", phone, k, ok, want)
		}
	}
}
