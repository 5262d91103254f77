package campaign

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
	"github.com/callrun/callrun/report"
	"github.com/callrun/callrun/report/store"
	"github.com/callrun/callrun/report/store/pgtest"
)

// dncOnce is a do-not-call list whose number late reads as off the list
// the first time it is asked about, and on it after: a number added
// between the journal's check of its intent and its call start.
type dncOnce struct {
	store.DoNotCallList
	late  string
	asked atomic.Int32
}

func (l *dncOnce) Has(ctx context.Context, number string) (bool, error) {
	if number == l.late && l.asked.Add(1) == 1 {
		return false, nil
	}
	if number == l.late {
		return true, nil
	}
	return l.DoNotCallList.Has(ctx, number)
}

// TestRunHonoursTheDoNotCallList: numbers on the list when the run
// begins are not called; a number added during the run (from another
// process, as listen or callrun suppress would) is refused at its
// intent; with files, one added after its intent was written is refused
// right before its call start. None of them reaches the sandbox, none
// reads as uncertain, and the report shows each suppressed with the
// list as its reason; the contacts called before keep their status.
func TestRunHonoursTheDoNotCallList(t *testing.T) {
	for _, kind := range dtStores {
		t.Run(kind, func(t *testing.T) {
			const n = 20
			e := newDtEnv(t, sandbox.Options{}, dtCampaign(500, 1, ""), map[string]string{"leads.csv": dtSheet(n)})
			e.use(kind)
			ctx := context.Background()
			var list store.DoNotCallList = store.OpenDoNotCallFile(t.TempDir())
			if e.pg != nil {
				list, _ = e.pg.DoNotCall()
			}
			e.dnc = list
			add := func(i int, source string) {
				t.Helper()
				if _, err := list.Add(ctx, []store.DoNotCallEntry{{Number: dtPhone(i), Source: source}}); err != nil {
					t.Fatal(err)
				}
			}
			// 3 and 7 opted out before the run.
			add(3, "suppress add")
			add(7, "suppress add")
			e.sup.SetDoNotCall([]string{dtPhone(3), dtPhone(7)})
			late := &dncOnce{DoNotCallList: list, late: dtPhone(15)}
			if e.pg == nil {
				e.dnc = late // the journal asks first, then the run before the call start
			}
			var settled sync.Once
			var count atomic.Int32
			res := e.mustRun(func(o *RunOptions) {
				if e.pg == nil {
					o.DoNotCall = late // read again right before each call start
				}
				o.Settled = func(store.Status) {
					if count.Add(1) == 10 {
						settled.Do(func() { add(12, "delivery k12 of campaign dispatch-test") })
					}
				}
			})
			placed := dtPlaced(e.srv)
			for _, i := range []int{3, 7, 12} {
				if placed[dtPhone(i)] != 0 || dtReceived(e.srv)[dtPhone(i)] != 0 {
					t.Errorf("%s is on the do-not-call list and was sent a call start", dtPhone(i))
				}
			}
			want := 3
			if e.pg == nil {
				want = 4 // 15 too, refused before its call start
				if placed[dtPhone(15)] != 0 {
					t.Errorf("%s went on the list after its intent and was called", dtPhone(15))
				}
			}
			if res.DoNotCall != want || res.Uncertain != 0 || res.Sent != n-want {
				t.Errorf("result %+v, want %d not called for the list, none uncertain", res, want)
			}
			if en, ok := e.entry(dtPhone(12)); ok {
				t.Errorf("the journal holds an intent of %s, refused at its intent: %+v", dtPhone(12), en)
			}
			// The report, with the list as read at the run's end, and 2
			// on it too: called, and then it opted out.
			es, err := list.Entries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			numbers := []string{dtPhone(2)}
			for num := range store.OnDoNotCall(es) {
				numbers = append(numbers, num)
			}
			if e.pg == nil {
				numbers = append(numbers, dtPhone(15))
			}
			e.sup.SetDoNotCall(numbers)
			dir := t.TempDir()
			if err := WriteReport(ctx, e.f, e.state(), e.sup, nil, dir, &report.Summary{Campaign: e.f.Name}); err != nil {
				t.Fatal(err)
			}
			rows := dtReportRows(t, filepath.Join(dir, ReportCSV))
			for i := range n {
				r := rows[dtPhone(i)]
				switch i {
				case 3, 7, 12:
					if r["status"] != Suppressed || r["reason"] != ReasonDoNotCall {
						t.Errorf("%s: report row %v, want suppressed for the do-not-call list", dtPhone(i), r)
					}
				case 15:
					if e.pg == nil && (r["status"] != Suppressed || r["reason"] != ReasonDoNotCall) {
						t.Errorf("%s: report row %v, want suppressed for the do-not-call list", dtPhone(i), r)
					}
				default:
					if r["status"] != "sent" {
						t.Errorf("%s: report row %v, want sent (a number called before it opted out stays sent)", dtPhone(i), r)
					}
				}
			}
		})
	}
}

// dtReportRows reads report.csv by phone number.
func dtReportRows(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, rec := range recs[1:] {
		r := map[string]string{}
		for j, col := range recs[0] {
			r[col] = rec[j]
		}
		out[r["phone_number"]] = r
	}
	return out
}

// TestPlanCountsTheDoNotCallList: a contact to call whose number is on
// the list is counted suppressed (and in do_not_call), one called
// already stays done, and a row of a suppression file stays suppressed
// once.
func TestPlanCountsTheDoNotCallList(t *testing.T) {
	dir := t.TempDir()
	dtWrite(t, filepath.Join(dir, "leads.csv"), dtSheet(6))
	dtWrite(t, filepath.Join(dir, "dnc.csv"), "Phone\n"+dtPhone(4)+"\n")
	path := filepath.Join(dir, "campaign.yaml")
	dtWrite(t, path, dtCampaign(10, 1, "suppress: [dnc.csv]\n"))
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	sup, err := f.LoadSuppression(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sup.SetDoNotCall([]string{dtPhone(1), dtPhone(2), dtPhone(4)})
	plan, err := BuildPlan(context.Background(), f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: time.Now(),
		Done: func(c *Contact) bool { return c.Phone == dtPhone(2) }})
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{Rows: 6, Suppressed: 2, Done: 1, ToCall: 3, DoNotCall: 1}
	if plan.Totals != want {
		t.Errorf("plan totals %+v, want %+v", plan.Totals, want)
	}
	var text bytes.Buffer
	if err := plan.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "2 suppressed (1 on the do-not-call list)") {
		t.Errorf("plan text does not count the do-not-call list:\n%s", text.String())
	}
}

// TestLoadDoNotCallShortAndLong: a list read whole (short) and one
// looked up for the campaign's numbers (long) give plan the same
// contacts on it, on files and PostgreSQL.
func TestLoadDoNotCallShortAndLong(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dtWrite(t, filepath.Join(dir, "leads.csv"), dtSheet(6))
	path := filepath.Join(dir, "campaign.yaml")
	dtWrite(t, path, dtCampaign(10, 1, ""))
	f, err := Load(path, LoadOptions{Offline: true})
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string]store.DoNotCallList{"files": store.OpenDoNotCallFile(t.TempDir())}
	p, err := store.OpenPostgres(ctx, pgtest.URL(t), f.Name, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	if lists["postgres"], err = p.DoNotCall(); err != nil {
		t.Fatal(err)
	}
	for kind, list := range lists {
		es := []store.DoNotCallEntry{{Number: dtPhone(1), Source: "a"}, {Number: dtPhone(4), Source: "a"}, {Number: "+12025550199", Source: "not the campaign's"}, {Number: dtPhone(4), Removed: true, Source: "b"}, {Number: dtPhone(5), Source: "a"}}
		if _, err := list.Add(ctx, es); err != nil {
			t.Fatal(err)
		}
		for _, small := range []int{100, 2} {
			t.Run(fmt.Sprintf("%s/whole-up-to=%d", kind, small), func(t *testing.T) {
				was := smallDoNotCall
				smallDoNotCall = small
				t.Cleanup(func() { smallDoNotCall = was })
				sup, err := f.LoadSuppression(ctx)
				if err != nil {
					t.Fatal(err)
				}
				if err := sup.LoadDoNotCall(ctx, list, f); err != nil {
					t.Fatal(err)
				}
				if long := sup.callNumbers != nil; long != (small == 2) {
					t.Errorf("the campaign's numbers read: %v, with the list of 3 numbers read whole up to %d", long, small)
				}
				plan, err := BuildPlan(ctx, f, PlanOptions{Offline: true, Agents: OfflineAgents(f.Agents), Suppress: sup, Now: time.Now()})
				if err != nil {
					t.Fatal(err)
				}
				if want := (Counts{Rows: 6, Suppressed: 2, ToCall: 4, DoNotCall: 2}); plan.Totals != want {
					t.Errorf("plan totals %+v, want %+v", plan.Totals, want)
				}
			})
		}
	}
}
