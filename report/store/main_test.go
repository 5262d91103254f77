package store

import (
	"testing"

	"github.com/callrun/callrun/report/store/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// pgURL is a new, empty database on the tests' throwaway PostgreSQL.
func pgURL(t *testing.T) string { return pgtest.URL(t) }
