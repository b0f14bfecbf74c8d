// Package device is a software Agentknock v1 device: it holds an X25519
// identity, a secret store and client bindings, and answers client exchanges
// (docs/client-device-protocol.md, docs/cryptosystem.md) after a person or a
// policy approves them through an Approver.
//
// This file lists the exported types shared with the device program.
package device

import (
	"context"
	"encoding/json"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

// Options configures Open.
type Options struct {
	StateDir  string
	Approver  Approver
	Publisher Publisher                        // may be set later with SetPublisher
	Now       func() time.Time                 // nil: time.Now
	Logf      func(format string, args ...any) // never logs secrets
}

// Publisher is where the device sends responses and client-state changes;
// *relay.Relay implements it.
type Publisher interface {
	Respond(clientID, requestID string, payload json.RawMessage) error
	SetClientState(clientID string, state relay.ClientState) error
}

// SecretInfo is a secret's metadata; it never carries a value.
type SecretInfo struct {
	Name        string   `json:"name"`
	Type        string   `json:"type"` // "environment" | "ssh"
	Description string   `json:"description,omitempty"`
	Variables   []string `json:"variables,omitempty"`
	PublicKey   string   `json:"public_key,omitempty"`
}

// ClientInfo describes one client binding.
type ClientInfo struct {
	ClientID  string     `json:"client_id"`
	State     string     `json:"state"`
	Hostname  string     `json:"hostname,omitempty"`
	Platform  string     `json:"platform,omitempty"`
	PairedAt  time.Time  `json:"paired_at"`
	RotatedAt *time.Time `json:"rotated_at,omitempty"`
}

// UploadInfo describes one secret upload waiting in the review queue.
type UploadInfo struct {
	ID          string    `json:"id"`
	ClientID    string    `json:"client_id"`
	Mode        string    `json:"mode"`
	Name        string    `json:"name"`
	Type        string    `json:"type"`
	Description string    `json:"description,omitempty"`
	Variables   []string  `json:"variables,omitempty"`
	PublicKey   string    `json:"public_key,omitempty"`
	ReceivedAt  time.Time `json:"received_at"`
}

// Approval is everything a person needs to decide, fully decoded.
type Approval struct {
	ID         string // short unique id for `approve ID`
	Kind       string // "pairing" | "invocation" | "git-sign" | "ssh-authenticate"
	ClientID   string
	Client     *ClientInfo // nil for pairing
	RequestID  string
	Received   time.Time
	Secrets    []string // secret names involved (sorted)
	Pairing    *PairingDetails
	Invocation *InvocationDetails
	GitSign    *GitSignDetails
	SSH        *SSHDetails
	// Stored, for a pairing, is closed once the device has stored the
	// answer (the attempt confirmed or ended, its slot free for the next
	// pairing); nil for other kinds. Whoever answers for a person waits on
	// it, so that the person's "rejected" is already true when it is shown.
	Stored <-chan struct{}
}

// PairingDetails is what a pairing attempt shows. SAS is the device-computed
// string; the user compares it with (types) the one the client printed.
type PairingDetails struct {
	SAS          string
	Hostname     string
	MachineID    string
	Platform     string
	Architecture string
	OSVersion    string
	AppName      string
	AppVersion   string
}

// Routing is one secret's environment routing as the client requested it.
type Routing struct {
	Only, Omit []string
	Rename     map[string]string
	Stdin      string
}

// InvocationDetails is the decoded operation of an Invocation request.
type InvocationDetails struct {
	Reason            string // client-reported
	Command           string
	Arguments         []string
	WorkingDirectory  string
	ExecutablePath    string
	ExecutableHash    string // standard base64 or ""
	ExecutableMode    string
	ScriptContents    string
	HasScriptContents bool
	Stdin             string
	Stdout            string
	Stderr            string
	LauncherChain     []string
	Routing           map[string]Routing  // per secret name
	Delivery          map[string][]string // per secret: "VAR -> env NEWNAME", "VAR -> stdin", "ssh key ... (agent + git signing)"
}

// GitSignDetails is the decoded GitSign request.
type GitSignDetails struct {
	Secret     string
	PublicKey  string
	Message    string          // exact text Git asked to sign
	Repository json.RawMessage // advisory, as sent
	Invocation *InvocationDetails
}

// SSHDetails is the decoded SshAuthenticate request.
type SSHDetails struct {
	Secret             string
	PublicKey          string
	User               string
	Method             string
	Algorithm          string
	HostKeyFingerprint string // SHA256:... or ""
	Invocation         *InvocationDetails
}

// Decision is an Approver's answer.
type Decision struct {
	Approve bool
	Reason  string // for denial: "USER_DENIED" | "POLICY_DENIED" | "OTHER"
	Message string // shown to the client on denial
	SAS     string // pairing: the digits the user typed; must equal the device SAS
}

// Approver decides. It may block until a person answers; ctx is cancelled
// when the client aborts (completion ABORTED) or the device closes.
type Approver interface {
	Decide(ctx context.Context, a *Approval) Decision
}

// RefusalRecorder is an optional Approver extension, told about the
// Invocation, GitSign and SshAuthenticate requests the device refused as
// invalid without asking (a malformed request, an unknown secret, a
// signature that does not fit its invocation), so that an audit log holds
// every request. The Approval carries what was understood of the request
// (Secrets and Invocation may be nil); message is the device's reason.
type RefusalRecorder interface {
	Refused(a *Approval, message string)
}

// DurableRecorder is an Approver that records decisions (an audit log)
// with a write now and an fsync in the background, so that the fsync runs
// while the device commits its state; the device calls RecordsDurable
// before any answer leaves, so nothing it sent is missing from the record.
type DurableRecorder interface {
	RecordsDurable()
}

// ImmediateApprover is an Approver that can tell whether it decides
// without waiting (a policy or a standing grant). For such a decision the
// device accepts and answers the request in one commit of its state instead
// of two; otherwise (ok false) it stores the acceptance and calls Decide.
type ImmediateApprover interface {
	Approver
	DecideNow(a *Approval) (d Decision, ok bool)
}

// UndeliveredRecorder is an Approver told when a decision it made (and
// recorded) did not reach the client as decided: the state transaction
// that fixes the answer failed, and the client got an error instead. It
// runs outside every transaction.
type UndeliveredRecorder interface {
	Undelivered(a *Approval, d Decision, why string)
}

// ImmediateReporter is an ImmediateApprover whose DecideNow only decides:
// it runs while the device holds the transaction that accepts the request
// (every other request waits on it), so the slow part of an immediate
// decision, showing the request and recording it, belongs in
// ReportDecided. The device calls it after committing the acceptance,
// outside every transaction and before the answer is fixed; the decision
// it returns is the one answered, so a record that cannot be written can
// turn an approval into a denial (an audit log that fails closed).
type ImmediateReporter interface {
	ReportDecided(a *Approval, d Decision) Decision
}
