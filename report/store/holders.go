package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gofrs/flock"
	"github.com/jackc/pgx/v5"
)

// Holder is a run that holds a campaign's run lock now, as `status`
// shows it: who it is, since when, and which contacts it calls.
type Holder struct {
	Host  string    // "" when unknown
	PID   int       // 0 when unknown
	Since time.Time // when it took the lock; zero when unknown
	// Index and Count are the shard it runs, 0 of 1 for the whole
	// campaign. Count 0: every contact of the journal that was read (a
	// state directory's files hold one shard's journal, or the whole
	// campaign's).
	Index, Count int
}

func (h Holder) String() string {
	who := "a run"
	if h.Host != "" {
		who += " on host " + h.Host
	}
	if h.PID != 0 {
		who += fmt.Sprintf(" (pid %d)", h.PID)
	}
	if h.Count > 1 {
		who += fmt.Sprintf(" of shard %d/%d", h.Index, h.Count)
	}
	if !h.Since.IsZero() {
		who += " since " + h.Since.Local().Format("2006-01-02 15:04:05 MST")
	}
	return who
}

// Unanswered reports whether the contact's last record is an intent: its
// call start was about to be sent, and no outcome followed. Unless a
// run that is going on wrote that intent, it is uncertain.
func (e Entry) Unanswered() bool { return e.Status == Uncertain && e.Reason == noOutcome }

// Holders returns the run that holds the state directory's lock, if one
// does. It probes the lock with a shared lock, at once released: a run
// that starts in that instant finds the directory locked and exits 75,
// as it would beside any other run.
func (s Files) Holders(context.Context) ([]Holder, error) {
	path := filepath.Join(s.Dir, "lock")
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no run ever took it
	}
	if err != nil {
		return nil, fmt.Errorf("reading the lock of state directory %s: %w", s.Dir, err)
	}
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryRLock()
	if err != nil {
		return nil, fmt.Errorf("reading the lock of state directory %s: %w", s.Dir, err)
	}
	if ok {
		fl.Unlock()
		return nil, nil
	}
	// The lock file holds the pid its run wrote when it took the lock;
	// the flock is of this machine's kernel.
	h := Holder{Since: fi.ModTime()}
	h.PID, _ = strconv.Atoi(lockHolder(path))
	h.Host, _ = os.Hostname()
	return []Holder{h}, nil
}

// Holders returns the runs that hold a lock of the campaign, of any of
// its shards, in the database now, as callrun_runs names them.
func (p *Postgres) Holders(ctx context.Context) ([]Holder, error) {
	ns, _ := p.lockKey()
	rows, err := p.pool.Query(ctx, `
SELECT l.objid::bigint, coalesce(r.host, ''), coalesce(r.pid, 0), r.started_at
FROM pg_locks l LEFT JOIN callrun_runs r ON r.campaign = $2
  AND r.shard_index = (l.objid::bigint & 65535) AND r.shard_count = (l.objid::bigint >> 16)
WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND l.classid = $1::bigint::oid AND l.objid >= 65536
ORDER BY l.objid`, ns, p.campaign)
	if err != nil {
		return nil, p.wrap("reading who holds the campaign's lock in", err)
	}
	var out []Holder
	var code int64
	var h Holder
	var since *time.Time
	_, err = pgx.ForEachRow(rows, []any{&code, &h.Host, &h.PID, &since}, func() error {
		h.Index, h.Count, h.Since = int(code&0xffff), int(code>>16), time.Time{}
		if since != nil {
			h.Since = *since
		}
		out = append(out, h)
		return nil
	})
	if err != nil {
		return nil, p.wrap("reading who holds the campaign's lock in", err)
	}
	return out, nil
}
