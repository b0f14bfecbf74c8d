// Paired exchanges, device side (cryptosystem §5.6, §8, §9.2; client-device
// protocol "Paired operations", "Authenticated errors", "Unprotected error
// reports"): retained-state lookup before anything else, freshness of new
// request ids, PSK selection and rotation adoption in the accepting
// transition, method dispatch, the one fixed response per request, and the
// completion as record 1.
package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

// request is an accepted, opened paired request handed to a method.
type request struct {
	ctx       context.Context // cancelled by an ABORTED completion, revocation or Close
	clientID  string
	requestID string
	method    string
	plaintext []byte
	pending   bool        // authenticated by a pending binding (activation only)
	client    *ClientInfo // nil for a pending binding
	psk       []byte      // the generation that authenticated it
	received  time.Time
	// held is the transaction that accepted the request, still open: a
	// request answered without waiting for a person is accepted and
	// answered in one commit (see holdAcceptance).
	held *txn
	// report shows and records an immediate decision; it runs once, after
	// the held transaction is committed or ended (ImmediateReporter).
	report func()
	// decided and decision: the Approver's answer, for an
	// UndeliveredRecorder when it cannot be delivered.
	decided  *Approval
	decision Decision
}

// reportDecision runs the request's pending report, outside every
// transaction.
func (r *request) reportDecision() {
	if f := r.report; f != nil && r.held == nil {
		r.report = nil
		f()
	}
}

// methodResult is a method's terminal answer. body is the response
// plaintext; apply runs in the transaction that fixes the response (so the
// state change and the response are one transition) and may veto it with
// errStateChanged, but must change nothing before it does (that transaction
// may also carry the request's acceptance, which stands); before runs after
// that transaction and before the response is released; after runs once it
// is released. abandon leaves the exchange unanswered (the device is
// closing).
type methodResult struct {
	body    any
	apply   func(t *txn, st *stateTx, now time.Time) error
	before  func()
	after   func()
	abandon bool
	outcome string // for the log
}

var errStateChanged = errors.New("state changed while the request was pending")

func errorResult(code, msg string) methodResult {
	return methodResult{body: errorBody{Error: code, Message: msg}, outcome: code}
}

func denialResult(reason, msg string) methodResult {
	return methodResult{body: denied(reason, msg), outcome: "DENIED " + reason}
}

// knownMethods are recorded with the exchange at acceptance so that a
// completion can be interpreted; anything else is stored as "".
var knownMethods = map[string]bool{
	"PairingFinish": true, "Invocation": true, "GitSign": true, "SshAuthenticate": true,
	"SecretList": true, "SecretUpload": true, "PairingRemove": true,
}

func (d *Device) handlePairedRequest(m relay.Message, lx *liveExchange) {
	cid, err1 := parseULID(m.ClientID)
	rid, err2 := parseULID(m.RequestID)
	if err1 != nil || err2 != nil || rid.isZero() || rid == cid {
		lx.acceptDone()
		d.publishClear(m.ClientID, m.RequestID, clearInvalidRequest, "malformed client or request id")
		return
	}
	key := exchangeKey(m.ClientID, m.RequestID)
	now := d.now()

	var (
		retained   *exchange
		code, msg  string
		req        *request
		rc         *requestContext
		enc        []byte
		rotated    bool
		headErr    error
		headMethod string
	)
	accept := func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		if ex := st.exchange(key); ex != nil {
			c := *ex
			retained = &c
			return nil
		}
		// A new slot: everything below must pass before anything is stored.
		var env pairedRequestEnv
		if err := json.Unmarshal(m.Payload, &env); err != nil {
			code, msg = clearInvalidRequest, "malformed request envelope"
			return nil
		}
		if env.Version == nil || *env.Version != protocolVersion {
			code, msg = clearUnsupportedVersion, "The protocol version is not supported."
			return nil
		}
		if !fresh(rid, now) {
			// No protected answer: state for an id this old may already be
			// gone, and a response must never be generated twice.
			code, msg = clearStaleRequestID, "the request id is outside the device's time window"
			return nil
		}
		enc, err = decodeB64Len(env.Key, "key", 32)
		if err != nil {
			code, msg = clearInvalidRequest, err.Error()
			return nil
		}
		ct, err := decodeB64Len(env.Ciphertext, "ciphertext", -1)
		if err != nil {
			code, msg = clearInvalidRequest, err.Error()
			return nil
		}
		var rot []byte
		if env.RotationKey != nil {
			// Validated only if rotation fallback is reached (§11).
			if rot, err = decodeB64(*env.RotationKey); err != nil {
				rot = []byte{}
			}
		}
		prune(st, now, pruneBatch)

		var choice pskChoice
		var client *ClientInfo
		pending := false
		b := st.client(m.ClientID)
		p := st.pairing(m.ClientID)
		switch {
		case b != nil && b.State == bindActive:
			choice = pskChoice{Current: b.PSK, AllowRotation: true, RotationEnc: rot}
			if b.PreviousPSK != nil && now.Before(b.PreviousUntil) {
				choice.Previous = b.PreviousPSK
			}
			client = b.info()
		case b == nil && p != nil && p.PSK != nil && p.Status != pairAwaitCompletion:
			// A pending binding authenticates only its activation and
			// ignores rotation_key (§9.2).
			choice = pskChoice{Current: p.PSK}
			pending = true
		default:
			code, msg = clearNotPaired, "this client is not paired with the device"
			return nil
		}
		opened, gen, psk, err := d.id.key.selectAndOpen(d.id.deviceID, cid, rid, choice, enc, ct)
		if err != nil {
			code, msg = clearAuthFailed, "the request does not authenticate"
			return nil
		}
		headMethod, headErr = parseHead(opened.Plaintext)
		ex := &exchange{ClientID: m.ClientID, RequestID: m.RequestID, Status: exProcessing,
			PSK: psk, Enc: enc, Ciphertext: ct, AcceptedAt: now}
		if knownMethods[headMethod] {
			ex.Method = headMethod
		}
		if gen == genRotated {
			// Adopted in the transition that accepts the request, before any
			// response exists (§9.2 step 6).
			b.PreviousPSK, b.PreviousUntil = b.PSK, now.Add(pskOverlap)
			b.PSK = psk
			b.RotatedAt = &now
			st.rotated(b)
			rotated = true
			client = b.info()
		}
		st.addExchange(ex)
		rc = opened
		req = &request{ctx: lx.ctx, clientID: m.ClientID, requestID: m.RequestID, method: headMethod,
			plaintext: opened.Plaintext, pending: pending, client: client, psk: psk, received: now}
		return nil
	}
	t, err := beginTxn(d.dir)
	if err == nil {
		if err = accept(t); err != nil {
			t.end()
		} else if req != nil && !req.pending && t.st.err == nil {
			req.held = t
		} else {
			err = t.commit()
		}
	}
	lx.acceptDone()
	switch {
	case err != nil:
		d.logf("request %s from client %s: %v", m.RequestID, m.ClientID, err)
		return
	case retained != nil:
		d.redeliver(retained)
		return
	case code != "":
		d.publishClear(m.ClientID, m.RequestID, code, msg)
		return
	}
	if rotated {
		d.logf("client %s: PSK rotated", m.ClientID)
	}
	d.logf("request %s from client %s: %s accepted", m.RequestID, m.ClientID, printable(headMethod))

	var res methodResult
	switch {
	case headErr != nil:
		res = errorResult(errInvalidRequest, headErr.Error())
	case req.pending && req.method != "PairingFinish":
		res = errorResult(errInvalidState, "the pairing is not active; only PairingFinish is allowed")
	default:
		res = d.dispatch(req)
	}
	if res.abandon {
		if err := d.release(req); err != nil {
			d.logf("request %s from client %s: %v", m.RequestID, m.ClientID, err)
		}
		req.reportDecision()
		d.logf("request %s from client %s: left unanswered (device closing)", m.RequestID, m.ClientID)
		return
	}
	d.finish(req, rc, enc, res)
}

func (d *Device) dispatch(r *request) methodResult {
	switch r.method {
	case "PairingFinish":
		if r.pending {
			return d.pairingFinish(r)
		}
		// Activation already happened (a client retrying after a lost
		// response); the answer does not change.
		return methodResult{body: map[string]string{"result": "ACCEPTED"}, outcome: "ACCEPTED"}
	case "Invocation":
		return d.invocation(r)
	case "GitSign":
		return d.gitSign(r)
	case "SshAuthenticate":
		return d.sshAuthenticate(r)
	case "SecretList":
		return d.secretList(r)
	case "SecretUpload":
		return d.secretUpload(r)
	case "PairingRemove":
		return d.pairingRemove(r)
	}
	return errorResult(errUnsupportedMethod, fmt.Sprintf("method %q is not supported", printable(r.method)))
}

// transactFor runs fn in the request's held acceptance, or in a
// transaction of its own. fn must change nothing before it fails: in the
// held transaction a failure does not undo what came before it.
func (d *Device) transactFor(r *request, fn func(t *txn) error) error {
	if r.held != nil {
		return fn(r.held)
	}
	return transact(d.dir, fn)
}

// release commits a held acceptance, before the request waits for a person
// (a device that restarts meanwhile then knows the request was accepted).
func (d *Device) release(r *request) error {
	t := r.held
	if t == nil {
		return nil
	}
	r.held = nil
	return t.commit()
}

// finish seals the one response for the request, fixes it (with the
// method's state change) in one transition, and only then releases it.
func (d *Device) finish(r *request, rc *requestContext, enc []byte, res methodResult) {
	defer func() {
		if r.held != nil { // neither response could be fixed
			r.held.end()
			r.held = nil
		}
		r.reportDecision()
	}()
	key := exchangeKey(r.clientID, r.requestID)
	seal := func(body any) (json.RawMessage, error) {
		pt, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rr := random32()
		ct, err := sealResponse(rc.ResponseSecret, enc, rr, pt)
		if err != nil {
			return nil, err
		}
		return json.Marshal(pairedResponseEnv{Nonce: rr, Ciphertext: ct})
	}
	fixIn := func(t *txn, payload json.RawMessage, apply func(*txn, *stateTx, time.Time) error) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		ex := st.exchange(key)
		if ex == nil || ex.Status != exProcessing {
			return errStateChanged
		}
		if apply != nil {
			if err := apply(t, st, d.now()); err != nil {
				return err
			}
		}
		ex.Status = exResponded
		ex.Response = payload
		if ex.Completion != "" {
			ex.PSK, ex.Enc, ex.Ciphertext = nil, nil, nil
		}
		return nil
	}
	fix := func(payload json.RawMessage, apply func(*txn, *stateTx, time.Time) error) error {
		if r.held == nil {
			return transact(d.dir, func(t *txn) error { return fixIn(t, payload, apply) })
		}
		if err := fixIn(r.held, payload, apply); err != nil {
			return err // the held acceptance stands, for the error response
		}
		t := r.held
		r.held = nil
		return t.commit()
	}
	payload, err := seal(res.body)
	if n := relay.ResponseFrameSize(r.clientID, r.requestID, payload); err == nil && n > relay.MaxFrameSize {
		// The relay would refuse it and the client would wait forever: an
		// authenticated error that fits takes its place, and the method's
		// state change is not applied.
		d.logf("request %s from client %s: the response takes %d bytes, over the relay's %d-byte frame", r.requestID, r.clientID, n, relay.MaxFrameSize)
		res = errorResult(errInvalidRequest, fmt.Sprintf("the response would take %d bytes, but one relay frame holds at most %d KiB; request fewer or smaller secrets", n, relay.MaxFrameSize>>10))
		payload, err = seal(res.body)
	}
	if err == nil {
		err = fix(payload, res.apply)
	}
	if err != nil {
		// The vetoed or failed response was never stored or released, so it
		// does not count as the slot's response; an error replaces it.
		d.logf("request %s from client %s: %v", r.requestID, r.clientID, err)
		res = errorResult(errInvalidState, "the request can no longer be completed")
		if payload, err = seal(res.body); err == nil {
			err = fix(payload, nil)
		}
		if err != nil {
			// Never silence: the client is told, though the answer could
			// not be stored (a repeat then gets "restarted before answering").
			d.logf("request %s from client %s: cannot store a response (%v); sending the error unstored", r.requestID, r.clientID, err)
		}
		if ur, ok := d.approver.(UndeliveredRecorder); ok && r.decided != nil {
			ur.Undelivered(r.decided, r.decision, "the device could not store its answer, so the client was told the request cannot be completed")
		}
	}
	// The state is committed: an immediate decision is shown and recorded
	// now, before its answer leaves, while other requests go on.
	r.reportDecision()
	if res.before != nil {
		res.before()
	}
	outcome := res.outcome
	if outcome == "" {
		outcome = "answered"
	}
	d.logf("request %s from client %s: %s %s", r.requestID, r.clientID, printable(r.method), outcome)
	d.publish(r.clientID, r.requestID, payload)
	if res.after != nil {
		res.after()
	}
}

// redeliver answers a repeated request from retained state: the exact
// response bytes, never a new seal or decision. A request accepted by an
// earlier run that stopped before answering gets an authenticated error.
func (d *Device) redeliver(ex *exchange) {
	if ex.Status == exResponded {
		d.logf("request %s from client %s: redelivered; answering from retained state", ex.RequestID, ex.ClientID)
		d.publish(ex.ClientID, ex.RequestID, ex.Response)
		return
	}
	cid, _ := parseULID(ex.ClientID)
	rid, _ := parseULID(ex.RequestID)
	rc, err := d.id.key.openRequest(d.id.deviceID, cid, rid, ex.PSK, ex.Enc, ex.Ciphertext)
	if err != nil {
		d.logf("request %s from client %s: retained request no longer opens: %v", ex.RequestID, ex.ClientID, err)
		return
	}
	r := &request{clientID: ex.ClientID, requestID: ex.RequestID, method: ex.Method}
	d.finish(r, rc, ex.Enc, errorResult(errInvalidState, "the device restarted before answering; send a new request"))
}

func (d *Device) handlePairedCompletion(m relay.Message, lx *liveExchange) {
	cid, err1 := parseULID(m.ClientID)
	rid, err2 := parseULID(m.RequestID)
	if err1 != nil || err2 != nil {
		d.logf("completion with malformed ids dropped")
		return
	}
	var env pairedCompletionEnv
	if err := json.Unmarshal(m.Payload, &env); err != nil {
		d.logf("completion %s from client %s: malformed", m.RequestID, m.ClientID)
		return
	}
	ct, err := decodeB64Len(env.Ciphertext, "ciphertext", -1)
	if err != nil {
		d.logf("completion %s from client %s: malformed", m.RequestID, m.ClientID)
		return
	}
	key := exchangeKey(m.ClientID, m.RequestID)
	var result, reason, method string
	accepted := false
	err = transact(d.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		ex := st.exchange(key)
		switch {
		case ex == nil:
			d.logf("completion %s from client %s: no accepted request; dropped", m.RequestID, m.ClientID)
			return nil
		case ex.Completion != "" || ex.PSK == nil:
			d.logf("completion %s from client %s: already accepted; ignored", m.RequestID, m.ClientID)
			return nil
		}
		pt, err := d.id.key.openCompletion(d.id.deviceID, cid, rid, ex.PSK, ex.Enc, ex.Ciphertext, ct)
		if err != nil {
			d.logf("completion %s from client %s: does not authenticate; dropped", m.RequestID, m.ClientID)
			return nil
		}
		var body completionBody
		if json.Unmarshal(pt, &body) == nil && body.Result != nil {
			result = *body.Result
			reason = body.Reason
		}
		ex.Completion = "received"
		if result != "" {
			ex.Completion = result
		}
		if ex.Status == exResponded {
			ex.PSK, ex.Enc, ex.Ciphertext = nil, nil, nil
		}
		if ex.Method == "Invocation" && result != "APPROVED" {
			// The client did not take the secrets (denied, aborted or an
			// invalid response), so nothing may sign for this invocation.
			st.deleteInvocation(m.RequestID)
		}
		method = ex.Method
		accepted = true
		return nil
	})
	if err != nil {
		d.logf("completion %s from client %s: %v", m.RequestID, m.ClientID, err)
		return
	}
	if !accepted {
		return
	}
	if reason != "" {
		result += "/" + reason
	}
	d.logf("completion %s from client %s: %s %s", m.RequestID, m.ClientID, printable(method), printable(result))
	if strings.HasPrefix(result, "ABORTED") && lx != nil {
		lx.cancel() // a decision still open is moot
	}
	if method == "PairingRemove" {
		d.releaseRemoved(m.ClientID)
	}
}

// printable keeps client-chosen text from forging log lines.
func printable(s string) string {
	const max = 64
	out := make([]rune, 0, len(s))
	for _, c := range s {
		if c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0) {
			c = '?'
		}
		out = append(out, c)
		if len(out) == max {
			out = append(out, '…')
			break
		}
	}
	return string(out)
}
