// The agentknock-v1 cryptosystem, device side (docs/cryptosystem.md §4-§9):
// address id, pairing commitment and SAS, opening the base-mode pairing
// completion, PSK-mode request/completion opening with the ordered PSK
// selection of §9.2, and the exporter-derived response encryption of §8.2.
package device

import (
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"golang.org/x/crypto/chacha20poly1305"
)

const protocolVersion = "agentknock-v1"

var (
	suite     = hpke.NewSuite(hpke.KEM_X25519_HKDF_SHA256, hpke.KDF_HKDF_SHA256, hpke.AEAD_ChaCha20Poly1305)
	kemScheme = hpke.KEM_X25519_HKDF_SHA256.Scheme()

	// versionInfo is the version padded to 16 bytes; the only padded label.
	versionInfo = []byte("agentknock-v1\x00\x00\x00")

	labelSalt       = []byte("agentknock-v1")
	labelAddress    = "agentknock-v1 address"
	labelCommitment = "agentknock-v1 commitment"
	labelPSK        = []byte("agentknock-v1 psk")
	labelSAS        = "agentknock-v1 sas"
	labelResponse   = []byte("agentknock-v1 response")
)

var errOpen = errors.New("record does not authenticate")

func hkdfSHA256(salt, ikm []byte, info string, n int) []byte {
	out, err := hkdf.Key(sha256.New, ikm, salt, info, n)
	if err != nil {
		panic(err) // only for n > 255*32, which no caller asks for
	}
	return out
}

// addressID is the relay-visible id of a pairing address (§6).
func addressID(address string) []byte {
	return hkdfSHA256(labelSalt, []byte(address), labelAddress, 16)
}

// commitmentOf is the client's commitment to its pairing secret (§7.1).
func commitmentOf(clientSecret []byte) []byte {
	return hkdfSHA256(labelSalt, clientSecret, labelCommitment, 32)
}

// hpkeInfo is version_info || device_id || third, always 48 bytes (§5.5);
// third is the client id (pairing), request id, or zero(16) (rotation).
func hpkeInfo(deviceID, third ulid) []byte {
	info := make([]byte, 0, 48)
	info = append(info, versionInfo...)
	info = append(info, deviceID[:]...)
	return append(info, third[:]...)
}

// sasDigits computes the 12-digit short authentication string (§7.3).
func sasDigits(deviceRandom, clientSecret []byte, deviceID, clientID ulid, pkD []byte) string {
	info := labelSAS + string(deviceID[:]) + string(clientID[:]) + string(pkD)
	b := hkdfSHA256(deviceRandom, clientSecret, info, 8)
	n := binary.BigEndian.Uint64(b) % 1_000_000_000_000
	return fmt.Sprintf("%04d %04d %04d", n/100_000_000, n/10_000%10_000, n%10_000)
}

// deviceKey is the device's long-term X25519 key pair.
type deviceKey struct {
	sk  kem.PrivateKey
	pub []byte
}

func parseDeviceKey(raw []byte) (*deviceKey, error) {
	sk, err := kemScheme.UnmarshalBinaryPrivateKey(raw)
	if err != nil {
		return nil, err
	}
	pub, err := sk.Public().MarshalBinary()
	if err != nil {
		return nil, err
	}
	return &deviceKey{sk: sk, pub: pub}, nil
}

// pairingOpened is what an authenticated pairing completion yields.
type pairingOpened struct {
	ClientSecret []byte
	Metadata     []byte
	PSK          []byte
}

// openPairingCompletion opens both base-mode records in order, checks the
// secret length and, in constant time, the retained commitment; only then
// does it export the client PSK (§7.2). Any failure returns no values.
func (k *deviceKey) openPairingCompletion(deviceID, clientID ulid, commitment, enc, secretCT, appCT []byte) (*pairingOpened, error) {
	if len(enc) != 32 {
		return nil, errors.New("encapsulated key is not 32 bytes")
	}
	r, err := suite.NewReceiver(k.sk, hpkeInfo(deviceID, clientID))
	if err != nil {
		return nil, err
	}
	ctx, err := r.Setup(enc)
	if err != nil {
		return nil, errOpen
	}
	secret, err := ctx.Open(secretCT, nil)
	if err != nil {
		return nil, errOpen
	}
	meta, err := ctx.Open(appCT, nil)
	if err != nil {
		return nil, errOpen
	}
	if len(secret) != 32 {
		return nil, errors.New("client secret is not 32 bytes")
	}
	if subtle.ConstantTimeCompare(commitmentOf(secret), commitment) != 1 {
		return nil, errors.New("client secret does not match the commitment")
	}
	return &pairingOpened{ClientSecret: secret, Metadata: meta, PSK: ctx.Export(labelPSK, 32)}, nil
}

// requestContext is an opened paired request: its plaintext and the one
// 32-byte response exporter output (§8.2).
type requestContext struct {
	Plaintext      []byte
	ResponseSecret []byte
	opener         hpke.Opener
}

// openRequest opens request record 0 with one PSK generation.
func (k *deviceKey) openRequest(deviceID, clientID, requestID ulid, psk, enc, ct []byte) (*requestContext, error) {
	if len(enc) != 32 {
		return nil, errors.New("encapsulated key is not 32 bytes")
	}
	if len(psk) != 32 {
		return nil, errors.New("no usable PSK")
	}
	r, err := suite.NewReceiver(k.sk, hpkeInfo(deviceID, requestID))
	if err != nil {
		return nil, err
	}
	ctx, err := r.SetupPSK(enc, psk, clientID[:])
	if err != nil {
		return nil, errOpen
	}
	pt, err := ctx.Open(ct, nil)
	if err != nil {
		return nil, errOpen
	}
	return &requestContext{Plaintext: pt, ResponseSecret: ctx.Export(labelResponse, 32), opener: ctx}, nil
}

// openCompletion rebuilds the request context from the accepted request,
// opens record 0 again and then the completion as record 1 (§8.3).
func (k *deviceKey) openCompletion(deviceID, clientID, requestID ulid, psk, enc, requestCT, completionCT []byte) ([]byte, error) {
	rc, err := k.openRequest(deviceID, clientID, requestID, psk, enc, requestCT)
	if err != nil {
		return nil, err
	}
	pt, err := rc.opener.Open(completionCT, nil)
	if err != nil {
		return nil, errOpen
	}
	return pt, nil
}

// rotationCandidate derives the successor PSK a rotation_enc proposes,
// from the current PSK (§9.2 step 3). It is adopted only by the caller and
// only after a request opens under it.
func (k *deviceKey) rotationCandidate(deviceID, clientID ulid, currentPSK, rotationEnc []byte) ([]byte, error) {
	if len(rotationEnc) != 32 {
		return nil, errors.New("rotation key is not 32 bytes")
	}
	r, err := suite.NewReceiver(k.sk, hpkeInfo(deviceID, ulid{}))
	if err != nil {
		return nil, err
	}
	ctx, err := r.SetupPSK(rotationEnc, currentPSK, clientID[:])
	if err != nil {
		return nil, errOpen
	}
	return ctx.Export(labelPSK, 32), nil
}

// pskGeneration says which stored PSK authenticated a request.
type pskGeneration int

const (
	genCurrent  pskGeneration = iota
	genPrevious               // within the overlap; never authorizes rotation
	genRotated                // the rotation candidate; the caller adopts it
	genPending                // a pending binding's PSK, activation only
)

// pskChoice is the binding state selectPSK needs.
type pskChoice struct {
	Current       []byte
	Previous      []byte // nil when the overlap has ended
	AllowRotation bool   // false for a pending binding
	RotationEnc   []byte // decoded rotation_key, nil when absent
}

// selectAndOpen applies §9.2 in order: current PSK; else the previous PSK
// within its overlap (ignoring rotation_key); else, with rotation_key, the
// candidate derived from the current PSK, accepted only if the request opens
// under it. It returns the generation and exact PSK that authenticated.
func (k *deviceKey) selectAndOpen(deviceID, clientID, requestID ulid, c pskChoice, enc, ct []byte) (*requestContext, pskGeneration, []byte, error) {
	if rc, err := k.openRequest(deviceID, clientID, requestID, c.Current, enc, ct); err == nil {
		if !c.AllowRotation {
			return rc, genPending, c.Current, nil
		}
		return rc, genCurrent, c.Current, nil
	}
	if !c.AllowRotation {
		return nil, 0, nil, errOpen
	}
	if c.Previous != nil {
		if rc, err := k.openRequest(deviceID, clientID, requestID, c.Previous, enc, ct); err == nil {
			return rc, genPrevious, c.Previous, nil
		}
	}
	if c.RotationEnc == nil {
		return nil, 0, nil, errOpen
	}
	cand, err := k.rotationCandidate(deviceID, clientID, c.Current, c.RotationEnc)
	if err != nil {
		return nil, 0, nil, errOpen
	}
	rc, err := k.openRequest(deviceID, clientID, requestID, cand, enc, ct)
	if err != nil {
		return nil, 0, nil, errOpen
	}
	return rc, genRotated, cand, nil
}

// sealResponse encrypts a response plaintext with the key and nonce derived
// from the request's exporter output and a fresh public random (§8.2).
func sealResponse(responseSecret, enc, responseRandom, plaintext []byte) ([]byte, error) {
	if len(responseRandom) != 32 || len(responseSecret) != 32 {
		return nil, errors.New("bad response input length")
	}
	salt := append(append(make([]byte, 0, 64), enc...), responseRandom...)
	key := hkdfSHA256(salt, responseSecret, "key", 32)
	nonce := hkdfSHA256(salt, responseSecret, "nonce", 12)
	aead, err := chacha20poly1305.New(key)
	if err != nil {
		return nil, err
	}
	return aead.Seal(nil, nonce, plaintext, nil), nil
}
