// Tests of the policy by what the command does (Step 21): the policy file's
// "read_only" and "irreversible" members, the decision with a command's
// class, and the approver with fixed classes (so these tests hold whatever
// the tables say; the tables' own classes are tested in devkit/commands
// and end to end in e2e/readonly_test.go): irreversible asks whatever a
// policy, rule or grant says, read-only passes by "read_only" and by a
// read-only grant, a command not understood is never read-only and an
// approval of it says so, a pin of an irreversible command is refused.
package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	commandmodel "agentknock.dev/agentknock/devkit/commands"
	"agentknock.dev/agentknock/devkit/device"
)

var (
	classRead  = &commandClass{Class: commandmodel.ClassReadOnly, Why: "read-only: git status, executable /usr/bin/git", Understood: true}
	classOther = &commandClass{Class: commandmodel.ClassOther, Why: "other: git commit", Understood: true}
	classIrrev = &commandClass{Class: commandmodel.ClassIrreversible, Why: "irreversible: git push --force", Understood: true}
	// A script the device does not understand, whose tables would call
	// it read-only as far as they go: never read-only.
	classUnknown = &commandClass{Class: commandmodel.ClassReadOnly, Why: "possibly irreversible: not understood", NotUnderstood: "line 1: eval runs computed text"}
)

func TestPolicyClassMembersStrict(t *testing.T) {
	good := []string{
		`{"read_only": {"gh-token": "approve", "*": "ask"}}`,
		`{"irreversible": "deny"}`,
		`{"irreversible": "ask", "read_only": {}}`,
	}
	for _, g := range good {
		if _, err := parsePolicy([]byte(g)); err != nil {
			t.Errorf("%s: %v", g, err)
		}
	}
	bad := map[string]string{
		`{"irreversible": "approve"}`:           "never approved without a person",
		`{"irreversible": "maybe"}`:             "not ask or deny",
		`{"read_only": {"gh-token": "deny"}}`:   "not approve or ask",
		`{"read_only": {"": "approve"}}`:        "empty secret name",
		`{"read_only": ["gh-token"]}`:           "cannot unmarshal",
		`{"readonly": {"gh-token": "approve"}}`: "unknown field",
	}
	for text, want := range bad {
		_, err := parsePolicy([]byte(text))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error with %q", text, err, want)
		}
	}
	if p, _ := parsePolicy([]byte(`{}`)); p.Irreversible != verdictAsk {
		t.Errorf("irreversible defaults to %q, want ask", p.Irreversible)
	}
}

func TestPolicyDecideClassed(t *testing.T) {
	p, err := parsePolicy([]byte(`{
		"secrets": {"demo": "approve", "prod": "deny"},
		"read_only": {"gh-token": "approve", "*": "approve", "careful": "ask"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	strict, err := parsePolicy([]byte(`{"irreversible": "deny", "read_only": {"gh-token": "approve"}}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		p         *policy
		kind      string
		secrets   []string
		c         *commandClass
		want      verdict
		alwaysAsk bool
		text      string // in the note, message or why
	}{
		{"read-only by the secret's entry", p, kindInvocation, []string{"gh-token"}, classRead, verdictApprove, false, `"read_only" gh-token: read-only: git status, executable /usr/bin/git`},
		{"read-only by *", p, kindInvocation, []string{"other"}, classRead, verdictApprove, false, `"*" for other`},
		{"a secret's ask stands before *", p, kindInvocation, []string{"careful"}, classRead, verdictAsk, false, ""},
		{"every secret must be approved", p, kindInvocation, []string{"careful", "gh-token"}, classRead, verdictAsk, false, ""},
		{"other is not read-only", p, kindInvocation, []string{"gh-token"}, classOther, verdictAsk, false, ""},
		{"not understood is never read-only", p, kindInvocation, []string{"gh-token"}, classUnknown, verdictAsk, false, ""},
		{"irreversible asks despite read_only", p, kindInvocation, []string{"gh-token"}, classIrrev, verdictAsk, true, "irreversible: git push --force"},
		{"irreversible asks despite a secret approve", p, kindInvocation, []string{"demo"}, classIrrev, verdictAsk, true, "irreversible: git push --force"},
		{"irreversible over SSH asks too", p, kindSSH, []string{"demo"}, classIrrev, verdictAsk, true, "irreversible"},
		{"a deny still denies", p, kindInvocation, []string{"prod"}, classIrrev, verdictDeny, false, `secret "prod"`},
		{"irreversible deny", strict, kindInvocation, []string{"gh-token"}, classIrrev, verdictDeny, false, "device policy denies irreversible commands (irreversible: git push --force)"},
		{"read_only applies to invocations only", p, kindGitSign, []string{"gh-token"}, classRead, verdictAsk, false, ""},
		{"no command: the old decision", p, kindInvocation, []string{"demo"}, nil, verdictApprove, false, "approved by policy"},
		{"not understood, approved by the secret's rule", p, kindInvocation, []string{"demo"}, classUnknown, verdictApprove, false, "approved by policy"},
	}
	for _, tc := range cases {
		o := tc.p.decideClassed(tc.kind, tc.secrets, tc.c)
		text := o.note + "|" + o.message + "|" + o.why + "|" + o.by.how
		if o.v != tc.want || o.alwaysAsk != tc.alwaysAsk || !strings.Contains(text, tc.text) {
			t.Errorf("%s: got %s alwaysAsk=%v %q, want %s alwaysAsk=%v with %q", tc.name, o.v, o.alwaysAsk, text, tc.want, tc.alwaysAsk, tc.text)
		}
	}
}

// classHarness is an approver whose commands have the class the test
// gives each request id.
func classHarness(t *testing.T, policyText string, classes map[string]*commandClass) *harness {
	t.Helper()
	pol, err := parsePolicy([]byte(policyText))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pol)
	h.ap.classify = func(a *device.Approval) *commandClass { return classes[a.ID] }
	return h
}

func TestApproverReadOnlyPolicy(t *testing.T) {
	h := classHarness(t, `{"read_only": {"demo": "approve"}}`, map[string]*commandClass{"R1": classRead, "R2": classOther, "R3": classUnknown})
	ctx := context.Background()
	if d := h.ap.Decide(ctx, fakeInvocation("R1", "demo")); !d.Approve {
		t.Fatalf("read-only request not approved: %+v", d)
	}
	out := h.out.String()
	if !strings.Contains(out, "-> R1 approved by the read-only policy (\"read_only\" demo: read-only: git status, executable /usr/bin/git)") {
		t.Errorf("the console does not name the entry that matched:\n%s", out)
	}
	if !strings.Contains(out, "class         read-only: git status, executable /usr/bin/git") {
		t.Errorf("the request's display does not show its class:\n%s", out)
	}
	for _, id := range []string{"R2", "R3"} {
		ch := h.decide(ctx, fakeInvocation(id, "demo"))
		h.waitPending(t, id)
		if _, err := h.ap.deny(id, "", "test"); err != nil {
			t.Fatal(err)
		}
		receive(t, ch)
	}
	if v := h.ap.list(); len(v) != 0 {
		t.Errorf("still pending: %v", v)
	}
	entries, _, err := readAudit(h.dir, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Fatalf("%d audit entries, want 3", len(entries))
	}
	e := entries[0]
	if e.DecidedBy != "policy" || e.Class != "read-only" || e.ClassWhy != classRead.Why || !strings.Contains(e.How, `"read_only" demo`) {
		t.Errorf("the audit entry of the read-only approval: %+v", e)
	}
	if entries[2].Class != "read-only" || entries[2].DecidedBy != "person" {
		t.Errorf("the not understood request was not asked of a person: %+v", entries[2])
	}
}

func TestApproverIrreversibleAlwaysAsks(t *testing.T) {
	h := classHarness(t, `{"secrets": {"demo": "approve"}, "read_only": {"*": "approve"}}`,
		map[string]*commandClass{"I1": classIrrev, "I2": classOther, "I3": classIrrev})
	ctx := context.Background()
	// A grant for the same secrets and client, whatever the command.
	if g, err := h.ap.grants.add(testClientID, kindInvocation, []string{"demo"}, time.Hour, false); err != nil {
		t.Fatal(err)
	} else {
		logGrantCreation(t, h, g) // a grant is used only as the log records it
	}
	ch := h.decide(ctx, fakeInvocation("I1", "demo"))
	h.waitPending(t, "I1")
	v := h.ap.list()[0]
	if v.Class != "irreversible" || !strings.Contains(v.ClassLine, "irreversible: git push --force (always asked of a person)") {
		t.Errorf("pending does not say why: %+v", v)
	}
	joined := strings.Join(v.AskedAgain, "\n")
	for _, want := range []string{"the policy approves these secrets for any command, but not an irreversible one",
		"a grant covers this request but does not apply to an irreversible command"} {
		if !strings.Contains(joined, want) {
			t.Errorf("asked again does not say %q:\n%s", want, joined)
		}
	}
	// Pinning it is refused with the reason; the request still waits.
	_, err := h.ap.approve("I1", 0, time.Hour, "", "test")
	var refused pinRefused
	if !errors.As(err, &refused) || !strings.Contains(err.Error(), "irreversible: git push --force") {
		t.Fatalf("pin of an irreversible command: %v", err)
	}
	if len(h.ap.list()) != 1 {
		t.Fatal("the refused pin answered the request")
	}
	if _, err := h.ap.approve("I1", 0, 0, "", "test"); err != nil {
		t.Fatal(err)
	}
	if d := receive(t, ch); !d.Approve {
		t.Fatalf("approved once by the person: %+v", d)
	}
	out := h.out.String()
	if !strings.Contains(out, "I1: irreversible: git push --force: asked of a person whatever a policy, pinned rule or grant says") {
		t.Errorf("the console does not say why I1 is asked:\n%s", out)
	}
	// The same grant still approves a request that is not irreversible.
	if d := h.ap.Decide(ctx, fakeInvocation("I2", "demo")); !d.Approve {
		t.Errorf("the policy's approval of an ordinary request: %+v", d)
	}
	entries, _, _ := readAudit(h.dir, time.Time{})
	entries = entries[1:] // the first records the grant's creation
	if len(entries) != 2 || entries[0].ClassWhy != classIrrev.Why || entries[0].DecidedBy != "person" {
		t.Errorf("audit entries: %+v", entries)
	}
	// "irreversible": "deny" refuses instead of asking.
	strict := classHarness(t, `{"secrets": {"demo": "approve"}, "irreversible": "deny"}`, map[string]*commandClass{"I3": classIrrev})
	d := strict.ap.Decide(ctx, fakeInvocation("I3", "demo"))
	if d.Approve || d.Reason != "POLICY_DENIED" || !strings.Contains(d.Message, "irreversible: git push --force") {
		t.Errorf(`"irreversible": "deny": %+v`, d)
	}
}

func TestApproverReadOnlyGrant(t *testing.T) {
	h := classHarness(t, `{}`, map[string]*commandClass{"G1": classRead, "G2": classRead, "G3": classOther, "G4": classUnknown, "G5": classIrrev})
	h.withControl(t)
	ctx := context.Background()
	ch := h.decide(ctx, fakeInvocation("G1", "demo"))
	h.waitPending(t, "G1")
	if r := h.cli(t, "approve", "G1", "--read-only"); r.code != 2 || !strings.Contains(r.stderr, "--read-only shapes a grant") {
		t.Errorf("--read-only without --for: %+v", r)
	}
	if r := h.cli(t, "approve", "G1", "--for", "10m", "--read-only"); r.code != 0 || !strings.Contains(r.stderr, "when read-only") {
		t.Fatalf("approve --for 10m --read-only: %+v", r)
	}
	receive(t, ch)
	if d := h.ap.Decide(ctx, fakeInvocation("G2", "demo")); !d.Approve {
		t.Fatalf("the read-only grant does not cover a read-only request: %+v", d)
	}
	if out := h.out.String(); !strings.Contains(out, "-> G2 approved by a read-only grant valid until") || !strings.Contains(out, classRead.Why) {
		t.Errorf("the console does not say the read-only grant approved G2 and why:\n%s", out)
	}
	for _, id := range []string{"G3", "G4", "G5"} {
		ch := h.decide(ctx, fakeInvocation(id, "demo"))
		h.waitPending(t, id)
		v := h.ap.list()[0]
		if id != "G5" && !strings.Contains(strings.Join(v.AskedAgain, "\n"), "a read-only grant covers these secrets, but this command is") {
			t.Errorf("%s: asked again does not name the read-only grant: %v", id, v.AskedAgain)
		}
		h.ap.deny(id, "", "test")
		receive(t, ch)
	}
	// The scope is part of what the MAC covers: widening it by hand
	// voids the grant.
	grants, err := h.ap.grants.load()
	if err != nil || len(grants) != 1 || !grants[0].ReadOnly {
		t.Fatalf("grants: %+v %v", grants, err)
	}
	g := grants[0]
	g.ReadOnly = false
	key, _ := readRulesKey(h.dir)
	if g.refusal(key, h.clock.now()) == "" {
		t.Error("a read-only grant widened by hand still verifies")
	}
}

func TestApproverNotUnderstoodSaysSo(t *testing.T) {
	h := classHarness(t, `{"secrets": {"demo": "approve"}}`, map[string]*commandClass{"U1": classUnknown})
	if d := h.ap.Decide(context.Background(), fakeInvocation("U1", "demo")); !d.Approve {
		t.Fatalf("policy approve: %+v", d)
	}
	out := h.out.String()
	if !strings.Contains(out, "-> U1 approved by policy; note: the device does not understand this command (line 1: eval runs computed text), so it may be irreversible") {
		t.Errorf("the console does not say the approved command is not understood:\n%s", out)
	}
	entries, _, _ := readAudit(h.dir, time.Time{})
	if len(entries) != 1 || !strings.Contains(entries[0].How, "may be irreversible") {
		t.Errorf("the audit entry does not say so: %+v", entries)
	}
}

func TestServeNamesReadOnlyPolicy(t *testing.T) {
	p, err := parsePolicy([]byte(`{"read_only": {"gh-token": "approve", "*": "approve", "prod": "ask"}, "irreversible": "deny"}`))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(p.autoApprovals(), "")
	for _, want := range []string{`"read_only": secrets "*" (every secret without its own entry), gh-token: "approve"`,
		"read-only forms", "A read can still send the secret to the service it is for",
		`Irreversible commands are denied ("irreversible": "deny")`} {
		if !strings.Contains(text, want) {
			t.Errorf("serve's start does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "prod") {
		t.Errorf("a secret the read-only policy asks about is listed as approved:\n%s", text)
	}
	if lines := defaultPolicy().autoApprovals(); len(lines) != 0 {
		t.Errorf("the default policy approves by itself: %q", lines)
	}
}

func TestExplainArgvCommand(t *testing.T) {
	dir := t.TempDir()
	pol := dir + "/policy.json"
	r := runCLI(t, "", nil, "explain", "--policy", pol, "--", "git", "status")
	if r.code != 1 || !strings.Contains(r.stderr, "policy.json") {
		t.Errorf("explain with a missing policy: %+v", r)
	}
	if r := runCLI(t, "", nil, "explain"); r.code != 2 {
		t.Errorf("explain without an argv: %+v", r)
	}
	if r := runCLI(t, "", nil, "explain", "--secret", "novar", "--", "true"); r.code != 2 || !strings.Contains(r.stderr, "NAME=VAR") {
		t.Errorf("explain --secret without a variable: %+v", r)
	}
	r = runCLI(t, "", nil, "explain", "--dir", dir, "--secret", "gh-token=GH_TOKEN", "--", "sh", "-c", "X=1; git status")
	if r.code != 0 {
		t.Fatalf("explain: %+v", r)
	}
	for _, want := range []string{"verdict:    ask", "class:      ", "why:        ", "understood: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("explain does not print %q:\n%s", want, r.stdout)
		}
	}
	r = runCLI(t, "", nil, "explain", "--read-only-forms")
	if r.code != 0 || !strings.Contains(r.stdout, "gh pr view\n") || !strings.Contains(r.stderr, fmt.Sprintf("%d read-only forms", commandmodel.ReadOnlyForms())) {
		t.Errorf("explain --read-only-forms: code %d, %s", r.code, r.stderr)
	}
	// The argv's own options are not explain's.
	if r := runCLI(t, "", nil, "explain", "--", "ls", "--json"); r.code != 0 {
		t.Errorf("explain -- ls --json: %+v", r)
	}
}

func TestTerminalPinOfIrreversibleRefused(t *testing.T) {
	h := classHarness(t, `{}`, map[string]*commandClass{"T1": classIrrev})
	h.ap.prompt.Store(true)
	ch := h.decide(context.Background(), fakeInvocation("T1", "demo"))
	h.waitPending(t, "T1")
	if out := h.out.String(); !strings.Contains(out, "approve T1, irreversible: git push --force? [y/N]") || strings.Contains(out, `"p 30"`) {
		t.Errorf("the prompt of an irreversible request offers a pin or does not say why:\n%s", out)
	}
	h.ap.terminalLine("p 30")
	if out := h.out.String(); !strings.Contains(out, "nothing pinned: irreversible: git push --force") {
		t.Errorf("the terminal's pin of an irreversible command was not refused with the reason:\n%s", out)
	}
	if len(h.ap.list()) != 1 {
		t.Fatal("the refused pin answered the request")
	}
	h.ap.terminalLine("y")
	if d := receive(t, ch); !d.Approve {
		t.Errorf("y after the refusal: %+v", d)
	}
	if rules, _, _ := h.ap.rules.list(); len(rules) != 0 {
		t.Errorf("a rule was pinned: %+v", rules)
	}
}

// logGrantCreation records a grant made directly in the store the way an
// approval with --for does, so the log's account lets it be used.
func logGrantCreation(t *testing.T, h *harness, g grant) {
	t.Helper()
	if err := h.ap.audit.append(auditEntry{Kind: kindInvocation, Decision: "recorded", DecidedBy: "test", Time: time.Now().UTC(),
		Creates: []auditBinding{{Kind: "grant", MAC: g.MAC, Expires: g.Expires}}}); err != nil {
		t.Fatal(err)
	}
}
