// Exchange state at the relay ("Exchange transitions", "State frame",
// "Client-visible lifetime" in docs/client-relay-protocol.md): message
// identities, first-value retention, acks, receipts, resume snapshots and
// the retention deadlines. Every function here runs with Relay.mu held.

package relay

import (
	"encoding/json"
	"time"
)

type exchangeState string

const (
	exOpen    exchangeState = "open"
	exClosing exchangeState = "closing"
	exSettled exchangeState = "settled"
	exExpired exchangeState = "expired"
)

type msgState string

const (
	msgAbsent    msgState = "absent"
	msgAccepted  msgState = "accepted"
	msgDelivered msgState = "delivered"
	msgDiscarded msgState = "discarded"
)

// Retention periods of the hosted v1 relay.
const (
	detachedGrace    = 5 * time.Minute // open exchange after its last socket closes
	completionLife   = 24 * time.Hour  // accepted completion awaiting delivery
	recoveryGrace    = 5 * time.Minute // settled or expired exchange, tombstone
	pendingPairLife  = 24 * time.Hour  // pending pairing after admission
	maxLiveExchanges = 256             // open or closing exchanges per client
	capacityRetryMS  = 1000
)

// slot holds one message of an exchange. The payload is kept only while the
// message is accepted: delivered and discarded messages keep just the fact.
type slot struct {
	state   msgState
	payload json.RawMessage
}

func (s *slot) set(st msgState) {
	s.state = st
	if st != msgAccepted {
		s.payload = nil
	}
}

type exchangeKey struct{ clientID, requestID string }

type exchange struct {
	key       exchangeKey
	deviceID  string
	addressID string // initial-pairing exchange only
	idTime    time.Time
	state     exchangeState

	request, response, completion slot

	// assoc holds the sockets that sent the request or a completion, or
	// resumed the exchange: receipts and responses go only there.
	assoc map[*socket]*association

	detachedAt  time.Time // when assoc last became empty
	completedAt time.Time // when the completion was accepted
	endedAt     time.Time // when the exchange settled or expired

	queued   bool // in the delivery queue, being delivered, or backing off
	failures int  // consecutive Deliver errors, for backoff
}

// association remembers which client messages a socket has seen acknowledged
// (or reported accepted in a state snapshot), so a receipt never reaches a
// socket ahead of the matching ack.
type association struct {
	seenRequest, seenCompletion bool
}

type snapshot struct {
	exchange                      exchangeState
	request, response, completion msgState
}

func (ex *exchange) snapshot() snapshot {
	return snapshot{ex.state, ex.request.state, ex.response.state, ex.completion.state}
}

// retainUntil is when a settled or expired exchange may be forgotten: the
// recovery grace, and at least until its request id leaves the admission
// window, so a late retry can never recreate it.
func (r *Relay) retainUntil(ex *exchange) time.Time {
	t := ex.endedAt.Add(recoveryGrace)
	if cut := ex.idTime.Add(r.maxAge); cut.After(t) {
		t = cut
	}
	return t
}

func (r *Relay) associate(ex *exchange, s *socket) *association {
	a := ex.assoc[s]
	if a == nil {
		a = &association{}
		ex.assoc[s] = a
		s.exchanges[ex.key] = ex
	}
	return a
}

func (r *Relay) dissociate(ex *exchange, s *socket) {
	if _, ok := ex.assoc[s]; !ok {
		return
	}
	delete(ex.assoc, s)
	delete(s.exchanges, ex.key)
	if len(ex.assoc) == 0 {
		ex.detachedAt = r.now()
	}
}

// handleMessage applies a client request or completion. The caller has
// validated the frame and checked that the socket may address this id.
func (r *Relay) handleMessage(s *socket, f clientFrame) {
	key := exchangeKey{f.ClientID, f.RequestID}
	if r.fire(faultDropBeforeAck, f.Kind) {
		r.logf("relay: fault drop-before-ack: closing client %s socket before %s %s", f.ClientID, f.Kind, f.RequestID)
		s.closeWith(1011, "injected fault")
		return
	}
	ex := r.exchanges[key]
	if ex == nil {
		if _, dead := r.tombstones[key]; dead {
			if f.Kind == kindCompletion {
				s.send(ackFrame(f.ClientID, f.RequestID, f.Kind))
				r.afterAck(s, f)
			} else {
				s.send(inactiveFrame(f.ClientID, f.RequestID))
			}
			return
		}
		if f.Kind == kindCompletion {
			// A completion for an unknown exchange is acknowledged and
			// discarded; the tombstone keeps a reordered request from
			// recreating the exchange while its id is admissible.
			now := r.now()
			until := now.Add(recoveryGrace)
			if cut := ulidTime(f.RequestID).Add(r.maxAge); cut.After(until) {
				until = cut
			}
			r.tombstones[key] = until
			s.send(ackFrame(f.ClientID, f.RequestID, f.Kind))
			r.logf("relay: discarded completion for unknown exchange %s of client %s", f.RequestID, f.ClientID)
			r.afterAck(s, f)
			return
		}
		// The initial-pairing exchange passes this check too: the upgrade
		// admitted its id moments earlier, and checking again keeps an
		// exchange that was already forgotten from being created twice.
		now := r.now()
		if !r.admissible(f.RequestID, now) {
			s.send(errorFrame(f.ClientID, f.RequestID, f.Kind, "INVALID_REQUEST_ID",
				"The request ID is outside the admission window.", false, 0))
			return
		}
		if r.liveExchanges(f.ClientID) >= maxLiveExchanges {
			s.send(errorFrame(f.ClientID, f.RequestID, f.Kind, "CAPACITY_EXCEEDED",
				"The client has too many live exchanges.", true, capacityRetryMS))
			return
		}
		ex = &exchange{
			key:        key,
			deviceID:   s.deviceID,
			idTime:     ulidTime(f.RequestID),
			state:      exOpen,
			request:    slot{msgAccepted, f.Payload},
			response:   slot{state: msgAbsent},
			completion: slot{state: msgAbsent},
			assoc:      map[*socket]*association{},
		}
		if s.addressID != "" && f.RequestID == f.ClientID {
			ex.addressID = s.addressID
		}
		r.exchanges[key] = ex
		r.live[f.ClientID]++
		r.associate(ex, s).seenRequest = true
		s.send(ackFrame(f.ClientID, f.RequestID, f.Kind))
		r.afterAck(s, f)
		r.schedule(ex)
		return
	}

	switch f.Kind {
	case kindRequest:
		if ex.state == exExpired {
			s.send(inactiveFrame(f.ClientID, f.RequestID))
			return
		}
		// A duplicate: the first payload stays; the socket joins a live
		// exchange and learns what it missed.
		if ex.state == exOpen || ex.state == exClosing {
			r.associate(ex, s).seenRequest = true
		}
		s.send(ackFrame(f.ClientID, f.RequestID, f.Kind))
		if r.afterAck(s, f) {
			return
		}
		if ex.request.state == msgDelivered {
			s.send(receiptFrame(f.ClientID, f.RequestID, kindRequest))
		}
		if ex.response.state == msgAccepted {
			r.sendResponse(ex, s)
		}
	case kindCompletion:
		if ex.state == exExpired {
			// Acknowledge the terminal intent; nothing can be delivered.
			if ex.completion.state == msgAbsent {
				ex.completion.set(msgDiscarded)
			}
			s.send(ackFrame(f.ClientID, f.RequestID, f.Kind))
			r.afterAck(s, f)
			return
		}
		if ex.state == exOpen || ex.state == exClosing {
			r.associate(ex, s).seenCompletion = true
		}
		if ex.completion.state == msgAbsent {
			ex.completion = slot{msgAccepted, f.Payload}
			ex.state = exClosing
			ex.completedAt = r.now()
			if ex.response.state == msgAccepted {
				ex.response.set(msgDiscarded)
			}
			s.send(ackFrame(f.ClientID, f.RequestID, f.Kind))
			r.afterAck(s, f)
			r.schedule(ex)
			return
		}
		s.send(ackFrame(f.ClientID, f.RequestID, f.Kind))
		if r.afterAck(s, f) {
			return
		}
		if ex.completion.state == msgDelivered {
			s.send(receiptFrame(f.ClientID, f.RequestID, kindCompletion))
		}
	}
}

// afterAck applies the drop-after-ack fault: the message is stored and
// acknowledged, then the socket is closed before any receipt can reach it.
func (r *Relay) afterAck(s *socket, f clientFrame) bool {
	if !r.fire(faultDropAfterAck, f.Kind) {
		return false
	}
	r.logf("relay: fault drop-after-ack: closing client %s socket after %s %s", f.ClientID, f.Kind, f.RequestID)
	for _, ex := range s.exchanges {
		r.dissociate(ex, s)
	}
	s.closeWith(1011, "injected fault")
	return true
}

// liveExchanges counts a client's open or closing exchanges, kept as a
// count so that admitting a request does not walk every exchange the relay
// still remembers.
func (r *Relay) liveExchanges(clientID string) int { return r.live[clientID] }

// ended moves an exchange out of the live count.
func (r *Relay) ended(ex *exchange) {
	if r.live[ex.key.clientID]--; r.live[ex.key.clientID] <= 0 {
		delete(r.live, ex.key.clientID)
	}
}

// handleResume answers one resume with a state snapshot and then any
// response still waiting for the client's ack.
func (r *Relay) handleResume(s *socket, f clientFrame) {
	ex := r.exchanges[exchangeKey{f.ClientID, f.RequestID}]
	if ex == nil {
		s.send(inactiveFrame(f.ClientID, f.RequestID))
		return
	}
	snap := ex.snapshot()
	if ex.state == exOpen || ex.state == exClosing {
		a := r.associate(ex, s)
		// The snapshot tells the socket everything an ack would have.
		a.seenRequest = true
		if ex.completion.state != msgAbsent {
			a.seenCompletion = true
		}
	}
	s.send(stateFrame(f.ClientID, f.RequestID, snap))
	if ex.response.state == msgAccepted {
		r.sendResponse(ex, s)
	}
}

// handleResponseAck records the client's acknowledgement of a response. An
// ack for anything not awaiting one is harmless and changes nothing.
func (r *Relay) handleResponseAck(f clientFrame) {
	ex := r.exchanges[exchangeKey{f.ClientID, f.RequestID}]
	if ex == nil || ex.response.state != msgAccepted {
		return
	}
	ex.response.set(msgDelivered)
}

// sendResponse sends the pending response to the given sockets, or to all
// sockets associated with the exchange when none are given.
func (r *Relay) sendResponse(ex *exchange, only ...*socket) {
	frame := messageFrame(ex.key.clientID, ex.key.requestID, ex.response.payload)
	copies := 1
	if r.fire(faultDuplicateResponse, kindResponse) {
		copies = 2
		r.logf("relay: fault duplicate-response applied")
	}
	send := func(s *socket) {
		for range copies {
			s.send(frame)
		}
	}
	if len(only) > 0 {
		for _, s := range only {
			send(s)
		}
		return
	}
	for s := range ex.assoc {
		send(s)
	}
}

// markDelivered records that the device accepted a client message and sends
// the receipt to every associated socket that has seen its ack.
func (r *Relay) markDelivered(ex *exchange, kind string) {
	sl := &ex.request
	if kind == kindCompletion {
		sl = &ex.completion
	}
	if sl.state != msgAccepted {
		return
	}
	sl.set(msgDelivered)
	for s, a := range ex.assoc {
		if (kind == kindRequest && a.seenRequest) || (kind == kindCompletion && a.seenCompletion) {
			s.send(receiptFrame(ex.key.clientID, ex.key.requestID, kind))
		}
	}
	if kind == kindCompletion && ex.state == exClosing {
		r.ended(ex)
		ex.state = exSettled
		ex.endedAt = r.now()
	}
}

// respond stores the device's response (first one wins) and sends it.
func (r *Relay) respond(clientID, requestID string, payload json.RawMessage) error {
	ex := r.exchanges[exchangeKey{clientID, requestID}]
	if ex == nil {
		return ErrUnknownExchange
	}
	if ex.state == exExpired {
		return ErrExchangeInactive
	}
	if ex.response.state != msgAbsent {
		return nil
	}
	if ex.state != exOpen {
		// The client already completed: the response can only be dropped.
		ex.response.set(msgDiscarded)
		return nil
	}
	if r.hasReplayRule() {
		r.lastResponse[clientID] = lastResponse{requestID, payload}
	}
	payload = r.tamperResponse(payload)
	// A response implies the request reached the device, even when the
	// device answers before its Deliver call has returned.
	r.markDelivered(ex, kindRequest)
	ex.response = slot{msgAccepted, payload}
	r.sendResponse(ex)
	return nil
}

// expire ends delivery for an exchange: everything still held is discarded.
func (r *Relay) expire(ex *exchange) {
	if ex.state == exExpired || ex.state == exSettled {
		return
	}
	for _, sl := range []*slot{&ex.request, &ex.response, &ex.completion} {
		if sl.state == msgAccepted {
			sl.set(msgDiscarded)
		}
	}
	r.ended(ex)
	ex.state = exExpired
	ex.endedAt = r.now()
	for s := range ex.assoc {
		r.dissociate(ex, s)
	}
}

// sweepExchanges applies the lifetimes: detached open exchanges and stale
// completions expire; ended exchanges and tombstones are forgotten.
func (r *Relay) sweepExchanges(now time.Time) {
	for key, ex := range r.exchanges {
		switch ex.state {
		case exOpen:
			if len(ex.assoc) == 0 && !now.Before(ex.detachedAt.Add(detachedGrace)) {
				r.expire(ex)
			}
		case exClosing:
			if !now.Before(ex.completedAt.Add(completionLife)) {
				r.expire(ex)
			}
		case exSettled, exExpired:
			if !now.Before(r.retainUntil(ex)) {
				delete(r.exchanges, key)
			}
		}
	}
	for key, until := range r.tombstones {
		if !now.Before(until) {
			delete(r.tombstones, key)
		}
	}
}
