// Client records and admission ("Client token", "Initial-pairing
// connection", "Authenticated client connection", "Upgrade failures" in
// docs/client-relay-protocol.md): token hashes, the pairing attempt fixed at
// first admission, device-controlled client state, and persistence.

package relay

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"sort"
	"time"

	"github.com/coder/websocket"
)

type clientEntry struct {
	rec  ClientRecord
	hash [sha256.Size]byte
}

func (e *clientEntry) tokenMatches(token string) bool {
	h := sha256.Sum256([]byte(token))
	return subtle.ConstantTimeCompare(h[:], e.hash[:]) == 1
}

// httpError is an upgrade refusal: a status and the JSON error body.
type httpError struct {
	status       int
	code         string
	message      string
	retryAfterMS int64 // > 0 marks the error retryable
}

var (
	errUnauthorized = &httpError{status: http.StatusUnauthorized, code: "UNAUTHORIZED", message: "Authentication failed."}
	errInactive     = &httpError{status: http.StatusForbidden, code: "CLIENT_INACTIVE", message: "The client is not active."}
	errNoRoute      = &httpError{status: http.StatusNotFound, code: "NOT_FOUND", message: "The address, device or client is unavailable."}
	errStore        = &httpError{status: http.StatusInternalServerError, code: "INTERNAL_ERROR", message: "The relay could not record the client.", retryAfterMS: 1000}
)

// admission is what an upgrade was admitted as.
type admission struct {
	clientID, deviceID, addressID string
}

// admitPairing applies the initial-pairing route. The first admission fixes
// the address, client id (= request id), token hash and resolved device;
// a reconnect with the same values resumes the attempt until it is active.
func (r *Relay) admitPairing(addressID, requestID, token string) (admission, *httpError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.clients[requestID]; ok {
		if e.rec.AddressID != addressID {
			return admission{}, &httpError{status: http.StatusConflict, code: "CONFLICT", message: "The request ID is bound to another pairing attempt."}
		}
		if token == "" || !e.tokenMatches(token) {
			return admission{}, errUnauthorized
		}
		switch e.rec.State {
		case ClientPending:
			return admission{requestID, e.rec.DeviceID, addressID}, nil
		case ClientActive:
			return admission{}, &httpError{status: http.StatusConflict, code: "CONFLICT", message: "The pairing attempt is already complete."}
		default:
			return admission{}, errInactive
		}
	}
	if r.cfg.Addresses == nil {
		return admission{}, errNoRoute
	}
	deviceID, ok := r.cfg.Addresses(addressID)
	if !ok || !validULID(deviceID) {
		return admission{}, errNoRoute
	}
	if !validNewToken(token) {
		return admission{}, errUnauthorized
	}
	now := r.now()
	if !r.admissible(requestID, now) {
		return admission{}, &httpError{status: http.StatusBadRequest, code: "INVALID_REQUEST_ID", message: "The request ID is outside the admission window."}
	}
	e := &clientEntry{
		rec: ClientRecord{
			DeviceID:  deviceID,
			ClientID:  requestID,
			AddressID: addressID,
			State:     ClientPending,
			CreatedAt: now.UTC(),
		},
		hash: sha256.Sum256([]byte(token)),
	}
	e.rec.TokenHash = hex.EncodeToString(e.hash[:])
	r.clients[requestID] = e
	if err := r.saveLocked(); err != nil {
		delete(r.clients, requestID)
		r.logf("relay: saving client records: %v", err)
		return admission{}, errStore
	}
	r.logf("relay: admitted pairing attempt %s for device %s", requestID, deviceID)
	return admission{requestID, deviceID, addressID}, nil
}

// admitClient applies the authenticated route.
//
// A pending client is admitted here, not refused with 403: pairing
// activation is an ordinary paired exchange (PairingFinish, sealed with the
// pending PSK) that needs a fresh request id, and the pairing route only
// carries request_id = client_id, so this route is the only way a pending
// client can activate ("Pairing activation" in client-device-protocol.md;
// the reference client sends every paired exchange here). The relay cannot
// read which method a request carries; the device refuses anything but
// PairingFinish from a pending client.
func (r *Relay) admitClient(deviceID, clientID, token string) (admission, *httpError) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.clients[clientID]
	if !ok || e.rec.DeviceID != deviceID {
		return admission{}, errNoRoute
	}
	if token == "" || !e.tokenMatches(token) {
		return admission{}, errUnauthorized
	}
	switch e.rec.State {
	case ClientPending, ClientActive:
		return admission{clientID, deviceID, ""}, nil
	default:
		return admission{}, errInactive
	}
}

// closeCodeFor is the closure that tells a connected client of a state it
// can no longer use.
func closeCodeFor(s ClientState) (websocket.StatusCode, string, bool) {
	switch s {
	case ClientSuspended:
		return 4002, "client suspended", true
	case ClientRevoked:
		return 4003, "client revoked", true
	}
	return 0, "", false
}

// SetClientState is the device-controlled client state (pending->active on
// pairing activation, revoked on revoke/PairingRemove). Revoking/suspending
// closes that client's sockets with 4003/4002 and expires its exchanges.
// Revoked is final.
func (r *Relay) SetClientState(clientID string, state ClientState) error {
	if !state.valid() {
		return fmt.Errorf("relay: unknown client state %q", state)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.clients[clientID]
	if !ok {
		return ErrUnknownClient
	}
	old := e.rec.State
	if old == state {
		return nil
	}
	if old == ClientRevoked {
		return fmt.Errorf("relay: client %s is revoked", clientID)
	}
	e.rec.State = state
	if err := r.saveLocked(); err != nil {
		e.rec.State = old
		return fmt.Errorf("relay: saving client records: %w", err)
	}
	r.logf("relay: client %s is now %s", clientID, state)
	if code, reason, ok := closeCodeFor(state); ok {
		r.dropClientLocked(clientID, code, reason)
	}
	return nil
}

// dropClientLocked closes a client's sockets and expires its exchanges.
func (r *Relay) dropClientLocked(clientID string, code websocket.StatusCode, reason string) {
	for s := range r.sockets {
		if s.clientID == clientID {
			s.closeWith(code, reason)
		}
	}
	for k, ex := range r.exchanges {
		if k.clientID == clientID {
			r.expire(ex)
		}
	}
}

// Clients returns a copy of every client record, oldest first.
func (r *Relay) Clients() []ClientRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recordsLocked()
}

func (r *Relay) recordsLocked() []ClientRecord {
	out := make([]ClientRecord, 0, len(r.clients))
	for _, e := range r.clients {
		out = append(out, e.rec)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].ClientID < out[j].ClientID
	})
	return out
}

func (r *Relay) saveLocked() error {
	if r.cfg.Store == nil {
		return nil
	}
	return r.cfg.Store.Save(r.recordsLocked())
}

// loadClients validates stored records; a damaged store is an error rather
// than a silently smaller client list.
func loadClients(store ClientStore) (map[string]*clientEntry, error) {
	clients := map[string]*clientEntry{}
	if store == nil {
		return clients, nil
	}
	recs, err := store.Load()
	if err != nil {
		return nil, fmt.Errorf("relay: loading client records: %w", err)
	}
	for i, rec := range recs {
		if !validULID(rec.ClientID) || !validULID(rec.DeviceID) {
			return nil, fmt.Errorf("relay: client record %d: invalid id", i)
		}
		if rec.AddressID != "" && !validAddressID(rec.AddressID) {
			return nil, fmt.Errorf("relay: client record %s: invalid address id", rec.ClientID)
		}
		if !rec.State.valid() {
			return nil, fmt.Errorf("relay: client record %s: invalid state %q", rec.ClientID, rec.State)
		}
		h, err := hex.DecodeString(rec.TokenHash)
		if err != nil || len(h) != sha256.Size {
			return nil, fmt.Errorf("relay: client record %s: invalid token hash", rec.ClientID)
		}
		if _, dup := clients[rec.ClientID]; dup {
			return nil, fmt.Errorf("relay: client record %s appears twice", rec.ClientID)
		}
		e := &clientEntry{rec: rec}
		copy(e.hash[:], h)
		e.rec.TokenHash = hex.EncodeToString(h) // normalise case
		clients[rec.ClientID] = e
	}
	return clients, nil
}

// sweepClients forgets pending pairings that were never activated within
// their lifetime; the attempt can then no longer be resumed.
func (r *Relay) sweepClients(now time.Time) {
	changed := false
	for id, e := range r.clients {
		if e.rec.State == ClientPending && !now.Before(e.rec.CreatedAt.Add(pendingPairLife)) {
			r.dropClientLocked(id, 4003, "pairing expired")
			delete(r.clients, id)
			changed = true
			r.logf("relay: pending pairing %s expired", id)
		}
	}
	if changed {
		if err := r.saveLocked(); err != nil {
			r.logf("relay: saving client records: %v", err)
		}
	}
}
