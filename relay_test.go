// relay_test.go: tests of the client-relay transport (relay.go) against a
// scripted fake relay built from httptest and coder/websocket, and the fake
// relay helpers the tests below use;
// routes and headers ("WebSocket connections" in client-relay-protocol.md)
// and relay URL validation.

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
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

// Tests of relay_ahead.go: a socket dialed before its request exists is the
// exchange's first connection attempt, success or failure, and one that no
// exchange takes is closed without a frame.

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

// The bound of each hostile-relay mode, computed from the client's own
// relay constants, is the one README's table states (README, "Limits and
// bounds"); e2e/hostile_test.go checks that each mode ends on the limit
// the table names.

// failureBudget is the backoff a run spends between its MaxFailures
// attempts when each attempt fails at once.
func failureBudget(o relayOptions) time.Duration {
	var total time.Duration
	delay := o.BackoffInitial
	for i := 1; i < o.MaxFailures; i++ {
		total += delay
		delay = min(2*delay, o.BackoffMax)
	}
	return total
}

// hostileModeBounds is each mode's bound, by the limit that ends it.
func hostileModeBounds(o relayOptions) map[string]time.Duration {
	budget := failureBudget(o)
	answerStall := o.MaxStall + o.AnswerWithin + o.BackoffMax
	return map[string]time.Duration{
		"ack then close":                 budget,
		"close in the middle of a frame": budget,
		"garbage frames":                 budget,
		"frames of another exchange":     budget,
		"oversized frame":                budget,
		"forged response":                o.CompletionBound,
		"reads and never writes":         answerStall,
		"ping flood":                     answerStall,
		"never answers pings":            o.MaxStall + o.PingAfter + o.PongWithin + o.BackoffMax,
		"retry after a year":             o.MaxStall,
	}
}

func TestREADMEStatesEachHostileRelayBound(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^  \\| ([a-z ]+) \\| [^|]+ \\| `([0-9a-z.]+)`")
	stated := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		stated[m[1]] = m[2]
	}
	for mode, bound := range hostileModeBounds(relayOptions{}.withDefaults()) {
		if stated[mode] != bound.String() {
			t.Errorf("README states %q for %q; the constants give %s", stated[mode], mode, bound)
		}
	}
	if len(stated) != len(hostileModeBounds(relayOptions{}.withDefaults())) {
		t.Errorf("README's table has %d modes: %v", len(stated), stated)
	}
	// Every bound is below the longest any mode can take: the stall limit,
	// one last attempt and one backoff.
	o := relayOptions{}.withDefaults()
	for mode, bound := range hostileModeBounds(o) {
		if bound > hostileBound(o) {
			t.Errorf("%s: %s is over the overall bound %s", mode, bound, hostileBound(o))
		}
	}
}

// A give-up because the next wait would pass the stall limit names whose
// wait it is: this client's own backoff, or a delay the relay asked for.
// (The message said "the relay asks to wait 5s" for the client's backoff.)
func TestStallMessageNamesWhoseWaitItIs(t *testing.T) {
	for name, c := range map[string]struct {
		retryAfterMS uint64
		says, not    string
	}{
		"own backoff":   {0, "the next retry, after this client's backoff of 1s", "the relay asks"},
		"relay's delay": {3000, "the relay asks to wait 3s", "backoff of"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRelayFake(t, false, nil, func(n int, conn *relayFakeConn) {
				conn.next()
				if c.retryAfterMS != 0 {
					conn.send(map[string]any{"type": "error", "error": "RATE_LIMITED", "message": "later", "retryable": true, "retry_after_ms": c.retryAfterMS})
					conn.hold()
					return
				}
				conn.drop()
			})
			opt := hostileOptions()
			opt.BackoffInitial, opt.BackoffMax = time.Second, time.Second
			opt.MaxStall = 800 * time.Millisecond
			_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
			if !errors.Is(err, errRelayUnavailable) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), c.not) {
				t.Fatalf("ended with %v, want %q", err, c.says)
			}
		})
	}
}

// Tests of connection failures in the client-relay
// transport ("Upgrade failures", "WebSocket closure" and "WebSocket
// connections" in client-relay-protocol.md): refused upgrades and
// Retry-After, close codes, liveness pings, TLS verification and the
// loopback rule for plain ws://.

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

// Tests of the frames the client accepts from the relay
// ("Frame encoding" through "Error frame" in client-relay-protocol.md):
// duplicates, foreign and invalid frames, null payloads, error, inactive and
// state frames, and the 256 KiB frame limit.

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

// A hostile relay, one behaviour per case (issue finding 6): it reads and
// never writes, sends garbage, frames of other exchanges, frames over 256
// KiB, floods pings, never answers pings, acknowledges and closes, closes
// in the middle of a frame, or asks to retry after an absurd delay. Each
// must end with errRelayUnavailable and a message that says why, within
// the documented bound: MaxStall, plus one last attempt (the longest of
// AnswerWithin, PingAfter+PongWithin and ConnectTimeout), plus one backoff.
// The durations are shortened here in proportion; README gives the real
// ones. A relay that answers out of order but completely still succeeds.

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

// Tests of recovery in the client-relay transport
// ("Reconnection and recovery" in client-relay-protocol.md): resending the
// request before its ack, resuming after it, the failure budget resetting on
// valid frames, and the bounded completion hand-off.

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

// Tests of relay proxy selection, no_proxy matching and the
// HTTP CONNECT tunnel (proxy.go), with a local CONNECT proxy that requires
// Basic credentials in front of the fake wss:// relay of relay_test.go.

func TestRelayProxySelection(t *testing.T) {
	for _, tc := range []struct {
		name   string
		target string
		env    map[string]string
		want   string // proxy as relayProxy.String, "" for direct
		err    string
	}{
		{"no settings", "wss://relay.example", nil, "", ""},
		{"https_proxy", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:3128"}, "http://a.example:3128 (from https_proxy)", ""},
		{"HTTPS_PROXY", "wss://relay.example", map[string]string{"HTTPS_PROXY": "http://b.example:3128"}, "http://b.example:3128 (from HTTPS_PROXY)", ""},
		{"lowercase https wins", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "HTTPS_PROXY": "http://b.example:2"}, "http://a.example:1 (from https_proxy)", ""},
		{"all_proxy fallback", "wss://relay.example", map[string]string{"all_proxy": "http://c.example:3"}, "http://c.example:3 (from all_proxy)", ""},
		{"ALL_PROXY fallback", "wss://relay.example", map[string]string{"ALL_PROXY": "http://d.example:4"}, "http://d.example:4 (from ALL_PROXY)", ""},
		{"lowercase all wins", "wss://relay.example", map[string]string{"all_proxy": "http://c.example:3", "ALL_PROXY": "http://d.example:4"}, "http://c.example:3 (from all_proxy)", ""},
		{"https before all", "wss://relay.example", map[string]string{"ALL_PROXY": "http://d.example:4", "HTTPS_PROXY": "http://b.example:2"}, "http://b.example:2 (from HTTPS_PROXY)", ""},
		{"empty lowercase skipped", "wss://relay.example", map[string]string{"https_proxy": " ", "HTTPS_PROXY": "http://b.example:2"}, "http://b.example:2 (from HTTPS_PROXY)", ""},
		{"http_proxy ignored", "wss://relay.example", map[string]string{"http_proxy": "http://e.example:5", "HTTP_PROXY": "http://e.example:5"}, "", ""},
		{"no scheme", "wss://relay.example", map[string]string{"https_proxy": "proxy.corp"}, "http://proxy.corp:80 (from https_proxy)", ""},
		{"https proxy", "wss://relay.example", map[string]string{"https_proxy": "https://proxy.corp"}, "https://proxy.corp:443 (from https_proxy)", ""},
		{"credentials hidden", "wss://relay.example", map[string]string{"https_proxy": "http://u:hunter2@proxy.corp:8080"}, "http://proxy.corp:8080 (from https_proxy)", ""},
		{"socks refused", "wss://relay.example", map[string]string{"https_proxy": "socks5://u:hunter2@proxy.corp:1080"}, "", `https_proxy uses the unsupported proxy scheme "socks5"`},
		{"bad port", "wss://relay.example", map[string]string{"all_proxy": "http://u:hunter2@proxy.corp:http"}, "", "all_proxy does not contain a valid proxy URL"},
		{"no_proxy", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "relay.example"}, "", ""},
		{"NO_PROXY", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "NO_PROXY": ".example"}, "", ""},
		{"lowercase no_proxy wins", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "other.example", "NO_PROXY": "relay.example"}, "http://a.example:1 (from https_proxy)", ""},
		{"no_proxy port", "wss://relay.example:8443", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "relay.example:443"}, "http://a.example:1 (from https_proxy)", ""},
		{"no_proxy default port", "wss://relay.example", map[string]string{"https_proxy": "http://a.example:1", "no_proxy": "relay.example:443"}, "", ""},
		{"loopback IPv4", "wss://127.0.0.1:8443", map[string]string{"https_proxy": "http://a.example:1"}, "", ""},
		{"loopback IPv6", "wss://[::1]:8443", map[string]string{"https_proxy": "http://a.example:1"}, "", ""},
		{"localhost", "wss://localhost", map[string]string{"all_proxy": "http://a.example:1"}, "", ""},
		{"plain ws", "ws://127.0.0.1:8080", map[string]string{"https_proxy": "http://a.example:1", "all_proxy": "http://a.example:1"}, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, err := url.Parse(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			p, err := relayProxyFor(target, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				if strings.Contains(err.Error(), "hunter2") {
					t.Errorf("error reveals the proxy password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if p != nil {
				got = p.String()
			}
			if got != tc.want {
				t.Errorf("proxy %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNoProxyMatches(t *testing.T) {
	for _, tc := range []struct {
		list, host, port string
		want             bool
	}{
		{"", "relay.example", "443", false},
		{"*", "relay.example", "443", true},
		{"relay.example", "relay.example", "443", true},
		{"example", "relay.example", "443", true},
		{".example", "relay.example", "443", true},
		{".example", "example", "443", true},
		{"*.example", "relay.example", "443", true},
		{"lay.example", "relay.example", "443", false},
		{"relay.example.org", "relay.example", "443", false},
		{"RELAY.Example.", "relay.example", "443", true},
		{"relay.example", "RELAY.EXAMPLE.", "443", true},
		{" other.example , relay.example ", "relay.example", "443", true},
		{"other.example,,", "relay.example", "443", false},
		{"relay.example:443", "relay.example", "443", true},
		{"relay.example:8443", "relay.example", "443", false},
		{"192.0.2.1", "192.0.2.1", "443", true},
		{"192.0.2.1:443", "192.0.2.1", "443", true},
		{"192.0.2.1:80", "192.0.2.1", "443", false},
		{"192.0.2.1", "relay.example", "443", false},
		{"example", "192.0.2.1", "443", false},
		{"10.0.0.0/8", "10.1.2.3", "443", true},
		{"10.0.0.0/8", "11.0.0.1", "443", false},
		{"10.0.0.0/8", "relay.example", "443", false},
		{"2001:db8::1", "2001:db8::1", "443", true},
		{"[2001:db8::1]:443", "2001:db8::1", "443", true},
		{"[2001:db8::1]:80", "2001:db8::1", "443", false},
		{"2001:db8::/32", "2001:db8::5", "443", true},
		{"2001:db8::/32", "2001:db9::5", "443", false},
	} {
		if got := noProxyMatches(tc.list, tc.host, tc.port); got != tc.want {
			t.Errorf("noProxyMatches(%q, %q, %q) = %v, want %v", tc.list, tc.host, tc.port, got, tc.want)
		}
	}
}

// proxyFake is a minimal HTTP CONNECT proxy that demands Basic
// credentials and forwards every tunnel to one local address.
type proxyFake struct {
	t        *testing.T
	ln       net.Listener
	user     string
	password string
	upstream string

	mu       sync.Mutex
	accepted int
	targets  []string
}

func newProxyFake(t *testing.T, user, password, upstream string) *proxyFake {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxyFake{t: t, ln: ln, user: user, password: password, upstream: upstream}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.accepted++
			p.mu.Unlock()
			wg.Add(1)
			go func() { defer wg.Done(); p.serve(c) }()
		}
	}()
	return p
}

func (p *proxyFake) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	p.mu.Lock()
	p.targets = append(p.targets, req.Method+" "+req.Host)
	p.mu.Unlock()
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.password))
	if req.Method != http.MethodConnect || req.Header.Get("Proxy-Authorization") != want {
		_, _ = io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\n\r\n")
		return
	}
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\nVia: test\r\n\r\n"); err != nil {
		return
	}
	go func() { _, _ = io.Copy(up, br); up.Close() }()
	_, _ = io.Copy(c, up)
}

func (p *proxyFake) seen() (int, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted, append([]string(nil), p.targets...)
}

func TestRelayThroughConnectProxy(t *testing.T) {
	r := newRelayFake(t, true, nil, func(n int, c *relayFakeConn) {
		c.acceptRequest()
		c.finish()
	})
	port := r.baseURL().Port()
	// The relay answers as example.com (a name in the httptest certificate),
	// so the tunnel target is a real host name, not loopback.
	ep := r.endpoint()
	ep.BaseURL.Host = "example.com:" + port
	roots := &tls.Config{RootCAs: r.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs}
	const password = "p@ss:w rd"
	proxyURL := func(p *proxyFake, pw string) string {
		return "http://" + url.UserPassword("agent", pw).String() + "@" + p.ln.Addr().String()
	}
	// Direct connections to example.com land on the local relay.
	direct := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if host, _, _ := net.SplitHostPort(addr); host == "example.com" {
			addr = "127.0.0.1:" + port
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}

	t.Run("authenticated tunnel", func(t *testing.T) {
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.TLSConfig = roots
		opt.Getenv = func(k string) string {
			return map[string]string{"https_proxy": proxyURL(p, password), "no_proxy": "other.example"}[k]
		}
		if _, err := rtRunExchange(t, ep, deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if _, targets := p.seen(); len(targets) != 1 || targets[0] != "CONNECT example.com:"+port {
			t.Errorf("proxy saw %q, want one CONNECT example.com:%s", targets, port)
		}
	})

	t.Run("rejected credentials are final", func(t *testing.T) {
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.TLSConfig = roots
		opt.Getenv = func(k string) string { return map[string]string{"ALL_PROXY": proxyURL(p, "wrong-secret")}[k] }
		_, err := rtRunExchange(t, ep, deviceRoute(rtDeviceID, rtClientID), opt)
		var status *proxyStatusError
		if !errors.As(err, &status) || status.Status != http.StatusProxyAuthRequired {
			t.Fatalf("error %v, want a 407 proxy refusal", err)
		}
		if !strings.Contains(err.Error(), "ALL_PROXY") || strings.Contains(err.Error(), "wrong-secret") {
			t.Errorf("error %q should name ALL_PROXY and hide the password", err)
		}
		if accepted, _ := p.seen(); accepted != 1 {
			t.Errorf("%d proxy connections, want 1 (no retry)", accepted)
		}
	})

	t.Run("no_proxy bypass", func(t *testing.T) {
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.TLSConfig = roots
		opt.Dialer = direct
		opt.Getenv = func(k string) string {
			return map[string]string{"https_proxy": proxyURL(p, password), "no_proxy": "localhost,.com"}[k]
		}
		if _, err := rtRunExchange(t, ep, deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if accepted, _ := p.seen(); accepted != 0 {
			t.Errorf("%d proxy connections despite no_proxy", accepted)
		}
	})

	t.Run("loopback relay is never proxied", func(t *testing.T) {
		plain := newRelayFake(t, false, nil, func(n int, c *relayFakeConn) {
			c.acceptRequest()
			c.finish()
		})
		p := newProxyFake(t, "agent", password, r.srv.Listener.Addr().String())
		opt, _ := rtOptions()
		opt.Getenv = func(k string) string {
			return map[string]string{"https_proxy": proxyURL(p, password), "all_proxy": proxyURL(p, password), "http_proxy": proxyURL(p, password)}[k]
		}
		if _, err := rtRunExchange(t, plain.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt); err != nil {
			t.Fatal(err)
		}
		if accepted, _ := p.seen(); accepted != 0 {
			t.Errorf("%d proxy connections for a loopback relay", accepted)
		}
	})
}

func TestProxyTunnelKeepsEarlyBytes(t *testing.T) {
	// A proxy may send tunnel bytes in the same packet as its answer.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		_, _ = io.WriteString(c, "HTTP/1.0 200 OK\r\n\r\nearly tunnel bytes")
	}()
	u, err := parseProxyURL("https_proxy", "http://"+ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	p := &relayProxy{url: u, source: "https_proxy"}
	conn, err := p.dial(rtContext(t), (&net.Dialer{}).DialContext, nil, "relay.example:443")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	got, err := io.ReadAll(conn)
	if err != nil || string(got) != "early tunnel bytes" {
		t.Errorf("tunnel read %q, %v", got, err)
	}
}

// A relay that keeps answering CAPACITY_EXCEEDED (this client has too many
// live exchanges on it) works; the run ends as "relay busy", whose
// suggested action is to wait, not to check the network.
func TestRelayCapacityExceededSuggestsWaiting(t *testing.T) {
	r := newRelayFake(t, false, nil, func(n int, conn *relayFakeConn) {
		conn.next()
		conn.send(map[string]any{"type": "error", "error": "CAPACITY_EXCEEDED", "message": "The client has too many live exchanges.", "retryable": true, "retry_after_ms": 1})
		conn.hold()
	})
	_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), hostileOptions())
	class, _ := classOf(describeRelayError(err), failOther)
	if !errors.Is(err, errRelayUnavailable) || class != failRelayBusy {
		t.Fatalf("ended with %v (class %d), want relay busy", err, class)
	}
	action := strings.Join(suggestedActions(class, "", "the command"), " ")
	if !strings.Contains(action, "Wait for this client's other requests") || strings.Contains(action, "network") {
		t.Fatalf("suggested action %q", action)
	}
}

// A request over the relay's frame limit fails the same way every time:
// the suggested action says to make it smaller, and never --verbose, which
// cannot help.
func TestRequestOverTheFrameLimitSuggestsMakingItSmaller(t *testing.T) {
	payload := json.RawMessage(`"` + strings.Repeat("x", relayMaxFrame) + `"`)
	_, err := messageFrame(rtClientID, rtDeviceID, "request", payload)
	class, _ := classOf(err, failOther)
	if err == nil || class != failRequestTooLarge {
		t.Fatalf("messageFrame of %d bytes: %v (class %d)", len(payload), err, class)
	}
	action := strings.Join(suggestedActions(class, "", "the command"), " ")
	if !strings.Contains(action, "make the request smaller") || strings.Contains(action, "--verbose") {
		t.Fatalf("suggested action %q", action)
	}
}
