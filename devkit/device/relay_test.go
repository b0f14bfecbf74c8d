// The device behind the real local relay, over real WebSockets.
package device

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"agentknock.dev/agentknock/devkit/relay"
	"github.com/coder/websocket"
)

// wsClient speaks the client side of the client-relay protocol, just
// enough to carry one exchange at a time over a real WebSocket.
type wsClient struct {
	t     *testing.T
	base  string
	token string
}

type wsExchange struct {
	t        *testing.T
	conn     *websocket.Conn
	cid, rid string
}

func (w *wsClient) open(path, cid, rid string, payload json.RawMessage) *wsExchange {
	t := w.t
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, resp, err := websocket.Dial(ctx, w.base+path, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer " + w.token}},
	})
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", path, err, resp)
	}
	x := &wsExchange{t: t, conn: conn, cid: cid, rid: rid}
	t.Cleanup(func() { conn.CloseNow() })
	x.send(map[string]any{"type": "message", "client_id": cid, "request_id": rid, "kind": "request", "payload": payload})
	return x
}

func (x *wsExchange) send(frame map[string]any) {
	x.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := x.conn.Write(ctx, websocket.MessageText, mustJSON(x.t, frame)); err != nil {
		x.t.Fatal(err)
	}
}

// await reads frames until one of type typ and kind arrives.
func (x *wsExchange) await(typ, kind string) map[string]json.RawMessage {
	x.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	for {
		_, data, err := x.conn.Read(ctx)
		if err != nil {
			x.t.Fatalf("waiting for %s/%s: %v", typ, kind, err)
		}
		var f map[string]json.RawMessage
		json.Unmarshal(data, &f)
		var ft, fk string
		json.Unmarshal(f["type"], &ft)
		json.Unmarshal(f["kind"], &fk)
		if ft == "error" {
			x.t.Fatalf("relay error frame %s", data)
		}
		if ft == typ && (kind == "" || fk == kind) {
			return f
		}
	}
}

func (x *wsExchange) response() json.RawMessage {
	f := x.await("message", "response")
	x.send(map[string]any{"type": "ack", "client_id": x.cid, "request_id": x.rid, "kind": "response"})
	return f["payload"]
}

func (x *wsExchange) complete(payload json.RawMessage) {
	x.send(map[string]any{"type": "message", "client_id": x.cid, "request_id": x.rid, "kind": "completion", "payload": payload})
	x.await("ack", "completion")
}

// TestThroughRealRelay pairs and runs an invocation through relay.Relay
// over real WebSockets, with the device's client store behind the relay.
func TestThroughRealRelay(t *testing.T) {
	h := newHarness(t)
	h.secrets()
	rel, err := relay.New(relay.Config{
		Device: h.dev,
		Store:  h.dev.ClientStore(),
		Addresses: func(aid string) (string, bool) {
			return h.dev.DeviceID(), aid == h.dev.AddressID()
		},
		Logf: func(f string, a ...any) { t.Logf("relay: "+f, a...) },
	})
	if err != nil {
		t.Fatal(err)
	}
	h.dev.SetPublisher(rel)
	srv := httptest.NewServer(rel)
	t.Cleanup(func() { srv.Close(); rel.Close() })
	tok := make([]byte, 32)
	rand.Read(tok)
	ws := &wsClient{t: t, base: "ws" + strings.TrimPrefix(srv.URL, "http"), token: base64.RawURLEncoding.EncodeToString(tok)}

	// Pairing: clear request and response, then the base-mode completion.
	now := h.clock.now()
	cid := newULID(now)
	secret := make([]byte, 32)
	rand.Read(secret)
	x := ws.open("/v1/address/"+h.dev.AddressID()+"/request/"+cid.String(), cid.String(), cid.String(),
		mustJSON(t, map[string]string{"version": "agentknock-v1", "commitment": b64(commitmentOf(secret))}))
	var pr pairingResponseEnv
	if err := json.Unmarshal(x.response(), &pr); err != nil {
		t.Fatal(err)
	}
	pk, _ := kemScheme.UnmarshalBinaryPublicKey(pr.DeviceKey)
	did, _ := parseULID(pr.DeviceID)
	snd, _ := suite.NewSender(pk, hpkeInfo(did, cid))
	enc, sealer, _ := snd.Setup(rand.Reader)
	sct, _ := sealer.Seal(secret, nil)
	mct, _ := sealer.Seal(mustJSON(t, map[string]any{"app_info": appInfo, "lib_info": appInfo, "platform": "linux", "architecture": "arm64", "hostname": "vm"}), nil)
	c := &testClient{h: h, deviceID: did, pkD: pk, clientID: cid, psk: sealer.Export([]byte("agentknock-v1 psk"), 32)}
	x.complete(mustJSON(t, map[string]string{"key": b64(enc), "secret": b64(sct), "ciphertext": b64(mct)}))
	if a := <-h.appr.seen; a.Kind != "pairing" || a.Pairing.Hostname != "vm" {
		t.Fatalf("approval %+v", a)
	}

	devicePath := "/v1/device/" + did.String() + "/client/" + cid.String()
	call := func(method string, fields map[string]any) (map[string]any, *exchangeT, *wsExchange) {
		t.Helper()
		req := c.newRequest(newULID(h.clock.now()), body(t, method, fields))
		w := ws.open(devicePath, cid.String(), req.requestID.String(), req.payload)
		res, ok := req.open(w.response())
		if !ok {
			t.Fatalf("%s: clear error %v", method, res)
		}
		return res, req, w
	}
	// The pending client reaches the device route for PairingFinish.
	res, req, w := call("PairingFinish", nil)
	if res["result"] != "ACCEPTED" {
		t.Fatalf("PairingFinish %v", res)
	}
	ct, _ := req.sealer.Seal(body(t, "", map[string]any{"result": "ACCEPTED"}), nil)
	w.complete(mustJSON(t, map[string]string{"ciphertext": b64(ct)}))
	recs := rel.Clients()
	if len(recs) != 1 || recs[0].State != relay.ClientActive {
		t.Fatalf("relay records %+v", recs)
	}
	stored, _ := h.dev.ClientStore().Load()
	if len(stored) != 1 || stored[0].State != relay.ClientActive || stored[0].ClientID != cid.String() {
		t.Fatalf("stored records %+v", stored)
	}

	res, _, _ = call("Invocation", invocationFields(map[string]any{"github": env(map[string]any{"only": []string{"GH_TOKEN"}})}))
	if res["result"] != "APPROVED" || mustJSON(t, res["secrets"]) == nil {
		t.Fatalf("Invocation %v", res)
	}
	if v := res["secrets"].(map[string]any)["github"].(map[string]any)["variables"].(map[string]any)["GH_TOKEN"].(map[string]any)["value"]; v != "tok-123" {
		t.Fatalf("value %v", v)
	}
}
