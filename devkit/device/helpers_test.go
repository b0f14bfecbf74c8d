// Test-only client, publisher and approver: a minimal Agentknock v1 client
// that seals requests and completions with circl directly, per the
// cryptosystem document, so the device is exercised through Deliver exactly
// as the relay drives it.
package device

import (
	"bytes"
	"context"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"golang.org/x/crypto/chacha20poly1305"
)

const waitLimit = 20 * time.Second // deadlock guard only

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func mustJSON(t testing.TB, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var appInfo = map[string]string{"name": "agentknock-test", "version": "0"}

// body adds app_info and lib_info to a protected client plaintext.
func body(t testing.TB, method string, fields map[string]any) []byte {
	m := map[string]any{"app_info": appInfo, "lib_info": appInfo}
	if method != "" {
		m["method"] = method
	}
	for k, v := range fields {
		m[k] = v
	}
	return mustJSON(t, m)
}

// --- publisher ---

type published struct {
	clientID, requestID string
	payload             json.RawMessage
	state               relay.ClientState // set for SetClientState events
}

type fakePublisher struct {
	mu     sync.Mutex
	events []published
	cond   *sync.Cond
}

func newPublisher() *fakePublisher {
	p := &fakePublisher{}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *fakePublisher) Respond(clientID, requestID string, payload json.RawMessage) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, published{clientID: clientID, requestID: requestID, payload: bytes.Clone(payload)})
	p.cond.Broadcast()
	return nil
}

func (p *fakePublisher) SetClientState(clientID string, state relay.ClientState) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, published{clientID: clientID, state: state})
	p.cond.Broadcast()
	return nil
}

// waitFor blocks until n events match, returning them.
func (p *fakePublisher) waitFor(t testing.TB, n int, match func(published) bool) []published {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	timer := time.AfterFunc(waitLimit, func() { p.mu.Lock(); p.cond.Broadcast(); p.mu.Unlock() })
	defer timer.Stop()
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		var got []published
		for _, e := range p.events {
			if match(e) {
				got = append(got, e)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d matching publisher events (have %d)", n, len(got))
		}
		p.cond.Wait()
	}
}

func (p *fakePublisher) responses(t testing.TB, clientID, requestID string, n int) []json.RawMessage {
	t.Helper()
	ev := p.waitFor(t, n, func(e published) bool {
		return e.state == "" && e.clientID == clientID && e.requestID == requestID
	})
	out := make([]json.RawMessage, len(ev))
	for i, e := range ev {
		out[i] = e.payload
	}
	return out
}

func (p *fakePublisher) snapshot() []published {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]published(nil), p.events...)
}

// --- approver ---

type fakeApprover struct {
	mu        sync.Mutex
	approvals []*Approval
	decide    func(ctx context.Context, a *Approval) Decision
	seen      chan *Approval
}

func newApprover() *fakeApprover {
	return &fakeApprover{seen: make(chan *Approval, 100)}
}

func (f *fakeApprover) Decide(ctx context.Context, a *Approval) Decision {
	f.mu.Lock()
	f.approvals = append(f.approvals, a)
	fn := f.decide
	f.mu.Unlock()
	select {
	case f.seen <- a:
	default:
	}
	if fn != nil {
		return fn(ctx, a)
	}
	if a.Kind == "pairing" {
		return Decision{Approve: true, SAS: a.Pairing.SAS}
	}
	return Decision{Approve: true}
}

// DecideNow makes the default approval immediate (as a policy is), so that
// most tests take the path that accepts and answers in one commit; a test
// that sets its own decision function is asked through Decide.
func (f *fakeApprover) DecideNow(a *Approval) (Decision, bool) {
	f.mu.Lock()
	custom := f.decide != nil
	f.mu.Unlock()
	if custom || a.Kind == "pairing" {
		return Decision{}, false
	}
	return f.Decide(context.Background(), a), true
}

func (f *fakeApprover) set(fn func(ctx context.Context, a *Approval) Decision) {
	f.mu.Lock()
	f.decide = fn
	f.mu.Unlock()
}

func (f *fakeApprover) count(kind string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, a := range f.approvals {
		if kind == "" || a.Kind == kind {
			n++
		}
	}
	return n
}

func (f *fakeApprover) last() *Approval {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.approvals) == 0 {
		return nil
	}
	return f.approvals[len(f.approvals)-1]
}

// --- device harness ---

type harness struct {
	t     testing.TB
	dir   string
	dev   *Device
	pub   *fakePublisher
	appr  *fakeApprover
	clock *testClock
}

type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
}

func newHarness(t testing.TB) *harness {
	t.Helper()
	return newHarnessWith(t, func(f *fakeApprover) Approver { return f })
}

// newHarnessWith gives the device wrap(h.appr) as its approver.
func newHarnessWith(t testing.TB, wrap func(*fakeApprover) Approver) *harness {
	t.Helper()
	dir := t.TempDir() + "/state"
	if _, err := Init(dir); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, dir: dir, pub: newPublisher(), appr: newApprover(), clock: &testClock{}}
	dev, err := Open(Options{StateDir: dir, Approver: wrap(h.appr), Publisher: h.pub, Now: h.clock.now,
		Logf: func(f string, a ...any) { t.Logf("device: "+f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	h.dev = dev
	t.Cleanup(func() { dev.Close() })
	return h
}

// --- client ---

type testClient struct {
	h        *harness
	deviceID ulid
	pkD      kem.PublicKey
	clientID ulid
	psk      []byte
	rotation []byte // pending rotation_enc
}

func hkdfKey(t testing.TB, salt, ikm []byte, info string, n int) []byte {
	k, err := hkdf.Key(sha256.New, ikm, salt, info, n)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// startPairing runs the clear exchange and sends the completion; it returns
// the client (PSK pending) and the SAS the client would print.
func (h *harness) startPairing(meta map[string]any) (*testClient, string) {
	t := h.t
	t.Helper()
	cid := newULID(h.clock.now())
	secret := make([]byte, 32)
	rand.Read(secret)
	commitment := hkdfKey(t, []byte("agentknock-v1"), secret, "agentknock-v1 commitment", 32)
	req := mustJSON(t, map[string]string{"version": "agentknock-v1", "commitment": b64(commitment)})
	if err := h.dev.Deliver(relay.Message{AddressID: h.dev.AddressID(), ClientID: cid.String(), RequestID: cid.String(), Kind: "request", Payload: req}); err != nil {
		t.Fatal(err)
	}
	resp := h.pub.responses(t, cid.String(), cid.String(), 1)[0]
	var pr struct {
		DeviceID     string `json:"device_id"`
		DeviceKey    []byte `json:"device_key"`
		DeviceRandom []byte `json:"device_random"`
	}
	if err := json.Unmarshal(resp, &pr); err != nil || len(pr.DeviceKey) != 32 || len(pr.DeviceRandom) != 32 {
		t.Fatalf("pairing response %s: %v", resp, err)
	}
	did, err := parseULID(pr.DeviceID)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := kemScheme.UnmarshalBinaryPublicKey(pr.DeviceKey)
	if err != nil {
		t.Fatal(err)
	}
	c := &testClient{h: h, deviceID: did, pkD: pk, clientID: cid}
	snd, err := suite.NewSender(pk, hpkeInfo(did, cid))
	if err != nil {
		t.Fatal(err)
	}
	enc, sealer, err := snd.Setup(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	secretCT, _ := sealer.Seal(secret, nil)
	if meta == nil {
		meta = map[string]any{"app_info": appInfo, "lib_info": appInfo, "platform": "linux", "architecture": "x86_64", "hostname": "testhost"}
	}
	metaCT, _ := sealer.Seal(mustJSON(t, meta), nil)
	c.psk = sealer.Export([]byte("agentknock-v1 psk"), 32)
	sas := sasDigits(pr.DeviceRandom, secret, did, cid, pr.DeviceKey)
	comp := mustJSON(t, map[string]string{"key": b64(enc), "secret": b64(secretCT), "ciphertext": b64(metaCT)})
	if err := h.dev.Deliver(relay.Message{ClientID: cid.String(), RequestID: cid.String(), Kind: "completion", Payload: comp}); err != nil {
		t.Fatal(err)
	}
	return c, sas
}

// pair runs a whole pairing with the default approver and activates it.
func (h *harness) pair() *testClient {
	h.t.Helper()
	c, _ := h.startPairing(nil)
	res := c.call("PairingFinish", nil)
	if res["result"] != "ACCEPTED" {
		h.t.Fatalf("PairingFinish: %v", res)
	}
	return c
}

// exchange is one paired exchange from the client's side.
type exchangeT struct {
	c         *testClient
	requestID ulid
	enc       []byte
	sealer    hpke.Sealer
	payload   json.RawMessage
}

// newRequest seals plaintext as record 0 under the client's PSK.
func (c *testClient) newRequest(rid ulid, plaintext []byte) *exchangeT {
	t := c.h.t
	t.Helper()
	snd, err := suite.NewSender(c.pkD, hpkeInfo(c.deviceID, rid))
	if err != nil {
		t.Fatal(err)
	}
	enc, sealer, err := snd.SetupPSK(rand.Reader, c.psk, c.clientID[:])
	if err != nil {
		t.Fatal(err)
	}
	ct, err := sealer.Seal(plaintext, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"version": "agentknock-v1", "key": b64(enc), "ciphertext": b64(ct)}
	if c.rotation != nil {
		env["rotation_key"] = b64(c.rotation)
	}
	return &exchangeT{c: c, requestID: rid, enc: enc, sealer: sealer, payload: mustJSON(t, env)}
}

func (x *exchangeT) deliver() {
	x.c.h.t.Helper()
	m := relay.Message{DeviceID: x.c.deviceID.String(), ClientID: x.c.clientID.String(), RequestID: x.requestID.String(), Kind: "request", Payload: x.payload}
	if err := x.c.h.dev.Deliver(m); err != nil {
		x.c.h.t.Fatal(err)
	}
}

// rawResponse waits for the n-th response to this exchange.
func (x *exchangeT) rawResponse(n int) json.RawMessage {
	x.c.h.t.Helper()
	return x.c.h.pub.responses(x.c.h.t, x.c.clientID.String(), x.requestID.String(), n)[n-1]
}

// open decrypts a protected response; ok is false for a clear report.
func (x *exchangeT) open(payload json.RawMessage) (map[string]any, bool) {
	t := x.c.h.t
	t.Helper()
	var env struct {
		Nonce      []byte `json:"nonce"`
		Ciphertext []byte `json:"ciphertext"`
		Error      string `json:"error"`
	}
	if err := json.Unmarshal(payload, &env); err != nil {
		t.Fatalf("response %s: %v", payload, err)
	}
	if env.Error != "" {
		var m map[string]any
		json.Unmarshal(payload, &m)
		return m, false
	}
	if len(env.Nonce) != 32 {
		t.Fatalf("response nonce is %d bytes", len(env.Nonce))
	}
	secret := x.sealer.Export([]byte("agentknock-v1 response"), 32)
	salt := append(bytes.Clone(x.enc), env.Nonce...)
	aead, _ := chacha20poly1305.New(hkdfKey(t, salt, secret, "key", 32))
	pt, err := aead.Open(nil, hkdfKey(t, salt, secret, "nonce", 12), env.Ciphertext, nil)
	if err != nil {
		t.Fatalf("response does not open: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(pt, &m); err != nil {
		t.Fatalf("response plaintext %q: %v", pt, err)
	}
	return m, true
}

// complete seals and delivers the completion (record 1).
func (x *exchangeT) complete(fields map[string]any) {
	t := x.c.h.t
	t.Helper()
	ct, err := x.sealer.Seal(body(t, "", fields), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := relay.Message{ClientID: x.c.clientID.String(), RequestID: x.requestID.String(), Kind: "completion", Payload: mustJSON(t, map[string]string{"ciphertext": b64(ct)})}
	if err := x.c.h.dev.Deliver(m); err != nil {
		t.Fatal(err)
	}
}

// callRaw sends plaintext and returns the decoded response and whether it
// was protected.
func (c *testClient) callRaw(plaintext []byte) (map[string]any, bool, *exchangeT) {
	c.h.t.Helper()
	x := c.newRequest(newULID(c.h.clock.now()), plaintext)
	x.deliver()
	m, ok := x.open(x.rawResponse(1))
	return m, ok, x
}

// call runs a method and requires a protected response.
func (c *testClient) call(method string, fields map[string]any) map[string]any {
	c.h.t.Helper()
	m, ok, _ := c.callRaw(body(c.h.t, method, fields))
	if !ok {
		c.h.t.Fatalf("%s: unprotected response %v", method, m)
	}
	return m
}

func (c *testClient) String() string { return fmt.Sprintf("client %s", c.clientID) }

var _ Publisher = (*relay.Relay)(nil)
