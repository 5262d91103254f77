package campaign

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/apiclient/sandbox"
)

// oldTZif is a TZif file (RFC 8536, version 1) of a zone on a fixed
// offset, with no transitions: what a machine's tzdata older than a
// zone's change of clock says of it from then on.
func oldTZif(offsetSeconds int32, abbrev string) []byte {
	var b bytes.Buffer
	b.WriteString("TZif")
	b.WriteByte(0)                                                       // version 1
	b.Write(make([]byte, 15))                                            // unused
	for _, n := range []uint32{0, 0, 0, 0, 1, uint32(len(abbrev) + 1)} { // isut, isstd, leap, time, type, char
		binary.Write(&b, binary.BigEndian, n)
	}
	binary.Write(&b, binary.BigEndian, offsetSeconds)
	b.Write([]byte{0, 0}) // not summer time; abbreviation at 0
	b.WriteString(abbrev)
	b.WriteByte(0)
	return b.Bytes()
}

// TestCalledPersonHoursOnAMachineWithOldTzdata: a machine whose tzdata
// predates Kazakhstan's move of Almaty from UTC+6 to UTC+5 (1 March
// 2024, tzdata 2024a; Ubuntu 22.04 and Debian 11 machines never
// updated keep such a file) says Asia/Almaty is on UTC+6. time.LoadLocation
// reads the machine's file before the tzdata callrun embeds, so at
// 07:30 in Almaty (02:30 UTC) callrun read 08:30 and called an Almaty
// landline. The machine's tzdata is stood in for by ZONEINFO, which
// time.LoadLocation reads first, in a test binary of its own (it reads
// ZONEINFO once per process). The sandbox's ledger counts no call at
// 07:30, and one at 08:30 Almaty time.
func TestCalledPersonHoursOnAMachineWithOldTzdata(t *testing.T) {
	if os.Getenv("CALLRUN_TEST_OLD_TZDATA") == "" {
		runWithOldAlmaty(t, "TestCalledPersonHoursOnAMachineWithOldTzdata")
		return
	}
	mustBeOldAlmaty(t)
	t.Log("the machine's tzdata is the old one: Asia/Almaty on UTC+6")
	const almaty = "+77272501234" // a landline of Almaty's area code 727
	yaml := strings.Replace(dtCampaign(1000, 1, "countries: [KZ]\n"), "unsafe_ignore_called_person_hours: true\n", "", 1)
	for _, tc := range []struct {
		name string
		at   time.Time
		want int
	}{
		// Monday 1 June 2026.
		{"07:30 in Almaty", time.Date(2026, 6, 1, 2, 30, 0, 0, time.UTC), 0},
		{"08:30 in Almaty", time.Date(2026, 6, 1, 3, 30, 0, 0, time.UTC), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &dtClock{now: tc.at}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, yaml, map[string]string{"leads.csv": "Phone,First Name\n" + almaty + ",Aigerim\n"})
			e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
			if n := len(e.srv.Calls()); n != tc.want {
				t.Errorf("%d call(s) in the ledger at %s UTC (%s); want %d", n, tc.at.Format("15:04"), tc.name, tc.want)
			}
		})
	}
}

// TestCampaignHoursOnAMachineWithOldTzdata: the campaign's own hours:
// {timezone: Asia/Almaty, start: "09:00"} were read from the machine's
// tzdata alone, while each called person's zone was read from both the
// machine's and callrun's own (TestCalledPersonHoursOnAMachineWithOldTzdata).
// On a machine whose tzdata keeps Almaty on UTC+6 (before tzdata 2024a),
// at 03:30 UTC the machine read 09:30 and opened the window, where it was
// 08:30 in Almaty: the sandbox's ledger counted 1 call half an hour
// before the campaign's hours. The window is now open only where both
// readings of its zone are: 0 calls at 08:30 Almaty time (the run stops
// at --until, its window still closed), 1 at 09:30. The called person's
// hours are those of an Almaty landline, open at both instants.
func TestCampaignHoursOnAMachineWithOldTzdata(t *testing.T) {
	if os.Getenv("CALLRUN_TEST_OLD_TZDATA") == "" {
		runWithOldAlmaty(t, "TestCampaignHoursOnAMachineWithOldTzdata")
		return
	}
	mustBeOldAlmaty(t)
	const almaty = "+77272501234" // a landline of Almaty's area code 727
	yaml := dtCampaign(1000, 1, "countries: [KZ]\nhours: {timezone: Asia/Almaty, days: [mon, tue, wed, thu, fri], start: \"09:00\", end: \"20:00\"}\n")
	for _, tc := range []struct {
		name string
		at   time.Time
		want int
	}{
		// Monday 1 June 2026.
		{"08:30 in Almaty, 09:30 on the old tzdata", time.Date(2026, 6, 1, 3, 30, 0, 0, time.UTC), 0},
		{"09:30 in Almaty, 10:30 on the old tzdata", time.Date(2026, 6, 1, 4, 30, 0, 0, time.UTC), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &dtClock{now: tc.at}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, yaml, map[string]string{"leads.csv": "Phone,First Name\n" + almaty + ",Aigerim\n"})
			w, err := e.f.Window()
			if err != nil {
				t.Fatal(err)
			}
			if n := len(w.Zones()); n != 2 {
				t.Errorf("hours.timezone Asia/Almaty read in %d zone(s); want 2, the machine's and callrun's", n)
			}
			_, err = e.run(context.Background(), func(o *RunOptions) {
				o.Now, o.Sleep, o.Until = clock.Now, clock.Sleep, tc.at.Add(20*time.Minute)
			})
			if err != nil && !errors.Is(err, ErrOutsideHours) {
				t.Fatalf("Run: %v", err)
			}
			if (err != nil) != (tc.want == 0) {
				t.Errorf("Run: %v, with %d call(s) wanted", err, tc.want)
			}
			if n := len(e.srv.Calls()); n != tc.want {
				t.Errorf("%d call(s) in the ledger at %s UTC (%s); want %d", n, tc.at.Format("15:04"), tc.name, tc.want)
			}
		})
	}
	// plan's and the progress line's next opening is the later reading's.
	w, err := (&File{Hours: &Hours{Timezone: "Asia/Almaty", Days: []string{"mon"}, Start: "09:00", End: "20:00"}}).Window()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.NextOpening(time.Date(2026, 6, 1, 2, 0, 0, 0, time.UTC)), time.Date(2026, 6, 1, 4, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("NextOpening at 02:00 UTC = %v; want %v (09:00 in Almaty on UTC+5)", got.UTC(), want)
	}
	if got, want := w.NextChangeHere(time.Date(2026, 6, 1, 5, 0, 0, 0, time.UTC)), time.Date(2026, 6, 1, 14, 0, 0, 0, time.UTC); !got.Equal(want) {
		t.Errorf("the window closes at %v; want %v (20:00 in Almaty on the old tzdata's UTC+6)", got.UTC(), want)
	}
	t.Log("the machine's tzdata is the old one: Asia/Almaty on UTC+6")
}

// runWithOldAlmaty runs the test name again in a process of its own
// whose tzdata (ZONEINFO, which time.LoadLocation reads first, once per
// process) keeps Asia/Almaty on UTC+6, as tzdata before 2024a did.
func runWithOldAlmaty(t *testing.T, name string) {
	t.Helper()
	runWithTzdata(t, name, "the machine's tzdata is the old one", map[string][]byte{"Asia/Almaty": oldTZif(6*3600, "+06")})
}

// runWithTzdata runs the test name again in a process of its own whose
// tzdata (ZONEINFO) holds zones, and fails unless its output says marker
// (which the test logs once it has checked that it reached its case).
func runWithTzdata(t *testing.T, name, marker string, zones map[string][]byte) {
	t.Helper()
	dir := t.TempDir()
	for zone, data := range zones {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(zone)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, zone), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), "CALLRUN_TEST_OLD_TZDATA=1", "ZONEINFO="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), marker) {
		t.Fatalf("the test with the machine's tzdata in %s: %v\n%s", dir, err, out)
	}
}

// TestStandInZoneOnAMachineWithOtherTzdata: the phone library puts
// Libya's landlines in Europe/Bucharest, a stand-in whose clock Libya's
// Africa/Tripoli (UTC+2 all year) does not keep, so callrun adds Tripoli
// (phone's withOwnZones). Whether a zone is a stand-in was judged from
// the machine's tzdata alone: on a machine whose tzdata keeps both zones
// on one clock (here both on UTC+3, made up for the test, since no real
// tzdata does) Bucharest was taken for Libya's own clock and Tripoli was
// not added. In July callrun's tzdata has Bucharest on UTC+3 too, so at
// 05:30 UTC, 07:30 in Tripoli, every zone of the number said 08:30: the
// ledger counted 1 call. A zone is now a stand-in unless both tzdatas
// say it is not: 0 calls at 07:30 Tripoli time, 1 at 08:30.
func TestStandInZoneOnAMachineWithOtherTzdata(t *testing.T) {
	const marker = "the machine's tzdata is the made-up one"
	if os.Getenv("CALLRUN_TEST_OLD_TZDATA") == "" {
		runWithTzdata(t, "TestStandInZoneOnAMachineWithOtherTzdata", marker, map[string][]byte{
			"Europe/Bucharest": oldTZif(3*3600, "+03"),
			"Africa/Tripoli":   oldTZif(3*3600, "+03"),
		})
		return
	}
	for _, z := range []string{"Europe/Bucharest", "Africa/Tripoli"} {
		if l, err := time.LoadLocation(z); err != nil {
			t.Fatal(err)
		} else if _, off := time.Date(2026, 7, 15, 0, 0, 0, 0, time.UTC).In(l).Zone(); off != 3*3600 {
			t.Fatalf("time.LoadLocation(%s) is on %ds, not the made-up UTC+3: the test did not reach its case", z, off)
		}
	}
	const tripoli = "+218213334444" // a landline of Tripoli's area code 21
	yaml := strings.Replace(dtCampaign(1000, 1, "countries: [LY]\n"), "unsafe_ignore_called_person_hours: true\n", "", 1)
	for _, tc := range []struct {
		name string
		at   time.Time
		want int
	}{
		// Wednesday 15 July 2026.
		{"07:30 in Tripoli", time.Date(2026, 7, 15, 5, 30, 0, 0, time.UTC), 0},
		{"08:30 in Tripoli", time.Date(2026, 7, 15, 6, 30, 0, 0, time.UTC), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &dtClock{now: tc.at}
			e := newDtEnv(t, sandbox.Options{Now: clock.Now}, yaml, map[string]string{"leads.csv": "Phone,First Name\n" + tripoli + ",Salma\n"})
			e.mustRun(func(o *RunOptions) { o.Now, o.Sleep = clock.Now, clock.Sleep })
			if n := len(e.srv.Calls()); n != tc.want {
				t.Errorf("%d call(s) in the ledger at %s UTC (%s); want %d", n, tc.at.Format("15:04"), tc.name, tc.want)
			}
		})
	}
	t.Log(marker)
}

// mustBeOldAlmaty fails the test unless this process's tzdata is the
// old one runWithOldAlmaty gives it.
func mustBeOldAlmaty(t *testing.T) {
	t.Helper()
	if l, err := time.LoadLocation("Asia/Almaty"); err != nil {
		t.Fatal(err)
	} else if _, off := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).In(l).Zone(); off != 6*3600 {
		t.Fatalf("time.LoadLocation(Asia/Almaty) is on %ds, not the old tzdata's UTC+6: the test did not reach its case", off)
	}
}
