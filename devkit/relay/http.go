// The relay's HTTP side ("WebSocket connections" and "Upgrade failures" in
// docs/client-relay-protocol.md): routing, identifier syntax, the upgrade
// checks, bearer authentication and JSON refusals, then the WebSocket.

package relay

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/coder/websocket"
)

// ServeHTTP serves GET /v1/address/{address_id}/request/{request_id} and
// GET /v1/device/{device_id}/client/{client_id}.
func (r *Relay) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	parts := strings.Split(req.URL.Path, "/")
	// "/v1/x/A/y/B" splits into ["", "v1", x, A, y, B].
	if len(parts) != 6 || parts[0] != "" || parts[1] != "v1" ||
		!((parts[2] == "address" && parts[4] == "request") || (parts[2] == "device" && parts[4] == "client")) {
		writeHTTPError(w, errNoRoute)
		return
	}
	pairing := parts[2] == "address"
	if req.Method != http.MethodGet {
		w.Header().Set("Allow", http.MethodGet)
		writeHTTPError(w, &httpError{status: http.StatusMethodNotAllowed, code: "METHOD_NOT_ALLOWED", message: "Only GET upgrades are served."})
		return
	}
	first, second := parts[3], parts[5]
	if pairing && (!validAddressID(first) || !validULID(second)) ||
		!pairing && (!validULID(first) || !validULID(second)) {
		writeHTTPError(w, &httpError{status: http.StatusBadRequest, code: "BAD_REQUEST", message: "An identifier in the path is malformed."})
		return
	}
	if herr := checkUpgrade(w, req); herr != nil {
		writeHTTPError(w, herr)
		return
	}
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		writeHTTPError(w, &httpError{status: http.StatusServiceUnavailable, code: "UNAVAILABLE", message: "The relay is shutting down.", retryAfterMS: 1000})
		return
	}
	token := bearerToken(req)
	var adm admission
	var herr *httpError
	if pairing {
		adm, herr = r.admitPairing(first, second, token)
	} else {
		adm, herr = r.admitClient(first, second, token)
	}
	if herr != nil {
		r.logf("relay: refused %s upgrade for %s: %d %s", parts[2], second, herr.status, herr.code)
		writeHTTPError(w, herr)
		return
	}

	conn, err := websocket.Accept(w, req, nil)
	if err != nil {
		r.logf("relay: upgrade for %s failed: %v", second, err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &socket{
		r:          r,
		conn:       conn,
		clientID:   adm.clientID,
		deviceID:   adm.deviceID,
		addressID:  adm.addressID,
		ctx:        ctx,
		cancel:     cancel,
		wake:       make(chan struct{}, 1),
		writerDone: make(chan struct{}),
		exchanges:  map[exchangeKey]*exchange{},
	}

	r.mu.Lock()
	if r.closed {
		s.closing = true
		r.mu.Unlock()
		conn.Close(websocket.StatusGoingAway, "relay closing")
		cancel()
		return
	}
	// The client state may have changed between admission and now.
	if e := r.clients[adm.clientID]; e == nil {
		s.closeWith(4003, "client removed")
	} else if code, reason, ok := closeCodeFor(e.rec.State); ok {
		s.closeWith(code, reason)
	}
	r.sockets[s] = struct{}{}
	r.wg.Add(1)
	r.mu.Unlock()
	defer r.wg.Done()
	r.logf("relay: client %s connected (%s route)", adm.clientID, parts[2])
	s.serve()
	r.logf("relay: client %s disconnected", adm.clientID)
}

// checkUpgrade refuses anything coder/websocket's Accept would refuse, so
// that every refusal carries the protocol's JSON body.
func checkUpgrade(w http.ResponseWriter, req *http.Request) *httpError {
	if !req.ProtoAtLeast(1, 1) || !headerHasToken(req.Header, "Connection", "upgrade") ||
		!headerHasToken(req.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		return &httpError{status: http.StatusUpgradeRequired, code: "UPGRADE_REQUIRED", message: "This route requires a WebSocket upgrade."}
	}
	if req.Header.Get("Sec-WebSocket-Version") != "13" {
		w.Header().Set("Sec-WebSocket-Version", "13")
		return &httpError{status: http.StatusBadRequest, code: "BAD_REQUEST", message: "Only WebSocket version 13 is supported."}
	}
	keys := req.Header.Values("Sec-WebSocket-Key")
	if len(keys) != 1 {
		return &httpError{status: http.StatusBadRequest, code: "BAD_REQUEST", message: "The WebSocket key is missing or repeated."}
	}
	if k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(keys[0])); err != nil || len(k) != 16 {
		return &httpError{status: http.StatusBadRequest, code: "BAD_REQUEST", message: "The WebSocket key is malformed."}
	}
	return nil
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// bearerToken returns the token of an "Authorization: Bearer" header, or "".
func bearerToken(req *http.Request) string {
	v := req.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

func writeHTTPError(w http.ResponseWriter, e *httpError) {
	body := map[string]any{"error": e.code, "message": e.message}
	if e.retryAfterMS > 0 {
		body["retryable"] = true
		body["retry_after_ms"] = e.retryAfterMS
		w.Header().Set("Retry-After", strconv.FormatInt((e.retryAfterMS+999)/1000, 10))
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(e.status)
	w.Write(append(b, '\n'))
}
