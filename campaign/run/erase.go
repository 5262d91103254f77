package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/private"
	"github.com/callrun/callrun/report/store"
	"github.com/rs/zerolog"
)

// EraseOptions say whom `callrun erase` erases, and from which
// campaign's store.
type EraseOptions struct {
	Path    string   // the campaign file
	Numbers []string // the people's numbers as given
	// File and Column: a CSV of more numbers, read as a suppress: file
	// is.
	File, Column string
	// AllowContact leaves a person not on the do-not-call list off it,
	// for one who asked only for their data to go.
	AllowContact bool
	// Now is the erase's clock; nil: time.Now.
	Now func() time.Time
	// BeforeStep, if set, runs before each step with its name; an error
	// stops the erase there, as a crash would. Tests use it.
	BeforeStep func(name string) error
}

// eraseStep is one named step of an erase. The steps run in order; each
// is idempotent, so that an erase stopped anywhere is finished by
// running it again.
type eraseStep struct {
	name string
	run  func(*eraseJob, context.Context) error
}

// eraseSteps are an erase, in order. From "add to the erased set" on, a
// person is stored hashed wherever a delivery or a run would write them;
// the do-not-call list blocks them before any record of them is
// rewritten.
var eraseSteps = []eraseStep{
	{"read the people", (*eraseJob).readPeople},
	{"open the stores", (*eraseJob).openStores},
	{"make the key", (*eraseJob).makeKey},
	{"add to the erased set", (*eraseJob).addErased},
	{"erase from the do-not-call list", (*eraseJob).eraseList},
	{"erase from the call starts and conversations", (*eraseJob).eraseStarts},
	{"erase from the journal", (*eraseJob).eraseJournal},
	{"erase from the deliveries", (*eraseJob).eraseDeliveries},
	{"rewrite the reports", (*eraseJob).rewriteReports},
	{"find the sheets", (*eraseJob).findSheets},
	{"write the audit", (*eraseJob).finishAudit},
}

// eraseJob is one erase, as its steps build it.
type eraseJob struct {
	o       EraseOptions
	log     zerolog.Logger
	out     io.Writer
	at      time.Time
	f       *campaign.File
	numbers []string
	worlds  []*eraseWorld
	audit   eraseAudit
	// finished: the audit's last line, before this erase began, was of
	// an erase that finished; changed: a step of this one changed a
	// file or table. With neither, the reports are left as they are.
	finished, changed bool
	cleanups          []func()
}

// eraseWorld is one store the campaign keeps state in: its real one and,
// when it has rehearsed, its rehearsals'. Each has its own erased set
// and do-not-call list.
type eraseWorld struct {
	rehearsal bool
	store     store.Store
	erasure   store.ErasureStore
	keys      *store.ErasureKeys
}

func (w *eraseWorld) String() string {
	if w.rehearsal {
		return "the rehearsals' " + w.store.String()
	}
	return w.store.String()
}

// eraseAudit is a line of CALLRUN_HOME's erasures.log: when, how many,
// by whom; never whom.
type eraseAudit struct {
	At           time.Time      `json:"at"`
	By           string         `json:"by"` // user@host
	Campaign     string         `json:"campaign"`
	People       int            `json:"people"`
	AllowContact bool           `json:"allow_contact"`
	Records      map[string]int `json:"records,omitempty"`
	Done         bool           `json:"done"`
}

// AuditFileName is the erasure audit's file in CALLRUN_HOME.
const AuditFileName = "erasures.log"

// Erase erases people from every file or table of the campaign's store
// that callrun keeps, step by step, and prints what each step changed.
// An erase stopped at any step leaves nobody it was erasing callable who
// was not before; running it again finishes it.
func Erase(ctx context.Context, log zerolog.Logger, o EraseOptions, out io.Writer) error {
	if o.Now == nil {
		o.Now = time.Now
	}
	j := &eraseJob{o: o, log: log, out: out, at: o.Now().UTC()}
	defer func() {
		for _, fn := range slices.Backward(j.cleanups) {
			fn()
		}
	}()
	for _, s := range eraseSteps {
		err := error(nil)
		if o.BeforeStep != nil {
			err = o.BeforeStep(s.name)
		}
		if err == nil {
			err = s.run(j, ctx)
		}
		if err != nil {
			if j.audit.By != "" { // the erase began: it is unfinished
				return fmt.Errorf("%s: %w; the erase is not finished: run it again", s.name, err)
			}
			return err
		}
	}
	return nil
}

// readPeople loads the campaign and reads the numbers, those given and
// the file's; a number that does not read stops the erase before
// anything changes.
func (j *eraseJob) readPeople(ctx context.Context) error {
	f, err := campaign.Load(j.o.Path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return err
	}
	j.f = f
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			j.numbers = append(j.numbers, n)
		}
	}
	for _, a := range j.o.Numbers {
		n, err := f.ReadNumber(a)
		if err != nil {
			return UsageError(fmt.Errorf("%w: nothing was erased", err))
		}
		add(n)
	}
	if j.o.File != "" {
		sup, err := f.ReadNumbers(ctx, j.o.File, j.o.Column)
		if err != nil {
			return UsageError(fmt.Errorf("%w: nothing was erased", err))
		}
		if len(sup.Problems) > 0 {
			var bad []string
			for _, p := range sup.Problems {
				bad = append(bad, fmt.Sprintf("%s row %d: %s", j.o.File, p.Row, p.Message))
			}
			return UsageError(fmt.Errorf("%s: nothing was erased: a person whose number does not read would stay", strings.Join(bad, "; ")))
		}
		for next := sup.Batches(10000); ; {
			b := next()
			if len(b) == 0 {
				break
			}
			for _, n := range b {
				add(n)
			}
		}
	}
	if len(j.numbers) == 0 {
		return UsageError(errors.New("erase: give the numbers of the people to erase, or --file"))
	}
	slices.Sort(j.numbers)
	return nil
}

// openStores opens the campaign's store and its rehearsals' (when it
// has rehearsed), refuses, changing nothing, while a run of the campaign
// holds a lock, and writes the audit's first line.
func (j *eraseJob) openStores(ctx context.Context) (err error) {
	for _, rehearsal := range []bool{false, true} {
		st, err := j.f.OpenStore(ctx, rehearsal)
		if err != nil {
			return err
		}
		j.cleanups = append(j.cleanups, func() { st.Close() })
		if rehearsal || j.f.State == nil || j.f.State.Postgres == "" {
			if _, err := os.Stat(st.ReportDir()); errors.Is(err, fs.ErrNotExist) {
				continue // never run there
			}
		}
		holders, err := st.Holders(ctx)
		if err != nil {
			return err
		}
		if len(holders) > 0 {
			return Busy(fmt.Errorf("%w: %s holds %s: erase when it ends; nothing was erased", store.ErrLocked, holders[0], st))
		}
		erasure, err := st.Erasure()
		if err != nil {
			return err
		}
		j.worlds = append(j.worlds, &eraseWorld{rehearsal: rehearsal, store: st, erasure: erasure})
	}
	if len(j.worlds) == 0 {
		return fmt.Errorf("campaign %s has no state in %s: it never ran, so there is nothing to erase", j.f.Name, j.f.StateDir)
	}
	if j.finished, err = lastEraseFinished(); err != nil {
		return err
	}
	j.audit = eraseAudit{At: j.at, By: whoErases(), Campaign: j.f.Name, People: len(j.numbers), AllowContact: j.o.AllowContact, Records: map[string]int{}}
	return j.writeAudit()
}

// makeKey makes the store's erasure key, once, durably, before any hash
// of it is written anywhere.
func (j *eraseJob) makeKey(ctx context.Context) (err error) {
	for _, w := range j.worlds {
		if w.keys, err = w.erasure.MakeKey(ctx); err != nil {
			return err
		}
	}
	return nil
}

// addErased puts the people in each erased set: from here on a delivery
// of theirs is stored erased, and every report writes them blank.
func (j *eraseJob) addErased(ctx context.Context) error {
	for _, w := range j.worlds {
		es := make([]store.ErasedEntry, len(j.numbers))
		for i, n := range j.numbers {
			es[i] = store.ErasedEntry{Hash: w.keys.Hashes(n)[0], At: j.at, AllowContact: j.o.AllowContact, Why: "erase"}
		}
		wrote, err := w.erasure.AddErased(ctx, es)
		if err != nil {
			return err
		}
		j.changed = j.changed || len(wrote) > 0
		j.say(w, "erased set: %d added, %d in it already", len(wrote), len(es)-len(wrote))
	}
	return nil
}

// eraseList keeps the people blocked on each do-not-call list, by keyed
// hash (unless AllowContact leaves those not on it off it).
func (j *eraseJob) eraseList(ctx context.Context) error {
	for _, w := range j.worlds {
		list, err := w.store.DoNotCall()
		if err != nil {
			return err
		}
		n, err := list.EraseDoNotCall(ctx, j.numbers, store.EraseDoNotCallOptions{EraseOptions: store.EraseOptions{Keys: w.keys, At: j.at}, AllowContact: j.o.AllowContact})
		if err != nil {
			return err
		}
		j.audit.Records["do_not_call"] += n.Added + n.Replaced
		j.changed = j.changed || n.Added+n.Replaced > 0
		j.say(w, "do-not-call list: %d entries hashed, %d people put on it as a hash", n.Replaced, n.Added)
		if n.Kept > 0 {
			j.say(w, "do-not-call list: %d people kept on it by their number: a PostgreSQL list cannot hold a keyed hash yet, and their number is what keeps them from being called", n.Kept)
		}
	}
	return nil
}

// eraseStarts hashes the people's call starts and conversations, which
// contact pressure still counts until they age out.
func (j *eraseJob) eraseStarts(ctx context.Context) error {
	done := map[string]bool{} // files' rehearsals share Home's starts
	for _, w := range j.worlds {
		cs, err := w.store.CallStarts()
		if err != nil {
			return err
		}
		if done[cs.String()] {
			continue
		}
		done[cs.String()] = true
		n, err := cs.Erase(ctx, j.numbers, store.EraseOptions{Keys: w.keys, At: j.at})
		if err != nil {
			return err
		}
		j.audit.Records["call_starts"] += n.Starts
		j.audit.Records["conversations"] += n.Conversations
		j.changed = j.changed || n.Starts+n.Conversations > 0
		j.say(w, "call starts: %d lines hashed; conversations: %d", n.Starts, n.Conversations)
	}
	return nil
}

// eraseJournal puts a tombstone in place of each person's records in
// the campaign's journal (each shard's), so that no run calls them again.
func (j *eraseJob) eraseJournal(ctx context.Context) error {
	for _, w := range j.worlds {
		n, err := w.store.EraseJournal(ctx, j.numbers, store.EraseOptions{Keys: w.keys, At: j.at})
		if err != nil {
			return Busy(err)
		}
		j.audit.Records["journal"] += n.Removed
		j.changed = j.changed || n.Removed > 0
		j.say(w, "journal: %d records replaced by %d tombstones", n.Removed, n.Tombstones)
	}
	return nil
}

// eraseDeliveries turns the people's stored webhook deliveries into
// their erased form.
func (j *eraseJob) eraseDeliveries(ctx context.Context) error {
	for _, w := range j.worlds {
		n, err := w.store.EraseDeliveries(ctx, j.numbers, store.DeliveryEraseOptions{Keys: w.keys, Numbers: j.f.DeliveryNumbers})
		if errors.Is(err, store.ErrDeliveriesLocked) {
			return fmt.Errorf("%w: callrun listen keeps the deliveries open; from now on it stores the people's deliveries erased, but those it stored before stay until erase runs again after listen stops", err)
		}
		if err != nil {
			return err
		}
		j.audit.Records["deliveries"] += n
		j.changed = j.changed || n > 0
		j.say(w, "deliveries: %d erased", n)
	}
	return nil
}

// rewriteReports writes each state directory's report files again: the
// people's rows are blank, marked erased. An erase that changed nothing
// after one that finished leaves them as they are: erasing again changes
// no file.
func (j *eraseJob) rewriteReports(ctx context.Context) error {
	if !j.changed && j.finished {
		fmt.Fprintln(j.out, "reports: left as they are (nothing changed since the last erase finished)")
		return nil
	}
	for _, w := range j.worlds {
		if err := RebuildReport(ctx, j.log, SavedOptions{Path: j.o.Path, Sandbox: w.rehearsal}, io.Discard); err != nil {
			return err
		}
		j.say(w, "reports: rewritten in %s", w.store.ReportDir())
	}
	return nil
}

// findSheets says which rows of the campaign's sheets still hold the
// people: the sheets are the user's, and erase never writes them.
func (j *eraseJob) findSheets(ctx context.Context) error {
	want := map[string]bool{}
	for _, n := range j.numbers {
		want[n] = true
	}
	var rows []string
	cr := j.f.NewContactReader(nil)
	err := cr.Each(ctx, func(c *campaign.Contact) error {
		if want[c.Phone] {
			rows = append(rows, fmt.Sprintf("%s row %d", j.f.Sheets[c.Sheet].File, c.Row))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the sheets for the people's rows: %w", err)
	}
	if len(rows) == 0 {
		fmt.Fprintln(j.out, "sheets: no row of the campaign's sheets holds them")
		return nil
	}
	fmt.Fprintf(j.out, "sheets: these rows still hold them; callrun does not change your sheets, so delete the rows there (a run calls nobody erased):\n  %s\n", strings.Join(rows, "\n  "))
	return nil
}

// finishAudit writes the audit's last line: the erase is done.
func (j *eraseJob) finishAudit(context.Context) error {
	j.audit.Done = true
	if err := j.writeAudit(); err != nil {
		return err
	}
	fmt.Fprintf(j.out, "Erased %d people from campaign %s's store. The audit is in %s.\n", len(j.numbers), j.f.Name, auditPath())
	return nil
}

// writeAudit appends the audit line to CALLRUN_HOME's erasures.log and
// syncs it.
func (j *eraseJob) writeAudit() error {
	home, err := store.Home()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("writing the erasure audit: %w", err)
	}
	line, err := json.Marshal(j.audit)
	if err != nil {
		return err
	}
	file, err := os.OpenFile(filepath.Join(home, AuditFileName), os.O_APPEND|os.O_CREATE|os.O_WRONLY, private.FileMode(home))
	if err != nil {
		return fmt.Errorf("writing the erasure audit: %w", err)
	}
	_, err = file.Write(append(line, '\n'))
	if err == nil {
		err = file.Sync()
	}
	if cerr := file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the erasure audit %s: %w", file.Name(), err)
	}
	return nil
}

// lastEraseFinished reports whether the audit's last line is of an erase
// that finished (true when there is no audit yet: no erase is
// unfinished).
func lastEraseFinished() (bool, error) {
	body, err := os.ReadFile(auditPath())
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading the erasure audit: %w", err)
	}
	lines := bytes.Split(bytes.TrimSpace(body), []byte("\n"))
	var last eraseAudit
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil {
		return false, nil // a torn last line: an erase was killed writing it
	}
	return last.Done, nil
}

// auditPath is where the audit is, for people.
func auditPath() string {
	home, _ := store.Home()
	return filepath.Join(home, AuditFileName)
}

// whoErases is user@host of the person running the erase.
func whoErases() string {
	name := "unknown"
	if u, err := user.Current(); err == nil {
		name = u.Username
	}
	host, _ := os.Hostname()
	return name + "@" + host
}

// say prints what a step changed in a world.
func (j *eraseJob) say(w *eraseWorld, format string, args ...any) {
	if w.rehearsal {
		format = "rehearsals: " + format
	}
	fmt.Fprintf(j.out, format+"\n", args...)
}
