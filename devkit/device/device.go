// The running device: Open, the relay-facing Deliver queue, per-exchange
// workers and their cancellation, and publication of responses. Deliver
// never blocks on approval; each message gets a goroutine, and a completion
// waits only until its request has been accepted (or refused), never for the
// approval, so an ABORTED completion can cancel a pending decision.
package device

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

var _ relay.Device = (*Device)(nil)

// Device is a running software device.
type Device struct {
	dir      string
	id       *parsedIdentity
	approver Approver
	nowFn    func() time.Time
	logf     func(format string, args ...any)

	pubMu sync.RWMutex
	pub   Publisher

	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	live     map[string]*liveExchange      // by exchangeKey, while a request worker runs
	pairWait map[string]chan struct{}      // closed when that client's SAS decision is stored
	deciding map[string]context.CancelFunc // pairing decisions in progress, by client id
	// pairingOpening holds, per client id, a channel closed once a pairing
	// completion that Deliver accepted has been processed, so a
	// PairingFinish delivered right after it is not judged too early.
	pairingOpening map[string]chan struct{}
}

// liveExchange is the in-memory side of a request being processed.
type liveExchange struct {
	clientID string
	accepted chan struct{} // closed once the request is accepted or refused
	once     sync.Once
	ctx      context.Context // the approval context
	cancel   context.CancelFunc
	repeated int // duplicates that arrived meanwhile (guarded by Device.mu)
}

func (lx *liveExchange) acceptDone() { lx.once.Do(func() { close(lx.accepted) }) }

// Open loads the state directory and resumes pairing decisions that were
// waiting for a person when the device last stopped.
func Open(opts Options) (*Device, error) {
	if err := checkDir(opts.StateDir); err != nil {
		return nil, err
	}
	if opts.Approver == nil {
		return nil, errors.New("device: an Approver is required")
	}
	raw, err := loadIdentity(opts.StateDir)
	if err != nil {
		return nil, err
	}
	id, err := raw.parse()
	if err != nil {
		return nil, err
	}
	d := &Device{
		dir:      opts.StateDir,
		id:       id,
		approver: opts.Approver,
		nowFn:    opts.Now,
		logf:     opts.Logf,
		pub:      opts.Publisher,
		live:     map[string]*liveExchange{},
		pairWait: map[string]chan struct{}{},
		deciding: map[string]context.CancelFunc{},

		pairingOpening: map[string]chan struct{}{},
	}
	if d.nowFn == nil {
		d.nowFn = time.Now
	}
	if d.logf == nil {
		d.logf = func(string, ...any) {}
	}
	d.ctx, d.cancel = context.WithCancel(context.Background())

	var resume []string
	err = transact(d.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		now := d.now()
		st.eachPairing(func(p *pairingAttempt) {
			if p.Status == pairAwaitSAS && now.Before(p.CreatedAt.Add(pairingTimeout)) {
				resume = append(resume, p.ClientID)
			}
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	for _, cid := range resume {
		cid := cid
		d.goLocked(func() { d.decidePairing(cid) })
	}
	d.mu.Unlock()
	return d, nil
}

func (d *Device) now() time.Time { return d.nowFn().UTC() }

// SetPublisher sets where responses and client-state changes go.
func (d *Device) SetPublisher(p Publisher) {
	d.pubMu.Lock()
	d.pub = p
	d.pubMu.Unlock()
}

func (d *Device) publisher() Publisher {
	d.pubMu.RLock()
	defer d.pubMu.RUnlock()
	return d.pub
}

// Address is the pairing address.
func (d *Device) Address() string { return d.id.address }

// AddressID is the relay-visible pairing address id, in hex.
func (d *Device) AddressID() string { return d.id.addressID }

// DeviceID is the device's ULID.
func (d *Device) DeviceID() string { return d.id.deviceID.String() }

// ClientStore returns the relay.ClientStore kept in the state directory.
func (d *Device) ClientStore() relay.ClientStore { return clientStore{dir: d.dir} }

// Close stops accepting messages, cancels pending approvals and waits for
// the workers. Exchanges left unanswered stay accepted; a redelivery after
// the next Open gets an authenticated error instead of a second decision.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	d.mu.Unlock()
	d.cancel()
	d.wg.Wait()
	return nil
}

// Revoke revokes a client in the state directory, cancels its pending
// approvals and tells the relay, which closes the client's connections.
// UnfinishedPairings is UnfinishedPairings of the device's state.
func (d *Device) UnfinishedPairings() ([]string, error) { return UnfinishedPairings(d.dir, d.now()) }

func (d *Device) Revoke(clientID string) error {
	if err := RevokeClient(d.dir, clientID); err != nil {
		return err
	}
	d.cancelClient(clientID)
	d.logf("client %s revoked", clientID)
	if p := d.publisher(); p != nil {
		if err := p.SetClientState(clientID, relay.ClientRevoked); err != nil && !errors.Is(err, relay.ErrUnknownClient) {
			return fmt.Errorf("revoked in the state directory, but the relay refused: %w", err)
		}
	}
	return nil
}

func (d *Device) cancelClient(clientID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, lx := range d.live {
		if lx.clientID == clientID {
			lx.cancel()
		}
	}
	if cancel := d.deciding[clientID]; cancel != nil {
		cancel()
	}
}

// goLocked starts a worker; d.mu must be held and the device open.
func (d *Device) goLocked(f func()) {
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		f()
	}()
}

// Deliver implements relay.Device: it queues the message and returns nil
// quickly; processing (including waiting for approval) happens on a
// goroutine; the response goes out through Publisher.Respond.
func (d *Device) Deliver(m relay.Message) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errors.New("device: closed")
	}
	if m.DeviceID != "" && m.DeviceID != d.id.deviceID.String() {
		d.logf("dropped a %s for device %q, which is not this device", m.Kind, m.DeviceID)
		return nil
	}
	key := exchangeKey(m.ClientID, m.RequestID)
	switch m.Kind {
	case "request":
		if lx := d.live[key]; lx != nil {
			// The worker already handling this slot answers it; a second
			// worker would only race it for the same retained state. The
			// duplicate is answered from retained state once it is done.
			d.logf("request %s from client %s: duplicate while in progress", m.RequestID, m.ClientID)
			lx.repeated++
			return nil
		}
		ctx, cancel := context.WithCancel(d.ctx)
		lx := &liveExchange{clientID: m.ClientID, accepted: make(chan struct{}), ctx: ctx, cancel: cancel}
		d.live[key] = lx
		opening := d.pairingOpening[m.ClientID]
		d.goLocked(func() {
			if opening != nil {
				select {
				case <-opening:
				case <-d.ctx.Done():
				}
			}
			defer func() {
				lx.acceptDone()
				cancel()
				d.mu.Lock()
				delete(d.live, key)
				repeated := lx.repeated
				d.mu.Unlock()
				// Each copy gets its answer, the retained bytes, from this
				// worker (so a closing device still waits for it).
				for range repeated {
					d.handleRequest(m, &liveExchange{clientID: m.ClientID, accepted: make(chan struct{}), ctx: ctx, cancel: cancel})
				}
			}()
			d.handleRequest(m, lx)
		})
	case "completion":
		if m.ClientID == m.RequestID {
			done := make(chan struct{})
			d.pairingOpening[m.ClientID] = done
			d.goLocked(func() {
				accepted := d.handlePairingCompletion(m)
				d.mu.Lock()
				if d.pairingOpening[m.ClientID] == done {
					delete(d.pairingOpening, m.ClientID)
				}
				d.mu.Unlock()
				close(done)
				if accepted {
					d.decidePairing(m.ClientID)
				}
			})
			return nil
		}
		lx := d.live[key]
		d.goLocked(func() {
			if lx != nil {
				<-lx.accepted
			}
			d.handleCompletion(m, lx)
		})
	default:
		d.logf("dropped a message of unknown kind %q", m.Kind)
	}
	return nil
}

func (d *Device) handleRequest(m relay.Message, lx *liveExchange) {
	if m.AddressID != "" {
		lx.acceptDone()
		d.handlePairingRequest(m)
		return
	}
	d.handlePairedRequest(m, lx)
}

func (d *Device) handleCompletion(m relay.Message, lx *liveExchange) {
	d.handlePairedCompletion(m, lx)
}

// publish hands a response payload to the relay, once the approver's record
// of every decision so far is durable. Without a publisher the payload stays
// retained (when it is a protected response) for redelivery.
func (d *Device) publish(clientID, requestID string, payload json.RawMessage) {
	if dr, ok := d.approver.(DurableRecorder); ok {
		dr.RecordsDurable()
	}
	p := d.publisher()
	if p == nil {
		d.logf("request %s from client %s: no relay to answer through", requestID, clientID)
		return
	}
	if err := p.Respond(clientID, requestID, payload); err != nil {
		d.logf("request %s from client %s: relay refused the response: %v", requestID, clientID, err)
	}
}

func (d *Device) publishClear(clientID, requestID, code, msg string) {
	d.logf("request %s from client %s: refused (%s: %s)", requestID, clientID, code, msg)
	d.publish(clientID, requestID, clearError(code, msg))
}

func random32() []byte {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}

// newApprovalID is a short id a person can type: 8 lowercase Crockford
// characters (40 random bits).
func newApprovalID() string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	for i := range b {
		b[i] = strings.ToLower(crockford)[b[i]&31]
	}
	return string(b)
}
