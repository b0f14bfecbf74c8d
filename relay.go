// The client side of client-relay-protocol.md over
// github.com/coder/websocket, in order: the relay endpoint, options and
// defaults, relay URL validation, routes, refusal errors and the exchange
// API (openExchange, awaitResponse, complete, close) ("WebSocket
// connections", "Reconnection and recovery"); the exchange state machine;
// one WebSocket connection and the socket opened ahead of its request;
// frame encoding; and proxy selection with HTTP CONNECT tunnelling.

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/coder/websocket"
)

// Defaults follow the reference client and client-relay-protocol.md
// ("Reconnection and recovery", "Frame encoding").
const (
	relayMaxFrame        = 256 << 10
	relayPingAfter       = 30 * time.Second
	relayPongWithin      = 10 * time.Second
	relayMaxFailures     = 8
	relayBackoffInitial  = 250 * time.Millisecond
	relayBackoffMax      = 5 * time.Second
	relayConnectTimeout  = 15 * time.Second
	relayCompletionBound = 5 * time.Second
	// A relay-supplied delay (Retry-After, retry_after_ms) beyond this is
	// treated as this.
	relayMaxRetryAfter = 60 * time.Second
	// The relay must answer a request, resume or completion within
	// relayAnswerWithin, or the connection counts as failed.
	relayAnswerWithin = 30 * time.Second
	// relayMaxStall: with no protocol progress for this long, and at least
	// one failure since, the exchange gives up. Progress is a new ack,
	// receipt, response or completion ack, or a connection that stayed up
	// relayHealthyAfter while the client waited for the device.
	relayMaxStall     = 2 * time.Minute
	relayHealthyAfter = 60 * time.Second
	// relayMaxInvalidFrames is how many frames that are not valid v1 frames
	// for this exchange one connection may carry before it is dropped.
	relayMaxInvalidFrames = 64
)

var (
	// errRelayUnavailable: the consecutive-failure budget ran out.
	errRelayUnavailable = errors.New("relay unavailable")
	// errExchangeInactive: the relay holds no live state for the exchange
	// (an inactive frame, or a state snapshot that rules out progress).
	errExchangeInactive = errors.New("the relay reports the exchange is no longer active")
	// errClientInactive: the client is suspended, revoked or unknown to the
	// relay; retrying cannot help until the pairing changes.
	errClientInactive = errors.New("this client is not active at the relay")
	// errCompletionTimedOut: a cancelled caller's completion hand-off ran
	// out of its short bound.
	errCompletionTimedOut = errors.New("timed out handing the completion to the relay")
	errExchangeClosed     = errors.New("relay exchange already closed")
)

type relayEndpoint struct {
	BaseURL *url.URL // ws:// or wss://, validated by parseRelayURL
	Token   string   // bearer client token
}

// relayOptions tunes one exchange. Zero values select the protocol defaults;
// tests shorten the durations and inject the dialer, TLS roots and
// environment.
type relayOptions struct {
	PingAfter  time.Duration // idle time before a WebSocket ping (30 s)
	PongWithin time.Duration // time allowed for the pong (10 s)
	// Progress, when set, receives stage lines: "connected", "request
	// acknowledged by relay", "device received request", "response
	// received", "reconnecting (REASON)". It runs on the caller's goroutine.
	Progress func(stage string)
	// Dialer opens TCP connections, to the relay or to a proxy.
	Dialer func(ctx context.Context, network, address string) (net.Conn, error)
	// TLSConfig supplies roots for wss:// and https:// proxies; nil means the
	// system roots. Verification is never disabled here.
	TLSConfig *tls.Config
	// Getenv reads proxy settings; nil means os.Getenv.
	Getenv func(string) string

	MaxFailures     int           // consecutive failures allowed (8)
	BackoffInitial  time.Duration // first retry delay (250 ms), doubling
	BackoffMax      time.Duration // retry delay ceiling (5 s)
	ConnectTimeout  time.Duration // one connection attempt or write (15 s)
	CompletionBound time.Duration // completion hand-off after cancellation (5 s)
	UserAgent       string        // default "agentknock"
	AnswerWithin    time.Duration // relay answer to a request, resume or completion (30 s)
	MaxStall        time.Duration // time without progress before giving up (2 min)
	HealthyAfter    time.Duration // a connection this old counts as progress (60 s)

	// Resend marks a request the relay may already hold from an earlier
	// process: once it is acknowledged the client asks for the exchange's
	// state, since a response that process acknowledged is not sent again.
	Resend bool

	// Ahead is a dial of the same route started while the request was
	// prepared (this file); its result is the first connection attempt.
	Ahead *relayAhead
}

func (o relayOptions) withDefaults() relayOptions {
	setDuration := func(d *time.Duration, def time.Duration) {
		if *d <= 0 {
			*d = def
		}
	}
	setDuration(&o.PingAfter, relayPingAfter)
	setDuration(&o.PongWithin, relayPongWithin)
	setDuration(&o.BackoffInitial, relayBackoffInitial)
	setDuration(&o.BackoffMax, relayBackoffMax)
	setDuration(&o.ConnectTimeout, relayConnectTimeout)
	setDuration(&o.CompletionBound, relayCompletionBound)
	setDuration(&o.AnswerWithin, relayAnswerWithin)
	setDuration(&o.MaxStall, relayMaxStall)
	setDuration(&o.HealthyAfter, relayHealthyAfter)
	if o.MaxFailures <= 0 {
		o.MaxFailures = relayMaxFailures
	}
	if o.Dialer == nil {
		o.Dialer = (&net.Dialer{}).DialContext
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.UserAgent == "" {
		o.UserAgent = "agentknock"
	}
	return o
}

// parseRelayURL accepts wss:// anywhere and plain ws:// only for loopback,
// because ws:// would expose the bearer token and all metadata on the wire.
func parseRelayURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, fmt.Errorf("invalid relay URL %q: %v", s, err)
	}
	if err := validateRelayURL(u); err != nil {
		return nil, err
	}
	return u, nil
}

func validateRelayURL(u *url.URL) error {
	if u == nil {
		return errors.New("no relay URL")
	}
	shown := u.Redacted()
	switch u.Scheme {
	case "wss":
	case "ws":
		if !relayLoopbackHost(u.Hostname()) {
			return fmt.Errorf("relay URL %s: plain ws:// is allowed only for a loopback host (127.0.0.0/8, ::1, localhost); use wss://", shown)
		}
	default:
		return fmt.Errorf("relay URL %s: the scheme must be wss:// (or ws:// for a loopback host)", shown)
	}
	if u.Hostname() == "" {
		return fmt.Errorf("relay URL %s has no host", shown)
	}
	if u.User != nil {
		return fmt.Errorf("relay URL %s must not contain credentials", shown)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return fmt.Errorf("relay URL %s must not have a query or fragment", shown)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("relay URL %s has an invalid port", shown)
		}
	}
	return nil
}

func relayLoopbackHost(host string) bool {
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// pairingRoute is the initial-pairing route; request_id doubles as client_id.
func pairingRoute(addressID, requestID string) string {
	return "/v1/address/" + url.PathEscape(addressID) + "/request/" + url.PathEscape(requestID)
}

// deviceRoute is the authenticated route of an enrolled client.
func deviceRoute(deviceID, clientID string) string {
	return "/v1/device/" + url.PathEscape(deviceID) + "/client/" + url.PathEscape(clientID)
}

// relayRefusal is a relay answer that retrying cannot change: a final
// upgrade status, a nonretryable error frame or a deliberate closure.
type relayRefusal struct {
	Status    int    // HTTP status of a refused upgrade
	CloseCode int    // WebSocket close code
	Code      string // relay error code, sanitized
	Message   string // relay-supplied text, sanitized
	summary   string
	inactive  bool
}

func (e *relayRefusal) Error() string {
	var parts []string
	if e.Status != 0 {
		parts = append(parts, "HTTP "+strconv.Itoa(e.Status))
	}
	if e.CloseCode != 0 {
		parts = append(parts, "close code "+strconv.Itoa(e.CloseCode))
	}
	if e.Code != "" {
		parts = append(parts, e.Code)
	}
	if e.Message != "" {
		parts = append(parts, e.Message)
	}
	if len(parts) == 0 {
		return e.summary
	}
	return e.summary + " (" + strings.Join(parts, ": ") + ")"
}

func (e *relayRefusal) Is(target error) bool {
	return target == errClientInactive && e.inactive
}

type relayGoal int

const (
	goalRequestAcked relayGoal = iota
	goalResponse
	goalCompletionAcked
)

// relayExchange is one live exchange: one request, at most one accepted
// response, at most one completion. Its methods are not safe for concurrent
// use; they run the protocol on the caller's goroutine.
type relayExchange struct {
	opt       relayOptions
	target    *url.URL
	header    http.Header
	pairing   bool
	clientID  string
	requestID string
	proxy     *relayProxy
	transport *http.Transport
	client    *http.Client

	conn         *relayConn
	failures     int
	lastProgress time.Time
	reported     map[string]bool
	closed       bool

	requestFrame    []byte // fixed values, resent until acknowledged
	requestWritten  bool
	requestAcked    bool
	response        json.RawMessage // first accepted response payload
	completionFrame []byte
	completionAcked bool
}

// openExchange connects on path (pairingRoute(...) or deviceRoute(...)) and
// publishes the request; it returns once the relay acknowledged it.
//
// On error the returned exchange is non-nil exactly when the request frame
// was written at least once, so it may be at the relay: the caller should
// then hand off an aborted completion with complete (bounded once ctx is
// done) and close it.
func openExchange(ctx context.Context, ep relayEndpoint, path, clientID, requestID string, request json.RawMessage, opt relayOptions) (*relayExchange, error) {
	if !canonicalULIDText(requestID) {
		return nil, errors.New("relay exchange: request_id must be a canonical ULID")
	}
	x, err := newRelayExchange(ep, path, clientID, opt)
	if err != nil {
		return nil, err
	}
	x.requestID = requestID
	x.requestFrame, err = messageFrame(x.clientID, x.requestID, "request", request)
	if err != nil {
		x.close()
		return nil, err
	}
	if err := x.drive(ctx, goalRequestAcked); err != nil {
		if x.requestWritten {
			return x, err
		}
		x.close()
		return nil, err
	}
	return x, nil
}

// newRelayExchange prepares the connection settings for path; the request
// id is openExchange's to set.
func newRelayExchange(ep relayEndpoint, path, clientID string, opt relayOptions) (*relayExchange, error) {
	if err := validateRelayURL(ep.BaseURL); err != nil {
		return nil, err
	}
	if !canonicalULIDText(clientID) {
		return nil, errors.New("relay exchange: client_id must be a canonical ULID")
	}
	if !strings.HasPrefix(path, "/v1/") {
		return nil, fmt.Errorf("relay exchange: unexpected route %q", path)
	}
	if ep.Token == "" || strings.IndexFunc(ep.Token, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0 {
		return nil, errors.New("relay exchange: the client token is empty or cannot be sent in an HTTP header")
	}
	opt = opt.withDefaults()

	target := *ep.BaseURL
	target.Path = strings.TrimSuffix(target.Path, "/") + path
	target.RawPath = ""
	proxy, err := relayProxyFor(&target, opt.Getenv)
	if err != nil {
		return nil, err
	}

	x := &relayExchange{
		opt:          opt,
		target:       &target,
		pairing:      strings.HasPrefix(path, "/v1/address/"),
		clientID:     clientID,
		proxy:        proxy,
		reported:     map[string]bool{},
		lastProgress: time.Now(),
		header: http.Header{
			"Authorization": {"Bearer " + ep.Token},
			"User-Agent":    {opt.UserAgent},
		},
	}
	var tlsConfig *tls.Config
	if opt.TLSConfig != nil {
		tlsConfig = opt.TLSConfig.Clone()
	}
	x.transport = &http.Transport{
		// Proxy selection is ours (this file): ProxyFromEnvironment has a
		// different precedence and never consults all_proxy.
		Proxy:                 nil,
		DialContext:           x.dialTCP,
		TLSClientConfig:       tlsConfig,
		TLSHandshakeTimeout:   opt.ConnectTimeout,
		ResponseHeaderTimeout: opt.ConnectTimeout,
		// The WebSocket upgrade needs HTTP/1.1.
		TLSNextProto:       map[string]func(string, *tls.Conn) http.RoundTripper{},
		DisableCompression: true,
		DisableKeepAlives:  true,
	}
	x.client = &http.Client{
		Transport: x.transport,
		// A redirect could downgrade to ws:// or carry the token elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return x, nil
}

// The client's exchange state machine (Agentknock v1
// client-relay-protocol.md, "Reconnection and recovery" and "Exchange
// transitions" in client-relay-protocol.md): drive resends the request until
// acked and resumes afterwards, spends the consecutive-failure budget with
// backoff, and applies ack, receipt, message, state, inactive and error
// frames (handle, reconcile).

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
		err := x.connectionFailed(ctx, "relay asked to retry: "+code+": "+message, after)
		if code == "CAPACITY_EXCEEDED" && errors.Is(err, errRelayUnavailable) {
			// The relay works; this client has too many exchanges open
			// on it, so the next step is waiting, not the network.
			return classify(failRelayBusy, err)
		}
		return err
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

// One client WebSocket to the relay (client-relay-protocol.md, "WebSocket
// connections", "Upgrade failures" and "WebSocket closure"): how an
// exchange dials (directly or through a proxy), the classification of
// refused upgrades and dial errors, the read loop, keepalive pings and the
// meaning of close codes. The exchange's state machine is above.

// relayConn is one WebSocket. A reader goroutine keeps reading so that
// pings and pongs are processed while the caller is busy; a keepalive
// goroutine pings after PingAfter without any frame.
type relayConn struct {
	ws     *websocket.Conn
	events chan relayEvent
	ctx    context.Context
	stop   context.CancelFunc
	lastRx atomic.Int64                  // unix nanoseconds of the last frame of any kind
	broken atomic.Pointer[time.Duration] // set when a pong did not come in time

	resumeNeeded   bool
	sentRequest    bool
	sentResume     bool
	sentCompletion bool

	started  time.Time
	awaiting time.Time // when the client last sent what the relay must answer; zero once answered
	invalid  int       // frames that are not valid v1 frames for this exchange
}

type relayEvent struct {
	frame *relayFrame
	err   error
}

// relayTransient marks a connection failure the recovery rules retry, with
// the delay the relay asked for, if any.
type relayTransient struct {
	err   error
	after time.Duration
}

func (e *relayTransient) Error() string { return e.err.Error() }
func (e *relayTransient) Unwrap() error { return e.err }

// connect opens a socket, retrying within the failure budget.
func (x *relayExchange) connect(ctx context.Context) error {
	for {
		c, err := x.opt.Ahead.take(ctx, x.target.String())
		if c == nil && err == nil {
			c, err = x.dial(ctx)
		}
		if err == nil {
			c.resumeNeeded = x.requestAcked
			x.conn = c
			x.progress("connected")
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var transient *relayTransient
		if !errors.As(err, &transient) {
			return err
		}
		if err := x.failed(ctx, transient.Error(), transient.after); err != nil {
			return err
		}
	}
}

func (x *relayExchange) dial(ctx context.Context) (*relayConn, error) {
	dctx, cancel := context.WithTimeout(ctx, x.opt.ConnectTimeout)
	defer cancel()
	c := &relayConn{events: make(chan relayEvent, 16), started: time.Now()}
	touch := func() { c.lastRx.Store(time.Now().UnixNano()) }
	ws, resp, err := websocket.Dial(dctx, x.target.String(), &websocket.DialOptions{
		HTTPClient:     x.client,
		HTTPHeader:     x.header.Clone(),
		OnPingReceived: func(context.Context, []byte) bool { touch(); return true },
		OnPongReceived: func(context.Context, []byte) { touch() },
	})
	if err != nil {
		if resp != nil && resp.StatusCode != http.StatusSwitchingProtocols {
			return nil, x.upgradeFailure(resp)
		}
		return nil, x.classifyDialError(err)
	}
	ws.SetReadLimit(relayMaxFrame)
	c.ws = ws
	c.ctx, c.stop = context.WithCancel(context.Background())
	touch()
	go c.readLoop()
	go c.keepAlive(x.opt.PingAfter, x.opt.PongWithin)
	return c, nil
}

func (x *relayExchange) classifyDialError(err error) error {
	var proxyErr *proxyStatusError
	if errors.As(err, &proxyErr) {
		if proxyErr.Status >= 500 {
			return &relayTransient{err: proxyErr}
		}
		return proxyErr
	}
	if errors.Is(err, errRelayNotLoopback) {
		return errRelayNotLoopback
	}
	var (
		verify    *tls.CertificateVerificationError
		authority x509.UnknownAuthorityError
		hostname  x509.HostnameError
		invalid   x509.CertificateInvalidError
	)
	if errors.As(err, &verify) || errors.As(err, &authority) || errors.As(err, &hostname) || errors.As(err, &invalid) {
		return fmt.Errorf("TLS certificate verification failed for relay %s: %w", x.target.Host, err)
	}
	return &relayTransient{err: fmt.Errorf("connecting to relay %s: %w", x.target.Host, err)}
}

// upgradeFailure classifies a refused upgrade. The status is primary; the
// JSON body adds the relay's code, message and retry hints.
func (x *relayExchange) upgradeFailure(resp *http.Response) error {
	var body struct {
		Error        string  `json:"error"`
		Message      string  `json:"message"`
		Retryable    bool    `json:"retryable"`
		RetryAfterMS *uint64 `json:"retry_after_ms"`
	}
	if resp.Body != nil {
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		_ = json.Unmarshal(raw, &body)
	}
	var after time.Duration
	if body.RetryAfterMS != nil {
		after = relayMillis(*body.RetryAfterMS)
	}
	after = max(after, relayRetryAfterHeader(resp.Header.Get("Retry-After")))
	r := &relayRefusal{Status: resp.StatusCode, Code: relayText(body.Error), Message: relayText(body.Message)}
	switch status := resp.StatusCode; {
	case status == http.StatusUnauthorized:
		r.summary = "the relay rejected this client's token"
	case status == http.StatusForbidden && x.pairing:
		r.summary = "the relay refused this pairing attempt"
	case status == http.StatusForbidden:
		r.summary = "the relay reports this client is not active (the pairing was removed, suspended or revoked)"
		r.inactive = true
	case status == http.StatusNotFound && x.pairing:
		r.summary = "the relay knows no device at this pairing address"
	case status == http.StatusNotFound:
		r.summary = "the relay knows no such device or client"
		r.inactive = true
	case status == http.StatusTooManyRequests || status >= 500 || body.Retryable:
		r.summary = "the relay refused the connection for now"
		return &relayTransient{err: r, after: after}
	default:
		r.summary = "the relay refused the connection"
	}
	return r
}

func relayRetryAfterHeader(v string) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		if secs > uint64(relayMaxRetryAfter/time.Second) {
			return relayMaxRetryAfter
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(time.Until(t), 0), relayMaxRetryAfter)
	}
	return 0
}

var errRelayNoPong = errors.New("relay did not answer a WebSocket ping")

var errRelayNotLoopback = errors.New("the ws:// relay host did not resolve to a loopback address; plain ws:// is allowed only for loopback")

// dialTCP is the transport's dialer: through the selected proxy, or direct.
// A ws:// relay must really be on loopback, whatever the name resolved to.
func (x *relayExchange) dialTCP(ctx context.Context, network, address string) (net.Conn, error) {
	if x.proxy != nil {
		return x.proxy.dial(ctx, x.opt.Dialer, x.opt.TLSConfig, address)
	}
	conn, err := x.opt.Dialer(ctx, network, address)
	if err != nil {
		return nil, err
	}
	if x.target.Scheme == "ws" {
		remote, perr := netip.ParseAddrPort(conn.RemoteAddr().String())
		if perr != nil || !remote.Addr().Unmap().IsLoopback() {
			conn.Close()
			return nil, errRelayNotLoopback
		}
	}
	return conn, nil
}

func (c *relayConn) readLoop() {
	for {
		typ, data, err := c.ws.Read(c.ctx)
		if err != nil {
			if within := c.broken.Load(); within != nil {
				err = fmt.Errorf("%w within %v", errRelayNoPong, *within)
			}
			c.deliver(relayEvent{err: err})
			return
		}
		c.lastRx.Store(time.Now().UnixNano())
		if typ != websocket.MessageText {
			data = nil // binary frames are invalid in v1
		}
		f, ok := parseRelayFrame(data)
		if !ok {
			// Marked by a nil frame: the exchange counts them.
			f = nil
		}
		if !c.deliver(relayEvent{frame: f}) {
			return
		}
	}
}

func (c *relayConn) deliver(ev relayEvent) bool {
	select {
	case c.events <- ev:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *relayConn) keepAlive(after, within time.Duration) {
	t := time.NewTimer(after)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if idle := time.Since(time.Unix(0, c.lastRx.Load())); idle < after {
			t.Reset(after - idle)
			continue
		}
		pctx, cancel := context.WithTimeout(c.ctx, within)
		err := c.ws.Ping(pctx)
		cancel()
		if err != nil {
			if c.ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				c.broken.Store(&within)
				_ = c.ws.CloseNow()
			}
			return
		}
		t.Reset(after)
	}
}

// relayCloseRefusal maps deliberate closures to final errors; other
// closures follow the recovery table.
func relayCloseRefusal(err error) error {
	var ce websocket.CloseError
	if !errors.As(err, &ce) {
		return nil
	}
	r := &relayRefusal{CloseCode: int(ce.Code), Message: relayText(ce.Reason)}
	switch ce.Code {
	case websocket.StatusPolicyViolation:
		r.summary = "the relay closed the connection over an invalid frame"
	case websocket.StatusMessageTooBig:
		r.summary = "the relay closed the connection over a frame larger than 256 KiB"
	case 4002:
		r.summary, r.inactive = "the device suspended this client", true
	case 4003:
		r.summary, r.inactive = "the device revoked this client", true
	case 4004:
		r.summary, r.inactive = "relay service for this client or device is suspended", true
	default:
		return nil
	}
	return r
}

func relayDescribeReadError(err error) string {
	if errors.Is(err, errRelayNoPong) {
		return err.Error()
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) {
		if ce.Reason != "" {
			return fmt.Sprintf("relay closed the connection (%d %s)", ce.Code, relayText(ce.Reason))
		}
		return fmt.Sprintf("relay closed the connection (%d)", ce.Code)
	}
	return "connection lost: " + err.Error()
}

// A relay socket opened ahead of its request (client-relay-protocol.md,
// "WebSocket connections"): once the command is selected, inspected and the
// host's facilities checked, the run path dials while it walks the launcher
// chain, installs the signal watch and seals the request, so that the TCP
// connection, TLS and the WebSocket upgrade (three round trips to a remote
// relay) are not all spent after the request is ready. Nothing is sent on
// the socket before the request: the relay sees a client connect, and the
// device sees nothing, until then.

// relayAhead is one dial in progress for a route. The exchange that later
// uses the route takes its result as its own first connection attempt, so
// a failed dial is classified, reported and retried exactly as one made by
// the exchange itself.
type relayAhead struct {
	target string // the URL dialed; an exchange on another route ignores the dial
	cancel context.CancelFunc
	done   chan struct{}
	conn   *relayConn
	err    error
}

// dialRelayAhead starts dialing path at ep in the background.
func dialRelayAhead(ep relayEndpoint, path, clientID string, opt relayOptions) (*relayAhead, error) {
	x, err := newRelayExchange(ep, path, clientID, opt)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	a := &relayAhead{target: x.target.String(), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(a.done)
		a.conn, a.err = x.dial(ctx)
	}()
	return a, nil
}

// take waits for the dial and hands over its result once; later calls, and
// calls for another target, report nothing (nil, nil) and the exchange
// dials itself.
func (a *relayAhead) take(ctx context.Context, target string) (*relayConn, error) {
	if a == nil || a.target != target {
		return nil, nil
	}
	select {
	case <-a.done:
	case <-ctx.Done():
		a.close()
		return nil, ctx.Err()
	}
	c, err := a.conn, a.err
	a.conn, a.err, a.target = nil, nil, ""
	return c, err
}

// close abandons a dial that no exchange took, closing its socket.
func (a *relayAhead) close() {
	if a == nil {
		return
	}
	a.cancel()
	<-a.done
	if a.conn != nil {
		a.conn.stop()
		a.conn.ws.CloseNow()
		a.conn = nil
	}
	a.target = ""
}

// Frame encoding for the client (Agentknock v1
// client-relay-protocol.md, "Frame encoding" through "Error frame" in
// client-relay-protocol.md): the frames a client sends, strict parsing of
// the frames a relay may send, and sanitizing of relay-supplied text and
// retry delays.

type relayOutFrame struct {
	Type      string          `json:"type"`
	ClientID  string          `json:"client_id"`
	RequestID string          `json:"request_id"`
	Kind      string          `json:"kind,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
}

// messageFrame is the message frame of one exchange (its client and
// request ids) carrying payload.
func messageFrame(clientID, requestID, kind string, payload json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(payload)) == 0 || !json.Valid(payload) {
		return nil, fmt.Errorf("relay exchange: the %s payload is not valid JSON", kind)
	}
	frame, err := json.Marshal(relayOutFrame{Type: "message", ClientID: clientID, RequestID: requestID, Kind: kind, Payload: payload})
	if err != nil {
		return nil, err
	}
	if len(frame) > relayMaxFrame {
		return nil, classify(failRequestTooLarge, fmt.Errorf("relay exchange: the %s frame is %d bytes, over the relay's 256 KiB frame limit", kind, len(frame)))
	}
	return frame, nil
}

// controlFrame is an ack or resume frame of one exchange.
func controlFrame(clientID, requestID, typ, kind string) []byte {
	// A struct of strings always encodes.
	frame, _ := json.Marshal(relayOutFrame{Type: typ, ClientID: clientID, RequestID: requestID, Kind: kind})
	return frame
}

// relayFrame is any frame the relay may send. Pointers distinguish a missing
// member from an empty one; a member of the wrong JSON type fails decoding.
type relayFrame struct {
	Type         string          `json:"type"`
	ClientID     *string         `json:"client_id"`
	RequestID    *string         `json:"request_id"`
	Kind         *string         `json:"kind"`
	Payload      json.RawMessage `json:"payload"` // "null" is a present payload
	Exchange     *string         `json:"exchange"`
	Request      *string         `json:"request"`
	Response     *string         `json:"response"`
	Completion   *string         `json:"completion"`
	Error        *string         `json:"error"`
	Message      *string         `json:"message"`
	Retryable    *bool           `json:"retryable"`
	RetryAfterMS *uint64         `json:"retry_after_ms"`
}

// parseRelayFrame accepts only frames a relay may send to a client, with
// every required member; anything else is discarded by the caller.
func parseRelayFrame(data []byte) (*relayFrame, bool) {
	var f relayFrame
	if json.Unmarshal(data, &f) != nil {
		return nil, false
	}
	in := func(p *string, values ...string) bool {
		if p == nil {
			return false
		}
		for _, v := range values {
			if *p == v {
				return true
			}
		}
		return false
	}
	ids := f.ClientID != nil && f.RequestID != nil
	message := []string{"absent", "accepted", "delivered", "discarded"}
	var ok bool
	switch f.Type {
	case "ack", "receipt":
		ok = ids && in(f.Kind, "request", "completion")
	case "message":
		ok = ids && in(f.Kind, "response") && f.Payload != nil
	case "state":
		ok = ids && in(f.Exchange, "open", "closing", "settled", "expired") &&
			in(f.Request, message...) && in(f.Response, message...) && in(f.Completion, message...)
	case "inactive":
		ok = ids && (f.Kind == nil || in(f.Kind, "request", "response", "completion"))
	case "error":
		ok = f.Error != nil && f.Message != nil && f.Retryable != nil &&
			(f.Kind == nil || in(f.Kind, "request", "response", "completion"))
	}
	if !ok {
		return nil, false
	}
	return &f, true
}

func relayMillis(ms uint64) time.Duration {
	if ms > uint64(relayMaxRetryAfter/time.Millisecond) {
		return relayMaxRetryAfter
	}
	return time.Duration(ms) * time.Millisecond
}

// relayText makes relay-supplied text safe to print: the relay is
// untrusted, so no control or formatting characters reach the terminal.
func relayText(s string) string {
	const limit = 200
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == limit {
			b.WriteString("...")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// Proxy selection and HTTP CONNECT tunnelling for relay
// connections (client-relay transport). Settings come from https_proxy /
// HTTPS_PROXY, then all_proxy / ALL_PROXY, minus no_proxy / NO_PROXY, with
// the lowercase name winning as curl and the reference client read them.

// proxyMaxResponse bounds the CONNECT answer a proxy may send before the
// tunnel starts, so a hostile proxy cannot make us buffer without limit.
const proxyMaxResponse = 8 << 10

// relayProxy is the proxy chosen for one relay URL.
type relayProxy struct {
	url    *url.URL // http or https, host:port, optional userinfo
	source string   // environment variable it came from
}

// String names the proxy without its credentials.
func (p *relayProxy) String() string {
	return p.url.Scheme + "://" + p.url.Host + " (from " + p.source + ")"
}

// proxyStatusError is a proxy's refusal of the CONNECT request.
type proxyStatusError struct {
	Status int
	Proxy  string // as relayProxy.String
	Source string
}

func (e *proxyStatusError) Error() string {
	msg := fmt.Sprintf("proxy %s refused the tunnel to the relay with HTTP %d", e.Proxy, e.Status)
	if e.Status == http.StatusProxyAuthRequired {
		msg += "; check the user name and password in " + e.Source
	}
	return msg
}

// relayProxyFor selects the proxy for a relay URL, or nil for a direct
// connection. Loopback relays are never proxied: a ws:// relay is loopback
// only, and a local relay behind a remote proxy would be unreachable.
func relayProxyFor(target *url.URL, getenv func(string) string) (*relayProxy, error) {
	if target.Scheme != "wss" || relayLoopbackHost(target.Hostname()) {
		return nil, nil
	}
	source, value := proxyFirstEnv(getenv, "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")
	if value == "" {
		return nil, nil
	}
	u, err := parseProxyURL(source, value)
	if err != nil {
		return nil, err
	}
	_, noProxy := proxyFirstEnv(getenv, "no_proxy", "NO_PROXY")
	port := target.Port()
	if port == "" {
		port = "443"
	}
	if noProxyMatches(noProxy, target.Hostname(), port) {
		return nil, nil
	}
	return &relayProxy{url: u, source: source}, nil
}

func proxyFirstEnv(getenv func(string) string, names ...string) (string, string) {
	for _, name := range names {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return name, v
		}
	}
	return "", ""
}

// parseProxyURL never echoes the value: it may hold a password.
func parseProxyURL(source, value string) (*url.URL, error) {
	raw := value
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s does not contain a valid proxy URL", source)
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fmt.Errorf("%s uses the unsupported proxy scheme %q; use http:// or https://", source, u.Scheme)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("%s names no proxy host", source)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return nil, fmt.Errorf("%s has an invalid proxy port", source)
	}
	return &url.URL{Scheme: scheme, User: u.User, Host: net.JoinHostPort(host, port)}, nil
}

// noProxyMatches reports whether host:port bypasses the proxy. Entries are
// comma separated: "*", a domain (with or without a leading "." or "*.",
// matching the domain and its subdomains), an IP literal, a CIDR prefix, each
// optionally with ":port" ("[v6]:port" for IPv6). Names are never resolved.
func noProxyMatches(list, host, port string) bool {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	hostIP, hostErr := netip.ParseAddr(host)
	for _, entry := range strings.Split(list, ",") {
		entry = strings.ToLower(strings.TrimSpace(entry))
		if entry == "" {
			continue
		}
		if entry == "*" {
			return true
		}
		if strings.Contains(entry, "/") {
			if prefix, err := netip.ParsePrefix(entry); err == nil && hostErr == nil && prefix.Contains(hostIP.Unmap()) {
				return true
			}
			continue
		}
		name, entryPort := noProxySplit(entry)
		if entryPort != "" && entryPort != port {
			continue
		}
		if ip, err := netip.ParseAddr(name); err == nil {
			if hostErr == nil && ip.Unmap() == hostIP.Unmap() {
				return true
			}
			continue
		}
		name = strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(name, "*"), "."), ".")
		if name != "" && hostErr != nil && (host == name || strings.HasSuffix(host, "."+name)) {
			return true
		}
	}
	return false
}

func noProxySplit(entry string) (host, port string) {
	if strings.HasPrefix(entry, "[") {
		end := strings.Index(entry, "]")
		if end < 0 {
			return entry, ""
		}
		host, rest := entry[1:end], entry[end+1:]
		return host, strings.TrimPrefix(rest, ":")
	}
	if _, err := netip.ParseAddr(entry); err == nil {
		return entry, "" // a bare IPv6 literal has colons but no port
	}
	if i := strings.LastIndexByte(entry, ':'); i >= 0 {
		if _, err := strconv.Atoi(entry[i+1:]); err == nil {
			return entry[:i], entry[i+1:]
		}
	}
	return entry, ""
}

// dial opens a CONNECT tunnel to target ("host:port") through the proxy.
// The relay's own TLS runs inside the tunnel, end to end.
func (p *relayProxy) dial(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), tlsConfig *tls.Config, target string) (net.Conn, error) {
	conn, err := dial(ctx, "tcp", p.url.Host)
	if err != nil {
		return nil, fmt.Errorf("connecting to proxy %s: %w", p, err)
	}
	tunnel, err := p.handshake(ctx, conn, tlsConfig, target)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return tunnel, nil
}

func (p *relayProxy) handshake(ctx context.Context, conn net.Conn, tlsConfig *tls.Config, target string) (net.Conn, error) {
	// Unblock reads and writes when the caller gives up.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}

	if p.url.Scheme == "https" {
		cfg := &tls.Config{}
		if tlsConfig != nil {
			cfg = tlsConfig.Clone()
		}
		cfg.ServerName = p.url.Hostname()
		cfg.NextProtos = nil
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("TLS with proxy %s: %w", p, err)
		}
		conn = tc
	}

	var req strings.Builder
	req.WriteString("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n")
	if p.url.User != nil {
		password, _ := p.url.User.Password()
		credentials := base64.StdEncoding.EncodeToString([]byte(p.url.User.Username() + ":" + password))
		req.WriteString("Proxy-Authorization: Basic " + credentials + "\r\n")
	}
	req.WriteString("\r\n")
	if _, err := io.WriteString(conn, req.String()); err != nil {
		return nil, fmt.Errorf("sending CONNECT to proxy %s: %w", p, err)
	}

	br := bufio.NewReader(&io.LimitedReader{R: conn, N: proxyMaxResponse})
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the CONNECT answer of proxy %s: %w", p, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, &proxyStatusError{Status: resp.StatusCode, Proxy: p.String(), Source: p.source}
	}
	if !stop() {
		return nil, ctx.Err()
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		return nil, err
	}
	// Bytes the proxy sent after its answer already belong to the tunnel.
	if n := br.Buffered(); n > 0 {
		early, _ := br.Peek(n)
		return &proxyConn{Conn: conn, early: append([]byte(nil), early...)}, nil
	}
	return conn, nil
}

// proxyConn replays tunnel bytes read ahead with the CONNECT answer.
type proxyConn struct {
	net.Conn
	early []byte
}

func (c *proxyConn) Read(b []byte) (int, error) {
	if len(c.early) > 0 {
		n := copy(b, c.early)
		c.early = c.early[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
