package store

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
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
// A's two by their erased form (the call's key kept, the fields' key
// hashed with the store's key), holds A in no form, leaves B's as it
// was; an erase killed before its replace changes nothing, a second
// erase changes nothing (the file byte for byte), a retry of A's
// delivery stored erased is found stored, and a file a listen holds is
// refused.
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
				// A listen holds the file: the erase is refused.
				_, err := f.EraseDeliveries(ctx, []string{a}, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers})
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
			if !got[0].Erased || got[0].Key != "a-call" || got[0].CallID != "call_a" || len(got[0].Fields) != 0 || got[0].Raw != "" ||
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
			er, err := s.Erasure()
			if err != nil {
				t.Fatal(err)
			}
			keys, err := er.MakeKey(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := er.AddErased(ctx, []ErasedEntry{{Hash: keys.Hashes(a)[0], At: time.Now(), Why: "erase"}}); err != nil {
				t.Fatal(err)
			}
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
