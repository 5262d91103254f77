package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deliveryEraser is a store whose deliveries people can be erased from.
type deliveryEraser interface {
	EraseDeliveries(ctx context.Context, numbers []string, opts DeliveryEraseOptions) (int, error)
}

// testDeliveryNumbers reads as numbers the values of fields that are
// E.164 already: the tests' stand-in for campaign's File.DeliveryNumbers.
func testDeliveryNumbers(fields map[string]string) []string {
	var out []string
	for _, v := range fields {
		if strings.HasPrefix(v, "+") {
			out = append(out, v)
		}
	}
	return out
}

// TestEraseDeliveries, files and PostgreSQL: deliveries of A (one told by
// its call, one by its fields) and of B are stored; erasing A replaces
// A's two by their erased form (each key, a hash of fields that hold A's
// number, hashed with the store's key), holds A in no form, leaves B's as it
// was; an erase killed before its replace changes nothing, a second
// erase changes nothing (the file byte for byte), a retry of A's
// delivery stored erased is found stored, and a file a listen holds and
// does not erase itself is refused once the wait is over.
func TestEraseDeliveries(t *testing.T) {
	const a, b = "+14155550123", "+14155550199"
	keys := &ErasureKeys{where: "the test", keys: []erasureKey{{id: keyID([]byte("test key")), key: []byte("test key")}}}
	at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	ds := []Delivery{
		{Key: "a-call", At: at, Event: "call.ended", CallID: "call_a", AgentID: "agent_1", Fields: map[string]string{"data.customer.number": a, "data.transcript": "Ada Lovelace, (415) 555-0123, ada@example.com"}, Raw: `{"number":"` + a + `"}`},
		{Key: "b-call", At: at.Add(time.Minute), Event: "call.ended", CallID: "call_b", Fields: map[string]string{"data.customer.number": b, "data.transcript": "Grace Hopper, grace@example.com"}},
		{Key: "a-fields", At: at.Add(2 * time.Minute), Event: "contact.updated", Fields: map[string]string{"phone": a, "name": "Ada Lovelace"}},
	}
	for _, kind := range storeKinds {
		t.Run(kind.name, func(t *testing.T) {
			ctx := context.Background()
			s := kind.open(t, "erasedeliveries", 0, 1)
			w, err := s.OpenDeliveries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range ds {
				if _, _, err := w.Append(d); err != nil {
					t.Fatal(err)
				}
			}
			if f, ok := s.(Files); ok {
				// A listen holds the file and does not erase it: the
				// erase waits for it, then gives up.
				t.Setenv("CALLRUN_HOME", filepath.Join(t.TempDir(), "home"))
				_, err := f.EraseDeliveries(ctx, []string{a}, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers, Wait: time.Millisecond})
				if !errors.Is(err, ErrDeliveriesLocked) {
					t.Errorf("erasing while listen holds the file: %v, want ErrDeliveriesLocked", err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			text := func() string {
				t.Helper()
				got, err := s.ReadDeliveries(ctx)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(got)
				if f, ok := s.(Files); ok {
					raw, err := os.ReadFile(filepath.Join(f.top(), DeliveriesFile))
					if err != nil {
						t.Fatal(err)
					}
					return string(raw)
				}
				return string(b)
			}
			before := text()
			e := s.(deliveryEraser)
			killed := errors.New("killed")
			if _, err := e.EraseDeliveries(ctx, []string{a}, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers, BeforeReplace: func() error { return killed }}); !errors.Is(err, killed) {
				t.Fatalf("an erase killed before its replace: %v", err)
			}
			if text() != before {
				t.Errorf("an erase killed before its replace changed the deliveries")
			}
			n, err := e.EraseDeliveries(ctx, []string{a}, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers})
			if err != nil || n != 2 {
				t.Fatalf("erase: %d replaced, %v; want 2", n, err)
			}
			after := text()
			for _, form := range []string{a, "14155550123", "(415) 555-0123", "Ada", "ada@example.com", "agent_1", "a-fields"} {
				if strings.Contains(after, form) {
					t.Errorf("the deliveries still hold %q:\n%s", form, after)
				}
			}
			for _, form := range []string{b, "Grace Hopper", "grace@example.com", "b-call"} {
				if !strings.Contains(after, form) {
					t.Errorf("the deliveries lost B's %q:\n%s", form, after)
				}
			}
			got, err := s.ReadDeliveries(ctx)
			if err != nil || len(got) != 3 {
				t.Fatalf("%d deliveries read after the erase (%v), want 3", len(got), err)
			}
			hashed, _ := ds[2].ErasedForm(keys)
			hashedCall, _ := ds[0].ErasedForm(keys)
			if !got[0].Erased || got[0].Key != hashedCall.Key || !strings.HasPrefix(got[0].Key, "h1:") || got[0].CallID != "call_a" || len(got[0].Fields) != 0 || got[0].Raw != "" ||
				!got[2].Erased || got[2].Key != hashed.Key || !strings.HasPrefix(got[2].Key, "h1:") || got[1].Erased {
				t.Errorf("deliveries after the erase: %+v", got)
			}
			if n, err := e.EraseDeliveries(ctx, []string{a}, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers}); err != nil || n != 0 || text() != after {
				t.Errorf("a second erase: %d replaced, %v, changed %v; want none", n, err, text() != after)
			}
			// A retry of A's delivery, stored erased as listen stores it
			// now, is found stored (files: through the rebuilt index).
			w, err = s.OpenDeliveries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for _, d := range []Delivery{ds[0], ds[2]} {
				e, err := d.ErasedForm(keys)
				if err != nil {
					t.Fatal(err)
				}
				if _, isNew, err := w.Append(e); err != nil || isNew {
					t.Errorf("a retry of %s stored erased: new %v, %v; want found stored", d.Key, isNew, err)
				}
			}
		})
	}
}

// TestCommitStoresTheErasedErased, files and PostgreSQL: a delivery of a
// person in the erased set is stored erased by the commit itself, which
// reads the erased set (in PostgreSQL under the lock an erase of
// deliveries waits for), and a retry of it is found stored.
func TestCommitStoresTheErasedErased(t *testing.T) {
	const a = "+14155550123"
	ctx := context.Background()
	t.Setenv("CALLRUN_HOME", filepath.Join(t.TempDir(), "home"))
	for name, s := range map[string]Store{"files": Files{Dir: t.TempDir()}, "postgres": openPostgres(t, sharedURL(t), "commiterased", 0, 1)} {
		t.Run(name, func(t *testing.T) {
			eraseFromStore(t, s, a)
			w, err := s.OpenDeliveries(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			w.ReadNumbersWith(func(f map[string]string) []string { return []string{f["phone"]} })
			d := Delivery{Key: "late", At: time.Now(), Event: "contact.updated", Fields: map[string]string{"phone": a, "name": "Ada Lovelace"}}
			for i := range 2 { // the second, a retry, is found stored
				stored, isNew, err := w.Append(d)
				if err != nil || isNew != (i == 0) || (i == 0 && !stored.Erased) {
					t.Fatalf("append %d: new %v, erased %v, %v", i, isNew, stored.Erased, err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := s.ReadDeliveries(ctx)
			if err != nil || len(got) != 1 {
				t.Fatalf("%d deliveries read (%v), want 1", len(got), err)
			}
			if b, _ := json.Marshal(got); !got[0].Erased || !strings.HasPrefix(got[0].Key, "h1:") || strings.Contains(string(b), "Ada") || strings.Contains(string(b), a) {
				t.Errorf("the delivery committed after the erase: %s", b)
			}
		})
	}
}

// TestListenErasesTheFileItHolds: people erased while listen holds the
// deliveries file are erased from it by EraseStored, between commits:
// killed before its replace, the file is as it was and no
// acknowledgement is written; run again, A's delivery is erased, B's
// whole, the acknowledgement covers the erased set, and deliveries go on
// into the new file, a retry of A's found stored.
func TestListenErasesTheFileItHolds(t *testing.T) {
	const a, b = "+14155550123", "+14155550124"
	ctx := context.Background()
	home := filepath.Join(t.TempDir(), "home")
	t.Setenv("CALLRUN_HOME", home)
	s := Files{Dir: t.TempDir()}
	w, err := s.OpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.ReadNumbersWith(func(f map[string]string) []string { return []string{f["phone"]} })
	delivery := func(key, phone string) Delivery {
		return Delivery{Key: key, At: time.Now(), Event: "call.ended", CallID: key, Fields: map[string]string{"phone": phone, "transcript": "hello " + phone}}
	}
	for _, d := range []Delivery{delivery("call_a", a), delivery("call_b", b)} {
		if _, _, err := w.Append(d); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.EraseStored(); n != 0 || err != nil {
		t.Fatalf("EraseStored with nobody erased: %d, %v", n, err)
	}
	eraseFromStore(t, s, a)
	path := filepath.Join(s.Dir, DeliveriesFile)
	before, _ := os.ReadFile(path)
	killed := errors.New("killed")
	w.sink.(*fileDeliveries).beforeErase = func() error { return killed }
	if _, err := w.EraseStored(); !errors.Is(err, killed) {
		t.Fatalf("EraseStored killed before its replace: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Error("a rewrite killed before its replace changed the file")
	}
	if _, err := os.Stat(filepath.Join(s.Dir, DeliveriesErasedFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a rewrite killed wrote its acknowledgement: %v", err)
	}
	w.sink.(*fileDeliveries).beforeErase = nil
	if n, err := w.EraseStored(); n != 1 || err != nil {
		t.Fatalf("EraseStored: %d, %v; want A's one", n, err)
	}
	ack, _ := os.ReadFile(filepath.Join(s.Dir, DeliveriesErasedFile))
	set, _ := os.Stat(filepath.Join(home, ErasedFileName))
	if strings.TrimSpace(string(ack)) != strconv.FormatInt(set.Size(), 10) {
		t.Errorf("acknowledgement %q; want the erased set's length %d", ack, set.Size())
	}
	if _, isNew, err := w.Append(delivery("call_a", a)); err != nil || isNew {
		t.Errorf("a retry of A's delivery: new %v, %v; want found stored", isNew, err)
	}
	if _, isNew, err := w.Append(delivery("call_b2", b)); err != nil || !isNew {
		t.Errorf("B's next delivery: new %v, %v", isNew, err)
	}
	got, err := s.ReadDeliveries(ctx)
	if err != nil || len(got) != 3 {
		t.Fatalf("%d deliveries (%v); want 3", len(got), err)
	}
	body, _ := os.ReadFile(path)
	if bytes.Contains(body, []byte(a[1:])) || !bytes.Contains(body, []byte(b[1:])) || !got[0].Erased {
		t.Errorf("the file after the rewrite:\n%s", body)
	}
}

// eraseFromStore makes the store's erasure key and puts the numbers in
// its erased set, as `callrun erase` does first.
func eraseFromStore(t *testing.T, s Store, numbers ...string) *ErasureKeys {
	t.Helper()
	ctx := context.Background()
	er, err := s.Erasure()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := er.MakeKey(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var es []ErasedEntry
	for _, n := range numbers {
		es = append(es, ErasedEntry{Hash: keys.Hashes(n)[0], At: time.Now(), Why: "erase"})
	}
	if _, err := er.AddErased(ctx, es); err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestEraseDeliveriesRetryStoredErased, PostgreSQL: A's delivery was
// stored before A was erased, and a retry of it stored erased since (the
// erased set took A first): the erase leaves one row of it, erased, and
// erasing again changes nothing.
func TestEraseDeliveriesRetryStoredErased(t *testing.T) {
	const a = "+14155550123"
	ctx := context.Background()
	keys := &ErasureKeys{where: "the test", keys: []erasureKey{{id: keyID([]byte("test key")), key: []byte("test key")}}}
	d := Delivery{Key: "a-fields", At: time.Now(), Event: "contact.updated", Fields: map[string]string{"phone": a, "name": "Ada Lovelace"}}
	retry, err := d.ErasedForm(keys)
	if err != nil {
		t.Fatal(err)
	}
	s := openPostgres(t, sharedURL(t), "retryerased", 0, 1)
	w, err := s.OpenDeliveries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []Delivery{d, retry} {
		if _, isNew, err := w.Append(d); err != nil || !isNew {
			t.Fatalf("storing %s: new %v, %v", d.Key, isNew, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		n, err := s.EraseDeliveries(ctx, []string{a}, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers})
		if err != nil || n != 1-i {
			t.Fatalf("erase %d: %d replaced, %v; want %d", i+1, n, err, 1-i)
		}
		got, err := s.ReadDeliveries(ctx)
		if err != nil || len(got) != 1 || !got[0].Erased || got[0].Key != retry.Key {
			t.Fatalf("after erase %d: %+v (%v); want the one erased delivery", i+1, got, err)
		}
	}
}
