// Tests of the Approver (policy, grants, person) and of answering through
// the control socket with the built binary, using fake approvals.
package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

// guard bounds every wait so a bug deadlocks into a failure, not a hang.
const guard = 20 * time.Second

type harness struct {
	ap    *approver
	out   *syncBuffer
	dir   string
	clock *fakeClock
	mu    sync.Mutex
	revok []string
}

func newHarness(t *testing.T, pol *policy) *harness {
	t.Helper()
	dir := stateDir(t)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h := &harness{out: &syncBuffer{}, dir: dir, clock: &fakeClock{t: time.Now()}}
	if _, err := newSealing(dir, 0, "", nil); err != nil { // as init does
		t.Fatal(err)
	}
	h.ap = newApprover(pol, dir, h.clock.now, newConsole(h.out), false)
	if err := h.ap.audit.prepare(); err != nil { // as serve does before any request
		t.Fatal(err)
	}
	return h
}

// withControl serves the control socket in-process, as serve does.
func (h *harness) withControl(t *testing.T) {
	t.Helper()
	ln, err := listenControl(h.dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	srv := &controlServer{ap: h.ap, revoke: func(id string) error {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.revok = append(h.revok, id)
		return nil
	}}
	go srv.serve(ln)
}

func (h *harness) cli(t *testing.T, args ...string) result {
	t.Helper()
	return runCLI(t, "", nil, append([]string{"--state", h.dir}, args...)...)
}

// decide runs Decide on a goroutine, as the device does.
func (h *harness) decide(ctx context.Context, a *device.Approval) <-chan device.Decision {
	ch := make(chan device.Decision, 1)
	go func() { ch <- h.ap.Decide(ctx, a) }()
	return ch
}

func (h *harness) waitPending(t *testing.T, id string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for time.Now().Before(deadline) {
		for _, v := range h.ap.list() {
			if v.ID == id {
				return
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("request %s never became pending", id)
}

func receive(t *testing.T, ch <-chan device.Decision) device.Decision {
	t.Helper()
	select {
	case d := <-ch:
		return d
	case <-time.After(guard):
		t.Fatal("no decision")
	}
	return device.Decision{}
}

func TestApproverPolicyFirst(t *testing.T) {
	pol, err := parsePolicy([]byte(`{"secrets": {"demo": "approve", "prod": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pol)
	ctx := context.Background()
	if d := h.ap.Decide(ctx, fakeInvocation("A1", "demo")); !d.Approve {
		t.Errorf("policy approve: %+v", d)
	}
	d := h.ap.Decide(ctx, fakeInvocation("A2", "demo", "prod"))
	if d.Approve || d.Reason != "POLICY_DENIED" || !strings.Contains(d.Message, "prod") {
		t.Errorf("policy deny: %+v", d)
	}
	out := h.out.String()
	if !strings.Contains(out, "A1 approved by policy") || !strings.Contains(out, "A2 denied by policy") {
		t.Errorf("decisions not logged:\n%s", out)
	}
	// Policy-decided requests are still shown in full.
	if !strings.Contains(out, "gh pr view 12") {
		t.Errorf("request not shown:\n%s", out)
	}
	// A deny policy beats a grant.
	if g, err := h.ap.grants.add(testClientID, kindInvocation, []string{"prod"}, time.Hour, false); err != nil {
		t.Fatal(err)
	} else {
		logGrantCreation(t, h, g) // a grant is used only as the log records it
	}
	if d := h.ap.Decide(ctx, fakeInvocation("A3", "prod")); d.Approve {
		t.Errorf("grant overrode a deny policy: %+v", d)
	}
}

func TestApproverGrantsAndWithdrawal(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	ctx := context.Background()

	first := h.decide(ctx, fakeInvocation("B1", "demo"))
	h.waitPending(t, "B1")
	if _, err := h.ap.approve("B1", 10*time.Minute, 0, "", "test"); err != nil {
		t.Fatal(err)
	}
	if d := receive(t, first); !d.Approve {
		t.Fatalf("approve: %+v", d)
	}
	// Same client, operation and secrets: approved by the grant.
	if d := h.ap.Decide(ctx, fakeInvocation("B2", "demo")); !d.Approve {
		t.Fatalf("grant not applied: %+v", d)
	}
	// Another operation kind is asked.
	gs := fakeInvocation("B3", "demo")
	gs.Kind, gs.Invocation, gs.GitSign = kindGitSign, nil, &device.GitSignDetails{Secret: "demo", Message: "x"}
	ctx3, cancel3 := context.WithCancel(ctx)
	third := h.decide(ctx3, gs)
	h.waitPending(t, "B3")
	cancel3() // the client aborted
	if d := receive(t, third); d.Approve || d.Reason != "OTHER" {
		t.Fatalf("withdrawn request: %+v", d)
	}
	if len(h.ap.list()) != 0 {
		t.Fatalf("withdrawn request still pending: %+v", h.ap.list())
	}
	// After expiry the same request is asked again.
	h.clock.t = h.clock.t.Add(11 * time.Minute)
	fourth := h.decide(ctx, fakeInvocation("B4", "demo"))
	h.waitPending(t, "B4")
	if _, err := h.ap.deny("B4", "", "test"); err != nil {
		t.Fatal(err)
	}
	if d := receive(t, fourth); d.Approve || d.Reason != "USER_DENIED" || d.Message == "" {
		t.Fatalf("deny: %+v", d)
	}
	if _, err := h.ap.approve("B4", 0, 0, "", "test"); err == nil {
		t.Fatal("a request was answered twice")
	}
}

func TestControlPendingApproveDeny(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	h.withControl(t)
	ctx := context.Background()

	r := h.cli(t, "pending", "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("empty pending: %s", r)
	}

	first := h.decide(ctx, fakeInvocation("C1", "demo", "other"))
	h.waitPending(t, "C1")
	r = h.cli(t, "pending", "--json")
	if r.code != 0 {
		t.Fatal(r)
	}
	var pending []map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &pending); err != nil {
		t.Fatalf("pending --json: %v\n%s", err, r)
	}
	if len(pending) != 1 || pending[0]["id"] != "C1" || pending[0]["kind"] != "invocation" {
		t.Fatalf("pending --json: %s", r.stdout)
	}
	inv, _ := pending[0]["invocation"].(map[string]any)
	if inv["command"] != "gh" || inv["working_directory"] != "/work/project" || inv["script_contents"] == nil {
		t.Fatalf("pending --json lacks invocation details: %s", r.stdout)
	}
	r = h.cli(t, "pending")
	if r.code != 0 || !strings.Contains(r.stdout, "invocation request C1") || !strings.Contains(r.stdout, `\x1b`) {
		t.Fatalf("pending text: %s", r)
	}
	assertInert(t, r.stdout)

	r = h.cli(t, "approve", "NOPE")
	if r.code != 1 || !strings.Contains(r.stderr, "no such pending request") {
		t.Fatalf("approve unknown id: %s", r)
	}
	r = h.cli(t, "approve", "C1", "--for", "10m")
	if r.code != 0 {
		t.Fatal(r)
	}
	if d := receive(t, first); !d.Approve {
		t.Fatalf("approve through the socket: %+v", d)
	}
	if _, ok, _, _, _ := h.ap.grants.matches(testClientID, kindInvocation, []string{"other", "demo"}, false); !ok {
		t.Fatal("approve --for recorded no grant")
	}

	second := h.decide(ctx, fakeInvocation("C2", "third"))
	h.waitPending(t, "C2")
	r = h.cli(t, "deny", "C2", "--message", "not today")
	if r.code != 0 {
		t.Fatal(r)
	}
	if d := receive(t, second); d.Approve || d.Reason != "USER_DENIED" || d.Message != "not today" {
		t.Fatalf("deny through the socket: %+v", d)
	}
	r = h.cli(t, "deny", "C2")
	if r.code != 1 {
		t.Fatalf("denying an answered request: %s", r)
	}

	r = h.cli(t, "revoke", testClientID)
	if r.code != 0 {
		t.Fatal(r)
	}
	h.mu.Lock()
	got := strings.Join(h.revok, ",")
	h.mu.Unlock()
	if got != testClientID {
		t.Fatalf("revoke did not reach serve: %q", got)
	}
}

func TestControlPairingConfirm(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	h.withControl(t)
	ctx := context.Background()
	const sas = "0123 4567 8901"

	r := h.cli(t, "pairing", "confirm", sas)
	if r.code != 1 || !strings.Contains(r.stderr, "no pairing") {
		t.Fatalf("confirm without pairing: %s", r)
	}

	ok := h.decide(ctx, fakePairing("P1", sas))
	h.waitPending(t, "P1")
	r = h.cli(t, "pending", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"kind": "pairing"`) || strings.Contains(r.stdout, "4567") {
		t.Fatalf("pending pairing (the SAS must not be shown): %s", r)
	}
	r = h.cli(t, "approve", "P1")
	if r.code != 1 || !strings.Contains(r.stderr, "pairing confirm") {
		t.Fatalf("approve on a pairing: %s", r)
	}
	if strings.Contains(h.out.String(), "4567") {
		t.Fatalf("serve showed the device's code before confirmation:\n%s", h.out.String())
	}
	r = h.cli(t, "pairing", "confirm", "0123", "4567", "8901")
	if r.code != 0 {
		t.Fatal(r)
	}
	if d := receive(t, ok); !d.Approve || d.SAS != sas {
		t.Fatalf("confirmed pairing: %+v", d)
	}
	if !strings.Contains(h.out.String(), "verification code on this device: "+sas) {
		t.Fatalf("serve did not show the device's code after confirmation:\n%s", h.out.String())
	}

	wrong := h.decide(ctx, fakePairing("P2", sas))
	h.waitPending(t, "P2")
	r = h.cli(t, "pairing", "confirm", "0123 4567 8900")
	if r.code != 1 || !strings.Contains(r.stderr, "do not match") {
		t.Fatalf("wrong digits: %s", r)
	}
	if d := receive(t, wrong); d.Approve || d.Reason != "USER_DENIED" {
		t.Fatalf("wrong digits approved: %+v", d)
	}

	rejected := h.decide(ctx, fakePairing("P3", sas))
	h.waitPending(t, "P3")
	r = h.cli(t, "pairing", "reject")
	if r.code != 0 {
		t.Fatal(r)
	}
	if d := receive(t, rejected); d.Approve {
		t.Fatalf("rejected pairing approved: %+v", d)
	}
}

// A pairing's answer on the control socket returns only once the device has
// stored it: before, `pairing reject` or a wrong code answered while the
// attempt still held the device's only pairing slot, and a client's
// `pairing start` right after it was refused as "another pairing is in
// progress" (TestCompatPairingCommands failed so in CI).
func TestPairingAnswerReturnsOnceStored(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	h.withControl(t)
	const sas = "0123 4567 8901"
	for _, answer := range [][]string{{"pairing", "reject"}, {"pairing", "confirm", "0123 4567 8900"}, {"pairing", "confirm", sas}} {
		stored := make(chan struct{})
		a := fakePairing("S1", sas)
		a.Stored = stored
		decided := h.decide(context.Background(), a)
		h.waitPending(t, "S1")
		done := make(chan result, 1)
		go func() { done <- h.cli(t, answer...) }()
		receive(t, decided) // the device has the answer, and has not stored it yet
		select {
		case r := <-done:
			t.Fatalf("%v returned before the device stored the answer: %s", answer, r)
		case <-time.After(300 * time.Millisecond):
		}
		close(stored)
		select {
		case <-done:
		case <-time.After(guard):
			t.Fatalf("%v did not return once the answer was stored", answer)
		}
	}
}

func TestPairingApprovedByPolicy(t *testing.T) {
	pol, err := parsePolicy([]byte(`{"pairing": "approve"}`))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, pol)
	d := h.ap.Decide(context.Background(), fakePairing("P9", "1111 2222 3333"))
	if !d.Approve || d.SAS != "1111 2222 3333" {
		t.Fatalf("pairing policy approve: %+v", d)
	}
	pol, _ = parsePolicy([]byte(`{"pairing": "deny"}`))
	h = newHarness(t, pol)
	if d := h.ap.Decide(context.Background(), fakePairing("P8", "1111 2222 3333")); d.Approve || d.Reason != "POLICY_DENIED" {
		t.Fatalf("pairing policy deny: %+v", d)
	}
}

func TestTerminalAnswers(t *testing.T) {
	h := newHarness(t, defaultPolicy())
	h.ap.prompt.Store(true)
	pr, pw := io.Pipe()
	defer pw.Close()
	go h.ap.readTerminal(pr)
	ctx := context.Background()

	inv := h.decide(ctx, fakeInvocation("T1", "demo"))
	h.waitPending(t, "T1")
	io.WriteString(pw, "maybe\n") // not an answer: asked again
	io.WriteString(pw, "y\n")
	if d := receive(t, inv); !d.Approve {
		t.Fatalf("terminal y: %+v", d)
	}
	if n := strings.Count(h.out.String(), "approve T1? [y/N"); n != 2 {
		t.Errorf("prompted %d times, want 2:\n%s", n, h.out.String())
	}

	inv = h.decide(ctx, fakeInvocation("T2", "demo"))
	h.waitPending(t, "T2")
	io.WriteString(pw, "\n") // the default is no
	if d := receive(t, inv); d.Approve || d.Reason != "USER_DENIED" {
		t.Fatalf("terminal default: %+v", d)
	}

	pairing := h.decide(ctx, fakePairing("T3", "0123 4567 8901"))
	h.waitPending(t, "T3")
	io.WriteString(pw, "012345678901\n")
	if d := receive(t, pairing); !d.Approve || d.SAS != "0123 4567 8901" {
		t.Fatalf("terminal pairing digits: %+v", d)
	}
	pairing = h.decide(ctx, fakePairing("T4", "0123 4567 8901"))
	h.waitPending(t, "T4")
	io.WriteString(pw, "9999 9999 9999\n")
	if d := receive(t, pairing); d.Approve {
		t.Fatalf("terminal wrong digits approved: %+v", d)
	}

	// Two waiting: the terminal answers the oldest; after another terminal
	// answers it, the next one is shown and prompted.
	a := h.decide(ctx, fakeInvocation("T5", "demo"))
	h.waitPending(t, "T5")
	b := h.decide(ctx, fakeInvocation("T6", "demo"))
	h.waitPending(t, "T6")
	if _, err := h.ap.deny("T5", "", "test"); err != nil {
		t.Fatal(err)
	}
	receive(t, a)
	if !strings.Contains(h.out.String(), "next request waiting") {
		t.Errorf("next request not shown:\n%s", h.out.String())
	}
	io.WriteString(pw, "yes\n")
	if d := receive(t, b); !d.Approve {
		t.Fatalf("second request: %+v", d)
	}
}

func TestControlSocketOwnership(t *testing.T) {
	dir := stateDir(t)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := listenControl(dir)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, controlSocket)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("control.sock mode %04o, want 0600", fi.Mode().Perm())
	}
	go (&controlServer{ap: newApprover(defaultPolicy(), dir, time.Now, newConsole(io.Discard), false)}).serve(ln)
	if _, err := listenControl(dir); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second serve on one state directory: %v", err)
	}
	// A socket left by a crashed serve is replaced.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatal("stale socket not left behind for the test")
	}
	ln2, err := listenControl(dir)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	ln2.Close()

	// A bad request gets an error line, not a hang.
	ln3, err := listenControl(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ln3.Close()
	go (&controlServer{ap: newApprover(defaultPolicy(), dir, time.Now, newConsole(io.Discard), false)}).serve(ln3)
	if _, err := callControl(dir, controlRequest{Op: "explode"}); err == nil || !strings.Contains(err.Error(), "unknown control operation") {
		t.Fatalf("unknown op: %v", err)
	}
}
