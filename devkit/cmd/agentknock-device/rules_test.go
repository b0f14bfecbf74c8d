// Tests of pinned and policy rules: a rule covers exactly the request it
// was made from; a change in any bound field (client, secrets, routing,
// executable path, hash, arguments, directory, expiry) is asked again and
// the prompt names the field.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
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
	if !strings.Contains(msg, "the arguments match byte for byte") || !strings.Contains(msg, "sha-256 303132333435") {
		t.Errorf("pinning message: %s", msg)
	}

	// The same command again matches; the same script spelt with other
	// bytes (spacing, a comment, a carriage return the parser reads as a
	// blank) does not, and the prompt says it parses alike.
	same := scriptInvocation("R1")
	if d := h.ap.Decide(context.Background(), same); !d.Approve {
		t.Fatalf("rule did not cover the same request: %+v", d)
	}
	for i, respelt := range []string{"make   test  # once more\n", "make\rtest"} {
		a := scriptInvocation("R" + string(rune('2'+i)))
		a.Invocation.Arguments = []string{"-c", respelt}
		if note := h.askedAgain(t, a); !strings.Contains(note, "though they parse alike") {
			t.Errorf("respelt %q: prompt says %q", respelt, note)
		}
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
		{"standard input (the rule is for TERMINAL, this request PIPE)", func(a *device.Approval) { a.Invocation.Stdin = "PIPE" }},
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
	a.Invocation.Arguments = []string{"-c", "make test"}
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

// names lists the item names of an unbound list.
func names(items []unboundItem) string {
	var n []string
	for _, it := range items {
		n = append(n, it.Name)
	}
	return strings.Join(n, " | ")
}

func TestUnboundNamesWhatARuleCannotSee(t *testing.T) {
	envBash := "#!/usr/bin/env bash\nmake test\n"
	binSh := "#!/bin/sh\necho hi\n"
	cases := []struct {
		argv   []string
		exe    string
		script *string
		want   []string // names that must be listed
		safer  string   // a safer form that must be offered
		absent []string // names that must not be
	}{
		{argv: []string{"bash", "build.sh"}, exe: "/usr/bin/bash", want: []string{"build.sh", "BASH_ENV"}, safer: "run ./build.sh itself"},
		{argv: []string{"sh", "-c", "./b2.sh"}, exe: "/bin/sh", want: []string{"./b2.sh"}, safer: "run ./b2.sh as the command itself", absent: []string{"BASH_ENV", "PATH"}},
		{argv: []string{"sh", "-c", "build.sh"}, exe: "/bin/sh", want: []string{"build.sh via PATH", "PATH"}},
		{argv: []string{"sh", "-c", "make -v"}, exe: "/bin/sh", want: []string{"make via PATH", "PATH", "Makefile"}, safer: "write its absolute path instead"},
		{argv: []string{"bash", "-c", "echo hello"}, exe: "/bin/bash", want: []string{"BASH_ENV"}, absent: []string{"PATH", "echo via PATH"}},
		{argv: []string{"sh", "-ic", "true"}, exe: "/bin/sh", want: []string{"ENV"}},
		{argv: []string{"./run.sh"}, exe: "/w/run.sh", script: &envBash, want: []string{"bash via PATH", "BASH_ENV", "make via PATH", "PATH"}, safer: "#!/bin/bash"},
		{argv: []string{"./run.sh"}, exe: "/w/run.sh", script: &binSh, want: []string{"/bin/sh"}, absent: []string{"PATH", "BASH_ENV"}},
		{argv: []string{"make", "-f", "ci.mk", "test"}, exe: "/usr/bin/make", want: []string{"ci.mk"}, absent: []string{"Makefile", "PATH"}},
		{argv: []string{"python3", "tool.py"}, exe: "/usr/bin/python3", want: []string{"tool.py"}},
		{argv: []string{"python3", "-c", "print(1)"}, exe: "/usr/bin/python3", absent: []string{"print(1)"}},
		{argv: []string{"env", "A=1", "npm", "test"}, exe: "/usr/bin/env", want: []string{"npm via PATH"}},
		{argv: []string{"sh", "-c", `f() { ls; }; f; "$CMD"; . ./env.sh; /usr/bin/make; sh -c 'go test'`}, exe: "/bin/sh",
			want: []string{"ls via PATH", "a command computed when the script runs", "./env.sh", "/usr/bin/make", "go via PATH"}, absent: []string{"f via PATH"}},
		{argv: []string{"gh", "pr", "list"}, exe: "/usr/bin/gh", absent: []string{"PATH", "BASH_ENV"}},
	}
	for _, c := range cases {
		items := unboundOf(c.argv, c.exe, "/work/project", c.script)
		got := " | " + names(items) + " | "
		for _, w := range append(c.want, "directory /work/project", "the inherited environment") {
			if !strings.Contains(got, " | "+w+" | ") {
				t.Errorf("%q: %q not listed in %s", c.argv, w, got)
			}
		}
		for _, a := range c.absent {
			if strings.Contains(got, " | "+a+" | ") {
				t.Errorf("%q: %q listed in %s", c.argv, a, got)
			}
		}
		if c.safer != "" && !strings.Contains(unboundText(items, ""), "safer: ") || !strings.Contains(unboundText(items, ""), c.safer) {
			t.Errorf("%q: safer form %q not offered:\n%s", c.argv, c.safer, unboundText(items, ""))
		}
	}
	// Bounded: a script naming hundreds of commands.
	var long string
	for i := range 300 {
		long += fmt.Sprintf("cmd%d; ", i)
	}
	if items := unboundOf([]string{"sh", "-c", long}, "/bin/sh", "/w", nil); len(items) > maxUnboundItems+1 || !strings.Contains(names(items), "and ") {
		t.Errorf("unbounded list: %d items", len(items))
	}
}

func TestPinNeedsConfirmationOnTheTerminal(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	a := scriptInvocation("T1")
	ch := h.decide(context.Background(), a)
	h.waitPending(t, "T1")
	h.ap.terminalLine("p 30")
	if out := h.out.String(); !strings.Contains(out, "a rule for this command would not bind:") || !strings.Contains(out, "- BASH_ENV:") ||
		!strings.Contains(out, "- make via PATH:") || !strings.Contains(out, "pin it anyway, knowing the above is not bound? [y/N") {
		t.Fatalf("the list was not shown before the pin:\n%s", out)
	}
	h.ap.terminalLine("n") // not confirmed: nothing pinned, still waiting
	if rules, _, _ := h.ap.rules.list(); len(rules) != 0 || len(h.ap.list()) != 1 || !strings.Contains(h.out.String(), "not pinned; the request still waits") {
		t.Fatalf("an unconfirmed pin: rules %v, pending %d\n%s", rules, len(h.ap.list()), h.out.String())
	}
	// Answered from elsewhere after the list was shown: the "y" meant for
	// it confirms nothing and answers nothing.
	other := scriptInvocation("T2")
	ch2 := h.decide(context.Background(), other)
	h.waitPending(t, "T2")
	h.ap.terminalLine("p 30")
	h.ap.mu.Lock()
	h.ap.pending[0], h.ap.pending[1] = h.ap.pending[1], h.ap.pending[0] // as if T1 was answered
	h.ap.mu.Unlock()
	h.ap.terminalLine("y")
	if len(h.ap.list()) != 2 || !strings.Contains(h.out.String(), "T1 was answered meanwhile; nothing pinned") {
		t.Fatalf("a confirmation went to another request:\n%s", h.out.String())
	}
	h.ap.mu.Lock()
	h.ap.pending[0], h.ap.pending[1] = h.ap.pending[1], h.ap.pending[0]
	h.ap.mu.Unlock()
	h.ap.terminalLine("p 30")
	h.ap.terminalLine("y")
	if d := receive(t, ch); !d.Approve {
		t.Fatalf("confirmed pin: %+v", d)
	}
	h.ap.deny("T2", "", "test")
	receive(t, ch2)
	rules, _, _ := h.ap.rules.list()
	if len(rules) != 1 || !strings.Contains(names(rules[0].Unbound), "make via PATH") {
		t.Fatalf("rule after the confirmed pin: %+v", rules)
	}
	entries, _, _ := readAudit(h.dir, time.Time{})
	if len(entries) != 2 || !strings.Contains(strings.Join(entries[0].Unbound, ","), "BASH_ENV") {
		t.Errorf("the audit entry does not record what the person confirmed: %+v", entries)
	}
	// `rules` shows the same list.
	if r := h.cli(t, "rules"); r.code != 0 || !strings.Contains(r.stdout, "- make via PATH:") || !strings.Contains(r.stdout, "- BASH_ENV:") {
		t.Errorf("rules: %s", r)
	}
}

func TestPinNeedsConfirmationFromAnotherTerminal(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	h.withControl(t)
	a := scriptInvocation("C1")
	ch := h.decide(context.Background(), a)
	h.waitPending(t, "C1")
	r := h.cli(t, "approve", "C1", "--pin", "30")
	m := regexp.MustCompile(`--accept-unbound ([0-9a-f]{10})`).FindStringSubmatch(r.stderr)
	if r.code != 1 || m == nil || !strings.Contains(r.stderr, "- make via PATH:") || !strings.Contains(r.stderr, "nothing answered yet") {
		t.Fatalf("approve --pin without confirmation: %s", r)
	}
	if len(h.ap.list()) != 1 {
		t.Fatal("the request was answered without the confirmation")
	}
	if r := h.cli(t, "approve", "C1", "--accept-unbound", m[1]); r.code != 2 {
		t.Errorf("--accept-unbound without --pin: %s", r)
	}
	if r := h.cli(t, "approve", "C1", "--pin", "30", "--accept-unbound", m[1]); r.code != 0 || !strings.Contains(r.stderr, "pinned rule r-") {
		t.Fatalf("confirmed: %s", r)
	}
	if d := receive(t, ch); !d.Approve {
		t.Fatalf("%+v", d)
	}
}

func TestPinnedRulesAuthenticated(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	h.pin(t, scriptInvocation("M0"), time.Hour)
	if d := h.ap.Decide(context.Background(), scriptInvocation("M1")); !d.Approve {
		t.Fatalf("authentic rule not applied: %+v", d)
	}
	fi, err := os.Stat(filepath.Join(h.dir, rulesKeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("rules.key: %v %v", fi, err)
	}
	path := filepath.Join(h.dir, rulesFile)
	pristine, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	key, err := readRulesKey(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	rewrite := func(edit func(r *rule, key []byte)) {
		t.Helper()
		var doc rulesDoc
		if err := json.Unmarshal(pristine, &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc.Rules[0], key)
		data, _ := json.Marshal(doc)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	deploy := func(id string) *device.Approval {
		a := scriptInvocation(id)
		a.Invocation.Arguments = []string{"-c", "make deploy"}
		return a
	}
	cases := []struct {
		name, why string
		edit      func(r *rule, key []byte)
		request   func(id string) *device.Approval
		setClock  time.Duration // from now
	}{
		{"hand-edited argv", "its MAC does not verify", func(r *rule, _ []byte) { r.Argv = []string{"bash", "-c", "make deploy"} }, deploy, 0},
		{"hand-edited expiry", "its MAC does not verify", func(r *rule, _ []byte) { r.Expires = r.Expires.Add(48 * time.Hour) }, scriptInvocation, 2 * time.Hour},
		{"hand-added", "carries no MAC", func(r *rule, _ []byte) { r.MAC = ""; r.Expires = time.Time{} }, scriptInvocation, 0},
		{"created in the future", "created in the future", func(r *rule, key []byte) {
			r.Created, r.Expires = r.Created.Add(24*time.Hour), r.Expires.Add(24*time.Hour)
			r.MAC = ruleMAC(key, r)
		}, scriptInvocation, 0},
		{"clock set back a year", "created in the future", func(*rule, []byte) {}, scriptInvocation, -365 * 24 * time.Hour},
		{"beyond the lifetime cap", "beyond the lifetime cap", func(r *rule, key []byte) {
			r.Expires = r.Created.Add(30 * 24 * time.Hour)
			r.MAC = ruleMAC(key, r)
		}, scriptInvocation, 0},
	}
	start := h.clock.t
	for i, c := range cases {
		rewrite(c.edit)
		h.clock.t = start.Add(c.setClock)
		id := fmt.Sprintf("E%d", i)
		if note := h.askedAgain(t, c.request(id)); c.setClock != 2*time.Hour && !strings.Contains(note, "would cover this request but is refused: ") || !strings.Contains(note+c.why, c.why) {
			t.Errorf("%s: the prompt says %q", c.name, note)
		}
		if c.setClock != 0 {
			continue // `rules` runs on the real clock
		}
		r := h.cli(t, "rules")
		if r.code != 1 || !strings.Contains(r.stdout, "[REFUSED, never applied: ") || !strings.Contains(r.stdout, c.why) || !strings.Contains(r.stderr, "1 pinned rule(s) refused") {
			t.Errorf("%s: rules: %s", c.name, r)
		}
	}
	// The cap by the current clock: an authentic week-long rule is dead
	// after a week, and setting the clock back within it revives it only
	// up to the cap.
	h.clock.t = start
	os.Remove(path)
	h.pin(t, scriptInvocation("W0"), 7*24*time.Hour)
	h.clock.t = start.Add(7*24*time.Hour + time.Second)
	if note := h.askedAgain(t, scriptInvocation("W1")); !strings.Contains(note, "expiry (the rule expired at") {
		t.Errorf("past the cap: %q", note)
	}
	rules, _, _ := h.ap.rules.list()
	if rules[0].end().After(rules[0].Created.Add(ruleLifetimeCap)) {
		t.Errorf("a rule ends after its cap: %+v", rules[0])
	}
}

// FuzzUnbound: any argv and script text give a bounded list, without a
// panic, that always names the directory and the environment.
func FuzzUnbound(f *testing.F) {
	f.Add("sh", "-c", "make -v; ./b2.sh; . x; eval 'curl y'")
	f.Add("bash", "build.sh", "")
	f.Add("./run.sh", "", "#!/usr/bin/env -S bash -e\nmake test\n")
	f.Fuzz(func(t *testing.T, cmd, arg, script string) {
		var s *string
		if strings.HasPrefix(script, "#!") {
			s = &script
		}
		items := unboundOf([]string{cmd, arg, script}, "/bin/"+cmd, "/w", s)
		if len(items) > maxUnboundItems+1 || !strings.Contains(names(items), "directory /w") {
			t.Fatalf("%d items: %s", len(items), names(items))
		}
	})
}

// A pin of arguments holding a control character other than tab and
// newline is refused, saying why; tab and newline are pinned.
func TestPinRefusesControlCharacters(t *testing.T) {
	for _, script := range []string{"cat\r./notes", "echo \x1b[2Jok", "echo\x00", "x\x7f"} {
		a := scriptInvocation("C")
		a.Invocation.Arguments = []string{"-c", script}
		if _, err := ruleFromRequest(a, time.Hour, time.Now(), "test"); err == nil || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%q pinned: %v", script, err)
		}
	}
	a := scriptInvocation("C")
	a.Invocation.Arguments = []string{"-c", "make\ttest\nmake lint"}
	if _, err := ruleFromRequest(a, time.Hour, time.Now(), "test"); err != nil {
		t.Errorf("tab and newline refused: %v", err)
	}
	pol := `{"rules": [{"client": "c", "secrets": ["s"], "executable": "/bin/sh", "execute_only": true, "argv": ["sh", "-c", "cat\r./x"], "directory": "/w"}]}`
	if _, err := parsePolicy([]byte(pol)); err == nil || !strings.Contains(err.Error(), "control character") {
		t.Errorf("a policy rule with a CR: %v", err)
	}
}
