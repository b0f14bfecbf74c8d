// The JSON form of a pending approval: what `pending --json` prints and what
// the control socket carries to a second terminal. It mirrors
// device.Approval with lowercase member names, except the device-computed
// SAS, which is never shown: the person must type the digits the client
// printed, not copy ours.
package main

import (
	"encoding/json"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

type approvalView struct {
	ID         string             `json:"id"`
	Kind       string             `json:"kind"`
	ClientID   string             `json:"client_id"`
	Client     *device.ClientInfo `json:"client,omitempty"`
	RequestID  string             `json:"request_id"`
	Received   time.Time          `json:"received"`
	Secrets    []string           `json:"secrets"`
	Pairing    *pairingView       `json:"pairing,omitempty"`
	Invocation *invocationView    `json:"invocation,omitempty"`
	GitSign    *gitSignView       `json:"git_sign,omitempty"`
	SSH        *sshView           `json:"ssh,omitempty"`
	// AskedAgain: how the request differs from the closest pinned or
	// policy rule, when one nearly covers it.
	AskedAgain []string `json:"asked_again,omitempty"`
	// Class of the command the request runs (read-only, other,
	// irreversible) and why ("irreversible: git push --force"), from the
	// command tables (classify.go); absent when it runs none.
	Class    string `json:"class,omitempty"`
	ClassWhy string `json:"class_why,omitempty"`
	// ClassLine: the class as shown, with what it means for the policy.
	ClassLine string `json:"class_line,omitempty"`
}

// setClass records the class of the command the request runs.
func (v *approvalView) setClass(c *commandClass) {
	if c == nil {
		return
	}
	v.Class, v.ClassWhy, v.ClassLine = string(c.Class), c.Why, c.classLine()
}

type pairingView struct {
	Hostname     string `json:"hostname,omitempty"`
	MachineID    string `json:"machine_id,omitempty"`
	Platform     string `json:"platform,omitempty"`
	Architecture string `json:"architecture,omitempty"`
	OSVersion    string `json:"os_version,omitempty"`
	AppName      string `json:"app_name,omitempty"`
	AppVersion   string `json:"app_version,omitempty"`
}

type routingView struct {
	Only   []string          `json:"only,omitempty"`
	Omit   []string          `json:"omit,omitempty"`
	Rename map[string]string `json:"rename,omitempty"`
	Stdin  string            `json:"stdin,omitempty"`
}

type invocationView struct {
	Reason           string                 `json:"reason,omitempty"`
	Command          string                 `json:"command"`
	Arguments        []string               `json:"arguments"`
	WorkingDirectory string                 `json:"working_directory"`
	ExecutablePath   string                 `json:"executable_path"`
	ExecutableHash   string                 `json:"executable_hash,omitempty"`
	ExecutableMode   string                 `json:"executable_mode"`
	ScriptContents   *string                `json:"script_contents,omitempty"`
	Stdin            string                 `json:"stdin"`
	Stdout           string                 `json:"stdout"`
	Stderr           string                 `json:"stderr"`
	LauncherChain    []string               `json:"launcher_chain"`
	Routing          map[string]routingView `json:"routing,omitempty"`
	Delivery         map[string][]string    `json:"delivery,omitempty"`
}

type gitSignView struct {
	Secret     string          `json:"secret"`
	PublicKey  string          `json:"public_key"`
	Message    string          `json:"message"`
	Repository json.RawMessage `json:"repository,omitempty"`
	Invocation *invocationView `json:"invocation,omitempty"`
}

type sshView struct {
	Secret             string          `json:"secret"`
	PublicKey          string          `json:"public_key"`
	User               string          `json:"user"`
	Method             string          `json:"method"`
	Algorithm          string          `json:"algorithm"`
	HostKeyFingerprint string          `json:"host_key_fingerprint,omitempty"`
	Invocation         *invocationView `json:"invocation,omitempty"`
}

func viewOf(a *device.Approval) approvalView {
	v := approvalView{
		ID:         a.ID,
		Kind:       a.Kind,
		ClientID:   a.ClientID,
		Client:     a.Client,
		RequestID:  a.RequestID,
		Received:   a.Received,
		Secrets:    append([]string{}, a.Secrets...),
		Invocation: invocationViewOf(a.Invocation),
	}
	if p := a.Pairing; p != nil {
		v.Pairing = &pairingView{
			Hostname: p.Hostname, MachineID: p.MachineID, Platform: p.Platform, Architecture: p.Architecture,
			OSVersion: p.OSVersion, AppName: p.AppName, AppVersion: p.AppVersion,
		}
	}
	if g := a.GitSign; g != nil {
		v.GitSign = &gitSignView{
			Secret: g.Secret, PublicKey: g.PublicKey, Message: g.Message,
			Invocation: invocationViewOf(g.Invocation),
		}
		// Only valid JSON can be embedded; the device hands over what the
		// client sent, which it has already parsed.
		if len(g.Repository) > 0 && json.Valid(g.Repository) {
			v.GitSign.Repository = g.Repository
		}
	}
	if s := a.SSH; s != nil {
		v.SSH = &sshView{
			Secret: s.Secret, PublicKey: s.PublicKey, User: s.User, Method: s.Method,
			Algorithm: s.Algorithm, HostKeyFingerprint: s.HostKeyFingerprint,
			Invocation: invocationViewOf(s.Invocation),
		}
	}
	return v
}

func invocationViewOf(d *device.InvocationDetails) *invocationView {
	if d == nil {
		return nil
	}
	v := &invocationView{
		Reason:           d.Reason,
		Command:          d.Command,
		Arguments:        append([]string{}, d.Arguments...),
		WorkingDirectory: d.WorkingDirectory,
		ExecutablePath:   d.ExecutablePath,
		ExecutableHash:   d.ExecutableHash,
		ExecutableMode:   d.ExecutableMode,
		Stdin:            d.Stdin,
		Stdout:           d.Stdout,
		Stderr:           d.Stderr,
		LauncherChain:    append([]string{}, d.LauncherChain...),
		Delivery:         d.Delivery,
	}
	if d.HasScriptContents {
		s := d.ScriptContents
		v.ScriptContents = &s
	}
	if len(d.Routing) > 0 {
		v.Routing = make(map[string]routingView, len(d.Routing))
		for name, r := range d.Routing {
			v.Routing[name] = routingView{Only: r.Only, Omit: r.Omit, Rename: r.Rename, Stdin: r.Stdin}
		}
	}
	return v
}
