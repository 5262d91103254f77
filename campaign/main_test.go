package campaign

import (
	"testing"

	"github.com/callrun/callrun/report/store/pgtest"
)

// TestMain stops the throwaway PostgreSQL of the dispatch tests that keep
// their journal there.
func TestMain(m *testing.M) { pgtest.Main(m) }
