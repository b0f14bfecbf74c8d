// relay_test.go: tests of the client-relay transport (relay.go) against a
// scripted fake relay built from httptest and coder/websocket: routes and
// headers, recovery before and after ack, duplicates, foreign and invalid
// frames, error/inactive/state frames, upgrade failures, liveness, the
// failure budget and the bounded completion hand-off.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

const (
	rtClientID  = "01K2ENXDTW1P3XAR4J7V7C9D0H"
	rtRequestID = "01K2EP16NWNAGJYF8J1Q2V6P3X"
	rtDeviceID  = "01K2EM5ZP8R9XQ3JD2B6T4W7YA"
	rtAddressID = "0123456789abcdef0123456789abcdef"
	rtToken     = "c2VjcmV0LXRva2VuLXZhbHVlLW5vdC1mb3ItbG9ncw"
	// rtGuard only breaks deadlocks; no assertion depends on it.
	rtGuard = 20 * time.Second
)

var (
	rtRequest    = json.RawMessage(`{"version":"agentknock-v1","key":"a2V5","ciphertext":"cmVxdWVzdA=="}`)
	rtResponse   = json.RawMessage(`{"nonce":"bm9uY2U=","ciphertext":"cmVzcG9uc2U="}`)
	rtCompletion = json.RawMessage(`{"ciphertext":"Y29tcGxldGlvbg=="}`)
)

// errRTScriptAbort unwinds a relay script after it reported a failure.
var errRTScriptAbort = errors.New("relay script aborted")

type relayFake struct {
	t      *testing.T
	srv    *httptest.Server
	refuse func(n int, w http.ResponseWriter) bool
	script func(n int, c *relayFakeConn)
	done   chan struct{}

	mu       sync.Mutex
	attempts int
	times    []time.Time
	requests []*http.Request
}

// newRelayFake starts a relay; refuse (optional) may answer attempt n with
// an HTTP error instead of upgrading; script plays connection n.
func newRelayFake(t *testing.T, useTLS bool, refuse func(int, http.ResponseWriter) bool, script func(int, *relayFakeConn)) *relayFake {
	t.Helper()
	r := &relayFake{t: t, refuse: refuse, script: script, done: make(chan struct{})}
	if useTLS {
		r.srv = httptest.NewTLSServer(r)
	} else {
		r.srv = httptest.NewServer(r)
	}
	t.Cleanup(func() {
		close(r.done)
		r.srv.CloseClientConnections()
		r.srv.Close()
	})
	return r
}

func (r *relayFake) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	n := r.attempts
	r.attempts++
	r.times = append(r.times, time.Now())
	r.requests = append(r.requests, req.Clone(context.Background()))
	r.mu.Unlock()
	if r.refuse != nil && r.refuse(n, w) {
		return
	}
	c := &relayFakeConn{t: r.t, n: n, frames: make(chan relayFakeFrame, 64), pinged: make(chan struct{}, 64), done: r.done}
	ws, err := websocket.Accept(w, req, &websocket.AcceptOptions{
		OnPingReceived: func(context.Context, []byte) bool {
			c.pings.Add(1)
			select {
			case c.pinged <- struct{}{}:
			default:
			}
			return !c.mute.Load()
		},
	})
	if err != nil {
		r.t.Errorf("fake relay: accept: %v", err)
		return
	}
	ws.SetReadLimit(1 << 20)
	c.ws = ws
	go c.readLoop()
	defer func() {
		if p := recover(); p != nil && p != errRTScriptAbort {
			panic(p)
		}
		_ = ws.CloseNow()
	}()
	r.script(n, c)
}

func (r *relayFake) baseURL() *url.URL {
	u, err := url.Parse(r.srv.URL)
	if err != nil {
		r.t.Fatal(err)
	}
	u.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	return u
}

func (r *relayFake) endpoint() relayEndpoint {
	return relayEndpoint{BaseURL: r.baseURL(), Token: rtToken}
}

func (r *relayFake) attemptCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.attempts
}

func (r *relayFake) request(n int) *http.Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[n]
}

// relayFakeConn is the relay's side of one WebSocket.
type relayFakeConn struct {
	t      *testing.T
	n      int
	ws     *websocket.Conn
	frames chan relayFakeFrame
	pings  atomic.Int32
	pinged chan struct{}
	mute   atomic.Bool // suppress pongs
	done   <-chan struct{}
}

type relayFakeFrame struct {
	raw []byte
	m   map[string]any
}

func (c *relayFakeConn) readLoop() {
	defer close(c.frames)
	for {
		typ, data, err := c.ws.Read(context.Background())
		if err != nil {
			return
		}
		var m map[string]any
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
			c.t.Errorf("fake relay: client sent an invalid frame (%v) %q", typ, data)
			continue
		}
		c.frames <- relayFakeFrame{raw: data, m: m}
	}
}

func (c *relayFakeConn) fail(format string, args ...any) {
	c.t.Helper()
	c.t.Errorf("fake relay connection %d: "+format, append([]any{c.n}, args...)...)
	panic(errRTScriptAbort)
}

func (c *relayFakeConn) next() relayFakeFrame {
	c.t.Helper()
	select {
	case f, ok := <-c.frames:
		if !ok {
			c.fail("connection ended while a client frame was expected")
		}
		return f
	case <-time.After(rtGuard):
		c.fail("no client frame arrived")
	}
	panic("unreachable")
}

// expect reads the next frame and checks its type, kind and identifiers.
func (c *relayFakeConn) expect(typ, kind string) relayFakeFrame {
	c.t.Helper()
	f := c.next()
	c.check(f, typ, kind)
	return f
}

func (c *relayFakeConn) check(f relayFakeFrame, typ, kind string) {
	c.t.Helper()
	if f.m["type"] != typ || f.m["client_id"] != rtClientID || f.m["request_id"] != rtRequestID {
		c.fail("got %s, want a %s frame for this exchange", f.raw, typ)
	}
	if got, _ := f.m["kind"].(string); got != kind {
		c.fail("got %s, want kind %q", f.raw, kind)
	}
}

func (c *relayFakeConn) send(v any) {
	c.t.Helper()
	data, ok := v.([]byte)
	if !ok {
		var err error
		if data, err = json.Marshal(v); err != nil {
			c.fail("marshal: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), rtGuard)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, data); err != nil {
		c.fail("write: %v", err)
	}
}

// hold keeps the connection open until the client drops it or the test ends.
func (c *relayFakeConn) hold() {
	for {
		select {
		case _, ok := <-c.frames:
			if !ok {
				return
			}
		case <-c.done:
			return
		}
	}
}

func (c *relayFakeConn) drop() { _ = c.ws.CloseNow() }

// rtFrame builds a relay frame for the test exchange.
func rtFrame(typ string, members ...any) map[string]any {
	m := map[string]any{"type": typ, "client_id": rtClientID, "request_id": rtRequestID}
	for i := 0; i+1 < len(members); i += 2 {
		m[members[i].(string)] = members[i+1]
	}
	return m
}

func rtStateFrame(exchange, request, response, completion string) map[string]any {
	return rtFrame("state", "exchange", exchange, "request", request, "response", response, "completion", completion)
}

// acceptRequest reads the request and acknowledges it.
func (c *relayFakeConn) acceptRequest() relayFakeFrame {
	c.t.Helper()
	f := c.expect("message", "request")
	if !rtJSONEqual(f.m["payload"], rtRequest) {
		c.fail("request payload %s", f.raw)
	}
	c.send(rtFrame("ack", "kind", "request"))
	return f
}

// resumeOpen answers a resume with an open exchange.
func (c *relayFakeConn) resumeOpen() {
	c.t.Helper()
	c.expect("resume", "")
	c.send(rtStateFrame("open", "delivered", "absent", "absent"))
}

// finish delivers the response, then takes the client's ack and completion.
func (c *relayFakeConn) finish() {
	c.t.Helper()
	c.send(rtFrame("message", "kind", "response", "payload", rtResponse))
	c.expect("ack", "response")
	c.takeCompletion()
}

func (c *relayFakeConn) takeCompletion() {
	c.t.Helper()
	f := c.expect("message", "completion")
	if !rtJSONEqual(f.m["payload"], rtCompletion) {
		c.fail("completion payload %s", f.raw)
	}
	c.send(rtFrame("ack", "kind", "completion"))
}

func rtJSONEqual(v any, raw json.RawMessage) bool {
	a, err := json.Marshal(v)
	if err != nil {
		return false
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(raw, &y) != nil {
		return false
	}
	b1, _ := json.Marshal(x)
	b2, _ := json.Marshal(y)
	return bytes.Equal(b1, b2)
}

type rtProgressLog struct {
	mu     sync.Mutex
	stages []string
}

func (p *rtProgressLog) add(stage string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stages = append(p.stages, stage)
}

func (p *rtProgressLog) list() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.stages...)
}

func (p *rtProgressLog) has(prefix string) bool {
	for _, s := range p.list() {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// rtOptions uses fast retries and an empty environment, so the
// developer's proxy settings never leak into a test.
func rtOptions() (relayOptions, *rtProgressLog) {
	log := &rtProgressLog{}
	return relayOptions{
		Progress:       log.add,
		Getenv:         func(string) string { return "" },
		BackoffInitial: time.Millisecond,
		BackoffMax:     10 * time.Millisecond,
	}, log
}

func rtContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), rtGuard)
	t.Cleanup(cancel)
	return ctx
}

// rtRunExchange plays the client through request, response and completion.
func rtRunExchange(t *testing.T, ep relayEndpoint, path string, opt relayOptions) (json.RawMessage, error) {
	t.Helper()
	ctx := rtContext(t)
	x, err := openExchange(ctx, ep, path, rtClientID, rtRequestID, rtRequest, opt)
	if err != nil {
		if x != nil {
			x.close()
		}
		return nil, err
	}
	defer x.close()
	resp, err := x.awaitResponse(ctx)
	if err != nil {
		return nil, err
	}
	return resp, x.complete(ctx, rtCompletion)
}

func TestRelayExchangeHappyPath(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		if n > 0 {
			c.fail("unexpected reconnect")
		}
		f := c.acceptRequest()
		if want := `{"type":"message","client_id":"` + rtClientID + `","request_id":"` + rtRequestID + `","kind":"request","payload":` + string(rtRequest) + `}`; string(f.raw) != want {
			c.fail("request frame %s, want %s", f.raw, want)
		}
		c.send(rtFrame("receipt", "kind", "request"))
		c.finish()
	})
	opt, log := rtOptions()
	resp, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp, rtResponse) {
		t.Errorf("response %s, want %s", resp, rtResponse)
	}
	want := []string{"connected", "request acknowledged by relay", "device received request", "response received"}
	if got := log.list(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("progress %q, want %q", got, want)
	}
	req := r.request(0)
	if got := req.Header.Get("Authorization"); got != "Bearer "+rtToken {
		t.Errorf("Authorization %q", got)
	}
	if got := req.Header.Get("Sec-WebSocket-Protocol"); got != "" {
		t.Errorf("client offered subprotocol %q; v1 negotiates none", got)
	}
	if got := req.Header.Get("User-Agent"); got != "agentknock" {
		t.Errorf("User-Agent %q", got)
	}
}

func TestRelayRoutes(t *testing.T) {
	for _, tc := range []struct {
		name, prefix, path, want string
	}{
		{"device", "", devicePath(rtDeviceID, rtClientID), "/v1/device/" + rtDeviceID + "/client/" + rtClientID},
		{"pairing", "", pairingPath(rtAddressID, rtClientID), "/v1/address/" + rtAddressID + "/request/" + rtClientID},
		{"base path", "/relay/", devicePath(rtDeviceID, rtClientID), "/relay/v1/device/" + rtDeviceID + "/client/" + rtClientID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
				c.acceptRequest()
				c.finish()
			})
			ep := r.endpoint()
			ep.BaseURL.Path = tc.prefix
			opt, _ := rtOptions()
			if _, err := rtRunExchange(t, ep, tc.path, opt); err != nil {
				t.Fatal(err)
			}
			if got := r.request(0).URL.Path; got != tc.want {
				t.Errorf("path %q, want %q", got, tc.want)
			}
		})
	}
}

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
	if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
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
	resp, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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
	resp, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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
	resp, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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
	resp, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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
	resp, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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
		if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
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
			x, err := openExchange(rtContext(t), r.endpoint(), devicePath(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
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
			x, err := openExchange(ctx, r.endpoint(), devicePath(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
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
		{"401", devicePath(rtDeviceID, rtClientID), 401, `{"error":"UNAUTHORIZED","message":"Authentication failed."}`, false, "rejected this client's token (HTTP 401: UNAUTHORIZED: Authentication failed.)"},
		{"403 client", devicePath(rtDeviceID, rtClientID), 403, `{"error":"FORBIDDEN","message":"Client is suspended."}`, true, "not active"},
		{"403 pairing", pairingPath(rtAddressID, rtClientID), 403, `{"error":"FORBIDDEN","message":"Pairing is closed."}`, false, "refused this pairing attempt"},
		{"404 pairing", pairingPath(rtAddressID, rtClientID), 404, `{"error":"NOT_FOUND","message":"Unknown address."}`, false, "no device at this pairing address"},
		{"404 device", devicePath(rtDeviceID, rtClientID), 404, `not json`, true, "no such device or client (HTTP 404)"},
		{"400", devicePath(rtDeviceID, rtClientID), 400, `{"error":"BAD_REQUEST","message":"Bad id."}`, false, "refused the connection (HTTP 400"},
		{"409", devicePath(rtDeviceID, rtClientID), 409, `{"error":"CONFLICT","message":"Bound elsewhere.","retryable":false}`, false, "HTTP 409"},
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
			if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
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
		_, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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
	if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	gap := r.times[1].Sub(r.times[0])
	r.mu.Unlock()
	if gap < time.Second {
		t.Errorf("retried after %v despite Retry-After: 1", gap)
	}
}

func TestRelayFailureBudgetResetsOnValidFrames(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
		switch {
		case n == 0:
			c.acceptRequest()
			c.drop()
		case n < 4:
			c.resumeOpen()
			c.drop()
		default:
			c.resumeOpen()
			c.finish()
		}
	})
	opt, _ := rtOptions()
	opt.MaxFailures = 2 // four drops in a row would exhaust it without resets
	if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
		t.Fatal(err)
	}
	if got := r.attemptCount(); got != 5 {
		t.Errorf("%d connections, want 5", got)
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
			_, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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

func TestRelayFrameSizeLimit(t *testing.T) {
	t.Run("outgoing", func(t *testing.T) {
		r := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) { c.fail("connected") })
		big := json.RawMessage(`{"ciphertext":"` + strings.Repeat("A", relayMaxFrame) + `"}`)
		opt, _ := rtOptions()
		x, err := openExchange(rtContext(t), r.endpoint(), devicePath(rtDeviceID, rtClientID), rtClientID, rtRequestID, big, opt)
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
		resp, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
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
		if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
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
		if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if log.has("reconnecting") {
			t.Errorf("reconnected although pongs arrived: %q", log.list())
		}
	})
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
		x, err := openExchange(ctx, r.endpoint(), devicePath(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
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
		x, err := openExchange(ctx, r.endpoint(), devicePath(rtDeviceID, rtClientID), rtClientID, rtRequestID, rtRequest, opt)
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
		if _, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("untrusted certificate is final", func(t *testing.T) {
		dials.Store(0)
		opt, _ := rtOptions()
		opt.Dialer = countingDialer
		_, err := rtRunExchange(t, r.endpoint(), devicePath(rtDeviceID, rtClientID), opt)
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Fatalf("error %v, want a certificate error", err)
		}
		if got := dials.Load(); got != 1 {
			t.Errorf("%d dials, want 1 (no retry)", got)
		}
	})
}

func TestParseRelayURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // error substring, or "" for success
	}{
		{"wss://relay.agentknock.dev", ""},
		{"wss://relay.example:8443/prefix/", ""},
		{"ws://127.0.0.1:8080", ""},
		{"ws://127.1.2.3", ""},
		{"ws://[::1]:9000", ""},
		{"ws://localhost:9000", ""},
		{"ws://LOCALHOST", ""},
		{"ws://relay.example", "only for a loopback host"},
		{"ws://10.0.0.1:80", "only for a loopback host"},
		{"ws://localhost.evil.example", "only for a loopback host"},
		{"ws://[::2]", "only for a loopback host"},
		{"https://relay.example", "scheme must be wss://"},
		{"relay.example", "scheme must be wss://"},
		{"wss://", "no host"},
		{"wss://user:pw@relay.example", "credentials"},
		{"wss://relay.example/?x=1", "query"},
		{"wss://relay.example:99999", "invalid port"},
	} {
		u, err := parseRelayURL(tc.in)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("parseRelayURL(%q): %v", tc.in, err)
		case tc.want == "" && u == nil:
			t.Errorf("parseRelayURL(%q) returned no URL", tc.in)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("parseRelayURL(%q) error %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("parseRelayURL(%q) error reveals the password: %v", tc.in, err)
		}
	}
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
	_, err := rtRunExchange(t, ep, devicePath(rtDeviceID, rtClientID), opt)
	if !errors.Is(err, errRelayNotLoopback) {
		t.Fatalf("error %v, want errRelayNotLoopback", err)
	}
}
