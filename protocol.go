// The Agentknock v1 client-device protocol (client-device-protocol.md),
// client side, in the order an exchange uses it: the shared constants, the
// JSON value forms ("Binary values"), the clear pairing payloads ("Initial
// pairing"), the paired envelopes ("Cryptographic envelopes") and
// unprotected error reports ("Unprotected error reports"); the request
// plaintexts; the checks of the device's responses (Invocation, the other
// methods, SSH) and the completions sent after them; and the exchange
// itself ("Paired exchanges"), one function every paired method uses, with
// the requests that are safe to resend after a crash. crypto.go protects
// the bytes and relay.go carries them.

package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/ssh"
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

// The protected client plaintexts of the Agentknock
// v1 client-device-protocol.md (client-device-protocol.md "Pairing activation",
// "Invocation", "Git signing", "SSH authentication", "Secret list", "Secret
// upload", "Pairing removal"): the request builders with their client-side
// validation. The completions follow the response checks below.

// ---- Protected requests ----

// methodRequest is a request whose only content is its method
// (PairingFinish, SecretList, PairingRemove).
type methodRequest struct {
	clientInfo
	Method string `json:"method"`
}

func newMethodRequest(method string) methodRequest {
	return methodRequest{clientInfo: newClientInfo(), Method: method}
}

// pairingMetadata is record 1 of the pairing completion. It stays untrusted
// on the device until the SAS is confirmed.
type pairingMetadata struct {
	clientInfo
	Platform     string `json:"platform"`
	Architecture string `json:"architecture"`
	Hostname     string `json:"hostname,omitempty"`
	MachineID    string `json:"machine_id,omitempty"`
	OSVersion    string `json:"os_version,omitempty"`
}

func newPairingMetadata(hostname, machineID, osVersion string) pairingMetadata {
	return pairingMetadata{
		clientInfo:   newClientInfo(),
		Platform:     clientPlatformName(runtime.GOOS),
		Architecture: clientArchitectureName(runtime.GOARCH),
		Hostname:     hostname,
		MachineID:    machineID,
		OSVersion:    osVersion,
	}
}

// clientPlatformName and clientArchitectureName report the names the
// reference client sends ("linux"/"macos", "x86_64"/"aarch64") so a device
// shows the same text whichever client paired.
func clientPlatformName(goos string) string {
	if goos == "darwin" {
		return "macos"
	}
	return goos
}

func clientArchitectureName(goarch string) string {
	switch goarch {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return goarch
}

// secretDelivery configures one requested secret; a nil Environment sends
// the empty object (normal delivery).
type secretDelivery struct {
	Environment *environmentDelivery `json:"environment,omitempty"`
}

// environmentDelivery is the routing of one environment secret. Only and
// Omit are exclusive; Rename maps stored names to command names; Stdin names
// the stored variable sent to standard input instead of the environment.
type environmentDelivery struct {
	Only   []string          `json:"only,omitempty"`
	Omit   []string          `json:"omit,omitempty"`
	Rename map[string]string `json:"rename,omitempty"`
	Stdin  string            `json:"stdin,omitempty"`
}

func (e *environmentDelivery) isEmpty() bool {
	return e == nil || (e.Only == nil && e.Omit == nil && len(e.Rename) == 0 && e.Stdin == "")
}

// validEnvironmentName rejects what cannot be an environment entry name.
func validEnvironmentName(name string) bool {
	return name != "" && !strings.ContainsAny(name, "=\x00")
}

// validateSecretDeliveries applies the request rules of an Invocation: a
// nonempty set of named secrets; per secret, only/omit exclusive, arrays
// nonempty and unique, rename/stdin sources selected by only and not
// omitted, no source both renamed and sent to stdin; one stdin overall.
func validateSecretDeliveries(secrets map[string]secretDelivery) error {
	if len(secrets) == 0 {
		return errors.New("an invocation must request at least one secret")
	}
	stdinOwner := ""
	for _, name := range protoSortedKeys(secrets) {
		if name == "" {
			return errors.New("a requested secret has an empty name")
		}
		env := secrets[name].Environment
		if env == nil {
			continue
		}
		if env.Only != nil && len(env.Only) == 0 {
			return fmt.Errorf("secret %q: empty only list", name)
		}
		if env.Omit != nil && len(env.Omit) == 0 {
			return fmt.Errorf("secret %q: empty omit list", name)
		}
		if env.Only != nil && env.Omit != nil {
			return fmt.Errorf("secret %q: only and omit cannot be combined", name)
		}
		names := append(append([]string{}, env.Only...), env.Omit...)
		for src, dst := range env.Rename {
			names = append(names, src, dst)
		}
		if env.Stdin != "" {
			names = append(names, env.Stdin)
		}
		for _, n := range names {
			if !validEnvironmentName(n) {
				return fmt.Errorf("secret %q: invalid environment variable name %q", name, n)
			}
		}
		if dup := protoFirstDuplicate(env.Only); dup != "" {
			return fmt.Errorf("secret %q: %q listed twice in only", name, dup)
		}
		if dup := protoFirstDuplicate(env.Omit); dup != "" {
			return fmt.Errorf("secret %q: %q listed twice in omit", name, dup)
		}
		sources := protoSortedKeys(env.Rename)
		if env.Stdin != "" {
			sources = append(sources, env.Stdin)
		}
		for _, src := range sources {
			if env.Only != nil && !slices.Contains(env.Only, src) {
				return fmt.Errorf("secret %q: %q is routed but not selected by only", name, src)
			}
			if slices.Contains(env.Omit, src) {
				return fmt.Errorf("secret %q: %q is both routed and omitted", name, src)
			}
		}
		if env.Stdin != "" {
			if _, renamed := env.Rename[env.Stdin]; renamed {
				return fmt.Errorf("secret %q: %q is both renamed and sent to standard input", name, env.Stdin)
			}
			if stdinOwner != "" {
				return fmt.Errorf("secrets %q and %q both request standard input; at most one can", stdinOwner, name)
			}
			stdinOwner = name
		}
	}
	return nil
}

// execOperation describes the command for approval. It is client-reported
// context, not attestation.
type execOperation struct {
	Type             string   `json:"type"`
	Command          string   `json:"command"`
	Arguments        []string `json:"arguments"`
	WorkingDirectory string   `json:"working_directory"`
	ExecutablePath   string   `json:"executable_path"`
	ExecutableHash   b64std   `json:"executable_hash,omitempty"`
	ExecutableMode   string   `json:"executable_mode"`
	ScriptContents   *string  `json:"script_contents,omitempty"`
	Stdin            string   `json:"stdin"`
	Stdout           string   `json:"stdout"`
	Stderr           string   `json:"stderr"`
}

func validStreamKind(kind string) bool {
	switch kind {
	case streamTerminal, streamNullDevice, streamPipe, streamSocket, streamRegularFile, streamUnknown:
		return true
	}
	return false
}

func (op *execOperation) validate() error {
	if op.Type != "exec" {
		return errors.New("operation type must be exec")
	}
	if op.Command == "" || op.ExecutablePath == "" || op.WorkingDirectory == "" {
		return errors.New("exec operation needs a command, an executable path and a working directory")
	}
	if len(op.ExecutableHash) != 0 && len(op.ExecutableHash) != sha256.Size {
		return errors.New("executable hash must be a SHA-256 digest")
	}
	if op.ExecutableMode != executableBinary && op.ExecutableMode != executableScript {
		return errors.New("executable mode must be BINARY or SCRIPT")
	}
	if op.ScriptContents != nil && op.ExecutableMode != executableScript {
		return errors.New("script contents apply only to SCRIPT mode")
	}
	if !validStreamKind(op.Stdin) || !validStreamKind(op.Stdout) || !validStreamKind(op.Stderr) {
		return errors.New("invalid standard stream kind")
	}
	return nil
}

// invocationRequest is the Invocation plaintext.
type invocationRequest struct {
	clientInfo
	Method          string                    `json:"method"`
	Secrets         map[string]secretDelivery `json:"secrets"`
	Reason          string                    `json:"reason,omitempty"`
	Operation       execOperation             `json:"operation"`
	LauncherChain   []string                  `json:"launcher_chain"`
	InvocationToken secretBytes               `json:"invocation_token"`
}

// newInvocationRequest validates and normalises an Invocation: empty
// routing becomes {}, nil lists become [], and the operation type is exec.
func newInvocationRequest(secrets map[string]secretDelivery, reason string, op execOperation, launchers []string, token []byte) (invocationRequest, error) {
	if err := validateSecretDeliveries(secrets); err != nil {
		return invocationRequest{}, err
	}
	if len(token) != invocationTokenSize {
		return invocationRequest{}, errors.New("invocation token must be 32 bytes")
	}
	if len(launchers) > maxLauncherChain {
		return invocationRequest{}, fmt.Errorf("launcher chain has more than %d entries", maxLauncherChain)
	}
	if op.Type == "" {
		op.Type = "exec"
	}
	if op.Arguments == nil {
		op.Arguments = []string{}
	}
	if err := op.validate(); err != nil {
		return invocationRequest{}, err
	}
	normalised := make(map[string]secretDelivery, len(secrets))
	for name, d := range secrets {
		if d.Environment.isEmpty() {
			d.Environment = nil
		}
		normalised[name] = d
	}
	return invocationRequest{
		clientInfo:      newClientInfo(),
		Method:          methodInvocation,
		Secrets:         normalised,
		Reason:          reason,
		Operation:       op,
		LauncherChain:   append([]string{}, launchers...),
		InvocationToken: bytes.Clone(token),
	}, nil
}

// gitRepositoryContext is advisory GitSign context; every member is
// optional and none of it is signed content.
type gitRepositoryContext struct {
	Remote           string          `json:"remote,omitempty"`
	Worktree         string          `json:"worktree,omitempty"`
	Head             *gitHeadContext `json:"head,omitempty"`
	ChangedPathCount *int            `json:"changed_path_count,omitempty"`
	// A nil list is "not collected"; an empty non-nil list is "no changes"
	// (omitzero keeps the difference on the wire).
	ChangedPaths []gitChangedPath `json:"changed_paths,omitzero"`
}

type gitHeadContext struct {
	Type     string `json:"type"` // BRANCH or DETACHED
	Name     string `json:"name,omitempty"`
	Upstream string `json:"upstream,omitempty"`
}

type gitChangedPath struct {
	Status string `json:"status"` // ADDED, DELETED, MODIFIED, TYPE_CHANGED
	Path   string `json:"path"`
}

func (r *gitRepositoryContext) validate() error {
	if r == nil {
		return nil
	}
	if h := r.Head; h != nil {
		switch {
		case h.Type == "BRANCH" && h.Name != "":
		case h.Type == "DETACHED" && h.Name == "" && h.Upstream == "":
		default:
			return errors.New("repository head must be a named BRANCH or DETACHED")
		}
	}
	if r.ChangedPathCount != nil && *r.ChangedPathCount < 0 {
		return errors.New("negative changed path count")
	}
	if r.ChangedPaths != nil {
		if r.ChangedPathCount == nil || *r.ChangedPathCount != len(r.ChangedPaths) || len(r.ChangedPaths) > maxListedChangedPaths {
			return errors.New("changed paths must be the complete list of at most 50 counted paths")
		}
		for _, p := range r.ChangedPaths {
			switch p.Status {
			case "ADDED", "DELETED", "MODIFIED", "TYPE_CHANGED":
			default:
				return fmt.Errorf("invalid changed path status %q", p.Status)
			}
		}
	}
	return nil
}

// gitSignRequest asks for one SSHSIG signature in the git namespace.
type gitSignRequest struct {
	clientInfo
	Method          string                `json:"method"`
	InvocationID    ULID                  `json:"invocation_id"`
	InvocationToken secretBytes           `json:"invocation_token"`
	Secret          string                `json:"secret"`
	Message         b64std                `json:"message"`
	Repository      *gitRepositoryContext `json:"repository,omitempty"`
}

func newGitSignRequest(invocationID ULID, token []byte, secret string, message []byte, repo *gitRepositoryContext) (gitSignRequest, error) {
	if err := checkInvocationReference(invocationID, token, secret); err != nil {
		return gitSignRequest{}, err
	}
	if err := repo.validate(); err != nil {
		return gitSignRequest{}, err
	}
	return gitSignRequest{
		clientInfo:      newClientInfo(),
		Method:          methodGitSign,
		InvocationID:    invocationID,
		InvocationToken: bytes.Clone(token),
		Secret:          secret,
		Message:         bytes.Clone(message),
		Repository:      repo,
	}, nil
}

func checkInvocationReference(invocationID ULID, token []byte, secret string) error {
	if invocationID.IsZero() {
		return errCryptoZeroID
	}
	if len(token) != invocationTokenSize {
		return errors.New("invocation token must be 32 bytes")
	}
	if secret == "" {
		return errors.New("signing secret name is empty")
	}
	return nil
}

// sshAuthenticateRequest asks for one SSH user-authentication signature.
type sshAuthenticateRequest struct {
	clientInfo
	Method          string      `json:"method"`
	InvocationID    ULID        `json:"invocation_id"`
	InvocationToken secretBytes `json:"invocation_token"`
	Secret          string      `json:"secret"`
	Message         b64std      `json:"message"`
}

// newSSHAuthenticateRequest refuses anything but a well-formed user-auth
// message for the selected key: the device must never become a generic
// signer, and the client checks first.
func newSSHAuthenticateRequest(invocationID ULID, token []byte, secret string, key ssh.PublicKey, message []byte) (sshAuthenticateRequest, error) {
	if err := checkInvocationReference(invocationID, token, secret); err != nil {
		return sshAuthenticateRequest{}, err
	}
	m, err := parseSSHUserAuthMessage(message)
	if err != nil {
		return sshAuthenticateRequest{}, err
	}
	if err := m.checkKey(key); err != nil {
		return sshAuthenticateRequest{}, err
	}
	return sshAuthenticateRequest{
		clientInfo:      newClientInfo(),
		Method:          methodSSHAuthenticate,
		InvocationID:    invocationID,
		InvocationToken: bytes.Clone(token),
		Secret:          secret,
		Message:         bytes.Clone(message),
	}, nil
}

// uploadSecret is the proposed secret of a SecretUpload. Description nil
// means absent (UPDATE keeps the old one); "" proposes removing it.
type uploadSecret struct {
	Name        string                    `json:"name"`
	Description *string                   `json:"description,omitempty"`
	Type        string                    `json:"type"`
	Variables   map[string]uploadVariable `json:"variables,omitempty"`
	PrivateKey  secretText                `json:"private_key,omitempty"`
}

type uploadVariable struct {
	Value secretText `json:"value"`
}

// secretUploadRequest delivers a proposal; acceptance is decided later.
type secretUploadRequest struct {
	clientInfo
	Method string       `json:"method"`
	Mode   string       `json:"mode"`
	Secret uploadSecret `json:"secret"`
}

// newSecretUploadRequest checks the proposal. Error messages name members
// and variables only, never values or key material.
func newSecretUploadRequest(mode string, secret uploadSecret) (secretUploadRequest, error) {
	switch mode {
	case uploadModeCreate, uploadModeUpdate, uploadModeReplace:
	default:
		return secretUploadRequest{}, fmt.Errorf("invalid upload mode %q", mode)
	}
	if secret.Name == "" {
		return secretUploadRequest{}, errors.New("secret name is empty")
	}
	switch secret.Type {
	case secretTypeEnvironment:
		if len(secret.Variables) == 0 {
			return secretUploadRequest{}, errors.New("an environment secret needs at least one variable")
		}
		if secret.PrivateKey != "" {
			return secretUploadRequest{}, errors.New("an environment secret cannot carry a private key")
		}
		for _, name := range protoSortedKeys(secret.Variables) {
			if !validEnvironmentName(name) {
				return secretUploadRequest{}, fmt.Errorf("invalid environment variable name %q", name)
			}
			if strings.ContainsRune(string(secret.Variables[name].Value), 0) {
				return secretUploadRequest{}, fmt.Errorf("value of %q contains a NUL byte", name)
			}
		}
	case secretTypeSSH:
		if len(secret.Variables) != 0 {
			return secretUploadRequest{}, errors.New("an SSH secret cannot carry variables")
		}
		if err := checkUploadPrivateKey(string(secret.PrivateKey)); err != nil {
			return secretUploadRequest{}, err
		}
	default:
		return secretUploadRequest{}, fmt.Errorf("invalid secret type %q", secret.Type)
	}
	return secretUploadRequest{clientInfo: newClientInfo(), Method: methodSecretUpload, Mode: mode, Secret: secret}, nil
}

// checkUploadPrivateKey requires an unencrypted OpenSSH-format key; the
// parser's own error text is not passed on.
func checkUploadPrivateKey(pemText string) error {
	if !strings.HasPrefix(pemText, "-----BEGIN OPENSSH PRIVATE KEY-----") {
		return errors.New("private key must be in OpenSSH format")
	}
	if _, err := ssh.ParseRawPrivateKey([]byte(pemText)); err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return errors.New("private key must not be passphrase-protected")
		}
		return errors.New("private key does not parse")
	}
	return nil
}

// The client-side checks of Agentknock v1 device
// responses (client-device-protocol.md "Authenticated errors",
// "Invocation", "Secret list", "Secret upload", "Pairing activation",
// "Pairing removal"): strict decoding of response members, the error and
// denial forms, and the Invocation response with its environment routing.

// ---- Responses: common decoding ----

// errInvalidResponse marks every response the client cannot validate or
// use; the caller completes ABORTED/INVALID_RESPONSE. Messages built on it
// name members, secrets and variables, never values.
var errInvalidResponse = errors.New("invalid device response")

// invalidResponseError is errInvalidResponse with a detail; keeping the
// detail apart lets a check add context without repeating the prefix.
type invalidResponseError struct{ detail string }

func (e *invalidResponseError) Error() string { return errInvalidResponse.Error() + ": " + e.detail }

func (e *invalidResponseError) Is(target error) bool { return target == errInvalidResponse }

func invalidResponse(format string, args ...any) error {
	return &invalidResponseError{detail: fmt.Sprintf(format, args...)}
}

// invalidWithin prefixes a check failure with the part of the response it
// concerns ("secret \"x\"").
func invalidWithin(where string, err error) error {
	var e *invalidResponseError
	if errors.As(err, &e) {
		return invalidResponse("%s: %s", where, e.detail)
	}
	return invalidResponse("%s: %v", where, err)
}

func invalidInSecret(name string, err error) error {
	return invalidWithin(fmt.Sprintf("secret %q", name), err)
}

// responseOutcome is what an authenticated response decided.
type responseOutcome int

const (
	// outcomeApproved: APPROVED, ACCEPTED, RECEIVED, or a plain success.
	outcomeApproved responseOutcome = iota + 1
	// outcomeDenied: DENIED (with a denial) or REJECTED.
	outcomeDenied
	// outcomeDeviceError: an authenticated {"error","message"}.
	outcomeDeviceError
)

// deviceDenial is a DENIED response's reason and message.
type deviceDenial struct {
	Reason  string
	Message string
}

// deviceError is an authenticated error; unknown codes are kept as-is.
type deviceError struct {
	Code    string
	Message string
}

func (e deviceError) Error() string { return "device error " + e.Code + ": " + e.Message }

// jsonObject is one decoded JSON object with its members still raw, so each
// member's presence and JSON type can be checked exactly (encoding/json
// would silently accept null or a missing member).
type jsonObject map[string]json.RawMessage

// decodeJSONObject never wraps the decoder's error: its text can quote a
// byte of the plaintext, which may be a secret.
func decodeJSONObject(data []byte) (jsonObject, error) {
	if !utf8.Valid(data) {
		return nil, invalidResponse("message is not valid UTF-8")
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, invalidResponse("message is not a JSON object")
	}
	var obj jsonObject
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, invalidResponse("message is not a JSON object")
	}
	return obj, nil
}

func rawJSONString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func rawJSONObject(raw []byte) (jsonObject, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var obj jsonObject
	if json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	return obj, true
}

func (o jsonObject) has(name string) bool {
	_, ok := o[name]
	return ok
}

func (o jsonObject) requiredString(name string) (string, error) {
	raw, ok := o[name]
	if !ok {
		return "", invalidResponse("missing %q", name)
	}
	s, ok := rawJSONString(raw)
	if !ok {
		return "", invalidResponse("%q is not a string", name)
	}
	return s, nil
}

func (o jsonObject) optionalString(name string) (string, bool, error) {
	if !o.has(name) {
		return "", false, nil
	}
	s, err := o.requiredString(name)
	return s, err == nil, err
}

func (o jsonObject) requiredObject(name string) (jsonObject, error) {
	raw, ok := o[name]
	if !ok {
		return nil, invalidResponse("missing %q", name)
	}
	obj, ok := rawJSONObject(raw)
	if !ok {
		return nil, invalidResponse("%q is not an object", name)
	}
	return obj, nil
}

// requiredBinary decodes a base64 member; size < 0 means "at least a tag".
func (o jsonObject) requiredBinary(name string, size int) ([]byte, error) {
	raw, ok := o[name]
	if !ok {
		return nil, invalidResponse("missing %q", name)
	}
	v, err := unmarshalB64(raw)
	if err != nil {
		return nil, invalidResponse("%q is not a base64 string", name)
	}
	if (size >= 0 && len(v) != size) || (size < 0 && len(v) < 16) {
		return nil, invalidResponse("%q has the wrong length", name)
	}
	return v, nil
}

// decodeDeviceResponse parses a response plaintext and splits off the
// authenticated error form, which any method may return.
func decodeDeviceResponse(plaintext []byte) (jsonObject, *deviceError, error) {
	obj, err := decodeJSONObject(plaintext)
	if err != nil {
		return nil, nil, err
	}
	if !obj.has("error") {
		return obj, nil, nil
	}
	code, err := obj.requiredString("error")
	if err != nil {
		return nil, nil, err
	}
	message, err := obj.requiredString("message")
	if err != nil {
		return nil, nil, err
	}
	return nil, &deviceError{Code: code, Message: message}, nil
}

// decodeResultResponse is decodeDeviceResponse for the methods whose
// answer names its "result": that member is read unless the device
// answered with the error form.
func decodeResultResponse(plaintext []byte) (jsonObject, string, *deviceError, error) {
	obj, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil || devErr != nil {
		return nil, "", devErr, err
	}
	result, err := obj.requiredString("result")
	if err != nil {
		return nil, "", nil, err
	}
	return obj, result, nil, nil
}

// decodeDenial reads a DENIED response. The reason set is closed in v1, so
// an unknown reason is an invalid response rather than a guess.
func decodeDenial(obj jsonObject) (deviceDenial, error) {
	reason, err := obj.requiredString("reason")
	if err != nil {
		return deviceDenial{}, err
	}
	switch reason {
	case denialUserDenied, denialPolicyDenied, denialInvalidRequest, denialOther:
	default:
		return deviceDenial{}, invalidResponse("unknown denial reason %q", reason)
	}
	message, err := obj.requiredString("message")
	if err != nil {
		return deviceDenial{}, err
	}
	return deviceDenial{Reason: reason, Message: message}, nil
}

// ---- Invocation response ----

// envValues maps final environment names to delivered values.
type envValues map[string]secretText

// approvedSecret is one approved secret. Variables is what the device
// returned, by stored name; Environment is the result of routing, by final
// name (renames applied, the stdin variable removed). Both are empty for an
// SSH secret.
type approvedSecret struct {
	Name        string
	Type        string
	Description string
	Variables   envValues
	Environment envValues
}

// stdinDelivery is the one value routed to the command's standard input.
type stdinDelivery struct {
	Secret   string
	Variable string // stored name
	Value    secretText
}

// Format prints the routing but never the value. It is defined on the
// struct as well as on secretText because fmt skips Formatters while it
// reports a bad verb on a pointer, which would otherwise expose Value.
func (s stdinDelivery) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "{%s %s [redacted]}", s.Secret, s.Variable)
}

// sshSelection is the invocation's SSH secret: its name and public key.
type sshSelection struct {
	Secret        string
	PublicKey     ssh.PublicKey
	AuthorizedKey string // the public_key text as sent
}

// invocationResponse is a checked Invocation response. For outcomeApproved
// Secrets lists every requested secret in name order.
type invocationResponse struct {
	Outcome responseOutcome
	Denial  deviceDenial
	Error   deviceError
	Secrets []approvedSecret
	Stdin   *stdinDelivery
	SSH     *sshSelection
}

// checkInvocationResponse validates an Invocation response against the
// request's secrets and routes the values. An error wrapping
// errInvalidResponse means the client must not start the command and
// completes ABORTED/INVALID_RESPONSE; any other error is a client bug (the
// request itself was invalid).
func checkInvocationResponse(requested map[string]secretDelivery, plaintext []byte) (*invocationResponse, error) {
	// The routing rules below rely on a valid request (e.g. one stdin).
	if err := validateSecretDeliveries(requested); err != nil {
		return nil, fmt.Errorf("checking a response to an invalid request: %w", err)
	}
	obj, result, devErr, err := decodeResultResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &invocationResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	switch result {
	case resultDenied:
		d, err := decodeDenial(obj)
		if err != nil {
			return nil, err
		}
		return &invocationResponse{Outcome: outcomeDenied, Denial: d}, nil
	case resultApproved:
	default:
		return nil, invalidResponse("unexpected result %q", result)
	}

	secrets, err := obj.requiredObject("secrets")
	if err != nil {
		return nil, err
	}
	for _, name := range protoSortedKeys(requested) {
		if !secrets.has(name) {
			return nil, invalidResponse("secret %q was requested but not returned", name)
		}
	}
	for _, name := range protoSortedKeys(secrets) {
		if _, ok := requested[name]; !ok {
			return nil, invalidResponse("secret %q was returned but not requested", name)
		}
	}

	out := &invocationResponse{Outcome: outcomeApproved}
	for _, name := range protoSortedKeys(secrets) {
		sobj, ok := rawJSONObject(secrets[name])
		if !ok {
			return nil, invalidResponse("secret %q is not an object", name)
		}
		typ, err := sobj.requiredString("type")
		if err != nil {
			return nil, invalidInSecret(name, err)
		}
		desc, _, err := sobj.optionalString("description")
		if err != nil {
			return nil, invalidInSecret(name, err)
		}
		delivered := approvedSecret{Name: name, Type: typ, Description: desc}
		routing := requested[name].Environment
		switch typ {
		case secretTypeEnvironment:
			if delivered.Variables, err = decodeVariables(name, sobj); err != nil {
				return nil, err
			}
			var stdin *stdinDelivery
			if delivered.Environment, stdin, err = routeEnvironmentSecret(name, delivered.Variables, routing); err != nil {
				return nil, err
			}
			if stdin != nil {
				out.Stdin = stdin
			}
		case secretTypeSSH:
			if !routing.isEmpty() {
				return nil, invalidResponse("SSH secret %q cannot honour environment options", name)
			}
			if out.SSH != nil {
				return nil, invalidResponse("more than one SSH secret (%q and %q)", out.SSH.Secret, name)
			}
			text, err := sobj.requiredString("public_key")
			if err != nil {
				return nil, invalidInSecret(name, err)
			}
			key, err := parseOpenSSHPublicKey(text)
			if err != nil {
				return nil, invalidInSecret(name, err)
			}
			out.SSH = &sshSelection{Secret: name, PublicKey: key, AuthorizedKey: text}
		default:
			return nil, invalidResponse("secret %q has unsupported type %q", name, typ)
		}
		out.Secrets = append(out.Secrets, delivered)
	}
	if err := checkFinalNames(out.Secrets); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeVariables reads an environment secret's stored variables.
func decodeVariables(name string, sobj jsonObject) (envValues, error) {
	vars, err := sobj.requiredObject("variables")
	if err != nil {
		return nil, invalidInSecret(name, err)
	}
	values := envValues{}
	for _, v := range protoSortedKeys(vars) {
		vobj, ok := rawJSONObject(vars[v])
		if !ok {
			return nil, invalidResponse("secret %q: variable %q is not an object", name, v)
		}
		value, err := vobj.requiredString("value")
		if err != nil {
			return nil, invalidWithin(fmt.Sprintf("secret %q: variable %q", name, v), err)
		}
		values[v] = secretText(value)
	}
	return values, nil
}

// The client-side checks of the device responses other than Invocation
// (client-device-protocol.md "Secret list", "Secret upload", "Pairing
// activation" and "Pairing removal"): SecretList, SecretUpload,
// PairingFinish and PairingRemove, with the common decoding of
// the Invocation response checks above.

// secretMetadata is one listed secret. Types other than environment and
// ssh are listed by name and type only: the list is display data and a
// newer device may hold kinds this client cannot use.
type secretMetadata struct {
	Name           string
	Description    string
	HasDescription bool // "description" was present (it may be "")
	Type           string
	Variables      []string // environment
	PublicKey      string   // ssh
}

type secretListResponse struct {
	Outcome responseOutcome
	Error   deviceError
	Secrets []secretMetadata // name order
}

func checkSecretListResponse(plaintext []byte) (*secretListResponse, error) {
	obj, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &secretListResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	secrets, err := obj.requiredObject("secrets")
	if err != nil {
		return nil, err
	}
	out := &secretListResponse{Outcome: outcomeApproved, Secrets: []secretMetadata{}}
	for _, name := range protoSortedKeys(secrets) {
		if name == "" {
			return nil, invalidResponse("listed secret has an empty name")
		}
		sobj, ok := rawJSONObject(secrets[name])
		if !ok {
			return nil, invalidResponse("secret %q is not an object", name)
		}
		md := secretMetadata{Name: name}
		if md.Type, err = sobj.requiredString("type"); err != nil {
			return nil, invalidInSecret(name, err)
		}
		if md.Description, md.HasDescription, err = sobj.optionalString("description"); err != nil {
			return nil, invalidInSecret(name, err)
		}
		switch md.Type {
		case secretTypeEnvironment:
			raw, ok := sobj["variables"]
			if !ok || len(raw) == 0 || raw[0] != '[' {
				return nil, invalidResponse("secret %q: \"variables\" is not an array", name)
			}
			var items []json.RawMessage
			if json.Unmarshal(raw, &items) != nil {
				return nil, invalidResponse("secret %q: \"variables\" is not an array", name)
			}
			md.Variables = make([]string, 0, len(items))
			for _, it := range items {
				v, ok := rawJSONString(it)
				if !ok {
					return nil, invalidResponse("secret %q: a variable name is not a string", name)
				}
				if slices.Contains(md.Variables, v) {
					return nil, invalidResponse("secret %q lists %q twice", name, v)
				}
				md.Variables = append(md.Variables, v)
			}
		case secretTypeSSH:
			if md.PublicKey, err = sobj.requiredString("public_key"); err != nil {
				return nil, invalidInSecret(name, err)
			}
		}
		out.Secrets = append(out.Secrets, md)
	}
	return out, nil
}

// resultResponse is a checked PairingFinish, SecretUpload or PairingRemove
// response. outcomeApproved is ACCEPTED, RECEIVED or the PairingRemove {};
// outcomeDenied is REJECTED (Message holds the upload rejection text).
type resultResponse struct {
	Outcome responseOutcome
	Error   deviceError
	Message string
}

func checkResultResponse(plaintext []byte, approved, rejected string, rejectionMessage bool) (*resultResponse, error) {
	obj, result, devErr, err := decodeResultResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &resultResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	switch result {
	case approved:
		return &resultResponse{Outcome: outcomeApproved}, nil
	case rejected:
		r := &resultResponse{Outcome: outcomeDenied}
		if rejectionMessage {
			if r.Message, err = obj.requiredString("message"); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	return nil, invalidResponse("unexpected result %q", result)
}

// checkPairingFinishResponse: ACCEPTED means the device activated the
// pairing; REJECTED leaves the client pairing pending.
func checkPairingFinishResponse(plaintext []byte) (*resultResponse, error) {
	return checkResultResponse(plaintext, resultAccepted, resultRejected, false)
}

// checkSecretUploadResponse: RECEIVED or REJECTED with a message.
func checkSecretUploadResponse(plaintext []byte) (*resultResponse, error) {
	return checkResultResponse(plaintext, resultReceived, resultRejected, true)
}

// checkPairingRemoveResponse: any authenticated object other than the error
// form ({} in v1) means the device removed the pairing.
func checkPairingRemoveResponse(plaintext []byte) (*resultResponse, error) {
	_, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &resultResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	return &resultResponse{Outcome: outcomeApproved}, nil
}

// The SSH side of the client-device-protocol.md
// (client-device-protocol.md "Git signing" and "SSH authentication"): the
// GitSign and SshAuthenticate response checks, SSHSIG verification (OpenSSH
// PROTOCOL.sshsig), the user-authentication message parser (RFC 4252), and
// the SSH wire and public-key helpers they share.

// parseOpenSSHPublicKey accepts exactly one plain public key line
// ("type base64 [comment]"): no options, no certificate, nothing after it.
func parseOpenSSHPublicKey(text string) (ssh.PublicKey, error) {
	if strings.ContainsAny(text, "\r\n") {
		return nil, errors.New("public key is not a single line")
	}
	// With no line break there is nothing after the key; requiring the line
	// to start with the key type also excludes options and leading blanks,
	// which ParseAuthorizedKey would skip.
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(text))
	if err != nil || !strings.HasPrefix(text, key.Type()+" ") {
		return nil, errors.New("public key is not an OpenSSH public key")
	}
	if _, isCert := key.(*ssh.Certificate); isCert {
		return nil, errors.New("public key is a certificate")
	}
	return key, nil
}

// ---- GitSign and SshAuthenticate responses ----

// signatureResponse is a checked GitSign or SshAuthenticate response.
// Armored is set for GitSign (the SSHSIG text as received, for Git's
// signature file); Signature is the verified signature for both.
type signatureResponse struct {
	Outcome   responseOutcome
	Denial    deviceDenial
	Error     deviceError
	Armored   string
	Signature *ssh.Signature
}

// decodeSignatureResponse handles the forms both signing methods share and
// returns the "signature" member of an approval.
func decodeSignatureResponse(plaintext []byte) (*signatureResponse, string, error) {
	obj, result, devErr, err := decodeResultResponse(plaintext)
	if err != nil {
		return nil, "", err
	}
	if devErr != nil {
		return &signatureResponse{Outcome: outcomeDeviceError, Error: *devErr}, "", nil
	}
	switch result {
	case resultDenied:
		d, err := decodeDenial(obj)
		if err != nil {
			return nil, "", err
		}
		return &signatureResponse{Outcome: outcomeDenied, Denial: d}, "", nil
	case resultApproved:
		sig, err := obj.requiredString("signature")
		if err != nil {
			return nil, "", err
		}
		return &signatureResponse{Outcome: outcomeApproved}, sig, nil
	}
	return nil, "", invalidResponse("unexpected result %q", result)
}

// checkGitSignResponse verifies an approved SSHSIG over message, in the git
// namespace, by the selected key.
func checkGitSignResponse(plaintext []byte, key ssh.PublicKey, message []byte) (*signatureResponse, error) {
	r, armored, err := decodeSignatureResponse(plaintext)
	if err != nil || r.Outcome != outcomeApproved {
		return r, err
	}
	sig, err := verifySSHSIG(armored, key, sshsigNamespaceGit, message)
	if err != nil {
		return nil, invalidResponse("signature: %v", err)
	}
	r.Armored = armored
	r.Signature = sig
	return r, nil
}

// checkSSHAuthenticateResponse verifies an approved SSH signature blob over
// the exact user-auth message, with the algorithm that message names.
func checkSSHAuthenticateResponse(plaintext []byte, key ssh.PublicKey, message []byte) (*signatureResponse, error) {
	m, err := parseSSHUserAuthMessage(message)
	if err != nil {
		return nil, err
	}
	if err := m.checkKey(key); err != nil {
		return nil, err
	}
	r, encoded, err := decodeSignatureResponse(plaintext)
	if err != nil || r.Outcome != outcomeApproved {
		return r, err
	}
	blob, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, invalidResponse("signature is not base64")
	}
	sig, err := parseSSHSignatureBlob(blob)
	if err != nil {
		return nil, invalidResponse("signature: %v", err)
	}
	if sig.Format != m.Algorithm {
		return nil, invalidResponse("signature algorithm %q differs from the requested %q", sig.Format, m.Algorithm)
	}
	if err := checkSignatureAlgorithm(key, sig); err != nil {
		return nil, invalidResponse("signature: %v", err)
	}
	if err := key.Verify(message, sig); err != nil {
		return nil, invalidResponse("signature does not verify")
	}
	r.Signature = sig
	return r, nil
}

// sshWire reads SSH wire encodings (RFC 4251); any short read latches bad.
type sshWire struct {
	b   []byte
	bad bool
}

func (r *sshWire) uint32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *sshWire) byte() byte {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *sshWire) string() []byte {
	n := r.uint32()
	if r.bad || uint64(n) > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// done reports a complete read with no trailing bytes.
func (r *sshWire) done() bool { return !r.bad && len(r.b) == 0 }

func appendSSHString(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// parseSSHSignatureBlob reads "string format, string signature" with
// nothing after it (so no security-key flags and counter).
func parseSSHSignatureBlob(blob []byte) (*ssh.Signature, error) {
	r := sshWire{b: blob}
	format := r.string()
	sig := r.string()
	if !r.done() || len(format) == 0 || len(sig) == 0 {
		return nil, errors.New("malformed SSH signature blob")
	}
	return &ssh.Signature{Format: string(format), Blob: bytes.Clone(sig)}, nil
}

// checkSignatureAlgorithm pins the algorithm to the key: RSA only with
// SHA-2 (never ssh-rsa/SHA-1), Ed25519 with a 64-byte signature, other
// types with their own name; security keys are refused.
func checkSignatureAlgorithm(key ssh.PublicKey, sig *ssh.Signature) error {
	switch kt := key.Type(); {
	case kt == ssh.KeyAlgoRSA:
		if sig.Format != ssh.KeyAlgoRSASHA256 && sig.Format != ssh.KeyAlgoRSASHA512 {
			return fmt.Errorf("RSA signature algorithm %q is not rsa-sha2-256 or rsa-sha2-512", sig.Format)
		}
	case strings.HasPrefix(kt, "sk-"):
		return errors.New("security-key signatures are not supported")
	case sig.Format != kt:
		return fmt.Errorf("signature algorithm %q does not match key type %q", sig.Format, kt)
	case kt == ssh.KeyAlgoED25519 && len(sig.Blob) != 64:
		return errors.New("Ed25519 signature is not 64 bytes")
	}
	return nil
}

const (
	sshsigArmorBegin = "-----BEGIN SSH SIGNATURE-----"
	sshsigArmorEnd   = "-----END SSH SIGNATURE-----"
	sshsigMagic      = "SSHSIG"
)

// verifySSHSIG parses an armored SSHSIG (OpenSSH PROTOCOL.sshsig) and
// verifies it over message with key in namespace.
func verifySSHSIG(armored string, key ssh.PublicKey, namespace string, message []byte) (*ssh.Signature, error) {
	lines := strings.Split(strings.TrimSuffix(armored, "\n"), "\n")
	if len(lines) < 3 || lines[0] != sshsigArmorBegin || lines[len(lines)-1] != sshsigArmorEnd {
		return nil, errors.New("not an armored SSH signature")
	}
	var body strings.Builder
	for _, l := range lines[1 : len(lines)-1] {
		if l == "" {
			return nil, errors.New("not an armored SSH signature")
		}
		body.WriteString(l)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(body.String())
	if err != nil {
		return nil, errors.New("armored SSH signature is not base64")
	}
	if !bytes.HasPrefix(raw, []byte(sshsigMagic)) {
		return nil, errors.New("missing SSHSIG magic")
	}
	r := sshWire{b: raw[len(sshsigMagic):]}
	ver := r.uint32()
	pub := r.string()
	ns := r.string()
	reserved := r.string()
	hashAlg := r.string()
	sigBlob := r.string()
	if !r.done() || ver != 1 {
		return nil, errors.New("malformed SSHSIG blob")
	}
	if !bytes.Equal(pub, key.Marshal()) {
		return nil, errors.New("signed by a different key")
	}
	if string(ns) != namespace {
		return nil, fmt.Errorf("namespace %q, want %q", ns, namespace)
	}
	var digest []byte
	switch string(hashAlg) {
	case "sha512":
		d := sha512.Sum512(message)
		digest = d[:]
	case "sha256":
		d := sha256.Sum256(message)
		digest = d[:]
	default:
		return nil, fmt.Errorf("unsupported SSHSIG hash %q", hashAlg)
	}
	sig, err := parseSSHSignatureBlob(sigBlob)
	if err != nil {
		return nil, err
	}
	if err := checkSignatureAlgorithm(key, sig); err != nil {
		return nil, err
	}
	signed := []byte(sshsigMagic)
	signed = appendSSHString(signed, ns)
	signed = appendSSHString(signed, reserved)
	signed = appendSSHString(signed, hashAlg)
	signed = appendSSHString(signed, digest)
	if err := key.Verify(signed, sig); err != nil {
		return nil, errors.New("signature does not verify")
	}
	return sig, nil
}

// sshUserAuthMessage is the SSH_MSG_USERAUTH_REQUEST an agent is asked to
// sign (RFC 4252 section 7, plus OpenSSH's host-bound variant).
type sshUserAuthMessage struct {
	SessionID []byte
	User      string
	Method    string // "publickey" or "publickey-hostbound-v00@openssh.com"
	Algorithm string // ssh-ed25519, rsa-sha2-256 or rsa-sha2-512
	PublicKey []byte
	HostKey   []byte // host-bound form only
}

const (
	sshMsgUserAuthRequest  = 50
	sshUserAuthPublicKey   = "publickey"
	sshUserAuthHostBound   = "publickey-hostbound-v00@openssh.com"
	sshUserAuthServiceName = "ssh-connection"
)

// parseSSHUserAuthMessage accepts exactly the two forms of the protocol,
// with no trailing bytes, so SshAuthenticate can never sign anything else.
func parseSSHUserAuthMessage(msg []byte) (*sshUserAuthMessage, error) {
	bad := errors.New("not an SSH public-key user-authentication request")
	r := sshWire{b: msg}
	m := &sshUserAuthMessage{}
	m.SessionID = r.string()
	if r.byte() != sshMsgUserAuthRequest {
		return nil, bad
	}
	m.User = string(r.string())
	service := string(r.string())
	m.Method = string(r.string())
	hasSig := r.byte()
	m.Algorithm = string(r.string())
	m.PublicKey = r.string()
	if m.Method == sshUserAuthHostBound {
		m.HostKey = r.string()
	}
	if !r.done() || len(m.SessionID) == 0 || service != sshUserAuthServiceName || hasSig != 1 || len(m.PublicKey) == 0 {
		return nil, bad
	}
	switch m.Method {
	case sshUserAuthPublicKey:
	case sshUserAuthHostBound:
		h := sshWire{b: m.HostKey}
		alg := h.string()
		if h.bad || len(alg) == 0 || len(h.b) == 0 {
			return nil, errors.New("host-bound request has an empty server host key")
		}
	default:
		return nil, bad
	}
	switch m.Algorithm {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512:
	default:
		return nil, fmt.Errorf("unsupported signature algorithm %q", m.Algorithm)
	}
	return m, nil
}

// checkKey requires the request to be for key, with an algorithm that key
// can produce.
func (m *sshUserAuthMessage) checkKey(key ssh.PublicKey) error {
	if !bytes.Equal(m.PublicKey, key.Marshal()) {
		return errors.New("user-authentication request is for a different key")
	}
	switch key.Type() {
	case ssh.KeyAlgoED25519:
		if m.Algorithm == ssh.KeyAlgoED25519 {
			return nil
		}
	case ssh.KeyAlgoRSA:
		if m.Algorithm == ssh.KeyAlgoRSASHA256 || m.Algorithm == ssh.KeyAlgoRSASHA512 {
			return nil
		}
	}
	return fmt.Errorf("algorithm %q does not fit a %s key", m.Algorithm, key.Type())
}

// The completions the client sends after a response (client-device-protocol.md,
// "Paired exchanges", and each method's section): the result it acted on,
// or ABORTED with a reason.

// resultCompletion is every completion with a result: APPROVED, repeated
// DENIED, ABORTED, PairingFinish ACCEPTED, and the SecretUpload echo.
type resultCompletion struct {
	clientInfo
	Result  string  `json:"result"`
	Reason  string  `json:"reason,omitempty"`
	Message *string `json:"message,omitempty"`
}

// infoCompletion carries only the client software information
// (SecretList, PairingRemove).
type infoCompletion struct {
	clientInfo
}

func newInfoCompletion() infoCompletion { return infoCompletion{newClientInfo()} }

// newApprovedCompletion confirms an approval without repeating any value
// or signature.
func newApprovedCompletion() resultCompletion {
	return resultCompletion{clientInfo: newClientInfo(), Result: resultApproved}
}

// newDeniedCompletion repeats the complete denial.
func newDeniedCompletion(d deviceDenial) resultCompletion {
	msg := d.Message
	return resultCompletion{clientInfo: newClientInfo(), Result: resultDenied, Reason: d.Reason, Message: &msg}
}

// newAbortedCompletion reports a client-side abort. The message is sent to
// the device: callers must not put secret values in it.
func newAbortedCompletion(reason, message string) resultCompletion {
	return resultCompletion{clientInfo: newClientInfo(), Result: resultAborted, Reason: reason, Message: &message}
}

// newDeviceErrorCompletion is the ABORTED/CLIENT_ERROR completion sent after
// an authenticated device error.
func newDeviceErrorCompletion(e deviceError) resultCompletion {
	return newAbortedCompletion(abortClientError, e.Error())
}

func newPairingFinishCompletion() resultCompletion {
	return resultCompletion{clientInfo: newClientInfo(), Result: resultAccepted}
}

// newSecretUploadCompletion repeats the upload result and, for REJECTED,
// its message.
func newSecretUploadCompletion(r *resultResponse) resultCompletion {
	if r.Outcome == outcomeDenied {
		msg := r.Message
		return resultCompletion{clientInfo: newClientInfo(), Result: resultRejected, Message: &msg}
	}
	return resultCompletion{clientInfo: newClientInfo(), Result: resultReceived}
}

// The outcome of an Invocation response (client-device-protocol.md,
// "Invocation"): which completion to send and what to tell the user. The
// checks themselves are checkInvocationResponse's.

// invocationMethod is the Invocation exchange for askDevice: the response
// is checked against the request's secrets and routing, and the completion
// repeats the device's decision.
func invocationMethod(inv invocationRequest, ahead *relayAhead) pairedMethod[*invocationResponse] {
	return pairedMethod[*invocationResponse]{
		request: inv,
		ahead:   ahead,
		check: func(plaintext []byte) (*invocationResponse, error) {
			return checkInvocationResponse(inv.Secrets, plaintext)
		},
		settle: func(r *invocationResponse) (any, error) { return approvedOrDenied(r.Outcome, r.Denial) },
	}
}

// invocationOutcome is what a run may use of askDevice's answer: the
// approval, or the error to report (a failed check says the command did
// not run; a denial says why on its own).
func invocationOutcome(resp *invocationResponse, err error) (*invocationResponse, error) {
	var answered *answeredError
	switch {
	case err == nil:
		return resp, nil
	case resp == nil && errors.As(err, &answered):
		return nil, err
	}
	return nil, err
}

// denialError words each denial reason for the person or agent that ran
// agentknock, with its failure class. The device's message is shown as
// the device sent it, escaped, once: not when it only repeats what the
// reason already says.
func denialError(d deviceDenial) error {
	var text string
	class := failDenied
	switch d.Reason {
	case denialUserDenied:
		text, class = "The request was denied on the device", failDeniedByPerson
	case denialPolicyDenied:
		text, class = "The device's policy denied the request", failDeniedByPolicy
	case denialInvalidRequest:
		text, class = "The device refused the request as invalid", failInvalidRequest
	default:
		text = "The device denied the request"
	}
	message := strings.TrimSpace(printable(d.Message))
	if bare := strings.TrimRight(message, ". "); bare != "" && !strings.EqualFold(bare, text) {
		text += ": " + message
	}
	return classify(class, errors.New(sentence(text)))
}

// One protected exchange with the paired device (client-device-protocol.md,
// "Paired exchanges"; cryptosystem.md, "Paired exchange" and "PSK rotation"):
// seal the request, carry it through the relay, open and acknowledge the
// response, and send the completion. SIGINT and SIGTERM cancel the wait;
// the completion then goes out with a short bound so the process exits
// promptly even when the relay never acknowledges it.

// defaultRelayURL is the hosted relay.
const defaultRelayURL = "wss://relay.agentknock.dev"

// progressInterval is how often a wait for the device reports itself.
const progressInterval = 30 * time.Second

// relayURLFor picks the relay: AGENTKNOCK_RELAY_URL, else the one stored
// with the pairing, else the hosted relay.
func relayURLFor(stored string) (relayEndpoint, error) {
	raw := defaultRelayURL
	if stored != "" {
		raw = stored
	}
	if v := os.Getenv("AGENTKNOCK_RELAY_URL"); v != "" {
		raw = v
	}
	u, err := parseRelayURL(raw)
	if err != nil {
		return relayEndpoint{}, classify(failRelayAddress, err)
	}
	return relayEndpoint{BaseURL: u}, nil
}

// deviceCall is one paired exchange in progress.
type deviceCall struct {
	x    *pairedExchange
	rx   *relayExchange
	done bool // a completion was sent (or given up on)
}

// relayProgress turns transport events into request stages; the ones
// without a stage (a reconnection) are --verbose details. Stages only
// advance (output.setStage): a reconnection after the device received the
// request does not go back to waiting for delivery. A response is
// "received" for the user only once it passed the client's checks
// (askDevice sets that stage), so nothing says "Confirming receipt" of a
// response the client then refuses.
func relayProgress(out *output) relayOptions {
	return relayOptions{Progress: func(event string) {
		traceStep("relay: " + event)
		switch event {
		case "connected", "request acknowledged by relay":
			out.setStage(stageWaitingForDelivery)
		case "device received request":
			out.setStage(stageWaitingForResponse)
		case "response received":
			out.detail("relay: %s", event)
		default:
			out.detail("relay: %s", event)
		}
	}}
}

// pairedMethod is one method of a paired exchange, as askDevice runs it.
type pairedMethod[R checkedResponse] struct {
	request any
	// rerun, for PairingFinish and PairingRemove, is the command whose rerun
	// resends the stored request after a crash (this file); the
	// other methods send a new request each time.
	rerun, method string
	// check decodes and checks the response plaintext.
	check func(plaintext []byte) (R, error)
	// settle acts on a usable response, locally, and returns the
	// completion that ends the exchange. An error with a completion is the
	// outcome to report (a denial); an error without one is a local failure
	// after the answer, and the exchange ends ABORTED/CLIENT_ERROR.
	settle func(r R) (completion any, err error)
	// ahead is the relay socket a run dialed while it prepared the request
	// (relay.go); nil dials when the request is ready.
	ahead *relayAhead
}

// answeredError is a failure after the device answered: the exchange is
// over and its completion sent, unlike a failure of the call itself. local
// says the response was usable and the client's own work on it failed.
type answeredError struct {
	err   error
	local bool
}

func (e *answeredError) Error() string { return e.err.Error() }
func (e *answeredError) Unwrap() error { return e.err }

// askDevice is every paired exchange: the call, the response check, the
// local work on the answer and exactly one completion on every path once
// the device answered (the call itself aborts what it cannot finish). It
// returns the checked response and the request id (which later SSH and
// Git exchanges name as the invocation).
func askDevice[R checkedResponse](home string, p *pairingState, m pairedMethod[R], watch *signalWatch, out *output) (R, ULID, error) {
	var zero R
	var call *deviceCall
	var rec *outstandingRequest
	var plaintext []byte
	var err error
	if m.rerun != "" {
		call, rec, plaintext, err = callDeviceDurable(home, p, m.method, m.rerun, m.request, watch, out)
	} else {
		call, plaintext, err = callDevice(home, p, m.request, m.ahead, watch, out)
	}
	if err != nil {
		return zero, ULID{}, err
	}
	id := call.x.RequestID()
	// A stored request that was answered is not sent again, whatever the
	// answer; a successful settle clears it with its own write.
	forget := func() {
		if rec != nil {
			if cerr := clearOutstanding(home, rec.RequestID); cerr != nil {
				out.failure("%v", cerr)
			}
		}
	}
	r, err := m.check(plaintext)
	traceStep("response checked")
	if completion, failure := responseFailure(err, r); failure != nil {
		call.finish(completion, out)
		forget()
		return zero, id, &answeredError{err: failure}
	}
	completion, err := m.settle(r)
	if completion != nil {
		out.setStage(stageCompleting)
	}
	if completion == nil {
		if err == nil {
			err = errors.New("the client could not act on the response")
		}
		call.abort(abortClientError, "the client could not act on the response", out)
		forget()
		return zero, id, &answeredError{err, true}
	}
	call.finish(completion, out)
	traceStep("completion acknowledged")
	if err != nil {
		forget()
		return r, id, &answeredError{err: err}
	}
	return r, id, nil
}

// approvedOrDenied settles the methods whose answer is a decision
// (Invocation, SshAuthenticate, GitSign): the completion repeats it.
func approvedOrDenied(outcome responseOutcome, denial deviceDenial) (any, error) {
	if outcome == outcomeDenied {
		return newDeniedCompletion(denial), denialError(denial)
	}
	return newApprovedCompletion(), nil
}

// callDevice sends request (a method plaintext) with the pairing's keys and
// waits for the response plaintext. On every failure after the request may
// have reached the relay, it has already sent the matching ABORTED
// completion. The caller completes a successful call with finish.
func callDevice(home string, p *pairingState, request any, ahead *relayAhead, watch *signalWatch, out *output) (*deviceCall, []byte, error) {
	out.setStage(stagePreparing)
	requestID, err := newULID()
	if err != nil {
		return nil, nil, err
	}
	var rotationEnc []byte
	if p.RotationKey != "" {
		rotationEnc, _ = base64.StdEncoding.DecodeString(p.RotationKey)
	}
	keys := pairedKeys{DeviceID: p.DeviceID, DeviceKey: p.DeviceKey, ClientID: p.ClientID, PSK: p.ClientPSK}
	x, payload, err := sealProtectedRequest(keys, requestID, rotationEnc, request)
	if err != nil {
		return nil, nil, err
	}
	return exchangeWithDevice(home, p, x, payload, p.RotationKey, nil, ahead, watch, out)
}

// exchangeWithDevice carries a sealed request through the relay. With a
// durable request (this file) nothing is aborted on a failure the
// request may survive: a rerun resends it.
func exchangeWithDevice(home string, p *pairingState, x *pairedExchange, payload pairedRequestPayload, rotationKey string, durable *outstandingRequest, ahead *relayAhead, watch *signalWatch, out *output) (*deviceCall, []byte, error) {
	ep, err := relayURLFor(p.RelayURL)
	if err != nil {
		return nil, nil, err
	}
	ep.Token = p.ClientToken
	requestID := x.RequestID()
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, err
	}
	traceStep("HPKE seal")
	call := &deviceCall{x: x}

	rx, raw, err := waitForRelay(func(ctx context.Context) (*relayExchange, json.RawMessage, error) {
		opt := relayProgress(out)
		opt.Resend = durable != nil && durable.resent
		opt.Ahead = ahead
		rx, err := openExchange(ctx, ep, deviceRoute(p.DeviceID.String(), p.ClientID.String()), p.ClientID.String(), requestID.String(), body, opt)
		if err != nil {
			return rx, nil, err
		}
		raw, err := rx.awaitResponse(ctx)
		return rx, raw, err
	}, watch, out)
	call.rx = rx
	if durable != nil && err != nil {
		return nil, nil, durable.failed(home, call, err, out)
	}
	var intr *interrupted
	if errors.As(err, &intr) {
		call.abort(abortCancelled, "interrupted by "+signalName(intr.sig), out)
		return nil, nil, err
	}
	if err != nil {
		call.abort(abortOther, "the relay exchange failed", out)
		return nil, nil, describeRelayError(err)
	}
	traceStep("relay: response handed over")
	plaintext, report, err := openPairedResponse(x, raw)
	if report != nil {
		if report.Code == reportAuthenticationFailed {
			noteKeyRefused(home, p.ClientID, out)
		}
		if durable != nil {
			call.close()
			return nil, nil, unauthenticatedReport(report.Code, report.Message, "; "+durable.rerunAdvice())
		}
		call.abort(abortOther, "unauthenticated error report", out)
		return nil, nil, unauthenticatedReport(report.Code, report.Message, "")
	}
	if err != nil {
		call.abort(abortInvalidResponse, "the response could not be authenticated", out)
		return nil, nil, classify(failResponseInvalid, fmt.Errorf("the device's response could not be authenticated (%v)", err))
	}
	// A response that opened under the current PSK confirms a pending
	// rotation (the device now holds the same PSK) and ends an earlier
	// refusal of the key.
	if rotationKey != "" || p.KeyRefusedAt != 0 {
		if err := confirmKey(home, rotationKey, out); err != nil {
			out.failure("%v", err)
		}
	}
	return call, plaintext, nil
}

// waitForRelay runs the relay work on its own goroutine so that this one
// can watch signals and report progress every progressInterval. The
// exchange, when there is one, is handed back only after that goroutine has
// finished with it (relayExchange is not for concurrent use). A signal
// comes back as *interrupted.
func waitForRelay(work func(ctx context.Context) (*relayExchange, json.RawMessage, error), watch *signalWatch, out *output) (*relayExchange, json.RawMessage, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		rx  *relayExchange
		raw json.RawMessage
		err error
	}
	done := make(chan result, 1)
	go func() {
		rx, raw, err := work(ctx)
		done <- result{rx, raw, err}
	}()
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.rx, r.raw, r.err
		case <-tick.C:
			out.heartbeat()
		case sig := <-watch.ch:
			cancel()
			r := <-done
			return r.rx, nil, &interrupted{sig: toSignal(sig)}
		}
	}
}

// close drops the exchange without a completion.
func (c *deviceCall) close() {
	if c.rx != nil {
		c.done = true
		c.rx.close()
	}
}

// finish sends the completion for an authenticated response.
func (c *deviceCall) finish(completion any, out *output) {
	if c.done || c.rx == nil {
		return
	}
	c.done = true
	defer c.rx.close()
	pc, err := sealProtectedCompletion(c.x, completion)
	if err == nil {
		var body []byte
		if body, err = json.Marshal(pc); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = c.rx.complete(ctx, body)
			cancel()
		}
	}
	if err != nil {
		out.detail("the completion was not confirmed by the relay: %v", err)
		return
	}
	out.setStage(stageCompleted)
}

// abort sends an ABORTED completion within the short bound: the context
// is already done, so the transport gives it only its completion bound.
func (c *deviceCall) abort(reason, message string, out *output) {
	if c.done || c.rx == nil {
		return
	}
	c.done = true
	defer c.rx.close()
	pc, err := sealProtectedCompletion(c.x, newAbortedCompletion(reason, message))
	if err != nil {
		return
	}
	body, err := json.Marshal(pc)
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.rx.complete(ctx, body); err != nil {
		out.detail("the aborted completion was not confirmed by the relay: %v", err)
	}
}

// describeRelayError words transport failures for the user.
func describeRelayError(err error) error {
	switch {
	case errors.Is(err, errClientInactive):
		return fmt.Errorf("the relay reports that this paired client is inactive (the pairing was removed or suspended on the device): %w", err)
	case errors.Is(err, errRelayUnavailable):
		return fmt.Errorf("the relay could not be reached: %w", err)
	}
	return fmt.Errorf("the relay exchange failed: %w", err)
}

// activePairing reads the pairing for a paired operation and rotates its
// PSK when it is older than pskRotationInterval.
func activePairing(home string, out *output) (*pairingState, error) {
	p, err := readPairingFile(home)
	return checkActivePairing(home, p, err, out)
}

// checkActivePairing is activePairing for a pairing file already read.
func checkActivePairing(home string, p *pairingState, err error, out *output) (*pairingState, error) {
	if errors.Is(err, errNoPairing) {
		//lint:ignore ST1005 "Agentknock" is a name, and the line starts the report
		return nil, classify(failNotPaired, errors.New("Agentknock isn't paired with a device"))
	}
	if err != nil {
		return nil, err
	}
	if p.Pending {
		//lint:ignore ST1005 the line starts the report, as the reference's does
		return nil, classify(failPairingPending, errors.New("Pairing is waiting for confirmation on the device"))
	}
	if p.RotationKey == "" && time.Since(time.Unix(int64(p.RotatedAt), 0)) > pskRotationInterval {
		if rotated, err := rotatePSK(home, p.ClientID, out); err != nil {
			return nil, err
		} else if rotated != nil {
			out.detail("rotating the pairing key")
			p = rotated
		}
	}
	return p, nil
}

// pairingAhead reads the pairing file and dials its relay route in the
// background while a run builds and seals its request (relay.go);
// nothing is sent before the request is ready. Its errors are the ones
// activePairing would report, reported where it would have been called.
type pairingAhead struct {
	done  chan struct{}
	p     *pairingState
	err   error
	relay *relayAhead
}

func readPairingAhead(home string) *pairingAhead {
	a := &pairingAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.p, a.err = readPairingFile(home)
		if a.err != nil || a.p.Pending {
			return
		}
		// A relay URL that does not parse is reported by the exchange.
		if ep, err := relayURLFor(a.p.RelayURL); err == nil {
			ep.Token = a.p.ClientToken
			a.relay, _ = dialRelayAhead(ep, deviceRoute(a.p.DeviceID.String(), a.p.ClientID.String()), a.p.ClientID.String(), relayOptions{})
		}
	}()
	return a
}

// pairing is activePairing's answer for the file read ahead.
func (a *pairingAhead) pairing(home string, out *output) (*pairingState, error) {
	<-a.done
	return checkActivePairing(home, a.p, a.err, out)
}

// close ends a dial that no exchange took.
func (a *pairingAhead) close() {
	<-a.done
	a.relay.close()
}

// rotatePSK derives and stores the next PSK and its rotation_key under the
// lock; it is sent with every request until a response confirms it.
func rotatePSK(home string, clientID ULID, out *output) (*pairingState, error) {
	s, err := lockStateDirFor(home, out)
	if err != nil {
		return nil, err
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil {
		return nil, err
	}
	// Another process may have rotated or replaced the pairing meanwhile.
	if p.Pending || p.ClientID != clientID || p.RotationKey != "" || time.Since(time.Unix(int64(p.RotatedAt), 0)) <= pskRotationInterval {
		return p, nil
	}
	r, err := rotatePairingPSK(pairedKeys{DeviceID: p.DeviceID, DeviceKey: p.DeviceKey, ClientID: p.ClientID, PSK: p.ClientPSK})
	if err != nil {
		return nil, err
	}
	p.ClientPSK = r.NewPSK
	p.RotationKey = base64.StdEncoding.EncodeToString(r.Enc)
	p.RotatedAt = uint64(time.Now().Unix())
	if err := s.writePairing(p); err != nil {
		return nil, err
	}
	return p, nil
}

// confirmKey records an authenticated response: rotation_key is cleared if
// it is still the one just confirmed, and key_refused_at in any case.
func confirmKey(home, rotationKey string, out *output) error {
	s, err := lockStateDirFor(home, out)
	if err != nil {
		return err
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil || (p.RotationKey != rotationKey && p.KeyRefusedAt == 0) {
		return err
	}
	if p.RotationKey == rotationKey {
		p.RotationKey = ""
	}
	p.KeyRefusedAt = 0
	return s.writePairing(p)
}

// reportAuthenticationFailed is the report a device sends for a request it
// cannot authenticate (client-device-protocol.md, "Unauthenticated error
// reports"): with this client's keys, because another copy of this home
// rotated the PSK, or because the pairing was replaced on the device.
const reportAuthenticationFailed = "AUTHENTICATION_FAILED"

// unauthenticatedReport words an error report that did not come with the
// device's authentication, classified by its code.
func unauthenticatedReport(code, message, advice string) error {
	err := fmt.Errorf("the relay delivered an unauthenticated error report (%s: %s); it may come from the device or be forged by the relay%s", printable(code), printable(message), advice)
	switch code {
	case reportAuthenticationFailed:
		return classify(failKeyRefused, fmt.Errorf("%w. If it is the device's, the device no longer accepts this client's key: another copy of this Agentknock home may have rotated it, or the pairing was replaced on the device", err))
	case "UNSUPPORTED_PROTOCOL_VERSION":
		return classify(failProtocolVersion, err)
	}
	return classify(failUnauthenticated, err)
}

// noteKeyRefused records in the pairing that the device (or, since the
// report is unauthenticated, possibly the relay) refused this client's
// key, so that `pairing status` says so and what to do. The keys and a
// pending rotation stay as they are: a forged report must not break a
// pairing that works, and the next authenticated response clears the
// note (confirmKey).
func noteKeyRefused(home string, clientID ULID, out *output) {
	s, err := lockStateDirFor(home, out)
	if err != nil {
		out.detail("cannot note the refused key: %v", err)
		return
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil || p.ClientID != clientID {
		return
	}
	p.KeyRefusedAt = uint64(time.Now().Unix())
	if err := s.writePairing(p); err != nil {
		out.detail("cannot note the refused key: %v", err)
	}
}

// checkedResponse is any method's checked response; nil-safe.
type checkedResponse interface {
	deviceOutcome() (responseOutcome, deviceError)
}

func (r *invocationResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}

func (r *resultResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}

func (r *secretListResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}

// responseFailure is what every method shares after its response check: a
// failed check or an authenticated device error ends the exchange with the
// ABORTED completion it calls for (INVALID_RESPONSE or CLIENT_ERROR). A nil
// failure means the response can be used.
func responseFailure(err error, r checkedResponse) (completion resultCompletion, failure error) {
	outcome, devErr := r.deviceOutcome()
	switch {
	case errors.Is(err, errInvalidResponse):
		return newAbortedCompletion(abortInvalidResponse, "the response failed the client's checks"),
			classify(failResponseInvalid, fmt.Errorf("the device's response is invalid (%v)", err))
	case err != nil:
		return newAbortedCompletion(abortClientError, "the client could not check the response"), err
	case outcome == outcomeDeviceError:
		return newDeviceErrorCompletion(devErr),
			classify(failDeviceError, fmt.Errorf("the device reported an error: %s: %s", printable(devErr.Code), printable(devErr.Message)))
	}
	return resultCompletion{}, nil
}

func (r *signatureResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}

// Requests that are safe to retry after a crash (cryptosystem.md, "Paired
// exchange": "a retry resends the identical bytes, never a new seal. A
// receiver that already accepted a slot answers from retained state and
// does not re-process"; client-relay-protocol.md, "Reconnection and
// recovery"). Before a PairingFinish or PairingRemove request first leaves,
// what rebuilds it exactly (request id, the randomness of the seal, the PSK
// and rotation key used, the plaintext) is stored in pairing.json as
// outstanding_request. A rerun of the command, even after kill -9, resends
// the identical request and gets the device's answer to the first one,
// instead of racing it with a new request id. The record goes when an
// authenticated answer has been handled, the relay says the exchange is
// gone, or a signal cancels the request (with an ABORTED completion, as
// for any request).
//
// These two methods carry no secret in either direction, so the record
// holds nothing a secret could be recovered from. SecretUpload carries the
// value, and Invocation, GitSign and SshAuthenticate are a new decision
// each time: a retry of those is a new request.

// outstandingRetryWindow is how long a stored request is resent; the
// device keeps exchanges for a day, and past this a new request is safer
// than one the relay no longer admits.
const outstandingRetryWindow = 24 * time.Hour

type outstandingRequest struct {
	Method      string `json:"method"`
	RequestID   ULID   `json:"request_id"`
	Seed        []byte `json:"seed"` // keys the stream the seal reads
	PSK         []byte `json:"psk"`
	RotationKey string `json:"rotation_key,omitempty"`
	Plaintext   []byte `json:"plaintext"`
	CreatedAt   uint64 `json:"created_at"`
	// Command names the command that resends it, for messages.
	Command string `json:"command"`

	resent bool // taken from the file: an earlier process may have sent it
}

func (r *outstandingRequest) check() error {
	switch {
	case r == nil:
		return nil
	case r.Method != methodPairingFinish && r.Method != methodPairingRemove:
		return fmt.Errorf("method %q cannot be resent", r.Method)
	case r.RequestID.IsZero():
		return errors.New("request_id is required")
	case len(r.Seed) != 32 || len(r.PSK) != 32:
		return errors.New("seed and psk must be 32 bytes")
	case len(r.Plaintext) == 0 || len(r.Plaintext) > 4096:
		return errors.New("plaintext must be 1 to 4096 bytes")
	}
	return nil
}

// seedStream is the deterministic randomness of one stored request.
type seedStream struct{ c *chacha20.Cipher }

func newSeedStream(seed []byte) (*seedStream, error) {
	c, err := chacha20.NewUnauthenticatedCipher(seed, make([]byte, chacha20.NonceSize))
	if err != nil {
		return nil, err
	}
	return &seedStream{c}, nil
}

func (s *seedStream) Read(p []byte) (int, error) {
	clear(p)
	s.c.XORKeyStream(p, p)
	return len(p), nil
}

// callDeviceDurable is callDevice for method (PairingFinish or
// PairingRemove): it reuses the stored request when there is one for this
// method, or stores a new one before anything is sent.
func callDeviceDurable(home string, p *pairingState, method, command string, request any, watch *signalWatch, out *output) (*deviceCall, *outstandingRequest, []byte, error) {
	call, rec, plaintext, err := callDeviceOutstanding(home, p, method, command, request, watch, out)
	if rec != nil && rec.resent && errors.Is(err, errExchangeInactive) {
		// The earlier process took the response and died before acting on
		// it; the exchange is over, so a new request cannot race it.
		out.detail("the resent request's exchange is over; sending a new request")
		return callDeviceOutstanding(home, p, method, command, request, watch, out)
	}
	return call, rec, plaintext, err
}

func callDeviceOutstanding(home string, p *pairingState, method, command string, request any, watch *signalWatch, out *output) (*deviceCall, *outstandingRequest, []byte, error) {
	rec, err := outstandingFor(home, p, method, command, request)
	if err != nil {
		return nil, nil, nil, err
	}
	rnd, err := newSeedStream(rec.Seed)
	if err != nil {
		return nil, nil, nil, err
	}
	var rotationEnc []byte
	if rec.RotationKey != "" {
		rotationEnc, _ = base64.StdEncoding.DecodeString(rec.RotationKey)
	}
	keys := pairedKeys{DeviceID: p.DeviceID, DeviceKey: p.DeviceKey, ClientID: p.ClientID, PSK: rec.PSK}
	x, payload, err := sealProtectedPlaintext(rnd, keys, rec.RequestID, rotationEnc, rec.Plaintext)
	if err != nil {
		return nil, nil, nil, err
	}
	call, plaintext, err := exchangeWithDevice(home, p, x, payload, rec.RotationKey, rec, nil, watch, out)
	if err != nil && rec.resent && errors.Is(err, errExchangeInactive) {
		return nil, rec, nil, err
	}
	return call, rec, plaintext, err
}

// outstandingFor returns the stored request to resend, or stores a new one.
func outstandingFor(home string, p *pairingState, method, command string, request any) (*outstandingRequest, error) {
	s, err := lockStateDir(home)
	if err != nil {
		return nil, err
	}
	defer s.unlock()
	current, err := readPairingFile(home)
	if err != nil {
		return nil, err
	}
	if current.ClientID != p.ClientID || current.DeviceID != p.DeviceID {
		return nil, errors.New("the pairing changed meanwhile; check `agentknock pairing status`")
	}
	if r := current.Outstanding; r != nil && r.Method == method &&
		time.Since(time.Unix(int64(r.CreatedAt), 0)) < outstandingRetryWindow {
		r.resent = true
		return r, nil
	}
	plaintext, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	id, err := newULID()
	if err != nil {
		return nil, err
	}
	seed := make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, seed); err != nil {
		return nil, err
	}
	r := &outstandingRequest{
		Method: method, RequestID: id, Seed: seed, PSK: current.ClientPSK, RotationKey: current.RotationKey,
		Plaintext: plaintext, CreatedAt: uint64(time.Now().Unix()), Command: command,
	}
	current.Outstanding = r
	if err := s.writePairing(current); err != nil {
		return nil, err
	}
	return r, nil
}

// clearOutstanding removes the record if it is still this request's.
func clearOutstanding(home string, requestID ULID) error {
	s, err := lockStateDir(home)
	if err != nil {
		return err
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil {
		return err
	}
	if p.Outstanding == nil || p.Outstanding.RequestID != requestID {
		return nil
	}
	p.Outstanding = nil
	return s.writePairing(p)
}

func (r *outstandingRequest) rerunAdvice() string {
	return fmt.Sprintf("run `%s` again: it resends the same request", r.Command)
}

// failed handles a failure of a stored request. A signal cancels it like
// any request (ABORTED completion, record removed). Otherwise nothing is
// aborted, since the device may have the request and a rerun must be able
// to collect its answer, unless the relay says the exchange is gone.
func (r *outstandingRequest) failed(home string, call *deviceCall, err error, out *output) error {
	var intr *interrupted
	var refusal *relayRefusal
	switch {
	case errors.As(err, &intr):
		// A person cancelled: the device is told, as for any request, and
		// the next run sends a new one.
		call.abort(abortCancelled, "interrupted by "+signalName(intr.sig), out)
		if cerr := clearOutstanding(home, r.RequestID); cerr != nil {
			out.failure("%v", cerr)
		}
		return err
	}
	call.close()
	switch {
	case errors.Is(err, errExchangeInactive), errors.As(err, &refusal) && !errors.Is(err, errClientInactive):
		if cerr := clearOutstanding(home, r.RequestID); cerr != nil {
			out.failure("%v", cerr)
		}
		return fmt.Errorf("%w; run `%s` again to send a new request", describeRelayError(err), r.Command)
	}
	return fmt.Errorf("%v; %s", describeRelayError(err), r.rerunAdvice())
}
