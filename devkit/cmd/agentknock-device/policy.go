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
//	 "operations": {"git-sign": "ask"}}
type policy struct {
	Default    verdict            `json:"default"`
	Pairing    verdict            `json:"pairing"`
	Secrets    map[string]verdict `json:"secrets"`
	Operations map[string]verdict `json:"operations"`
	Rules      []*rule            `json:"rules"` // rules.go
}

// defaultPolicy asks a person about everything.
func defaultPolicy() *policy {
	return &policy{Default: verdictAsk, Pairing: verdictAsk}
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
	return out
}
