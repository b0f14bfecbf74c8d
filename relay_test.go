// relay_test.go: tests of the client-relay transport (relay.go) against a
// scripted fake relay built from httptest and coder/websocket, and the fake
// relay helpers the other relay_*_test.go and proxy_test.go files use;
// routes and headers ("WebSocket connections" in client-relay-protocol.md)
// and relay URL validation.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
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
	resp, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
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
		{"device", "", deviceRoute(rtDeviceID, rtClientID), "/v1/device/" + rtDeviceID + "/client/" + rtClientID},
		{"pairing", "", pairingRoute(rtAddressID, rtClientID), "/v1/address/" + rtAddressID + "/request/" + rtClientID},
		{"base path", "/relay/", deviceRoute(rtDeviceID, rtClientID), "/relay/v1/device/" + rtDeviceID + "/client/" + rtClientID},
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
