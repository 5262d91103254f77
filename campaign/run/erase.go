package run

import (
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
	"strconv"
	"strings"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/durable"
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
	// ListenWait bounds the wait for a running listen to erase the
	// deliveries it holds; 0: 30 s.
	ListenWait time.Duration
	// BeforeStep, if set, runs before each step with its name; an error
	// stops the erase there, as a crash would. Tests use it.
	BeforeStep func(name string) error
	// BeforeReplace, if set, runs once the new copy of a file or table
	// a step rewrites is written and before it replaces the old (in
	// PostgreSQL, before the commit); an error stops the erase there, as
	// a crash would. Tests use it.
	BeforeReplace func() error
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
	{"begin", (*eraseJob).begin},
	{"make the key", (*eraseJob).makeKey},
	{"add to the erased set", (*eraseJob).addErased},
	{"erase from the do-not-call list", (*eraseJob).eraseList},
	{"erase from the call starts and conversations", (*eraseJob).eraseStarts},
	// The deliveries before the journal, whose outcomes say which calls
	// were theirs: an erase stopped between them finds those again.
	{"find their calls", (*eraseJob).findCalls},
	{"erase from the deliveries", (*eraseJob).eraseDeliveries},
	{"erase from the journal", (*eraseJob).eraseJournal},
	{"rewrite the reports", (*eraseJob).rewriteReports},
	{"find the sheets", (*eraseJob).findSheets},
	{"say the pushed files", (*eraseJob).sayPushed},
	{"find the campaigns not recorded", (*eraseJob).findUnrecorded},
	{"write the audit", (*eraseJob).finishAudit},
}

// retainSteps are a retention: an erase of the people last called
// longer ago than the limit. It erases their data as an erase does, but
// puts nobody in the erased set and leaves the do-not-call list as it
// is: a later campaign may call them, and what it keeps of them is new.
var retainSteps = []eraseStep{
	{"load the campaign", (*eraseJob).loadCampaign},
	{"open the stores", (*eraseJob).openStores},
	{"find who is due", (*eraseJob).findDue},
	{"begin", (*eraseJob).begin},
	{"make the key", (*eraseJob).makeKey},
	{"erase from the call starts and conversations", (*eraseJob).eraseStarts},
	{"find their calls", (*eraseJob).findCalls},
	{"erase from the deliveries", (*eraseJob).eraseDeliveries},
	// The journal last: its tombstones make the people no longer due,
	// so a retention stopped before it finds them again.
	{"erase from the journal", (*eraseJob).eraseJournal},
	{"rewrite the reports", (*eraseJob).rewriteReports},
	{"say the pushed files", (*eraseJob).sayPushed},
	{"find the campaigns not recorded", (*eraseJob).findUnrecorded},
	{"write the audit", (*eraseJob).finishAudit},
}

// errNobodyDue ends a retention that finds nobody to erase, changing
// nothing.
var errNobodyDue = errors.New("nobody is due")

// eraseJob is one erase, as its steps build it.
type eraseJob struct {
	o       EraseOptions
	log     zerolog.Logger
	out     io.Writer
	at      time.Time
	f       *campaign.File
	numbers []string
	worlds  []*eraseWorld
	// registries are the given campaign's stores, real and rehearsals',
	// whose recorded places ([store.Place]) erase reaches too.
	registries []store.Store
	// unreached are the recorded places erase could not open, said, and
	// said are their campaigns' names.
	unreached []string
	said      map[string]bool
	audit     eraseAudit
	// retain: a retention's, which erases the people last called before
	// it ([RetainOptions]).
	retain *RetainOptions
	// changed: a step of this erase changed a file or table; without it
	// (and without an earlier erase unfinished), the reports are left as
	// they are.
	changed  bool
	cleanups []func()
}

// unfinishedFile marks, in a state directory, an erase that began and
// has not rewritten the directory's reports yet: a later erase that
// changes nothing else still rewrites them.
const unfinishedFile = "erase.unfinished"

// eraseWorld is one campaign's state on a store: the campaign erase was
// given, real and (when it has rehearsed) its rehearsals', and every
// other campaign the store recorded ([store.Place]).
type eraseWorld struct {
	f         *campaign.File
	rehearsal bool
	// pushed: the files `callrun state push` left in the state directory
	// of a campaign now on PostgreSQL (marked PUSHED-TO-POSTGRES), and
	// CALLRUN_HOME's list, call starts and conversations beside them
	// ([store.PushedFiles]); its reports are the campaign's own world's.
	pushed  bool
	store   store.Store
	erasure store.ErasureStore
	keys    *store.ErasureKeys
	// unfinished: an earlier erase left its reports to rewrite.
	unfinished bool
	// calls are the ids of the people's calls its journal holds, for the
	// deliveries that name a call and no number.
	calls map[string]bool
}

func (w *eraseWorld) String() string {
	if w.pushed {
		return "campaign " + w.f.Name + "'s pushed files"
	}
	if w.rehearsal {
		return "campaign " + w.f.Name + "'s rehearsals"
	}
	return "campaign " + w.f.Name
}

// eraseAudit is a line of CALLRUN_HOME's erasures.log: when, how many,
// by whom; never whom.
type eraseAudit struct {
	At           time.Time      `json:"at"`
	By           string         `json:"by"` // user@host
	Campaign     string         `json:"campaign"`
	Why          string         `json:"why"` // erase, or retention
	OlderThan    string         `json:"older_than,omitempty"`
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
	j := &eraseJob{o: o, log: log, out: out}
	return j.run(ctx, eraseSteps)
}

// RetainOptions say what a retention erases: `callrun erase
// --older-than`, and the runs and listens of a campaign with
// retention:.
type RetainOptions struct {
	Path string // the campaign file
	// OlderThan is the limit: the data of the people last called longer
	// ago is erased. 0: the campaign's retention:.
	OlderThan time.Duration
	// Now is the retention's clock; nil: time.Now.
	Now func() time.Time
	// ListenWait bounds the wait for a running listen to erase the
	// deliveries it holds; 0: 30 s.
	ListenWait time.Duration
	// BeforeStep, if set, runs before each step with its name; an error
	// stops the retention there, as a crash would. Tests use it.
	BeforeStep func(name string) error
}

// Retained is what a retention erased.
type Retained struct {
	People  int            // people last called before the limit, erased
	Records map[string]int // records changed, by step
	// Unreached are the campaigns' states the retention could not reach,
	// which may still hold them, said for people.
	Unreached []string
}

// Retain erases the data of the people last called longer ago than the
// limit from every file or table of the campaign's store that callrun
// keeps, as [Erase] does, but leaves the do-not-call list and the erased
// set as they are: retention never removes an opt-out, and the people
// may be called again. A person is due when no journal the store
// recorded, and no call start or conversation it counts, is of them
// since the limit. A retention that finds nobody due changes nothing.
func Retain(ctx context.Context, log zerolog.Logger, o RetainOptions, out io.Writer) (Retained, error) {
	j := &eraseJob{o: EraseOptions{Path: o.Path, Now: o.Now, ListenWait: o.ListenWait, AllowContact: true, BeforeStep: o.BeforeStep}, retain: &o, log: log, out: out}
	err := j.run(ctx, retainSteps)
	if errors.Is(err, errNobodyDue) {
		err = nil
	}
	return Retained{People: len(j.numbers), Records: j.audit.Records, Unreached: j.unreached}, err
}

// run runs the steps in order.
func (j *eraseJob) run(ctx context.Context, steps []eraseStep) error {
	if j.o.Now == nil {
		j.o.Now = time.Now
	}
	j.at = j.o.Now().UTC()
	defer func() {
		for _, fn := range slices.Backward(j.cleanups) {
			fn()
		}
	}()
	what := "the erase is not finished: run it again"
	if j.retain != nil {
		what = "the retention is not finished: the next run, listen's next retention or callrun erase --older-than finishes it"
	}
	for _, s := range steps {
		err := ctx.Err() // stopped (listen's SIGTERM): not the next step
		if err == nil && j.o.BeforeStep != nil {
			err = j.o.BeforeStep(s.name)
		}
		if err == nil {
			began := time.Now()
			err = s.run(j, ctx)
			j.log.Debug().Str("step", s.name).Dur("took", time.Since(began)).Err(err).Msg("erase step")
		}
		if err != nil {
			if j.audit.By != "" { // it began: it is unfinished
				return fmt.Errorf("%s: %w; %s", s.name, err, what)
			}
			return err
		}
	}
	return nil
}

// loadCampaign loads the campaign, for a retention, and takes its
// limit.
func (j *eraseJob) loadCampaign(context.Context) error {
	f, err := campaign.Load(j.o.Path, campaign.LoadOptions{Offline: true})
	if err != nil {
		return err
	}
	j.f = f
	if j.retain.OlderThan == 0 {
		j.retain.OlderThan = f.RetentionLimit()
	}
	if j.retain.OlderThan <= 0 {
		return UsageError(fmt.Errorf("%s: the campaign has no retention: limit; give erase --older-than, such as 90d", f.Source))
	}
	return nil
}

// findDue finds the people last called before the limit: those the
// worlds' journals hold only older records of, and whom no call start
// or conversation since counts. A person no journal holds (the other
// end of an inbound call, say) is due when every delivery of theirs was
// received before the limit.
func (j *eraseJob) findDue(ctx context.Context) error {
	cutoff := j.at.Add(-j.retain.OlderThan)
	due, recent := map[string]bool{}, map[string]bool{}
	heard, err := j.heardOnlyBefore(ctx, cutoff)
	if err != nil {
		return err
	}
	if young, err := j.allYoungerThan(ctx, cutoff); err != nil || (young && len(heard) == 0) {
		if err == nil {
			err = j.nobodyDue(ctx, cutoff)
		}
		return err
	}
	for _, w := range j.worlds {
		before, since, err := store.SplitByLast(ctx, w.store, cutoff)
		if err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
		for _, n := range before {
			due[n] = true
		}
		for _, n := range since {
			recent[n] = true
		}
	}
	for n := range heard {
		if !due[n] && !recent[n] { // no journal holds them: their deliveries speak
			due[n] = true
		}
	}
	if len(due) == 0 {
		return j.nobodyDue(ctx, cutoff)
	}
	starts := func(w *eraseWorld) (store.CallStarts, error) { return w.store.CallStarts() }
	err = eachPart(j, starts, func(_ *eraseWorld, cs store.CallStarts) error {
		counted, err := cs.Counted(ctx, cutoff)
		if err != nil {
			return err
		}
		conversed, err := cs.Conversed(ctx, cutoff)
		if err != nil {
			return err
		}
		for n := range counted {
			recent[n] = true
		}
		for n := range conversed {
			recent[n] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	for n := range due {
		if !recent[n] {
			j.numbers = append(j.numbers, n)
		}
	}
	slices.Sort(j.numbers)
	if len(j.numbers) == 0 {
		return j.nobodyDue(ctx, cutoff)
	}
	return nil
}

// heardOnlyBefore returns the people (the number [campaign.File.DeliveryNumber]
// reads) of the worlds' deliveries received before cutoff whom no
// delivery since names, in any of its values. A delivery received after
// now was stored by a clock set ahead: it keeps its people too.
func (j *eraseJob) heardOnlyBefore(ctx context.Context, cutoff time.Time) (map[string]bool, error) {
	old, since := map[string]bool{}, map[string]bool{}
	for _, w := range j.worlds {
		// One delivery at a time: a listen's months of deliveries are
		// not held at once, only the numbers they name.
		err := w.store.EachDelivery(ctx, func(d store.Delivery) error {
			switch {
			case d.Erased:
			case d.At.Before(cutoff) && !d.At.After(j.at):
				// Its person alone: not a number it only mentions,
				// such as the number the service calls from.
				if n := w.f.DeliveryNumber(d.Fields).E164; n != "" {
					old[n] = true
				}
			default:
				for _, n := range w.f.DeliveryNumbers(d.Fields) {
					since[n] = true
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w, err)
		}
	}
	for n := range since {
		delete(old, n)
	}
	return old, nil
}

// allYoungerThan reports whether every world's journal began at or
// after cutoff, and not after now: then nobody in it was last called
// before, and no journal need be read.
func (j *eraseJob) allYoungerThan(ctx context.Context, cutoff time.Time) (bool, error) {
	for _, w := range j.worlds {
		first, err := store.FirstRecordAt(ctx, w.store)
		if err != nil {
			return false, fmt.Errorf("%s: %w", w, err)
		}
		// A first record after now was written by a clock set ahead: it
		// says nothing of the journal's age.
		if !first.IsZero() && (first.Before(cutoff) || first.After(j.at)) {
			return false, nil
		}
	}
	return true, nil
}

// nobodyDue ends a retention that found nobody to erase, after
// rewriting the reports an earlier one left unfinished.
func (j *eraseJob) nobodyDue(ctx context.Context, cutoff time.Time) error {
	fmt.Fprintf(j.out, "Nobody on the store of campaign %s was last called before %s: nothing to erase.\n", j.f.Name, cutoff.Format("2006-01-02"))
	// A retention stopped after the journal: its reports still hold the
	// people it erased there.
	for _, w := range j.worlds {
		if w.pushed {
			continue
		}
		if _, err := os.Stat(filepath.Join(w.store.ReportDir(), unfinishedFile)); err == nil {
			if err := j.rewriteWorld(ctx, w); err != nil {
				return err
			}
		}
	}
	return errNobodyDue
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
// has rehearsed), and the store of every other campaign recorded on
// them, and refuses, changing nothing, while a run of any holds its
// lock.
func (j *eraseJob) openStores(ctx context.Context) (err error) {
	for _, rehearsal := range []bool{false, true} {
		if err := j.openWorld(ctx, j.f, rehearsal, true); err != nil {
			return err
		}
	}
	if len(j.worlds) == 0 && j.retain != nil {
		fmt.Fprintf(j.out, "Campaign %s has no state in %s yet: nothing to erase.\n", j.f.Name, j.f.StateDir)
		return errNobodyDue
	}
	if len(j.worlds) == 0 {
		return fmt.Errorf("campaign %s has no state in %s: it never ran, so there is nothing to erase", j.f.Name, j.f.StateDir)
	}
	if err := j.openPlaces(ctx); err != nil {
		return err
	}
	if err := j.openPushed(); err != nil {
		return err
	}
	for _, w := range j.worlds {
		holders, err := w.store.Holders(ctx)
		if err != nil {
			return err
		}
		if len(holders) > 0 {
			return Busy(fmt.Errorf("%w: %s holds %s (%s): erase when it ends; nothing was erased", store.ErrLocked, holders[0], w, w.store.ReportDir()))
		}
	}
	// An opt-out held on the store is found its person through the
	// journal's calls: erasing first would lose whom to list. Not the
	// pushed files' holds: `state push` copied those open into the
	// database, where they are the campaign's and are resolved (their
	// copy in CALLRUN_HOME stays open, for nothing resolves it there);
	// and those a campaign still run from files keeps there are found
	// their person through that campaign's journal, which this erase
	// leaves as it is.
	held := &eraseJob{worlds: slices.DeleteFunc(slices.Clone(j.worlds), func(w *eraseWorld) bool { return w.pushed })}
	list := func(w *eraseWorld) (store.DoNotCallList, error) { return w.store.DoNotCall() }
	return eachPart(held, list, func(_ *eraseWorld, list store.DoNotCallList) error {
		holds, err := list.Held(ctx)
		if err != nil {
			return err
		}
		if len(holds) > 0 {
			return fmt.Errorf("%w: resolve it first (callrun outcomes resolve): it is matched to its person through the records erasing would remove; nothing was erased", &store.OptOutHeldError{Holds: holds, Where: list.String()})
		}
		return nil
	})
}

// begin marks each state directory's erase begun, and writes the
// audit's first line.
func (j *eraseJob) begin(context.Context) error {
	for _, w := range j.worlds {
		if w.pushed {
			continue // its directory's reports are its campaign's
		}
		mark := filepath.Join(w.store.ReportDir(), unfinishedFile)
		if err := os.MkdirAll(w.store.ReportDir(), 0o700); err != nil {
			return err
		}
		if _, err := os.Stat(mark); err == nil {
			w.unfinished = true
		} else if err := durable.WriteFile(mark, nil, private.FileMode(w.store.ReportDir())); err != nil {
			return fmt.Errorf("marking the erase begun in %s: %w", w.store.ReportDir(), err)
		}
	}
	j.audit = eraseAudit{At: j.at, By: whoErases(), Campaign: j.f.Name, Why: "erase", People: len(j.numbers), AllowContact: j.o.AllowContact, Records: map[string]int{}}
	if j.retain != nil {
		j.audit.Why, j.audit.OlderThan = "retention", formatAge(j.retain.OlderThan)
	}
	return j.writeAudit()
}

// openWorld opens campaign f's store (its rehearsals' when rehearsal)
// unless a world has its state directory already. The given campaign's
// state directory in files that does not exist (it never ran there) is
// left out.
func (j *eraseJob) openWorld(ctx context.Context, f *campaign.File, rehearsal, own bool) error {
	st, err := f.OpenStore(ctx, rehearsal)
	if err != nil {
		return err
	}
	j.cleanups = append(j.cleanups, func() { st.Close() })
	if own {
		j.registries = append(j.registries, st)
	}
	for _, w := range j.worlds {
		if sameDir(w.store.ReportDir(), st.ReportDir()) {
			return nil // one campaign's state, given and recorded
		}
	}
	if own && (rehearsal || f.State == nil || f.State.Postgres == "") {
		if _, err := os.Stat(st.ReportDir()); errors.Is(err, fs.ErrNotExist) {
			return nil // never run there
		}
	}
	erasure, err := st.Erasure()
	if err != nil {
		return err
	}
	j.worlds = append(j.worlds, &eraseWorld{f: f, rehearsal: rehearsal, store: st, erasure: erasure})
	return nil
}

// openPlaces opens the campaigns the stores recorded ([store.Place]) on
// this machine; those it cannot (their campaign file gone or changed,
// another machine's) are said, not erased.
func (j *eraseJob) openPlaces(ctx context.Context) error {
	host, _ := os.Hostname()
	seen := map[string]bool{}
	for _, reg := range j.registries {
		places, err := reg.Places(ctx)
		if err != nil {
			return err
		}
		for _, p := range places {
			key := p.CampaignFile + "\x00" + p.StateDir + "\x00" + strconv.FormatBool(p.Kind == store.PlaceRehearsal)
			if seen[key] {
				continue
			}
			seen[key] = true
			if p.Host != host {
				j.unreach(p.Campaign, fmt.Sprintf("campaign %s on host %s (%s): erase there with its campaign file", p.Campaign, p.Host, p.StateDir))
				continue
			}
			f, err := campaign.Load(p.CampaignFile, campaign.LoadOptions{Offline: true})
			if err != nil {
				j.unreach(p.Campaign, fmt.Sprintf("campaign %s (%s): its campaign file does not load (%v): its journal and reports there still hold them", p.Campaign, p.StateDir, err))
				continue
			}
			n := len(j.worlds)
			if err := j.openWorld(ctx, f, p.Kind == store.PlaceRehearsal, false); err != nil {
				return err
			}
			if len(j.worlds) > n && !sameDir(j.worlds[n].store.ReportDir(), p.StateDir) {
				now := j.worlds[n].store.ReportDir()
				j.worlds = j.worlds[:n]
				j.unreach(p.Campaign, fmt.Sprintf("campaign %s (%s): its campaign file %s now keeps its state in %s: the old directory still holds them", p.Campaign, p.StateDir, p.CampaignFile, now))
			}
		}
	}
	return nil
}

// unreach says that erase could not reach a place of campaign name.
func (j *eraseJob) unreach(name, why string) {
	if j.said == nil {
		j.said = map[string]bool{}
	}
	j.said[name] = true
	j.unreached = append(j.unreached, why)
}

// findUnrecorded says which campaigns started calls on the store, as its
// call starts tell, and are neither a place erase reached nor one it
// said it could not: those that have not run since callrun recorded its
// campaigns.
func (j *eraseJob) findUnrecorded(ctx context.Context) error {
	starts := func(w *eraseWorld) (store.CallStarts, error) { return w.store.CallStarts() }
	// The pushed files' first: `state push` copied CALLRUN_HOME's starts
	// into the database too, so a campaign on files there is among the
	// database's callers as well, and is said as the one it is.
	pushedFirst := &eraseJob{worlds: slices.Clone(j.worlds)}
	slices.SortStableFunc(pushedFirst.worlds, func(a, b *eraseWorld) int {
		switch {
		case a.pushed == b.pushed:
			return 0
		case a.pushed:
			return -1
		}
		return 1
	})
	return eachPart(pushedFirst, starts, func(w *eraseWorld, cs store.CallStarts) error {
		callers, err := cs.Callers(ctx)
		if err != nil {
			return err
		}
		for _, c := range callers {
			if j.said[c.Campaign] || j.reaches(c) {
				continue
			}
			journal := ""
			if c.Journal != "" {
				journal = fmt.Sprintf(" (its journal, as its run named it: %s)", c.Journal)
			}
			if w.pushed {
				// CALLRUN_HOME's call starts, beside the pushed files: a
				// campaign still run from files there, which a PostgreSQL
				// campaign's registry does not list.
				home, _ := store.Home()
				j.unreach(c.Campaign, fmt.Sprintf("campaign %q%s runs from files on %s, whose call starts this erase rewrote, but not its journal and reports: erase with its campaign file too", c.Campaign, journal, home))
				continue
			}
			j.unreach(c.Campaign, fmt.Sprintf("campaign %q%s started calls on this store and has not run since callrun recorded campaigns: erase with its campaign file too", c.Campaign, journal))
		}
		return nil
	})
}

// reaches reports whether c, a campaign that started calls, is one of
// the worlds: one of its name in PostgreSQL, or in files one whose state
// directory ends in the directory of c's journal.
func (j *eraseJob) reaches(c store.Caller) bool {
	dir := filepath.Dir(filepath.Clean(filepath.FromSlash(c.Journal)))
	if strings.HasPrefix(filepath.Base(dir), "shard-") {
		dir = filepath.Dir(dir)
	}
	for strings.HasPrefix(dir, ".."+string(filepath.Separator)) {
		dir = dir[3:]
	}
	for _, w := range j.worlds {
		if w.f.Name != c.Campaign {
			continue
		}
		if !w.rehearsal && w.f.State != nil && w.f.State.Postgres != "" {
			return true
		}
		abs, err := filepath.Abs(w.store.ReportDir())
		if err == nil && (abs == dir || strings.HasSuffix(abs, string(filepath.Separator)+dir)) {
			return true
		}
	}
	return false
}

// formatAge says an age as ParseAge reads it: 90d rather than 2160h0m0s.
func formatAge(d time.Duration) string {
	if day := 24 * time.Hour; d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}

// sameDir reports whether two paths name one directory.
func sameDir(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

// makeKey makes the store's erasure key, once, durably, before any hash
// of it is written anywhere.
func (j *eraseJob) makeKey(ctx context.Context) (err error) {
	made := map[string]*store.ErasureKeys{}
	for _, w := range j.worlds {
		if w.keys = made[w.erasure.String()]; w.keys == nil {
			if w.keys, err = w.erasure.MakeKey(ctx); err != nil {
				return err
			}
			made[w.erasure.String()] = w.keys
		}
	}
	return nil
}

// eachPart runs fn once for each distinct part of the worlds' stores
// that part returns (an erased set, a do-not-call list, call starts),
// with the first world that has it: campaigns on one store share them.
func eachPart[T fmt.Stringer](j *eraseJob, part func(*eraseWorld) (T, error), fn func(*eraseWorld, T) error) error {
	done := map[string]bool{}
	for _, w := range j.worlds {
		p, err := part(w)
		if err != nil {
			return err
		}
		if done[p.String()] {
			continue
		}
		done[p.String()] = true
		if err := fn(w, p); err != nil {
			return err
		}
	}
	return nil
}

// addErased puts the people in each erased set: from here on a delivery
// of theirs is stored erased, and every report writes them blank.
func (j *eraseJob) addErased(ctx context.Context) error {
	erasure := func(w *eraseWorld) (store.ErasureStore, error) { return w.erasure, nil }
	return eachPart(j, erasure, func(w *eraseWorld, set store.ErasureStore) error {
		es := make([]store.ErasedEntry, len(j.numbers))
		for i, n := range j.numbers {
			es[i] = store.ErasedEntry{Hash: w.keys.Hashes(n)[0], At: j.at, AllowContact: j.o.AllowContact, Why: "erase"}
		}
		wrote, err := set.AddErased(ctx, es)
		if err != nil {
			return err
		}
		j.changed = j.changed || len(wrote) > 0
		j.say(set, "%d added, %d in it already", len(wrote), len(es)-len(wrote))
		return nil
	})
}

// eraseList keeps the people blocked on each do-not-call list, by keyed
// hash (unless AllowContact leaves those not on it off it).
func (j *eraseJob) eraseList(ctx context.Context) error {
	list := func(w *eraseWorld) (store.DoNotCallList, error) { return w.store.DoNotCall() }
	return eachPart(j, list, func(w *eraseWorld, list store.DoNotCallList) error {
		n, err := list.EraseDoNotCall(ctx, j.numbers, store.EraseDoNotCallOptions{EraseOptions: store.EraseOptions{Keys: w.keys, At: j.at, BeforeReplace: j.o.BeforeReplace}, AllowContact: j.o.AllowContact})
		if err != nil {
			return err
		}
		j.audit.Records["do_not_call"] += n.Added + n.Replaced
		j.audit.Records["opt_out_holds"] += n.Holds
		j.changed = j.changed || n.Added+n.Replaced+n.Holds > 0
		j.say(list, "%d entries hashed, %d people put on it as a hash, %d opt-out holds' words that named them blanked", n.Replaced, n.Added, n.Holds)
		return nil
	})
}

// eraseStarts hashes the people's call starts and conversations, which
// contact pressure still counts until they age out.
func (j *eraseJob) eraseStarts(ctx context.Context) error {
	starts := func(w *eraseWorld) (store.CallStarts, error) { return w.store.CallStarts() }
	return eachPart(j, starts, func(w *eraseWorld, cs store.CallStarts) error {
		n, err := cs.Erase(ctx, j.numbers, store.EraseOptions{Keys: w.keys, At: j.at, BeforeReplace: j.o.BeforeReplace})
		if err != nil {
			return err
		}
		j.audit.Records["call_starts"] += n.Starts
		j.audit.Records["conversations"] += n.Conversations
		j.changed = j.changed || n.Starts+n.Conversations > 0
		j.say(cs, "%d lines hashed (starts), %d (conversations)", n.Starts, n.Conversations)
		return nil
	})
}

// eraseJournal puts a tombstone in place of each person's records in
// the campaign's journal (each shard's), so that no run calls them again.
func (j *eraseJob) eraseJournal(ctx context.Context) error {
	for _, w := range j.worlds {
		n, err := w.store.EraseJournal(ctx, j.numbers, store.EraseOptions{Keys: w.keys, At: j.at, Retention: j.retain != nil, BeforeReplace: j.o.BeforeReplace})
		if err != nil {
			return Busy(err)
		}
		j.audit.Records["journal"] += n.Removed
		j.changed = j.changed || n.Removed > 0
		j.say(w, "journal: %d records replaced by %d tombstones", n.Removed, n.Tombstones)
	}
	return nil
}

// findCalls reads, from each journal, the ids the service gave the
// people's calls: a delivery that names one is theirs, whatever number
// its fields hold.
func (j *eraseJob) findCalls(ctx context.Context) (err error) {
	for _, w := range j.worlds {
		if w.calls, err = store.CallIDsOf(ctx, w.store, j.numbers); err != nil {
			return fmt.Errorf("%s: %w", w, err)
		}
	}
	return nil
}

// eraseDeliveries turns the people's stored webhook deliveries into
// their erased form.
func (j *eraseJob) eraseDeliveries(ctx context.Context) error {
	for _, w := range j.worlds {
		byListen := false
		n, err := w.store.EraseDeliveries(ctx, j.numbers, store.DeliveryEraseOptions{Keys: w.keys, Numbers: w.f.DeliveryNumbers,
			Wait: j.o.ListenWait, ByListen: func() { byListen = true }, CallIDs: w.calls, BeforeReplace: j.o.BeforeReplace})
		if err != nil {
			return err
		}
		j.audit.Records["deliveries"] += n
		j.changed = j.changed || n > 0
		if byListen {
			j.say(w, "deliveries: erased by the listen that holds them")
			continue
		}
		j.say(w, "deliveries: %d erased", n)
	}
	return nil
}

// rewriteReports writes each state directory's report files again: the
// people's rows are blank, marked erased. An erase that changed nothing
// after one that finished leaves them as they are: erasing again changes
// no file.
func (j *eraseJob) rewriteReports(ctx context.Context) error {
	for _, w := range j.worlds {
		if w.pushed {
			continue // its directory's reports are its campaign's
		}
		if !j.changed && !w.unfinished {
			if err := os.Remove(filepath.Join(w.store.ReportDir(), unfinishedFile)); err != nil {
				return err
			}
			j.say(w, "reports: left as they are (this erase changed nothing)")
			continue
		}
		if err := j.rewriteWorld(ctx, w); err != nil {
			return err
		}
	}
	return nil
}

// rewriteWorld writes the report files of w's state directory (each
// shard's) again, and removes its erase.unfinished.
func (j *eraseJob) rewriteWorld(ctx context.Context, w *eraseWorld) error {
	shards := []campaign.Shard{{}}
	if w.rehearsal || w.f.State == nil || w.f.State.Postgres == "" { // a shard's report is in its own directory
		in, err := store.ShardsIn(w.store.ReportDir())
		if err != nil {
			return err
		}
		for _, sh := range in {
			shards = append(shards, campaign.Shard{Index: sh[0], Count: sh[1]})
		}
		if len(in) > 0 {
			shards = shards[1:]
		}
	}
	for _, sh := range shards {
		if err := RebuildReport(ctx, j.log, SavedOptions{Path: w.f.Source, Sandbox: w.rehearsal, Shard: sh}, io.Discard); err != nil {
			return err
		}
	}
	if err := os.Remove(filepath.Join(w.store.ReportDir(), unfinishedFile)); err != nil {
		return err
	}
	j.say(w, "reports: rewritten in %s", w.store.ReportDir())
	return nil
}

// findSheets says which rows of the campaigns' sheets still hold the
// people: the sheets are the user's, and erase never writes them.
func (j *eraseJob) findSheets(ctx context.Context) error {
	want := map[string]bool{}
	for _, n := range j.numbers {
		want[n] = true
	}
	read := map[string]bool{}
	var rows []string
	for _, w := range j.worlds {
		abs, _ := filepath.Abs(w.f.Source)
		if read[abs] {
			continue
		}
		read[abs] = true
		err := w.f.NewContactReader(nil).Each(ctx, func(c *campaign.Contact) error {
			if want[c.Phone] {
				rows = append(rows, fmt.Sprintf("campaign %s: %s row %d", w.f.Name, w.f.Sheets[c.Sheet].File, c.Row))
			}
			return nil
		})
		if err != nil {
			rows = append(rows, fmt.Sprintf("campaign %s: its sheets could not all be read (%v): look in them yourself", w.f.Name, err))
		}
	}
	if len(rows) == 0 {
		fmt.Fprintln(j.out, "sheets: no row of the campaigns' sheets holds them")
		return nil
	}
	fmt.Fprintf(j.out, "sheets: these rows still hold them; callrun does not change your sheets, so delete the rows there (no run calls a person erased):\n  %s\n", strings.Join(rows, "\n  "))
	return nil
}

// openPushed adds, for each campaign on PostgreSQL whose state directory
// holds the files `callrun state push` copied into the database (marked
// PUSHED-TO-POSTGRES), a world of those files ([store.PushedFiles]): its
// journal (each shard's) and deliveries, and CALLRUN_HOME's do-not-call
// list, opt-out holds, call starts and conversations, which the push
// left holding every person. The steps erase the people from them as
// they do from a campaign's own files, under the same locks, so that a
// campaign still run from files on CALLRUN_HOME is kept out of each file
// as it is rewritten.
func (j *eraseJob) openPushed() error {
	seen := map[string]bool{}
	for _, w := range j.worlds {
		if w.pushed || w.rehearsal || !w.f.SharedState() {
			continue // a campaign on files: its files are the ones erased
		}
		dir := w.f.Path(w.f.StateDir)
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if _, err := os.Stat(filepath.Join(dir, store.PushedFile)); err != nil {
			continue
		}
		st := store.PushedFiles(dir)
		erasure, err := st.Erasure()
		if err != nil {
			return err
		}
		j.worlds = append(j.worlds, &eraseWorld{f: w.f, pushed: true, store: st, erasure: erasure})
	}
	return nil
}

// sayPushed says which pushed files the steps erased the people from.
func (j *eraseJob) sayPushed(context.Context) error {
	var dirs []string
	for _, w := range j.worlds {
		if w.pushed {
			dirs = append(dirs, w.store.ReportDir())
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	home, _ := store.Home()
	fmt.Fprintf(j.out, "pushed files: erased from the files `callrun state push` copied into the database and left in these state directories, and from the do-not-call list, call starts and conversations of %s, as from a campaign's own files (the database holds all they did: you may still delete them):\n  %s\n", home, strings.Join(dirs, "\n  "))
	return nil
}

// finishAudit writes the audit's last line, and says what erase could
// not reach.
func (j *eraseJob) finishAudit(context.Context) error {
	j.audit.Done = true
	if err := j.writeAudit(); err != nil {
		return err
	}
	states := 0
	for _, w := range j.worlds {
		if !w.pushed {
			states++
		}
	}
	people := fmt.Sprintf("%d people", len(j.numbers))
	if len(j.numbers) == 1 {
		people = "1 person"
	}
	if j.retain != nil {
		fmt.Fprintf(j.out, "Erased the data of %s last called before %s (older than %s) from %d campaign state(s) on the store of campaign %s; the do-not-call list is as it was. The audit is in %s.\n",
			people, j.at.Add(-j.retain.OlderThan).Format("2006-01-02"), formatAge(j.retain.OlderThan), states, j.f.Name, auditPath())
	} else {
		fmt.Fprintf(j.out, "Erased %s from %d campaign state(s) on the store of campaign %s. The audit is in %s.\n", people, states, j.f.Name, auditPath())
	}
	if len(j.unreached) > 0 {
		fmt.Fprintf(j.out, "Not reached, and still holding them:\n  %s\n", strings.Join(j.unreached, "\n  "))
	}
	fmt.Fprintln(j.out, "A campaign that never started a call on this store, and has not run since callrun recorded campaigns, is not known here: its reports may still hold them.")
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

// say prints what a step changed in a campaign's state or a part of a
// store.
func (j *eraseJob) say(what fmt.Stringer, format string, args ...any) {
	fmt.Fprintf(j.out, "%s: "+format+"\n", append([]any{what}, args...)...)
}
