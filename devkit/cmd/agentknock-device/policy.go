// Approval policy (the device program's own extension; the v1 protocol
// leaves device policy to the device): per-secret and per-operation rules
// that decide a request without asking, for headless and scripted use.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	commandmodel "agentknock.dev/agentknock/devkit/commands"
)

// A verdict is what a rule says about a request.
type verdict string

const (
	verdictAsk     verdict = "ask"
	verdictApprove verdict = "approve"
	verdictDeny    verdict = "deny"
)

// Operation kinds, as device.Approval.Kind spells them.
const (
	kindPairing    = "pairing"
	kindInvocation = "invocation"
	kindGitSign    = "git-sign"
	kindSSH        = "ssh-authenticate"
)

// policy is the parsed policy file:
//
//	{"default": "ask", "pairing": "ask",
//	 "secrets": {"demo": "approve", "prod": "deny"},
//	 "operations": {"git-sign": "ask"},
//	 "read_only": {"gh-token": "approve"},
//	 "irreversible": "ask"}
//
// "read_only" approves, per secret ("*": every secret the member does not
// name), an invocation whose every command is read-only by the command
// tables (devkit/commands); "irreversible" says what happens to one that
// is irreversible: "ask" (a person, whatever any other rule, pin or grant
// says) or "deny".
type policy struct {
	Default      verdict            `json:"default"`
	Pairing      verdict            `json:"pairing"`
	Secrets      map[string]verdict `json:"secrets"`
	Operations   map[string]verdict `json:"operations"`
	ReadOnly     map[string]verdict `json:"read_only"`
	Irreversible verdict            `json:"irreversible"`
	Rules        []*rule            `json:"rules"` // rules.go
}

// readOnlyAll is the "read_only" key that stands for every secret.
const readOnlyAll = "*"

// defaultPolicy asks a person about everything.
func defaultPolicy() *policy {
	return &policy{Default: verdictAsk, Pairing: verdictAsk, Irreversible: verdictAsk}
}

func loadPolicy(path string) (*policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := parsePolicy(data)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, nil
}

// parsePolicy is strict: an unknown member or verdict is an error, because a
// misspelt rule would otherwise silently fall back to another decision.
func parsePolicy(data []byte) (*policy, error) {
	p := defaultPolicy()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(p); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	if p.Default == "" {
		p.Default = verdictAsk
	}
	if p.Pairing == "" {
		p.Pairing = verdictAsk
	}
	if p.Irreversible == "" {
		p.Irreversible = verdictAsk
	}
	if err := checkVerdict("default", p.Default); err != nil {
		return nil, err
	}
	if err := checkVerdict("pairing", p.Pairing); err != nil {
		return nil, err
	}
	for name, v := range p.Secrets {
		if name == "" {
			return nil, fmt.Errorf("secrets: empty secret name")
		}
		if err := checkVerdict(fmt.Sprintf("secrets[%q]", name), v); err != nil {
			return nil, err
		}
	}
	for op, v := range p.Operations {
		switch op {
		case kindInvocation, kindGitSign, kindSSH:
		default:
			return nil, fmt.Errorf("operations: unknown operation %q (want invocation, git-sign or ssh-authenticate)", op)
		}
		if err := checkVerdict(fmt.Sprintf("operations[%q]", op), v); err != nil {
			return nil, err
		}
	}
	for name, v := range p.ReadOnly {
		if name == "" {
			return nil, fmt.Errorf("read_only: empty secret name (\"*\" stands for every secret)")
		}
		if v != verdictApprove && v != verdictAsk {
			return nil, fmt.Errorf("read_only[%q]: %q is not approve or ask (a read-only command is never denied for being read-only)", name, string(v))
		}
	}
	switch p.Irreversible {
	case verdictAsk, verdictDeny:
	default:
		return nil, fmt.Errorf("irreversible: %q is not ask or deny (an irreversible command is never approved without a person)", string(p.Irreversible))
	}
	for i, r := range p.Rules {
		if r == nil {
			return nil, fmt.Errorf("rules[%d]: not an object", i)
		}
		if err := checkPolicyRule(i, r); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func checkVerdict(where string, v verdict) error {
	switch v {
	case verdictAsk, verdictApprove, verdictDeny:
		return nil
	}
	return fmt.Errorf("%s: %q is not ask, approve or deny", where, string(v))
}

// strictness orders verdicts so the stricter of two rules can be taken.
func strictness(v verdict) int {
	switch v {
	case verdictApprove:
		return 0
	case verdictAsk:
		return 1
	}
	return 2
}

// decide applies the policy to one request of an operation kind that uses
// secrets. For each secret the applicable rule is the secret's own rule or
// the operation's rule, the stricter of the two when both exist, and the
// default when neither does; so "approve" for a secret also covers its Git
// signatures and SSH logins unless an operation rule asks for more. Across
// secrets, any deny denies, all approve approves, anything else asks. The
// message explains a denial to the client and names the secret.
func (p *policy) decide(kind string, secrets []string) (verdict, string) {
	if kind == kindPairing {
		if p.Pairing == verdictDeny {
			return verdictDeny, "device policy refuses new pairings"
		}
		return p.Pairing, ""
	}
	opRule, hasOp := p.Operations[kind]
	names := append([]string(nil), secrets...)
	sort.Strings(names)
	if len(names) == 0 {
		// Nothing secret-specific applies; still answer consistently.
		names = []string{""}
	}
	result := verdictApprove
	for _, name := range names {
		rule, hasSecret := p.Secrets[name]
		switch {
		case hasSecret && hasOp:
			if strictness(opRule) > strictness(rule) {
				rule = opRule
			}
		case hasOp:
			rule = opRule
		case !hasSecret:
			rule = p.Default
		}
		if rule == verdictDeny {
			return verdictDeny, denialMessage(kind, name, hasSecret && p.Secrets[name] == verdictDeny, hasOp && opRule == verdictDeny)
		}
		if strictness(rule) > strictness(result) {
			result = rule
		}
	}
	return result, ""
}

// commandClass is what the command model (devkit/commands, through
// classify.go) says about the command a request runs: its class, why
// ("irreversible: git push --force", "read-only: git status, executable
// /usr/bin/git"), and whether the device understood it at all.
type commandClass struct {
	Class      commandmodel.Class
	Why        string
	Understood bool
	// NotUnderstood: the most severe reason it is not understood.
	NotUnderstood string
}

// irreversible: the request must be asked of a person (or denied).
func (c *commandClass) irreversible() bool {
	return c != nil && c.Class == commandmodel.ClassIrreversible
}

// readOnly: every command is read-only by the tables, and understood. A
// command the device does not understand is possibly irreversible, so it
// is never read-only, whatever the class says.
func (c *commandClass) readOnly() bool {
	return c != nil && c.Understood && c.Class == commandmodel.ClassReadOnly
}

// caution is the line an automatic approval of a command the device does
// not understand carries on the console and in the log; "" otherwise.
func (c *commandClass) caution() string {
	if c == nil || c.Understood {
		return ""
	}
	why := ""
	if c.NotUnderstood != "" {
		why = " (" + c.NotUnderstood + ")"
	}
	return "the device does not understand this command" + why + ", so it may be irreversible"
}

// outcome is the policy's answer to a request, its command's class
// included: approve or deny with who decided and the console line, or ask,
// in which case alwaysAsk says that no rule or grant may answer instead of
// a person either (an irreversible command), and why.
type outcome struct {
	v         verdict
	message   string // a denial's message to the client
	note      string // the console line of an automatic decision
	by        decidedBy
	alwaysAsk bool
	why       string // with alwaysAsk: "irreversible: git push --force"
	// policyWouldApprove: with alwaysAsk, the secret and operation rules
	// alone would have approved.
	policyWouldApprove bool
}

// decideClassed applies the policy to a request whose command has the
// class c (nil: the request runs no command the device was told of). In
// order: a deny of the secrets or operation denies; an irreversible
// command is denied ("irreversible": "deny") or asked of a person, whatever
// the rest says; the secret and operation rules approve; the read-only
// member approves an understood, read-only invocation; else a rule, a
// grant or a person decides (the approver).
func (p *policy) decideClassed(kind string, secrets []string, c *commandClass) outcome {
	v, msg := p.decide(kind, secrets)
	if v == verdictDeny {
		return outcome{v: verdictDeny, message: msg, note: "denied by policy: " + msg, by: decidedBy{who: "policy", how: msg}}
	}
	if kind != kindPairing && c.irreversible() {
		if p.Irreversible == verdictDeny {
			msg := "device policy denies irreversible commands (" + c.Why + ")"
			return outcome{v: verdictDeny, message: msg, note: "denied by policy: " + msg,
				by: decidedBy{who: "policy", how: `"irreversible": "deny": ` + c.Why}}
		}
		return outcome{v: verdictAsk, alwaysAsk: true, why: c.Why, policyWouldApprove: v == verdictApprove}
	}
	if v == verdictApprove {
		return outcome{v: verdictApprove, note: "approved by policy", by: decidedBy{who: "policy", how: "secret and operation rules approve"}}
	}
	if kind == kindInvocation && c.readOnly() {
		if entry, ok := p.readOnlyApproves(secrets); ok {
			how := entry + ": " + c.Why
			return outcome{v: verdictApprove, note: "approved by the read-only policy (" + how + ")", by: decidedBy{who: "policy", how: how}}
		}
	}
	return outcome{v: v}
}

// readOnlyApproves reports whether the "read_only" member approves every
// secret of a request, and names the entries that do. A secret's own entry
// stands before "*", so {"*": "approve", "prod": "ask"} keeps prod asked.
func (p *policy) readOnlyApproves(secrets []string) (string, bool) {
	names := sortedCopy(secrets)
	if len(names) == 0 {
		v, ok := p.ReadOnly[readOnlyAll]
		return `"read_only" "*"`, ok && v == verdictApprove
	}
	var entries []string
	for _, name := range names {
		v, ok := p.ReadOnly[name]
		entry := name
		if !ok {
			v, ok = p.ReadOnly[readOnlyAll]
			entry = `"*" for ` + name
		}
		if !ok || v != verdictApprove {
			return "", false
		}
		entries = append(entries, clean(entry))
	}
	return `"read_only" ` + strings.Join(entries, ", "), true
}

func denialMessage(kind, secret string, bySecret, byOperation bool) string {
	switch {
	case secret == "":
		return fmt.Sprintf("device policy denies %s requests", kind)
	case bySecret:
		return fmt.Sprintf("device policy denies secret %q", secret)
	case byOperation:
		return fmt.Sprintf("device policy denies %s requests (secret %q)", kind, secret)
	}
	return fmt.Sprintf("device policy denies secret %q by default", secret)
}

// autoApprovals lists, for serve's start-up, what the policy approves
// without asking a person, one line each (each policy rule followed by what
// it does not bind); empty when it approves nothing by itself.
func (p *policy) autoApprovals() []string {
	var out []string
	if p.Pairing == verdictApprove {
		out = append(out, `  - "pairing": "approve": every pairing is confirmed by the device itself, with no code compared`+"\n")
	}
	if p.Default == verdictApprove {
		out = append(out, `  - "default": "approve": every secret the policy does not name is approved for any command`+"\n")
	}
	names := make([]string, 0, len(p.Secrets))
	for name, v := range p.Secrets {
		if v == verdictApprove {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		out = append(out, fmt.Sprintf("  - secret %s: \"approve\": any command gets it, unless an operation rule asks\n", clean(name)))
	}
	ops := make([]string, 0, len(p.Operations))
	for op, v := range p.Operations {
		if v == verdictApprove {
			ops = append(ops, op)
		}
	}
	sort.Strings(ops)
	for _, op := range ops {
		out = append(out, fmt.Sprintf("  - operation %s: \"approve\": approved for secrets the policy does not deny or ask for\n", clean(op)))
	}
	for _, r := range p.Rules {
		out = append(out, "  - "+r.describe()+"\n"+unboundText(r.Unbound, "      "))
	}
	out = append(out, p.readOnlyApprovals()...)
	return out
}

// readOnlyApprovals is what serve says at start about the "read_only"
// member: which secrets it approves, for which commands, and what that
// cannot promise.
func (p *policy) readOnlyApprovals() []string {
	var names []string
	for name, v := range p.ReadOnly {
		if v == verdictApprove {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sort.Strings(names)
	for i, n := range names {
		if n == readOnlyAll {
			names[i] = `"*" (every secret without its own entry)`
		} else {
			names[i] = clean(n)
		}
	}
	return []string{fmt.Sprintf("  - \"read_only\": secrets %s: \"approve\":\n"+
		"      an invocation whose every command is read-only by the device's tables, understood,\n"+
		"      with no sensitive path among its arguments and its executable in a system directory,\n"+
		"      is approved without asking (%d read-only forms: 'agentknock-device explain\n"+
		"      --read-only-forms' lists them, 'explain -- ARGV...' classes one).\n"+
		"      A read can still send the secret to the service it is for, and the tables trust\n"+
		"      the program at that path. Irreversible commands are %s.\n",
		strings.Join(names, ", "), commandmodel.ReadOnlyForms(), irreversibleText(p.Irreversible))}
}

func irreversibleText(v verdict) string {
	if v == verdictDeny {
		return `denied ("irreversible": "deny")`
	}
	return "always asked of a person"
}
