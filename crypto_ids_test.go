// crypto_ids_test.go: tests of crypto.go's identifiers and values: ULID
// parsing, JSON and generation (cryptosystem.md section 5.2), the pairing
// address id (section 6), and the redaction of secretBytes.

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestParseULIDRejectsNonCanonical(t *testing.T) {
	bad := []string{
		"",
		"01K2ENXDTW1P3XAR4J7V7C9D0",            // 25 characters
		"01K2ENXDTW1P3XAR4J7V7C9D0HH",          // 27 characters
		"01k2enxdtw1p3xar4j7v7c9d0h",           // lowercase
		"01K2ENXDTW1P3XAR4J7V7C9D0h",           // one lowercase character
		"01K2ENXDTW1P3XAR4J7V7C9DOH",           // O alias of 0
		"01K2ENXDTW1P3XAR4J7V7C9D0I",           // I alias of 1
		"01K2ENXDTW1P3XAR4J7V7C9D0L",           // L alias of 1
		"01K2ENXDTW1P3XAR4J7V7C9D0U",           // U excluded
		"81K2ENXDTW1P3XAR4J7V7C9D0H",           // overflows 128 bits
		"Z1K2ENXDTW1P3XAR4J7V7C9D0H",           // overflows 128 bits
		"01K2ENXDTW-P3XAR4J7V7C9D0H",           // hyphen
		" 1K2ENXDTW1P3XAR4J7V7C9D0H",           // space
		"01K2ENXDTW1P3XAR4J7V7C9D0\u00c9"[:26], // non-ASCII byte
		"00000000000000000000000000",           // reserved zero
	}
	for _, s := range bad {
		if id, err := parseULID(s); err == nil {
			t.Errorf("parseULID(%q) accepted as %x", s, id[:])
		}
		var u ULID
		if err := u.UnmarshalText([]byte(s)); err == nil {
			t.Errorf("UnmarshalText(%q) accepted", s)
		}
	}
	if _, err := parseULID("01K2ENXDTW1P3XAR4J7V7C9D0H"); err != nil {
		t.Errorf("canonical id rejected: %v", err)
	}
	if _, err := (ULID{}).MarshalText(); err == nil {
		t.Error("zero ULID marshalled")
	}
}

func TestULIDJSON(t *testing.T) {
	var v struct {
		ID ULID `json:"id"`
	}
	if err := json.Unmarshal([]byte(`{"id":"01K2ENXDTW1P3XAR4J7V7C9D0H"}`), &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != `{"id":"01K2ENXDTW1P3XAR4J7V7C9D0H"}` {
		t.Errorf("round trip %s", out)
	}
	if err := json.Unmarshal([]byte(`{"id":"01k2enxdtw1p3xar4j7v7c9d0h"}`), &v); err == nil {
		t.Error("lowercase id accepted in JSON")
	}
}

func TestNewULID(t *testing.T) {
	now := time.UnixMilli(1754986887004)
	r1 := bytes.Repeat([]byte{0xa5}, 10)
	r2 := bytes.Repeat([]byte{0x17}, 10)
	a, err := newULIDFrom(now, bytes.NewReader(r1))
	if err != nil {
		t.Fatal(err)
	}
	// Same millisecond, next draw: the random field is the new draw, not an
	// increment of the previous id.
	b, err := newULIDFrom(now, bytes.NewReader(r2))
	if err != nil {
		t.Fatal(err)
	}
	cryptoAssertHex(t, "id a", a[:], append([]byte{0x01, 0x98, 0x9d, 0x5e, 0xb7, 0x5c}, r1...))
	cryptoAssertHex(t, "id b", b[:], append([]byte{0x01, 0x98, 0x9d, 0x5e, 0xb7, 0x5c}, r2...))

	before := time.Now().UnixMilli()
	ids := make(map[ULID]bool)
	var prev ULID
	for i := 0; i < 64; i++ {
		id, err := newULID()
		if err != nil {
			t.Fatal(err)
		}
		if ids[id] {
			t.Fatal("duplicate id")
		}
		ids[id] = true
		if i > 0 && id.Time() == prev.Time() {
			lo1 := binary.BigEndian.Uint64(prev[8:])
			lo2 := binary.BigEndian.Uint64(id[8:])
			if lo2 == lo1+1 {
				t.Fatal("ids in one millisecond look monotonic")
			}
		}
		prev = id
		if _, err := parseULID(id.String()); err != nil {
			t.Fatalf("generated id %s does not parse: %v", id, err)
		}
	}
	after := time.Now().UnixMilli()
	if ms := prev.Time().UnixMilli(); ms < before || ms > after {
		t.Errorf("timestamp %d outside [%d, %d]", ms, before, after)
	}

	if _, err := newULIDFrom(now, bytes.NewReader(make([]byte, 9))); err == nil {
		t.Error("short random source accepted")
	}
	if _, err := newULIDFrom(time.UnixMilli(0), rand.Reader); err == nil {
		t.Error("epoch timestamp accepted (would allow the reserved zero id)")
	}
	if _, err := newULIDFrom(time.UnixMilli(1<<48), rand.Reader); err == nil {
		t.Error("timestamp beyond 48 bits accepted")
	}
}

func TestPairingAddress(t *testing.T) {
	good := []string{"a", "yup-its-free", "abc-def-ghi-jkl"}
	bad := []string{"", "-", "a-", "-a", "a--b", "A", "Yup-its-free", "yup_its_free", "yup its", " yup", "yup-its-free ", "yup1", "é"}
	for _, a := range good {
		if _, err := pairingAddressID(a); err != nil {
			t.Errorf("%q rejected: %v", a, err)
		}
	}
	for _, a := range bad {
		if id, err := pairingAddressID(a); err == nil {
			t.Errorf("%q accepted as %s", a, id)
		}
	}
	id, _ := pairingAddressID("yup-its-free")
	if len(id) != 32 || strings.ToLower(id) != id {
		t.Errorf("address id form %q", id)
	}
}

func TestSecretBytesRedacted(t *testing.T) {
	psk := secretBytes{0xde, 0xad, 0xbe, 0xef}
	keys := pairedKeys{PSK: psk}
	for _, format := range []string{"%v", "%+v", "%#v", "%s", "%x", "%X", "%q", "%d"} {
		out := fmt.Sprintf(format, keys) + fmt.Sprintf(format, psk) + fmt.Sprintf(format, &keys)
		if strings.Contains(strings.ToLower(out), "dead") || strings.Contains(out, "222") {
			t.Errorf("%s reveals the PSK: %s", format, out)
		}
	}
	// It stays assignable to []byte, so no caller needs a conversion.
	var raw []byte = psk
	if len(raw) != 4 {
		t.Fatal("secretBytes lost its bytes")
	}
}

// TestCanonicalULIDText keeps the relay's routing check equal to the
// pattern it replaced.
func TestCanonicalULIDText(t *testing.T) {
	pattern := regexp.MustCompile(`^[0-7][0-9A-HJKMNP-TV-Z]{25}$`)
	cases := []string{"", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "00000000000000000000000000", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ",
		"81ARZ3NDEKTSV4RRFFQ69G5FAV", "01arz3ndektsv4rrffq69g5fav", "01ARZ3NDEKTSV4RRFFQ69G5FA", "01ARZ3NDEKTSV4RRFFQ69G5FAVV",
		"01ARZ3NDEKTSV4RRFFQ69G5FAI", "01ARZ3NDEKTSV4RRFFQ69G5FAL", "01ARZ3NDEKTSV4RRFFQ69G5FAO", "01ARZ3NDEKTSV4RRFFQ69G5FAU",
		"01ARZ3NDEKTSV4RRFFQ69G5FA-", "01ARZ3NDEKTSV4RRFFQ69G5FA\n"}
	for c := byte(0); c < 128; c++ {
		cases = append(cases, "0"+strings.Repeat(string(c), 25), string(c)+"1ARZ3NDEKTSV4RRFFQ69G5FAV")
	}
	for _, s := range cases {
		if got, want := canonicalULIDText(s), pattern.MatchString(s); got != want {
			t.Errorf("canonicalULIDText(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
