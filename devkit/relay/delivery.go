// Onward delivery to the in-process device ("Delivery model" and "Exchange
// transitions" in docs/client-relay-protocol.md): at-least-once handoff
// with receipts, request-before-completion order within an exchange, and
// backoff while the device refuses.

package relay

import (
	"runtime"
	"time"
)

const (
	retryMin = 50 * time.Millisecond
	retryMax = 10 * time.Second
)

// schedule queues an exchange for delivery unless it is already queued,
// being delivered or backing off. Called with Relay.mu held.
func (r *Relay) schedule(ex *exchange) {
	if ex.queued || r.closed {
		return
	}
	ex.queued = true
	r.pending = append(r.pending, ex.key)
	select {
	case r.deliveryWake <- struct{}{}:
	default:
	}
}

// nextToDeliver picks the next message of an exchange: its request, then its
// completion once the request is delivered.
func nextToDeliver(ex *exchange) (string, bool) {
	if ex.state == exExpired || ex.state == exSettled {
		return "", false
	}
	if ex.request.state == msgAccepted {
		return kindRequest, true
	}
	if ex.request.state == msgDelivered && ex.completion.state == msgAccepted {
		return kindCompletion, true
	}
	return "", false
}

// deliveryLoop is the single goroutine that calls Device.Deliver, so the
// device never sees two calls at once.
func (r *Relay) deliveryLoop() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		for len(r.pending) == 0 && !r.closed {
			r.mu.Unlock()
			select {
			case <-r.deliveryWake:
			case <-r.done:
			}
			r.mu.Lock()
		}
		if r.closed {
			r.mu.Unlock()
			return
		}
		key := r.pending[0]
		r.pending = r.pending[1:]
		ex := r.exchanges[key]
		if ex == nil {
			r.mu.Unlock()
			continue
		}
		kind, ok := nextToDeliver(ex)
		if !ok {
			ex.queued = false
			r.mu.Unlock()
			continue
		}
		m := Message{
			DeviceID:  ex.deviceID,
			ClientID:  key.clientID,
			RequestID: key.requestID,
			Kind:      kind,
		}
		if kind == kindRequest {
			m.AddressID = ex.addressID
			m.Payload = append([]byte(nil), ex.request.payload...)
		} else {
			m.Payload = append([]byte(nil), ex.completion.payload...)
		}
		r.mu.Unlock()

		// The frame that queued this delivery also queued its ack, and the
		// socket writer that sends it became runnable just before this
		// goroutine; yielding lets the ack leave before the device's
		// synchronous work (decrypting, deciding, committing) takes the
		// processor. Without it the client waited for that work, about
		// 0.15 ms of each round trip on a 2-core machine.
		runtime.Gosched()
		err := r.cfg.Device.Deliver(m)

		r.mu.Lock()
		if r.exchanges[key] != ex {
			r.mu.Unlock()
			continue
		}
		if err != nil {
			ex.failures++
			delay := retryMin << min(ex.failures-1, 20)
			if delay > retryMax {
				delay = retryMax
			}
			r.logf("relay: device refused %s %s of client %s (retry in %v): %v", kind, key.requestID, key.clientID, delay, err)
			time.AfterFunc(delay, func() {
				r.mu.Lock()
				defer r.mu.Unlock()
				if r.closed || r.exchanges[key] != ex {
					return
				}
				ex.queued = false
				r.schedule(ex)
			})
			r.mu.Unlock()
			continue
		}
		ex.failures = 0
		r.markDelivered(ex, kind)
		if kind == kindRequest {
			r.replayInto(ex)
		}
		// Look again: a completion may be waiting behind the request.
		ex.queued = false
		r.schedule(ex)
		r.mu.Unlock()
	}
}

// replayInto applies the replay-response fault: right after the request is
// delivered, the exchange gets the client's previous response instead of
// the device's. The device's own later Respond is then a duplicate.
func (r *Relay) replayInto(ex *exchange) {
	if ex.state != exOpen || ex.response.state != msgAbsent {
		return
	}
	prev, ok := r.lastResponse[ex.key.clientID]
	if !ok || prev.requestID == ex.key.requestID {
		return
	}
	if !r.fire(faultReplayResponse, kindResponse) {
		return
	}
	r.logf("relay: fault replay-response: exchange %s gets the response of %s", ex.key.requestID, prev.requestID)
	ex.response = slot{msgAccepted, prev.payload}
	r.sendResponse(ex)
}
