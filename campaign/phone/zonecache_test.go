package phone

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/callrun/callrun/campaign/phone/internal/geostate"
	"github.com/nyaruka/phonenumbers"
)

// TestZoneCacheKey: a North American number's zones depend on no more of
// it than ZoneCache keeps it by. The library's zone data (its format:
// loadIntArrayMap in the library's serialize.go) holds no prefix under
// +1 longer than 1, area code and exchange, and zoneFixes none longer
// than nanpKeyLen.
func TestZoneCacheKey(t *testing.T) {
	dir, _, err := geostate.Library()
	if err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile(filepath.Join(dir, "data", "prefix_to_timezone.xml.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(raw)
	var valuesLen, count uint32
	if err := binary.Read(r, binary.LittleEndian, &valuesLen); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Seek(int64(valuesLen), io.SeekCurrent); err != nil {
		t.Fatal(err)
	}
	if err := binary.Read(r, binary.LittleEndian, &count); err != nil {
		t.Fatal(err)
	}
	prefix, under1, longest := 0, 0, 0
	for range count {
		diff, err := binary.ReadUvarint(r)
		if err != nil {
			t.Fatal(err)
		}
		prefix += int(diff)
		n, err := r.ReadByte()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Seek(2*int64(n), io.SeekCurrent); err != nil {
			t.Fatal(err)
		}
		if p := strconv.Itoa(prefix); p[0] == '1' {
			under1++
			longest = max(longest, len(p))
		}
	}
	if r.Len() != 0 || under1 < 1000 {
		t.Fatalf("read %d prefixes under +1 and left %d bytes: not the format this test reads", under1, r.Len())
	}
	if longest+1 > nanpKeyLen {
		t.Errorf("the library places a prefix of +1 of %d digits: ZoneCache keeps %d", longest, nanpKeyLen-1)
	}
	for _, f := range zoneFixes {
		if strings.HasPrefix(f.prefix, "+1") && len(f.prefix) > nanpKeyLen {
			t.Errorf("zoneFixes has %s, longer than ZoneCache's key", f.prefix)
		}
	}
}

// TestZoneCacheSame: ZoneCache gives Zones' answer for every number,
// those it keeps (one exchange's numbers in turn, the same exchange in
// another country or of another kind) and those it does not, and when
// it starts again full.
func TestZoneCacheSame(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	numbers := []string{"+18675550123", "+14184610000", "+14184620000", "+12507820000", "+12507830000",
		"+18002345678", "+12125550123", "+1212555", "+121255", "+447911123456", "+5581988887777", "+61712345678", ""}
	for range 5000 {
		numbers = append(numbers, "+1"+strconv.Itoa(200+rng.IntN(800))+strconv.Itoa(200+rng.IntN(800))+strconv.Itoa(1000+rng.IntN(9000)))
	}
	kinds := []phonenumbers.PhoneNumberType{phonenumbers.FIXED_LINE_OR_MOBILE, phonenumbers.MOBILE, phonenumbers.TOLL_FREE, phonenumbers.FIXED_LINE}
	names := func(zones []*time.Location) []string {
		var s []string
		for _, z := range zones {
			s = append(s, z.String())
		}
		return s
	}
	var zc ZoneCache
	for round := range 2 {
		for _, e164 := range numbers {
			for _, country := range []string{"US", "CA", "GB", ""} {
				for _, kind := range kinds {
					got, want := names(zc.Zones(e164, country, kind)), names(Zones(e164, country, kind))
					if !slices.Equal(got, want) {
						t.Fatalf("round %d: ZoneCache.Zones(%s, %q, %v) = %v, Zones gives %v", round, e164, country, kind, got, want)
					}
				}
			}
		}
	}
	if n := len(zc.m); n == 0 || n > maxZoneCache {
		t.Errorf("the cache holds %d answers", n)
	}
	// Full, it starts again with a number it does not hold, and answers.
	for k := range uint64(maxZoneCache) {
		zc.m[k<<44] = nil
	}
	if got, want := names(zc.Zones("+18675550123", "CA", phonenumbers.VOIP)), names(Zones("+18675550123", "CA", phonenumbers.VOIP)); !slices.Equal(got, want) || len(zc.m) != 1 {
		t.Errorf("full cache: got %v (%d kept), want %v", got, len(zc.m), want)
	}
}
