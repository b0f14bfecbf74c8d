// relay_failures_test.go: tests of connection failures in the client-relay
// transport ("Upgrade failures", "WebSocket closure" and "WebSocket
// connections" in client-relay-protocol.md): refused upgrades and
// Retry-After, close codes, liveness pings, TLS verification and the
// loopback rule for plain ws://.

package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestRelayUpgradeFailures(t *testing.T) {
	refuseWith := func(status int, header map[string]string, body string) func(int, http.ResponseWriter) bool {
		return func(n int, w http.ResponseWriter) bool {
			for k, v := range header {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
			return true
		}
	}
	for _, tc := range []struct {
		name     string
		path     string
		status   int
		body     string
		inactive bool
		want     string
	}{
		{"401", deviceRoute(rtDeviceID, rtClientID), 401, `{"error":"UNAUTHORIZED","message":"Authentication failed."}`, false, "rejected this client's token (HTTP 401: UNAUTHORIZED: Authentication failed.)"},
		{"403 client", deviceRoute(rtDeviceID, rtClientID), 403, `{"error":"FORBIDDEN","message":"Client is suspended."}`, true, "not active"},
		{"403 pairing", pairingRoute(rtAddressID, rtClientID), 403, `{"error":"FORBIDDEN","message":"Pairing is closed."}`, false, "refused this pairing attempt"},
		{"404 pairing", pairingRoute(rtAddressID, rtClientID), 404, `{"error":"NOT_FOUND","message":"Unknown address."}`, false, "no device at this pairing address"},
		{"404 device", deviceRoute(rtDeviceID, rtClientID), 404, `not json`, true, "no such device or client (HTTP 404)"},
		{"400", deviceRoute(rtDeviceID, rtClientID), 400, `{"error":"BAD_REQUEST","message":"Bad id."}`, false, "refused the connection (HTTP 400"},
		{"409", deviceRoute(rtDeviceID, rtClientID), 409, `{"error":"CONFLICT","message":"Bound elsewhere.","retryable":false}`, false, "HTTP 409"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRelayFake(t, false, refuseWith(tc.status, nil, tc.body), nil)
			opt, _ := rtOptions()
			_, err := rtRunExchange(t, r.endpoint(), tc.path, opt)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
			if strings.Contains(err.Error(), rtToken) {
				t.Errorf("error reveals the token: %v", err)
			}
			if errors.Is(err, errClientInactive) != tc.inactive {
				t.Errorf("errors.Is(errClientInactive) = %v, want %v", !tc.inactive, tc.inactive)
			}
			if got := r.attemptCount(); got != 1 {
				t.Errorf("%d attempts, want 1 (no retry)", got)
			}
		})
	}

	for _, tc := range []struct {
		name   string
		status int
		body   string
	}{
		{"500", 500, `{"error":"INTERNAL_ERROR","message":"oops"}`},
		{"409 retryable", 409, `{"error":"BUSY","message":"later","retryable":true,"retry_after_ms":1}`},
		{"429", 429, `{"error":"RATE_LIMITED","message":"later"}`},
	} {
		t.Run("retried "+tc.name, func(t *testing.T) {
			r := newRelayFake(t, false, func(n int, w http.ResponseWriter) bool {
				if n == 0 {
					return refuseWith(tc.status, nil, tc.body)(n, w)
				}
				return false
			}, func(n int, c *relayFakeConn) {
				c.acceptRequest()
				c.finish()
			})
			opt, log := rtOptions()
			if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
				t.Fatal(err)
			}
			if got := r.attemptCount(); got != 2 {
				t.Errorf("%d attempts, want 2", got)
			}
			if !log.has("reconnecting (") {
				t.Errorf("progress %q", log.list())
			}
		})
	}

	t.Run("budget exhausted", func(t *testing.T) {
		r := newRelayFake(t, false, refuseWith(503, nil, `{"error":"UNAVAILABLE","message":"down"}`), nil)
		opt, _ := rtOptions()
		opt.MaxFailures = 3
		_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
		if !errors.Is(err, errRelayUnavailable) || !strings.Contains(err.Error(), "HTTP 503") {
			t.Fatalf("error %v, want errRelayUnavailable naming HTTP 503", err)
		}
		if got := r.attemptCount(); got != 3 {
			t.Errorf("%d attempts, want 3", got)
		}
	})
}

func TestRelayHonoursRetryAfter(t *testing.T) {
	r := newRelayFake(t, false, func(n int, w http.ResponseWriter) bool {
		if n > 0 {
			return false
		}
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"error":"RATE_LIMITED","message":"later"}`))
		return true
	}, func(n int, c *relayFakeConn) {
		c.acceptRequest()
		c.finish()
	})
	opt, _ := rtOptions()
	if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	gap := r.times[1].Sub(r.times[0])
	r.mu.Unlock()
	if gap < time.Second {
		t.Errorf("retried after %v despite Retry-After: 1", gap)
	}
}

func TestRelayCloseCodes(t *testing.T) {
	for _, tc := range []struct {
		code     websocket.StatusCode
		final    bool
		inactive bool
	}{
		{4002, true, true},
		{4003, true, true},
		{4004, true, true},
		{websocket.StatusPolicyViolation, true, false},
		{websocket.StatusInternalError, false, false},
		{websocket.StatusTryAgainLater, false, false},
		{websocket.StatusGoingAway, false, false},
	} {
		t.Run(fmt.Sprint(int(tc.code)), func(t *testing.T) {
			r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
				switch n {
				case 0:
					c.acceptRequest()
					_ = c.ws.Close(tc.code, "closing")
				case 1:
					c.resumeOpen()
					c.finish()
				default:
					c.fail("unexpected connection")
				}
			})
			opt, _ := rtOptions()
			_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
			if tc.final {
				var refusal *relayRefusal
				if !errors.As(err, &refusal) || refusal.CloseCode != int(tc.code) {
					t.Fatalf("error %v, want a refusal with close code %d", err, tc.code)
				}
				if errors.Is(err, errClientInactive) != tc.inactive {
					t.Errorf("errors.Is(errClientInactive) = %v", !tc.inactive)
				}
				if got := r.attemptCount(); got != 1 {
					t.Errorf("%d connections, want 1", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := r.attemptCount(); got != 2 {
				t.Errorf("%d connections, want 2", got)
			}
		})
	}
}

func TestRelayLiveness(t *testing.T) {
	t.Run("unanswered ping", func(t *testing.T) {
		pinged := make(chan int32, 1)
		r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
			switch n {
			case 0:
				c.mute.Store(true)
				c.acceptRequest()
				c.hold()
				pinged <- c.pings.Load()
			case 1:
				c.resumeOpen()
				c.finish()
			default:
				c.fail("unexpected connection")
			}
		})
		opt, log := rtOptions()
		opt.PingAfter, opt.PongWithin = 20*time.Millisecond, 200*time.Millisecond
		if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if !log.has("reconnecting (relay did not answer a WebSocket ping within 200ms)") {
			t.Errorf("progress %q", log.list())
		}
		if n := <-pinged; n < 1 {
			t.Errorf("relay saw %d pings", n)
		}
	})
	t.Run("answered pings keep the socket", func(t *testing.T) {
		r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
			if n > 0 {
				c.fail("unexpected reconnect")
			}
			c.acceptRequest()
			for i := 0; i < 3; i++ {
				select {
				case <-c.pinged:
				case <-time.After(rtGuard):
					c.fail("client never pinged an idle connection")
				}
			}
			c.finish()
		})
		opt, log := rtOptions()
		opt.PingAfter, opt.PongWithin = 20*time.Millisecond, rtGuard
		if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if log.has("reconnecting") {
			t.Errorf("reconnected although pongs arrived: %q", log.list())
		}
	})
}

func TestRelayTLS(t *testing.T) {
	r := newRelayFake(t, true, nil, func(n int, c *relayFakeConn) {
		c.acceptRequest()
		c.finish()
	})
	var dials atomic.Int32
	countingDialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}

	t.Run("trusted", func(t *testing.T) {
		opt, _ := rtOptions()
		opt.TLSConfig = &tls.Config{RootCAs: r.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
		if _, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("untrusted certificate is final", func(t *testing.T) {
		dials.Store(0)
		opt, _ := rtOptions()
		opt.Dialer = countingDialer
		_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("error %v, want a certificate error", err)
		}
		if got := dials.Load(); got != 1 {
			t.Errorf("%d dials, want 1 (no retry)", got)
		}
	})
}

func TestRelayPlainWebSocketMustReachLoopback(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) { c.fail("connected") })
	ep := r.endpoint()
	ep.BaseURL.Host = "localhost:" + ep.BaseURL.Port()
	opt, _ := rtOptions()
	// A resolver that maps localhost elsewhere must not get plain ws://.
	opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() { <-ctx.Done(); server.Close() }()
		return client, nil
	}
	_, err := rtRunExchange(t, ep, deviceRoute(rtDeviceID, rtClientID), opt)
	if !errors.Is(err, errRelayNotLoopback) {
		t.Fatalf("error %v, want errRelayNotLoopback", err)
	}
}
