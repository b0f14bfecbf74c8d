// Tests of the upgrade side: routes, identifier syntax, bearer tokens, the
// pairing attempt fixed at first admission, client states, and the JSON
// refusals of "Upgrade failures" in docs/client-relay-protocol.md.

package relay

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// refusal is a decoded upgrade refusal body.
type refusal struct {
	Error        string `json:"error"`
	Message      string `json:"message"`
	Retryable    *bool  `json:"retryable"`
	RetryAfterMS *int64 `json:"retry_after_ms"`
}

func expectRefusal(t *testing.T, e *env, path, token string, status int, code string) refusal {
	t.Helper()
	c, resp, err := e.dialRaw(path, token)
	if err == nil {
		c.CloseNow()
		t.Fatalf("%s: upgrade succeeded, want %d", path, status)
	}
	if resp == nil {
		t.Fatalf("%s: no HTTP response: %v", path, err)
	}
	return checkRefusal(t, resp, status, code)
}

func checkRefusal(t *testing.T, resp *http.Response, status int, code string) refusal {
	t.Helper()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		t.Fatalf("status %d (%s), want %d", resp.StatusCode, body, status)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	var r refusal
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if r.Error != code || r.Message == "" {
		t.Fatalf("body %+v, want error %s with a message", r, code)
	}
	return r
}

func TestUpgradeRefusals(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	other := ulidAt(e.clock.Now())

	expectRefusal(t, e, devicePath(e.deviceID, id), newToken(), 401, "UNAUTHORIZED")
	expectRefusal(t, e, devicePath(e.deviceID, id), "", 401, "UNAUTHORIZED")
	expectRefusal(t, e, devicePath(e.deviceID, id), tok+"x", 401, "UNAUTHORIZED")
	expectRefusal(t, e, devicePath(e.deviceID, other), tok, 404, "NOT_FOUND")
	expectRefusal(t, e, devicePath(other, id), tok, 404, "NOT_FOUND")
	expectRefusal(t, e, devicePath(strings.ToLower(e.deviceID), id), tok, 400, "BAD_REQUEST")
	expectRefusal(t, e, devicePath(e.deviceID, "8"+id[1:]), tok, 400, "BAD_REQUEST")
	expectRefusal(t, e, devicePath(e.deviceID, id[:25]), tok, 400, "BAD_REQUEST")
	expectRefusal(t, e, "/v1/device/"+e.deviceID+"/clients/"+id, tok, 404, "NOT_FOUND")
	expectRefusal(t, e, "/v2/device/"+e.deviceID+"/client/"+id, tok, 404, "NOT_FOUND")
	expectRefusal(t, e, devicePath(e.deviceID, id)+"/", tok, 404, "NOT_FOUND")
	expectRefusal(t, e, pairingPath(strings.ToUpper(e.addressID), e.newID()), newToken(), 400, "BAD_REQUEST")
	expectRefusal(t, e, pairingPath(e.addressID[:31], e.newID()), newToken(), 400, "BAD_REQUEST")

	// The right token still works after all of that.
	c := e.dialClient(id, tok)
	c.sync(e)

	// Not a WebSocket upgrade.
	resp, err := http.Get(e.srv.URL + devicePath(e.deviceID, id))
	if err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, resp, http.StatusUpgradeRequired, "UPGRADE_REQUIRED")
	if resp.Header.Get("Upgrade") != "websocket" {
		t.Fatalf("426 without Upgrade header")
	}
	resp, err = http.Post(e.srv.URL+devicePath(e.deviceID, id), "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, resp, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")

	// A malformed handshake gets the JSON body too, not a library text.
	req, _ := http.NewRequest("GET", e.srv.URL+devicePath(e.deviceID, id), nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	req.Header.Set("Sec-WebSocket-Version", "12")
	req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	checkRefusal(t, resp, http.StatusBadRequest, "BAD_REQUEST")

	// Tokens never reach the log.
	if strings.Contains(e.logs.all(), tok) {
		t.Fatal("token in log")
	}
}

func TestSuspendedAndRevokedClients(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()
	a := e.dialClient(id, tok)
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")

	if err := e.relay.SetClientState(id, ClientSuspended); err != nil {
		t.Fatal(err)
	}
	a.expectClose(4002)
	r := expectRefusal(t, e, devicePath(e.deviceID, id), tok, 403, "CLIENT_INACTIVE")
	if r.Retryable != nil {
		t.Fatalf("403 marked retryable: %+v", r)
	}
	// Its exchanges ended with the suspension.
	if err := e.relay.Respond(id, req, json.RawMessage(`{}`)); err == nil {
		t.Fatal("Respond after suspension succeeded")
	}

	// Suspension can be lifted; the ended exchange stays ended.
	if err := e.relay.SetClientState(id, ClientActive); err != nil {
		t.Fatal(err)
	}
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expectState(req, "expired", "delivered", "absent", "absent")

	if err := e.relay.SetClientState(id, ClientRevoked); err != nil {
		t.Fatal(err)
	}
	b.expectClose(4003)
	expectRefusal(t, e, devicePath(e.deviceID, id), tok, 403, "CLIENT_INACTIVE")
	if err := e.relay.SetClientState(id, ClientActive); err == nil {
		t.Fatal("revoked client was reactivated")
	}
	if err := e.relay.SetClientState(ulidAt(time.Now()), ClientActive); err != ErrUnknownClient {
		t.Fatalf("unknown client: %v", err)
	}
	if err := e.relay.SetClientState(id, "gone"); err == nil {
		t.Fatal("unknown state accepted")
	}
}

func TestPairingRouteFixesTheAttempt(t *testing.T) {
	e := newEnv(t)
	pid, tok := e.newID(), newToken()
	path := pairingPath(e.addressID, pid)
	a := e.dial(path, pid, tok)

	recs := e.relay.Clients()
	if len(recs) != 1 {
		t.Fatalf("records %+v", recs)
	}
	rec := recs[0]
	if rec.ClientID != pid || rec.DeviceID != e.deviceID || rec.AddressID != e.addressID ||
		rec.State != ClientPending || rec.TokenHash != tokenHash(tok) || !rec.CreatedAt.Equal(e.clock.Now()) {
		t.Fatalf("record %+v", rec)
	}

	a.message(pid, "request", map[string]string{"version": "agentknock-v1", "commitment": "x"})
	a.expect("ack", pid, "request")
	a.expect("receipt", pid, "request")
	m := e.dev.deliveredFor(pid)
	if len(m) != 1 || m[0].AddressID != e.addressID || m[0].ClientID != pid || m[0].DeviceID != e.deviceID || m[0].Kind != "request" {
		t.Fatalf("delivered %+v", m)
	}

	// Another token or another address cannot take the attempt over.
	expectRefusal(t, e, path, newToken(), 401, "UNAUTHORIZED")
	expectRefusal(t, e, path, "", 401, "UNAUTHORIZED")
	expectRefusal(t, e, pairingPath(strings.Repeat("cd", 16), pid), tok, 409, "CONFLICT")
	// Unknown address, malformed new token, stale new request id.
	expectRefusal(t, e, pairingPath(strings.Repeat("ef", 16), e.newID()), newToken(), 404, "NOT_FOUND")
	expectRefusal(t, e, pairingPath(e.addressID, e.newID()), "short", 401, "UNAUTHORIZED")
	old := ulidAt(e.clock.Now().Add(-defaultMaxAge - time.Second))
	if r := expectRefusal(t, e, pairingPath(e.addressID, old), newToken(), 400, "INVALID_REQUEST_ID"); r.Retryable != nil {
		t.Fatalf("retryable: %+v", r)
	}
	if n := len(e.relay.Clients()); n != 1 {
		t.Fatalf("refused attempts created records: %d", n)
	}

	// The same values resume the attempt.
	b := e.dial(path, pid, tok)
	b.resume(pid)
	b.expectState(pid, "open", "delivered", "absent", "absent")
	if err := e.relay.Respond(pid, pid, json.RawMessage(`{"device_id":"x"}`)); err != nil {
		t.Fatal(err)
	}
	a.expect("message", pid, "response")
	b.expect("message", pid, "response")
	b.ackResponse(pid)
	b.message(pid, "completion", map[string]string{"key": "k"})
	b.expect("ack", pid, "completion")
	b.expect("receipt", pid, "completion")
	if m := e.dev.deliveredFor(pid); len(m) != 2 || m[1].Kind != "completion" || m[1].AddressID != "" {
		t.Fatalf("delivered %+v", m)
	}

	// Every frame on this route must use request_id = client_id.
	b.message(e.newID(), "request", "r")
	if f := b.read(); f.str("type") != "error" || f.str("error") != "INVALID_FRAME" {
		t.Fatalf("got %v", f)
	}
	b.expectClose(websocket.StatusPolicyViolation)

	// A pending client can use the device route: activation is a paired
	// PairingFinish exchange with a fresh request id.
	c := e.dialClient(pid, tok)
	finish := e.newID()
	c.message(finish, "request", map[string]string{"version": "agentknock-v1"})
	c.expect("ack", finish, "request")
	c.expect("receipt", finish, "request")
	if m := e.dev.deliveredFor(finish); len(m) != 1 || m[0].AddressID != "" {
		t.Fatalf("delivered %+v", m)
	}

	// Once active the attempt is over on the pairing route.
	if err := e.relay.SetClientState(pid, ClientActive); err != nil {
		t.Fatal(err)
	}
	expectRefusal(t, e, path, tok, 409, "CONFLICT")
	c.sync(e) // activation does not disturb the device-route socket
}

func TestPendingPairingExpires(t *testing.T) {
	e := newEnv(t)
	pid, tok := e.pair()
	e.clock.Advance(pendingPairLife - time.Second)
	e.relay.sweep()
	e.dialClient(pid, tok).sync(e)

	e.clock.Advance(time.Second)
	e.relay.sweep()
	if n := len(e.relay.Clients()); n != 0 {
		t.Fatalf("%d records after expiry", n)
	}
	if recs, _ := e.store.Load(); len(recs) != 0 {
		t.Fatalf("store still has %d records", len(recs))
	}
	expectRefusal(t, e, devicePath(e.deviceID, pid), tok, 404, "NOT_FOUND")
	// The id is long out of the admission window, so it cannot start over.
	expectRefusal(t, e, pairingPath(e.addressID, pid), tok, 400, "INVALID_REQUEST_ID")
}

func TestStoreFailureRefusesAdmission(t *testing.T) {
	e := newEnv(t)
	e.store.mu.Lock()
	e.store.failErr = io.ErrShortWrite
	e.store.mu.Unlock()
	r := expectRefusal(t, e, pairingPath(e.addressID, e.newID()), newToken(), 500, "INTERNAL_ERROR")
	if r.Retryable == nil || !*r.Retryable || r.RetryAfterMS == nil || *r.RetryAfterMS <= 0 {
		t.Fatalf("500 not retryable: %+v", r)
	}
	if n := len(e.relay.Clients()); n != 0 {
		t.Fatalf("record kept after failed save: %d", n)
	}
}

func TestRelayCloseClosesSockets(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	a.sync(e)
	done := make(chan struct{})
	go func() {
		e.relay.Close()
		close(done)
	}()
	a.expectClose(websocket.StatusGoingAway)
	select {
	case <-done:
	case <-time.After(guard):
		t.Fatal("Close did not return")
	}
	r := expectRefusal(t, e, devicePath(e.deviceID, id), tok, 503, "UNAVAILABLE")
	if r.Retryable == nil || !*r.Retryable {
		t.Fatalf("%+v", r)
	}
}
