// crypto_test.go: round trips of crypto.go against an HPKE receiver playing
// the device, and fail-closed checks (cryptosystem.md sections 7-9: initial
// pairing, the paired request/response/completion exchange, PSK rotation).

package main

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"errors"
	"testing"

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
