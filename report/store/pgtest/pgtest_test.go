package pgtest_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func connect(t *testing.T, u string) (*pgx.Conn, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, u)
	if err == nil {
		t.Cleanup(func() { conn.Close(context.Background()) })
	}
	return conn, err
}

func dbname(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal("URL does not parse")
	}
	return strings.TrimPrefix(p.Path, "/")
}

func TestURLGivesTwoEmptyDatabases(t *testing.T) {
	u1, u2 := pgtest.URL(t), pgtest.URL(t)
	if dbname(t, u1) == dbname(t, u2) {
		t.Fatalf("two URL calls gave one database, %s", dbname(t, u1))
	}
	ctx := context.Background()
	var conns []*pgx.Conn
	for _, u := range []string{u1, u2} {
		conn, err := connect(t, u)
		if err != nil {
			t.Fatalf("connecting to %s: %v", dbname(t, u), err)
		}
		var current string
		var tables int
		if err := conn.QueryRow(ctx, `SELECT current_database(),
			(SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema'))`).Scan(&current, &tables); err != nil {
			t.Fatalf("query in %s: %v", dbname(t, u), err)
		}
		if current != dbname(t, u) || tables != 0 {
			t.Fatalf("database %s: current_database() = %s with %d tables, want itself, empty", dbname(t, u), current, tables)
		}
		conns = append(conns, conn)
	}
	// A table made in the first is not in the second.
	if _, err := conns[0].Exec(ctx, "CREATE TABLE journal (id int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conns[1].QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'journal'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("a table created in the first database is seen in the second")
	}
}

func TestURLDropsItsDatabase(t *testing.T) {
	var name string
	t.Run("user", func(t *testing.T) { name = dbname(t, pgtest.URL(t)) })
	conn, err := connect(t, pgtest.Shared(t).AdminURL("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("database %s still exists after its test ended", name)
	}
}

func TestStopStart(t *testing.T) {
	c := pgtest.Shared(t)
	u := pgtest.URL(t)
	ping := func() error {
		conn, err := connect(t, u)
		if err != nil {
			return err
		}
		return conn.Ping(context.Background())
	}
	if err := ping(); err != nil {
		t.Fatalf("before Stop: %v", err)
	}
	c.Stop(t)
	t.Cleanup(func() { c.Start(t) }) // for the tests after this one, should it fail midway
	if err := ping(); err == nil {
		t.Fatal("connected after Stop")
	}
	start := time.Now()
	c.Start(t)
	t.Logf("restart after a crash took %v", time.Since(start).Round(time.Millisecond))
	if err := ping(); err != nil {
		t.Fatalf("after Start: %v", err)
	}
}
