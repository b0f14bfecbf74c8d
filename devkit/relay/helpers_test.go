// Test fixtures for the relay: a settable clock, a recording device, a
// memory ClientStore, and a real WebSocket client speaking the v1 frames.

package relay

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// guard bounds every blocking step so a bug shows as a failure, not a hang.
const guard = 10 * time.Second

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// recDevice records every successful delivery and every attempt. refuse, if
// set, decides per attempt whether the device refuses the message.
type recDevice struct {
	mu        sync.Mutex
	delivered []Message
	attempts  []Message
	refuse    func(m Message, attempt int) error
	onDeliver func(m Message) // runs after acceptance, outside d.mu
	events    chan Message
}

func newRecDevice() *recDevice { return &recDevice{events: make(chan Message, 1000)} }

func (d *recDevice) Deliver(m Message) error {
	d.mu.Lock()
	d.attempts = append(d.attempts, m)
	n := 0
	for _, a := range d.attempts {
		if a.RequestID == m.RequestID && a.Kind == m.Kind {
			n++
		}
	}
	refuse := d.refuse
	d.mu.Unlock()
	if refuse != nil {
		if err := refuse(m, n); err != nil {
			return err
		}
	}
	d.mu.Lock()
	d.delivered = append(d.delivered, m)
	on := d.onDeliver
	d.mu.Unlock()
	if on != nil {
		on(m)
	}
	select {
	case d.events <- m:
	default:
		panic("recDevice: event buffer full")
	}
	return nil
}

func (d *recDevice) setRefuse(f func(m Message, attempt int) error) {
	d.mu.Lock()
	d.refuse = f
	d.mu.Unlock()
}

func (d *recDevice) setOnDeliver(f func(m Message)) {
	d.mu.Lock()
	d.onDeliver = f
	d.mu.Unlock()
}

func (d *recDevice) deliveredFor(requestID string) []Message {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []Message
	for _, m := range d.delivered {
		if m.RequestID == requestID {
			out = append(out, m)
		}
	}
	return out
}

func (d *recDevice) attemptsFor(requestID, kind string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for _, m := range d.attempts {
		if m.RequestID == requestID && m.Kind == kind {
			n++
		}
	}
	return n
}

type memStore struct {
	mu      sync.Mutex
	recs    []ClientRecord
	saves   int
	failErr error
}

func (s *memStore) Load() ([]ClientRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ClientRecord(nil), s.recs...), nil
}

func (s *memStore) Save(recs []ClientRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failErr != nil {
		return s.failErr
	}
	s.saves++
	s.recs = append([]ClientRecord(nil), recs...)
	return nil
}

type env struct {
	t         *testing.T
	clock     *fakeClock
	dev       *recDevice
	store     *memStore
	relay     *Relay
	srv       *httptest.Server
	deviceID  string
	addressID string
	logs      *logSink
}

type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logSink) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func newEnv(t *testing.T, opts ...func(*Config)) *env {
	t.Helper()
	e := &env{
		t:         t,
		clock:     &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)},
		dev:       newRecDevice(),
		store:     &memStore{},
		addressID: strings.Repeat("ab", 16),
		logs:      &logSink{},
	}
	e.deviceID = ulidAt(e.clock.Now().Add(-time.Hour))
	e.start(opts...)
	return e
}

// start builds a relay over the env's store, clock and device; calling it
// again after stop simulates a relay restart.
func (e *env) start(opts ...func(*Config)) {
	cfg := Config{
		Device: e.dev,
		Store:  e.store,
		Addresses: func(a string) (string, bool) {
			if a == e.addressID {
				return e.deviceID, true
			}
			if a == strings.Repeat("cd", 16) {
				return e.deviceID, true
			}
			return "", false
		},
		Now:  e.clock.Now,
		Logf: e.logs.logf,
	}
	for _, o := range opts {
		o(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.relay = r
	e.srv = httptest.NewServer(r)
	e.t.Cleanup(e.stop)
}

func (e *env) stop() {
	if e.srv == nil {
		return
	}
	e.relay.Close()
	e.srv.Close()
	e.srv = nil
}

// ulidAt makes a canonical ULID with the given time and 80 random bits.
func ulidAt(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 5; i >= 0; i-- {
		b[i] = byte(ms)
		ms >>= 8
	}
	rand.Read(b[6:])
	// 128 bits as 26 base32 digits, the first holding the top 3 bits.
	out := make([]byte, 26)
	var hi, lo uint64
	for i := 0; i < 8; i++ {
		hi = hi<<8 | uint64(b[i])
		lo = lo<<8 | uint64(b[8+i])
	}
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | (hi&31)<<59
		hi >>= 5
	}
	return string(out)
}

func (e *env) newID() string { return ulidAt(e.clock.Now()) }

func newToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

func tokenHash(tok string) string {
	h := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(h[:])
}

func (e *env) url(path string) string {
	return "ws" + strings.TrimPrefix(e.srv.URL, "http") + path
}

func devicePath(deviceID, clientID string) string {
	return "/v1/device/" + deviceID + "/client/" + clientID
}

func pairingPath(addressID, requestID string) string {
	return "/v1/address/" + addressID + "/request/" + requestID
}

// dialRaw attempts an upgrade and returns the refusal, if any.
func (e *env) dialRaw(path, token string) (*websocket.Conn, *http.Response, error) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return websocket.Dial(ctx, e.url(path), &websocket.DialOptions{HTTPHeader: h})
}

type wsClient struct {
	t        *testing.T
	c        *websocket.Conn
	clientID string
}

func (e *env) dial(path, clientID, token string) *wsClient {
	e.t.Helper()
	c, resp, err := e.dialRaw(path, token)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		e.t.Fatalf("dial %s: %v (status %d)", path, err, status)
	}
	c.SetReadLimit(2 * MaxFrameSize)
	e.t.Cleanup(func() { c.CloseNow() })
	return &wsClient{t: e.t, c: c, clientID: clientID}
}

func (e *env) dialClient(clientID, token string) *wsClient {
	e.t.Helper()
	return e.dial(devicePath(e.deviceID, clientID), clientID, token)
}

// pair admits a new pairing attempt through the address route and returns
// its client id and token; the record is pending.
func (e *env) pair() (string, string) {
	e.t.Helper()
	id, tok := e.newID(), newToken()
	c := e.dial(pairingPath(e.addressID, id), id, tok)
	c.c.Close(websocket.StatusNormalClosure, "")
	return id, tok
}

func (e *env) activeClient() (string, string) {
	e.t.Helper()
	id, tok := e.pair()
	if err := e.relay.SetClientState(id, ClientActive); err != nil {
		e.t.Fatalf("SetClientState: %v", err)
	}
	return id, tok
}

func (c *wsClient) sendRaw(s string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func (c *wsClient) sendJSON(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(b))
}

func (c *wsClient) message(requestID, kind string, payload any) {
	c.t.Helper()
	c.sendJSON(map[string]any{"type": "message", "client_id": c.clientID, "request_id": requestID, "kind": kind, "payload": payload})
}

func (c *wsClient) resume(requestID string) {
	c.t.Helper()
	c.sendJSON(map[string]any{"type": "resume", "client_id": c.clientID, "request_id": requestID})
}

func (c *wsClient) ackResponse(requestID string) {
	c.t.Helper()
	c.sendJSON(map[string]any{"type": "ack", "client_id": c.clientID, "request_id": requestID, "kind": "response"})
}

type frame map[string]any

func (f frame) str(k string) string { s, _ := f[k].(string); return s }

// read returns the next frame, failing the test on a closed socket.
func (c *wsClient) read() frame {
	c.t.Helper()
	f, err := c.tryRead()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return f
}

func (c *wsClient) tryRead() (frame, error) {
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	typ, data, err := c.c.Read(ctx)
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("relay sent a binary frame")
	}
	var f frame
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("relay frame is not JSON: %v", err)
	}
	return f, nil
}

// expect reads the next frame and checks its type, ids and kind.
func (c *wsClient) expect(typ, requestID, kind string) frame {
	c.t.Helper()
	f := c.read()
	if f.str("type") != typ || f.str("request_id") != requestID || f.str("kind") != kind {
		c.t.Fatalf("got frame %v, want type=%s request_id=%s kind=%q", f, typ, requestID, kind)
	}
	if f.str("client_id") != c.clientID {
		c.t.Fatalf("frame %v has client_id %q, want %q", f, f.str("client_id"), c.clientID)
	}
	return f
}

func (c *wsClient) expectState(requestID, exchange, req, resp, comp string) {
	c.t.Helper()
	f := c.expect("state", requestID, "")
	got := [4]string{f.str("exchange"), f.str("request"), f.str("response"), f.str("completion")}
	want := [4]string{exchange, req, resp, comp}
	if got != want {
		c.t.Fatalf("state %v, want %v", got, want)
	}
}

// sync proves that nothing else is queued for this socket: the relay
// answers frames in order, so the inactive reply to a resume for an id it
// never saw must be the very next frame.
func (c *wsClient) sync(e *env) {
	c.t.Helper()
	probe := e.newID()
	c.resume(probe)
	c.expect("inactive", probe, "")
}

// expectClose reads until the socket closes and checks the close code.
func (c *wsClient) expectClose(code websocket.StatusCode) {
	c.t.Helper()
	for {
		f, err := c.tryRead()
		if err == nil {
			c.t.Logf("frame before close: %v", f)
			continue
		}
		if got := websocket.CloseStatus(err); got != code {
			c.t.Fatalf("socket ended with %v (status %d), want close %d", err, got, code)
		}
		return
	}
}

// waitDelivered waits until the device has accepted n messages in total.
func (e *env) waitDelivered(n int) []Message {
	e.t.Helper()
	var out []Message
	timeout := time.After(guard)
	for len(out) < n {
		select {
		case m := <-e.dev.events:
			out = append(out, m)
		case <-timeout:
			e.t.Fatalf("device got %d messages, want %d", len(out), n)
		}
	}
	return out
}
