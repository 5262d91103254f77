package store

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestRegisterRecordsEachPlaceOnce, files and PostgreSQL: places
// registered again, and by eight writers at once, are each recorded
// once, in the order first recorded.
func TestRegisterRecordsEachPlaceOnce(t *testing.T) {
	ctx := context.Background()
	t.Setenv("CALLRUN_HOME", filepath.Join(t.TempDir(), "home"))
	stores := map[string]Store{"files": Files{Dir: t.TempDir()}, "postgres": openPostgres(t, pgURL(t), "c", 0, 1)}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) {
			at := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
			run := Place{Campaign: "spring", CampaignFile: "/c/spring.yaml", StateDir: "/c/.callrun/spring", Kind: PlaceRun, Host: "h", At: at}
			listen := run
			listen.Kind, listen.At = PlaceListen, at.Add(time.Minute)
			other := Place{Campaign: "autumn", CampaignFile: "/c/autumn.yaml", StateDir: "/c/.callrun/autumn", Kind: PlaceRun, Host: "h", At: at.Add(2 * time.Minute)}
			var wg sync.WaitGroup
			for range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for _, p := range []Place{run, listen, run, other} {
						if err := s.Register(ctx, p); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			wg.Wait()
			got, err := s.Places(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 3 || !got[0].same(run) || !got[1].same(listen) || !got[2].same(other) || !got[0].At.Equal(at) {
				t.Errorf("places: %+v; want run, listen and autumn once each", got)
			}
		})
	}
}
