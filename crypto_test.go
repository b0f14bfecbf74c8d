// crypto_test.go: round trips of crypto.go against an HPKE receiver playing
// the device, and fail-closed checks (cryptosystem.md sections 7-9: initial
// pairing, the paired request/response/completion exchange, PSK rotation).

package main

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"golang.org/x/crypto/chacha20poly1305"
)

// testDevice is an HPKE receiver standing in for the device.
type testDevice struct {
	id ULID
	pk []byte
	sk kem.PrivateKey
}

func newTestDevice(t *testing.T) *testDevice {
	t.Helper()
	pub, priv, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := pub.MarshalBinary()
	id, err := newULID()
	if err != nil {
		t.Fatal(err)
	}
	return &testDevice{id: id, pk: pk, sk: priv}
}

func testDeviceOpenPairing(t *testing.T, skRaw []byte, deviceID, clientID ULID, done *pairingCompletion) (secret, metadata, psk []byte) {
	t.Helper()
	sk, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().UnmarshalBinaryPrivateKey(skRaw)
	if err != nil {
		t.Fatal(err)
	}
	return testOpenPairingWith(t, sk, deviceID, clientID, done)
}

func testOpenPairingWith(t *testing.T, sk kem.PrivateKey, deviceID, clientID ULID, done *pairingCompletion) (secret, metadata, psk []byte) {
	t.Helper()
	recv, err := cryptoSuite.NewReceiver(sk, cryptoHPKEInfo(deviceID, clientID))
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := recv.Setup(done.Enc)
	if err != nil {
		t.Fatal(err)
	}
	if secret, err = ctx.Open(done.SecretCiphertext, nil); err != nil {
		t.Fatal("device cannot open record 0:", err)
	}
	if metadata, err = ctx.Open(done.MetadataCiphertext, nil); err != nil {
		t.Fatal("device cannot open record 1:", err)
	}
	return secret, metadata, ctx.Export([]byte("agentknock-v1 psk"), 32)
}

func TestPairingRoundTrip(t *testing.T) {
	dev := newTestDevice(t)
	attempt, err := newPairingAttempt()
	if err != nil {
		t.Fatal(err)
	}
	deviceRandom := make([]byte, 32)
	rand.Read(deviceRandom)
	metadata := []byte(`{"platform":"linux"}`)
	done, err := attempt.Complete(dev.id, dev.pk, deviceRandom, metadata)
	if err != nil {
		t.Fatal(err)
	}
	secret, gotMeta, psk := testOpenPairingWith(t, dev.sk, dev.id, attempt.ClientID, done)
	if len(secret) != 32 {
		t.Fatalf("client secret length %d", len(secret))
	}
	// The device's commitment check (constant time on its side).
	if subtle.ConstantTimeCompare(pairingCommitment(secret), attempt.Commitment()) != 1 {
		t.Error("revealed client secret does not match the commitment")
	}
	if !bytes.Equal(gotMeta, metadata) {
		t.Errorf("metadata %q", gotMeta)
	}
	if !bytes.Equal(psk, done.PSK) {
		t.Error("device and client PSK differ")
	}
	deviceSAS := formatPairingSAS(pairingSASValue(pairingSASBytes(secret, deviceRandom, dev.id, attempt.ClientID, dev.pk)))
	if deviceSAS != done.SAS {
		t.Errorf("SAS differs: device %q client %q", deviceSAS, done.SAS)
	}
	if len(done.SAS) != 14 || done.SAS[4] != ' ' || done.SAS[9] != ' ' {
		t.Errorf("SAS shape %q", done.SAS)
	}
	if _, err := attempt.Complete(dev.id, dev.pk, deviceRandom, metadata); !errors.Is(err, errPairingCompleted) {
		t.Errorf("second Complete: %v, want errPairingCompleted", err)
	}
}

// A response that fails validation before HPKE setup must not fix the
// attempt: a later valid response can still complete it.
func TestPairingFailedResponseDoesNotFixAttempt(t *testing.T) {
	dev := newTestDevice(t)
	attempt, err := newPairingAttempt()
	if err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 32)
	if _, err := attempt.Complete(dev.id, make([]byte, 32), random, nil); err == nil {
		t.Fatal("all-zero (low-order) device key accepted")
	}
	if _, err := attempt.Complete(dev.id, dev.pk[:31], random, nil); !errors.Is(err, errCryptoLength) {
		t.Fatalf("short device key: %v", err)
	}
	if _, err := attempt.Complete(dev.id, dev.pk, random, nil); err != nil {
		t.Fatalf("valid response after invalid ones: %v", err)
	}
}

func TestPairingRejectsBadInputs(t *testing.T) {
	dev := newTestDevice(t)
	ok := make([]byte, 32)
	cases := []struct {
		name     string
		deviceID ULID
		key      []byte
		random   []byte
		want     error
	}{
		{"device key 31 bytes", dev.id, dev.pk[:31], ok, errCryptoLength},
		{"device key 33 bytes", dev.id, append(bytes.Clone(dev.pk), 0), ok, errCryptoLength},
		{"device key empty", dev.id, nil, ok, errCryptoLength},
		{"device random 31 bytes", dev.id, dev.pk, ok[:31], errCryptoLength},
		{"device random 33 bytes", dev.id, dev.pk, append(bytes.Clone(ok), 1), errCryptoLength},
		{"zero device id", ULID{}, dev.pk, ok, errCryptoZeroID},
		{"low-order device key", dev.id, make([]byte, 32), ok, errCryptoDeviceKey},
		{"order-one point", dev.id, append([]byte{1}, make([]byte, 31)...), ok, errCryptoDeviceKey},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			attempt, err := newPairingAttempt()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := attempt.Complete(c.deviceID, c.key, c.random, nil); !errors.Is(err, c.want) {
				t.Errorf("got %v, want %v", err, c.want)
			}
		})
	}
}

// testDeviceOpenRequest is the device side of section 8.1/8.2: open record 0,
// derive the response secret, and encrypt a response.
func testDeviceOpenRequest(t *testing.T, dev *testDevice, clientID ULID, psk []byte, x *pairedExchange) (hpke.Opener, []byte) {
	t.Helper()
	recv, err := cryptoSuite.NewReceiver(dev.sk, cryptoHPKEInfo(dev.id, x.RequestID()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := recv.SetupPSK(x.Enc(), psk, clientID[:])
	if err != nil {
		t.Fatal(err)
	}
	pt, err := ctx.Open(x.RequestCiphertext(), nil)
	if err != nil {
		return nil, nil
	}
	return ctx, pt
}

func testDeviceSealResponse(t *testing.T, ctx hpke.Opener, enc, plaintext []byte) (random, ct []byte) {
	t.Helper()
	secret := ctx.Export([]byte("agentknock-v1 response"), 32)
	random = make([]byte, 32)
	rand.Read(random)
	salt := append(bytes.Clone(enc), random...)
	key := hkdfSHA256(salt, secret, []byte("key"), 32)
	nonce := hkdfSHA256(salt, secret, []byte("nonce"), 12)
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return random, aead.Seal(nil, nonce, plaintext, nil)
}

func testPairedKeysFor(t *testing.T, dev *testDevice) pairedKeys {
	t.Helper()
	clientID, err := newULID()
	if err != nil {
		t.Fatal(err)
	}
	psk := make([]byte, 32)
	rand.Read(psk)
	return pairedKeys{DeviceID: dev.id, DeviceKey: dev.pk, ClientID: clientID, PSK: psk}
}

func TestPairedExchangeRoundTrip(t *testing.T) {
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	requestID, _ := newULID()
	x, err := sealPairedRequest(keys, requestID, []byte(`{"method":"SecretList"}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx, pt := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x)
	if string(pt) != `{"method":"SecretList"}` {
		t.Fatalf("device opened %q", pt)
	}
	random, ct := testDeviceSealResponse(t, ctx, x.Enc(), []byte(`{"secrets":{}}`))
	got, err := x.OpenResponse(random, ct)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"secrets":{}}` {
		t.Errorf("client opened %q", got)
	}
	cct, err := x.SealCompletion([]byte(`{"done":true}`))
	if err != nil {
		t.Fatal(err)
	}
	// The completion is record 1 of the request context.
	cpt, err := ctx.Open(cct, nil)
	if err != nil {
		t.Fatal("device cannot open completion as record 1:", err)
	}
	if string(cpt) != `{"done":true}` {
		t.Errorf("completion %q", cpt)
	}

	// The binding is part of the context: another PSK, client id or request
	// id does not open the request.
	other := keys
	other.PSK = bytes.Clone(keys.PSK)
	other.PSK[0] ^= 1
	if _, pt := testDeviceOpenRequest(t, dev, keys.ClientID, other.PSK, x); pt != nil {
		t.Error("request opened under a different PSK")
	}
	otherClient, _ := newULID()
	if _, pt := testDeviceOpenRequest(t, dev, otherClient, keys.PSK, x); pt != nil {
		t.Error("request opened under a different psk_id")
	}
}

// Two exchanges under the same binding have independent contexts, so a
// response for one never opens in the other.
func TestPairedResponseIsBoundToItsExchange(t *testing.T) {
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	id1, _ := newULID()
	id2, _ := newULID()
	x1, err := sealPairedRequest(keys, id1, []byte("one"))
	if err != nil {
		t.Fatal(err)
	}
	x2, err := sealPairedRequest(keys, id2, []byte("two"))
	if err != nil {
		t.Fatal(err)
	}
	ctx1, _ := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x1)
	random, ct := testDeviceSealResponse(t, ctx1, x1.Enc(), []byte("answer"))
	if _, err := x2.OpenResponse(random, ct); !errors.Is(err, errCryptoOpen) {
		t.Errorf("response of exchange 1 opened in exchange 2: %v", err)
	}
	if _, err := x1.OpenResponse(random, ct); err != nil {
		t.Errorf("own response rejected: %v", err)
	}
}

func TestOpenResponseRejectsTampering(t *testing.T) {
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	requestID, _ := newULID()
	x, err := sealPairedRequest(keys, requestID, []byte("req"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, _ := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x)
	random, ct := testDeviceSealResponse(t, ctx, x.Enc(), []byte(`{"result":"APPROVED"}`))

	for i := 0; i < len(ct)*8; i++ {
		bad := bytes.Clone(ct)
		bad[i/8] ^= 1 << (i % 8)
		if pt, err := x.OpenResponse(random, bad); !errors.Is(err, errCryptoOpen) || pt != nil {
			t.Fatalf("ciphertext bit %d flipped: %v", i, err)
		}
	}
	for i := 0; i < len(random)*8; i++ {
		bad := bytes.Clone(random)
		bad[i/8] ^= 1 << (i % 8)
		if _, err := x.OpenResponse(bad, ct); !errors.Is(err, errCryptoOpen) {
			t.Fatalf("response random bit %d flipped: %v", i, err)
		}
	}
	lengths := []struct {
		name       string
		random, ct []byte
	}{
		{"random 31 bytes", random[:31], ct},
		{"random 33 bytes", append(bytes.Clone(random), 0), ct},
		{"random empty", nil, ct},
		{"ciphertext shorter than the tag", random, ct[:15]},
		{"ciphertext empty", random, nil},
	}
	for _, c := range lengths {
		if _, err := x.OpenResponse(c.random, c.ct); !errors.Is(err, errCryptoLength) {
			t.Errorf("%s: %v, want errCryptoLength", c.name, err)
		}
	}
	if _, err := x.OpenResponse(random, ct[:len(ct)-1]); !errors.Is(err, errCryptoOpen) {
		t.Errorf("truncated tag: %v", err)
	}
	if _, err := x.OpenResponse(random, append(bytes.Clone(ct), 0)); !errors.Is(err, errCryptoOpen) {
		t.Errorf("extended ciphertext: %v", err)
	}
	// The untouched response still opens: failures had no side effect.
	if _, err := x.OpenResponse(random, ct); err != nil {
		t.Errorf("genuine response after failures: %v", err)
	}
}

func TestPairedRejectsBadKeys(t *testing.T) {
	dev := newTestDevice(t)
	good := testPairedKeysFor(t, dev)
	requestID, _ := newULID()
	mutate := func(f func(k *pairedKeys)) pairedKeys {
		k := good
		k.DeviceKey = bytes.Clone(good.DeviceKey)
		k.PSK = bytes.Clone(good.PSK)
		f(&k)
		return k
	}
	cases := []struct {
		name string
		keys pairedKeys
		id   ULID
		want error
	}{
		{"psk 31 bytes", mutate(func(k *pairedKeys) { k.PSK = k.PSK[:31] }), requestID, errCryptoLength},
		{"psk 33 bytes", mutate(func(k *pairedKeys) { k.PSK = append(k.PSK, 0) }), requestID, errCryptoLength},
		{"device key 31 bytes", mutate(func(k *pairedKeys) { k.DeviceKey = k.DeviceKey[:31] }), requestID, errCryptoLength},
		{"low-order device key", mutate(func(k *pairedKeys) { k.DeviceKey = make([]byte, 32) }), requestID, errCryptoDeviceKey},
		{"zero device id", mutate(func(k *pairedKeys) { k.DeviceID = ULID{} }), requestID, errCryptoZeroID},
		{"zero client id", mutate(func(k *pairedKeys) { k.ClientID = ULID{} }), requestID, errCryptoZeroID},
		{"reserved zero request id", good, ULID{}, errCryptoZeroID},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := sealPairedRequest(c.keys, c.id, []byte("x")); !errors.Is(err, c.want) {
				t.Errorf("sealPairedRequest: %v, want %v", err, c.want)
			}
			if c.id.IsZero() {
				return
			}
			if _, err := rotatePairingPSK(c.keys); !errors.Is(err, c.want) {
				t.Errorf("rotatePairingPSK: %v, want %v", err, c.want)
			}
		})
	}
}

// The device side of section 9.2 step 3: derive the candidate from the
// rotation enc and the current PSK; a request sealed under the new PSK opens
// only under that candidate.
func TestRotationRoundTrip(t *testing.T) {
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	rot, err := rotatePairingPSK(keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(rot.Enc) != 32 || len(rot.NewPSK) != 32 || bytes.Equal(rot.NewPSK, keys.PSK) {
		t.Fatal("rotation produced unusable values")
	}
	recv, err := cryptoSuite.NewReceiver(dev.sk, cryptoHPKEInfo(dev.id, ULID{}))
	if err != nil {
		t.Fatal(err)
	}
	rctx, err := recv.SetupPSK(rot.Enc, keys.PSK, keys.ClientID[:])
	if err != nil {
		t.Fatal(err)
	}
	candidate := rctx.Export([]byte("agentknock-v1 psk"), 32)
	if !bytes.Equal(candidate, rot.NewPSK) {
		t.Fatal("device candidate differs from the client's new PSK")
	}
	rotated := keys
	rotated.PSK = rot.NewPSK
	requestID, _ := newULID()
	x, err := sealPairedRequest(rotated, requestID, []byte("after rotation"))
	if err != nil {
		t.Fatal(err)
	}
	if _, pt := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x); pt != nil {
		t.Error("request under the new PSK opened under the old one")
	}
	if _, pt := testDeviceOpenRequest(t, dev, keys.ClientID, candidate, x); string(pt) != "after rotation" {
		t.Error("request under the new PSK does not open under the candidate")
	}
	// Fresh randomness per rotation.
	again, err := rotatePairingPSK(keys)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(again.Enc, rot.Enc) || bytes.Equal(again.NewPSK, rot.NewPSK) {
		t.Error("two rotations produced the same values")
	}
}

// Tests of crypto.go's identifiers and values: ULID
// parsing, JSON and generation (cryptosystem.md section 5.2), the pairing
// address id (section 6), and the redaction of secretBytes.

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

// Known answers for crypto.go (cryptosystem.md
// section 13, testdata/crypto-vectors-v1.json): address id, identifiers,
// commitment and SAS, initial pairing, paired exchange and PSK rotation.

type cryptoVectorFile struct {
	Address struct {
		Address   string `json:"address"`
		AddressID string `json:"address_id"`
	} `json:"address"`
	Identifiers []struct {
		Hex    string `json:"hex"`
		Text   string `json:"text"`
		UnixMS int64  `json:"unix_ms"`
	} `json:"identifiers"`
	Pairing  map[string]any    `json:"pairing"`
	Paired   map[string]string `json:"paired"`
	Rotation map[string]string `json:"rotation"`
}

func loadCryptoVectors(t *testing.T) *cryptoVectorFile {
	t.Helper()
	data, err := os.ReadFile("testdata/crypto-vectors-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	var v cryptoVectorFile
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

func cryptoVecHex(t *testing.T, m map[string]any, key string) []byte {
	t.Helper()
	s, ok := m[key].(string)
	if !ok {
		t.Fatalf("vector %q missing", key)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("vector %q: %v", key, err)
	}
	return b
}

func cryptoVecHexS(t *testing.T, m map[string]string, key string) []byte {
	t.Helper()
	b, err := hex.DecodeString(m[key])
	if err != nil || len(b) == 0 {
		t.Fatalf("vector %q: bad hex", key)
	}
	return b
}

func cryptoVecULID(t *testing.T, raw []byte) ULID {
	t.Helper()
	if len(raw) != 16 {
		t.Fatalf("id length %d", len(raw))
	}
	return ULID(raw)
}

func cryptoAssertHex(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s = %x, want %x", what, got, want)
	}
}

// vectorPairing returns the section 13.2/13.3 inputs.
func vectorPairing(t *testing.T, v *cryptoVectorFile) (deviceID, clientID ULID, pkD, skD, clientSecret, deviceRandom []byte) {
	p := v.Pairing
	return cryptoVecULID(t, cryptoVecHex(t, p, "device_id")), cryptoVecULID(t, cryptoVecHex(t, p, "client_id")),
		cryptoVecHex(t, p, "device_public_key"), cryptoVecHex(t, p, "device_private_key"),
		cryptoVecHex(t, p, "client_secret"), cryptoVecHex(t, p, "device_random")
}

func vectorPairedKeys(t *testing.T, v *cryptoVectorFile) pairedKeys {
	deviceID, clientID, pkD, _, _, _ := vectorPairing(t, v)
	return pairedKeys{DeviceID: deviceID, DeviceKey: pkD, ClientID: clientID, PSK: cryptoVecHex(t, v.Pairing, "client_psk")}
}

func TestCryptoVectorAddress(t *testing.T) {
	v := loadCryptoVectors(t)
	got, err := pairingAddressID(v.Address.Address)
	if err != nil {
		t.Fatal(err)
	}
	if got != v.Address.AddressID {
		t.Errorf("address id = %s, want %s", got, v.Address.AddressID)
	}
}

func TestCryptoVectorIdentifiers(t *testing.T) {
	v := loadCryptoVectors(t)
	if len(v.Identifiers) == 0 {
		t.Fatal("no identifier vectors")
	}
	for _, c := range v.Identifiers {
		raw, _ := hex.DecodeString(c.Hex)
		id := cryptoVecULID(t, raw)
		if got := id.String(); got != c.Text {
			t.Errorf("%s: text %s, want %s", c.Hex, got, c.Text)
		}
		parsed, err := parseULID(c.Text)
		if err != nil {
			t.Errorf("%s: %v", c.Text, err)
		} else if parsed != id {
			t.Errorf("%s: parsed %x, want %s", c.Text, parsed[:], c.Hex)
		}
		if c.UnixMS != 0 && id.Time().UnixMilli() != c.UnixMS {
			t.Errorf("%s: time %d, want %d", c.Text, id.Time().UnixMilli(), c.UnixMS)
		}
	}
}

func TestCryptoVectorCommitmentAndSAS(t *testing.T) {
	v := loadCryptoVectors(t)
	deviceID, clientID, pkD, _, clientSecret, deviceRandom := vectorPairing(t, v)
	cryptoAssertHex(t, "version_info", cryptoVersionInfo(), cryptoVecHex(t, v.Pairing, "version_info"))
	cryptoAssertHex(t, "pairing info", cryptoHPKEInfo(deviceID, clientID), cryptoVecHex(t, v.Pairing, "hpke_info"))
	cryptoAssertHex(t, "commitment", pairingCommitment(clientSecret), cryptoVecHex(t, v.Pairing, "commitment"))

	sasBytes := pairingSASBytes(clientSecret, deviceRandom, deviceID, clientID, pkD)
	cryptoAssertHex(t, "sas_bytes", sasBytes, cryptoVecHex(t, v.Pairing, "sas_bytes"))
	wantInt := uint64(v.Pairing["sas_integer"].(float64))
	if got := pairingSASValue(sasBytes); got != wantInt {
		t.Errorf("sas integer %d, want %d", got, wantInt)
	}
	if got := formatPairingSAS(wantInt); got != v.Pairing["sas_display"] {
		t.Errorf("sas display %q, want %q", got, v.Pairing["sas_display"])
	}
	for _, c := range []struct {
		v    uint64
		want string
	}{{0, "0000 0000 0000"}, {999_999_999_999, "9999 9999 9999"}, {123_456_789_012, "1234 5678 9012"}} {
		if got := formatPairingSAS(c.v); got != c.want {
			t.Errorf("formatPairingSAS(%d) = %q, want %q", c.v, got, c.want)
		}
	}
	// The modulus is 10^12, not a truncation of the decimal string.
	for _, c := range []struct{ in, want uint64 }{
		{999_999_999_999, 999_999_999_999},
		{1_000_000_000_005, 5},
		{1<<64 - 1, 709_551_615 + 73_000_000_000},
	} {
		b := binary.BigEndian.AppendUint64(nil, c.in)
		if got := pairingSASValue(b); got != c.want {
			t.Errorf("sas value of %d = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestCryptoVectorPairing(t *testing.T) {
	v := loadCryptoVectors(t)
	deviceID, clientID, pkD, skD, clientSecret, deviceRandom := vectorPairing(t, v)
	attempt := pairingAttemptWith(clientID, [32]byte(clientSecret))
	cryptoAssertHex(t, "attempt commitment", attempt.Commitment(), cryptoVecHex(t, v.Pairing, "commitment"))

	metadata := []byte(v.Pairing["application_plaintext_utf8"].(string))
	done, err := attempt.complete(bytes.NewReader(cryptoVecHex(t, v.Pairing, "ikmE")), deviceID, pkD, deviceRandom, metadata)
	if err != nil {
		t.Fatal(err)
	}
	cryptoAssertHex(t, "enc", done.Enc, cryptoVecHex(t, v.Pairing, "enc"))
	cryptoAssertHex(t, "secret_ciphertext", done.SecretCiphertext, cryptoVecHex(t, v.Pairing, "secret_ciphertext"))
	cryptoAssertHex(t, "application_ciphertext", done.MetadataCiphertext, cryptoVecHex(t, v.Pairing, "application_ciphertext"))
	cryptoAssertHex(t, "client_psk", done.PSK, cryptoVecHex(t, v.Pairing, "client_psk"))
	if done.SAS != v.Pairing["sas_display"] {
		t.Errorf("SAS %q, want %q", done.SAS, v.Pairing["sas_display"])
	}
	if done.DeviceID != deviceID || done.ClientID != clientID || !bytes.Equal(done.DeviceKey, pkD) {
		t.Error("completion does not carry the pairing identities")
	}

	// The device side, with the vector private key, opens both records.
	gotSecret, gotMeta, psk := testDeviceOpenPairing(t, skD, deviceID, clientID, done)
	cryptoAssertHex(t, "device-opened client_secret", gotSecret, clientSecret)
	cryptoAssertHex(t, "device-opened metadata", gotMeta, metadata)
	cryptoAssertHex(t, "device-exported psk", psk, cryptoVecHex(t, v.Pairing, "client_psk"))
}

func TestCryptoVectorPairedExchange(t *testing.T) {
	v := loadCryptoVectors(t)
	keys := vectorPairedKeys(t, v)
	p := v.Paired
	requestID := cryptoVecULID(t, cryptoVecHexS(t, p, "request_id"))
	cryptoAssertHex(t, "paired info", cryptoHPKEInfo(keys.DeviceID, requestID), cryptoVecHexS(t, p, "hpke_info"))
	cryptoAssertHex(t, "psk_id", keys.ClientID[:], cryptoVecHexS(t, p, "psk_id"))

	x, err := sealPairedRequestFrom(bytes.NewReader(cryptoVecHexS(t, p, "ikmE")), keys, requestID, []byte(p["request_plaintext_utf8"]))
	if err != nil {
		t.Fatal(err)
	}
	if x.RequestID() != requestID {
		t.Error("request id not retained")
	}
	cryptoAssertHex(t, "enc", x.Enc(), cryptoVecHexS(t, p, "enc"))
	cryptoAssertHex(t, "request_ciphertext", x.RequestCiphertext(), cryptoVecHexS(t, p, "request_ciphertext"))
	cryptoAssertHex(t, "response_secret", x.responseSecret, cryptoVecHexS(t, p, "response_secret"))

	key, nonce := pairedResponseKeys(x.responseSecret, x.enc, cryptoVecHexS(t, p, "response_random"))
	cryptoAssertHex(t, "response_key", key, cryptoVecHexS(t, p, "response_key"))
	cryptoAssertHex(t, "response_aead_nonce", nonce, cryptoVecHexS(t, p, "response_aead_nonce"))

	pt, err := x.OpenResponse(cryptoVecHexS(t, p, "response_random"), cryptoVecHexS(t, p, "response_ciphertext"))
	if err != nil {
		t.Fatal(err)
	}
	if string(pt) != p["response_plaintext_utf8"] {
		t.Errorf("response plaintext %q", pt)
	}
	// Opening the response again must not disturb the HPKE sequence: the
	// completion is still record 1.
	if _, err := x.OpenResponse(cryptoVecHexS(t, p, "response_random"), cryptoVecHexS(t, p, "response_ciphertext")); err != nil {
		t.Fatal(err)
	}
	ct, err := x.SealCompletion([]byte(p["completion_plaintext_utf8"]))
	if err != nil {
		t.Fatal(err)
	}
	cryptoAssertHex(t, "completion_ciphertext", ct, cryptoVecHexS(t, p, "completion_ciphertext"))
	if _, err := x.SealCompletion([]byte(p["completion_plaintext_utf8"])); !errors.Is(err, errCryptoSealedTwice) {
		t.Errorf("second completion seal: %v, want errCryptoSealedTwice", err)
	}
}

func TestCryptoVectorRotation(t *testing.T) {
	v := loadCryptoVectors(t)
	keys := vectorPairedKeys(t, v)
	r := v.Rotation
	cryptoAssertHex(t, "rotation info", cryptoHPKEInfo(keys.DeviceID, ULID{}), cryptoVecHexS(t, r, "hpke_info"))
	rot, err := rotatePairingPSKFrom(bytes.NewReader(cryptoVecHexS(t, r, "ikmE")), keys)
	if err != nil {
		t.Fatal(err)
	}
	cryptoAssertHex(t, "rotation_enc", rot.Enc, cryptoVecHexS(t, r, "rotation_enc"))
	cryptoAssertHex(t, "new_psk", rot.NewPSK, cryptoVecHexS(t, r, "new_psk"))
}
