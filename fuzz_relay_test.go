// Fuzz targets for what an untrusted relay sends: relay frames, Retry-After
// values, and the protected envelopes inside message frames (pairing and
// paired responses, and unauthenticated error reports). Seeds are frames
// in the exact form the devkit relay writes them and envelopes sealed with
// real keys.

package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/cloudflare/circl/hpke"
	"golang.org/x/crypto/chacha20poly1305"
)

const (
	fzClientID  = "01K2EP16NWNAGJYF8J1Q2V6P3X"
	fzRequestID = "01K2EQ0Z9V3W5X7Y8Z0A1B2C3D"
)

func FuzzRelayFrame(f *testing.F) {
	ids := `"client_id":"` + fzClientID + `","request_id":"` + fzRequestID + `"`
	for _, s := range []string{
		`{"type":"ack",` + ids + `,"kind":"request"}`,
		`{"type":"receipt",` + ids + `,"kind":"request"}`,
		`{"type":"ack",` + ids + `,"kind":"completion"}`,
		`{"type":"message",` + ids + `,"kind":"response","payload":{"nonce":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=","ciphertext":"AAAAAAAAAAAAAAAAAAAAAA=="}}`,
		`{"type":"message",` + ids + `,"kind":"response","payload":null}`,
		`{"type":"state",` + ids + `,"exchange":"open","request":"delivered","response":"absent","completion":"absent"}`,
		`{"type":"state",` + ids + `,"exchange":"settled","request":"delivered","response":"delivered","completion":"accepted"}`,
		`{"type":"inactive",` + ids + `,"kind":"response"}`,
		`{"type":"inactive",` + ids + `}`,
		`{"type":"error",` + ids + `,"error":"RATE_LIMITED","message":"slow down","retryable":true,"retry_after_ms":1500}`,
		`{"type":"error","error":"INVALID_FRAME","message":"response payload does not fit in one frame","retryable":false,"kind":"response"}`,
		`{"type":"error","error":"X","message":"\u001b[31mred\u202e","retryable":true,"retry_after_ms":18446744073709551615}`,
	} {
		f.Add([]byte(s), "120")
	}
	f.Add([]byte(`{"type":"ack"}`), "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add([]byte(`not json`), "-1")
	f.Fuzz(func(t *testing.T, data []byte, retryAfter string) {
		if d := relayRetryAfterHeader(retryAfter); d < 0 || d > relayMaxRetryAfter {
			t.Fatalf("Retry-After %q gave %v", retryAfter, d)
		}
		fr, ok := parseRelayFrame(data)
		if !ok {
			return
		}
		switch fr.Type {
		case "ack", "receipt", "message", "state", "inactive":
			if fr.ClientID == nil || fr.RequestID == nil {
				t.Fatalf("%s frame without ids accepted", fr.Type)
			}
		case "error":
			if fr.Error == nil || fr.Message == nil || fr.Retryable == nil {
				t.Fatal("incomplete error frame accepted")
			}
			checkRelayText(t, *fr.Error)
			checkRelayText(t, *fr.Message)
		default:
			t.Fatalf("frame type %q accepted", fr.Type)
		}
		if fr.Type == "message" && (fr.Kind == nil || *fr.Kind != "response" || fr.Payload == nil) {
			t.Fatal("a message frame other than a response was accepted")
		}
		if fr.RetryAfterMS != nil {
			if d := relayMillis(*fr.RetryAfterMS); d < 0 || d > relayMaxRetryAfter {
				t.Fatalf("retry_after_ms %d gave %v", *fr.RetryAfterMS, d)
			}
		}
	})
}

// checkRelayText: relay text reaches the terminal only printable and short.
func checkRelayText(t *testing.T, s string) {
	t.Helper()
	out := relayText(s)
	if !utf8.ValidString(out) || utf8.RuneCountInString(out) > 203 {
		t.Fatalf("relayText(%q) = %q", s, out)
	}
	for _, r := range out {
		if !unicode.IsPrint(r) {
			t.Fatalf("relayText(%q) kept %U", s, r)
		}
	}
}

// fuzzReader is a deterministic byte stream, so every iteration seals the
// same request and a genuine response seed keeps opening.
type fuzzReader struct{ n byte }

func (r *fuzzReader) Read(p []byte) (int, error) {
	for i := range p {
		r.n++
		p[i] = r.n
	}
	return len(p), nil
}

func FuzzProtectedEnvelope(f *testing.F) {
	dev := newFuzzDevice(f)
	keys := fuzzPairedKeys(dev)
	requestID, _ := parseULID(fzRequestID)
	seal := func() *pairedExchange {
		x, err := sealPairedRequestFrom(&fuzzReader{}, keys, requestID, []byte(`{"method":"SecretList"}`))
		if err != nil {
			f.Fatal(err)
		}
		return x
	}
	x := seal()
	genuine := []byte(`{"secrets":{"github":{"type":"environment","variables":["GH_TOKEN"]}}}`)
	random, ct := dev.sealResponse(f, keys, x, genuine)
	b64 := base64.StdEncoding.EncodeToString
	seed := []byte(fmt.Sprintf(`{"nonce":%q,"ciphertext":%q}`, b64(random), b64(ct)))
	if pt, _, err := openPairedResponse(seal(), seed); err != nil || !bytes.Equal(pt, genuine) {
		f.Fatalf("the genuine seed does not open: %v", err)
	}
	f.Add(seed)
	f.Add([]byte(`{"error":"UNSUPPORTED_PROTOCOL_VERSION","message":"old"}`))
	f.Add([]byte(`{"error":"INVALID_REQUEST","message":"m","nonce":"AAAA"}`))
	f.Add([]byte(fmt.Sprintf(`{"nonce":%q,"ciphertext":%q,"extra":1}`, b64(random[:31]), b64(ct))))
	// A pairing response as the devkit device writes it.
	f.Add([]byte(`{"device_id":"01K2ENXDTW1P3XAR4J7V7C9D0H","device_key":"MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=","device_random":"QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJCQkI="}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		x := seal()
		pt, report, err := openPairedResponse(x, payload)
		switch {
		case err == nil && report == nil:
			// Only the genuine ciphertext authenticates.
			if !bytes.Equal(pt, genuine) {
				t.Fatalf("a forged response opened: %q", pt)
			}
		case err == nil:
			if pt != nil || report.Code == "" {
				t.Fatalf("report %+v with plaintext %q", report, pt)
			}
			checkRelayText(t, report.Code)
		default:
			if pt != nil || report != nil {
				t.Fatal("a failure returned content")
			}
			if !errors.Is(err, errInvalidResponse) && !errors.Is(err, errCryptoOpen) && !errors.Is(err, errCryptoLength) {
				t.Fatalf("unclassified failure %v", err)
			}
		}
		resp, report2, err := decodePairingResponsePayload(payload)
		if err == nil && report2 == nil && (resp == nil || resp.DeviceID.IsZero() || len(resp.DeviceKey) != 32 || len(resp.DeviceRandom) != 32) {
			t.Fatalf("pairing response accepted incomplete: %+v", resp)
		}
		if _, _, err := decodePairedResponsePayload(payload); err != nil && !errors.Is(err, errInvalidResponse) {
			t.Fatalf("unclassified envelope failure %v", err)
		}
	})
}

// newFuzzDevice and sealResponse are the device side, for seeds.
func newFuzzDevice(f *testing.F) *testDevice {
	pub, priv, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().GenerateKeyPair()
	if err != nil {
		f.Fatal(err)
	}
	pk, _ := pub.MarshalBinary()
	id, _ := parseULID("01K2ENXDTW1P3XAR4J7V7C9D0H")
	return &testDevice{id: id, pk: pk, sk: priv}
}

func fuzzPairedKeys(dev *testDevice) pairedKeys {
	clientID, _ := parseULID(fzClientID)
	return pairedKeys{DeviceID: dev.id, DeviceKey: dev.pk, ClientID: clientID, PSK: bytes.Repeat([]byte{0x42}, 32)}
}

func (dev *testDevice) sealResponse(f *testing.F, keys pairedKeys, x *pairedExchange, plaintext []byte) (random, ct []byte) {
	recv, err := cryptoSuite.NewReceiver(dev.sk, cryptoHPKEInfo(dev.id, x.RequestID()))
	if err != nil {
		f.Fatal(err)
	}
	ctx, err := recv.SetupPSK(x.Enc(), keys.PSK, keys.ClientID[:])
	if err != nil {
		f.Fatal(err)
	}
	if _, err := ctx.Open(x.RequestCiphertext(), nil); err != nil {
		f.Fatal(err)
	}
	secret := ctx.Export([]byte("agentknock-v1 response"), 32)
	random = bytes.Repeat([]byte{0x5a}, 32)
	key, nonce := pairedResponseKeys(secret, x.Enc(), random)
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		f.Fatal(err)
	}
	return random, aead.Seal(nil, nonce, plaintext, nil)
}
