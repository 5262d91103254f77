package store

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// requestDeliveries stores one delivery each of numbers (a transcript
// naming the number) in a Files' deliveries file, which the returned
// Deliveries (a listen's) holds, and makes the store's erasure key with
// nobody in the erased set, as before a retention.
func requestDeliveries(t *testing.T, numbers ...string) (Files, *Deliveries, *ErasureKeys) {
	t.Helper()
	t.Setenv("CALLRUN_HOME", filepath.Join(t.TempDir(), "home"))
	s := Files{Dir: t.TempDir()}
	w, err := s.OpenDeliveries(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	w.ReadNumbersWith(testDeliveryNumbers)
	for _, n := range numbers {
		d := Delivery{Key: "call" + n, At: time.Now(), Event: "call.ended", CallID: "call" + n, Fields: map[string]string{"phone": n, "transcript": "transcript of " + n}}
		if _, _, err := w.Append(d); err != nil {
			t.Fatal(err)
		}
	}
	er, err := s.Erasure()
	if err != nil {
		t.Fatal(err)
	}
	keys, err := er.MakeKey(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return s, w, keys
}

// eraseInBackground starts s.EraseDeliveries of numbers (a retention's: its
// people are in no erased set) in the background and returns its result.
// It waits up to wait for a listen.
func eraseInBackground(s Files, keys *ErasureKeys, wait time.Duration, numbers ...string) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.EraseDeliveries(context.Background(), numbers, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers, Wait: wait})
		done <- err
	}()
	return done
}

// waitForRequest waits until one of the state directory's requests
// ([EraseRequestFile]) names number's keyed hash (present), or none does
// (!present).
func waitForRequest(t *testing.T, s Files, keys *ErasureKeys, number string, present bool) {
	t.Helper()
	names := func() bool {
		paths, _ := filepath.Glob(filepath.Join(s.Dir, EraseRequestFile+"*"))
		for _, path := range paths {
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte(keys.Hashes(number)[0])) {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); {
		if names() == present {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no request came to name %s (present %v)", number, present)
}

// TestTwoErasesBesideAListen: two erasures (a retention and an erase,
// or two retentions) that meet a listen holding a campaign's deliveries
// at once each leave their own request; the listen's next look erases
// the people of both, and each erasure ends only then.
func TestTwoErasesBesideAListen(t *testing.T) {
	const a, b = "+14155550181", "+14155550182"
	s, w, keys := requestDeliveries(t, a, b)
	first := eraseInBackground(s, keys, time.Minute, a)
	waitForRequest(t, s, keys, a, true)
	second := eraseInBackground(s, keys, time.Minute, b)
	waitForRequest(t, s, keys, b, true)
	if _, err := w.EraseStored(); err != nil { // listen's next tick
		t.Fatal(err)
	}
	errA, errB := <-first, <-second
	body, err := os.ReadFile(filepath.Join(s.Dir, DeliveriesFile))
	if err != nil {
		t.Fatal(err)
	}
	if errB != nil || bytes.Contains(body, []byte("transcript of "+b)) {
		t.Errorf("the second request: %v; deliveries:\n%s", errB, body)
	}
	if errA == nil && bytes.Contains(body, []byte("transcript of "+a)) {
		t.Errorf("the erasure of A's deliveries was acknowledged (listen erased them), yet the file holds A in clear:\n%s", body)
	}
}

// TestEraseWaitsForAnotherErase: with no listen running, a retention
// that finds the deliveries lock held by another erase's rewrite leaves
// its request and waits; the other erase leaves that request alone, and
// once the lock is free the retention erases its people itself.
func TestEraseWaitsForAnotherErase(t *testing.T) {
	const a, b, c = "+14155550181", "+14155550182", "+14155550183"
	s, w, keys := requestDeliveries(t, a, b, c)
	// An earlier retention, of C, that a listen did: it leaves
	// deliveries.erased, as every listen that served a request does.
	done := eraseInBackground(s, keys, time.Minute, c)
	waitForRequest(t, s, keys, c, true)
	if _, err := w.EraseStored(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil { // listen stops
		t.Fatal(err)
	}

	// Erase B; while its rewrite holds the lock, the retention of A
	// begins.
	var first <-chan error
	_, err := s.EraseDeliveries(context.Background(), []string{b}, DeliveryEraseOptions{Keys: keys, Numbers: testDeliveryNumbers, BeforeReplace: func() error {
		first = eraseInBackground(s, keys, 3*time.Second, a)
		waitForRequest(t, s, keys, a, true)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	errA := <-first // it waits 3 s at most
	body, err := os.ReadFile(filepath.Join(s.Dir, DeliveriesFile))
	if err != nil {
		t.Fatal(err)
	}
	if errA == nil && bytes.Contains(body, []byte("transcript of "+a)) {
		t.Errorf("the erasure of A's deliveries returned no error, with no listen running, yet the file holds A in clear:\n%s", body)
	}
}
