// Package relay is a local relay for the Agentknock v1 client-relay
// protocol (docs/client-relay-protocol.md in agentknock/agentknock-cli),
// with the device side in-process. It stores and forwards opaque payloads;
// it never decodes them, except the test-only fault rules in faults.go.
//
// This file holds the Relay itself: construction, lifetimes and shutdown.
package relay

import (
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/coder/websocket"
)

const (
	defaultMaxAge   = 5 * time.Minute
	defaultMaxAhead = time.Minute
	sweepInterval   = 5 * time.Second
)

// Relay is an http.Handler serving the client-facing routes.
type Relay struct {
	cfg      Config
	now      func() time.Time
	maxAge   time.Duration
	maxAhead time.Duration

	mu           sync.Mutex
	closed       bool
	clients      map[string]*clientEntry
	exchanges    map[exchangeKey]*exchange
	tombstones   map[exchangeKey]time.Time
	live         map[string]int // open or closing exchanges per client id
	sockets      map[*socket]struct{}
	pending      []exchangeKey // delivery queue
	faults       []faultState
	lastResponse map[string]lastResponse

	deliveryWake chan struct{}
	done         chan struct{}
	wg           sync.WaitGroup // background loops and socket handlers
}

// New loads the client records and starts the relay's background work.
func New(cfg Config) (*Relay, error) {
	if cfg.Device == nil {
		return nil, errors.New("relay: Config.Device is required")
	}
	if cfg.MaxAge < 0 || cfg.MaxAhead < 0 {
		return nil, errors.New("relay: negative admission window")
	}
	clients, err := loadClients(cfg.Store)
	if err != nil {
		return nil, err
	}
	r := &Relay{
		cfg:          cfg,
		now:          cfg.Now,
		maxAge:       cfg.MaxAge,
		maxAhead:     cfg.MaxAhead,
		clients:      clients,
		exchanges:    map[exchangeKey]*exchange{},
		tombstones:   map[exchangeKey]time.Time{},
		live:         map[string]int{},
		sockets:      map[*socket]struct{}{},
		lastResponse: map[string]lastResponse{},
		deliveryWake: make(chan struct{}, 1),
		done:         make(chan struct{}),
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.maxAge == 0 {
		r.maxAge = defaultMaxAge
	}
	if r.maxAhead == 0 {
		r.maxAhead = defaultMaxAhead
	}
	if cfg.Faults != nil {
		for _, rule := range cfg.Faults.Rules {
			if err := rule.check(); err != nil {
				return nil, err
			}
			r.faults = append(r.faults, faultState{rule: rule})
		}
	}
	r.wg.Add(2)
	go r.deliveryLoop()
	go r.janitor()
	return r, nil
}

func (r *Relay) logf(format string, args ...any) {
	if r.cfg.Logf != nil {
		r.cfg.Logf(format, args...)
	}
}

// Respond publishes the device's response for an exchange. The first
// response wins; a duplicate is ignored (nil). Unknown exchange: error
// (ErrUnknownExchange); an expired one: ErrExchangeInactive. A response
// arriving after the client's completion is discarded without error.
func (r *Relay) Respond(clientID, requestID string, payload json.RawMessage) error {
	if !validULID(clientID) || !validULID(requestID) {
		return ErrUnknownExchange
	}
	if err := checkPayload(clientID, requestID, payload); err != nil {
		return err
	}
	payload = append(json.RawMessage(nil), payload...)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	return r.respond(clientID, requestID, payload)
}

func (r *Relay) janitor() {
	defer r.wg.Done()
	t := time.NewTicker(sweepInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			r.sweep()
		case <-r.done:
			return
		}
	}
}

// sweep applies every lifetime at the configured clock's current time.
func (r *Relay) sweep() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	now := r.now()
	r.sweepExchanges(now)
	r.sweepClients(now)
}

// Close closes every client socket (1001 going away), stops delivery and
// waits for the relay's goroutines. Exchanges are memory-only and are lost;
// client records are already saved.
func (r *Relay) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	for s := range r.sockets {
		s.closeWith(websocket.StatusGoingAway, "relay closing")
	}
	close(r.done)
	r.mu.Unlock()
	r.wg.Wait()
	return nil
}
