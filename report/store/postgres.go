package store

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Postgres is the PostgreSQL store: a campaign's journal as rows of the
// table callrun_journal (one row a journal line, in the form the file
// store writes; the row's id is the line's position), and its run lock
// as a session-level advisory lock held on a connection of its own, so
// that every machine reaching the database shares one journal and one
// lock. callrun creates and migrates its tables itself. It also keeps the
// service's token for those machines ([Postgres.Token]).
//
// An intent is on record only once its INSERT has committed (with
// synchronous_commit on); the intents of workers that write at once share
// one statement. Every INSERT also checks, in the same statement, that
// this process's lock connection still holds the lock: once that
// connection is lost (a killed backend, a restarted server, a network
// cut), no record is written, so no call starts, and the journal fails
// with [ErrLockLost].
//
// A campaign split into shards (`run --shard K/N`) keeps one journal for
// all its shards and one lock per shard; runs of two different splits of
// one campaign exclude each other, as their contacts overlap.
type Postgres struct {
	pool     *pgxpool.Pool
	conn     *pgx.ConnConfig // for the lock's own connection
	campaign string
	index    int // shard K of count; 0 of 1 when not sharded
	count    int
	where    string // where the database is, without the password
	// reportDir is the local state directory of the report files, when
	// Open opened the store.
	reportDir string

	mu    sync.Mutex
	lease *pgLease // the lock, while held

	// clock is this machine's clock, as Lock compares it with the
	// database's; nil is time.Now.
	clock func() time.Time
}

var _ Store = (*Postgres)(nil)

// pgLease is a held run lock: the connection that holds it, and that
// connection's backend, which every journal INSERT checks for.
type pgLease struct {
	conn  *pgx.Conn
	pid   uint32
	start time.Time
}

// Errors of the PostgreSQL store.
var (
	// ErrLockLost: the connection holding the campaign's lock ended, so
	// another run may hold the lock now. Nothing is written after it.
	ErrLockLost = errors.New("the campaign's lock in PostgreSQL was lost (the connection holding it ended), so another run may hold it now; no call was started after that")
	// ErrNewerSchema: the database was set up by a newer callrun.
	ErrNewerSchema = errors.New("the database's callrun tables are from a newer callrun")
	// ErrCampaignExists: `state push` found the campaign in the database
	// already.
	ErrCampaignExists = errors.New("the database holds a journal of this campaign already")
)

// schemaVersion is the version of the tables this callrun writes;
// migrations[v] takes the tables from version v-1 to v.
const schemaVersion = 12

var migrations = [schemaVersion + 1]string{
	1: `
CREATE TABLE callrun_journal (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	campaign text NOT NULL,
	line     text NOT NULL
);
CREATE INDEX callrun_journal_campaign ON callrun_journal (campaign, id);
CREATE TABLE callrun_runs (
	campaign    text NOT NULL,
	shard_index integer NOT NULL,
	shard_count integer NOT NULL,
	host        text NOT NULL,
	pid         integer NOT NULL,
	started_at  timestamptz NOT NULL,
	PRIMARY KEY (campaign, shard_index, shard_count)
);`,
	2: `
CREATE TABLE callrun_tokens (
	base_url  text NOT NULL,
	client_id text NOT NULL,
	key_id    text,
	sealed    bytea,
	saved_at  timestamptz,
	PRIMARY KEY (base_url, client_id)
);`,
	// The do-not-call list of every campaign in the database: an entry a
	// row, never deleted; a number's latest row says whether it is on.
	3: `
CREATE TABLE callrun_do_not_call (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	number  text NOT NULL,
	at      timestamptz NOT NULL,
	removed boolean NOT NULL DEFAULT false,
	source  text NOT NULL,
	reason  text NOT NULL DEFAULT ''
);
CREATE INDEX callrun_do_not_call_number ON callrun_do_not_call (number, id);`,
	// The webhook deliveries `callrun listen` stores, any number of them
	// at once: a delivery once per campaign, whichever stores it.
	4: `
CREATE TABLE callrun_deliveries (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	campaign    text NOT NULL,
	key         text NOT NULL,
	received_at timestamptz NOT NULL,
	delivery    text NOT NULL,
	UNIQUE (campaign, key)
);`,
	// The call starts contact pressure counts, of every campaign in the
	// database: a row each, written with its intent; released when the
	// service refused the call or it was provably not sent.
	5: `
CREATE TABLE callrun_call_starts (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	number   text NOT NULL,
	at       timestamptz NOT NULL,
	start_id text NOT NULL,
	campaign text NOT NULL,
	agent    text NOT NULL,
	released boolean NOT NULL DEFAULT false
);
CREATE INDEX callrun_call_starts_number ON callrun_call_starts (number, at);
CREATE INDEX callrun_call_starts_start_id ON callrun_call_starts (start_id);`,
	// The conversations (calls the outcomes say were answered) of every
	// campaign in the database, which Reg F's contact pressure holds a
	// number for: a row a delivery, never deleted.
	6: `
CREATE TABLE callrun_conversations (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	number   text NOT NULL,
	at       timestamptz NOT NULL,
	campaign text NOT NULL,
	key      text NOT NULL,
	UNIQUE (campaign, key)
);
CREATE INDEX callrun_conversations_number ON callrun_conversations (number, at);`,
	// The opt-outs listen could not read the number of, which keep every
	// run on the database from starting calls until a person resolves
	// them: a row a hold or a resolution, never deleted.
	7: `
CREATE TABLE callrun_opt_out_holds (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	campaign text NOT NULL,
	key      text NOT NULL,
	at       timestamptz NOT NULL,
	resolved boolean NOT NULL DEFAULT false,
	reason   text NOT NULL DEFAULT '',
	note     text NOT NULL DEFAULT ''
);
CREATE INDEX callrun_opt_out_holds_key ON callrun_opt_out_holds (campaign, key, id);`,
	// The keys of the keyed hashes that stand for erased people, and the
	// erased set: the hashes of the people erased from the database. The
	// do-not-call list, the call starts and the conversations keep an
	// erased person's rows under the hash, number ''. Runs record the
	// campaign file and state directory they ran from, and every local
	// directory a campaign's reports were written to, so that an erase
	// finds them.
	8: `
CREATE TABLE callrun_keys (
	id  text PRIMARY KEY,
	key bytea NOT NULL,
	at  timestamptz NOT NULL
);
CREATE TABLE callrun_erased (
	hash          text PRIMARY KEY,
	at            timestamptz NOT NULL,
	allow_contact boolean NOT NULL,
	why           text NOT NULL
);
ALTER TABLE callrun_do_not_call ADD COLUMN hash text NOT NULL DEFAULT '';
CREATE INDEX callrun_do_not_call_hash ON callrun_do_not_call (hash, id) WHERE hash <> '';
ALTER TABLE callrun_call_starts ADD COLUMN hash text NOT NULL DEFAULT '';
CREATE INDEX callrun_call_starts_hash ON callrun_call_starts (hash, at) WHERE hash <> '';
ALTER TABLE callrun_conversations ADD COLUMN hash text NOT NULL DEFAULT '';
CREATE INDEX callrun_conversations_hash ON callrun_conversations (hash, at) WHERE hash <> '';
ALTER TABLE callrun_runs ADD COLUMN campaign_file text NOT NULL DEFAULT '';
ALTER TABLE callrun_runs ADD COLUMN state_dir text NOT NULL DEFAULT '';
CREATE TABLE callrun_report_dirs (
	campaign      text NOT NULL,
	host          text NOT NULL,
	dir           text NOT NULL,
	kind          text NOT NULL,
	campaign_file text NOT NULL,
	at            timestamptz NOT NULL,
	PRIMARY KEY (campaign, host, dir, kind)
);`,
	// An import's entries share one source ("import FILE"), kept once in
	// callrun_do_not_call_sources under its SHA-256 (key: a path may pass
	// a btree entry's limit, and a FIPS server has no md5): each of its
	// rows holds the source's id and an empty source. Every other row,
	// and every row written before version 9, holds its own source and no
	// id. A list of millions imported so does not hold the file's path in
	// every row.
	9: `
CREATE TABLE callrun_do_not_call_sources (
	id     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	key    bytea NOT NULL UNIQUE,
	source text NOT NULL
);
ALTER TABLE callrun_do_not_call ADD COLUMN source_id integer;`,
	// The do-not-call list keeps no index of its ids: every read of it
	// goes by number (the index on (number, id)) or by hash, and the
	// identity alone makes ids unique. A second index of every row was
	// a quarter of the server's work on each row an import copies in; a
	// history read in id order is now sorted, as the current list was.
	10: `
ALTER TABLE callrun_do_not_call DROP CONSTRAINT IF EXISTS callrun_do_not_call_pkey;`,
	// The agents callrun created for each campaign, a row each, never
	// deleted: a run whose listings of the service's agents lack a name
	// uses the agent it created before of that name, if the service still
	// has it, rather than create another.
	11: `
CREATE TABLE callrun_agents_created (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	campaign   text NOT NULL,
	name       text NOT NULL,
	agent_id   text NOT NULL,
	created_at timestamptz NOT NULL,
	run        text NOT NULL
);
CREATE INDEX callrun_agents_created_campaign ON callrun_agents_created (campaign, id);`,
	// The journal's lines by the call id they hold (the first
	// "call_id" of a line, the top-level one: a record has no nested
	// object before it, and a string escapes its quotes), for an id
	// written without a JSON escape: listen asks whether the campaign's
	// journal holds the call id of every call it hears of, which read
	// every line of the campaign before. Its expression and predicate
	// are journalCallID and journalHasCallID, which the queries repeat
	// word for word, so that the planner uses it.
	12: `
CREATE INDEX IF NOT EXISTS callrun_journal_call_id ON callrun_journal (campaign, ` + journalCallID + `) WHERE ` + journalHasCallID + `;`,
}

// journalCallID is the call id a journal line holds, as the index
// callrun_journal_call_id keeps it: NULL for an id JSON escapes.
const journalCallID = `substring(line from '"call_id":"([^"\\]*)"')`

// journalHasCallID is the predicate of the index callrun_journal_call_id.
const journalHasCallID = `line LIKE '%"call_id":"%'`

// schemaLock is the advisory lock key (one bigint) that serialises
// migrations between processes.
const schemaLock = 0x63616c6c72756e // "callrun"

// PostgresPassword returns the password a database URL (or key=value
// connection string) holds, "" when none: callrun hands it to its
// redaction before anything can print it.
func PostgresPassword(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		if p, ok := u.User.Password(); ok {
			return p
		}
		return u.Query().Get("password") // postgres://callrun@host/db?password=...
	}
	if cfg, err := pgconn.ParseConfig(dsn); err == nil {
		return cfg.Password
	}
	return ""
}

// CheckPostgresURL reports whether dsn is a connection string pgx can use,
// without connecting. Its error never repeats dsn.
func CheckPostgresURL(dsn string) error {
	if _, err := pgconn.ParseConfig(dsn); err != nil {
		return errors.New("not a PostgreSQL connection URL: write postgres://USER:PASSWORD@HOST:5432/DATABASE (keep it in an environment variable: postgres: ${CALLRUN_DATABASE_URL})")
	}
	return nil
}

// OpenPostgres connects to the database at dsn for campaign, shard index
// of count (0 of 1 when the campaign is not sharded), and creates or
// migrates callrun's tables. A database whose tables are from a newer
// callrun is refused with [ErrNewerSchema]. The caller closes the store.
func OpenPostgres(ctx context.Context, dsn, campaign string, index, count int) (*Postgres, error) {
	if count < 1 || index < 0 || index >= count || count > 0xffff {
		return nil, fmt.Errorf("shard %d/%d: want K/N with 0 <= K < N <= 65535", index, count)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("state.postgres: %w", CheckPostgresURL(dsn))
	}
	c := cfg.ConnConfig
	// An intent counts only once it is durable; a server or role default
	// of synchronous_commit = off must not weaken that.
	c.RuntimeParams["synchronous_commit"] = "on"
	c.RuntimeParams["application_name"] = "callrun"
	// callrun's statements are short, and each intent's INSERT is on the
	// way to a call: JIT compilation, which the server starts for any
	// plan its estimates put above jit_above_cost (as they do for that
	// INSERT while a large import is not yet analyzed), took 0.4-0.6 s of
	// every call start.
	c.RuntimeParams["jit"] = "off"
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 10 * time.Second
	}
	cfg.MaxConns = 8
	p := &Postgres{conn: cfg.ConnConfig.Copy(), campaign: campaign, index: index, count: count,
		where: fmt.Sprintf("PostgreSQL database %s at %s:%d", cfg.ConnConfig.Database, cfg.ConnConfig.Host, cfg.ConnConfig.Port)}
	if p.pool, err = pgxpool.NewWithConfig(ctx, cfg); err != nil {
		return nil, p.wrap("connecting to", err)
	}
	if err := p.migrate(ctx); err != nil {
		p.pool.Close()
		return nil, err
	}
	return p, nil
}

func (p *Postgres) String() string { return p.where }

// DatabaseError is a failure to talk to the PostgreSQL store: what was
// being done, where (never with the password), and the driver's error.
// The command line adds what to check.
type DatabaseError struct {
	Doing, Where string
	Err          error
}

func (e *DatabaseError) Error() string { return fmt.Sprintf("%s the %s: %v", e.Doing, e.Where, e.Err) }
func (e *DatabaseError) Unwrap() error { return e.Err }

// wrap says what was being done with the database when err happened.
func (p *Postgres) wrap(doing string, err error) error {
	return &DatabaseError{Doing: doing, Where: p.where, Err: err}
}

// migrate creates callrun's tables, or brings them to schemaVersion, in
// one transaction that other callruns wait for. Tables already at
// schemaVersion are only read, so that a role that may not create tables
// can run callrun once they exist.
func (p *Postgres) migrate(ctx context.Context) error {
	var exists bool
	if err := p.pool.QueryRow(ctx, `SELECT to_regclass('callrun_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return p.wrap("setting up", err)
	}
	if exists {
		var v int
		if err := p.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM callrun_schema`).Scan(&v); err != nil {
			return p.wrap("setting up", err)
		}
		if v == schemaVersion {
			return nil
		}
	}
	return pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return p.wrap("setting up", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS callrun_schema (version integer NOT NULL)`); err != nil {
			return p.wrap("setting up", err)
		}
		var v int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM callrun_schema`).Scan(&v); err != nil {
			return p.wrap("setting up", err)
		}
		if v > schemaVersion {
			return fmt.Errorf("%s: %w (version %d; this callrun knows up to %d): upgrade callrun", p.where, ErrNewerSchema, v, schemaVersion)
		}
		if v == schemaVersion {
			return nil
		}
		for ; v < schemaVersion; v++ {
			if _, err := tx.Exec(ctx, migrations[v+1]); err != nil {
				return p.wrap(fmt.Sprintf("migrating to version %d", v+1), err)
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM callrun_schema`); err != nil {
			return p.wrap("setting up", err)
		}
		_, err := tx.Exec(ctx, `INSERT INTO callrun_schema (version) VALUES ($1)`, schemaVersion)
		return err
	})
}

// lockKey is the campaign's advisory lock namespace (the first of the two
// int4 keys); the second is the shard's code, count<<16 | index (65536 or
// more), 0 the gate that serialises taking the lock, 1 the agents lock
// and 2 journalWrites.
// journalWrites is the second key of the lock each journal write holds
// shared, and awaitJournalWrites exclusively.
const journalWrites = 2

func (p *Postgres) lockKey() (int64, int64) {
	h := fnv.New32a()
	h.Write([]byte(p.campaign))
	return int64(h.Sum32() & 0x7fffffff), int64(p.count<<16 | p.index)
}

// lockRun takes the run lock of the campaign's shard on a connection of its
// own. Another run holding the same shard, or any shard of a different
// split of the campaign (or the whole campaign, unsharded), keeps it out:
// their contacts overlap.
func (p *Postgres) lockRun(ctx context.Context) (func() error, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lease != nil {
		return nil, fmt.Errorf("%w: this process holds it already", ErrLocked)
	}
	conn, err := pgx.ConnectConfig(ctx, p.conn)
	if err != nil {
		return nil, p.wrap("connecting to", err)
	}
	// The lock's connection sits idle for the whole run: a server's
	// idle_session_timeout (PostgreSQL 14 and later), set for every
	// session by a DBA or a managed service, would end it, and with it
	// the lock, part way through the run.
	if _, err := conn.Exec(ctx, keepIdleSession); err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, p.wrap("connecting to", err)
	}
	lease, err := p.takeLock(ctx, conn)
	if err != nil {
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	ns, code := p.lockKey()
	if err := p.checkClock(ctx, conn); err != nil {
		// Unlocked first, as the unlock below does: the session ends a
		// moment after the hang-up.
		conn.Exec(ctx, `SELECT pg_advisory_unlock($1::int, $2::int)`, ns, code) //nolint:errcheck // the hang-up ends it anyway
		conn.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	p.lease = lease
	return func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.lease = nil
		// Closing the connection ends its session, and with it the lock,
		// but the server ends the session a moment after the client
		// hangs up: a run started at once (the next cron slot, a test)
		// would find the lock still held. Unlock first, then hang up.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, uerr := conn.Exec(ctx, `SELECT pg_advisory_unlock($1::int, $2::int)`, ns, code)
		if conn.IsClosed() {
			uerr = nil // the session is gone, and the lock with it
		}
		return errors.Join(uerr, conn.Close(context.Background()))
	}, nil
}

// keepIdleSession turns idle_session_timeout off for the session, on a
// server that has it (PostgreSQL 14 and later; an older one refuses the
// name, so it is not set there).
const keepIdleSession = `SELECT set_config('idle_session_timeout', '0', false) WHERE current_setting('server_version_num')::int >= 140000`

// MaxClockSkew is how far this machine's clock may be from the database
// server's for a run on the database. Every machine on the database
// counts contact pressure in call starts stamped by its own clock: a
// machine five minutes slow would let a number called by another be
// called again 23 h 55 min later.
const MaxClockSkew = time.Minute

// checkClock returns an error when this machine's clock is more than
// MaxClockSkew from the database server's, as conn reads it.
func (p *Postgres) checkClock(ctx context.Context, conn *pgx.Conn) error {
	now := p.clock
	if now == nil {
		now = time.Now
	}
	before := now()
	var db time.Time
	if err := conn.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&db); err != nil {
		return p.wrap("reading the clock of", err)
	}
	after := now()
	mine := before.Add(after.Sub(before) / 2)
	skew := mine.Sub(db)
	if skew <= MaxClockSkew && skew >= -MaxClockSkew {
		return nil
	}
	way := "ahead of"
	if skew < 0 {
		way, skew = "behind", -skew
	}
	return fmt.Errorf("this machine's clock (%s) is %s %s the clock of the %s (%s): every machine on the database counts how often a number was called by its own clock, so callrun runs only within %s of it; set this machine's clock (turn on NTP time sync) and run again",
		mine.UTC().Format(time.RFC3339), skew.Round(time.Second), way, p.where, db.UTC().Format(time.RFC3339), MaxClockSkew)
}

func (p *Postgres) takeLock(ctx context.Context, conn *pgx.Conn) (*pgLease, error) {
	ns, code := p.lockKey()
	var lease *pgLease
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int, 0)`, ns); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
SELECT l.objid::bigint FROM pg_locks l
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = $1::bigint::oid AND l.objid >= 65536 AND l.pid <> pg_backend_pid()`, ns)
		if err != nil {
			return err
		}
		held, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		for _, other := range held {
			oi, oc := int(other&0xffff), int(other>>16)
			if oc != p.count || oi == p.index {
				return p.holder(ctx, tx, oi, oc)
			}
		}
		var ok bool
		if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_lock($1::int, $2::int)`, ns, code).Scan(&ok); err != nil {
			return err
		}
		if !ok {
			return p.holder(ctx, tx, p.index, p.count)
		}
		host, _ := os.Hostname()
		if _, err := tx.Exec(ctx, `
INSERT INTO callrun_runs (campaign, shard_index, shard_count, host, pid, started_at) VALUES ($1, $2, $3, $4, $5, now())
ON CONFLICT (campaign, shard_index, shard_count) DO UPDATE SET host = excluded.host, pid = excluded.pid, started_at = excluded.started_at`,
			p.campaign, p.index, p.count, host, os.Getpid()); err != nil {
			return err
		}
		lease = &pgLease{conn: conn}
		return tx.QueryRow(ctx, `SELECT pid, backend_start FROM pg_stat_activity WHERE pid = pg_backend_pid()`).Scan(&lease.pid, &lease.start)
	})
	if err != nil {
		if errors.Is(err, ErrLocked) {
			return nil, err
		}
		return nil, p.wrap("taking the campaign's lock in", err)
	}
	return lease, nil
}

// holder is the ErrLocked error for a lock that another run holds,
// naming that run as callrun_runs recorded it.
func (p *Postgres) holder(ctx context.Context, tx pgx.Tx, index, count int) error {
	var host string
	var pid int
	var since time.Time
	err := tx.QueryRow(ctx, `SELECT host, pid, started_at FROM callrun_runs WHERE campaign = $1 AND shard_index = $2 AND shard_count = $3`,
		p.campaign, index, count).Scan(&host, &pid, &since)
	who := "another run"
	if err == nil {
		who = fmt.Sprintf("a run on host %s (pid %d) since %s", host, pid, since.Local().Format("2006-01-02 15:04:05 MST"))
	}
	what := "campaign " + p.campaign
	if count > 1 {
		what = fmt.Sprintf("shard %d/%d of campaign %s", index, count, p.campaign)
	}
	if count != p.count {
		mine := "the whole campaign"
		if p.count > 1 {
			mine = fmt.Sprintf("shard %d/%d", p.index, p.count)
		}
		what += fmt.Sprintf(" (a different split from this run's, %s)", mine)
	}
	return fmt.Errorf("%w: %s in the %s is held by %s", ErrLocked, what, p.where, who)
}

// LockAgents waits for the campaign's agents lock, on a pooled
// connection it keeps until unlock (or until it ends, which releases the
// lock too). The connection sits idle while the run waits for an agent
// it created to be ready: idle_session_timeout is turned off for it, as
// for the run lock's.
func (p *Postgres) LockAgents(ctx context.Context) (func() error, error) {
	ns, _ := p.lockKey()
	conn, err := p.pool.Acquire(ctx)
	if err != nil {
		return nil, p.wrap("connecting to", err)
	}
	if _, err := conn.Exec(ctx, keepIdleSession); err != nil {
		conn.Release()
		return nil, p.wrap("connecting to", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1::int, 1)`, ns); err != nil {
		conn.Release()
		return nil, p.wrap("waiting for the agents lock in", err)
	}
	return func() error {
		_, err := conn.Exec(context.Background(), `SELECT pg_advisory_unlock($1::int, 1)`, ns)
		conn.Release()
		return err
	}, nil
}

// awaitJournalWrites waits for the campaign's journal writes in flight to
// commit or fail. A run that lost its lock (its connection died) may have
// a write that checked the lock while it was still held and has not
// committed: its caller starts the call once it commits, so the run that
// took the lock since must replay after it. Each write takes the shared
// journalWrites lock before its check and holds it to its commit; this
// takes it exclusively, so it waits for them, and a write that comes
// after finds its run's lock gone and writes nothing.
func (p *Postgres) awaitJournalWrites(ctx context.Context) error {
	ns, _ := p.lockKey()
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1::int, $2::int)`, ns, journalWrites)
		return err
	})
	if err != nil {
		return p.wrap("waiting for the journal's writes in", err)
	}
	return nil
}

// OpenJournal replays the campaign's journal and opens it for appending.
// The caller holds the lock (Lock).
func (p *Postgres) OpenJournal(ctx context.Context, opts JournalOptions) (*Journal, *State, error) {
	p.mu.Lock()
	lease := p.lease
	p.mu.Unlock()
	if lease == nil {
		return nil, nil, errors.New("opening the journal in PostgreSQL: the campaign's lock is not held")
	}
	keys := opts.Keys
	if keys == nil {
		keys = &storeKeys{ctx: ctx, erasure: p.Erasure}
	}
	if err := p.awaitJournalWrites(ctx); err != nil {
		return nil, nil, err
	}
	s, err := p.readState(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	ns, code := p.lockKey()
	k := &pgSink{p: p, lease: lease, ns: ns, code: code, beforeSync: opts.BeforeSync}
	if opts.DoNotCall != nil {
		if l, ok := opts.DoNotCall.(*pgDoNotCall); !ok || l.p.where != p.where {
			return nil, nil, fmt.Errorf("opening the journal in the %s: the do-not-call list checked must be the database's own, not the %s", p.where, opts.DoNotCall)
		}
		k.dnc = true
	}
	if opts.Pressure != nil {
		if l, ok := opts.Pressure.Starts.(*pgCallStarts); !ok || l.p.where != p.where {
			return nil, nil, fmt.Errorf("opening the journal in the %s: contact pressure must be counted in the database's own call starts, not the %s", p.where, opts.Pressure.Starts)
		}
		k.pressure = opts.Pressure
	}
	return newJournal(p.where, k, s, opts), s, nil
}

// ReadState replays the campaign's journal, all shards', from the
// database, finding the contacts of its tombstones through the
// database's erasure keys.
func (p *Postgres) ReadState(ctx context.Context) (*State, error) {
	return p.readState(ctx, &storeKeys{ctx: ctx, erasure: p.Erasure})
}

// readState replays the campaign's journal, finding the contacts of its
// tombstones through keys.
func (p *Postgres) readState(ctx context.Context, keys JournalKeys) (*State, error) {
	return p.replayRows(ctx, p.pool, keys, &pgRecords{p: p})
}

// replayRows replays the campaign's journal as q reads it into a State
// whose records recs reads back (nil: none), finding the contacts of its
// tombstones through keys.
func (p *Postgres) replayRows(ctx context.Context, q pgQuerier, keys JournalKeys, recs recordReader) (*State, error) {
	s := newState(p.where, recs)
	s.keys = keys
	s.deliveries = p
	rows, err := q.Query(ctx, `SELECT id, line FROM callrun_journal WHERE campaign = $1 ORDER BY id`, p.campaign)
	if err != nil {
		return nil, p.wrap("reading the journal from", err)
	}
	defer rows.Close()
	var id int64
	var line []byte
	for rows.Next() {
		if err := rows.Scan(&id, &line); err != nil {
			return nil, p.wrap("reading the journal from", err)
		}
		if err := s.applyLine(line, id); err != nil {
			return nil, fmt.Errorf("journal of campaign %s in the %s, row id %d: %w", p.campaign, p.where, id, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, p.wrap("reading the journal from", err)
	}
	return s, nil
}

// ReadRuns finds the campaign's runs in the database.
func (p *Postgres) ReadRuns(ctx context.Context) ([]Run, error) {
	rows, err := p.pool.Query(ctx, `SELECT line FROM callrun_journal WHERE campaign = $1 ORDER BY id`, p.campaign)
	if err != nil {
		return nil, p.wrap("reading the journal from", err)
	}
	defer rows.Close()
	var rs runScan
	var line []byte
	for rows.Next() {
		if err := rows.Scan(&line); err != nil {
			return nil, p.wrap("reading the journal from", err)
		}
		rs.line(line)
	}
	if err := rows.Err(); err != nil {
		return nil, p.wrap("reading the journal from", err)
	}
	return rs.result(), nil
}

// Push copies the journal files at paths into the database, in one
// transaction, once: it refuses, with [ErrCampaignExists], when the
// database holds records of the campaign already, unless merge is set
// (the journals of a second machine that ran the campaign from files too:
// adding them only adds calls the database must know of). Each file is checked
// whole first, as replay does; a torn last line is left behind. The
// caller holds the lock (Lock) of the unsharded campaign, which keeps
// every run out meanwhile, and keeps the files' runs out itself. It
// returns the number of records copied.
func (p *Postgres) Push(ctx context.Context, merge bool, paths ...string) (int, error) {
	p.mu.Lock()
	held := p.lease != nil && p.count == 1
	p.mu.Unlock()
	if !held {
		return 0, errors.New("pushing a journal: the lock of the whole campaign is not held")
	}
	n := 0
	err := pgx.BeginFunc(ctx, p.pool, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM callrun_journal WHERE campaign = $1)`, p.campaign).Scan(&exists); err != nil {
			return p.wrap("reading", err)
		}
		if exists && !merge {
			return fmt.Errorf("%w: campaign %s in the %s; nothing was copied (if these files hold calls of another machine the database lacks, add them with state push --merge)", ErrCampaignExists, p.campaign, p.where)
		}
		for _, path := range paths {
			var before *State
			if exists || n > 0 {
				var err error
				if before, err = p.replayRows(ctx, tx, &storeKeys{ctx: ctx, erasure: p.Erasure}, nil); err != nil {
					return err
				}
			}
			k, err := p.copyJournal(ctx, tx, path)
			if err != nil {
				return err
			}
			n += k
			if before != nil {
				if err := p.keepSettled(ctx, tx, before); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// keepSettled makes sure that a journal just copied in after others
// (state push --merge, or a push of several journals) settles no contact
// less than the database did before it, as it was then: its records
// come last, and a contact's last record is its status, so a machine
// whose try of a number was answered 503 (pending) would have undone
// another machine's call of it (sent), and the next run would have called
// that person again. For each contact the journal left saying less that
// its number may have been called ([Status.Settles]: sent or erased, then
// uncertain, then failed or pending), its last record before is written
// again after the journal's; one that was an intent with no outcome, an
// uncertain outcome in its place.
func (p *Postgres) keepSettled(ctx context.Context, tx pgx.Tx, before *State) error {
	after, err := p.replayRows(ctx, tx, before.keys, nil)
	if err != nil {
		return err
	}
	var ids []int64
	for c, e := range before.entries {
		if a, ok := after.entries[c]; ok && a.status.settles() < e.status.settles() {
			ids = append(ids, e.last)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	rows, err := tx.Query(ctx, `SELECT line FROM callrun_journal WHERE id = ANY($1) ORDER BY id`, ids)
	if err != nil {
		return p.wrap("reading the journal from", err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return p.wrap("reading the journal from", err)
	}
	for i, line := range lines {
		var rec Record
		if err := decodeRecord([]byte(line), &rec); err != nil {
			return fmt.Errorf("journal of campaign %s in the %s: %w", p.campaign, p.where, err)
		}
		if rec.Type != TypeIntent {
			continue
		}
		rec.Type, rec.Status, rec.At = TypeOutcome, OutcomeUncertain, time.Now()
		rec.Reason = "its call may have started on the machine whose journal was in the database before state push --merge added another's"
		b, err := encodeRecord(&rec)
		if err != nil {
			return err
		}
		lines[i] = string(bytes.TrimSuffix(b, []byte("\n")))
	}
	_, err = tx.Exec(ctx, `INSERT INTO callrun_journal (campaign, line)
SELECT $1, u.line FROM unnest($2::text[]) WITH ORDINALITY AS u(line, ord) ORDER BY u.ord`, p.campaign, lines)
	if err != nil {
		return p.wrap("writing the journal to", err)
	}
	return nil
}

// copyJournal copies the records of the journal file at path into the
// table, in order, within tx.
func (p *Postgres) copyJournal(ctx context.Context, tx pgx.Tx, path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("opening journal: %w", err)
	}
	defer f.Close()
	_, valid, err := replay(path, f, &storeKeys{ctx: ctx, erasure: Files{}.Erasure}) // the whole journal checked first, its tombstones against the files' keys
	if err != nil {
		return 0, err
	}
	// The lines replay accepted, in order, without their newlines; a torn
	// last line lies past valid.
	br := bufio.NewReaderSize(io.NewSectionReader(f, 0, valid), 64<<10)
	var scratch []byte
	n, err := tx.CopyFrom(ctx, pgx.Identifier{"callrun_journal"}, []string{"campaign", "line"},
		pgx.CopyFromFunc(func() ([]any, error) {
			for {
				line, _, err := readLine(br, &scratch)
				if len(line) == 0 {
					if err == io.EOF {
						return nil, nil
					}
					return nil, err
				}
				if !blank(line) {
					return []any{p.campaign, string(bytes.TrimSuffix(line, []byte("\n")))}, nil
				}
			}
		}))
	if err != nil {
		return 0, fmt.Errorf("copying journal %s into the %s: %w", path, p.where, err)
	}
	return int(n), nil
}

func (p *Postgres) Close() error {
	p.pool.Close()
	return nil
}

// pgSink commits journal batches as rows, checking in the same statement
// that the lease's connection still holds the campaign's lock.
type pgSink struct {
	p          *Postgres
	lease      *pgLease
	ns, code   int64
	beforeSync func() error
	dnc        bool         // check intents against the database's do-not-call list
	keys       *ErasureKeys // the erasure keys the intents' hashes are made with, once the list holds a hash
	pressure   *Pressure    // JournalOptions.Pressure, counted in the database
}

// commitTimeout bounds one commit. A commit that timed out may still have
// been written: its intents then read as uncertain, never as not sent.
const commitTimeout = 30 * time.Second

const insertLines = `
INSERT INTO callrun_journal (campaign, line)
SELECT $1, u.line FROM unnest($2::text[]) WITH ORDINALITY AS u(line, ord)
WHERE EXISTS (
	SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
	WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
	  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
	  AND l.classid = $3::bigint::oid AND l.objid = $4::bigint::oid
	  AND l.pid = $5 AND a.backend_start = $6)
ORDER BY u.ord
RETURNING id`

func (k *pgSink) commit(b *batch) error {
	if k.beforeSync != nil {
		if err := k.beforeSync(); err != nil {
			return fmt.Errorf("writing the journal to the %s: %w", k.p.where, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if k.pressure != nil {
		err := pgx.BeginFunc(ctx, k.p.pool, func(tx pgx.Tx) error { return k.press(ctx, tx, b) })
		var dbErr *DatabaseError
		if err != nil && !errors.As(err, &dbErr) && !errors.Is(err, ErrLockLost) {
			err = k.p.wrap("writing the journal to", err) // the transaction's BEGIN or COMMIT
		}
		return err
	}
	return k.insert(ctx, k.p.pool, b)
}

// pgQuerier is a pool or a transaction.
type pgQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// pgBatcher is a pool or a transaction, which runs a batch of statements
// in one round trip and one transaction.
type pgBatcher interface {
	pgQuerier
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// insert writes the records of b not refused yet, with insertLines, or
// with insertChecked when the sink checks the do-not-call list, and
// marks the intents that check refuses.
func (k *pgSink) insert(ctx context.Context, q pgBatcher, b *batch) error {
	var idx []int // the records to write, by index in b.recs
	for i := range b.recs {
		if b.refused[i] == nil {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return nil
	}
	lines := make([]string, len(idx))
	phones := make([]string, len(idx))
	hashes := make([]string, len(idx))
	for j, i := range idx {
		lines[j] = string(b.line(i)[:len(b.line(i))-1]) // without the newline
		if b.recs[i].rec.Type == TypeIntent {
			phones[j] = b.recs[i].rec.Phone
			hashes[j] = strings.Join(k.keys.Hashes(phones[j]), " ")
		}
	}
	// The shared journalWrites lock first, held to the commit, then the
	// write and its check of the run's lock, in one round trip.
	pb := &pgx.Batch{}
	pb.Queue(`SELECT pg_advisory_xact_lock_shared($1::int, $2::int)`, k.ns, journalWrites)
	if k.dnc {
		pb.Queue(insertChecked, k.p.campaign, lines, k.ns, k.code, int64(k.lease.pid), k.lease.start, phones, hashes, k.keys.ids())
	} else {
		pb.Queue(`WITH ins AS (`+insertLines+`) SELECT 'i', id FROM ins`, k.p.campaign, lines, k.ns, k.code, int64(k.lease.pid), k.lease.start)
	}
	br := q.SendBatch(ctx, pb)
	_, err := br.Exec()
	var rows pgx.Rows
	if err == nil {
		rows, err = br.Query()
	}
	if err != nil {
		br.Close()
		return k.p.wrap("writing the journal to", err)
	}
	var ids []int64
	refused := map[int]error{}
	var kind string
	var n int64
	var held error
	stale := false
	if _, err := pgx.ForEachRow(rows, []any{&kind, &n}, func() error {
		switch kind {
		case "r":
			refused[int(n-1)] = ErrDoNotCall
		case "k":
			stale = true
		case "h":
			if held == nil {
				held = ErrOptOutHeld // named below, once the rows are read
			}
			refused[int(n-1)] = held
		default:
			ids = append(ids, n)
		}
		return nil
	}); err != nil {
		br.Close()
		return k.p.wrap("writing the journal to", err)
	}
	if err := br.Close(); err != nil {
		return k.p.wrap("writing the journal to", err)
	}
	if stale {
		// The list holds a hash under keys the sink has not read: it
		// wrote nothing. Read them, checking every hash's key, and
		// write the batch again.
		hashed, err := k.p.listedHashes(ctx, q, nil)
		if err != nil {
			return fmt.Errorf("writing the journal to the %s: %w", k.p.where, err)
		}
		if hashed != nil {
			k.keys = hashed.keys
		}
		return k.insert(ctx, q, b)
	}
	if held != nil {
		held = (&pgDoNotCall{p: k.p}).heldError(ctx)
		for j, why := range refused {
			if why == ErrOptOutHeld {
				refused[j] = held
			}
		}
	}
	if want := len(lines) - len(refused); len(ids) != want {
		if len(ids) == 0 {
			return ErrLockLost
		}
		return fmt.Errorf("writing the journal to the %s: %d of %d records written", k.p.where, len(ids), want)
	}
	// One statement's identity values follow its rows' order.
	slices.Sort(ids)
	next := 0
	for j, i := range idx {
		if why := refused[j]; why != nil {
			b.refuse(i, why)
			continue
		}
		b.recs[i].pos = ids[next]
		next++
	}
	return nil
}

// pgListHoldsHash is whether the do-not-call list holds an erased
// person's keyed hash, asked in a form only the partial index
// callrun_do_not_call_hash answers cheaply, whatever the table's
// statistics say: written with EXISTS, or a LIMIT without the ORDER BY,
// it was planned as a scan of the whole table while a large import was
// not yet analyzed, and so was the check of every intent and every batch.
const pgListHoldsHash = `(SELECT true FROM callrun_do_not_call WHERE hash <> '' ORDER BY hash LIMIT 1) IS NOT NULL`

// insertChecked is insertLines that also leaves out the intents whose
// number ($7, "" for other records) is on the do-not-call list, by number
// or by one of its keyed hashes ($8, space-separated, made with the keys
// whose ids are $9), and every
// intent while an opt-out is held, in the same statement, so in the same
// snapshot: an opt-out or a hold committed before it began keeps the
// intent out, and check and intent cost one round trip. It returns each
// written row's id (kind 'i') and each refused record's ordinal (from 1;
// kind 'r' for the list, 'h' for a hold). When the list holds a hash
// and the keys $9 are none or not the database's, it writes nothing
// and returns one row of kind 'k': the sink reads the keys and asks again.
// A list with no hash costs one look by the partial index.
const insertChecked = `
WITH u AS (
	SELECT line, phone, hashes, ord FROM unnest($2::text[], $7::text[], $8::text[]) WITH ORDINALITY AS u(line, phone, hashes, ord)
), held AS (
	SELECT ` + anyHeld + ` AS now
), stale AS (
	SELECT ` + pgListHoldsHash + ` AND (
		cardinality($9::text[]) = 0 OR array(SELECT id FROM callrun_keys ORDER BY id) <> array(SELECT unnest($9::text[]) ORDER BY 1)) AS now
), refused AS (
	SELECT u.ord, CASE WHEN (SELECT now FROM held) THEN 'h' ELSE 'r' END AS why FROM u WHERE u.phone <> '' AND ((SELECT now FROM held) OR (
		SELECT NOT d.removed FROM callrun_do_not_call d WHERE d.number = u.phone ORDER BY d.id DESC LIMIT 1) OR (
		u.hashes <> '' AND (SELECT NOT d.removed FROM callrun_do_not_call d WHERE d.hash <> '' AND d.hash = ANY (string_to_array(u.hashes, ' ')) ORDER BY d.id DESC LIMIT 1)))
), ins AS (
	INSERT INTO callrun_journal (campaign, line)
	SELECT $1, u.line FROM u
	WHERE NOT (SELECT now FROM stale) AND u.ord NOT IN (SELECT ord FROM refused) AND EXISTS (
		SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
		  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		  AND l.classid = $3::bigint::oid AND l.objid = $4::bigint::oid
		  AND l.pid = $5 AND a.backend_start = $6)
	ORDER BY u.ord
	RETURNING id
)
SELECT 'i', id FROM ins UNION ALL SELECT why, ord FROM refused WHERE NOT (SELECT now FROM stale)
UNION ALL SELECT 'k', 0 FROM stale WHERE now`

func (k *pgSink) close() error { return nil }

// DoNotCall returns the database's do-not-call list, shared by every
// campaign whose state is in the database, on every machine.
func (p *Postgres) DoNotCall() (DoNotCallList, error) { return &pgDoNotCall{p: p}, nil }

// pgDoNotCall is the do-not-call list in the table callrun_do_not_call.
type pgDoNotCall struct{ p *Postgres }

// dncLock is the advisory lock key that serialises the list's writers, so
// that each sees whether a number is on the list before adding it.
const dncLock = 0x63616c6c646e63 // "calldnc"

func (l *pgDoNotCall) String() string { return "do-not-call list in the " + l.p.where }

func (l *pgDoNotCall) CheckedAtEachCall() bool { return false }

func (l *pgDoNotCall) Has(ctx context.Context, number string) (bool, error) {
	var on, held bool
	err := l.p.pool.QueryRow(ctx, `SELECT coalesce((SELECT NOT removed FROM callrun_do_not_call WHERE number = $1 ORDER BY id DESC LIMIT 1), false), `+anyHeld, number).Scan(&on, &held)
	if err != nil {
		return false, l.p.wrap("reading the do-not-call list from", err)
	}
	if held {
		return false, l.heldError(ctx)
	}
	if on {
		return true, nil
	}
	hashed, err := l.p.listedHashes(ctx, l.p.pool, []string{number})
	if err != nil {
		return false, l.p.wrap("reading the do-not-call list from", err)
	}
	m := map[string]bool{}
	hashed.mark([]string{number}, m)
	return m[number], nil
}

func (l *pgDoNotCall) Entries(ctx context.Context) ([]DoNotCallEntry, error) {
	var out []DoNotCallEntry
	err := l.Each(ctx, false, func(e DoNotCallEntry) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// Each streams the table's rows; current, each number's last entry when
// it is an addition (Add never adds a number on the list already). The
// sources that imports share (callrun_do_not_call_sources, one a file
// imported) are read first, in the rows' snapshot.
func (l *pgDoNotCall) Each(ctx context.Context, current bool, fn func(DoNotCallEntry) error) error {
	q := `SELECT number, hash, at, removed, source, reason, coalesce(source_id, 0) FROM callrun_do_not_call ORDER BY id`
	if current { // an erased person's rows (number '') by their hash
		q = `SELECT number, hash, at, removed, source, reason, coalesce(source_id, 0) FROM (
	SELECT DISTINCT ON (number, hash) id, number, hash, at, removed, source, reason, source_id FROM callrun_do_not_call
	ORDER BY number, hash, id DESC) last
WHERE NOT removed ORDER BY id`
	}
	var fnErr error
	err := pgx.BeginTxFunc(ctx, l.p.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id, source FROM callrun_do_not_call_sources`)
		if err != nil {
			return err
		}
		shared := map[int32]string{}
		var id int32
		var source string
		if _, err := pgx.ForEachRow(rows, []any{&id, &source}, func() error {
			shared[id] = source
			return nil
		}); err != nil {
			return err
		}
		if rows, err = tx.Query(ctx, q); err != nil {
			return err
		}
		var e DoNotCallEntry
		_, err = pgx.ForEachRow(rows, []any{&e.Number, &e.Hash, &e.At, &e.Removed, &e.Source, &e.Reason, &id}, func() error {
			e.At = e.At.UTC()
			if id != 0 {
				e.Source = shared[id]
			}
			fnErr = fn(e)
			return fnErr
		})
		return err
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return l.p.wrap("reading the do-not-call list from", err)
	}
	return nil
}

// pgOnListBatch is how many numbers OnList asks the database for at once.
const pgOnListBatch = 10_000

// OnList asks the database for numbers in batches, each number's last
// entry found through the index callrun_do_not_call_number; then the
// erased people on the list (by keyed hash) are read once, and the
// numbers' hashes looked up among them here. The numbers are read
// first: an erase turns a number's entries into its hash, and one that
// commits between the two reads is seen by the second.
func (l *pgDoNotCall) OnList(ctx context.Context, numbers []string) (map[string]bool, error) {
	on := map[string]bool{}
	for rest := numbers; len(rest) > 0; {
		batch := rest[:min(len(rest), pgOnListBatch)]
		rest = rest[len(batch):]
		if err := l.p.listedByNumber(ctx, l.p.pool, batch, on); err != nil {
			return nil, l.p.wrap("reading the do-not-call list from", err)
		}
	}
	hashed, err := l.p.listedHashes(ctx, l.p.pool, numbers)
	if err != nil {
		return nil, l.p.wrap("reading the do-not-call list from", err)
	}
	hashed.mark(numbers, on)
	return on, nil
}

// listed sets on[n] for each of numbers on the list, by number or, for
// an erased person, by keyed hash (read second, as OnList does). Add
// uses it, in its transaction.
func (p *Postgres) listed(ctx context.Context, q pgQuerier, numbers []string, on map[string]bool) error {
	inRange, err := p.listedInRange(ctx, q, numbers, on)
	if err != nil {
		return err
	}
	if !inRange {
		if err := p.listedByNumber(ctx, q, numbers, on); err != nil {
			return err
		}
	}
	hashed, err := p.listedHashes(ctx, q, numbers)
	hashed.mark(numbers, on)
	return err
}

// listedInRange sets on[n] for each of numbers on the list by number
// when the list holds at most len(numbers) entries between the least
// and the greatest of them (by the database's collation), read in one
// scan of the index callrun_do_not_call_number: the sorted batch of an
// import costs one look-up, not one a number. It reports false, having
// set nothing, when the range holds more; listedByNumber then asks.
func (p *Postgres) listedInRange(ctx context.Context, q pgQuerier, numbers []string, on map[string]bool) (bool, error) {
	if len(numbers) < 2 {
		return false, nil
	}
	rows, err := q.Query(ctx, `
WITH r AS MATERIALIZED (SELECT min(n) AS lo, max(n) AS hi FROM unnest($1::text[]) AS u(n))
SELECT number, NOT removed FROM callrun_do_not_call
WHERE number BETWEEN (SELECT lo FROM r) AND (SELECT hi FROM r)
ORDER BY number DESC, id DESC LIMIT $2`, numbers, len(numbers)+1)
	if err != nil {
		return false, err
	}
	var last []string // each number's last entry, which comes first, if it keeps it on
	var n, prev string
	var listed bool
	entries := 0
	_, err = pgx.ForEachRow(rows, []any{&n, &listed}, func() error {
		if entries++; n != prev && listed {
			last = append(last, n)
		}
		prev = n
		return nil
	})
	if err != nil || entries > len(numbers) {
		return false, err
	}
	if len(last) > 0 {
		asked := make(map[string]bool, len(numbers))
		for _, n := range numbers {
			asked[n] = true
		}
		for _, n := range last {
			if asked[n] {
				on[n] = true
			}
		}
	}
	return true, nil
}

// listedByNumber sets on[n] for each of numbers on the list by number,
// asking each number's last entry by the index (number, id), one look-up
// a number, as each intent's INSERT checks it: a plan that stays right
// when the table's statistics are stale (an import of millions just
// made).
func (p *Postgres) listedByNumber(ctx context.Context, q pgQuerier, numbers []string, on map[string]bool) error {
	rows, err := q.Query(ctx, `
SELECT u.n FROM unnest($1::text[]) AS u(n)
WHERE coalesce((SELECT NOT d.removed FROM callrun_do_not_call d WHERE d.number = u.n ORDER BY d.id DESC LIMIT 1), false)`, numbers)
	if err != nil {
		return err
	}
	var n string
	_, err = pgx.ForEachRow(rows, []any{&n}, func() error {
		on[n] = true
		return nil
	})
	return err
}

// hashesOnList is what the do-not-call list says of erased people: the
// database's erasure keys, and for keyed hashes on the list whether
// each one's last entry keeps it on. A nil *hashesOnList is a list that
// holds no hash.
type hashesOnList struct {
	keys *ErasureKeys
	on   map[string]bool
}

// listedHashes reads what the list says of the erased people among
// numbers; nil when the database holds no key (and so the list no
// hash). First it checks that no hash on the list is under a key the
// database lacks (CheckHashKey): a list restored without its key calls
// nobody. The hashes of a batch of numbers or fewer are asked for by
// the partial index callrun_do_not_call_hash, so that one opt-out costs
// the same however many people were erased; more (OnList's million) are
// looked up among every hash on the list, read once. OnList, listed,
// Has and the journal's check of intents (numbers nil: the keys only)
// use it.
func (p *Postgres) listedHashes(ctx context.Context, q pgQuerier, numbers []string) (*hashesOnList, error) {
	keys, err := (&pgErasure{p: p}).keys(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("reading the erasure keys: %w", err)
	}
	rows, err := q.Query(ctx, `SELECT hash FROM callrun_do_not_call WHERE hash <> '' AND split_part(hash, ':', 2) <> ALL($1::text[]) ORDER BY hash LIMIT 1`, keys.ids())
	if err != nil {
		return nil, err
	}
	unkeyed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	for _, h := range unkeyed {
		if err := CheckHashKey(keys, h, "the do-not-call list in the "+p.where); err != nil {
			return nil, err
		}
	}
	if len(keys.keys) == 0 {
		return nil, nil
	}
	l := &hashesOnList{keys: keys, on: map[string]bool{}}
	if len(numbers) > pgOnListBatch {
		rows, err = q.Query(ctx, `SELECT DISTINCT ON (hash) hash, NOT removed FROM callrun_do_not_call WHERE hash <> '' ORDER BY hash, id DESC`)
	} else {
		var hashes []string
		for _, n := range numbers {
			hashes = append(hashes, keys.Hashes(n)...)
		}
		if len(hashes) == 0 {
			return l, nil
		}
		rows, err = q.Query(ctx, `SELECT DISTINCT ON (hash) hash, NOT removed FROM callrun_do_not_call WHERE hash <> '' AND hash = ANY($1::text[]) ORDER BY hash, id DESC`, hashes)
	}
	if err != nil {
		return nil, err
	}
	var h string
	var listed bool
	_, err = pgx.ForEachRow(rows, []any{&h, &listed}, func() error {
		l.on[h] = listed
		return nil
	})
	return l, err
}

// mark sets on[n] for each of numbers not set yet whose keyed hash,
// under any of the keys, is on the list.
func (l *hashesOnList) mark(numbers []string, on map[string]bool) {
	if l == nil {
		return
	}
	for _, n := range numbers {
		if on[n] {
			continue
		}
		for _, h := range l.keys.Hashes(n) {
			if l.on[h] {
				on[n] = true
				break
			}
		}
	}
}

// NumbersUpTo reads the numbers on the list when its history holds at
// most max entries and no erased person's keyed hash: a hash is not a
// number, so a list that holds one answers false, and its callers ask
// OnList, which finds it.
func (l *pgDoNotCall) NumbersUpTo(ctx context.Context, max int) ([]string, bool, error) {
	var hashed bool
	if err := l.p.pool.QueryRow(ctx, `SELECT `+pgListHoldsHash).Scan(&hashed); err != nil {
		return nil, false, l.p.wrap("reading the do-not-call list from", err)
	}
	if hashed {
		return nil, false, nil
	}
	// Entries first, at most max+1 of them: a plan the server cannot get
	// wrong. The numbers' query below sorts the table, which after a
	// large import (statistics not yet gathered) took seconds at
	// 10,000,000 entries.
	var entries int
	if err := l.p.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM callrun_do_not_call LIMIT $1) e`, max+1).Scan(&entries); err != nil {
		return nil, false, l.p.wrap("reading the do-not-call list from", err)
	}
	if entries > max {
		return nil, false, nil
	}
	rows, err := l.p.pool.Query(ctx, `
SELECT number FROM (
	SELECT DISTINCT ON (number) number, removed FROM callrun_do_not_call ORDER BY number, id DESC) last
WHERE NOT removed LIMIT $1`, max+1)
	if err != nil {
		return nil, false, l.p.wrap("reading the do-not-call list from", err)
	}
	numbers, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, false, l.p.wrap("reading the do-not-call list from", err)
	}
	if len(numbers) > max {
		return nil, false, nil
	}
	return numbers, true, nil
}

// Import adds each batch next returns as Add does, in a transaction of
// its own, two at once where their numbers cannot meet: a batch whose
// numbers all sort after those of every batch before it (as `suppress
// import`'s sorted batches do) goes in beside the one before it; any
// other waits until those before it have committed. The batches take the
// list's lock shared, so that they go in side by side while Add, Remove
// and erase wait for them (two imports at once may each put a number on
// that both hold: an entry more, the same list). A stopped or killed
// import leaves whole batches: those that committed, which may not be
// the first ones, and nothing of the others.
func (l *pgDoNotCall) Import(ctx context.Context, next func() ([]DoNotCallEntry, error)) (int, error) {
	// A batch that fails stops the batches after it, not the one beside
	// it: cut off while it commits, that one could be on the list and
	// not counted in what the error says went on.
	inFlight := ctx
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	var (
		wrote   atomic.Int64
		running sync.WaitGroup
		slots   = make(chan struct{}, 2)
		top     string // the greatest number of the batches so far
		nextErr error
		known   = map[string]int32{} // the ids of the sources met so far
	)
	for ctx.Err() == nil {
		var batch []DoNotCallEntry
		if batch, nextErr = next(); nextErr != nil || len(batch) == 0 {
			break
		}
		lo, hi := batch[0].Number, batch[0].Number
		for _, e := range batch {
			lo, hi = min(lo, e.Number), max(hi, e.Number)
		}
		if lo <= top {
			running.Wait() // it may hold a number of a batch before it
		}
		top = max(top, hi)
		ids, err := l.sourceIDs(ctx, batch, known)
		if err != nil {
			if ctx.Err() == nil { // else a batch failed: its cause is the error
				nextErr = l.p.wrap("writing the do-not-call list to", err)
			}
			break
		}
		slots <- struct{}{}
		running.Add(1)
		go func() {
			defer func() { <-slots; running.Done() }()
			w, err := l.add(inFlight, batch, `SELECT pg_advisory_xact_lock_shared($1)`, ids)
			wrote.Add(int64(len(w)))
			if err != nil {
				stop(err)
			}
		}()
	}
	running.Wait()
	return int(wrote.Load()), cmp.Or(nextErr, context.Cause(ctx))
}

// Add writes the entries that change the list in one transaction, which
// has committed (synchronously) when it returns: it asks which of their
// numbers are on the list, then copies in (COPY) those that change it,
// in their order.
func (l *pgDoNotCall) Add(ctx context.Context, entries []DoNotCallEntry) ([]DoNotCallEntry, error) {
	return l.add(ctx, entries, `SELECT pg_advisory_xact_lock($1)`, nil)
}

// sourceIDs returns the id in callrun_do_not_call_sources of the source
// of each of entries, adding those the table lacks (committed at once: a
// source no entry holds says nothing); known holds those asked before,
// and gets these.
func (l *pgDoNotCall) sourceIDs(ctx context.Context, entries []DoNotCallEntry, known map[string]int32) (map[string]int32, error) {
	ids := map[string]int32{}
	var ask []string
	for _, e := range entries {
		if id, ok := known[e.Source]; ok {
			ids[e.Source] = id
		} else if !slices.Contains(ask, e.Source) {
			ask = append(ask, e.Source)
		}
	}
	if len(ask) == 0 {
		return ids, nil
	}
	keys := make([][]byte, len(ask))
	for i, s := range ask {
		k := sha256.Sum256([]byte(s))
		keys[i] = k[:]
	}
	if _, err := l.p.pool.Exec(ctx, `INSERT INTO callrun_do_not_call_sources (key, source) SELECT * FROM unnest($1::bytea[], $2::text[]) ON CONFLICT (key) DO NOTHING`, keys, ask); err != nil {
		return nil, err
	}
	rows, err := l.p.pool.Query(ctx, `SELECT source, id FROM callrun_do_not_call_sources WHERE key = ANY($1::bytea[])`, keys)
	if err != nil {
		return nil, err
	}
	var source string
	var id int32
	if _, err := pgx.ForEachRow(rows, []any{&source, &id}, func() error {
		if slices.Contains(ask, source) {
			ids[source], known[source] = id, id
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, s := range ask {
		if _, ok := ids[s]; !ok {
			return nil, fmt.Errorf("the source %q is not in callrun_do_not_call_sources after it was added", s)
		}
	}
	return ids, nil
}

// add is Add under lock, the statement that takes the list's lock; an
// entry whose source has an id in sources is written with it.
func (l *pgDoNotCall) add(ctx context.Context, entries []DoNotCallEntry, lock string, sources map[string]int32) ([]DoNotCallEntry, error) {
	var wrote []DoNotCallEntry
	err := pgx.BeginFunc(ctx, l.p.pool, func(tx pgx.Tx) error {
		wrote = make([]DoNotCallEntry, 0, len(entries))
		if _, err := tx.Exec(ctx, lock, int64(dncLock)); err != nil {
			return err
		}
		numbers := make([]string, 0, len(entries))
		for _, e := range entries {
			if e.Number == "" {
				return errors.New("a do-not-call entry needs its number")
			}
			numbers = append(numbers, e.Number)
		}
		on := map[string]bool{}
		if err := l.p.listed(ctx, tx, numbers, on); err != nil {
			return err
		}
		// A person in the erased set goes on (or off) as their hash.
		erasedHash, err := l.erasedHashes(ctx, tx, numbers)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if on[e.Number] != e.Removed {
				continue
			}
			if e.At.IsZero() {
				e.At = time.Now()
			}
			e.At = e.At.UTC().Truncate(time.Microsecond)
			on[e.Number] = !e.Removed
			if h := erasedHash[e.Number]; h != "" {
				e = hashedEntry(e, h)
			}
			wrote = append(wrote, e)
		}
		if len(wrote) == 0 {
			return nil
		}
		// Copied in, the rows in the entries' order (their ids too).
		_, err = tx.Conn().PgConn().CopyFrom(ctx, newDoNotCallCopy(wrote, sources),
			`COPY callrun_do_not_call (number, hash, at, removed, source, reason, source_id) FROM STDIN (FORMAT binary)`)
		return err
	})
	if err != nil {
		return nil, l.p.wrap("writing the do-not-call list to", err)
	}
	return wrote, nil
}

// erasedHashes returns, of numbers, those in the database's erased set,
// each with the hash a list entry of theirs is written as (the first
// key's); none, with no query more, while the database has no key.
func (l *pgDoNotCall) erasedHashes(ctx context.Context, tx pgx.Tx, numbers []string) (map[string]string, error) {
	keys, err := (&pgErasure{p: l.p}).keys(ctx, tx)
	if err != nil || len(keys.keys) == 0 {
		return nil, err
	}
	of := map[string]string{}
	for _, n := range numbers {
		for _, h := range keys.Hashes(n) {
			of[h] = n
		}
	}
	rows, err := tx.Query(ctx, `SELECT hash FROM callrun_erased WHERE hash = ANY($1::text[])`, slices.Collect(maps.Keys(of)))
	if err != nil {
		return nil, err
	}
	found, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, h := range found {
		out[of[h]] = keys.Hashes(of[h])[0]
	}
	return out, nil
}

// pgRecords reads records back from the database by row id. The report
// and status look contacts up in sheet order, which a run's journal
// mostly follows: a lookup next to the rows read last reads a window of
// the rows around it, which the next lookups find theirs in (a million
// contacts cost a few thousand queries rather than two million); a lookup
// far from them reads just its contact's rows.
type pgRecords struct {
	p *Postgres

	mu     sync.Mutex
	lo, hi int64            // the ids last read span [lo, hi)
	lines  map[int64][]byte // the rows last read
}

func (r *pgRecords) callKeys(ids map[string]bool) (map[string]Key, error) {
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	list := make([]string, 0, len(ids))
	for id := range ids {
		list = append(list, id)
	}
	rows, err := r.p.pool.Query(ctx, `
SELECT line FROM callrun_journal
WHERE campaign = $1 AND line LIKE '%"call_id":%' AND (line::jsonb ->> 'call_id') = ANY($2)`, r.p.campaign, list)
	if err != nil {
		return nil, r.p.wrap("reading the journal from", err)
	}
	keys := map[string]Key{}
	var line []byte
	if _, err := pgx.ForEachRow(rows, []any{&line}, func() error {
		callKey(line, ids, keys)
		return nil
	}); err != nil {
		return nil, r.p.wrap("reading the journal from", err)
	}
	return keys, nil
}

// A window: rows a little before the one asked for (a contact's intent
// comes shortly before its outcome) and the rest after, or the other way
// round when the lookups go backwards (a sheet sorted the other way).
const (
	windowBefore = 64
	windowRows   = 1024
)

// prefetch reads the rows of ids not already read: a window around them
// when they lie next to the rows read last, else just them.
func (r *pgRecords) prefetch(ids ...int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var miss []int64
	for _, id := range ids {
		if _, ok := r.lines[id]; !ok {
			miss = append(miss, id)
		}
	}
	if len(miss) == 0 {
		return
	}
	lo, hi := slices.Min(miss), slices.Max(miss)+1
	var q string
	var args []any
	switch {
	case r.lines != nil && lo >= r.hi && lo < r.hi+windowRows: // onwards
		lo = max(lo-windowBefore, 0)
		hi = lo + windowRows
	case r.lines != nil && hi <= r.lo && hi > r.lo-windowRows: // backwards
		lo = max(hi+windowBefore-windowRows, 0)
		hi = lo + windowRows
	default:
		q, args = `SELECT id, line FROM callrun_journal WHERE campaign = $1 AND id = ANY($2)`, []any{r.p.campaign, miss}
	}
	if q == "" {
		q, args = `SELECT id, line FROM callrun_journal WHERE campaign = $1 AND id >= $2 AND id < $3`, []any{r.p.campaign, lo, hi}
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	rows, err := r.p.pool.Query(ctx, q, args...)
	if err != nil {
		return // readRecord tries again, and says what failed
	}
	lines := make(map[int64][]byte)
	var id int64
	var line []byte
	if _, err := pgx.ForEachRow(rows, []any{&id, &line}, func() error {
		lines[id] = slices.Clone(line)
		return nil
	}); err == nil {
		r.lo, r.hi, r.lines = lo, hi, lines
	}
}

func (r *pgRecords) readRecord(id int64, k Key) (Record, error) {
	line, err := r.line(id)
	if err != nil {
		return Record{}, err
	}
	var rec Record
	if err := decodeRecord(line, &rec); err != nil {
		return Record{}, fmt.Errorf("journal row %d in the %s: %w", id, r.p.where, err)
	}
	if rec.Key() != k {
		return Record{}, fmt.Errorf("journal row %d in the %s: a record of another contact", id, r.p.where)
	}
	return rec, nil
}

// line returns the journal line of row id, from the rows read last or
// from the database.
func (r *pgRecords) line(id int64) ([]byte, error) {
	r.mu.Lock()
	line, ok := r.lines[id]
	r.mu.Unlock()
	if ok {
		return line, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
	defer cancel()
	if err := r.p.pool.QueryRow(ctx, `SELECT line FROM callrun_journal WHERE id = $1 AND campaign = $2`, id, r.p.campaign).Scan(&line); err != nil {
		return nil, fmt.Errorf("reading journal row %d from the %s: %w", id, r.p.where, err)
	}
	return line, nil
}

func (r *pgRecords) Close() error { return nil }
