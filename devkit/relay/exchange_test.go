// Tests of the exchange rules in docs/client-relay-protocol.md: acks,
// receipts, duplicates, resume snapshots, response re-sending, completions
// for unknown exchanges, delivery order and the lifetimes.

package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestResendBeforeAckIsAcceptedOnce(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Faults = &Faults{Rules: []FaultRule{{Action: "drop-before-ack", Kind: "request", Count: 1}}}
	})
	id, tok := e.activeClient()
	req := e.newID()

	a := e.dialClient(id, tok)
	a.message(req, "request", map[string]string{"n": "first"})
	a.expectClose(websocket.StatusInternalError)

	// Nothing was stored: the exchange does not exist.
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expect("inactive", req, "")

	b.message(req, "request", map[string]string{"n": "resent"})
	b.expect("ack", req, "request")
	b.expect("receipt", req, "request")
	b.message(req, "request", map[string]string{"n": "again"})
	b.expect("ack", req, "request")
	b.expect("receipt", req, "request")

	got := e.dev.deliveredFor(req)
	if len(got) != 1 || string(got[0].Payload) != `{"n":"resent"}` {
		t.Fatalf("device got %+v, want the resent request once", got)
	}
	if e.dev.attemptsFor(req, "request") != 1 {
		t.Fatalf("Deliver called %d times", e.dev.attemptsFor(req, "request"))
	}
}

func TestDropAfterAckThenResume(t *testing.T) {
	e := newEnv(t, func(c *Config) {
		c.Faults = &Faults{Rules: []FaultRule{{Action: "drop-after-ack", Kind: "request", Count: 1}}}
	})
	id, tok := e.activeClient()
	refused := make(chan struct{}, 100)
	release := make(chan struct{})
	e.dev.setRefuse(func(m Message, n int) error {
		select {
		case <-release:
			return nil
		default:
			signal(refused)
			return errors.New("device busy")
		}
	})
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "payload")
	a.expect("ack", req, "request")
	a.expectClose(websocket.StatusInternalError)

	waitSignal(t, refused)
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expectState(req, "open", "accepted", "absent", "absent")
	close(release)
	b.expect("receipt", req, "request")
	if n := len(e.dev.deliveredFor(req)); n != 1 {
		t.Fatalf("delivered %d times", n)
	}
}

func TestResumeReportsEachPhase(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()

	refusedReq := make(chan struct{}, 100)
	refuseRequests := make(chan struct{})
	refuseCompletions := make(chan struct{})
	refusedComp := make(chan struct{}, 100)
	isOpen := func(c chan struct{}) bool {
		select {
		case <-c:
			return false
		default:
			return true
		}
	}
	e.dev.setRefuse(func(m Message, n int) error {
		if m.Kind == "request" && isOpen(refuseRequests) {
			signal(refusedReq)
			return errors.New("not yet")
		}
		if m.Kind == "completion" && isOpen(refuseCompletions) {
			signal(refusedComp)
			return errors.New("not yet")
		}
		return nil
	})

	// open / accepted: relay holds the request, device has not taken it.
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	waitSignal(t, refusedReq)
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expectState(req, "open", "accepted", "absent", "absent")

	// The device accepts: both associated sockets get the receipt.
	close(refuseRequests)
	b.expect("receipt", req, "request")
	a.expect("receipt", req, "request")
	a.c.CloseNow()

	// open / delivered + response accepted: sent, not acknowledged.
	if err := e.relay.Respond(id, req, json.RawMessage(`{"nonce":"x","ciphertext":"y"}`)); err != nil {
		t.Fatal(err)
	}
	if f := b.expect("message", req, "response"); fmt.Sprint(f["payload"]) != "map[ciphertext:y nonce:x]" {
		t.Fatalf("response payload %v", f["payload"])
	}
	b.c.CloseNow()
	c := e.dialClient(id, tok)
	c.resume(req)
	c.expectState(req, "open", "delivered", "accepted", "absent")
	c.expect("message", req, "response")
	c.ackResponse(req)
	// The ack and the next resume travel on different sockets; only c's own
	// order proves the relay has taken the ack before d asks.
	c.sync(e)

	d := e.dialClient(id, tok)
	d.resume(req)
	d.expectState(req, "open", "delivered", "delivered", "absent")
	d.sync(e)

	// closing: completion accepted, device not yet taking it.
	d.message(req, "completion", "c")
	d.expect("ack", req, "completion")
	waitSignal(t, refusedComp)
	f := e.dialClient(id, tok)
	f.resume(req)
	f.expectState(req, "closing", "delivered", "delivered", "accepted")

	// settled: the completion reached the device.
	close(refuseCompletions)
	f.expect("receipt", req, "completion")
	d.expect("receipt", req, "completion")
	g := e.dialClient(id, tok)
	g.resume(req)
	g.expectState(req, "settled", "delivered", "delivered", "delivered")

	got := e.dev.deliveredFor(req)
	if len(got) != 2 || got[0].Kind != "request" || got[1].Kind != "completion" {
		t.Fatalf("device got %+v", got)
	}
}

func TestDetachedExchangeExpires(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	a.c.Close(websocket.StatusNormalClosure, "")

	// Still resumable just inside the reconnect grace. The socket's
	// detachment is recorded when the relay notices the close, so poll
	// with a fresh connection until it has.
	e.clock.Advance(detachedGrace - time.Second)
	e.relay.sweep()
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expectState(req, "open", "delivered", "absent", "absent")
	b.c.Close(websocket.StatusNormalClosure, "")
	waitDetached(t, e, id, req)

	e.clock.Advance(detachedGrace)
	e.relay.sweep()
	c := e.dialClient(id, tok)
	c.resume(req)
	c.expectState(req, "expired", "delivered", "absent", "absent")
	if err := e.relay.Respond(id, req, json.RawMessage(`{}`)); !errors.Is(err, ErrExchangeInactive) {
		t.Fatalf("Respond on expired exchange: %v", err)
	}
	c.message(req, "request", "r")
	c.expect("inactive", req, "")
	c.message(req, "completion", "c")
	c.expect("ack", req, "completion")
	c.resume(req)
	c.expectState(req, "expired", "delivered", "absent", "discarded")

	// Past the recovery grace and the admission cutoff the exchange is
	// forgotten, and the id can no longer create anything.
	e.clock.Advance(recoveryGrace + e.relay.maxAge)
	e.relay.sweep()
	c.resume(req)
	c.expect("inactive", req, "")
	c.message(req, "request", "r")
	if f := c.expect("error", req, "request"); f.str("error") != "INVALID_REQUEST_ID" {
		t.Fatalf("got %v", f)
	}
}

// waitDetached waits until the relay has processed a socket close for an
// exchange (the close handshake completes asynchronously on the server).
func waitDetached(t *testing.T, e *env, clientID, requestID string) {
	t.Helper()
	deadline := time.Now().Add(guard)
	for {
		e.relay.mu.Lock()
		ex := e.relay.exchanges[exchangeKey{clientID, requestID}]
		n := len(ex.assoc)
		e.relay.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("socket never detached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestDuplicateRequestIsAckedNotRedelivered(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "first")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	a.message(req, "request", "second")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")

	b := e.dialClient(id, tok)
	b.message(req, "request", "third")
	b.expect("ack", req, "request")
	b.expect("receipt", req, "request")
	b.sync(e)

	got := e.dev.deliveredFor(req)
	if len(got) != 1 || string(got[0].Payload) != `"first"` {
		t.Fatalf("device got %+v, want the first payload once", got)
	}
}

func TestResponseResentUntilAcked(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	if err := e.relay.Respond(id, req, json.RawMessage(`{"v":1}`)); err != nil {
		t.Fatal(err)
	}
	a.expect("message", req, "response")
	a.c.CloseNow()

	// A resume gets the snapshot, then the response again.
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expectState(req, "open", "delivered", "accepted", "absent")
	b.expect("message", req, "response")
	b.c.CloseNow()

	// A resent request also re-associates and gets the response.
	c := e.dialClient(id, tok)
	c.message(req, "request", "r")
	c.expect("ack", req, "request")
	c.expect("receipt", req, "request")
	if f := c.expect("message", req, "response"); fmt.Sprint(f["payload"]) != "map[v:1]" {
		t.Fatalf("payload %v", f["payload"])
	}
	c.ackResponse(req)
	c.ackResponse(req) // repeated acks are harmless
	c.sync(e)

	d := e.dialClient(id, tok)
	d.resume(req)
	d.expectState(req, "open", "delivered", "delivered", "absent")
	d.sync(e)

	// A later response from the device is a duplicate and changes nothing.
	if err := e.relay.Respond(id, req, json.RawMessage(`{"v":2}`)); err != nil {
		t.Fatalf("duplicate Respond: %v", err)
	}
	d.sync(e)
}

func TestCompletionForUnknownExchange(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	ghost := e.newID()
	a := e.dialClient(id, tok)
	a.message(ghost, "completion", "c")
	a.expect("ack", ghost, "completion")
	a.message(ghost, "completion", "c")
	a.expect("ack", ghost, "completion")

	// A reordered request cannot recreate the exchange.
	a.message(ghost, "request", "r")
	a.expect("inactive", ghost, "")
	a.resume(ghost)
	a.expect("inactive", ghost, "")
	if err := e.relay.Respond(id, ghost, json.RawMessage(`{}`)); !errors.Is(err, ErrUnknownExchange) {
		t.Fatalf("Respond: %v", err)
	}

	// The device never saw any of it: a later exchange is its first message
	// (delivery is one FIFO, so a queued ghost would have come first).
	other := e.newID()
	a.message(other, "request", "r")
	a.expect("ack", other, "request")
	a.expect("receipt", other, "request")
	if got := e.waitDelivered(1); got[0].RequestID != other {
		t.Fatalf("device got %+v", got)
	}
	if n := len(e.dev.deliveredFor(ghost)); n != 0 {
		t.Fatalf("ghost delivered %d times", n)
	}

	// Once the id is out of the admission window the tombstone may go; the
	// window then refuses the id instead.
	e.clock.Advance(e.relay.maxAge + recoveryGrace)
	e.relay.sweep()
	a.message(ghost, "request", "r")
	if f := a.expect("error", ghost, "request"); f.str("error") != "INVALID_REQUEST_ID" || f["retryable"] != false {
		t.Fatalf("got %v", f)
	}
}

func TestAckComesBeforeReceipt(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	// The device answers inside Deliver, the tightest possible race.
	e.dev.setOnDeliver(func(m Message) {
		if m.Kind == "request" {
			if err := e.relay.Respond(m.ClientID, m.RequestID, json.RawMessage(`{"ok":true}`)); err != nil {
				t.Errorf("Respond: %v", err)
			}
		}
	})
	a := e.dialClient(id, tok)
	const n = 30
	ids := make([]string, n)
	for i := range ids {
		ids[i] = e.newID()
		a.message(ids[i], "request", i)
	}
	order := map[string][]string{}
	for range 3 * n {
		f := a.read()
		order[f.str("request_id")] = append(order[f.str("request_id")], f.str("type"))
	}
	for _, id := range ids {
		if fmt.Sprint(order[id]) != "[ack receipt message]" {
			t.Fatalf("frames for %s: %v", id, order[id])
		}
	}
}

func TestDeliveryRetriesInRequestCompletionOrder(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	refused := make(chan struct{}, 1)
	release := make(chan struct{})
	e.dev.setRefuse(func(m Message, attempt int) error {
		select {
		case <-release:
			return nil
		default:
		}
		if m.Kind == "request" {
			signal(refused)
			return errors.New("device queue full")
		}
		return nil
	})
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.message(req, "completion", "c")
	a.expect("ack", req, "completion")
	// Let the device refuse the request twice while the completion waits.
	waitSignal(t, refused)
	waitSignal(t, refused)
	close(release)
	a.expect("receipt", req, "request")
	a.expect("receipt", req, "completion")

	got := e.dev.deliveredFor(req)
	if len(got) != 2 || got[0].Kind != "request" || got[1].Kind != "completion" {
		t.Fatalf("device got %+v", got)
	}
	if n := e.dev.attemptsFor(req, "request"); n < 3 {
		t.Fatalf("request attempts %d, want at least 3", n)
	}
	if n := e.dev.attemptsFor(req, "completion"); n != 1 {
		t.Fatalf("completion attempts %d, want 1", n)
	}
	a.resume(req)
	a.expectState(req, "settled", "delivered", "absent", "delivered")
	// A response after the client completed is dropped, not an error.
	if err := e.relay.Respond(id, req, json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	a.resume(req)
	a.expectState(req, "settled", "delivered", "discarded", "delivered")
}

func TestCompletionDiscardsUndeliveredResponse(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	e.dev.setRefuse(func(m Message, attempt int) error {
		if m.Kind == "completion" {
			return errors.New("hold completions")
		}
		return nil
	})
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	if err := e.relay.Respond(id, req, json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	a.expect("message", req, "response")
	// Abort without acking the response.
	a.message(req, "completion", "aborted")
	a.expect("ack", req, "completion")
	a.resume(req)
	a.expectState(req, "closing", "delivered", "discarded", "accepted")
	a.sync(e)
}

func TestRespondValidation(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()
	if err := e.relay.Respond(id, req, json.RawMessage(`{}`)); !errors.Is(err, ErrUnknownExchange) {
		t.Fatalf("unknown exchange: %v", err)
	}
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	for _, bad := range []string{``, `{`, `{} {}`, `nul`} {
		if err := e.relay.Respond(id, req, json.RawMessage(bad)); err == nil {
			t.Fatalf("Respond accepted %q", bad)
		}
	}
	big := make([]byte, MaxFrameSize)
	for i := range big {
		big[i] = 'a'
	}
	huge := json.RawMessage(`"` + string(big) + `"`)
	if err := e.relay.Respond(id, req, huge); !errors.Is(err, errPayloadTooLarge) {
		t.Fatalf("oversized response: %v", err)
	}
	// null is a valid payload, and the first response wins.
	if err := e.relay.Respond(id, req, json.RawMessage(`null`)); err != nil {
		t.Fatal(err)
	}
	if err := e.relay.Respond(id, req, json.RawMessage(`"later"`)); err != nil {
		t.Fatal(err)
	}
	f := a.expect("message", req, "response")
	if p, ok := f["payload"]; !ok || p != nil {
		t.Fatalf("payload %v present=%v, want null", p, ok)
	}
	a.sync(e)
}

func TestRequestIDAdmissionWindow(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	now := e.clock.Now()
	for _, tc := range []struct {
		at time.Time
		ok bool
	}{
		{now.Add(-defaultMaxAge - time.Millisecond), false},
		{now.Add(defaultMaxAhead + time.Millisecond), false},
		{now.Add(-defaultMaxAge), true},
		{now.Add(defaultMaxAhead), true},
		{now, true},
	} {
		req := ulidAt(tc.at)
		a.message(req, "request", "r")
		if !tc.ok {
			f := a.expect("error", req, "request")
			if f.str("error") != "INVALID_REQUEST_ID" || f["retryable"] != false || f.str("message") == "" {
				t.Fatalf("id at %v: %v", tc.at.Sub(now), f)
			}
			continue
		}
		a.expect("ack", req, "request")
		a.expect("receipt", req, "request")
	}

	// The window applies only when an id first creates state: a retry of an
	// admitted request is still acknowledged after the window has passed.
	req := e.newID()
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	e.clock.Advance(2 * defaultMaxAge)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
}

func TestAdmissionWindowIsConfigurable(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxAge = 24 * time.Hour; c.MaxAhead = 5 * time.Minute })
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	old := ulidAt(e.clock.Now().Add(-23 * time.Hour))
	a.message(old, "request", "r")
	a.expect("ack", old, "request")
	a.expect("receipt", old, "request")
	ahead := ulidAt(e.clock.Now().Add(4 * time.Minute))
	a.message(ahead, "request", "r")
	a.expect("ack", ahead, "request")
	a.expect("receipt", ahead, "request")
	tooOld := ulidAt(e.clock.Now().Add(-25 * time.Hour))
	a.message(tooOld, "request", "r")
	a.expect("error", tooOld, "request")
}

func TestClosingExchangeExpiresAfterCompletionLifetime(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	e.dev.setRefuse(func(m Message, attempt int) error {
		if m.Kind == "completion" {
			return errors.New("never")
		}
		return nil
	})
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	a.message(req, "completion", "c")
	a.expect("ack", req, "completion")
	a.c.Close(websocket.StatusNormalClosure, "")
	waitDetached(t, e, id, req)

	// Without a socket a closing exchange still waits for delivery...
	e.clock.Advance(detachedGrace + time.Minute)
	e.relay.sweep()
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expectState(req, "closing", "delivered", "absent", "accepted")
	// ...until the completion lifetime ends.
	e.clock.Advance(completionLife)
	e.relay.sweep()
	b.resume(req)
	b.expectState(req, "expired", "delivered", "absent", "discarded")
}

// signal records an event without ever blocking the device.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func waitSignal(t *testing.T, c chan struct{}) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(guard):
		t.Fatal("device was never called")
	}
}

func TestReceiptOnlyWhereTheAckWent(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")

	// The completion arrives on another socket: only that socket saw its
	// ack, so only that socket gets its receipt.
	b := e.dialClient(id, tok)
	b.message(req, "completion", "c")
	b.expect("ack", req, "completion")
	b.expect("receipt", req, "completion")
	a.sync(e)
}

func TestLiveExchangeCapacity(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	ids := make([]string, maxLiveExchanges)
	for i := range ids {
		ids[i] = e.newID()
		a.message(ids[i], "request", i)
		a.expect("ack", ids[i], "request")
		a.expect("receipt", ids[i], "request")
	}
	over := e.newID()
	a.message(over, "request", "r")
	f := a.expect("error", over, "request")
	if f.str("error") != "CAPACITY_EXCEEDED" || f["retryable"] != true || f["retry_after_ms"] == nil {
		t.Fatalf("got %v", f)
	}
	// A settled exchange no longer counts.
	a.message(ids[0], "completion", "c")
	a.expect("ack", ids[0], "completion")
	a.expect("receipt", ids[0], "completion")
	a.message(over, "request", "r")
	a.expect("ack", over, "request")
	a.expect("receipt", over, "request")
}
