package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestDeliveriesOncePerKey(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	w, err := OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDeliveries(dir); !errors.Is(err, ErrDeliveriesLocked) {
		t.Errorf("second writer: %v", err)
	}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	news := make(chan bool, 20)
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := []string{"a", "b"}[i%2]
			_, isNew, err := w.Append(Delivery{Key: key, At: at, Event: "call.ended", Fields: map[string]string{"phone_number": "+1"}})
			if err != nil {
				t.Error(err)
			}
			news <- isNew
		}()
	}
	wg.Wait()
	close(news)
	n := 0
	for isNew := range news {
		if isNew {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d stored as new, want 2", n)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	// A torn last line, as a kill in the middle of a write leaves, is cut;
	// the keys already stored stay stored once.
	fh, err := os.OpenFile(filepath.Join(dir, DeliveriesFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.WriteString(`{"key":"c","fiel`)
	fh.Close()
	if ds, err := ReadDeliveries(dir); err != nil || len(ds) != 2 {
		t.Fatalf("read %d deliveries, %v", len(ds), err)
	}
	w, err = OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, isNew, err := w.Append(Delivery{Key: "a"}); isNew || err != nil {
		t.Errorf("a stored again: %v %v", isNew, err)
	}
	if _, isNew, err := w.Append(Delivery{Key: "c", Fields: map[string]string{}}); !isNew || err != nil {
		t.Errorf("c not stored: %v %v", isNew, err)
	}
	ds, err := ReadDeliveries(dir)
	if err != nil || len(ds) != 3 || ds[0].Key != "a" && ds[0].Key != "b" || ds[2].Key != "c" || !ds[0].At.Equal(at) {
		t.Errorf("read %+v, %v", ds, err)
	}
}

func TestDeliveriesRefusesAForeignFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, DeliveriesFile), []byte("not json\n"), 0o600)
	if _, err := OpenDeliveries(dir); err == nil {
		t.Error("a file of another kind was opened")
	}
	if ds, err := ReadDeliveries(filepath.Join(dir, "none")); err != nil || ds != nil {
		t.Errorf("missing file: %v %v", ds, err)
	}
}

// TestDeliveriesTail: a tail begun on a file whose last line is being
// written skips that line, returns each delivery appended after it once,
// leaves a line not yet whole for the next read, and follows a file that
// did not exist when it began, or that listen cut when it started again.
func TestDeliveriesTail(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	missing, err := TailDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	add := func(key string) {
		t.Helper()
		if _, _, err := w.Append(Delivery{Key: key, At: at, Event: "call.ended", Fields: map[string]string{"phone_number": "+1"}}); err != nil {
			t.Fatal(err)
		}
	}
	keys := func(ds []Delivery, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		for _, d := range ds {
			out = append(out, d.Key...)
		}
		return string(out)
	}
	add("a")
	if got := keys(missing.Next()); got != "a" {
		t.Errorf("the tail of a file made after it began read %q, want a", got)
	}
	// A torn line at the end when the tail begins.
	path := filepath.Join(dir, DeliveriesFile)
	raw, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.WriteString(`{"key":"torn","fie`)
	tail, err := TailDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw.WriteString(`lds":{}}` + "\n" + `{"key":"b","fields":{}}` + "\n" + `{"key":"c",`)
	if got := keys(tail.Next()); got != "b" {
		t.Errorf("read %q, want b alone (torn began before the tail, c is not whole)", got)
	}
	if got := keys(tail.Next()); got != "" {
		t.Errorf("read %q again", got)
	}
	raw.WriteString(`"fields":{}}` + "\n")
	if got := keys(tail.Next()); got != "c" {
		t.Errorf("read %q, want c once whole", got)
	}
	// listen cuts a torn tail when it opens the file again.
	raw.WriteString(`{"key":"cut`)
	w.Close()
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	if got := keys(tail.Next()); got != "" {
		t.Errorf("after the cut read %q", got)
	}
}

// TestDeliveriesStoredOnceAcrossWriters stores deliveries from many
// goroutines at once, each key several times, through two writers of one
// PostgreSQL database (two listen replicas) and through the one writer a
// state directory allows: every key is stored once, exactly one Append of
// it says new, and the State of each store and its shards read them back.
func TestDeliveriesStoredOnceAcrossWriters(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			s := kind.open(t, "spring", 0, 1)
			var writers []*Deliveries
			for range 2 {
				w, err := s.OpenDeliveries(ctx)
				if kind.name == "files" && len(writers) == 1 {
					if !errors.Is(err, ErrDeliveriesLocked) {
						t.Fatalf("a second writer of the files: %v", err)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				writers = append(writers, w)
			}
			const keys, copies = 200, 3
			at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			var news sync.Map // key -> count of Appends that said new
			var wg sync.WaitGroup
			for g := range 20 {
				wg.Go(func() {
					for i := g; i < keys*copies; i += 20 {
						key := fmt.Sprintf("k%03d", i%keys)
						w := writers[i%len(writers)]
						_, isNew, err := w.Append(Delivery{Key: key, At: at, Event: "call.ended", Fields: map[string]string{"phone_number": "+1" + key}})
						if err != nil {
							t.Error(err)
							return
						}
						if isNew {
							n, _ := news.LoadOrStore(key, new(atomic.Int32))
							n.(*atomic.Int32).Add(1)
						}
					}
				})
			}
			wg.Wait()
			for _, w := range writers {
				if err := w.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for i := range keys {
				n, ok := news.Load(fmt.Sprintf("k%03d", i))
				if !ok || n.(*atomic.Int32).Load() != 1 {
					t.Errorf("key %d said new %v times", i, n)
				}
			}
			for _, st := range []Store{s, kind.open(t, "spring", 1, 2)} {
				ds, err := st.ReadDeliveries(ctx)
				if err != nil || len(ds) != keys {
					t.Fatalf("%s: read %d deliveries, %v", st, len(ds), err)
				}
				state, err := st.ReadState(ctx)
				if kind.name == "files" && st != s {
					continue // the files of one split refuse the other's: checked elsewhere
				}
				if err != nil {
					t.Fatal(err)
				}
				ds, err = state.Deliveries(ctx)
				state.Close()
				if err != nil || len(ds) != keys || ds[0].Fields["phone_number"] == "" || !ds[0].At.Equal(at) {
					t.Errorf("%s: the State read %d deliveries, %v", st, len(ds), err)
				}
			}
			// Another campaign on the same store has none of them.
			if ds, err := kind.open(t, "autumn", 0, 1).ReadDeliveries(ctx); err != nil || len(ds) != 0 {
				t.Errorf("another campaign: %d deliveries, %v", len(ds), err)
			}
		})
	}
}

// TestDeliveriesAnswerOnlyAfterTheirFsync holds the deliveries file's
// fsync while many deliveries are appended at once: none is acknowledged
// before the fsync that covers its line has returned; when that fsync
// fails, every delivery of its commit fails (the service sends them
// again), none is left in the file, and the next commit stores them.
func TestDeliveriesAnswerOnlyAfterTheirFsync(t *testing.T) {
	dir := t.TempDir()
	w, err := OpenDeliveries(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	syncing := make(chan struct{}) // the writer is in the fsync
	release := make(chan error)    // ends it, with this error
	var synced atomic.Int32        // fsyncs that returned
	w.sink.(*fileDeliveries).beforeSync = func() error {
		syncing <- struct{}{}
		err := <-release
		if err == nil {
			synced.Add(1)
		}
		return err
	}
	const n = 30
	type answer struct {
		isNew  bool
		err    error
		synced int32 // fsyncs returned when the Append did
	}
	answers := make(chan answer, 3*n)
	appendAll := func() {
		for i := range n {
			go func() {
				_, isNew, err := w.Append(Delivery{Key: fmt.Sprintf("k%02d", i), Fields: map[string]string{"n": fmt.Sprint(i)}})
				answers <- answer{isNew, err, synced.Load()}
			}()
		}
	}
	appendAll()
	<-syncing // the first commit, with one delivery or several
	select {
	case a := <-answers:
		t.Fatalf("an Append returned while its commit's fsync was held: %+v", a)
	default:
	}
	release <- errors.New("disk full") // it fails
	failed, stored := 0, 0
	for failed+stored < n {
		select {
		case a := <-answers:
			switch {
			case a.err != nil:
				failed++
			case !a.isNew:
				t.Errorf("a delivery read as a duplicate: %+v", a)
			case a.synced == 0:
				t.Errorf("acknowledged before any fsync returned: %+v", a)
			default:
				stored++
			}
		case <-syncing: // a later commit's fsync: let it through
			release <- nil
		}
	}
	if failed == 0 {
		t.Fatal("no Append saw its fsync fail")
	}
	// The failed ones again, as the service's retries.
	go func() {
		for range syncing {
			release <- nil
		}
	}()
	appendAll()
	again := 0
	for range n {
		a := <-answers
		if a.err != nil {
			t.Errorf("retry: %v", a.err)
		}
		if a.isNew {
			again++
		}
	}
	if again != failed {
		t.Errorf("%d stored on the retry, want the %d that failed", again, failed)
	}
	ds, err := ReadDeliveries(dir)
	if err != nil || len(ds) != n {
		t.Errorf("the file holds %d deliveries, want %d once each: %v", len(ds), n, err)
	}
	w.Close()
	close(syncing)
}

// TestPostgresFollowsDeliveries follows a campaign's rows of the
// deliveries table as two listens store them: each delivery once, none
// stored before the feed began, none of another campaign, and a row whose
// transaction commits after rows with greater ids (a slower listen's)
// when it commits.
func TestPostgresFollowsDeliveries(t *testing.T) {
	ctx := context.Background()
	url := pgURL(t)
	p := openPostgres(t, url, "spring", 0, 1)
	other := openPostgres(t, url, "autumn", 0, 1)
	wa, err := p.OpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer wa.Close()
	wo, err := other.OpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer wo.Close()
	put := func(w *Deliveries, key string) {
		t.Helper()
		if _, _, err := w.Append(Delivery{Key: key, Fields: map[string]string{"k": key}}); err != nil {
			t.Fatal(err)
		}
	}
	put(wa, "before")
	feed, err := p.FollowDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keys := func() string {
		t.Helper()
		ds, err := feed()
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, d := range ds {
			ks = append(ks, d.Key)
		}
		return strings.Join(ks, " ")
	}
	if got := keys(); got != "" {
		t.Errorf("a new feed returned %q", got)
	}
	put(wa, "a")
	put(wo, "other")
	put(wa, "a") // a retry: stored once
	// A slow listen's row: inserted (its id given) but not committed yet.
	tx := beginSlow(t, url)
	if _, err := tx.Exec(ctx, `INSERT INTO callrun_deliveries (campaign, key, received_at, delivery) VALUES ('spring', 'slow', now(), '{"key":"slow","fields":{}}')`); err != nil {
		t.Fatal(err)
	}
	put(wa, "b")
	if got := keys(); got != "a b" {
		t.Errorf("feed returned %q, want a b", got)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	put(wa, "c")
	if got := keys(); got != "slow c" {
		t.Errorf("feed returned %q, want the late commit and c", got)
	}
	if got := keys(); got != "" {
		t.Errorf("feed returned %q again", got)
	}
}
