package main

// BenchmarkListen: `callrun listen` receiving the service's webhook
// deliveries from 50 senders at once over loopback, each delivery stored
// durably before its 200, with the deliveries in files and in PostgreSQL.
// It prints the deliveries acknowledged a second and the p99 time to
// acknowledge, as the sender saw it; it never fails on timing. Target from
// the issue: at least 2,000 a second on a 2-core machine for both stores
// (a campaign of 1,000 calls a second gets up to three events a call).
//
// Environment:
//
//	CALLRUN_BENCH_DELIVERIES   deliveries a store (default 20000)
//	CALLRUN_TEST_DATABASE_URL  the PostgreSQL server (default: pgtest's own on loopback, fsync off)

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/callrun/callrun/report/store/pgtest"
	"github.com/rs/zerolog"
)

// benchSenders is how many deliveries are in flight at once.
const benchSenders = 50

func BenchmarkListen(b *testing.B) {
	n := benchEnvInt(b, "CALLRUN_BENCH_DELIVERIES", 20000)
	for _, kind := range []string{"files", "postgres"} {
		b.Run("store="+kind, func(b *testing.B) {
			for range b.N {
				dir := b.TempDir()
				path := writeListenCampaign(b, dir, "bench")
				if kind == "postgres" {
					y, _ := os.ReadFile(path)
					os.WriteFile(path, append(y, "state: {postgres: \"${BENCH_DATABASE_URL}\"}\n"...), 0o644)
					b.Setenv("BENCH_DATABASE_URL", pgtest.URL(b))
				}
				rate, p50, p99 := benchListen(b, path, n)
				b.ReportMetric(rate, "acked/s")
				b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
				fmt.Printf("listen-bench store=%s deliveries=%d senders=%d acked_per_s=%.0f p50_ms=%.2f p99_ms=%.2f\n",
					kind, n, benchSenders, rate, float64(p50.Microseconds())/1000, float64(p99.Microseconds())/1000)
			}
		})
	}
}

// benchListen runs listen on the campaign at path, has benchSenders
// senders post n distinct deliveries, and returns the deliveries
// acknowledged a second and the median and p99 times to acknowledge.
func benchListen(b *testing.B, path string, n int) (float64, time.Duration, time.Duration) {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var out e2eBuffer
	done := make(chan error, 1)
	go func() {
		done <- listen(ctx, zerolog.New(io.Discard), listenOptions{paths: []string{path}, addr: "127.0.0.1:0"}, &out)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			b.Error(err)
		}
	}()
	var base string
	for deadline := time.Now().Add(30 * time.Second); base == ""; time.Sleep(10 * time.Millisecond) {
		if m := listeningLine.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		} else if time.Now().After(deadline) {
			b.Fatalf("listen did not start: %s", out.String())
		}
	}
	hook := base + "/callrun/bench/" + hookSecret
	tr := &http.Transport{MaxIdleConnsPerHost: benchSenders}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	b.ResetTimer()
	began := time.Now()
	for s := range benchSenders {
		wg.Go(func() {
			for i := s; i < n; i += benchSenders {
				form := url.Values{"event": {"call.ended"}, "phone_number": {fmt.Sprintf("+1415%03d%04d", 200+i/10000%800, i%10000)}, "first_name": {"Ada"},
					"last_name": {"Lovelace"}, "email": {"ada@example.com"}, "status": {"completed"}}.Encode()
				t0 := time.Now()
				resp, err := c.Post(hook, "application/x-www-form-urlencoded", strings.NewReader(form))
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					b.Errorf("delivery %d answered %d", i, resp.StatusCode)
					return
				}
				lat[i] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(began)
	b.StopTimer()
	slices.Sort(lat)
	return float64(n) / elapsed.Seconds(), lat[n/2], lat[n*99/100]
}
