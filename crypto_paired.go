// The paired part of the agentknock-v1 cryptosystem.md, client side
// (cryptosystem.md, "Paired exchange" and "PSK rotation"): sealing a
// request to the device with the pairing PSK, opening its response,
// sealing the completion, and deriving the next PSK.

package main

import (
	"bytes"
	"crypto/rand"
	"io"
	"sync"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"golang.org/x/crypto/chacha20poly1305"
)

// pairedKeys are the binding values a paired exchange or rotation needs.
type pairedKeys struct {
	DeviceID  ULID
	DeviceKey []byte      // pkD, 32 bytes
	ClientID  ULID        // also the HPKE psk_id
	PSK       secretBytes // current client_psk, 32 bytes
}

func (k pairedKeys) check() (kem.PublicKey, error) {
	if k.DeviceID.IsZero() || k.ClientID.IsZero() {
		return nil, errCryptoZeroID
	}
	if len(k.PSK) != cryptoValueSize {
		return nil, errCryptoLength
	}
	return cryptoDeviceKey(k.DeviceKey)
}

// pairedExchange is the live sender context of one paired request. It seals
// the request (record 0) once at creation and at most one completion
// (record 1); opening the response uses the exporter only, so it does not
// consume a sequence number.
type pairedExchange struct {
	requestID         ULID
	enc               []byte
	requestCiphertext []byte
	responseSecret    []byte

	mu               sync.Mutex
	sealer           hpke.Sealer
	completionSealed bool
}

// sealPairedRequest creates the PSK-mode context for a fresh nonzero
// request id and seals the request plaintext in it.
func sealPairedRequest(keys pairedKeys, requestID ULID, plaintext []byte) (*pairedExchange, error) {
	return sealPairedRequestFrom(rand.Reader, keys, requestID, plaintext)
}

func sealPairedRequestFrom(rnd io.Reader, keys pairedKeys, requestID ULID, plaintext []byte) (*pairedExchange, error) {
	if requestID.IsZero() {
		return nil, errCryptoZeroID
	}
	pkD, err := keys.check()
	if err != nil {
		return nil, err
	}
	sender, err := cryptoSuite.NewSender(pkD, cryptoHPKEInfo(keys.DeviceID, requestID))
	if err != nil {
		return nil, errCryptoDeviceKey
	}
	enc, ctx, err := sender.SetupPSK(rnd, keys.PSK, keys.ClientID[:])
	if err != nil {
		return nil, errCryptoDeviceKey
	}
	ct, err := ctx.Seal(plaintext, nil)
	if err != nil {
		return nil, err
	}
	return &pairedExchange{
		requestID:         requestID,
		enc:               enc,
		requestCiphertext: ct,
		// One 32-byte export, then two HKDF derivations (section 8.2).
		responseSecret: ctx.Export([]byte(cryptoLabelResponse), cryptoValueSize),
		sealer:         ctx,
	}, nil
}

// RequestID is the identifier bound into this context's info.
func (x *pairedExchange) RequestID() ULID { return x.requestID }

// Enc is the request's encapsulated key ("key" in the envelope).
func (x *pairedExchange) Enc() []byte { return bytes.Clone(x.enc) }

// RequestCiphertext is record 0; a retry resends these exact bytes.
func (x *pairedExchange) RequestCiphertext() []byte { return bytes.Clone(x.requestCiphertext) }

// pairedResponseKeys derives the response AEAD key and nonce from the
// exporter secret, with salt = enc || response_random.
func pairedResponseKeys(responseSecret, enc, responseRandom []byte) (key, nonce []byte) {
	salt := make([]byte, 0, len(enc)+len(responseRandom))
	salt = append(append(salt, enc...), responseRandom...)
	key = hkdfSHA256(salt, responseSecret, []byte(cryptoLabelKey), chacha20poly1305.KeySize)
	nonce = hkdfSHA256(salt, responseSecret, []byte(cryptoLabelNonce), chacha20poly1305.NonceSize)
	return key, nonce
}

// OpenResponse authenticates and decrypts a paired response. It has no side
// effect, so a failed or repeated candidate leaves the exchange as it was;
// accepting at most one response is the caller's job.
func (x *pairedExchange) OpenResponse(responseRandom, ciphertext []byte) ([]byte, error) {
	if len(responseRandom) != cryptoValueSize || len(ciphertext) < chacha20poly1305.Overhead {
		return nil, errCryptoLength
	}
	key, nonce := pairedResponseKeys(x.responseSecret, x.enc, responseRandom)
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		return nil, err
	}
	pt, err := aead.Open(nil, nonce, ciphertext, nil)
	if err != nil {
		return nil, errCryptoOpen
	}
	return pt, nil
}

// SealCompletion seals record 1. It refuses a second call: a retry must
// resend the bytes returned by the first.
func (x *pairedExchange) SealCompletion(plaintext []byte) ([]byte, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.completionSealed {
		return nil, errCryptoSealedTwice
	}
	x.completionSealed = true
	return x.sealer.Seal(plaintext, nil)
}

// pskRotation is the outcome of a client rotation: store NewPSK as current
// and send Enc as rotation_key until a response authenticates under NewPSK.
type pskRotation struct {
	Enc    []byte
	NewPSK secretBytes
}

// rotatePairingPSK derives a successor PSK from the current one with a
// PSK-mode context used only for export; nothing is sealed in it.
func rotatePairingPSK(keys pairedKeys) (*pskRotation, error) {
	return rotatePairingPSKFrom(rand.Reader, keys)
}

func rotatePairingPSKFrom(rnd io.Reader, keys pairedKeys) (*pskRotation, error) {
	pkD, err := keys.check()
	if err != nil {
		return nil, err
	}
	sender, err := cryptoSuite.NewSender(pkD, cryptoHPKEInfo(keys.DeviceID, ULID{}))
	if err != nil {
		return nil, errCryptoDeviceKey
	}
	enc, ctx, err := sender.SetupPSK(rnd, keys.PSK, keys.ClientID[:])
	if err != nil {
		return nil, errCryptoDeviceKey
	}
	return &pskRotation{Enc: enc, NewPSK: ctx.Export([]byte(cryptoLabelPSK), cryptoValueSize)}, nil
}
