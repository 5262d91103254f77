package phone

import (
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"testing"

	"github.com/callrun/callrun/campaign/phone/internal/geostate"
)

// TestStateTableLibrary: the table was made from the phone library this
// module builds with. After `go get -u` of the library it fails until
// `go generate ./campaign/phone` makes the table again.
func TestStateTableLibrary(t *testing.T) {
	b, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/nyaruka/phonenumbers\s+(\S+)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("go.mod requires no github.com/nyaruka/phonenumbers")
	}
	if got := string(m[1]); got != stateTableLibrary {
		t.Errorf("statetable.go was made from phonenumbers %s, go.mod requires %s: run go generate ./campaign/phone", stateTableLibrary, got)
	}
}

// TestUSStateCodes: the codes USState may return are the states and DC,
// as the old function named them.
func TestUSStateCodes(t *testing.T) {
	if got, want := USStateCodes(), geostate.Codes(); !slices.Equal(got, want) || len(got) != 51 {
		t.Errorf("USStateCodes() = %v, want the 51 of %v", got, want)
	}
}

// usStateSame fails t unless USState gives e164 the library's answer.
func usStateSame(t *testing.T, e164 string) bool {
	t.Helper()
	if got, want := USState(e164), geostate.State(e164); got != want {
		t.Errorf("USState(%s) = %q, the library's geocoding %q", e164, got, want)
		return false
	}
	return true
}

// TestUSStateSample: the table gives the library's answer for known
// numbers, numbers that are not ten digits after +1, and 20,000 numbers
// of keys and line numbers drawn at random.
func TestUSStateSample(t *testing.T) {
	for e164, want := range map[string]string{
		"+15025550123": "KY", "+14155550123": "CA", "+12125550123": "NY", "+12025550123": "DC",
		"+18005550123": "", "+15002345678": "", "+14165550163": "", "+17875550123": "", "+33123456789": "",
		"+1212555012": "", "+121255501234": "", "+1212": "", "+12125550l23": "",
	} {
		if got := USState(e164); got != want {
			t.Errorf("USState(%s) = %q, want %q", e164, got, want)
		}
		usStateSame(t, e164)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20_000 {
		npa := 200 + r.IntN(800)
		if !usStateSame(t, fmt.Sprintf("+1%03d%03d%04d", npa, r.IntN(1000), r.IntN(10_000))) {
			break
		}
	}
}

// TestUSStateEveryKey: the table gives the library's answer for every
// key, NPA 000-999 by NXX 000-999, each with a line number drawn at
// random. About 30 s of CPU; skipped under -short and -race.
func TestUSStateEveryKey(t *testing.T) {
	if testing.Short() {
		t.Skip("a million numbers geocoded by the library")
	}
	if raceDetector {
		// One goroutine: nothing for the detector to find, and the
		// library's regular expressions under it took 20 minutes.
		t.Skip("a million numbers geocoded by the library, under -race")
	}
	r := rand.New(rand.NewPCG(3, 4))
	bad := 0
	for key := range 1_000_000 {
		if !usStateSame(t, fmt.Sprintf("+1%06d%04d", key, r.IntN(10_000))) {
			if bad++; bad == 10 {
				t.Fatal("and more")
			}
		}
	}
}

// TestStateTableRegionByKey: whether a number is the US's depends on
// its NPA-NXX alone, so one number stands for its key in the table. On
// the automaton of the metadata (validatorFor, which gives
// GetRegionCodeForNumber's answer for a national number), for each of
// the 1,000,000 keys, every one of its 10,000 ten-digit national numbers
// is the US's or none is: 10,000,000,000 numbers in all.
func TestStateTableRegionByKey(t *testing.T) {
	v := loadTables().validatorFor(1)
	if v == nil || v.dfa.class == nil {
		t.Fatal("no automaton for +1")
	}
	us := slices.Index(v.regions, "US")
	if us < 0 {
		t.Fatal("+1 has no US")
	}
	d := v.dfa
	isUS := func(st int32, n int) bool {
		c := d.class[int(st)*(dfaMaxLen+1)+n]
		return c != 0 && int(c>>4)-1 == us
	}
	// usAfter[st] is, for the numbers of ten digits whose first six lead
	// to st: 1 all the US's, 2 none, 3 some.
	const digits = 4
	type memoKey struct {
		st   int32
		left int
	}
	memo := map[memoKey]uint8{}
	var reach func(st int32, left int) uint8
	reach = func(st int32, left int) uint8 {
		if left == 0 || d.stay[st] {
			if isUS(st, 10) {
				return 1
			}
			return 2
		}
		k := memoKey{st, left}
		if r, ok := memo[k]; ok {
			return r
		}
		var r uint8
		for dg := range 10 {
			r |= reach(d.next[int(st)*10+dg], left-1)
		}
		memo[k] = r
		return r
	}
	mixed := 0
	for key := range 1_000_000 {
		s := fmt.Sprintf("%06d", key)
		st := int32(0)
		for i := 0; i < len(s) && !d.stay[st]; i++ {
			st = d.next[int(st)*10+int(s[i]-'0')]
		}
		if reach(st, digits) == 3 {
			if mixed++; mixed <= 10 {
				t.Errorf("NPA-NXX %s: some of its numbers are the US's, some not", s)
			}
		}
	}
	if mixed > 0 {
		t.Errorf("%d keys whose numbers are partly the US's", mixed)
	}
}
