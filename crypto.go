// The agentknock-v1 cryptosystem.md, client side (cryptosystem.md
// sections 4-11): ULID identifiers, the pairing address id, initial
// pairing with its commitment and SAS, then the paired exchange and PSK
// rotation. Plaintexts are opaque bytes here; protocol.go gives them
// meaning.

package main

import (
	"bytes"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"golang.org/x/crypto/chacha20poly1305"
)

// protocolVersion is the clear version selector of every envelope; padded to
// 16 bytes it is also the first component of every HPKE info.
const protocolVersion = "agentknock-v1"

// Every fixed-size value of the suite (X25519 keys, encapsulated keys, PSKs,
// the client secret, commitment and both public randoms) is 32 bytes.
const cryptoValueSize = 32

// Domain-separation labels of cryptosystem.md section 5.4, exact ASCII.
const (
	cryptoLabelSalt       = "agentknock-v1"
	cryptoLabelAddress    = "agentknock-v1 address"
	cryptoLabelCommitment = "agentknock-v1 commitment"
	cryptoLabelPSK        = "agentknock-v1 psk"
	cryptoLabelSAS        = "agentknock-v1 sas"
	cryptoLabelResponse   = "agentknock-v1 response"
	cryptoLabelKey        = "key"
	cryptoLabelNonce      = "nonce"
)

// cryptoSuite is the only suite v1 allows: DHKEM(X25519, HKDF-SHA256),
// HKDF-SHA256, ChaCha20Poly1305.
var cryptoSuite = hpke.NewSuite(hpke.KEM_X25519_HKDF_SHA256, hpke.KDF_HKDF_SHA256, hpke.AEAD_ChaCha20Poly1305)

// Failures are reported without detail on purpose: which check failed on an
// attacker-supplied value tells the relay nothing useful and the caller
// only needs to fail closed.
var (
	errCryptoLength       = errors.New("agentknock-v1: value has the wrong length")
	errCryptoDeviceKey    = errors.New("agentknock-v1: unusable device key")
	errCryptoOpen         = errors.New("agentknock-v1: response failed authentication")
	errCryptoSealedTwice  = errors.New("agentknock-v1: record already sealed for this slot")
	errCryptoZeroID       = errors.New("agentknock-v1: all-zero identifier")
	errPairingCompleted   = errors.New("agentknock-v1: pairing attempt already completed")
	errPairingAddressForm = errors.New("pairing address must be lowercase words separated by single hyphens")
)

// secretBytes holds key material (PSKs, tokens). It converts freely to and
// from []byte, and prints as a placeholder so a stray %v or log line cannot
// reveal it.
type secretBytes []byte

// Format redacts every fmt verb.
func (secretBytes) Format(f fmt.State, verb rune) { io.WriteString(f, "[redacted]") }

// ULID is the 16-byte binary value of a ULID (big-endian 128-bit integer):
// 48-bit Unix milliseconds then 80 random bits. Cryptography uses these
// bytes; the wire uses the canonical 26-character text.
type ULID [16]byte

const ulidAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// newULID makes a fresh identifier from the current time and 80 independent
// CSPRNG bits. It is deliberately not monotonic: two ids in one millisecond
// get unrelated random fields, never an increment of the previous one.
func newULID() (ULID, error) {
	return newULIDFrom(time.Now(), rand.Reader)
}

func newULIDFrom(now time.Time, rnd io.Reader) (ULID, error) {
	ms := now.UnixMilli()
	if ms <= 0 || ms >= 1<<48 {
		return ULID{}, errors.New("ulid: clock outside the 48-bit millisecond range")
	}
	var id ULID
	binary.BigEndian.PutUint16(id[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(id[2:6], uint32(ms))
	if _, err := io.ReadFull(rnd, id[6:]); err != nil {
		return ULID{}, fmt.Errorf("ulid: reading random bits: %w", err)
	}
	return id, nil
}

// parseULID accepts only the canonical form [0-7][0-9A-HJKMNP-TV-Z]{25}:
// uppercase, no Crockford aliases (I, L, O, lowercase), no hyphens. The
// all-zero value is rejected too: it is reserved for rotation and never
// names a device, client or request.
func parseULID(s string) (ULID, error) {
	if len(s) != 26 || s[0] < '0' || s[0] > '7' {
		return ULID{}, errors.New("ulid: not a canonical 26-character ULID")
	}
	var hi, lo uint64
	for i := 0; i < len(s); i++ {
		v := ulidDigit(s[i])
		if v < 0 {
			return ULID{}, errors.New("ulid: not a canonical 26-character ULID")
		}
		hi = hi<<5 | lo>>59
		lo = lo<<5 | uint64(v)
	}
	var id ULID
	binary.BigEndian.PutUint64(id[0:8], hi)
	binary.BigEndian.PutUint64(id[8:16], lo)
	if id.IsZero() {
		return ULID{}, errCryptoZeroID
	}
	return id, nil
}

// canonicalULIDText is the form the relay routes on,
// [0-7][0-9A-HJKMNP-TV-Z]{25}, zero included (a regular expression compiled
// at start-up cost every invocation more than this loop costs a run).
func canonicalULIDText(s string) bool {
	if len(s) != 26 || s[0] < '0' || s[0] > '7' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if ulidDigit(s[i]) < 0 {
			return false
		}
	}
	return true
}

func ulidDigit(c byte) int {
	return strings.IndexByte(ulidAlphabet, c)
}

// String is the canonical uppercase text form.
func (u ULID) String() string {
	hi := binary.BigEndian.Uint64(u[0:8])
	lo := binary.BigEndian.Uint64(u[8:16])
	var out [26]byte
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = ulidAlphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}

// IsZero reports the reserved all-zero value (also the unset value).
func (u ULID) IsZero() bool { return u == ULID{} }

// Time is the creation time the identifier claims.
func (u ULID) Time() time.Time {
	ms := int64(binary.BigEndian.Uint16(u[0:2]))<<32 | int64(binary.BigEndian.Uint32(u[2:6]))
	return time.UnixMilli(ms)
}

// MarshalText lets ULID fields travel as canonical strings in JSON.
func (u ULID) MarshalText() ([]byte, error) {
	if u.IsZero() {
		return nil, errCryptoZeroID
	}
	return []byte(u.String()), nil
}

// UnmarshalText applies the strict canonical parse.
func (u *ULID) UnmarshalText(text []byte) error {
	id, err := parseULID(string(text))
	if err != nil {
		return err
	}
	*u = id
	return nil
}

// hkdfSHA256 is HKDF-Expand(HKDF-Extract(salt, ikm), info, length) in the
// argument order of cryptosystem.md section 3.
func hkdfSHA256(salt, ikm, info []byte, length int) []byte {
	out, err := hkdf.Key(sha256.New, ikm, salt, string(info), length)
	if err != nil {
		// Only reachable with a length above 255*32, which no caller uses.
		panic("agentknock-v1: hkdf: " + err.Error())
	}
	return out
}

// cryptoVersionInfo is ASCII(version) || zero(3), the fixed 16-byte prefix of
// every HPKE info.
func cryptoVersionInfo() []byte {
	info := make([]byte, 16)
	copy(info, protocolVersion)
	return info
}

// cryptoHPKEInfo builds the 48-byte info: version_info || device_id || last,
// where last is the client id (pairing), the request id (paired exchange) or
// zero(16) (rotation).
func cryptoHPKEInfo(deviceID ULID, last ULID) []byte {
	info := make([]byte, 0, 48)
	info = append(info, cryptoVersionInfo()...)
	info = append(info, deviceID[:]...)
	return append(info, last[:]...)
}

// cryptoDeviceKey decodes pkD. Non-canonical u-coordinates are accepted as
// RFC 7748 requires; a key that yields an all-zero shared secret is caught
// later by the HPKE setup.
func cryptoDeviceKey(raw []byte) (kem.PublicKey, error) {
	if len(raw) != cryptoValueSize {
		return nil, errCryptoLength
	}
	pk, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().UnmarshalBinaryPublicKey(raw)
	if err != nil {
		return nil, errCryptoDeviceKey
	}
	return pk, nil
}

// validPairingAddress matches [a-z]+(-[a-z]+)* exactly; the address is then
// used byte for byte, with no trimming or case folding.
func validPairingAddress(address string) bool {
	if address == "" {
		return false
	}
	wordStart := true
	for i := 0; i < len(address); i++ {
		c := address[i]
		switch {
		case c >= 'a' && c <= 'z':
			wordStart = false
		case c == '-' && !wordStart:
			wordStart = true
		default:
			return false
		}
	}
	return !wordStart
}

// pairingAddressID is the relay-visible 32-hex-digit id of a pairing address
// (cryptosystem.md section 6).
func pairingAddressID(address string) (string, error) {
	if !validPairingAddress(address) {
		return "", errPairingAddressForm
	}
	id := hkdfSHA256([]byte(cryptoLabelSalt), []byte(address), []byte(cryptoLabelAddress), 16)
	return hex.EncodeToString(id), nil
}

// pairingCommitment commits to client_secret before the device contributes
// its random value, so a relay cannot grind a matching SAS.
func pairingCommitment(clientSecret []byte) []byte {
	return hkdfSHA256([]byte(cryptoLabelSalt), clientSecret, []byte(cryptoLabelCommitment), 32)
}

// pairingAttempt is one logical initial pairing: one client id (also the
// request id), one client secret, sealed at most once (section 7.5).
type pairingAttempt struct {
	ClientID     ULID
	clientSecret [cryptoValueSize]byte
	commitment   [cryptoValueSize]byte
	completed    bool
}

// newPairingAttempt draws a fresh client id and client secret.
func newPairingAttempt() (*pairingAttempt, error) {
	return newPairingAttemptFrom(time.Now(), rand.Reader)
}

func newPairingAttemptFrom(now time.Time, rnd io.Reader) (*pairingAttempt, error) {
	id, err := newULIDFrom(now, rnd)
	if err != nil {
		return nil, err
	}
	var secret [cryptoValueSize]byte
	if _, err := io.ReadFull(rnd, secret[:]); err != nil {
		return nil, fmt.Errorf("agentknock-v1: reading client secret: %w", err)
	}
	return pairingAttemptWith(id, secret), nil
}

func pairingAttemptWith(clientID ULID, clientSecret [cryptoValueSize]byte) *pairingAttempt {
	a := &pairingAttempt{ClientID: clientID, clientSecret: clientSecret}
	copy(a.commitment[:], pairingCommitment(clientSecret[:]))
	return a
}

// Commitment is the value sent in the clear pairing request.
func (a *pairingAttempt) Commitment() []byte {
	return bytes.Clone(a.commitment[:])
}

// pairingCompletion is everything the client keeps from a completed base-mode
// exchange: the completion records to (re)send, the pending PSK, and the SAS.
type pairingCompletion struct {
	DeviceID           ULID
	DeviceKey          []byte // pkD exactly as received
	ClientID           ULID
	Enc                []byte
	SecretCiphertext   []byte      // record 0: client_secret
	MetadataCiphertext []byte      // record 1: metadata JSON
	PSK                secretBytes // pending client_psk
	SAS                string      // "dddd dddd dddd"
}

// Complete validates the clear pairing response, seals client_secret then
// the metadata in one base-mode context, exports the PSK and computes the
// SAS. The transcript is fixed once HPKE setup succeeds: a second call fails
// instead of sealing again under the same identifiers.
func (a *pairingAttempt) Complete(deviceID ULID, deviceKey, deviceRandom, metadata []byte) (*pairingCompletion, error) {
	return a.complete(rand.Reader, deviceID, deviceKey, deviceRandom, metadata)
}

func (a *pairingAttempt) complete(rnd io.Reader, deviceID ULID, deviceKey, deviceRandom, metadata []byte) (*pairingCompletion, error) {
	if a.completed {
		return nil, errPairingCompleted
	}
	if deviceID.IsZero() || a.ClientID.IsZero() {
		return nil, errCryptoZeroID
	}
	if len(deviceRandom) != cryptoValueSize {
		return nil, errCryptoLength
	}
	pkD, err := cryptoDeviceKey(deviceKey)
	if err != nil {
		return nil, err
	}
	sender, err := cryptoSuite.NewSender(pkD, cryptoHPKEInfo(deviceID, a.ClientID))
	if err != nil {
		return nil, errCryptoDeviceKey
	}
	enc, ctx, err := sender.Setup(rnd)
	if err != nil {
		return nil, errCryptoDeviceKey
	}
	a.completed = true
	secretCT, err := ctx.Seal(a.clientSecret[:], nil)
	if err != nil {
		return nil, err
	}
	metadataCT, err := ctx.Seal(metadata, nil)
	if err != nil {
		return nil, err
	}
	psk := ctx.Export([]byte(cryptoLabelPSK), cryptoValueSize)
	sas := formatPairingSAS(pairingSASValue(pairingSASBytes(a.clientSecret[:], deviceRandom, deviceID, a.ClientID, deviceKey)))
	return &pairingCompletion{
		DeviceID:           deviceID,
		DeviceKey:          bytes.Clone(deviceKey),
		ClientID:           a.ClientID,
		Enc:                enc,
		SecretCiphertext:   secretCT,
		MetadataCiphertext: metadataCT,
		PSK:                psk,
		SAS:                sas,
	}, nil
}

// pairingSASBytes binds both random contributions, both identifiers and the
// exact pkD received (section 7.3).
func pairingSASBytes(clientSecret, deviceRandom []byte, deviceID, clientID ULID, deviceKey []byte) []byte {
	info := make([]byte, 0, len(cryptoLabelSAS)+16+16+len(deviceKey))
	info = append(info, cryptoLabelSAS...)
	info = append(info, deviceID[:]...)
	info = append(info, clientID[:]...)
	info = append(info, deviceKey...)
	return hkdfSHA256(deviceRandom, clientSecret, info, 8)
}

func pairingSASValue(sasBytes []byte) uint64 {
	return binary.BigEndian.Uint64(sasBytes) % 1_000_000_000_000
}

// formatPairingSAS renders 12 zero-padded digits as "dddd dddd dddd".
func formatPairingSAS(v uint64) string {
	d := fmt.Sprintf("%012d", v%1_000_000_000_000)
	return d[0:4] + " " + d[4:8] + " " + d[8:12]
}

// The paired part of the agentknock-v1 cryptosystem.md, client side
// (cryptosystem.md, "Paired exchange" and "PSK rotation"): sealing a
// request to the device with the pairing PSK, opening its response,
// sealing the completion, and deriving the next PSK.

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
