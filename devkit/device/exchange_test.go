// Paired exchanges on the device side (cryptosystem "Paired exchange", "PSK
// rotation"; client-device protocol "Paired exchanges"): idempotent
// redelivery, request-id freshness, rotation and the previous-PSK overlap.
package device

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

func TestReplayedRequestGetsRetainedBytes(t *testing.T) {
	h := newHarness(t)
	h.secrets()
	c := h.pair()
	release := make(chan struct{})
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		<-release
		return Decision{Approve: true}
	})
	before := h.appr.count("invocation")
	x := c.newRequest(newULID(h.clock.now()), body(t, "Invocation", invocationFields(map[string]any{"github": map[string]any{}})))
	x.deliver()
	<-h.appr.seen
	x.deliver() // duplicate while the decision is open: no second worker
	close(release)
	first := x.rawResponse(1)
	x.deliver() // replay after the answer
	second := x.rawResponse(2)
	if !bytes.Equal(first, second) {
		t.Fatalf("replay got different bytes:\n%s\n%s", first, second)
	}
	// And after a restart of the device.
	h.dev.Close()
	dev, err := Open(Options{StateDir: h.dir, Approver: h.appr, Publisher: h.pub, Now: h.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	h.dev = dev
	t.Cleanup(func() { dev.Close() })
	x.deliver()
	third := x.rawResponse(3)
	if !bytes.Equal(first, third) {
		t.Fatal("replay after restart got different bytes")
	}
	if n := h.appr.count("invocation") - before; n != 1 {
		t.Fatalf("approver asked %d times for one request", n)
	}
	if res, ok := x.open(first); !ok || res["result"] != "APPROVED" {
		t.Fatalf("response %v", res)
	}
	// Four deliveries, four copies of the same bytes (the duplicate that
	// came during the decision is answered once the decision is stored).
	if got := len(h.pub.responses(t, c.clientID.String(), x.requestID.String(), 4)); got != 4 {
		t.Fatalf("%d responses", got)
	}
}

func clearCode(t *testing.T, payload json.RawMessage) string {
	t.Helper()
	var e struct {
		Error      string `json:"error"`
		Ciphertext []byte `json:"ciphertext"`
	}
	if err := json.Unmarshal(payload, &e); err != nil {
		t.Fatal(err)
	}
	if e.Ciphertext != nil {
		return ""
	}
	return e.Error
}

func TestRequestIDFreshness(t *testing.T) {
	h := newHarness(t)
	c := h.pair()
	now := h.clock.now()
	for _, tc := range []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"25 hours old", now.Add(-25 * time.Hour), false},
		{"10 minutes ahead", now.Add(10 * time.Minute), false},
		{"23 hours old", now.Add(-23 * time.Hour), true},
		{"4 minutes ahead", now.Add(4 * time.Minute), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := c.newRequest(newULID(tc.at), body(t, "SecretList", nil))
			x.deliver()
			code := clearCode(t, x.rawResponse(1))
			if tc.ok && code != "" {
				t.Fatalf("refused: %s", code)
			}
			if !tc.ok && code != clearStaleRequestID {
				t.Fatalf("got %q, want %s", code, clearStaleRequestID)
			}
		})
	}
	if n := len(readState(t, h.dir).Exchanges); n != 3 { // PairingFinish + the two fresh ones
		t.Fatalf("%d exchanges retained", n)
	}
}

// rotate makes the client start a rotation from its current PSK (§9.1).
func (c *testClient) rotate() {
	snd, err := suite.NewSender(c.pkD, hpkeInfo(c.deviceID, ulid{}))
	if err != nil {
		c.h.t.Fatal(err)
	}
	enc, ctx, err := snd.SetupPSK(rand.Reader, c.psk, c.clientID[:])
	if err != nil {
		c.h.t.Fatal(err)
	}
	c.psk = ctx.Export([]byte("agentknock-v1 psk"), 32)
	c.rotation = enc
}

func (h *harness) binding(c *testClient) binding {
	h.t.Helper()
	b := readState(h.t.(*testing.T), h.dir).Clients[c.clientID.String()]
	if b == nil {
		h.t.Fatal("no binding")
		return binding{}
	}
	return *b
}

func TestPSKRotation(t *testing.T) {
	h := newHarness(t)
	c := h.pair()
	old := bytes.Clone(c.psk)

	// A stale copy of the client keeps the old PSK.
	stale := *c
	stale.psk = bytes.Clone(old)

	c.rotate()
	if m := c.call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("request with rotation_key: %v", m)
	}
	b := h.binding(c)
	if !bytes.Equal(b.PSK, c.psk) || !bytes.Equal(b.PreviousPSK, old) || b.RotatedAt == nil {
		t.Fatal("device did not adopt the rotated PSK with the old one as previous")
	}
	// The confirmed client drops rotation_key; a repeated one is harmless.
	if m := c.call("SecretList", nil); m["secrets"] == nil {
		t.Fatal("request after rotation failed")
	}
	c.rotation = nil
	if m := c.call("SecretList", nil); m["secrets"] == nil {
		t.Fatal("request after confirmation failed")
	}

	// The previous PSK opens ordinary requests within the overlap...
	if m := stale.call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("previous PSK refused within the overlap: %v", m)
	}
	// ...but never authorizes a rotation.
	lineage := stale
	lineage.rotate()
	x := lineage.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	x.deliver()
	if code := clearCode(t, x.rawResponse(1)); code != clearAuthFailed {
		t.Fatalf("rotation from the previous PSK: %q", code)
	}
	if b2 := h.binding(c); !bytes.Equal(b2.PSK, b.PSK) || !bytes.Equal(b2.PreviousPSK, b.PreviousPSK) {
		t.Fatal("a rotation from the previous PSK changed the binding")
	}

	// After the overlap the previous PSK is refused.
	h.clock.advance(pskOverlap + time.Minute)
	x = stale.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	x.deliver()
	if code := clearCode(t, x.rawResponse(1)); code != clearAuthFailed {
		t.Fatalf("previous PSK after the overlap: %q", code)
	}
}

func TestRotationKeySubstitutionDoesNotChangePSK(t *testing.T) {
	h := newHarness(t)
	c := h.pair()
	before := h.binding(c)

	// The client rotates honestly, but the relay swaps rotation_key for
	// another valid encapsulation (a second rotation from the same PSK).
	honest := *c
	honest.rotate()
	decoy := *c
	decoy.rotate()
	forged := honest
	forged.rotation = decoy.rotation
	x := forged.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	x.deliver()
	if code := clearCode(t, x.rawResponse(1)); code != clearAuthFailed {
		t.Fatalf("substituted rotation_key: %q", code)
	}
	// Garbage and wrong-length values fail the same way.
	for _, rk := range [][]byte{make([]byte, 32), make([]byte, 31)} {
		f := honest
		f.rotation = rk
		x := f.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
		x.deliver()
		if code := clearCode(t, x.rawResponse(1)); code != clearAuthFailed {
			t.Fatalf("rotation_key %x: %q", rk, code)
		}
	}
	after := h.binding(c)
	if !bytes.Equal(after.PSK, before.PSK) || after.PreviousPSK != nil || after.RotatedAt != nil {
		t.Fatal("a substituted rotation_key changed the PSK")
	}
	// A request under the current PSK ignores any rotation_key.
	cur := *c
	cur.rotation = decoy.rotation
	if m := cur.call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("current PSK with a stray rotation_key: %v", m)
	}
	if !bytes.Equal(h.binding(c).PSK, before.PSK) {
		t.Fatal("a stray rotation_key changed the PSK")
	}
	// The honest request (right key) still rotates.
	if m := honest.call("SecretList", nil); m["secrets"] == nil {
		t.Fatalf("honest rotation: %v", m)
	}
	if !bytes.Equal(h.binding(c).PSK, honest.psk) {
		t.Fatal("honest rotation not adopted")
	}
}

func TestErrors(t *testing.T) {
	h := newHarness(t)
	c := h.pair()
	if m := c.call("Teleport", nil); m["error"] != "UNSUPPORTED_METHOD" || m["message"] == "" {
		t.Fatalf("unknown method: %v", m)
	}
	if m, ok, _ := c.callRaw([]byte("not json")); !ok || m["error"] != "INVALID_REQUEST" {
		t.Fatalf("non-JSON plaintext: %v", m)
	}
	if m, ok, _ := c.callRaw(body(t, "", nil)); !ok || m["error"] != "INVALID_REQUEST" {
		t.Fatalf("no method: %v", m)
	}

	send := func(from *testClient, payload json.RawMessage) string {
		rid := newULID(h.clock.now())
		h.dev.Deliver(relay.Message{ClientID: from.clientID.String(), RequestID: rid.String(), Kind: "request", Payload: payload})
		return clearCode(t, h.pub.responses(t, from.clientID.String(), rid.String(), 1)[0])
	}
	x := c.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	var env map[string]string
	json.Unmarshal(x.payload, &env)
	env["version"] = "agentknock-v2"
	if code := send(c, mustJSON(t, env)); code != clearUnsupportedVersion {
		t.Errorf("version: %q", code)
	}
	env["version"] = "agentknock-v1"
	env["key"] = b64(make([]byte, 31))
	if code := send(c, mustJSON(t, env)); code != clearInvalidRequest {
		t.Errorf("short key: %q", code)
	}
	// A request sealed for one request id does not open under another.
	json.Unmarshal(x.payload, &env)
	if code := send(c, mustJSON(t, env)); code != clearAuthFailed {
		t.Errorf("moved request: %q", code)
	}
	stranger := *c
	stranger.clientID = newULID(h.clock.now())
	if code := send(&stranger, x.payload); code != clearNotPaired {
		t.Errorf("unknown client: %q", code)
	}
	// A flipped ciphertext bit fails closed.
	ct, _ := decodeB64(env["ciphertext"])
	ct[0] ^= 1
	env["ciphertext"] = b64(ct)
	y := c.newRequest(newULID(h.clock.now()), body(t, "SecretList", nil))
	var yenv map[string]string
	json.Unmarshal(y.payload, &yenv)
	yct, _ := decodeB64(yenv["ciphertext"])
	yct[len(yct)-1] ^= 1
	yenv["ciphertext"] = b64(yct)
	y.payload = mustJSON(t, yenv)
	y.deliver()
	if code := clearCode(t, y.rawResponse(1)); code != clearAuthFailed {
		t.Errorf("corrupted ciphertext: %q", code)
	}
}

func TestAbortedCompletionCancelsApproval(t *testing.T) {
	h := newHarness(t)
	h.secrets()
	c := h.pair()
	cancelled := make(chan struct{})
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		<-ctx.Done()
		close(cancelled)
		return Decision{Approve: true} // too late: the client gave up
	})
	x := c.newRequest(newULID(h.clock.now()), body(t, "Invocation", invocationFields(map[string]any{"sshkey": map[string]any{}})))
	x.deliver()
	<-h.appr.seen
	x.complete(map[string]any{"result": "ABORTED", "reason": "CANCELLED", "message": "interrupted"})
	select {
	case <-cancelled:
	case <-time.After(waitLimit):
		t.Fatal("approval context not cancelled by ABORTED")
	}
	res, ok := x.open(x.rawResponse(1))
	if !ok || res["result"] == "APPROVED" {
		t.Fatalf("response after abort: %v", res)
	}
	h.dev.Close()
	if n := len(readState(t, h.dir).Invocations); n != 0 {
		t.Fatal("aborted invocation recorded")
	}
}

func TestRestartBeforeAnswerGivesAuthenticatedError(t *testing.T) {
	h := newHarness(t)
	c := h.pair()
	h.secrets()
	h.appr.set(func(ctx context.Context, a *Approval) Decision { <-ctx.Done(); return Decision{} })
	x := c.newRequest(newULID(h.clock.now()), body(t, "Invocation", invocationFields(map[string]any{"github": map[string]any{}})))
	x.deliver()
	<-h.appr.seen
	h.dev.Close() // no answer while closing
	if n := len(h.pub.responses(t, c.clientID.String(), x.requestID.String(), 0)); n != 0 {
		t.Fatalf("%d responses from a closing device", n)
	}
	dev, err := Open(Options{StateDir: h.dir, Approver: h.appr, Publisher: h.pub, Now: h.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	h.dev = dev
	t.Cleanup(func() { dev.Close() })
	n := h.appr.count("")
	x.deliver()
	res, ok := x.open(x.rawResponse(1))
	if !ok || res["error"] != "INVALID_STATE" {
		t.Fatalf("redelivery after restart: %v", res)
	}
	x.deliver()
	if !bytes.Equal(x.rawResponse(1), x.rawResponse(2)) {
		t.Fatal("the error is not retained")
	}
	if h.appr.count("") != n {
		t.Fatal("restart re-asked the approver")
	}
}

// durableApprover holds back RecordsDurable until gate is closed, as an
// audit log whose fsync has not returned yet.
type durableApprover struct {
	*fakeApprover
	mu    sync.Mutex
	gate  chan struct{}
	calls atomic.Int32
}

func (d *durableApprover) RecordsDurable() {
	d.mu.Lock()
	gate := d.gate
	d.mu.Unlock()
	d.calls.Add(1)
	<-gate
}

func (d *durableApprover) hold() chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.gate = make(chan struct{})
	return d.gate
}

// TestNoAnswerBeforeTheRecordIsDurable: the approver's record of a decision
// (the audit log's fsync, which runs while the device commits) is on disk
// before the answer reaches the relay, for the policy's immediate decision
// and for one that waited for a person.
func TestNoAnswerBeforeTheRecordIsDurable(t *testing.T) {
	var da *durableApprover
	h := newHarnessWith(t, func(f *fakeApprover) Approver {
		da = &durableApprover{fakeApprover: f}
		close(da.hold()) // pairing is not what this test is about
		return da
	})
	h.secrets()
	c := h.pair()
	for _, waited := range []bool{false, true} {
		if waited {
			h.appr.set(func(context.Context, *Approval) Decision { return Decision{Approve: true} })
		}
		gate := da.hold()
		before := da.calls.Load()
		x := c.newRequest(newULID(h.clock.now()), body(t, "Invocation", invocationFields(map[string]any{"github": map[string]any{}})))
		x.deliver()
		deadline := time.Now().Add(waitLimit)
		for da.calls.Load() == before {
			if time.Now().After(deadline) {
				t.Fatal("the device never waited for the record")
			}
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond) // room for a response that does not wait
		for _, e := range h.pub.snapshot() {
			if e.requestID == x.requestID.String() {
				t.Fatalf("waited=%v: the response left before the record was durable", waited)
			}
		}
		close(gate)
		if m, ok := x.open(x.rawResponse(1)); !ok || m["result"] != "APPROVED" {
			t.Fatalf("waited=%v: response %v", waited, m)
		}
	}
}
