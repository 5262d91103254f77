// Package pgtest gives callrun's tests a throwaway PostgreSQL cluster on
// loopback, as net/http/httptest gives them a server: the tests of the
// PostgreSQL journal store (report/store), of campaign and of package main
// call [URL] for a new, empty database of their own, and the few that fault
// the server (a crash, a restart) use [Shared]'s [Cluster].
//
// One cluster per test binary is started on first use with initdb and
// pg_ctl from the newest /usr/lib/postgresql/*/bin (else from PATH), in a
// temporary directory, listening on 127.0.0.1 only; the package's TestMain
// calls [Main], which stops it and removes the directory. Should the binary
// die before that (a timeout, a kill), a small watchdog process stops the
// cluster and removes the directory when the binary's end of a pipe closes.
//
// With CALLRUN_TEST_DATABASE_URL set, that server is used instead and the
// databases are created in it. Without PostgreSQL the tests skip, unless
// CI is set, where they fail: CI must never silently skip them.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the variable that points the tests at an existing server.
const EnvURL = "CALLRUN_TEST_DATABASE_URL"

const superuser = "callrun_test"

// A Cluster is the test binary's PostgreSQL server.
type Cluster struct {
	external *url.URL // CALLRUN_TEST_DATABASE_URL's server, or nil

	bin      string // directory holding initdb and pg_ctl
	dir      string // temporary directory: data/, the socket, the log
	port     int
	password string
	runAs    *syscall.SysProcAttr // runs a command as the cluster's user when we are root
	uid, gid int                  // the cluster's user, when runAs is set
	watchdog *exec.Cmd
	wdPipe   io.WriteCloser // kept referenced: its close is the watchdog's signal

	mu      sync.Mutex
	running bool
}

var (
	once     sync.Once
	shared   *Cluster
	startErr error
	missing  bool
)

// Main runs m for a package's TestMain, then stops the cluster if one was
// started, removes its directory and exits with m's code.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run is [Main] for a TestMain that has more to clean up: it returns m's
// code rather than exiting.
func Run(m *testing.M) int {
	code := m.Run()
	if shared != nil && shared.external == nil {
		shared.shutdown()
	}
	return code
}

// shutdown stops the server, its data thrown away, and the watchdog, and
// removes the directory.
func (c *Cluster) shutdown() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		c.pgctl("-m", "immediate", "stop")
		c.running = false
	}
	if c.watchdog != nil {
		c.watchdog.Process.Kill()
		c.watchdog.Wait()
	}
	os.RemoveAll(c.dir)
}

// Shared returns the test binary's cluster, starting it on first use.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	if testing.Short() {
		t.Skip("pgtest: starts a PostgreSQL cluster; skipped with -short (make test-short)")
	}
	once.Do(func() { shared, missing, startErr = start() })
	const advice = "PostgreSQL's initdb and pg_ctl were found neither under /usr/lib/postgresql/*/bin nor in PATH: run `apt-get install postgresql` (or `make postgres`) or set " + EnvURL
	switch {
	case missing && os.Getenv("CI") != "":
		t.Fatalf("pgtest: %s", advice)
	case missing:
		t.Skipf("pgtest: %s", advice)
	case startErr != nil:
		t.Fatalf("pgtest: %v", startErr)
	}
	return shared
}

// URL returns the connection URL of a new, empty database on the shared
// cluster, dropped when t's test ends. The URL holds the password.
func URL(t testing.TB) string {
	t.Helper()
	c := Shared(t)
	name := "t_" + randomHex(8)
	if err := c.exec("CREATE DATABASE " + pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: creating database %s: %v", name, err)
	}
	t.Cleanup(func() {
		if c.external == nil {
			c.mu.Lock()
			stopped := !c.running
			c.mu.Unlock()
			if stopped {
				return // a test stopped it; the data goes with the cluster
			}
		}
		if err := c.exec("DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: dropping database %s: %v", name, err)
		}
	})
	return c.AdminURL(name)
}

// IdleSessionTimeout sets idle_session_timeout to d (such as "200ms")
// for every later session of the database at url, as a DBA or a managed
// server may: the tests of the connections that sit idle while holding a
// lock. It skips t on a server older than PostgreSQL 14, which has no
// such setting.
func IdleSessionTimeout(t testing.TB, url, d string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, `SELECT current_setting('server_version_num')::int`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v < 140000 {
		t.Skipf("PostgreSQL %d has no idle_session_timeout", v)
	}
	literal := "'" + strings.ReplaceAll(d, "'", "''") + "'"
	if _, err := conn.Exec(ctx, `DO $$BEGIN EXECUTE format('ALTER DATABASE %I SET idle_session_timeout = %L', current_database(), `+literal+`); END$$`); err != nil {
		t.Fatal(err)
	}
}

// AdminURL returns the superuser's URL of database dbname on the cluster.
func (c *Cluster) AdminURL(dbname string) string {
	if c.external != nil {
		u := *c.external
		u.Path = "/" + dbname
		u.RawPath = ""
		return u.String()
	}
	// The password is hex: nothing to escape.
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", superuser, c.password, c.port, url.PathEscape(dbname))
}

// Stop stops the cluster as a crash would (pg_ctl stop -m immediate).
func (c *Cluster) Stop(t testing.TB) { t.Helper(); c.set(t, false) }

// Start starts the cluster again on the same port and data directory and
// returns once it accepts connections.
func (c *Cluster) Start(t testing.TB) { t.Helper(); c.set(t, true) }

func (c *Cluster) set(t testing.TB, run bool) {
	t.Helper()
	if c.external != nil { // someone else's server is not ours to fault
		if os.Getenv("CI") != "" {
			t.Fatalf("pgtest: cannot stop or start the server of %s; unset it in CI", EnvURL)
		}
		t.Skipf("pgtest: cannot stop or start the server of %s", EnvURL)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running == run {
		return
	}
	start := c.startServer
	if !run {
		start = func() ([]byte, error) { return c.pgctl("-m", "immediate", "stop") }
	}
	out, err := start()
	if err != nil {
		t.Fatalf("pgtest: pg_ctl: %v\n%s", err, out)
	}
	c.running = run
}

// exec runs one statement in the cluster's postgres database.
func (c *Cluster) exec(sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.AdminURL("postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// start finds PostgreSQL and starts the cluster; missing is true when it
// is not installed.
func start() (c *Cluster, missing bool, err error) {
	if s := os.Getenv(EnvURL); s != "" {
		u, err := url.Parse(s) // its error would hold the password
		if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
			return nil, false, fmt.Errorf("%s is not a postgres:// URL", EnvURL)
		}
		return &Cluster{external: u}, false, nil
	}
	bin := findBin()
	if bin == "" {
		return nil, true, nil
	}
	c = &Cluster{bin: bin, password: randomHex(16)}
	if err := c.init(); err != nil {
		c.shutdown()
		return nil, false, err
	}
	return c, false, nil
}

func (c *Cluster) init() (err error) {
	parent := "" // os.TempDir
	if os.Geteuid() == 0 {
		// initdb refuses to run as root: run the cluster as postgres (made
		// by Debian's package), else nobody, in a directory under /tmp,
		// which every user can traverse (TMPDIR may not be).
		u, err := user.Lookup("postgres")
		if err != nil {
			if u, err = user.Lookup("nobody"); err != nil {
				return fmt.Errorf("running as root, and neither a postgres nor a nobody user to run the cluster as")
			}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.uid, c.gid, c.runAs = uid, gid, asUser(uint32(uid), uint32(gid))
		parent = "/tmp"
	}
	if c.dir, err = os.MkdirTemp(parent, "callrun-pgtest-"); err != nil {
		return err
	}
	pwfile := filepath.Join(c.dir, "pwfile")
	if err := os.WriteFile(pwfile, []byte(c.password+"\n"), 0o600); err != nil {
		return err
	}
	if c.runAs != nil {
		os.Chown(pwfile, c.uid, c.gid)
		if err := os.Chown(c.dir, c.uid, c.gid); err != nil {
			return err
		}
	}
	// -N: like fsync=off below, safe because tests only kill processes,
	// never crash the operating system.
	out, err := c.command(filepath.Join(c.bin, "initdb"), "-D", c.data(), "-U", superuser,
		"--pwfile", pwfile, "-A", "scram-sha-256", "-E", "UTF8", "--locale=C", "-N").CombinedOutput()
	os.Remove(pwfile)
	if err != nil {
		return fmt.Errorf("initdb: %v\n%s", err, out)
	}
	if err := c.startWatchdog(); err != nil {
		return err
	}
	for try := 0; ; try++ { // another process may take the free port first
		if c.port, err = freePort(); err != nil {
			return err
		}
		out, err = c.startServer()
		if err == nil {
			c.running = true
			return nil
		}
		if try == 4 || !strings.Contains(string(out), "in use") {
			return fmt.Errorf("pg_ctl start: %v\n%s", err, out)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func (c *Cluster) data() string { return filepath.Join(c.dir, "data") }

// startServer runs pg_ctl start and, on failure, returns its output and
// the server log.
func (c *Cluster) startServer() ([]byte, error) {
	log := filepath.Join(c.dir, "log")
	// fsync and full_page_writes off: tests never crash the operating
	// system, they only kill processes, which loses nothing written.
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off", c.port, c.dir)
	out, err := c.pgctl("-l", log, "-w", "-t", "60", "-o", opts, "start")
	if err != nil {
		logText, _ := os.ReadFile(log)
		out = append(append(out, "server log:\n"...), logText...)
	}
	return out, err
}

func (c *Cluster) pgctl(args ...string) ([]byte, error) {
	return c.command(filepath.Join(c.bin, "pg_ctl"), append([]string{"-D", c.data()}, args...)...).CombinedOutput()
}

// command runs name in the cluster's directory, as the cluster's user.
func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.dir
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if c.runAs != nil {
		attr := *c.runAs
		cmd.SysProcAttr = &attr
	}
	return cmd
}

// startWatchdog starts a process, in a session of its own, that stops the
// cluster and removes its directory once this binary's end of its stdin
// closes: when the binary exits in any way Main did not see.
func (c *Cluster) startWatchdog() error {
	const script = `read -r _; "$0" -D "$1" -m immediate stop >/dev/null 2>&1; rm -rf "$2"`
	cmd := c.command("/bin/sh", "-c", script, filepath.Join(c.bin, "pg_ctl"), c.data(), c.dir)
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	inOwnSession(cmd.SysProcAttr)
	w, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the watchdog: %v", err)
	}
	c.watchdog, c.wdPipe = cmd, w
	return nil
}

// findBin returns the directory of the newest installed initdb and pg_ctl.
func findBin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(d string) int { n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d))); return n }
	sort.Slice(dirs, func(i, j int) bool { return major(dirs[i]) > major(dirs[j]) })
	if initdb, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(initdb))
	}
	for _, d := range dirs {
		_, err1 := exec.LookPath(filepath.Join(d, "initdb"))
		_, err2 := exec.LookPath(filepath.Join(d, "pg_ctl"))
		if err1 == nil && err2 == nil {
			return d
		}
	}
	return ""
}

// freePort returns a loopback port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
