package store

import (
	"strings"
	"testing"
)

// TestNumberHashKnownAnswer: the keyed hash of a number matches vectors
// computed outside Go, with the key the 32 bytes 00 01 ... 1f:
//
//	K=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
//	printf 'callrun number\0+14155550100' | openssl dgst -sha256 -mac HMAC \
//	    -macopt hexkey:$K -binary | base64 | tr '+/' '-_' | tr -d '='
//	printf $K | xxd -r -p | sha256sum | cut -c1-8
//
// and the same with Python's hmac.new(bytes(range(32)), b'callrun
// number\x00+14155550100', hashlib.sha256), which gave the same MAC.
func TestNumberHashKnownAnswer(t *testing.T) {
	key := make([]byte, 32)
	for i := range key {
		key[i] = byte(i)
	}
	for _, tc := range []struct{ number, want string }{
		{"+14155550100", "h1:630dcd29:P93vHG3RH6UTbH7m_wTVDWpG1SHlxt8WspBdqC8-nPc"},
		{"+442079460000", "h1:630dcd29:qV06Q1q5zNjZjIMSq71_PM_A2gWIeRe9KfLfh5m7SLg"},
	} {
		got := NumberHash(key, tc.number)
		if got != tc.want {
			t.Errorf("NumberHash(%s) = %s; want %s", tc.number, got, tc.want)
		}
		id, prefix, ok := splitHash(got)
		if !ok || id != "630dcd29" || prefix == 0 {
			t.Errorf("splitHash(%s) = %q, %x, %v", got, id, prefix, ok)
		}
	}
}

// TestSplitHashRefusesOtherForms: only the form NumberHash writes is a
// keyed hash; a number, a version to come or a cut hash is not.
func TestSplitHashRefusesOtherForms(t *testing.T) {
	good := "h1:630dcd29:P93vHG3RH6UTbH7m_wTVDWpG1SHlxt8WspBdqC8-nPc"
	for _, h := range []string{
		"", "+14155550100", "h2:630dcd29:P93vHG3RH6UTbH7m_wTVDWpG1SHlxt8WspBdqC8-nPc",
		good[:len(good)-1], good + "A", strings.Replace(good, "630dcd29", "630DCD29", 1),
		strings.Replace(good, "630dcd29", "630dcd2", 1), strings.Replace(good, "630dcd29", "630dcd2g", 1),
		strings.Replace(good, "P93v", "P93+", 1), strings.Replace(good, "nPc", "nPd", 1), // d leaves bits set past the MAC's end
	} {
		if _, _, ok := splitHash(h); ok {
			t.Errorf("splitHash(%q) took it for a keyed hash", h)
		}
	}
}
