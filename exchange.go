// One protected exchange with the paired device (client-device-protocol.md,
// "Paired exchanges"; cryptosystem.md, "Paired exchange" and "PSK rotation"):
// seal the request, carry it through the relay, open and acknowledge the
// response, and send the completion. SIGINT and SIGTERM cancel the wait;
// the completion then goes out with a short bound so the process exits
// promptly even when the relay never acknowledges it.

package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"
)

// defaultRelayURL is the hosted relay.
const defaultRelayURL = "wss://relay.agentknock.dev"

// progressInterval is how often a wait for the device reports itself.
const progressInterval = 30 * time.Second

// relayURLFor picks the relay: AGENTKNOCK_RELAY_URL, else the one stored
// with the pairing, else the hosted relay.
func relayURLFor(stored string) (relayEndpoint, error) {
	raw := defaultRelayURL
	if stored != "" {
		raw = stored
	}
	if v := os.Getenv("AGENTKNOCK_RELAY_URL"); v != "" {
		raw = v
	}
	u, err := parseRelayURL(raw)
	if err != nil {
		return relayEndpoint{}, classify(failRelayAddress, err)
	}
	return relayEndpoint{BaseURL: u}, nil
}

// deviceCall is one paired exchange in progress.
type deviceCall struct {
	x    *pairedExchange
	rx   *relayExchange
	done bool // a completion was sent (or given up on)
}

// relayProgress turns transport events into request stages; the ones
// without a stage (a reconnection) are --verbose details. Stages only
// advance (output.setStage): a reconnection after the device received the
// request does not go back to waiting for delivery. A response is
// "received" for the user only once it passed the client's checks
// (askDevice sets that stage), so nothing says "Confirming receipt" of a
// response the client then refuses.
func relayProgress(out *output) relayOptions {
	return relayOptions{Progress: func(event string) {
		traceStep("relay: " + event)
		switch event {
		case "connected", "request acknowledged by relay":
			out.setStage(stageWaitingForDelivery)
		case "device received request":
			out.setStage(stageWaitingForResponse)
		case "response received":
			out.detail("relay: %s", event)
		default:
			out.detail("relay: %s", event)
		}
	}}
}

// pairedMethod is one method of a paired exchange, as askDevice runs it.
type pairedMethod[R checkedResponse] struct {
	request any
	// rerun, for PairingFinish and PairingRemove, is the command whose rerun
	// resends the stored request after a crash (exchange_durable.go); the
	// other methods send a new request each time.
	rerun, method string
	// check decodes and checks the response plaintext.
	check func(plaintext []byte) (R, error)
	// settle acts on a usable response, locally, and returns the
	// completion that ends the exchange. An error with a completion is the
	// outcome to report (a denial); an error without one is a local failure
	// after the answer, and the exchange ends ABORTED/CLIENT_ERROR.
	settle func(r R) (completion any, err error)
	// ahead is the relay socket a run dialed while it prepared the request
	// (relay_ahead.go); nil dials when the request is ready.
	ahead *relayAhead
}

// answeredError is a failure after the device answered: the exchange is
// over and its completion sent, unlike a failure of the call itself. local
// says the response was usable and the client's own work on it failed.
type answeredError struct {
	err   error
	local bool
}

func (e *answeredError) Error() string { return e.err.Error() }
func (e *answeredError) Unwrap() error { return e.err }

// askDevice is every paired exchange: the call, the response check, the
// local work on the answer and exactly one completion on every path once
// the device answered (the call itself aborts what it cannot finish). It
// returns the checked response and the request id (which later SSH and
// Git exchanges name as the invocation).
func askDevice[R checkedResponse](home string, p *pairingState, m pairedMethod[R], watch *signalWatch, out *output) (R, ULID, error) {
	var zero R
	var call *deviceCall
	var rec *outstandingRequest
	var plaintext []byte
	var err error
	if m.rerun != "" {
		call, rec, plaintext, err = callDeviceDurable(home, p, m.method, m.rerun, m.request, watch, out)
	} else {
		call, plaintext, err = callDevice(home, p, m.request, m.ahead, watch, out)
	}
	if err != nil {
		return zero, ULID{}, err
	}
	id := call.x.RequestID()
	// A stored request that was answered is not sent again, whatever the
	// answer; a successful settle clears it with its own write.
	forget := func() {
		if rec != nil {
			if cerr := clearOutstanding(home, rec.RequestID); cerr != nil {
				out.failure("%v", cerr)
			}
		}
	}
	r, err := m.check(plaintext)
	traceStep("response checked")
	if completion, failure := responseFailure(err, r); failure != nil {
		call.finish(completion, out)
		forget()
		return zero, id, &answeredError{err: failure}
	}
	completion, err := m.settle(r)
	if completion != nil {
		out.setStage(stageCompleting)
	}
	if completion == nil {
		if err == nil {
			err = errors.New("the client could not act on the response")
		}
		call.abort(abortClientError, "the client could not act on the response", out)
		forget()
		return zero, id, &answeredError{err, true}
	}
	call.finish(completion, out)
	traceStep("completion acknowledged")
	if err != nil {
		forget()
		return r, id, &answeredError{err: err}
	}
	return r, id, nil
}

// approvedOrDenied settles the methods whose answer is a decision
// (Invocation, SshAuthenticate, GitSign): the completion repeats it.
func approvedOrDenied(outcome responseOutcome, denial deviceDenial) (any, error) {
	if outcome == outcomeDenied {
		return newDeniedCompletion(denial), denialError(denial)
	}
	return newApprovedCompletion(), nil
}

// callDevice sends request (a method plaintext) with the pairing's keys and
// waits for the response plaintext. On every failure after the request may
// have reached the relay, it has already sent the matching ABORTED
// completion. The caller completes a successful call with finish.
func callDevice(home string, p *pairingState, request any, ahead *relayAhead, watch *signalWatch, out *output) (*deviceCall, []byte, error) {
	out.setStage(stagePreparing)
	requestID, err := newULID()
	if err != nil {
		return nil, nil, err
	}
	var rotationEnc []byte
	if p.RotationKey != "" {
		rotationEnc, _ = base64.StdEncoding.DecodeString(p.RotationKey)
	}
	keys := pairedKeys{DeviceID: p.DeviceID, DeviceKey: p.DeviceKey, ClientID: p.ClientID, PSK: p.ClientPSK}
	x, payload, err := sealProtectedRequest(keys, requestID, rotationEnc, request)
	if err != nil {
		return nil, nil, err
	}
	return exchangeWithDevice(home, p, x, payload, p.RotationKey, nil, ahead, watch, out)
}

// exchangeWithDevice carries a sealed request through the relay. With a
// durable request (exchange_durable.go) nothing is aborted on a failure the
// request may survive: a rerun resends it.
func exchangeWithDevice(home string, p *pairingState, x *pairedExchange, payload pairedRequestPayload, rotationKey string, durable *outstandingRequest, ahead *relayAhead, watch *signalWatch, out *output) (*deviceCall, []byte, error) {
	ep, err := relayURLFor(p.RelayURL)
	if err != nil {
		return nil, nil, err
	}
	ep.Token = p.ClientToken
	requestID := x.RequestID()
	body, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, err
	}
	traceStep("HPKE seal")
	call := &deviceCall{x: x}

	rx, raw, err := waitForRelay(func(ctx context.Context) (*relayExchange, json.RawMessage, error) {
		opt := relayProgress(out)
		opt.Resend = durable != nil && durable.resent
		opt.Ahead = ahead
		rx, err := openExchange(ctx, ep, deviceRoute(p.DeviceID.String(), p.ClientID.String()), p.ClientID.String(), requestID.String(), body, opt)
		if err != nil {
			return rx, nil, err
		}
		raw, err := rx.awaitResponse(ctx)
		return rx, raw, err
	}, watch, out)
	call.rx = rx
	if durable != nil && err != nil {
		return nil, nil, durable.failed(home, call, err, out)
	}
	var intr *interrupted
	if errors.As(err, &intr) {
		call.abort(abortCancelled, "interrupted by "+signalName(intr.sig), out)
		return nil, nil, err
	}
	if err != nil {
		call.abort(abortOther, "the relay exchange failed", out)
		return nil, nil, describeRelayError(err)
	}
	traceStep("relay: response handed over")
	plaintext, report, err := openPairedResponse(x, raw)
	if report != nil {
		if report.Code == reportAuthenticationFailed {
			noteKeyRefused(home, p.ClientID, out)
		}
		if durable != nil {
			call.close()
			return nil, nil, unauthenticatedReport(report.Code, report.Message, "; "+durable.rerunAdvice())
		}
		call.abort(abortOther, "unauthenticated error report", out)
		return nil, nil, unauthenticatedReport(report.Code, report.Message, "")
	}
	if err != nil {
		call.abort(abortInvalidResponse, "the response could not be authenticated", out)
		return nil, nil, classify(failResponseInvalid, fmt.Errorf("the device's response could not be authenticated (%v)", err))
	}
	// A response that opened under the current PSK confirms a pending
	// rotation (the device now holds the same PSK) and ends an earlier
	// refusal of the key.
	if rotationKey != "" || p.KeyRefusedAt != 0 {
		if err := confirmKey(home, rotationKey, out); err != nil {
			out.failure("%v", err)
		}
	}
	return call, plaintext, nil
}

// waitForRelay runs the relay work on its own goroutine so that this one
// can watch signals and report progress every progressInterval. The
// exchange, when there is one, is handed back only after that goroutine has
// finished with it (relayExchange is not for concurrent use). A signal
// comes back as *interrupted.
func waitForRelay(work func(ctx context.Context) (*relayExchange, json.RawMessage, error), watch *signalWatch, out *output) (*relayExchange, json.RawMessage, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		rx  *relayExchange
		raw json.RawMessage
		err error
	}
	done := make(chan result, 1)
	go func() {
		rx, raw, err := work(ctx)
		done <- result{rx, raw, err}
	}()
	tick := time.NewTicker(progressInterval)
	defer tick.Stop()
	for {
		select {
		case r := <-done:
			return r.rx, r.raw, r.err
		case <-tick.C:
			out.heartbeat()
		case sig := <-watch.ch:
			cancel()
			r := <-done
			return r.rx, nil, &interrupted{sig: toSignal(sig)}
		}
	}
}

// close drops the exchange without a completion.
func (c *deviceCall) close() {
	if c.rx != nil {
		c.done = true
		c.rx.close()
	}
}

// finish sends the completion for an authenticated response.
func (c *deviceCall) finish(completion any, out *output) {
	if c.done || c.rx == nil {
		return
	}
	c.done = true
	defer c.rx.close()
	pc, err := sealProtectedCompletion(c.x, completion)
	if err == nil {
		var body []byte
		if body, err = json.Marshal(pc); err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = c.rx.complete(ctx, body)
			cancel()
		}
	}
	if err != nil {
		out.detail("the completion was not confirmed by the relay: %v", err)
		return
	}
	out.setStage(stageCompleted)
}

// abort sends an ABORTED completion within the short bound: the context
// is already done, so the transport gives it only its completion bound.
func (c *deviceCall) abort(reason, message string, out *output) {
	if c.done || c.rx == nil {
		return
	}
	c.done = true
	defer c.rx.close()
	pc, err := sealProtectedCompletion(c.x, newAbortedCompletion(reason, message))
	if err != nil {
		return
	}
	body, err := json.Marshal(pc)
	if err != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.rx.complete(ctx, body); err != nil {
		out.detail("the aborted completion was not confirmed by the relay: %v", err)
	}
}

// describeRelayError words transport failures for the user.
func describeRelayError(err error) error {
	switch {
	case errors.Is(err, errClientInactive):
		return fmt.Errorf("the relay reports that this paired client is inactive (the pairing was removed or suspended on the device): %w", err)
	case errors.Is(err, errRelayUnavailable):
		return fmt.Errorf("the relay could not be reached: %w", err)
	}
	return fmt.Errorf("the relay exchange failed: %w", err)
}

// activePairing reads the pairing for a paired operation and rotates its
// PSK when it is older than pskRotationInterval.
func activePairing(home string, out *output) (*pairingState, error) {
	p, err := readPairingFile(home)
	return checkActivePairing(home, p, err, out)
}

// checkActivePairing is activePairing for a pairing file already read.
func checkActivePairing(home string, p *pairingState, err error, out *output) (*pairingState, error) {
	if errors.Is(err, errNoPairing) {
		//lint:ignore ST1005 "Agentknock" is a name, and the line starts the report
		return nil, classify(failNotPaired, errors.New("Agentknock isn't paired with a device"))
	}
	if err != nil {
		return nil, err
	}
	if p.Pending {
		//lint:ignore ST1005 the line starts the report, as the reference's does
		return nil, classify(failPairingPending, errors.New("Pairing is waiting for confirmation on the device"))
	}
	if p.RotationKey == "" && time.Since(time.Unix(int64(p.RotatedAt), 0)) > pskRotationInterval {
		if rotated, err := rotatePSK(home, p.ClientID, out); err != nil {
			return nil, err
		} else if rotated != nil {
			out.detail("rotating the pairing key")
			p = rotated
		}
	}
	return p, nil
}

// pairingAhead reads the pairing file and dials its relay route in the
// background while a run builds and seals its request (relay_ahead.go);
// nothing is sent before the request is ready. Its errors are the ones
// activePairing would report, reported where it would have been called.
type pairingAhead struct {
	done  chan struct{}
	p     *pairingState
	err   error
	relay *relayAhead
}

func readPairingAhead(home string) *pairingAhead {
	a := &pairingAhead{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.p, a.err = readPairingFile(home)
		if a.err != nil || a.p.Pending {
			return
		}
		// A relay URL that does not parse is reported by the exchange.
		if ep, err := relayURLFor(a.p.RelayURL); err == nil {
			ep.Token = a.p.ClientToken
			a.relay, _ = dialRelayAhead(ep, deviceRoute(a.p.DeviceID.String(), a.p.ClientID.String()), a.p.ClientID.String(), relayOptions{})
		}
	}()
	return a
}

// pairing is activePairing's answer for the file read ahead.
func (a *pairingAhead) pairing(home string, out *output) (*pairingState, error) {
	<-a.done
	return checkActivePairing(home, a.p, a.err, out)
}

// close ends a dial that no exchange took.
func (a *pairingAhead) close() {
	<-a.done
	a.relay.close()
}

// rotatePSK derives and stores the next PSK and its rotation_key under the
// lock; it is sent with every request until a response confirms it.
func rotatePSK(home string, clientID ULID, out *output) (*pairingState, error) {
	s, err := lockStateDirFor(home, out)
	if err != nil {
		return nil, err
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil {
		return nil, err
	}
	// Another process may have rotated or replaced the pairing meanwhile.
	if p.Pending || p.ClientID != clientID || p.RotationKey != "" || time.Since(time.Unix(int64(p.RotatedAt), 0)) <= pskRotationInterval {
		return p, nil
	}
	r, err := rotatePairingPSK(pairedKeys{DeviceID: p.DeviceID, DeviceKey: p.DeviceKey, ClientID: p.ClientID, PSK: p.ClientPSK})
	if err != nil {
		return nil, err
	}
	p.ClientPSK = r.NewPSK
	p.RotationKey = base64.StdEncoding.EncodeToString(r.Enc)
	p.RotatedAt = uint64(time.Now().Unix())
	if err := s.writePairing(p); err != nil {
		return nil, err
	}
	return p, nil
}

// confirmKey records an authenticated response: rotation_key is cleared if
// it is still the one just confirmed, and key_refused_at in any case.
func confirmKey(home, rotationKey string, out *output) error {
	s, err := lockStateDirFor(home, out)
	if err != nil {
		return err
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil || (p.RotationKey != rotationKey && p.KeyRefusedAt == 0) {
		return err
	}
	if p.RotationKey == rotationKey {
		p.RotationKey = ""
	}
	p.KeyRefusedAt = 0
	return s.writePairing(p)
}

// reportAuthenticationFailed is the report a device sends for a request it
// cannot authenticate (client-device-protocol.md, "Unauthenticated error
// reports"): with this client's keys, because another copy of this home
// rotated the PSK, or because the pairing was replaced on the device.
const reportAuthenticationFailed = "AUTHENTICATION_FAILED"

// unauthenticatedReport words an error report that did not come with the
// device's authentication, classified by its code.
func unauthenticatedReport(code, message, advice string) error {
	err := fmt.Errorf("the relay delivered an unauthenticated error report (%s: %s); it may come from the device or be forged by the relay%s", printable(code), printable(message), advice)
	switch code {
	case reportAuthenticationFailed:
		return classify(failKeyRefused, fmt.Errorf("%w. If it is the device's, the device no longer accepts this client's key: another copy of this Agentknock home may have rotated it, or the pairing was replaced on the device", err))
	case "UNSUPPORTED_PROTOCOL_VERSION":
		return classify(failProtocolVersion, err)
	}
	return classify(failUnauthenticated, err)
}

// noteKeyRefused records in the pairing that the device (or, since the
// report is unauthenticated, possibly the relay) refused this client's
// key, so that `pairing status` says so and what to do. The keys and a
// pending rotation stay as they are: a forged report must not break a
// pairing that works, and the next authenticated response clears the
// note (confirmKey).
func noteKeyRefused(home string, clientID ULID, out *output) {
	s, err := lockStateDirFor(home, out)
	if err != nil {
		out.detail("cannot note the refused key: %v", err)
		return
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil || p.ClientID != clientID {
		return
	}
	p.KeyRefusedAt = uint64(time.Now().Unix())
	if err := s.writePairing(p); err != nil {
		out.detail("cannot note the refused key: %v", err)
	}
}

// checkedResponse is any method's checked response; nil-safe.
type checkedResponse interface {
	deviceOutcome() (responseOutcome, deviceError)
}

func (r *invocationResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}

func (r *resultResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}

func (r *secretListResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}

// responseFailure is what every method shares after its response check: a
// failed check or an authenticated device error ends the exchange with the
// ABORTED completion it calls for (INVALID_RESPONSE or CLIENT_ERROR). A nil
// failure means the response can be used.
func responseFailure(err error, r checkedResponse) (completion resultCompletion, failure error) {
	outcome, devErr := r.deviceOutcome()
	switch {
	case errors.Is(err, errInvalidResponse):
		return newAbortedCompletion(abortInvalidResponse, "the response failed the client's checks"),
			classify(failResponseInvalid, fmt.Errorf("the device's response is invalid (%v)", err))
	case err != nil:
		return newAbortedCompletion(abortClientError, "the client could not check the response"), err
	case outcome == outcomeDeviceError:
		return newDeviceErrorCompletion(devErr),
			classify(failDeviceError, fmt.Errorf("the device reported an error: %s: %s", printable(devErr.Code), printable(devErr.Message)))
	}
	return resultCompletion{}, nil
}

func (r *signatureResponse) deviceOutcome() (responseOutcome, deviceError) {
	if r == nil {
		return 0, deviceError{}
	}
	return r.Outcome, r.Error
}
