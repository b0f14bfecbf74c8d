// protocol.go: the Agentknock v1 client-device messages
// (client-device-protocol.md), shared part: the method, result, reason and
// mode constants, the client software information, the JSON value forms
// ("Binary values"), the clear pairing payloads ("Initial pairing"), the
// paired envelopes ("Cryptographic envelopes") and unprotected error reports
// ("Unprotected error reports"). crypto.go protects the bytes;
// protocol_requests.go builds the plaintexts, and protocol_responses.go and
// protocol_ssh.go decide what the device's answers mean and reject what the
// client cannot use.

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Methods of the protected request's "method" member.
const (
	methodPairingFinish   = "PairingFinish"
	methodInvocation      = "Invocation"
	methodGitSign         = "GitSign"
	methodSSHAuthenticate = "SshAuthenticate"
	methodSecretList      = "SecretList"
	methodSecretUpload    = "SecretUpload"
	methodPairingRemove   = "PairingRemove"
)

// Values of "result" in responses and completions.
const (
	resultApproved = "APPROVED"
	resultDenied   = "DENIED"
	resultAborted  = "ABORTED"
	resultAccepted = "ACCEPTED"
	resultRejected = "REJECTED"
	resultReceived = "RECEIVED"
)

// Denial reasons a device may give.
const (
	denialUserDenied     = "USER_DENIED"
	denialPolicyDenied   = "POLICY_DENIED"
	denialInvalidRequest = "INVALID_REQUEST"
	denialOther          = "OTHER"
)

// Abort reasons of a client completion.
const (
	abortCancelled       = "CANCELLED"
	abortTimedOut        = "TIMED_OUT"
	abortInvalidResponse = "INVALID_RESPONSE"
	abortClientError     = "CLIENT_ERROR"
	abortOther           = "OTHER"
)

// Standard stream connection kinds of an exec operation.
const (
	streamTerminal    = "TERMINAL"
	streamNullDevice  = "NULL_DEVICE"
	streamPipe        = "PIPE"
	streamSocket      = "SOCKET"
	streamRegularFile = "REGULAR_FILE"
	streamUnknown     = "UNKNOWN"
)

// Executable modes of an exec operation.
const (
	executableBinary = "BINARY"
	executableScript = "SCRIPT"
)

// Secret types of version 1.
const (
	secretTypeEnvironment = "environment"
	secretTypeSSH         = "ssh"
)

// SecretUpload modes.
const (
	uploadModeCreate  = "CREATE"
	uploadModeUpdate  = "UPDATE"
	uploadModeReplace = "REPLACE"
)

// Limits the protocol fixes for requests.
const (
	invocationTokenSize   = 32
	maxLauncherChain      = 4
	maxListedChangedPaths = 50
	sshsigNamespaceGit    = "git"
)

// softwareInfo is one of app_info / lib_info.
type softwareInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// clientInfo is embedded in every protected client plaintext; encoding/json
// flattens it into app_info and lib_info members.
type clientInfo struct {
	AppInfo softwareInfo `json:"app_info"`
	LibInfo softwareInfo `json:"lib_info"`
}

// newClientInfo names this program as both application and protocol
// library: the client embeds no separate library.
func newClientInfo() clientInfo {
	info := softwareInfo{Name: "agentknock", Version: clientVersion()}
	return clientInfo{AppInfo: info, LibInfo: info}
}

// b64std is a binary value in JSON: standard base64 with padding. Decoding
// rejects JSON null and anything that is not a base64 string; exact lengths
// are checked where the value is used.
type b64std []byte

func (b b64std) MarshalJSON() ([]byte, error) { return marshalB64(b) }

func (b *b64std) UnmarshalJSON(data []byte) error {
	v, err := unmarshalB64(data)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalJSON gives secretBytes the same wire form as b64std.
func (s secretBytes) MarshalJSON() ([]byte, error) { return marshalB64(s) }

func (s *secretBytes) UnmarshalJSON(data []byte) error {
	v, err := unmarshalB64(data)
	if err != nil {
		return err
	}
	*s = v
	return nil
}

func marshalB64(b []byte) ([]byte, error) {
	return json.Marshal(base64.StdEncoding.EncodeToString(b))
}

// unmarshalB64 never echoes the input: these values can be keys.
func unmarshalB64(data []byte) ([]byte, error) {
	s, ok := rawJSONString(data)
	if !ok {
		return nil, errors.New("binary value is not a base64 string")
	}
	v, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, errors.New("binary value is not valid base64")
	}
	return v, nil
}

// secretText holds a secret string returned by the device or sent in an
// upload. JSON encodes it as a plain string; fmt prints a placeholder for
// every verb so it cannot leak through a log line.
type secretText string

// Format redacts every fmt verb.
func (secretText) Format(f fmt.State, verb rune) { io.WriteString(f, "[redacted]") }

// ---- Envelopes (client-device-protocol.md "Cryptographic envelopes") ----

// pairingRequestPayload is the clear initial pairing request.
type pairingRequestPayload struct {
	Version    string `json:"version"`
	Commitment b64std `json:"commitment"`
}

func newPairingRequestPayload(a *pairingAttempt) pairingRequestPayload {
	return pairingRequestPayload{Version: protocolVersion, Commitment: a.Commitment()}
}

// pairingResponsePayload is the clear, unauthenticated pairing response,
// after its identifier and lengths have been checked.
type pairingResponsePayload struct {
	DeviceID     ULID
	DeviceKey    []byte
	DeviceRandom []byte
}

// unprotectedErrorReport is a clear {"error","message"} in a response
// position. The relay can forge it: it is diagnostic only and must never
// change pairing, rotation or invocation state.
type unprotectedErrorReport struct {
	Code    string `json:"error"`
	Message string `json:"message"`
}

func (r *unprotectedErrorReport) String() string {
	return "unauthenticated error report " + r.Code + ": " + r.Message
}

// decodeUnprotectedReport reads the clear error form; message is optional
// here because the report carries no trusted meaning anyway.
func decodeUnprotectedReport(obj jsonObject) (*unprotectedErrorReport, error) {
	code, err := obj.requiredString("error")
	if err != nil {
		return nil, err
	}
	if code == "" {
		return nil, invalidResponse("an error report with an empty code")
	}
	message, _, err := obj.optionalString("message")
	if err != nil {
		return nil, err
	}
	return &unprotectedErrorReport{Code: code, Message: message}, nil
}

// decodePairingResponsePayload returns either the checked pairing response
// or an unprotected error report.
func decodePairingResponsePayload(payload []byte) (*pairingResponsePayload, *unprotectedErrorReport, error) {
	obj, err := decodeJSONObject(payload)
	if err != nil {
		return nil, nil, err
	}
	if obj.has("error") {
		report, err := decodeUnprotectedReport(obj)
		return nil, report, err
	}
	idText, err := obj.requiredString("device_id")
	if err != nil {
		return nil, nil, err
	}
	id, err := parseULID(idText)
	if err != nil {
		return nil, nil, invalidResponse("device_id is not a canonical ULID")
	}
	key, err := obj.requiredBinary("device_key", cryptoValueSize)
	if err != nil {
		return nil, nil, err
	}
	random, err := obj.requiredBinary("device_random", cryptoValueSize)
	if err != nil {
		return nil, nil, err
	}
	return &pairingResponsePayload{DeviceID: id, DeviceKey: key, DeviceRandom: random}, nil, nil
}

// pairingCompletionPayload carries the two base-mode records.
type pairingCompletionPayload struct {
	Key        b64std `json:"key"`
	Secret     b64std `json:"secret"`
	Ciphertext b64std `json:"ciphertext"`
}

func newPairingCompletionPayload(c *pairingCompletion) pairingCompletionPayload {
	return pairingCompletionPayload{Key: c.Enc, Secret: c.SecretCiphertext, Ciphertext: c.MetadataCiphertext}
}

// pairedRequestPayload is a paired request envelope; rotation_key is the
// pending rotation's encapsulated key, absent when none is pending.
type pairedRequestPayload struct {
	Version     string `json:"version"`
	Key         b64std `json:"key"`
	Ciphertext  b64std `json:"ciphertext"`
	RotationKey b64std `json:"rotation_key,omitempty"`
}

func newPairedRequestPayload(x *pairedExchange, rotationEnc []byte) (pairedRequestPayload, error) {
	if len(rotationEnc) != 0 && len(rotationEnc) != cryptoValueSize {
		return pairedRequestPayload{}, errCryptoLength
	}
	return pairedRequestPayload{
		Version:     protocolVersion,
		Key:         x.Enc(),
		Ciphertext:  x.RequestCiphertext(),
		RotationKey: bytes.Clone(rotationEnc),
	}, nil
}

// sealProtectedRequest encodes a request plaintext, seals it in a fresh
// exchange and returns the exchange with its envelope. The caller keeps the
// exchange for the response and completion, and the marshalled envelope for
// retries.
func sealProtectedRequest(keys pairedKeys, requestID ULID, rotationEnc []byte, request any) (*pairedExchange, pairedRequestPayload, error) {
	plaintext, err := json.Marshal(request)
	if err != nil {
		return nil, pairedRequestPayload{}, err
	}
	return sealProtectedPlaintext(rand.Reader, keys, requestID, rotationEnc, plaintext)
}

// sealProtectedPlaintext seals an encoded request with the randomness of
// rnd: the same rnd, keys, id and plaintext give the same envelope.
func sealProtectedPlaintext(rnd io.Reader, keys pairedKeys, requestID ULID, rotationEnc, plaintext []byte) (*pairedExchange, pairedRequestPayload, error) {
	x, err := sealPairedRequestFrom(rnd, keys, requestID, plaintext)
	if err != nil {
		return nil, pairedRequestPayload{}, err
	}
	payload, err := newPairedRequestPayload(x, rotationEnc)
	if err != nil {
		return nil, pairedRequestPayload{}, err
	}
	return x, payload, nil
}

// pairedResponsePayload is a paired response envelope; Nonce is the
// 32-byte response_random, not the AEAD nonce.
type pairedResponsePayload struct {
	Nonce      []byte
	Ciphertext []byte
}

// decodePairedResponsePayload returns either the checked envelope or an
// unprotected error report.
func decodePairedResponsePayload(payload []byte) (*pairedResponsePayload, *unprotectedErrorReport, error) {
	obj, err := decodeJSONObject(payload)
	if err != nil {
		return nil, nil, err
	}
	if obj.has("error") {
		report, err := decodeUnprotectedReport(obj)
		return nil, report, err
	}
	nonce, err := obj.requiredBinary("nonce", cryptoValueSize)
	if err != nil {
		return nil, nil, err
	}
	ct, err := obj.requiredBinary("ciphertext", -1)
	if err != nil {
		return nil, nil, err
	}
	return &pairedResponsePayload{Nonce: nonce, Ciphertext: ct}, nil, nil
}

// openPairedResponse decodes a response payload and authenticates it in
// the exchange. Exactly one of plaintext, report and err is non-nil.
func openPairedResponse(x *pairedExchange, payload []byte) ([]byte, *unprotectedErrorReport, error) {
	env, report, err := decodePairedResponsePayload(payload)
	if err != nil || report != nil {
		return nil, report, err
	}
	pt, err := x.OpenResponse(env.Nonce, env.Ciphertext)
	if err != nil {
		return nil, nil, err
	}
	return pt, nil, nil
}

// pairedCompletionPayload is a paired completion envelope.
type pairedCompletionPayload struct {
	Ciphertext b64std `json:"ciphertext"`
}

// sealProtectedCompletion encodes and seals the one completion of an
// exchange.
func sealProtectedCompletion(x *pairedExchange, completion any) (pairedCompletionPayload, error) {
	plaintext, err := json.Marshal(completion)
	if err != nil {
		return pairedCompletionPayload{}, err
	}
	ct, err := x.SealCompletion(plaintext)
	if err != nil {
		return pairedCompletionPayload{}, err
	}
	return pairedCompletionPayload{Ciphertext: ct}, nil
}

// ---- helpers ----

func protoSortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func protoFirstDuplicate(list []string) string {
	seen := make(map[string]bool, len(list))
	for _, s := range list {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return ""
}
