// protocol_requests.go: the protected client plaintexts of the Agentknock
// v1 client-device-protocol.md (client-device-protocol.md "Pairing activation",
// "Invocation", "Git signing", "SSH authentication", "Secret list", "Secret
// upload", "Pairing removal"): the request builders with their client-side
// validation. The completions are protocol_completions.go.

package main

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"golang.org/x/crypto/ssh"
)

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
