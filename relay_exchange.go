// relay_exchange.go: the client's exchange state machine (Agentknock v1
// client-relay-protocol.md, "Reconnection and recovery" and "Exchange
// transitions" in client-relay-protocol.md): drive resends the request until
// acked and resumes afterwards, spends the consecutive-failure budget with
// backoff, and applies ack, receipt, message, state, inactive and error
// frames (handle, reconcile).

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/coder/websocket"
)

func (x *relayExchange) reached(goal relayGoal) bool {
	switch goal {
	case goalRequestAcked:
		return x.requestAcked
	case goalResponse:
		return x.response != nil
	default:
		return x.completionAcked
	}
}

// drive runs the recovery table of client-relay-protocol.md until goal holds:
// no ack -> resend the fixed request; acked -> resume on every new socket.
func (x *relayExchange) drive(ctx context.Context, goal relayGoal) error {
	for !x.reached(goal) {
		if x.closed {
			return errExchangeClosed
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if x.conn == nil {
			if err := x.connect(ctx); err != nil {
				return err
			}
		}
		if err := x.sendPending(ctx, goal); err != nil {
			if err := x.connectionFailed(ctx, "sending to the relay failed: "+err.Error(), 0); err != nil {
				return err
			}
			continue
		}
		// The relay answers what it was sent within AnswerWithin; only the
		// wait for the device's response (with pings) is unbounded.
		var answer <-chan time.Time
		var timer *time.Timer
		if !x.conn.awaiting.IsZero() {
			timer = time.NewTimer(time.Until(x.conn.awaiting.Add(x.opt.AnswerWithin)))
			answer = timer.C
		}
		var ev relayEvent
		var late bool
		select {
		case ev = <-x.conn.events:
		case <-answer:
			late = true
		case <-ctx.Done():
		}
		if timer != nil {
			timer.Stop()
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case late:
			x.dropConn()
			if err := x.failed(ctx, fmt.Sprintf("the relay did not answer within %v", x.opt.AnswerWithin), 0); err != nil {
				return err
			}
			continue
		}
		if ev.err == nil && ev.frame == nil {
			if err := x.invalidFrame(ctx); err != nil {
				return err
			}
			continue
		}
		if ev.err != nil {
			x.dropConn()
			if refusal := relayCloseRefusal(ev.err); refusal != nil {
				return refusal
			}
			if err := x.failed(ctx, relayDescribeReadError(ev.err), 0); err != nil {
				return err
			}
			continue
		}
		if err := x.handle(ctx, goal, ev.frame); err != nil {
			return err
		}
	}
	return nil
}

func (x *relayExchange) sendPending(ctx context.Context, goal relayGoal) error {
	c := x.conn
	if !x.requestAcked {
		if !c.sentRequest {
			if err := x.write(ctx, x.requestFrame); err != nil {
				return err
			}
			c.sentRequest = true
			c.awaiting = time.Now()
			x.requestWritten = true
		}
		return nil
	}
	// Only resume gets the relay to replay a pending response on a new
	// socket; the socket that carried the acked request needs none.
	if (c.resumeNeeded || x.opt.Resend) && !c.sentResume {
		if err := x.write(ctx, controlFrame(x.clientID, x.requestID, "resume", "")); err != nil {
			return err
		}
		c.sentResume = true
		c.awaiting = time.Now()
	}
	if goal == goalCompletionAcked && !c.sentCompletion {
		if err := x.write(ctx, x.completionFrame); err != nil {
			return err
		}
		c.sentCompletion = true
		c.awaiting = time.Now()
	}
	return nil
}

func (x *relayExchange) write(ctx context.Context, frame []byte) error {
	wctx, cancel := context.WithTimeout(ctx, x.opt.ConnectTimeout)
	defer cancel()
	return x.conn.ws.Write(wctx, websocket.MessageText, frame)
}

// connectionFailed abandons the socket after a failed write or a retryable
// relay error. A write cut short by the caller's cancellation has already
// closed the socket, so it counts as cancellation, not as a relay failure.
func (x *relayExchange) connectionFailed(ctx context.Context, reason string, atLeast time.Duration) error {
	x.dropConn()
	if err := ctx.Err(); err != nil {
		return err
	}
	return x.failed(ctx, reason, atLeast)
}

// failed spends one unit of the consecutive-failure budget and waits the
// backoff (or the relay's requested delay, if longer).
//
// Only protocol progress resets the budget (see madeProgress): a relay that
// acknowledges and closes, or answers with frames that change nothing,
// spends it. Giving up also comes after MaxStall without progress, however
// the time went (connection timeouts, Retry-After).
func (x *relayExchange) failed(ctx context.Context, reason string, atLeast time.Duration) error {
	x.failures++
	if x.failures >= x.opt.MaxFailures {
		return fmt.Errorf("%w after %d consecutive failures without progress: %s", errRelayUnavailable, x.failures, reason)
	}
	if stalled := time.Since(x.lastProgress); stalled >= x.opt.MaxStall {
		return fmt.Errorf("%w: no progress for %v (the limit is %v): %s", errRelayUnavailable, stalled.Round(time.Second), x.opt.MaxStall, reason)
	}
	backoff := x.opt.BackoffInitial
	for i := 1; i < x.failures && backoff < x.opt.BackoffMax; i++ {
		backoff *= 2
	}
	backoff = min(backoff, x.opt.BackoffMax)
	delay := max(backoff, min(atLeast, relayMaxRetryAfter))
	if stalled := time.Since(x.lastProgress); stalled+delay > x.opt.MaxStall {
		// Whose wait it is: the relay's requested delay only when it is
		// longer than this client's own backoff.
		who := "the next retry, after this client's backoff of"
		if delay > backoff {
			who = "the relay asks to wait"
		}
		return fmt.Errorf("%w: %s %v, which would pass %v without progress: %s", errRelayUnavailable, who, delay.Round(time.Millisecond), x.opt.MaxStall, reason)
	}
	x.progress("reconnecting (" + reason + ")")
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (x *relayExchange) dropConn() {
	if x.conn != nil {
		// A connection that stayed up, answered, while the client waited
		// for the device shows a healthy relay.
		if x.conn.awaiting.IsZero() && time.Since(x.conn.started) >= x.opt.HealthyAfter {
			x.progressed()
		}
		x.conn.stop()
		_ = x.conn.ws.CloseNow()
		x.conn = nil
	}
}

func (x *relayExchange) progressed() {
	x.failures = 0
	x.lastProgress = time.Now()
}

// progressMark is what a frame can advance.
func (x *relayExchange) progressMark() [4]bool {
	return [4]bool{x.requestAcked, x.reported["device received request"], x.response != nil, x.completionAcked}
}

func (x *relayExchange) markRequestAcked() {
	if !x.requestAcked {
		x.requestAcked = true
		x.progressOnce("request acknowledged by relay")
	}
}

func (x *relayExchange) markDeviceReceived() {
	x.markRequestAcked()
	x.progressOnce("device received request")
}

// handle applies one valid relay frame. Frames for another exchange are
// discarded and do not count as progress.
func (x *relayExchange) handle(ctx context.Context, goal relayGoal, f *relayFrame) error {
	if (f.ClientID != nil && *f.ClientID != x.clientID) || (f.RequestID != nil && *f.RequestID != x.requestID) {
		return x.invalidFrame(ctx)
	}
	before := x.progressMark()
	defer func() {
		if x.progressMark() != before {
			x.progressed()
		}
	}()
	switch f.Type {
	case "ack", "receipt", "message", "state", "inactive":
		// The relay answered what this connection sent last.
		if x.conn != nil {
			x.conn.awaiting = time.Time{}
		}
	}
	switch f.Type {
	case "ack":
		if *f.Kind == "request" {
			x.markRequestAcked()
		} else if x.completionFrame != nil {
			x.completionAcked = true
		}
	case "receipt":
		if *f.Kind == "request" {
			x.markDeviceReceived()
		}
	case "message":
		x.markDeviceReceived()
		if x.response == nil {
			x.response = bytes.Clone(f.Payload)
			x.progressOnce("response received")
		}
		// Every duplicate is acknowledged, so the relay stops redelivering.
		if err := x.write(ctx, controlFrame(x.clientID, x.requestID, "ack", "response")); err != nil {
			return x.connectionFailed(ctx, "acknowledging the response failed: "+err.Error(), 0)
		}
	case "state":
		return x.reconcile(goal, f)
	case "inactive":
		kind := ""
		if f.Kind != nil {
			kind = *f.Kind
		}
		affected := kind == "" ||
			(kind == "request" && (goal != goalCompletionAcked || !x.requestAcked)) ||
			(kind == "response" && goal == goalResponse) ||
			(kind == "completion" && goal == goalCompletionAcked)
		if affected {
			if kind != "" {
				return fmt.Errorf("%w (%s)", errExchangeInactive, kind)
			}
			return errExchangeInactive
		}
	case "error":
		code, message := relayText(*f.Error), relayText(*f.Message)
		if !*f.Retryable {
			return &relayRefusal{
				Code:     code,
				Message:  message,
				summary:  "the relay refused the exchange",
				inactive: code == "CLIENT_INACTIVE",
			}
		}
		var after time.Duration
		if f.RetryAfterMS != nil {
			after = relayMillis(*f.RetryAfterMS)
		}
		return x.connectionFailed(ctx, "relay asked to retry: "+code+": "+message, after)
	}
	return nil
}

// invalidFrame counts a frame that cannot advance this exchange.
func (x *relayExchange) invalidFrame(ctx context.Context) error {
	if x.conn == nil {
		return nil
	}
	x.conn.invalid++
	if x.conn.invalid < relayMaxInvalidFrames {
		return nil
	}
	x.dropConn()
	return x.failed(ctx, fmt.Sprintf("the relay sent %d frames that are not valid for this exchange", relayMaxInvalidFrames), 0)
}

// reconcile applies a state snapshot (the answer to resume).
func (x *relayExchange) reconcile(goal relayGoal, f *relayFrame) error {
	switch *f.Request {
	case "accepted":
		x.markRequestAcked()
	case "delivered":
		x.markDeviceReceived()
	}
	if *f.Response != "absent" {
		x.markDeviceReceived()
	}
	switch goal {
	case goalResponse:
		if x.response != nil || *f.Response == "accepted" ||
			(*f.Response == "absent" && *f.Exchange == "open") {
			return nil // the relay sends a pending response after the snapshot
		}
		return fmt.Errorf("%w: exchange %s, request %s, response %s, completion %s, and this client holds no response",
			errExchangeInactive, *f.Exchange, *f.Request, *f.Response, *f.Completion)
	case goalCompletionAcked:
		switch *f.Completion {
		case "accepted", "delivered", "discarded":
			if x.completionFrame != nil {
				x.completionAcked = true
			}
		}
	}
	return nil
}

// awaitResponse waits for the device's response and acknowledges it (and
// every duplicate). Only the first response payload is ever returned.
func (x *relayExchange) awaitResponse(ctx context.Context) (json.RawMessage, error) {
	if err := x.drive(ctx, goalResponse); err != nil {
		return nil, err
	}
	return bytes.Clone(x.response), nil
}

// complete publishes the completion and waits for the relay's ack. While ctx
// is live the normal failure budget applies; once ctx is done (SIGINT, or the
// caller was already cancelled) the hand-off continues for at most
// CompletionBound, so the process exits promptly even if the relay never
// acknowledges. Calling it again resends the same completion.
func (x *relayExchange) complete(ctx context.Context, completion json.RawMessage) error {
	if x.closed {
		return errExchangeClosed
	}
	frame, err := messageFrame(x.clientID, x.requestID, "completion", completion)
	if err != nil {
		return err
	}
	if x.completionFrame == nil {
		x.completionFrame = frame
	} else if !bytes.Equal(x.completionFrame, frame) {
		// One record per slot: a retry must carry the identical bytes.
		return errors.New("relay exchange: a different completion was already handed off")
	}
	if x.completionAcked {
		return nil
	}

	work, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	var mu sync.Mutex
	var bound *time.Timer
	finished := false
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		if !finished {
			bound = time.AfterFunc(x.opt.CompletionBound, func() { cancel(errCompletionTimedOut) })
		}
	})
	defer func() {
		stop()
		mu.Lock()
		finished = true
		if bound != nil {
			bound.Stop()
		}
		mu.Unlock()
	}()

	err = x.drive(work, goalCompletionAcked)
	if err != nil && work.Err() != nil {
		if cause := context.Cause(work); cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
	}
	return err
}

// close drops the connection without a close handshake, which could take
// seconds against an unresponsive relay.
func (x *relayExchange) close() {
	if x == nil || x.closed {
		return
	}
	x.closed = true
	x.dropConn()
	x.transport.CloseIdleConnections()
}

func (x *relayExchange) progress(stage string) {
	if x.opt.Progress != nil {
		x.opt.Progress(stage)
	}
}

func (x *relayExchange) progressOnce(stage string) {
	if !x.reported[stage] {
		x.reported[stage] = true
		x.progress(stage)
	}
}
