// Initial pairing, device side (cryptosystem §7, client-device protocol
// "Initial pairing" and "Pairing activation"): the clear request/response,
// the base-mode completion, the SAS decision through the Approver, and the
// PairingFinish activation. One pending attempt at a time.
package device

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"strings"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

// expirePairings ends pending attempts past their deadline (pairingTimeout,
// or activationTimeout after a confirmation). The pending PSK is kept,
// because it can still only authenticate a PairingFinish, which then gets
// REJECTED.
func expirePairings(st *stateTx, now time.Time) {
	st.eachPairing(func(p *pairingAttempt) {
		if p.pending() && now.After(p.deadline()) {
			p.Status = pairRejected
			p.DecidedAt = &now
		}
	})
}

func (d *Device) handlePairingRequest(m relay.Message) {
	now := d.now()
	if m.AddressID != d.id.addressID {
		d.publishClear(m.ClientID, m.RequestID, clearInvalidRequest, "unknown pairing address")
		return
	}
	cid, err := parseULID(m.ClientID)
	if err != nil || m.RequestID != m.ClientID || cid.isZero() {
		d.publishClear(m.ClientID, m.RequestID, clearInvalidRequest, "a pairing request id must be the new canonical client id")
		return
	}
	var env pairingRequestEnv
	if err := json.Unmarshal(m.Payload, &env); err != nil {
		d.publishClear(m.ClientID, m.RequestID, clearInvalidRequest, "malformed pairing request")
		return
	}

	var retained, response json.RawMessage
	var code, msg string
	err = transact(d.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		if p := st.pairing(m.ClientID); p != nil {
			retained = p.Response // the fixed response; never a second contribution
			return nil
		}
		switch {
		case env.Version == nil || *env.Version != protocolVersion:
			code, msg = clearUnsupportedVersion, "The protocol version is not supported."
			return nil
		case !fresh(cid, now):
			code, msg = clearStaleRequestID, "the client id is outside the device's time window"
			return nil
		case st.client(m.ClientID) != nil:
			code, msg = clearInvalidRequest, "client id already in use"
			return nil
		}
		commitment, err := decodeB64Len(env.Commitment, "commitment", 32)
		if err != nil {
			code, msg = clearInvalidRequest, err.Error()
			return nil
		}
		expirePairings(st, now)
		busy := false
		st.eachPairing(func(p *pairingAttempt) { busy = busy || p.pending() })
		if busy {
			code, msg = clearPairingBusy, "another pairing is in progress on this device"
			return nil
		}
		dr := random32()
		response, err = json.Marshal(pairingResponseEnv{DeviceID: d.id.deviceID.String(), DeviceKey: d.id.key.pub, DeviceRandom: dr})
		if err != nil {
			return err
		}
		st.addPairing(&pairingAttempt{
			ClientID: m.ClientID, Status: pairAwaitCompletion, Commitment: commitment,
			DeviceRandom: dr, Response: response, CreatedAt: now,
		})
		return nil
	})
	switch {
	case err != nil:
		d.logf("pairing request %s: %v", m.ClientID, err)
	case retained != nil:
		d.logf("pairing request %s: redelivered; answering from retained state", m.ClientID)
		d.publish(m.ClientID, m.RequestID, retained)
	case code != "":
		d.publishClear(m.ClientID, m.RequestID, code, msg)
	default:
		d.logf("pairing request %s: accepted; waiting for the completion", m.ClientID)
		d.publish(m.ClientID, m.RequestID, response)
	}
}

// handlePairingCompletion accepts the base-mode completion; the caller then
// asks for the SAS decision.
func (d *Device) handlePairingCompletion(m relay.Message) bool {
	cid, err := parseULID(m.ClientID)
	if err != nil {
		d.logf("pairing completion: bad client id")
		return false
	}
	var env pairingCompletionEnv
	if err := json.Unmarshal(m.Payload, &env); err != nil {
		d.logf("pairing completion %s: malformed", m.ClientID)
		return false
	}
	enc, err1 := decodeB64Len(env.Key, "key", 32)
	secretCT, err2 := decodeB64Len(env.Secret, "secret", -1)
	appCT, err3 := decodeB64Len(env.Ciphertext, "ciphertext", -1)
	if err1 != nil || err2 != nil || err3 != nil {
		d.logf("pairing completion %s: malformed envelope", m.ClientID)
		return false
	}
	now := d.now()
	accepted := false
	err = transact(d.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		p := st.pairing(m.ClientID)
		if p == nil {
			d.logf("pairing completion %s: no such pairing attempt", m.ClientID)
			return nil
		}
		expirePairings(st, now)
		if p.Status != pairAwaitCompletion {
			d.logf("pairing completion %s: not awaiting a completion (%s); ignored", m.ClientID, p.Status)
			return nil
		}
		opened, err := d.id.key.openPairingCompletion(d.id.deviceID, cid, p.Commitment, enc, secretCT, appCT)
		if err != nil {
			d.logf("pairing completion %s: rejected: %v", m.ClientID, err)
			return nil
		}
		meta, err := parsePairingMetadata(opened.Metadata)
		if err != nil {
			d.logf("pairing completion %s: rejected: metadata: %v", m.ClientID, err)
			return nil
		}
		p.Status = pairAwaitSAS
		p.PSK = opened.PSK
		p.SAS = sasDigits(p.DeviceRandom, opened.ClientSecret, d.id.deviceID, cid, d.id.key.pub)
		p.Metadata = meta
		accepted = true
		return nil
	})
	if err != nil {
		d.logf("pairing completion %s: %v", m.ClientID, err)
		return false
	}
	if accepted {
		d.logf("pairing %s: completion accepted; waiting for SAS confirmation", m.ClientID)
	}
	return accepted
}

// pairWaitChan returns the channel closed when clientID's SAS decision is
// stored.
func (d *Device) pairWaitChan(clientID string) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	ch := d.pairWait[clientID]
	if ch == nil {
		ch = make(chan struct{})
		d.pairWait[clientID] = ch
	}
	return ch
}

// decidePairing asks the Approver to confirm the SAS and stores the answer.
// The person types the digits the client shows; only an exact match of all
// twelve digits accepts, and one mismatch rejects the attempt.
func (d *Device) decidePairing(clientID string) {
	var p pairingAttempt
	found := false
	err := transact(d.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		if a := st.pairing(clientID); a != nil && a.Status == pairAwaitSAS {
			p, found = *a, true
		}
		return nil
	})
	if err != nil || !found {
		return
	}
	details := &PairingDetails{SAS: p.SAS}
	if m := p.Metadata; m != nil {
		details.Hostname, details.MachineID, details.OSVersion = m.Hostname, m.MachineID, m.OSVersion
		if m.Platform != nil {
			details.Platform = *m.Platform
		}
		if m.Architecture != nil {
			details.Architecture = *m.Architecture
		}
		if m.AppInfo != nil {
			details.AppName, details.AppVersion = m.AppInfo.Name, m.AppInfo.Version
		}
	}
	a := &Approval{ID: newApprovalID(), Kind: "pairing", ClientID: clientID, RequestID: clientID,
		Received: d.now(), Pairing: details, Stored: d.pairWaitChan(clientID)}
	// The decision ends at the attempt's deadline, on Close, or when the
	// attempt is revoked (cancelClient).
	ctx, cancel := context.WithDeadline(d.ctx, p.CreatedAt.Add(pairingTimeout))
	d.mu.Lock()
	if d.deciding[clientID] != nil {
		d.mu.Unlock()
		cancel()
		return
	}
	d.deciding[clientID] = cancel
	d.mu.Unlock()
	dec := d.approver.Decide(ctx, a)
	expired := ctx.Err() != nil
	d.mu.Lock()
	delete(d.deciding, clientID)
	d.mu.Unlock()
	cancel()
	if d.ctx.Err() != nil {
		return // closing: ask again after the next Open
	}
	ok := dec.Approve && !expired && sasMatch(dec.SAS, p.SAS)
	now := d.now()
	err = transact(d.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		a := st.pairing(clientID)
		if a == nil || a.Status != pairAwaitSAS {
			ok = false
			return nil
		}
		if ok {
			a.Status = pairAwaitActivation
		} else {
			a.Status = pairRejected
		}
		a.DecidedAt = &now
		if ok {
			st.due(a.deadline(), dueTimeout, clientID)
		}
		return nil
	})
	if err != nil {
		d.logf("pairing %s: %v", clientID, err)
	}
	switch {
	case ok:
		d.logf("pairing %s: SAS confirmed; waiting for activation", clientID)
	case dec.Approve && !expired:
		d.logf("pairing %s: rejected: the digits entered do not match", clientID)
	default:
		d.logf("pairing %s: rejected", clientID)
	}
	d.mu.Lock()
	ch := d.pairWait[clientID]
	delete(d.pairWait, clientID)
	d.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// sasMatch compares the digits a person typed with the device SAS in
// constant time; spaces are ignored, anything else must match exactly.
func sasMatch(typed, sas string) bool {
	a := []byte(strings.ReplaceAll(typed, " ", ""))
	b := []byte(strings.ReplaceAll(sas, " ", ""))
	if len(b) != 12 {
		return false
	}
	return subtle.ConstantTimeCompare(a, b) == 1
}

// pairingFinish answers PairingFinish on a pending binding. While the SAS
// decision is open it waits for it; ACCEPTED is fixed in the same
// transition that activates the binding, and the relay learns the client is
// active before the response is released.
func (d *Device) pairingFinish(r *request) methodResult {
	for {
		// Take the wait channel before reading the status: a decision
		// stored after the read closes this very channel.
		ch := d.pairWaitChan(r.clientID)
		var status string
		err := transact(d.dir, func(t *txn) error {
			st, err := t.state()
			if err != nil {
				return err
			}
			if p := st.pairing(r.clientID); p != nil {
				expirePairings(st, d.now())
				status = p.Status
			}
			return nil
		})
		if err != nil {
			return errorResult(errInvalidState, "device state unavailable")
		}
		switch status {
		case pairAwaitSAS:
			select {
			case <-ch:
				continue
			case <-r.ctx.Done():
				if d.ctx.Err() != nil {
					return methodResult{abandon: true}
				}
				return errorResult(errInvalidState, "the pairing was cancelled")
			}
		case pairAwaitActivation:
			return methodResult{
				body: map[string]string{"result": "ACCEPTED"},
				apply: func(t *txn, st *stateTx, now time.Time) error {
					p := st.pairing(r.clientID)
					if p == nil || p.Status != pairAwaitActivation || subtle.ConstantTimeCompare(p.PSK, r.psk) != 1 {
						return errStateChanged
					}
					st.putClient(&binding{ClientID: r.clientID, State: bindActive, PSK: p.PSK,
						Metadata: p.Metadata, PairedAt: now})
					p.Status = pairActive
					p.PSK = nil
					return nil
				},
				before: func() {
					d.logf("pairing %s: activated", r.clientID)
					if pub := d.publisher(); pub != nil {
						if err := pub.SetClientState(r.clientID, relay.ClientActive); err != nil {
							d.logf("pairing %s: relay did not take the active state: %v", r.clientID, err)
						}
					}
				},
			}
		default:
			return methodResult{body: map[string]string{"result": "REJECTED"}}
		}
	}
}
