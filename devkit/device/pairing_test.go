// Initial pairing and PairingFinish on the device side (cryptosystem
// "Initial pairing", client-device protocol "Pairing"): commitment, SAS,
// one pending attempt, activation.
package device

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

func TestPairingActivatesAndTellsRelayFirst(t *testing.T) {
	h := newHarness(t)
	c, sas := h.startPairing(nil)
	a := <-h.appr.seen
	if a.Kind != "pairing" || a.ClientID != c.clientID.String() || a.Client != nil {
		t.Fatalf("approval %+v", a)
	}
	if a.Pairing.SAS != sas || a.Pairing.Hostname != "testhost" || a.Pairing.Platform != "linux" || a.Pairing.Architecture != "x86_64" {
		t.Fatalf("pairing details %+v, client SAS %q", a.Pairing, sas)
	}
	x := c.newRequest(newULID(h.clock.now()), body(t, "PairingFinish", nil))
	x.deliver()
	res, ok := x.open(x.rawResponse(1))
	if !ok || res["result"] != "ACCEPTED" {
		t.Fatalf("PairingFinish: %v", res)
	}
	// The relay must hear "active" before the ACCEPTED response is released.
	ev := h.pub.snapshot()
	iState, iResp := -1, -1
	for i, e := range ev {
		if e.state == relay.ClientActive && e.clientID == c.clientID.String() {
			iState = i
		}
		if e.state == "" && e.requestID == x.requestID.String() {
			iResp = i
		}
	}
	if iState < 0 || iState > iResp {
		t.Fatalf("SetClientState(active) at %d, response at %d", iState, iResp)
	}
	x.complete(map[string]any{"result": "ACCEPTED"})

	clients, err := ListClients(h.dir)
	if err != nil || len(clients) != 1 || clients[0].State != "active" || clients[0].Hostname != "testhost" || clients[0].Platform != "linux" {
		t.Fatalf("clients %+v, %v", clients, err)
	}
	if got := c.call("SecretList", nil); got["secrets"] == nil {
		t.Fatalf("SecretList after activation: %v", got)
	}
}

func TestPairingSASMismatchRejects(t *testing.T) {
	h := newHarness(t)
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		// Approve with one digit wrong: must reject, never activate.
		wrong := []byte(a.Pairing.SAS)
		if wrong[0] == '9' {
			wrong[0] = '8'
		} else {
			wrong[0]++
		}
		return Decision{Approve: true, SAS: string(wrong)}
	})
	c, _ := h.startPairing(nil)
	res := c.call("PairingFinish", nil)
	if res["result"] != "REJECTED" {
		t.Fatalf("PairingFinish after wrong SAS: %v", res)
	}
	for _, e := range h.pub.snapshot() {
		if e.state == relay.ClientActive {
			t.Fatal("relay told active after a SAS mismatch")
		}
	}
	// A rejected binding is never usable for anything else.
	if m := c.call("SecretList", nil); m["error"] != "INVALID_STATE" {
		t.Fatalf("SecretList on a rejected pairing answered %v", m)
	}
	if n := len(readState(t, h.dir).Clients); n != 0 {
		t.Fatalf("%d bindings after a rejected pairing", n)
	}
}

func TestPairingSASWithoutSpacesAccepted(t *testing.T) {
	h := newHarness(t)
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		return Decision{Approve: true, SAS: strings.ReplaceAll(a.Pairing.SAS, " ", "")}
	})
	c, _ := h.startPairing(nil)
	if res := c.call("PairingFinish", nil); res["result"] != "ACCEPTED" {
		t.Fatalf("PairingFinish: %v", res)
	}
}

func TestPairingPendingBindingOnlyFinishes(t *testing.T) {
	h := newHarness(t)
	release := make(chan struct{})
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		<-release
		return Decision{Approve: true, SAS: a.Pairing.SAS}
	})
	c, _ := h.startPairing(nil)
	<-h.appr.seen
	// While the SAS decision is open, the pending PSK authenticates only
	// PairingFinish; other methods get INVALID_STATE.
	m := c.call("SecretList", nil)
	if m["error"] != "INVALID_STATE" {
		t.Fatalf("SecretList on pending binding: %v", m)
	}
	// PairingFinish waits for the decision.
	x := c.newRequest(newULID(h.clock.now()), body(t, "PairingFinish", nil))
	x.deliver()
	close(release)
	if res, ok := x.open(x.rawResponse(1)); !ok || res["result"] != "ACCEPTED" {
		t.Fatalf("PairingFinish: %v", res)
	}
}

func TestPairingOneAttemptAtATime(t *testing.T) {
	h := newHarness(t)
	block := make(chan struct{})
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		select {
		case <-block:
		case <-ctx.Done():
		}
		return Decision{}
	})
	t.Cleanup(func() { close(block) })
	h.startPairing(nil)
	<-h.appr.seen
	cid := newULID(h.clock.now())
	req := mustJSON(t, map[string]string{"version": "agentknock-v1", "commitment": b64(make([]byte, 32))})
	h.dev.Deliver(relay.Message{AddressID: h.dev.AddressID(), ClientID: cid.String(), RequestID: cid.String(), Kind: "request", Payload: req})
	var e errorBody
	json.Unmarshal(h.pub.responses(t, cid.String(), cid.String(), 1)[0], &e)
	if e.Error != clearPairingBusy {
		t.Fatalf("second pairing: %+v", e)
	}
}

func TestPairingRequestRedeliveryAndChecks(t *testing.T) {
	h := newHarness(t)
	cid := newULID(h.clock.now())
	req := mustJSON(t, map[string]string{"version": "agentknock-v1", "commitment": b64(make([]byte, 32))})
	m := relay.Message{AddressID: h.dev.AddressID(), ClientID: cid.String(), RequestID: cid.String(), Kind: "request", Payload: req}
	h.dev.Deliver(m)
	first := h.pub.responses(t, cid.String(), cid.String(), 1)[0]
	h.dev.Deliver(m)
	second := h.pub.responses(t, cid.String(), cid.String(), 2)[1]
	if string(first) != string(second) {
		t.Fatalf("redelivered pairing request got a new response:\n%s\n%s", first, second)
	}
	var pr pairingResponseEnv
	if err := json.Unmarshal(first, &pr); err != nil || pr.DeviceID != h.dev.DeviceID() || len(pr.DeviceRandom) != 32 {
		t.Fatalf("pairing response %s", first)
	}

	clear := func(payload map[string]string, addr string, id ulid) string {
		h.dev.Deliver(relay.Message{AddressID: addr, ClientID: id.String(), RequestID: id.String(), Kind: "request", Payload: mustJSON(t, payload)})
		var e errorBody
		json.Unmarshal(h.pub.responses(t, id.String(), id.String(), 1)[0], &e)
		return e.Error
	}
	now := h.clock.now()
	if got := clear(map[string]string{"version": "agentknock-v2", "commitment": b64(make([]byte, 32))}, h.dev.AddressID(), newULID(now)); got != clearUnsupportedVersion {
		t.Errorf("wrong version: %q", got)
	}
	if got := clear(map[string]string{"version": "agentknock-v1", "commitment": b64(make([]byte, 31))}, h.dev.AddressID(), newULID(now)); got != clearInvalidRequest {
		t.Errorf("short commitment: %q", got)
	}
	if got := clear(map[string]string{"version": "agentknock-v1", "commitment": b64(make([]byte, 32))}, strings.Repeat("0", 32), newULID(now)); got != clearInvalidRequest {
		t.Errorf("other address: %q", got)
	}
	if got := clear(map[string]string{"version": "agentknock-v1", "commitment": b64(make([]byte, 32))}, h.dev.AddressID(), newULID(now.Add(-25*60*60*1e9))); got != clearStaleRequestID {
		t.Errorf("stale client id: %q", got)
	}
}

func TestPairingCompletionWithWrongSecretLeavesAttempt(t *testing.T) {
	h := newHarness(t)
	cid := newULID(h.clock.now())
	// Commit to one secret, reveal another: the device must not show a SAS.
	req := mustJSON(t, map[string]string{"version": "agentknock-v1", "commitment": b64(commitmentOf(make([]byte, 32)))})
	h.dev.Deliver(relay.Message{AddressID: h.dev.AddressID(), ClientID: cid.String(), RequestID: cid.String(), Kind: "request", Payload: req})
	h.pub.responses(t, cid.String(), cid.String(), 1)
	pk := h.dev.id.key.sk.Public()
	snd, _ := suite.NewSender(pk, hpkeInfo(h.dev.id.deviceID, cid))
	enc, sealer, _ := snd.Setup(nil)
	other := make([]byte, 32)
	other[0] = 1
	sct, _ := sealer.Seal(other, nil)
	mct, _ := sealer.Seal(mustJSON(t, map[string]any{"app_info": appInfo, "lib_info": appInfo, "platform": "linux", "architecture": "x"}), nil)
	h.dev.Deliver(relay.Message{ClientID: cid.String(), RequestID: cid.String(), Kind: "completion",
		Payload: mustJSON(t, map[string]string{"key": b64(enc), "secret": b64(sct), "ciphertext": b64(mct)})})
	h.dev.Close() // waits for the worker
	if n := h.appr.count("pairing"); n != 0 {
		t.Fatalf("SAS shown for a completion that breaks the commitment (%d approvals)", n)
	}
	st := readState(t, h.dir)
	if p := st.Pairings[cid.String()]; p == nil || p.Status != pairAwaitCompletion || p.PSK != nil {
		t.Fatalf("attempt changed: %+v", p)
	}
}

func TestRevokingPendingPairingEndsDecision(t *testing.T) {
	h := newHarness(t)
	ended := make(chan struct{})
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		<-ctx.Done()
		close(ended)
		return Decision{Approve: true, SAS: a.Pairing.SAS} // too late
	})
	c, _ := h.startPairing(nil)
	<-h.appr.seen
	if err := h.dev.Revoke(c.clientID.String()); err != nil {
		t.Fatal(err)
	}
	<-ended
	if res := c.call("PairingFinish", nil); res["result"] != "REJECTED" {
		t.Fatalf("PairingFinish after revoking the attempt: %v", res)
	}
	h.pub.waitFor(t, 1, func(e published) bool { return e.state == relay.ClientRevoked })
}

func TestAbandonedPairingExpires(t *testing.T) {
	h := newHarness(t)
	cid := newULID(h.clock.now())
	req := mustJSON(t, map[string]string{"version": "agentknock-v1", "commitment": b64(make([]byte, 32))})
	h.dev.Deliver(relay.Message{AddressID: h.dev.AddressID(), ClientID: cid.String(), RequestID: cid.String(), Kind: "request", Payload: req})
	h.pub.responses(t, cid.String(), cid.String(), 1)
	// The client never completes; after the deadline a new pairing works.
	h.clock.advance(pairingTimeout + time.Minute)
	c := h.pair()
	if clients, _ := ListClients(h.dir); len(clients) != 1 || clients[0].ClientID != c.clientID.String() {
		t.Fatalf("clients %+v", clients)
	}
}

// pairingRequestError sends a new pairing request and returns its clear
// error code ("" when the device accepted it).
func (h *harness) pairingRequestError() string {
	h.t.Helper()
	cid := newULID(h.clock.now())
	req := mustJSON(h.t, map[string]string{"version": "agentknock-v1", "commitment": b64(make([]byte, 32))})
	h.dev.Deliver(relay.Message{AddressID: h.dev.AddressID(), ClientID: cid.String(), RequestID: cid.String(), Kind: "request", Payload: req})
	var e errorBody
	json.Unmarshal(h.pub.responses(h.t, cid.String(), cid.String(), 1)[0], &e)
	return e.Error
}

// confirmedUnfinished starts a pairing that the approver confirms and no
// client finishes, and waits until the device holds it confirmed.
func (h *harness) confirmedUnfinished() *testClient {
	h.t.Helper()
	c, _ := h.startPairing(nil)
	deadline := time.Now().Add(10 * time.Second)
	for {
		status := h.pairingStatus(c.clientID.String())
		if status == pairAwaitActivation {
			return c
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the pairing was not confirmed: %s", status)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// pairingStatus is the stored status of clientID's pairing attempt.
func (h *harness) pairingStatus(clientID string) string {
	h.t.Helper()
	status := ""
	err := transact(h.dir, func(t *txn) error {
		st, err := t.state()
		if err == nil {
			if p := st.pairing(clientID); p != nil {
				status = p.Status
			}
		}
		return err
	})
	if err != nil {
		h.t.Fatal(err)
	}
	return status
}

// A pairing request whose client never sends the completion (it went
// away, or a relay forged the device's response, so the client's
// completion can never open) holds the one pairing slot: reject ends it at
// once, as for a confirmed pairing nobody finished, and a new pairing can
// start.
func TestPairingAwaitingCompletionCanBeRejected(t *testing.T) {
	h := newHarness(t)
	if code := h.pairingRequestError(); code != "" {
		t.Fatalf("the first pairing request: %q", code)
	}
	if code := h.pairingRequestError(); code != clearPairingBusy {
		t.Fatalf("a second pairing while the first awaits its completion: %q, want %s", code, clearPairingBusy)
	}
	ids, err := h.dev.UnfinishedPairings()
	if err != nil || len(ids) != 1 {
		t.Fatalf("UnfinishedPairings: %v, %v", ids, err)
	}
	if err := h.dev.Revoke(ids[0]); err != nil {
		t.Fatal(err)
	}
	if status := h.pairingStatus(ids[0]); status != pairRejected {
		t.Fatalf("the rejected attempt is %s", status)
	}
	if ids, _ := UnfinishedPairings(h.dir, h.clock.now()); len(ids) != 0 {
		t.Fatalf("still unfinished after the reject: %v", ids)
	}
	h.pair()
}

// A pairing confirmed on the device whose client went away (its home
// deleted after `pairing start`) holds the pairing slot only
// activationTimeout, not pairingTimeout; then it is rejected.
func TestConfirmedPairingNoClientFinishesExpires(t *testing.T) {
	h := newHarness(t)
	c := h.confirmedUnfinished()
	if code := h.pairingRequestError(); code != clearPairingBusy {
		t.Fatalf("a new pairing while the confirmed one waits: %q, want %s", code, clearPairingBusy)
	}
	h.clock.advance(activationTimeout + time.Second)
	if activationTimeout >= pairingTimeout {
		t.Fatalf("activationTimeout %v is not shorter than pairingTimeout %v", activationTimeout, pairingTimeout)
	}
	if ids, _ := UnfinishedPairings(h.dir, h.clock.now()); len(ids) != 0 {
		t.Fatalf("still unfinished after activationTimeout: %v", ids)
	}
	n := h.pair()
	if res := c.call("PairingFinish", nil); res["result"] != "REJECTED" {
		t.Fatalf("PairingFinish of the expired pairing: %v", res)
	}
	if clients, _ := ListClients(h.dir); len(clients) != 1 || clients[0].ClientID != n.clientID.String() {
		t.Fatalf("clients %+v", clients)
	}
}

// `agentknock-device pairing reject` ends such a pairing at once: the
// control server revokes each of UnfinishedPairings.
func TestConfirmedPairingNoClientFinishesCanBeRejected(t *testing.T) {
	h := newHarness(t)
	c := h.confirmedUnfinished()
	ids, err := h.dev.UnfinishedPairings()
	if err != nil || len(ids) != 1 {
		t.Fatalf("UnfinishedPairings: %v, %v", ids, err)
	}
	if err := h.dev.Revoke(ids[0]); err != nil {
		t.Fatal(err)
	}
	if code := h.pairingRequestError(); code != "" {
		t.Fatalf("a new pairing after the reject: %q", code)
	}
	if res := c.call("PairingFinish", nil); res["result"] != "REJECTED" {
		t.Fatalf("PairingFinish of the rejected pairing: %v", res)
	}
}
