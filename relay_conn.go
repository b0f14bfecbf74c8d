// One client WebSocket to the relay (client-relay-protocol.md, "WebSocket
// connections", "Upgrade failures" and "WebSocket closure"): how an
// exchange dials (directly or through a proxy), the classification of
// refused upgrades and dial errors, the read loop, keepalive pings and the
// meaning of close codes. The exchange's state machine is relay_exchange.go.

package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

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
