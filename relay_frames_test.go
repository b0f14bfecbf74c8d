// relay_frames_test.go: tests of the frames the client accepts from the relay
// ("Frame encoding" through "Error frame" in client-relay-protocol.md):
// duplicates, foreign and invalid frames, null payloads, error, inactive and
// state frames, and the 256 KiB frame limit.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestRelayDuplicateResponseAckedTwiceDeliveredOnce(t *testing.T) {
	second := json.RawMessage(`{"nonce":"b3RoZXI=","ciphertext":"c2Vjb25k"}`)
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		c.acceptRequest()
		c.send(rtFrame("message", "kind", "response", "payload", rtResponse))
		c.send(rtFrame("message", "kind", "response", "payload", second))
		acks, completions := 0, 0
		for acks+completions < 3 {
			f := c.next()
			switch f.m["type"] {
			case "ack":
				c.check(f, "ack", "response")
				acks++
			case "message":
				c.check(f, "message", "completion")
				completions++
			default:
				c.fail("unexpected frame %s", f.raw)
			}
		}
		if acks != 2 || completions != 1 {
			c.fail("%d acks and %d completions, want 2 and 1", acks, completions)
		}
		c.send(rtFrame("ack", "kind", "completion"))
	})
	opt, _ := rtOptions()
	resp, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp, rtResponse) {
		t.Errorf("response %s, want the first one %s", resp, rtResponse)
	}
}

func TestRelayDiscardsFramesOfOtherExchanges(t *testing.T) {
	other := "01K2EP16NWNAGJYF8J1Q2V6P3Y"
	foreign := json.RawMessage(`{"nonce":"Zm9yZWlnbg==","ciphertext":"Zm9yZWlnbg=="}`)
	withIDs := func(m map[string]any, clientID, requestID string) map[string]any {
		m["client_id"], m["request_id"] = clientID, requestID
		return m
	}
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		switch n {
		case 0:
			c.expect("message", "request")
			c.send(withIDs(rtFrame("ack", "kind", "request"), rtClientID, other))
			c.send(withIDs(rtFrame("ack", "kind", "request"), other, rtRequestID))
			c.send(withIDs(rtFrame("receipt", "kind", "request"), rtClientID, other))
			c.send(withIDs(rtFrame("inactive"), rtClientID, other))
			c.send(map[string]any{"type": "error", "request_id": other, "error": "REQUEST_ID_CONFLICT", "message": "not yours", "retryable": false})
			c.drop()
		case 1:
			// Had the foreign ack counted, the client would resume here.
			c.acceptRequest()
			c.send(withIDs(rtFrame("message", "kind", "response", "payload", foreign), rtClientID, other))
			c.finish() // the first ack read must be for this exchange
		default:
			c.fail("unexpected connection")
		}
	})
	opt, _ := rtOptions()
	resp, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp, rtResponse) {
		t.Errorf("response %s, want %s", resp, rtResponse)
	}
}

func TestRelayIgnoresInvalidFrames(t *testing.T) {
	forged := json.RawMessage(`{"forged":true}`)
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		if n > 0 {
			c.fail("unexpected reconnect")
		}
		c.expect("message", "request")
		ctx, cancel := context.WithTimeout(context.Background(), rtGuard)
		defer cancel()
		if err := c.ws.Write(ctx, websocket.MessageBinary, []byte(`{"type":"ack"}`)); err != nil {
			c.fail("write: %v", err)
		}
		c.send([]byte(`not json`))
		c.send([]byte(`["ack"]`))
		c.send(map[string]any{"type": "ack", "kind": "request"})                       // no ids
		c.send(rtFrame("ack", "kind", "response"))                                     // only a client acks responses
		c.send(rtFrame("ack", "kind", 7))                                              // wrong member type
		c.send(rtFrame("bogus", "kind", "request"))                                    // unknown type
		c.send(rtFrame("message", "kind", "request", "payload", forged))               // relays deliver responses only
		c.send(rtFrame("message", "kind", "response"))                                 // payload missing
		c.send(rtFrame("error", "error", "INTERNAL_ERROR", "message", "no retryable")) // required member missing
		c.send(rtFrame("state", "exchange", "expired", "request", "gone", "response", "absent", "completion", "absent"))
		c.send(rtFrame("ack", "kind", "request"))
		c.finish()
	})
	opt, _ := rtOptions()
	resp, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp, rtResponse) {
		t.Errorf("response %s", resp)
	}
}

func TestRelayNullPayloadIsAResponse(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		c.acceptRequest()
		c.send([]byte(`{"type":"message","client_id":"` + rtClientID + `","request_id":"` + rtRequestID + `","kind":"response","payload":null}`))
		c.expect("ack", "response")
		c.takeCompletion()
	})
	opt, _ := rtOptions()
	resp, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
	if err != nil {
		t.Fatal(err)
	}
	if string(resp) != "null" {
		t.Errorf("response %q, want null", resp)
	}
}

func TestRelayErrorFrames(t *testing.T) {
	t.Run("retryable", func(t *testing.T) {
		r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
			switch n {
			case 0:
				c.expect("message", "request")
				c.send(rtFrame("error", "kind", "request", "error", "RATE_LIMITED", "message", "slow down", "retryable", true, "retry_after_ms", 20))
				c.hold() // the client must abandon this socket itself
			case 1:
				c.acceptRequest()
				c.finish()
			default:
				c.fail("unexpected connection")
			}
		})
		opt, log := rtOptions()
		if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if !log.has("reconnecting (relay asked to retry: RATE_LIMITED: slow down)") {
			t.Errorf("progress %q", log.list())
		}
		r.mu.Lock()
		gap := r.times[1].Sub(r.times[0])
		r.mu.Unlock()
		if gap < 20*time.Millisecond {
			t.Errorf("reconnected after %v, before retry_after_ms", gap)
		}
	})
	for _, tc := range []struct {
		code     string
		inactive bool
	}{{"REQUEST_ID_CONFLICT", false}, {"CLIENT_INACTIVE", true}, {"SOME_FUTURE_CODE", false}} {
		t.Run("nonretryable "+tc.code, func(t *testing.T) {
			r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
				c.expect("message", "request")
				c.send(rtFrame("error", "kind", "request", "error", tc.code, "message", "no\x1b[31m way", "retryable", false))
				c.hold()
			})
			opt, _ := rtOptions()
			x, err := openExchange(rtContext(t), r.endpoint(), deviceRoute(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
			if x == nil {
				t.Error("no exchange returned although the request was sent")
			} else {
				x.close()
			}
			var refusal *relayRefusal
			if !errors.As(err, &refusal) || refusal.Code != tc.code {
				t.Fatalf("error %v, want a refusal with %s", err, tc.code)
			}
			if strings.ContainsRune(err.Error(), '\x1b') || !strings.Contains(err.Error(), "no?[31m way") {
				t.Errorf("relay text not sanitized: %q", err)
			}
			if errors.Is(err, errClientInactive) != tc.inactive {
				t.Errorf("errors.Is(%v, errClientInactive) = %v", err, !tc.inactive)
			}
			if got := r.attemptCount(); got != 1 {
				t.Errorf("%d connections, want 1", got)
			}
		})
	}
}

func TestRelayInactiveAndEndedExchanges(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reply map[string]any
	}{
		{"inactive", rtFrame("inactive")},
		{"inactive response", rtFrame("inactive", "kind", "response")},
		{"expired", rtStateFrame("expired", "discarded", "absent", "absent")},
		{"response discarded", rtStateFrame("closing", "delivered", "discarded", "accepted")},
		{"response delivered elsewhere", rtStateFrame("open", "delivered", "delivered", "absent")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
				switch n {
				case 0:
					c.acceptRequest()
					c.drop()
				case 1:
					c.expect("resume", "")
					c.send(tc.reply)
					c.hold()
				default:
					c.fail("unexpected connection")
				}
			})
			opt, _ := rtOptions()
			ctx := rtContext(t)
			x, err := openExchange(ctx, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
			if err != nil {
				t.Fatal(err)
			}
			defer x.close()
			if _, err := x.awaitResponse(ctx); !errors.Is(err, errExchangeInactive) {
				t.Fatalf("awaitResponse: %v, want errExchangeInactive", err)
			}
			if got := r.attemptCount(); got != 2 {
				t.Errorf("%d connections, want 2", got)
			}
		})
	}
}

func TestRelayFrameSizeLimit(t *testing.T) {
	t.Run("outgoing", func(t *testing.T) {
		r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) { c.fail("connected") })
		big := json.RawMessage(`{"ciphertext":"` + strings.Repeat("A", relayMaxFrame) + `"}`)
		opt, _ := rtOptions()
		x, err := openExchange(rtContext(t), r.endpoint(), deviceRoute(rtDeviceID, rtClientID), rtClientID, rtRequestID, big, opt)
		if x != nil || err == nil || !strings.Contains(err.Error(), "256 KiB") {
			t.Fatalf("openExchange = %v, %v; want a frame-size error", x, err)
		}
		if got := r.attemptCount(); got != 0 {
			t.Errorf("%d connections for an oversized request", got)
		}
	})
	t.Run("incoming", func(t *testing.T) {
		big := json.RawMessage(`{"ciphertext":"` + strings.Repeat("A", relayMaxFrame) + `"}`)
		r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
			switch n {
			case 0:
				c.acceptRequest()
				c.send(rtFrame("message", "kind", "response", "payload", big))
				c.hold()
			case 1:
				c.resumeOpen()
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
		if !log.has("reconnecting (connection lost: failed to read: websocket: message too big") {
			t.Errorf("progress %q", log.list())
		}
		if !bytes.Equal(resp, rtResponse) {
			t.Errorf("accepted a response over 256 KiB")
		}
	})
}
