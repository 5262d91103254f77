package store

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strings"
	"sync"
)

// hashPrefix begins every keyed hash of a number: the form's version.
const hashPrefix = "h1:"

// NumberHash is the keyed hash that stands for an erased person's E.164
// number wherever the store must still know them (the erased set, and
// later the journal's tombstones and the do-not-call list): "h1:", the
// id of the key ([ErasureKeys]), ":", and the HMAC-SHA-256 under key of
// "callrun number", a zero byte and the number, in unpadded base64url.
// Without the key a number cannot be tested against it by enumerating
// the numbers of a country; with it, it can: the hash is pseudonymous,
// not anonymous.
func NumberHash(key []byte, e164 string) string {
	return hashPrefix + keyID(key) + ":" + base64.RawURLEncoding.EncodeToString(numberMAC(key, e164))
}

// numberMAC is the MAC of [NumberHash].
func numberMAC(key []byte, e164 string) []byte {
	return keyedMAC(key, "callrun number\x00", e164)
}

// keyedMAC is the HMAC-SHA-256 under key of label and then msg. A report
// or erase hashes each of a million numbers under the same key, some
// more than once: the HMACs keyed with a key are kept (macsOf) and reset
// rather than keyed again for each number.
func keyedMAC(key []byte, label, msg string) []byte {
	k := macsOf(key)
	m := k.pool.Get().(hash.Hash)
	m.Reset()
	m.Write([]byte(label))
	m.Write([]byte(msg))
	sum := m.Sum(nil)
	k.pool.Put(m)
	return sum
}

// keyID is the id of an erasure key: the first 8 hex digits of its
// SHA-256, which tells the keys of a store apart without saying them.
func keyID(key []byte) string {
	return macsOf(key).id
}

// keyMACs are the id of an erasure key and the HMACs keyed with it that
// are free for use.
type keyMACs struct {
	id   string
	pool sync.Pool
}

// keysMACs holds the keyMACs of each erasure key the process has used,
// by the key's bytes: a store has one or two keys.
var keysMACs sync.Map

// macsOf returns key's keyMACs, making them on the key's first use.
func macsOf(key []byte) *keyMACs {
	if k, ok := keysMACs.Load(string(key)); ok {
		return k.(*keyMACs)
	}
	sum := sha256.Sum256(key)
	k := &keyMACs{id: hex.EncodeToString(sum[:4])}
	own := bytes.Clone(key)
	k.pool.New = func() any { return hmac.New(sha256.New, own) }
	got, _ := keysMACs.LoadOrStore(string(own), k)
	return got.(*keyMACs)
}

// splitHash returns the key id of a keyed hash and the first 8 bytes of
// its MAC (what the erased set keeps in memory); ok is false when h is
// not a keyed hash as [NumberHash] writes it.
func splitHash(h string) (id string, prefix uint64, ok bool) {
	rest, found := strings.CutPrefix(h, hashPrefix)
	if !found {
		return "", 0, false
	}
	id, mac, found := strings.Cut(rest, ":")
	if !found || len(id) != 8 || len(mac) != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return "", 0, false
	}
	if _, err := hex.DecodeString(id); err != nil || strings.ToLower(id) != id {
		return "", 0, false
	}
	sum, err := base64.RawURLEncoding.Strict().DecodeString(mac)
	if err != nil {
		return "", 0, false
	}
	return id, binary.BigEndian.Uint64(sum), true
}
