// The Invocation method (client-device protocol "Invocation"): full request
// validation, environment routing (only/omit/rename/stdin), the approval,
// the APPROVED response with exactly the routed variables and SSH public
// keys, and the record later GitSign/SshAuthenticate requests refer to.
//
// Malformed JSON (missing members, wrong types, bad Base64 or lengths,
// unknown enum values) gets the authenticated error INVALID_REQUEST; a
// well-formed request that breaks a rule or names something the store does
// not have is DENIED with reason INVALID_REQUEST and a message saying why.
package device

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

type envRoutingWire struct {
	Only   *[]string          `json:"only"`
	Omit   *[]string          `json:"omit"`
	Rename *map[string]string `json:"rename"`
	Stdin  *string            `json:"stdin"`
}

type secretRequestWire struct {
	Environment *envRoutingWire `json:"environment"`
}

type operationWire struct {
	Type             *string   `json:"type"`
	Command          *string   `json:"command"`
	Arguments        *[]string `json:"arguments"`
	WorkingDirectory *string   `json:"working_directory"`
	ExecutablePath   *string   `json:"executable_path"`
	ExecutableHash   *string   `json:"executable_hash"`
	ExecutableMode   *string   `json:"executable_mode"`
	ScriptContents   *string   `json:"script_contents"`
	Stdin            *string   `json:"stdin"`
	Stdout           *string   `json:"stdout"`
	Stderr           *string   `json:"stderr"`
}

type invocationWire struct {
	Secrets         *map[string]*secretRequestWire `json:"secrets"`
	Reason          *string                        `json:"reason"`
	Operation       *operationWire                 `json:"operation"`
	LauncherChain   *[]string                      `json:"launcher_chain"`
	InvocationToken *string                        `json:"invocation_token"`
}

var streamKinds = map[string]bool{
	"TERMINAL": true, "NULL_DEVICE": true, "PIPE": true, "SOCKET": true, "REGULAR_FILE": true, "UNKNOWN": true,
}

// maxScriptContents bounds script_contents: clients send at most 16 KiB of
// script, which U+FFFD replacement of invalid bytes can at most triple.
const maxScriptContents = 3 * 16 * 1024

// parsedInvocation is a well-formed Invocation request.
type parsedInvocation struct {
	names   []string // sorted
	routing map[string]*Routing
	details *InvocationDetails
	token   []byte
}

// malformed is a request-shape error (authenticated error INVALID_REQUEST).
type malformed struct{ msg string }

func (e malformed) Error() string { return e.msg }

func malformedf(format string, args ...any) error { return malformed{fmt.Sprintf(format, args...)} }

// parseInvocation checks the shape of the request; rule violations
// (ruleError) are reported separately from malformed JSON.
func parseInvocation(pt []byte) (*parsedInvocation, error) {
	var w invocationWire
	if err := json.Unmarshal(pt, &w); err != nil {
		return nil, malformedf("Invocation request: %v", err)
	}
	if w.Secrets == nil {
		return nil, malformedf("secrets is required")
	}
	if w.Operation == nil {
		return nil, malformedf("operation is required")
	}
	if w.LauncherChain == nil {
		return nil, malformedf("launcher_chain is required")
	}
	token, err := decodeB64Len(w.InvocationToken, "invocation_token", 32)
	if err != nil {
		return nil, malformed{err.Error()}
	}
	op := w.Operation
	for _, f := range []struct {
		v    *string
		name string
	}{{op.Type, "type"}, {op.Command, "command"}, {op.WorkingDirectory, "working_directory"},
		{op.ExecutablePath, "executable_path"}, {op.ExecutableMode, "executable_mode"},
		{op.Stdin, "stdin"}, {op.Stdout, "stdout"}, {op.Stderr, "stderr"}} {
		if f.v == nil {
			return nil, malformedf("operation.%s is required", f.name)
		}
	}
	if op.Arguments == nil {
		return nil, malformedf("operation.arguments is required")
	}
	if *op.Type != "exec" {
		return nil, malformedf("operation type %q is not supported", printable(*op.Type))
	}
	if *op.ExecutableMode != "BINARY" && *op.ExecutableMode != "SCRIPT" {
		return nil, malformedf("executable_mode must be BINARY or SCRIPT")
	}
	for _, s := range []struct{ v, name string }{{*op.Stdin, "stdin"}, {*op.Stdout, "stdout"}, {*op.Stderr, "stderr"}} {
		if !streamKinds[s.v] {
			return nil, malformedf("operation.%s has unknown stream kind %q", s.name, printable(s.v))
		}
	}
	det := &InvocationDetails{
		Command: *op.Command, Arguments: slices.Clone(*op.Arguments), WorkingDirectory: *op.WorkingDirectory,
		ExecutablePath: *op.ExecutablePath, ExecutableMode: *op.ExecutableMode,
		Stdin: *op.Stdin, Stdout: *op.Stdout, Stderr: *op.Stderr,
		LauncherChain: slices.Clone(*w.LauncherChain),
		Routing:       map[string]Routing{}, Delivery: map[string][]string{},
	}
	if det.Arguments == nil {
		det.Arguments = []string{}
	}
	if w.Reason != nil {
		det.Reason = *w.Reason
	}
	if op.ExecutableHash != nil {
		if _, err := decodeB64Len(op.ExecutableHash, "executable_hash", sha256.Size); err != nil {
			return nil, malformed{err.Error()}
		}
		det.ExecutableHash = *op.ExecutableHash
	}
	if op.ScriptContents != nil {
		if det.ExecutableMode != "SCRIPT" {
			return nil, malformedf("script_contents is only sent for SCRIPT executables")
		}
		if len(*op.ScriptContents) > maxScriptContents {
			return nil, malformedf("script_contents is too long")
		}
		det.ScriptContents, det.HasScriptContents = *op.ScriptContents, true
	}
	if len(det.LauncherChain) > 4 {
		return nil, malformedf("launcher_chain has %d entries; at most 4 are allowed", len(det.LauncherChain))
	}
	for _, p := range det.LauncherChain {
		if p == "" {
			return nil, malformedf("launcher_chain entries must be nonempty")
		}
	}

	inv := &parsedInvocation{routing: map[string]*Routing{}, details: det, token: token}
	if len(*w.Secrets) == 0 {
		return nil, ruleErrorf("secrets must name at least one secret")
	}
	for name, sw := range *w.Secrets {
		if name == "" {
			return nil, ruleErrorf("secret names must be nonempty")
		}
		if sw == nil {
			return nil, malformedf("secrets.%s must be an object", printable(name))
		}
		inv.names = append(inv.names, name)
		if sw.Environment != nil {
			r, err := parseRouting(name, sw.Environment)
			if err != nil {
				return nil, err
			}
			inv.routing[name] = r
			det.Routing[name] = *r
		}
	}
	slices.Sort(inv.names)
	stdinCount := 0
	for _, r := range inv.routing {
		if r.Stdin != "" {
			stdinCount++
		}
	}
	if stdinCount > 1 {
		return nil, ruleErrorf("at most one secret may send a variable to standard input")
	}
	return inv, nil
}

// ruleError is a well-formed request that breaks a rule (DENIED
// INVALID_REQUEST).
type ruleError struct{ msg string }

func (e ruleError) Error() string { return e.msg }

func ruleErrorf(format string, args ...any) error { return ruleError{fmt.Sprintf(format, args...)} }

func uniqueNonempty(list []string, what string) error {
	if len(list) == 0 {
		return ruleErrorf("%s must not be empty", what)
	}
	seen := map[string]bool{}
	for _, v := range list {
		if v == "" {
			return ruleErrorf("%s contains an empty name", what)
		}
		if seen[v] {
			return ruleErrorf("%s names %s twice", what, printable(v))
		}
		seen[v] = true
	}
	return nil
}

// parseRouting applies the environment-option rules that need no store.
func parseRouting(secret string, w *envRoutingWire) (*Routing, error) {
	r := &Routing{Rename: map[string]string{}}
	s := printable(secret)
	if w.Only != nil && w.Omit != nil {
		return nil, ruleErrorf("secret %s: only and omit cannot both be given", s)
	}
	if w.Only != nil {
		if err := uniqueNonempty(*w.Only, "secret "+s+": only"); err != nil {
			return nil, err
		}
		r.Only = slices.Clone(*w.Only)
	}
	if w.Omit != nil {
		if err := uniqueNonempty(*w.Omit, "secret "+s+": omit"); err != nil {
			return nil, err
		}
		r.Omit = slices.Clone(*w.Omit)
	}
	if w.Rename != nil {
		if len(*w.Rename) == 0 {
			return nil, ruleErrorf("secret %s: rename must not be empty", s)
		}
		for src, dst := range *w.Rename {
			if src == "" {
				return nil, ruleErrorf("secret %s: rename has an empty source", s)
			}
			if err := validVarName(dst); err != nil {
				return nil, ruleErrorf("secret %s: rename %s: %v", s, printable(src), err)
			}
			r.Rename[src] = dst
		}
	}
	if w.Stdin != nil {
		if *w.Stdin == "" {
			return nil, ruleErrorf("secret %s: stdin must name a variable", s)
		}
		r.Stdin = *w.Stdin
	}
	sources := sortedKeys(r.Rename)
	if r.Stdin != "" {
		if _, both := r.Rename[r.Stdin]; both {
			return nil, ruleErrorf("secret %s: %s cannot be both renamed and sent to standard input", s, printable(r.Stdin))
		}
		sources = append(sources, r.Stdin)
	}
	for _, src := range sources {
		if r.Only != nil && !slices.Contains(r.Only, src) {
			return nil, ruleErrorf("secret %s: %s is renamed or sent to standard input but not selected by only", s, printable(src))
		}
		if slices.Contains(r.Omit, src) {
			return nil, ruleErrorf("secret %s: %s is renamed or sent to standard input but omitted", s, printable(src))
		}
	}
	if len(r.Rename) == 0 {
		r.Rename = nil
	}
	return r, nil
}

// secretOut is one entry of the APPROVED response's secrets map.
type secretOut struct {
	Description string                       `json:"description,omitempty"`
	Type        string                       `json:"type"`
	Variables   map[string]map[string]string `json:"variables,omitempty"`
	PublicKey   string                       `json:"public_key,omitempty"`
}

// routed is an invocation resolved against the store.
type routed struct {
	secrets   map[string]secretOut
	sshSecret string
	sshPublic string
}

// route resolves the request against the store and fills the Delivery
// lines the approver sees.
func route(inv *parsedInvocation, store map[string]*storedSecret) (*routed, error) {
	out := &routed{secrets: map[string]secretOut{}}
	finalValue := map[string]string{}
	finalFrom := map[string]string{}
	for _, name := range inv.names {
		s := store[name]
		pn := printable(name)
		if s == nil {
			return nil, ruleErrorf("no secret named %s on this device", pn)
		}
		r := inv.routing[name]
		if s.Type == typeSSH {
			if r != nil {
				return nil, ruleErrorf("secret %s is an SSH key; environment options do not apply", pn)
			}
			if out.sshSecret != "" {
				return nil, ruleErrorf("at most one SSH secret per invocation (%s and %s)", printable(out.sshSecret), pn)
			}
			out.sshSecret, out.sshPublic = name, s.PublicKey
			out.secrets[name] = secretOut{Description: s.Description, Type: typeSSH, PublicKey: s.PublicKey}
			inv.details.Delivery[name] = []string{"ssh key " + s.PublicKey + " (agent + git signing)"}
			continue
		}
		if s.Type != typeEnvironment {
			return nil, ruleErrorf("secret %s has an unknown type", pn)
		}
		if r == nil {
			r = &Routing{}
		}
		for _, list := range [][]string{r.Only, r.Omit, sortedKeys(r.Rename)} {
			for _, v := range list {
				if _, ok := s.Variables[v]; !ok {
					return nil, ruleErrorf("secret %s has no variable %s", pn, printable(v))
				}
			}
		}
		if r.Stdin != "" {
			if _, ok := s.Variables[r.Stdin]; !ok {
				return nil, ruleErrorf("secret %s has no variable %s", pn, printable(r.Stdin))
			}
		}
		vars := map[string]map[string]string{}
		var lines []string
		for _, v := range sortedKeys(s.Variables) {
			if r.Only != nil && !slices.Contains(r.Only, v) || slices.Contains(r.Omit, v) {
				continue
			}
			vars[v] = map[string]string{"value": s.Variables[v]}
			if v == r.Stdin {
				lines = append(lines, v+" -> stdin")
				continue
			}
			final := v
			if dst, ok := r.Rename[v]; ok {
				final = dst
			}
			lines = append(lines, v+" -> env "+final)
			if prev, seen := finalValue[final]; seen && prev != s.Variables[v] {
				return nil, ruleErrorf("%s would be set to different values by %s and %s", printable(final), printable(finalFrom[final]), pn)
			}
			finalValue[final], finalFrom[final] = s.Variables[v], name
		}
		out.secrets[name] = secretOut{Description: s.Description, Type: typeEnvironment, Variables: vars}
		if lines == nil {
			lines = []string{"(no variables)"}
		}
		inv.details.Delivery[name] = lines
	}
	return out, nil
}

func (d *Device) invocation(r *request) methodResult {
	inv, err := parseInvocation(r.plaintext)
	if err != nil {
		return d.refuse(r, "invocation", nil, nil, err)
	}
	var store map[string]*storedSecret
	if err := d.transactFor(r, func(t *txn) error {
		ss, err := t.secrets()
		store = ss.Secrets
		return err
	}); err != nil {
		return errorResult(errInvalidState, "secret store unavailable")
	}
	rt, err := route(inv, store)
	if err != nil {
		return d.refuse(r, "invocation", inv.names, inv.details, err)
	}
	a := &Approval{ID: newApprovalID(), Kind: "invocation", ClientID: r.clientID, Client: r.client,
		RequestID: r.requestID, Received: r.received, Secrets: inv.names, Invocation: inv.details}
	res, ok := d.decide(r, a)
	if !ok {
		return res
	}
	tokenHash := sha256.Sum256(inv.token)
	record := &invocation{ID: r.requestID, ClientID: r.clientID, TokenHash: tokenHash[:], Secrets: inv.names,
		SSHSecret: rt.sshSecret, SSHPublicKey: rt.sshPublic, Details: inv.details}
	return methodResult{
		body:    map[string]any{"result": "APPROVED", "secrets": rt.secrets},
		outcome: "APPROVED",
		apply: func(t *txn, st *stateTx, now time.Time) error {
			if !clientActive(st, r.clientID) {
				return errStateChanged
			}
			ex := st.exchange(exchangeKey(r.clientID, r.requestID))
			if ex != nil && ex.Completion != "" {
				return errStateChanged // the client gave up before the answer
			}
			record.ApprovedAt = now
			st.addInvocation(record)
			return nil
		},
	}
}

// refuse tells a RefusalRecorder about a request refused as invalid and
// returns its response.
// The recorder runs once the request's state is committed (the record may
// render the request, which must not hold the state transaction).
func (d *Device) refuse(r *request, kind string, secrets []string, det *InvocationDetails, err error) methodResult {
	if rr, ok := d.approver.(RefusalRecorder); ok {
		a := &Approval{ID: newApprovalID(), Kind: kind, ClientID: r.clientID, Client: r.client,
			RequestID: r.requestID, Received: r.received, Secrets: secrets, Invocation: det}
		msg := err.Error()
		r.report = func() { rr.Refused(a, msg) }
	}
	return requestProblem(err)
}

// requestProblem maps a validation error to its response form.
func requestProblem(err error) methodResult {
	var m malformed
	if errors.As(err, &m) {
		return errorResult(errInvalidRequest, m.msg)
	}
	return denialResult("INVALID_REQUEST", err.Error())
}

func clientActive(st *stateTx, clientID string) bool {
	b := st.client(clientID)
	return b != nil && b.State == bindActive
}

// decide asks the Approver. ok is true only for an approval that still
// stands; otherwise res is the answer to send (or an abandon).
func (d *Device) decide(r *request, a *Approval) (res methodResult, ok bool) {
	d.logf("approval %s: %s for client %s (request %s)", a.ID, a.Kind, r.clientID, r.requestID)
	dec, now := Decision{}, false
	if ia, can := d.approver.(ImmediateApprover); can && r.held != nil {
		dec, now = ia.DecideNow(a)
		if rep, ok := d.approver.(ImmediateReporter); ok && now {
			// The acceptance is committed first, as for a person's answer,
			// so that the report (showing and recording, which can fail
			// and then withdraw the approval) holds no transaction; the
			// answer is fixed in a second commit like Decide's.
			if err := d.release(r); err != nil {
				d.logf("request %s from client %s: %v", r.requestID, r.clientID, err)
				return errorResult(errInvalidState, "device state unavailable"), false
			}
			dec = rep.ReportDecided(a, dec)
		}
	}
	if !now {
		if err := d.release(r); err != nil {
			d.logf("request %s from client %s: %v", r.requestID, r.clientID, err)
			return errorResult(errInvalidState, "device state unavailable"), false
		}
		dec = d.approver.Decide(r.ctx, a)
	}
	r.decided, r.decision = a, dec
	if d.ctx.Err() != nil {
		return methodResult{abandon: true}, false
	}
	if r.ctx.Err() != nil {
		return denialResult("OTHER", "The request was cancelled."), false
	}
	if !dec.Approve {
		reason := dec.Reason
		switch reason {
		case "USER_DENIED", "POLICY_DENIED", "OTHER":
		default:
			reason = "USER_DENIED"
		}
		msg := dec.Message
		if msg == "" {
			msg = "The request was denied."
		}
		d.logf("approval %s: denied (%s)", a.ID, reason)
		return denialResult(reason, msg), false
	}
	d.logf("approval %s: approved", a.ID)
	return methodResult{}, true
}
