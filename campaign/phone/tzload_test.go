package phone

import (
	"testing"
	"time"
)

// TestLoadZoneOnce: where this machine's tzdata and callrun's own keep
// the same clock, a zone is one location, so that a number's zones are
// not doubled; a zone keeping another clock is told apart (its offset
// differs at some instant from 1970 to 2100), a DST zone's future rule
// included. Every zone callrun carries is compared within a few seconds.
func TestLoadZoneOnce(t *testing.T) {
	start := time.Now()
	for name := range embeddedTZ() {
		e := embeddedZone(name)
		if e == nil {
			t.Fatalf("%s does not load from the embedded tzdata", name)
		}
		if !sameClock(e, e) {
			t.Errorf("%s: sameClock of a zone with itself is false", name)
		}
	}
	t.Logf("%d zones compared with themselves in %s", len(embeddedTZ()), time.Since(start))
	ny, lh, phx := embeddedZone("America/New_York"), embeddedZone("Australia/Lord_Howe"), embeddedZone("America/Phoenix")
	den := embeddedZone("America/Denver")
	for _, pair := range [][2]*time.Location{{ny, lh}, {phx, den}, {den, phx}} {
		if sameClock(pair[0], pair[1]) {
			t.Errorf("sameClock(%s, %s) is true", pair[0], pair[1])
		}
	}
	if z, err := LoadZone("Asia/Almaty"); err != nil || len(z) < 1 {
		t.Errorf("LoadZone(Asia/Almaty) = %v, %v", z, err)
	}
	if _, err := LoadZone("Mars/Olympus_Mons"); err == nil {
		t.Error("LoadZone of a zone nobody knows: no error")
	}
}
