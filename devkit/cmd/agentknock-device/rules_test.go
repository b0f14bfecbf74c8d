// Tests of pinned and policy rules: a rule covers exactly the request it
// was made from; a change in any bound field (client, secrets, routing,
// executable path, hash, arguments, directory, expiry) is asked again and
// the prompt names the field.
package main

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

var otherHash = base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))

// scriptInvocation is bash -c 'make test' in /work/project with the demo
// secret's TOKEN only.
func scriptInvocation(id string) *device.Approval {
	a := fakeInvocation(id, "demo")
	d := a.Invocation
	d.Command, d.Arguments = "bash", []string{"-c", "make test"}
	d.ExecutablePath, d.ExecutableMode = "/usr/bin/bash", "BINARY"
	d.ScriptContents, d.HasScriptContents = "", false
	return a
}

// askedAgain decides a, which must wait for a person, and returns what the
// prompt says about the nearest rule; the request is then denied.
func (h *harness) askedAgain(t *testing.T, a *device.Approval) string {
	t.Helper()
	ch := h.decide(context.Background(), a)
	h.waitPending(t, a.ID)
	var note string
	for _, v := range h.ap.list() {
		if v.ID == a.ID {
			note = strings.Join(v.AskedAgain, "\n")
		}
	}
	if _, err := h.ap.deny(a.ID, "", "test"); err != nil {
		t.Fatal(err)
	}
	if d := receive(t, ch); d.Approve {
		t.Fatalf("%s approved", a.ID)
	}
	return note
}

// pin has a person approve a with a rule for d.
func (h *harness) pin(t *testing.T, a *device.Approval, d time.Duration) string {
	t.Helper()
	ch := h.decide(context.Background(), a)
	h.waitPending(t, a.ID)
	msg, err := h.ap.approve(a.ID, 0, d, pinCodeOf(t, h, a, d), "test")
	if err != nil {
		t.Fatal(err)
	}
	if dec := receive(t, ch); !dec.Approve {
		t.Fatalf("pinning approval: %+v", dec)
	}
	return msg
}

// pinCodeOf asks to pin the pending a without a confirmation, which must
// be refused with the list and its code, and returns the code.
func pinCodeOf(t *testing.T, h *harness, a *device.Approval, d time.Duration) string {
	t.Helper()
	_, err := h.ap.approve(a.ID, 0, d, "", "test")
	var pu *pinUnconfirmed
	if !errors.As(err, &pu) {
		t.Fatalf("pinning %s without confirming what it does not bind: %v", a.ID, err)
	}
	if _, err := h.ap.approve(a.ID, 0, d, "0000000000", "test"); !errors.As(err, &pu) || !strings.Contains(err.Error(), "not this request's") {
		t.Fatalf("pinning %s with a wrong code: %v", a.ID, err)
	}
	return pu.code
}

func TestPinnedRuleBoundFields(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	msg := h.pin(t, scriptInvocation("R0"), 30*time.Minute)
	if !strings.Contains(msg, "the script matches by its parsed form") || !strings.Contains(msg, "sha-256 303132333435") {
		t.Errorf("pinning message: %s", msg)
	}

	// The same command again, and the same script spelt differently.
	same := scriptInvocation("R1")
	if d := h.ap.Decide(context.Background(), same); !d.Approve {
		t.Fatalf("rule did not cover the same request: %+v", d)
	}
	respelt := scriptInvocation("R2")
	respelt.Invocation.Arguments = []string{"-c", "make   test  # once more\n"}
	if d := h.ap.Decide(context.Background(), respelt); !d.Approve {
		t.Fatalf("rule did not cover the same script respelt: %+v", d)
	}
	if out := h.out.String(); !strings.Contains(out, "R1 approved by pinned rule r-") {
		t.Errorf("rule decision not shown:\n%s", out)
	}

	cases := []struct {
		field  string
		change func(a *device.Approval)
	}{
		{"sha-256 (the executable changed", func(a *device.Approval) { a.Invocation.ExecutableHash = otherHash }},
		{"executable path", func(a *device.Approval) { a.Invocation.ExecutablePath = "/usr/local/bin/bash" }},
		{"script (its parsed form differs", func(a *device.Approval) { a.Invocation.Arguments = []string{"-c", "make test && make deploy"} }},
		{"script (its parsed form differs", func(a *device.Approval) { a.Invocation.Arguments = []string{"-ec", "make test"} }},
		{"directory", func(a *device.Approval) { a.Invocation.WorkingDirectory = "/work/other" }},
		{"routing", func(a *device.Approval) {
			a.Invocation.Routing = map[string]device.Routing{"demo": {Only: []string{"TOKEN", "USER"}}}
		}},
		{"client", func(a *device.Approval) { a.ClientID = "01K2ENXDTW1P3XAR4J7V7C9D0Z" }},
		{"secrets", func(a *device.Approval) { a.Secrets = []string{"demo", "prod"} }},
	}
	for i, c := range cases {
		a := scriptInvocation("D" + string(rune('a'+i)))
		c.change(a)
		note := h.askedAgain(t, a)
		if !strings.Contains(note, "differs from pinned rule r-") || !strings.Contains(note, c.field) {
			t.Errorf("changed %s: prompt says %q", c.field, note)
		}
		if strings.Count(note, "\n") != 1 {
			t.Errorf("changed %s alone, but more fields are named: %q", c.field, note)
		}
	}
	// The display shows it too.
	if !strings.Contains(h.out.String(), "  asked again   this request differs from pinned rule r-") {
		t.Errorf("asked-again line not shown:\n%s", h.out.String())
	}

	// A restarted serve (a new store on the same directory) still applies it.
	h2 := &harness{out: &syncBuffer{}, dir: h.dir, clock: h.clock}
	h2.ap = newApprover(defaultPolicy(), h.dir, h.clock.now, newConsole(h2.out), false)
	if d := h2.ap.Decide(context.Background(), scriptInvocation("R3")); !d.Approve {
		t.Fatalf("rule lost across a restart: %+v", d)
	}

	// Expired: asked again, naming the expiry.
	h.clock.t = h.clock.t.Add(30 * time.Minute)
	if note := h.askedAgain(t, scriptInvocation("R4")); !strings.Contains(note, "expiry (the rule expired at") {
		t.Errorf("expired rule: prompt says %q", note)
	}
	fi, err := os.Stat(filepath.Join(h.dir, rulesFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rules.json: %v %v", fi, err)
	}
}

func TestPinnedRuleExactArgvAndExecuteOnly(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	gh := func(id string) *device.Approval {
		a := fakeInvocation(id, "demo")
		a.Invocation.Command, a.Invocation.Arguments = "gh", []string{"pr", "list"}
		a.Invocation.ExecutableMode, a.Invocation.ScriptContents, a.Invocation.HasScriptContents = "BINARY", "", false
		return a
	}
	h.pin(t, gh("X0"), time.Hour)
	if d := h.ap.Decide(context.Background(), gh("X1")); !d.Approve {
		t.Fatalf("exact rule: %+v", d)
	}
	other := gh("X2")
	other.Invocation.Arguments = []string{"pr", "merge", "12"}
	if note := h.askedAgain(t, other); !strings.Contains(note, "arguments (the rule is for gh pr list)") {
		t.Errorf("changed argv: %q", note)
	}
	// A hashless request never matches a rule with a hash.
	hashless := gh("X3")
	hashless.Invocation.ExecutableHash = ""
	if note := h.askedAgain(t, hashless); !strings.Contains(note, "sha-256 (the executable sent no hash") {
		t.Errorf("hashless request against a hashed rule: %q", note)
	}

	// An execute-only binary is pinned by its path alone, and the rule
	// says so.
	eo := gh("Y0")
	eo.Invocation.ExecutablePath, eo.Invocation.ExecutableHash = "/opt/secret/tool", ""
	msg := h.pin(t, eo, time.Hour)
	if !strings.Contains(msg, "execute-only binary: bound to its path only, no hash") {
		t.Errorf("execute-only rule does not say so: %s", msg)
	}
	eo2 := gh("Y1")
	eo2.Invocation.ExecutablePath, eo2.Invocation.ExecutableHash = "/opt/secret/tool", ""
	if d := h.ap.Decide(context.Background(), eo2); !d.Approve {
		t.Fatalf("execute-only rule: %+v", d)
	}
	hashed := gh("Y2")
	hashed.Invocation.ExecutablePath = "/opt/secret/tool"
	if note := h.askedAgain(t, hashed); !strings.Contains(note, "sha-256 (the rule is for an execute-only binary") {
		t.Errorf("hashed request against an execute-only rule: %q", note)
	}

	// Only invocations can be pinned.
	gs := fakeInvocation("G0", "demo")
	gs.Kind, gs.Invocation, gs.GitSign = kindGitSign, nil, &device.GitSignDetails{Secret: "demo", Message: "x"}
	ch := h.decide(context.Background(), gs)
	h.waitPending(t, "G0")
	if _, err := h.ap.approve("G0", 0, time.Hour, "", "test"); err == nil || !strings.Contains(err.Error(), "only invocations") {
		t.Errorf("pinning a Git signature: %v", err)
	}
	h.ap.deny("G0", "", "test")
	receive(t, ch)

	// rules lists and removes them; a removed rule no longer applies.
	r := h.cli(t, "rules", "--json")
	if r.code != 0 || strings.Count(r.stdout, `"id": "r-`) != 2 || !strings.Contains(r.stdout, `"execute_only": true`) {
		t.Fatalf("rules --json: %s", r)
	}
	rules, _, _ := h.ap.rules.list()
	if r := h.cli(t, "rules", "remove", rules[0].ID); r.code != 0 {
		t.Fatal(r)
	}
	if note := h.askedAgain(t, gh("X4")); strings.Contains(note, rules[0].ID) {
		t.Errorf("removed rule still considered: %q", note)
	}
}

func TestPolicyRules(t *testing.T) {
	hexHash := "3031323334353637383961626364656630313233343536373839616263646566"
	pol, err := parsePolicy([]byte(`{"rules": [
		{"name": "tests", "client": "` + testClientID + `", "secrets": ["demo"],
		 "routing": {"demo": {"only": ["TOKEN"], "rename": {"TOKEN": "GH_TOKEN"}}},
		 "executable": "/usr/bin/bash", "sha256": "` + hexHash + `",
		 "argv": ["bash", "-c", "make test"], "match": "script", "directory": "/work/project"},
		{"name": "old", "client": "` + testClientID + `", "secrets": ["demo"],
		 "routing": {"demo": {"only": ["TOKEN"], "rename": {"TOKEN": "GH_TOKEN"}}},
		 "executable": "/usr/bin/bash", "sha256": "` + hexHash + `",
		 "argv": ["bash", "-c", "make lint"], "directory": "/work/project", "expires": "2020-01-01T00:00:00Z"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pol)
	a := scriptInvocation("P0")
	a.Invocation.Arguments = []string{"-c", "make test\n"}
	if d := h.ap.Decide(context.Background(), a); !d.Approve {
		t.Fatalf("policy rule: %+v\n%s", d, h.out.String())
	}
	if !strings.Contains(h.out.String(), "approved by policy rule tests") {
		t.Errorf("policy rule not named:\n%s", h.out.String())
	}
	lint := scriptInvocation("P1")
	lint.Invocation.Arguments = []string{"-c", "make lint"}
	if note := h.askedAgain(t, lint); !strings.Contains(note, "policy rule old in:\nexpiry (the rule expired at") {
		t.Errorf("expired policy rule: %q", note)
	}

	for _, bad := range []string{
		`{"rules": [{"client": "c", "secrets": ["s"], "executable": "/bin/x", "argv": ["x"], "directory": "/w"}]}`,                                          // no hash
		`{"rules": [{"client": "c", "secrets": ["s"], "executable": "/bin/x", "sha256": "00", "argv": ["x"], "directory": "/w"}]}`,                          // short hash
		`{"rules": [{"client": "c", "secrets": ["s"], "executable": "x", "execute_only": true, "argv": ["x"], "directory": "/w"}]}`,                         // relative path
		`{"rules": [{"client": "c", "secrets": ["s"], "executable": "/bin/x", "execute_only": true, "argv": ["x"], "match": "script", "directory": "/w"}]}`, // not a script
		`{"rules": [{"client": "c", "secrets": ["s"], "executable": "/bin/x", "execute_only": true, "argv": ["x"], "directory": "/w", "colour": 1}]}`,       // unknown member
		`{"rules": [{"client": "c", "secrets": ["s"], "executable": "/bin/x", "execute_only": true, "argv": ["x"], "directory": "/w", "routing": {"t": {}}}]}`,
	} {
		if _, err := parsePolicy([]byte(bad)); err == nil {
			t.Errorf("accepted: %s", bad)
		}
	}
}
