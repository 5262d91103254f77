package run

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/callrun/callrun/campaign"
	"github.com/callrun/callrun/report/store"
)

// recordPlace records on st where campaign f keeps its state, as kind
// (store.PlaceRun, PlaceRehearsal or PlaceListen): for `callrun erase`,
// which finds there the other campaigns that may hold a person. A run
// or listen that cannot record it stops before it keeps anything.
func recordPlace(ctx context.Context, st store.Store, f *campaign.File, kind string) error {
	file, err := filepath.Abs(f.Source)
	if err != nil {
		return err
	}
	dir, err := filepath.Abs(st.ReportDir())
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	return st.Register(ctx, store.Place{Campaign: f.Name, CampaignFile: file, StateDir: dir, Kind: kind, Host: host, At: time.Now().UTC()})
}
