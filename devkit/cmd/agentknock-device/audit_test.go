// Tests of the audit log: one entry per decision with who decided, across a
// restart; a torn last line (a crash mid-write) costs that entry only.
package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

func TestAuditLogSession(t *testing.T) {
	pol, err := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pol)
	ctx := context.Background()
	answer := func(a *device.Approval, fn func() error) {
		t.Helper()
		ch := h.decide(ctx, a)
		h.waitPending(t, a.ID)
		if err := fn(); err != nil {
			t.Fatal(err)
		}
		receive(t, ch)
	}
	answer(fakeInvocation("A1", "demo"), func() error { _, err := h.ap.approve("A1", 0, 0, "", "on the terminal"); return err })
	answer(fakeInvocation("A2", "demo"), func() error { _, err := h.ap.deny("A2", "", "from another terminal"); return err })
	h.ap.Decide(ctx, fakeInvocation("A3", "auto"))
	a4 := scriptInvocation("A4")
	answer(a4, func() error {
		_, err := h.ap.approve("A4", 0, time.Hour, pinCodeOf(t, h, a4, time.Hour), "on the terminal")
		return err
	})
	h.ap.Decide(ctx, scriptInvocation("A5"))
	answer(fakePairing("P1", "0123 4567 8901"), func() error { _, err := h.ap.confirmPairing("012345678901", "on the terminal"); return err })
	ssh := fakeInvocation("S1", "login")
	ssh.Kind, ssh.SSH = kindSSH, &device.SSHDetails{Secret: "login", PublicKey: "ssh-ed25519 AAAA", User: "deploy",
		Method: "publickey", Algorithm: "ssh-ed25519", HostKeyFingerprint: "SHA256:abc", Invocation: ssh.Invocation}
	ssh.Invocation = nil
	answer(ssh, func() error { _, err := h.ap.approve("S1", 0, 0, "", "on the terminal"); return err })
	gs := fakeInvocation("G1", "signing")
	gs.Kind, gs.GitSign = kindGitSign, &device.GitSignDetails{Secret: "signing", PublicKey: "ssh-ed25519 BBBB", Message: "tree 1\n", Invocation: gs.Invocation}
	gs.Invocation = nil
	answer(gs, func() error { _, err := h.ap.approve("G1", 0, 0, "", "on the terminal"); return err })
	wctx, cancel := context.WithCancel(ctx)
	ch := h.decide(wctx, fakeInvocation("W1", "demo"))
	h.waitPending(t, "W1")
	cancel()
	receive(t, ch)

	h.ap.Refused(&device.Approval{ID: "V1", Kind: kindInvocation, ClientID: testClientID, RequestID: "01K2ENXDTW1P3XAR4J7V7C9D0V"},
		"no secret named nosuch on this device")

	path := filepath.Join(h.dir, auditFile)
	entries, skipped, err := readAudit(h.dir, time.Time{})
	if err != nil || skipped != 0 {
		t.Fatalf("reading the log: %v, %d skipped", err, skipped)
	}
	want := []struct{ id, kind, decision, by, rule string }{
		{"A1", kindInvocation, "approved", "person", ""},
		{"A2", kindInvocation, "denied", "person", ""},
		{"A3", kindInvocation, "approved", "policy", ""},
		{"A4", kindInvocation, "approved", "person", "r-"},
		{"A5", kindInvocation, "approved", "rule", "r-"},
		{"P1", kindPairing, "approved", "person", ""},
		{"S1", kindSSH, "approved", "person", ""},
		{"G1", kindGitSign, "approved", "person", ""},
		{"W1", kindInvocation, "withdrawn", "client", ""},
		{"V1", kindInvocation, "denied", "device", ""},
	}
	if len(entries) != len(want) {
		t.Fatalf("%d entries, want %d: %+v", len(entries), len(want), entries)
	}
	for i, w := range want {
		e := entries[i]
		if e.ID != w.id || e.Kind != w.kind || e.Decision != w.decision || e.DecidedBy != w.by || !strings.HasPrefix(e.Rule, w.rule) || (w.rule == "" && e.Rule != "") {
			t.Errorf("entry %d: %+v, want %+v", i, e, w)
		}
		if e.Time.IsZero() || e.Client == "" {
			t.Errorf("entry %d lacks time or client: %+v", i, e)
		}
	}
	if entries[3].Rule != entries[4].Rule {
		t.Errorf("the rule pinned by A4 (%s) is not the one that approved A5 (%s)", entries[3].Rule, entries[4].Rule)
	}
	if e := entries[9]; e.Reason != "INVALID_REQUEST" || !strings.Contains(e.How, "no secret named nosuch") {
		t.Errorf("refusal entry: %+v", e)
	}
	if e := entries[1]; e.Reason != "USER_DENIED" || e.How != "from another terminal" {
		t.Errorf("denial entry: %+v", e)
	}
	if e := entries[4]; e.Command != "bash -c 'make test'" || e.SHA256 != "3031323334353637383961626364656630313233343536373839616263646566" ||
		e.Directory != "/work/project" || e.Executable != "/usr/bin/bash" || strings.Join(e.Secrets, ",") != "demo" {
		t.Errorf("rule entry: %+v", e)
	}
	if e := entries[6]; !strings.Contains(e.Command, "ssh login as deploy with login") || !strings.Contains(e.Command, "SHA256:abc") {
		t.Errorf("ssh entry: %+v", e)
	}
	if e := entries[7]; !strings.HasPrefix(e.Command, "git signature with signing") {
		t.Errorf("git entry: %+v", e)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("audit.jsonl: %v %v", fi, err)
	}

	// `log` shows it; --since filters; --json is the entries.
	r := h.cli(t, "log")
	if r.code != 0 || strings.Count(r.stdout, "\n    invocation ") != 7 || !strings.Contains(r.stdout, "approved  by rule pinned rule r-") ||
		!strings.Contains(r.stdout, "denied (USER_DENIED) by person from another terminal") {
		t.Errorf("log: %s", r)
	}
	assertInert(t, r.stdout)
	if r := h.cli(t, "log", "--since", "2999-01-01"); r.code != 0 || r.stdout != "" {
		t.Errorf("log --since the future: %s", r)
	}
	if r := h.cli(t, "log", "--since", "soon"); r.code != 2 {
		t.Errorf("log --since soon: %s", r)
	}

	// A crash mid-write leaves a torn line: it is skipped, and a restarted
	// serve's next entry starts on its own line.
	h.ap.audit.close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2030-01-02T03:04:05Z","id":"TORN","kin`)
	f.Close()
	restarted := newApprover(pol, h.dir, h.clock.now, newConsole(&syncBuffer{}), false)
	restarted.Decide(ctx, fakeInvocation("A6", "auto"))
	restarted.audit.close()
	r = h.cli(t, "log", "--json")
	var listed []auditEntry
	if err := json.Unmarshal([]byte(r.stdout), &listed); err != nil || r.code != 0 {
		t.Fatalf("log --json: %v\n%s", err, r)
	}
	if len(listed) != len(want)+1 || listed[len(listed)-1].ID != "A6" || !strings.Contains(r.stderr, "1 unreadable line(s) skipped") {
		t.Errorf("after a torn line: %d entries, last %+v\n%s", len(listed), listed[len(listed)-1], r.stderr)
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2030, 1, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90m":                  now.Add(-90 * time.Minute),
		"24h":                  now.Add(-24 * time.Hour),
		"7d":                   now.AddDate(0, 0, -7),
		"2030-01-02T03:04:05Z": time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1h", "0d", "yesterday", "7dd"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
}
