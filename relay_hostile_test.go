// A hostile relay, one behaviour per case (issue finding 6): it reads and
// never writes, sends garbage, frames of other exchanges, frames over 256
// KiB, floods pings, never answers pings, acknowledges and closes, closes
// in the middle of a frame, or asks to retry after an absurd delay. Each
// must end with errRelayUnavailable and a message that says why, within
// the documented bound: MaxStall, plus one last attempt (the longest of
// AnswerWithin, PingAfter+PongWithin and ConnectTimeout), plus one backoff.
// The durations are shortened here in proportion; README gives the real
// ones. A relay that answers out of order but completely still succeeds.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// sendLoose writes a frame and ignores a client that is already gone (it
// may give up on the connection first, e.g. when its answer timer fires).
func (c *relayFakeConn) sendLoose(b []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), rtGuard)
	defer cancel()
	_ = c.ws.Write(ctx, websocket.MessageText, b)
}

func hostileOptions() relayOptions {
	opt, _ := rtOptions()
	opt.AnswerWithin = 150 * time.Millisecond
	opt.MaxStall = 800 * time.Millisecond
	opt.PingAfter = 100 * time.Millisecond
	opt.PongWithin = 100 * time.Millisecond
	opt.ConnectTimeout = 300 * time.Millisecond
	opt.HealthyAfter = time.Hour
	return opt
}

func hostileBound(o relayOptions) time.Duration {
	return o.MaxStall + max(o.AnswerWithin, o.PingAfter+o.PongWithin, o.ConnectTimeout) + o.BackoffMax
}

func TestHostileRelayModesEndWithinTheirBound(t *testing.T) {
	other := "01K2EQ0Z9V3W5X7Y8Z0A1B2C3D"
	modes := map[string]struct {
		script func(n int, c *relayFakeConn)
		why    string // in the final message
	}{
		"reads and never writes": {func(n int, c *relayFakeConn) { c.hold() }, "did not answer within"},
		"garbage frames": {func(n int, c *relayFakeConn) {
			c.next()
			for range relayMaxInvalidFrames {
				c.sendLoose([]byte(`{"type":"ack","kind":"request","client_id":7}`))
			}
			c.hold()
		}, "frames that are not valid for this exchange"},
		"frames of other exchanges": {func(n int, c *relayFakeConn) {
			c.next()
			for range relayMaxInvalidFrames {
				f := rtFrame("ack", "kind", "request")
				f["request_id"] = other
				b, _ := json.Marshal(f)
				c.sendLoose(b)
			}
			c.hold()
		}, "frames that are not valid for this exchange"},
		"oversized frames": {func(n int, c *relayFakeConn) {
			c.next()
			ctx, cancel := context.WithTimeout(context.Background(), rtGuard)
			defer cancel()
			c.ws.Write(ctx, websocket.MessageText, []byte(`{"type":"ack","pad":"`+strings.Repeat("x", relayMaxFrame)+`"}`))
			c.hold()
		}, "consecutive failures"},
		"ping flood": {func(n int, c *relayFakeConn) {
			c.next()
			for {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				err := c.ws.Ping(ctx)
				cancel()
				if err != nil {
					return
				}
			}
		}, "did not answer within"},
		"never answers pings": {func(n int, c *relayFakeConn) {
			c.mute.Store(true)
			if n == 0 {
				c.acceptRequest()
			}
			c.hold()
		}, ""},
		"ack then close": {func(n int, c *relayFakeConn) {
			c.next()
			c.send(rtFrame("ack", "kind", "request"))
			c.drop()
		}, "without progress"},
		"close in the middle of a frame": {func(n int, c *relayFakeConn) {
			c.next()
			ctx, cancel := context.WithTimeout(context.Background(), rtGuard)
			defer cancel()
			w, err := c.ws.Writer(ctx, websocket.MessageText)
			if err == nil {
				w.Write([]byte(`{"type":"ack","client_id":"` + rtClientID))
			}
			c.drop()
		}, "consecutive failures"},
		"retry after a year": {func(n int, c *relayFakeConn) {
			c.next()
			c.send(map[string]any{"type": "error", "error": "RATE_LIMITED", "message": "later", "retryable": true, "retry_after_ms": uint64(365 * 24 * 3600 * 1000)})
			c.hold()
		}, "the relay asks to wait"},
	}
	for name, m := range modes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRelayFake(t, false, nil, m.script)
			opt := hostileOptions()
			start := time.Now()
			_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
			elapsed := time.Since(start)
			t.Logf("%s: ended after %v and %d connections: %v", name, elapsed.Round(time.Millisecond), r.attemptCount(), err)
			if !errors.Is(err, errRelayUnavailable) || !strings.Contains(err.Error(), m.why) {
				t.Fatalf("ended with %v, want relay unavailable (%q)", err, m.why)
			}
			if n := r.attemptCount(); n > opt.withDefaults().MaxFailures+2 {
				t.Errorf("%d connections", n)
			}
			// A generous guard over the bound: the machine is shared.
			if bound := hostileBound(opt.withDefaults()); elapsed > 4*bound {
				t.Errorf("took %v; the bound is %v", elapsed, bound)
			}
		})
	}
}

// Frames out of their usual order (receipt and response before the ack, a
// completion ack before the completion) still give one response.
func TestHostileRelayOutOfOrderFramesStillComplete(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		c.expect("message", "request")
		c.send(rtFrame("ack", "kind", "completion"))
		c.send(rtFrame("receipt", "kind", "request"))
		c.send(rtFrame("message", "kind", "response", "payload", rtResponse))
		c.expect("ack", "response")
		c.send(rtFrame("ack", "kind", "request"))
		c.takeCompletion()
	})
	resp, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), hostileOptions())
	if err != nil || string(resp) != string(rtResponse) {
		t.Fatalf("response %s, %v", resp, err)
	}
}
