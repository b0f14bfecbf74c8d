// relay_recovery_test.go: tests of recovery in the client-relay transport
// ("Reconnection and recovery" in client-relay-protocol.md): resending the
// request before its ack, resuming after it, the failure budget resetting on
// valid frames, and the bounded completion hand-off.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRelayResendsRequestAfterDropBeforeAck(t *testing.T) {
	firstRequest := make(chan []byte, 1)
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		switch n {
		case 0:
			firstRequest <- c.expect("message", "request").raw
			c.drop()
		case 1:
			f := c.acceptRequest()
			if first := <-firstRequest; !bytes.Equal(f.raw, first) {
				c.fail("resent request %s differs from %s", f.raw, first)
			}
			c.finish()
		default:
			c.fail("unexpected connection")
		}
	})
	opt, log := rtOptions()
	if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
		t.Fatal(err)
	}
	if got := r.attemptCount(); got != 2 {
		t.Errorf("%d connections, want 2", got)
	}
	if !log.has("reconnecting (") {
		t.Errorf("no reconnecting stage in %q", log.list())
	}
}

func TestRelayResumesAfterDropAfterAck(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		switch n {
		case 0:
			c.acceptRequest()
			c.drop()
		case 1:
			f := c.expect("resume", "")
			if _, ok := f.m["payload"]; ok {
				c.fail("resume carries a payload: %s", f.raw)
			}
			c.send(rtStateFrame("open", "delivered", "accepted", "absent"))
			c.finish()
		default:
			c.fail("unexpected connection")
		}
	})
	opt, log := rtOptions()
	resp, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp, rtResponse) {
		t.Errorf("response %s", resp)
	}
	if !log.has("device received request") {
		t.Errorf("state snapshot with a delivered request not reported: %q", log.list())
	}
}

func TestRelayFailureBudgetResetsOnProgress(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		switch n {
		case 0:
			c.acceptRequest() // progress: the request is acknowledged
			c.drop()
		case 1:
			c.resumeOpen() // progress: the device received it
			c.drop()
		default:
			c.resumeOpen()
			c.finish()
		}
	})
	opt, _ := rtOptions()
	opt.MaxFailures = 2 // two drops in a row would exhaust it without resets
	if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
		t.Fatal(err)
	}
	if got := r.attemptCount(); got != 3 {
		t.Errorf("%d connections, want 3", got)
	}
}

// A relay that answers every resume with the same snapshot and closes
// makes no progress: those connections spend the budget.
func TestRelayFailureBudgetSpentWithoutProgress(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		if n == 0 {
			c.acceptRequest()
		} else {
			c.resumeOpen()
		}
		c.drop()
	})
	opt, _ := rtOptions()
	opt.MaxFailures = 3
	_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
	if !errors.Is(err, errRelayUnavailable) || !strings.Contains(err.Error(), "3 consecutive failures without progress") {
		t.Fatalf("ack-then-close relay: %v", err)
	}
	// The acknowledgement and the first snapshot were progress; then three
	// connections without any.
	if got := r.attemptCount(); got != 4 {
		t.Errorf("%d connections, want 4", got)
	}
}

func TestRelayCompletionHandOff(t *testing.T) {
	// never acks the completion; reports when it arrived
	silent := func(got chan<- struct{}) func(int, *relayFakeConn) {
		return func(n int, c *relayFakeConn) {
			if n > 0 {
				c.fail("unexpected reconnect")
			}
			c.acceptRequest()
			c.send(rtFrame("message", "kind", "response", "payload", rtResponse))
			c.expect("ack", "response")
			c.expect("message", "completion")
			close(got)
			c.hold()
		}
	}
	open := func(t *testing.T, r *relayFake, opt relayOptions) *relayExchange {
		ctx := rtContext(t)
		x, err := openExchange(ctx, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(x.close)
		if _, err := x.awaitResponse(ctx); err != nil {
			t.Fatal(err)
		}
		return x
	}

	t.Run("cancelled caller, no ack", func(t *testing.T) {
		got := make(chan struct{})
		r := newRelayFake(t, false, nil, silent(got))
		opt, _ := rtOptions()
		opt.CompletionBound = 500 * time.Millisecond
		x := open(t, r, opt)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		result := make(chan error, 1)
		go func() { result <- x.complete(ctx, rtCompletion) }()
		select {
		case err := <-result:
			if !errors.Is(err, errCompletionTimedOut) {
				t.Fatalf("complete: %v, want errCompletionTimedOut", err)
			}
		case <-time.After(rtGuard):
			t.Fatal("complete did not return within its bound")
		}
		select {
		case <-got:
		case <-time.After(rtGuard):
			t.Error("the completion never reached the relay")
		}
	})

	t.Run("cancelled while waiting for the ack", func(t *testing.T) {
		got := make(chan struct{})
		r := newRelayFake(t, false, nil, silent(got))
		opt, _ := rtOptions()
		opt.CompletionBound = 200 * time.Millisecond
		x := open(t, r, opt)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		result := make(chan error, 1)
		go func() { result <- x.complete(ctx, rtCompletion) }()
		<-got
		cancel()
		select {
		case err := <-result:
			if !errors.Is(err, errCompletionTimedOut) {
				t.Fatalf("complete: %v, want errCompletionTimedOut", err)
			}
		case <-time.After(rtGuard):
			t.Fatal("complete did not return after cancellation")
		}
	})

	t.Run("cancelled before the response", func(t *testing.T) {
		acked := make(chan struct{})
		r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
			if n > 0 {
				c.fail("unexpected reconnect")
			}
			c.acceptRequest()
			close(acked)
			c.takeCompletion()
		})
		opt, _ := rtOptions()
		ctx, cancel := context.WithCancel(rtContext(t))
		x, err := openExchange(ctx, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
		if err != nil {
			t.Fatal(err)
		}
		defer x.close()
		<-acked
		go cancel()
		if _, err := x.awaitResponse(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("awaitResponse: %v, want context.Canceled", err)
		}
		if err := x.complete(ctx, rtCompletion); err != nil {
			t.Fatalf("complete after cancellation: %v", err)
		}
		if err := x.complete(ctx, json.RawMessage(`{"ciphertext":"b3RoZXI="}`)); err == nil {
			t.Error("a second, different completion was accepted")
		}
	})
}
