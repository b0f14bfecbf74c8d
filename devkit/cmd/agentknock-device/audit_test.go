// Tests of the audit log: one entry per decision with who decided, across a
// restart; a torn last line (a crash mid-write) costs that entry only.
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	// The torn line is vouched for by the entry after it.
	if r := h.cli(t, "log", "--verify"); r.code != 0 || !strings.Contains(r.stderr, "is a line torn by a crash, as entry 11 records") {
		t.Errorf("verify after a torn line: %s", r)
	}
	// Removed while serve was stopped: the next serve continues the chain
	// from audit.head, and --verify names what is missing.
	os.Remove(path)
	again := newApprover(pol, h.dir, h.clock.now, newConsole(&syncBuffer{}), false)
	again.Decide(ctx, fakeInvocation("A7", "auto"))
	again.audit.close()
	if r := h.cli(t, "log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "every entry is missing: audit.head records entry 11") {
		t.Errorf("verify after a removal between serves: %s", r)
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

// policyLog writes n entries decided by policy and returns the harness.
func policyLog(t *testing.T, n int) *harness {
	t.Helper()
	pol, err := parsePolicy([]byte(`{"secrets": {"auto": "approve", "no": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pol)
	for i := range n {
		secret := "auto"
		if i%2 == 1 {
			secret = "no"
		}
		h.ap.Decide(context.Background(), fakeInvocation(fmt.Sprintf("L%d", i+1), secret))
	}
	h.ap.audit.close()
	return h
}

// logLines reads the current file's lines.
func logLines(t *testing.T, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, auditFile))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

func writeLines(t *testing.T, dir string, lines []string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, auditFile), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAuditVerifyNamesTampering(t *testing.T) {
	h := policyLog(t, 6)
	if r := h.cli(t, "log", "--verify"); r.code != 0 || !strings.Contains(r.stdout, "audit log verified: 6 entries (1 to 6) in 1 file(s)") {
		t.Fatalf("intact log: %s", r)
	}
	orig := logLines(t, h.dir)
	head, _ := os.ReadFile(filepath.Join(h.dir, auditHeadFile))
	cases := []struct {
		name   string
		tamper func(l []string) []string
		want   string
	}{
		{"denial edited into an approval by a person", func(l []string) []string {
			l[1] = strings.Replace(strings.Replace(l[1], `"decision":"denied"`, `"decision":"approved"`, 1), `"decided_by":"policy"`, `"decided_by":"person"`, 1)
			return l
		}, "entry 2 at audit.jsonl line 2 was edited: its hash no longer matches the link in entry 3"},
		{"entry deleted", func(l []string) []string { return append(l[:2:2], l[3:]...) }, "entry 3 is missing: it was between audit.jsonl line 2 (entry 2) and audit.jsonl line 3 (entry 4)"},
		{"two deleted", func(l []string) []string { return append(l[:2:2], l[4:]...) }, "entries 3 to 4 are missing"},
		{"entries reordered", func(l []string) []string { l[2], l[3] = l[3], l[2]; return l }, "entries are reordered: entry 4 at audit.jsonl line 3 comes before entry 3 at audit.jsonl line 4"},
		{"last entry deleted", func(l []string) []string { return l[:5] }, "entry 6, the last one written, is missing"},
		{"last entry edited", func(l []string) []string {
			l[5] = strings.Replace(l[5], `"decision":"denied"`, `"decision":"approved"`, 1)
			return l
		}, "entry 6 at audit.jsonl line 6, the last one, was edited"},
		{"first entry deleted", func(l []string) []string { return l[1:] }, "entry 1 is missing: the oldest entry present, 2 at audit.jsonl line 1"},
		{"entry added by hand without a link", func(l []string) []string {
			return append(l[:3:3], append([]string{`{"id":"FORGED","decision":"approved","decided_by":"person"}`}, l[3:]...)...)
		}, "audit.jsonl line 4 carries no chain link"},
		{"line garbled", func(l []string) []string { l[3] = l[3][:40]; return l }, "audit.jsonl line 4 is not an intact entry"},
		{"entry duplicated", func(l []string) []string { return append(l[:4:4], l[3:]...) }, "entries are reordered or repeated: entry 4 at audit.jsonl line 5 comes after entry 4"},
	}
	for _, c := range cases {
		writeLines(t, h.dir, c.tamper(slices.Clone(orig)))
		r := h.cli(t, "log", "--verify")
		if r.code != 1 || !strings.Contains(r.stderr, "the audit log does not verify: "+c.want) {
			t.Errorf("%s: log --verify: %s", c.name, r)
		}
		if r := h.cli(t, "log"); !strings.Contains(r.stderr, "warning: the audit log does not verify") {
			t.Errorf("%s: log says nothing: %s", c.name, r)
		}
	}
	writeLines(t, h.dir, orig)
	os.Remove(filepath.Join(h.dir, auditHeadFile))
	if r := h.cli(t, "log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "audit.head is missing") {
		t.Errorf("head removed: %s", r)
	}
	os.WriteFile(filepath.Join(h.dir, auditHeadFile), head, 0o600)
	os.Remove(filepath.Join(h.dir, auditFile))
	if r := h.cli(t, "log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "every entry is missing: audit.head records entry 6") {
		t.Errorf("log removed: %s", r)
	}
}

func TestAuditLogRemovedWhileServingStopsIt(t *testing.T) {
	pol, _ := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	h := newHarness(t, pol)
	ctx := context.Background()
	h.ap.Decide(ctx, fakeInvocation("R1", "auto"))
	h.ap.Decide(ctx, fakeInvocation("R2", "auto"))
	os.Remove(filepath.Join(h.dir, auditFile))
	// Not started again from nothing: that would hide the cut.
	if d := h.ap.Decide(ctx, fakeInvocation("R3", "auto")); d.Approve || !strings.Contains(d.Message, "could not record") {
		t.Fatalf("approved after the log was removed: %+v", d)
	}
	if !strings.Contains(h.out.String(), "THE AUDIT LOG CANNOT BE CONTINUED") || !strings.Contains(h.out.String(), "records entry 2") {
		t.Errorf("the console was not told:\n%s", h.out.String())
	}
	if r := h.cli(t, "log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "every entry is missing: audit.head records entry 2") {
		t.Errorf("verify after the removal: %s", r)
	}
	if _, err := os.Stat(filepath.Join(h.dir, auditFile)); err == nil {
		t.Error("a new log was started over the cut")
	}
}

func TestAuditLogFileIsGuarded(t *testing.T) {
	pol, _ := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	ctx := context.Background()

	// A symbolic link is refused: serve does not start, a request is
	// denied, and the target is untouched.
	h := newHarness(t, pol)
	target := filepath.Join(h.dir, "elsewhere")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	os.Symlink(target, filepath.Join(h.dir, auditFile))
	if err := newAuditLog(h.dir, func(string) {}).prepare(); err == nil || !strings.Contains(err.Error(), "is a symbolic link; the device refuses to follow it") {
		t.Errorf("prepare on a symlink: %v", err)
	}
	if d := h.ap.Decide(ctx, fakeInvocation("S1", "auto")); d.Approve || !strings.Contains(d.Message, "could not record the decision") {
		t.Errorf("approved with a symlinked log: %+v", d)
	}
	if !strings.Contains(h.out.String(), "S1 NOT answered as decided: the audit log could not record it") {
		t.Errorf("console:\n%s", h.out.String())
	}
	// The same for a decision made at once (DecideNow inside the device's
	// transaction, ReportDecided after it): the report withdraws it.
	if a := fakeInvocation("S2", "auto"); true {
		d, ok := h.ap.DecideNow(a)
		if !ok || !d.Approve {
			t.Fatalf("DecideNow: %+v %v", d, ok)
		}
		if d = h.ap.ReportDecided(a, d); d.Approve || !strings.Contains(d.Message, "could not record the decision") {
			t.Errorf("an immediate approval with a symlinked log stood: %+v", d)
		}
	}
	if data, _ := os.ReadFile(target); string(data) != "keep\n" {
		t.Errorf("the link's target was written: %q", data)
	}

	// An existing 0644 log is set to 0600, and the console and the next
	// entry say so.
	h = newHarness(t, pol)
	path := filepath.Join(h.dir, auditFile)
	os.WriteFile(path, nil, 0o644)
	os.Chmod(path, 0o644)
	h.ap.Decide(ctx, fakeInvocation("M1", "auto"))
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %04o", fi.Mode().Perm())
	}
	if entries, _, _ := readAudit(h.dir, time.Time{}); len(entries) != 1 || !strings.Contains(entries[0].Note, "had mode 0644; set to 0600") ||
		!strings.Contains(h.out.String(), "audit.jsonl had mode 0644; set to 0600") {
		t.Errorf("mode fix not reported: %+v\n%s", entries, h.out.String())
	}

	// A failed write stops the answer (the log path made a directory).
	h = newHarness(t, pol)
	path = filepath.Join(h.dir, auditFile)
	h.ap.Decide(ctx, fakeInvocation("F1", "auto"))
	os.Rename(path, path+".1") // as a rotation leaves it
	os.Mkdir(path, 0o700)
	if d := h.ap.Decide(ctx, fakeInvocation("F2", "auto")); d.Approve || d.Reason != "OTHER" {
		t.Errorf("approved although the log write failed: %+v", d)
	}
	if !strings.Contains(h.out.String(), "F2 NOT answered as decided: the audit log could not record it") {
		t.Errorf("console:\n%s", h.out.String())
	}
	// A person's approval too: the log path made a directory.
	ch := h.decide(ctx, fakeInvocation("F3", "demo"))
	h.waitPending(t, "F3")
	h.ap.approve("F3", 0, 0, "", "test")
	if d := receive(t, ch); d.Approve {
		t.Errorf("a person's approval went out unlogged: %+v", d)
	}
}

func TestAuditEscapesAndCaps(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	hostile := "gh\u202etoken\u009b31m\u200b\x1b[2J\u2028x\x7f"
	huge := strings.Repeat("A", 120<<10)
	for i := range 40 {
		a := fakeInvocation(fmt.Sprintf("H%d", i), hostile)
		a.Invocation.Arguments = []string{huge}
		a.Invocation.Reason = "why " + hostile
		a.Invocation.Delivery = map[string][]string{hostile: {"TOKEN -> env " + hostile}}
		h.ap.Refused(a, "no secret named "+hostile)
	}
	path := filepath.Join(h.dir, auditFile)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"\u202e", "\u009b", "\u200b", "\x1b", "\u2028", "\x7f"} {
		if strings.Contains(string(data), raw) {
			t.Errorf("the raw file holds %U", []rune(raw)[0])
		}
	}
	if !strings.Contains(string(data), `gh\u202etoken\u009b31m\u200b\u001b[2J\u2028x\u007f`) {
		t.Errorf("not escaped as expected: %.300s", data)
	}
	perEntry := len(data) / auditRefusalsKept
	t.Logf("40 refused requests with 120 KiB arguments: %d bytes, %d bytes per entry", len(data), perEntry)
	if perEntry > 12<<10 {
		t.Errorf("%d bytes per entry: the fields are not capped", perEntry)
	}
	// Refusals past auditRefusalsKept in an epoch are counted, and the
	// count is sealed when the epoch is (or serve stops).
	h.ap.audit.close()
	entries, _, _ := readAudit(h.dir, time.Time{})
	if n := len(entries); n != auditRefusalsKept+2 || entries[n-2].Refusals == nil || entries[n-2].Refusals.Count != 40-auditRefusalsKept ||
		entries[n-1].Kind != "seal" {
		t.Errorf("%d entries, the last two %+v", n, entries[n-2:])
	}
	if len(entries) == 0 || entries[0].Secrets[0] != hostile || !strings.Contains(entries[0].Command, "bytes more]") ||
		entries[0].RequestReason != "why "+hostile || entries[0].Delivery[hostile][0] != "TOKEN -> env "+hostile {
		t.Errorf("decoded entry: %+v", entries[0])
	}
	if r := h.cli(t, "log"); r.code != 0 {
		t.Error(r)
	} else {
		assertInert(t, r.stdout)
	}
}

func TestAuditRotationKeepsTheChain(t *testing.T) {
	pol, _ := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	h := newHarness(t, pol)
	h.ap.audit.rotateSize = 8 << 10
	for i := range 80 {
		h.ap.Decide(context.Background(), fakeInvocation(fmt.Sprintf("K%d", i), "auto"))
	}
	total := int64(0)
	for n := 1; n <= auditRotatedKept+1; n++ {
		p := filepath.Join(h.dir, fmt.Sprintf("%s.%d", auditFile, n))
		fi, err := os.Stat(p)
		switch {
		case n <= auditRotatedKept && err != nil:
			t.Fatalf("%s: %v", p, err)
		case n > auditRotatedKept && err == nil:
			t.Fatalf("%s kept beyond the cap", p)
		case err == nil:
			total += fi.Size()
		}
	}
	fi, _ := os.Stat(filepath.Join(h.dir, auditFile))
	total += fi.Size()
	if total > (auditRotatedKept+1)*(8<<10) {
		t.Errorf("the log holds %d bytes, over its cap", total)
	}
	// The current file's first entry links to the last of .1.
	rotated, _ := os.ReadFile(filepath.Join(h.dir, auditFile+".1"))
	rl := strings.Split(strings.TrimSuffix(string(rotated), "\n"), "\n")
	sum := sha256.Sum256([]byte(rl[len(rl)-1]))
	var first auditEntry
	json.Unmarshal([]byte(logLines(t, h.dir)[0]), &first)
	if first.Prev != hex.EncodeToString(sum[:]) {
		t.Errorf("the chain breaks at the rotation")
	}
	r := h.cli(t, "log", "--verify")
	if r.code != 0 || !strings.Contains(r.stdout, "in 4 file(s)") || !strings.Contains(r.stderr, "older entries were rotated away") {
		t.Errorf("verify across rotation: %s", r)
	}
	// A file removed from the middle of the rotation is named.
	mid, _ := os.ReadFile(filepath.Join(h.dir, auditFile+".2"))
	os.Remove(filepath.Join(h.dir, auditFile+".2"))
	if r := h.cli(t, "log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "are missing: between audit.jsonl.3 line") {
		t.Errorf("a rotated file removed: %s", r)
	}
	// A restarted serve continues the chain.
	os.WriteFile(filepath.Join(h.dir, auditFile+".2"), mid, 0o600)
	es, _, _ := readAudit(h.dir, time.Time{})
	want := es[len(es)-1].Seq + 1
	restarted := newApprover(pol, h.dir, h.clock.now, newConsole(&syncBuffer{}), false)
	restarted.Decide(context.Background(), fakeInvocation("K80", "auto"))
	if es, _, _ := readAudit(h.dir, time.Time{}); es[len(es)-1].Seq != want {
		t.Errorf("after a restart: seq %d", es[len(es)-1].Seq)
	}
}

// BenchmarkAuditVerifyFull verifies a log at its cap: four files of
// auditRotateSize each, of entries with 4 KiB commands.
func BenchmarkAuditVerifyFull(b *testing.B) {
	dir := b.TempDir()
	l := newAuditLog(dir, func(string) {})
	e := auditEntryOf(fakeInvocation("B1", "demo"), device.Decision{Approve: true}, decidedBy{who: "policy"}, time.Now())
	e.Command = strings.Repeat("x", 4000)
	n := 0
	for {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s.%d", auditFile, auditRotatedKept))); err == nil {
			if fi, _ := os.Stat(filepath.Join(dir, auditFile)); fi.Size() > auditRotateSize-8<<10 {
				break
			}
		}
		if err := l.append(e); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ResetTimer()
	for range b.N {
		v, err := verifyAudit(dir, nil)
		if err != nil || v.problem != "" {
			b.Fatal(err, v.problem)
		}
	}
	b.ReportMetric(float64(n), "entries-written")
}

// BenchmarkAuditAppend is one entry of an ordinary request, written and
// fsync'd, as every decision is before it is sent: main's unsealed append
// (kept here, in the benchmark only: one write and fsync, the head renamed
// without fsync) against the sealed one, side by side in one run, each
// with its fsyncs counted.
func BenchmarkAuditAppend(b *testing.B) {
	e := auditEntryOf(fakeInvocation("B1", "demo"), device.Decision{Approve: true}, decidedBy{who: "policy", how: "secret and operation rules approve"}, time.Now())
	b.Run("unsealed-main", func(b *testing.B) {
		dir := b.TempDir()
		syncs := 0
		var seq uint64
		last := ""
		for range b.N {
			syncs += unsealedAppend(b, dir, &seq, &last, e)
		}
		b.ReportMetric(float64(syncs)/float64(b.N), "fsyncs/entry")
	})
	b.Run("sealed", func(b *testing.B) {
		l := newAuditLog(b.TempDir(), func(string) {})
		l.prepare()
		start := l.syncs.Load()
		for range b.N {
			if err := l.append(e); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(l.syncs.Load()-start)/float64(b.N), "fsyncs/entry")
	})
}

// BenchmarkAutoApprovedDecision is a whole decision the policy approves
// (explained, shown, logged), as serve makes it, with the sealed append;
// its time less BenchmarkAuditAppend/sealed plus /unsealed-main is the
// same decision on main.
func BenchmarkAutoApprovedDecision(b *testing.B) {
	pol, _ := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	dir := filepath.Join(b.TempDir(), "s")
	os.Mkdir(dir, 0o700)
	ap := newApprover(pol, dir, time.Now, newConsole(io.Discard), false)
	ap.audit.prepare()
	start := ap.audit.syncs.Load()
	b.ResetTimer()
	for i := range b.N {
		if d := ap.Decide(context.Background(), fakeInvocation(fmt.Sprint("A", i), "auto")); !d.Approve {
			b.Fatal(d)
		}
	}
	b.ReportMetric(float64(ap.audit.syncs.Load()-start)/float64(b.N), "fsyncs/decision")
}

// unsealedAppend is main's append, for the comparison: the entry written
// and fsync'd, audit.head written after it without fsync.
func unsealedAppend(b *testing.B, dir string, seq *uint64, last *string, e auditEntry) (fsyncs int) {
	e.Seq, e.Prev = *seq+1, *last
	line := encodeAuditEntry(e)
	f, err := os.OpenFile(filepath.Join(dir, auditFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.Write(append(line, '\n')); err != nil {
		b.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	*seq, *last = e.Seq, lineHash(line)
	data, _ := json.Marshal(auditHead{Seq: *seq, SHA256: *last})
	tmp, _ := os.CreateTemp(dir, ".head-*")
	tmp.Write(data)
	tmp.Close()
	os.Rename(tmp.Name(), filepath.Join(dir, auditHeadFile))
	return 1
}

// FuzzAuditVerify: whatever bytes the log holds, --verify answers without
// a panic, and a log it accepts has its chain intact.
func FuzzAuditVerify(f *testing.F) {
	seed := f.TempDir()
	l := newAuditLog(seed, func(string) {})
	for i := range 3 {
		l.append(auditEntryOf(fakeInvocation(fmt.Sprint("Z", i), "demo"), device.Decision{}, decidedBy{who: "policy"}, time.Now()))
	}
	l.close()
	data, _ := os.ReadFile(filepath.Join(seed, auditFile))
	f.Add(data)
	f.Add([]byte("{}\n{\"seq\":1}\n\x00"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		os.WriteFile(filepath.Join(dir, auditFile), data, 0o600)
		v, err := verifyAudit(dir, nil)
		if err == nil && v.problem == "" && v.entries > 0 {
			t.Fatalf("a log without audit.head verified: %+v", v)
		}
	})
}

// TestAuditSealedAgainstTheStateHolder plays whoever later reads the state
// directory: they hold the files and the current key (audit.head), never
// an earlier one. Each change to entries sealed before is named by
// log --verify --key; without the key, verify says what it cannot promise.
func TestAuditSealedAgainstTheStateHolder(t *testing.T) {
	pol, _ := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	h := newHarness(t, pol)
	seed, _ := readAuditHead(h.dir)
	key := verifyKey{origin: 0, seed: mustHex(t, seed.Key)}
	h.ap.audit.rotateSize = 16 << 10
	// Decide until a rotation happened and the current file holds at
	// least four entries to change (entry sizes vary with what each
	// records, so a fixed count would not say that).
	for i := 0; i < 400; i++ {
		h.ap.Decide(context.Background(), fakeInvocation(fmt.Sprintf("T%d", i), "auto"))
		if _, err := os.Stat(filepath.Join(h.dir, auditFile+".1")); err == nil && len(logLines(t, h.dir)) >= 4 {
			break
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, auditFile+".1")); err != nil {
		t.Fatal("no rotation happened")
	}
	snapshot := map[string][]byte{}
	names := []string{auditFile, auditFile + ".1", auditFile + ".2", auditFile + ".3", auditHeadFile}
	for _, n := range names {
		if data, err := os.ReadFile(filepath.Join(h.dir, n)); err == nil {
			snapshot[n] = data
		}
	}
	restore := func() {
		for _, n := range names {
			os.Remove(filepath.Join(h.dir, n))
			if data, ok := snapshot[n]; ok {
				os.WriteFile(filepath.Join(h.dir, n), data, 0o600)
			}
		}
	}
	if r := h.cli(t, "log", "--verify", "--key", key.String()); r.code != 0 || !strings.Contains(r.stdout, "every seal checked with the verification key") {
		t.Fatalf("intact: %s", r)
	}
	if r := h.cli(t, "log", "--verify"); r.code != 0 || !strings.Contains(r.stderr, "without the verification key") {
		t.Fatalf("intact, no key: %s", r)
	}
	current := func() auditHead { hd, _ := readAuditHead(h.dir); return hd }()
	curKey := mustHex(t, current.Key)

	// reseal rewrites lines from index i of the current file as the
	// attacker can: chain links recomputed, and seals made with the only
	// key they have.
	reseal := func(lines []string, from int, prev string) []string {
		k := bytes.Clone(curKey)
		for i := from; i < len(lines); i++ {
			var e auditEntry
			json.Unmarshal([]byte(lines[i]), &e)
			e.Prev = prev
			body := encodeAuditEntry(e)
			lines[i] = string(sealLine(body, k))
			prev = lineHash([]byte(lines[i]))
		}
		return lines
	}
	writeHead := func(lines []string) {
		var e auditEntry
		json.Unmarshal([]byte(lines[len(lines)-1]), &e)
		writeAuditHead(h.dir, auditHead{Seq: e.Seq, SHA256: lineHash([]byte(lines[len(lines)-1])), Key: current.Key}, nil)
	}
	cases := []struct {
		name   string
		change func(lines []string) []string
		want   string
	}{
		{"edit", func(l []string) []string {
			l[1] = strings.Replace(l[1], `"decision":"approved"`, `"decision":"denied"`, 1)
			return reseal(l, 1, lineHash([]byte(l[0])))
		}, "does not carry the seal of the verification key"},
		{"delete", func(l []string) []string {
			l = append(l[:1], l[2:]...)
			return reseal(l, 1, lineHash([]byte(l[0])))
		}, ""},
		{"reorder", func(l []string) []string {
			l[1], l[2] = l[2], l[1]
			return reseal(l, 1, lineHash([]byte(l[0])))
		}, ""},
		{"truncate", func(l []string) []string { return l[:len(l)-2] }, "entries were cut and the head rewritten"},
	}
	for _, c := range cases {
		restore()
		lines := logLines(t, h.dir)
		lines = c.change(lines)
		writeLines(t, h.dir, lines)
		writeHead(lines)
		r := h.cli(t, "log", "--verify", "--key", key.String())
		if r.code != 1 || !strings.Contains(r.stderr, "the audit log does not verify") {
			t.Errorf("%s: not caught: %s", c.name, r)
		}
		if c.want == "entries were cut and the head rewritten" {
			c.want = "were cut and the head rewritten"
		}
		if c.want != "" && !strings.Contains(r.stderr, c.want) {
			t.Errorf("%s: %s", c.name, r)
		}
	}

	// Rollback: the whole set as it was earlier verifies, and says it is
	// sealed only through that earlier entry.
	restore()
	before := snapshot
	for i := range 3 {
		h.ap.Decide(context.Background(), fakeInvocation(fmt.Sprintf("U%d", i), "auto"))
	}
	snapshot = before
	restore()
	var last auditEntry
	lines := logLines(t, h.dir)
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if r := h.cli(t, "log", "--verify", "--key", key.String()); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("sealed through entry %d at ", last.Seq)) {
		t.Errorf("rollback: %s", r)
	}

	// Splice: the rotated file moved over the current one, head recomputed.
	restore()
	rotated := strings.Split(strings.TrimSuffix(string(snapshot[auditFile+".1"]), "\n"), "\n")
	os.Rename(filepath.Join(h.dir, auditFile+".1"), filepath.Join(h.dir, auditFile))
	os.Rename(filepath.Join(h.dir, auditFile+".2"), filepath.Join(h.dir, auditFile+".1"))
	os.Rename(filepath.Join(h.dir, auditFile+".3"), filepath.Join(h.dir, auditFile+".2"))
	writeHead(rotated)
	if r := h.cli(t, "log", "--verify", "--key", key.String()); r.code != 1 || !strings.Contains(r.stderr, "the audit log does not verify") {
		t.Errorf("splice: %s", r)
	}
	// A rotated file removed (the oldest): no sealed record accounts for it.
	restore()
	os.Remove(filepath.Join(h.dir, auditFile+".1"))
	if r := h.cli(t, "log", "--verify", "--key", key.String()); r.code != 1 {
		t.Errorf("rotated file removed: %s", r)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		t.Fatalf("not a key: %q", s)
	}
	return b
}

// A decision the log took and the device then failed to deliver (its state
// could not store the answer) is recorded as not delivered.
func TestAuditUndeliveredRecorded(t *testing.T) {
	pol, _ := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	h := newHarness(t, pol)
	a := fakeInvocation("N1", "auto")
	if d := h.ap.Decide(context.Background(), a); !d.Approve {
		t.Fatal(d)
	}
	var _ device.UndeliveredRecorder = h.ap
	h.ap.Undelivered(a, device.Decision{Approve: true}, "the device could not store its answer")
	entries, _, _ := readAudit(h.dir, time.Time{})
	last := entries[len(entries)-1]
	if last.Kind != "undelivered" || last.ID != "N1" || !strings.Contains(last.How, "approval of N1 was not delivered") {
		t.Errorf("last entry: %+v", last)
	}
	if !strings.Contains(h.out.String(), "N1: its approval was NOT delivered") {
		t.Errorf("console:\n%s", h.out.String())
	}
}

// A crash between an entry and its head leaves the head one behind: the
// entry's seal under the head's key shows it is the device's, so serve
// continues and verify accepts it, with a note; a line added by hand after
// the head is not accepted.
func TestAuditHeadLagAfterACrash(t *testing.T) {
	pol, _ := parsePolicy([]byte(`{"secrets": {"auto": "approve"}}`))
	h := newHarness(t, pol)
	seed, _ := readAuditHead(h.dir)
	key := verifyKey{seed: mustHex(t, seed.Key)}
	h.ap.Decide(context.Background(), fakeInvocation("L1", "auto"))
	before, _ := os.ReadFile(filepath.Join(h.dir, auditHeadFile))
	h.ap.Decide(context.Background(), fakeInvocation("L2", "auto"))
	os.WriteFile(filepath.Join(h.dir, auditHeadFile), before, 0o600) // the head as the crash left it
	if r := h.cli(t, "log", "--verify", "--key", key.String()); r.code != 0 || !strings.Contains(r.stderr, "lags behind (entry 1)") {
		t.Errorf("verify with the head one behind: %s", r)
	}
	restarted := newApprover(pol, h.dir, h.clock.now, newConsole(&syncBuffer{}), false)
	if d := restarted.Decide(context.Background(), fakeInvocation("L3", "auto")); !d.Approve {
		t.Fatalf("after the crash: %+v", d)
	}
	if r := h.cli(t, "log", "--verify", "--key", key.String()); r.code != 0 || !strings.Contains(r.stdout, "3 entries") {
		t.Errorf("verify after catching up: %s", r)
	}
	// An entry appended by hand, sealed with a made-up key, after the head.
	lines := logLines(t, h.dir)
	var e auditEntry
	json.Unmarshal([]byte(lines[len(lines)-1]), &e)
	e.Seq, e.Prev, e.ID = e.Seq+1, lineHash([]byte(lines[len(lines)-1])), "FORGED"
	writeLines(t, h.dir, append(lines, string(sealLine(encodeAuditEntry(e), make([]byte, 32)))))
	if r := h.cli(t, "log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "does not carry the seal of its key") {
		t.Errorf("a line added after the head: %s", r)
	}
	again := newApprover(pol, h.dir, h.clock.now, newConsole(&syncBuffer{}), false)
	if d := again.Decide(context.Background(), fakeInvocation("L4", "auto")); d.Approve {
		t.Errorf("serve continued after a forged line: %+v", d)
	}
}

// A forged sequence number far past the key's start is refused at once,
// not by evolving the key that many times.
func TestAuditVerifyKeyBounded(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	seed, _ := readAuditHead(h.dir)
	key := verifyKey{seed: mustHex(t, seed.Key)}
	const far = uint64(1) << 40
	line := fmt.Sprintf(`{"seq":%d,"prev":"ab","kind":"rotation","decision":"recorded","decided_by":"device","time":"2030-01-01T00:00:00Z","dropped":{"count":1,"first":1,"last":%d,"sha256":"","last_hash":"ab"}}`, far, far-1)
	writeLines(t, h.dir, []string{line})
	writeAuditHead(h.dir, auditHead{Seq: far, SHA256: lineHash([]byte(line)), Key: seed.Key}, nil)
	if r := h.cli(t, "log", "--verify", "--key", key.String()); r.code != 1 || !strings.Contains(r.stderr, "past the verification key's position") {
		t.Errorf("a forged far sequence: %s", r)
	}
}
