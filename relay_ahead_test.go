// Tests of relay_ahead.go: a socket dialed before its request exists is the
// exchange's first connection attempt, success or failure, and one that no
// exchange takes is closed without a frame.

package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// waitAttempts waits until the fake relay has seen n upgrade attempts.
func waitAttempts(t *testing.T, r *relayFake, n int) {
	t.Helper()
	deadline := time.Now().Add(rtGuard)
	for r.attemptCount() < n {
		if time.Now().After(deadline) {
			t.Fatalf("the relay saw %d connection attempts, want %d", r.attemptCount(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRelayAheadIsTheFirstAttempt(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		if n > 0 {
			c.fail("a second connection: the dial made ahead was not used")
		}
		c.acceptRequest()
		c.send(rtFrame("receipt", "kind", "request"))
		c.finish()
	})
	opt, log := rtOptions()
	route := deviceRoute(rtDeviceID, rtClientID)
	a, err := dialRelayAhead(r.endpoint(), route, rtClientID, opt)
	if err != nil {
		t.Fatal(err)
	}
	// The socket is up before the request exists.
	waitAttempts(t, r, 1)
	opt.Ahead = a
	resp, err := rtRunExchange(t, r.endpoint(), route, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp, rtResponse) {
		t.Errorf("response %s, want %s", resp, rtResponse)
	}
	if got := r.attemptCount(); got != 1 {
		t.Errorf("%d connection attempts, want 1", got)
	}
	if got := log.list(); len(got) == 0 || got[0] != "connected" {
		t.Errorf("progress %q: the adopted socket is reported as connected", got)
	}
	a.close() // taken: nothing left to close
}

// A refusal met by the dial ahead is the exchange's own first failure: it
// is reported as such and not met a second time.
func TestRelayAheadRefusalIsTheExchangesError(t *testing.T) {
	r := newRelayFake(t, false, func(n int, w http.ResponseWriter) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"UNAUTHORIZED","message":"Authentication failed."}`))
		return true
	}, nil)
	opt, _ := rtOptions()
	route := deviceRoute(rtDeviceID, rtClientID)
	a, err := dialRelayAhead(r.endpoint(), route, rtClientID, opt)
	if err != nil {
		t.Fatal(err)
	}
	opt.Ahead = a
	_, err = rtRunExchange(t, r.endpoint(), route, opt)
	if err == nil || !strings.Contains(err.Error(), "rejected this client's token (HTTP 401") {
		t.Fatalf("error %v, want the 401 refusal", err)
	}
	if got := r.attemptCount(); got != 1 {
		t.Errorf("%d connection attempts, want 1", got)
	}
}

// A run that stops before its request closes the socket it dialed ahead;
// the relay sees the connection end without a single frame. An exchange on
// another route ignores the dial.
func TestRelayAheadUnusedIsClosedWithoutAFrame(t *testing.T) {
	ended := make(chan int, 4)
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		frames := 0
		for range c.frames {
			frames++
		}
		ended <- frames
	})
	opt, _ := rtOptions()
	a, err := dialRelayAhead(r.endpoint(), deviceRoute(rtDeviceID, rtClientID), rtClientID, opt)
	if err != nil {
		t.Fatal(err)
	}
	waitAttempts(t, r, 1)
	other, _ := newRelayExchange(r.endpoint(), pairingRoute(rtAddressID, rtClientID), rtClientID, opt)
	if c, err := a.take(context.Background(), other.target.String()); c != nil || err != nil {
		t.Fatalf("a dial of another route was handed over (%v, %v)", c, err)
	}
	a.close()
	select {
	case n := <-ended:
		if n != 0 {
			t.Errorf("the relay received %d frames on a socket closed unused", n)
		}
	case <-time.After(rtGuard):
		t.Fatal("the unused socket was not closed")
	}
}
