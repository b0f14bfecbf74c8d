// relay.go: client side of the client-relay-protocol.md
// (client-relay-protocol.md: "WebSocket connections", "Reconnection and
// recovery") over github.com/coder/websocket: the relay endpoint, options
// and defaults, relay URL validation, routes, refusal errors and the
// exchange API (openExchange, awaitResponse, complete, close). The state
// machine is in relay_exchange.go, connections in relay_conn.go and frames
// in relay_frames.go.

package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
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
	// prepared (relay_ahead.go); its result is the first connection attempt.
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
		// Proxy selection is ours (proxy.go): ProxyFromEnvironment has a
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
