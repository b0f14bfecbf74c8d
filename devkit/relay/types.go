// Public types of the local relay: the in-process device side, client
// records and configuration. The device-facing side of a relay is left open
// by docs/client-relay-protocol.md ("The device-facing relay protocol is
// outside this document"); this package fixes it as a Go interface.

package relay

import (
	"encoding/json"
	"errors"
	"time"
)

// ClientState is the device-controlled state of one client record.
type ClientState string

const (
	ClientPending   ClientState = "pending"
	ClientActive    ClientState = "active"
	ClientSuspended ClientState = "suspended"
	ClientRevoked   ClientState = "revoked"
)

func (s ClientState) valid() bool {
	switch s {
	case ClientPending, ClientActive, ClientSuspended, ClientRevoked:
		return true
	}
	return false
}

// Message is one client message the relay accepted, handed on unread.
type Message struct {
	DeviceID  string
	AddressID string // set only for initial-pairing requests
	ClientID  string
	RequestID string
	Kind      string          // "request" or "completion"
	Payload   json.RawMessage // opaque
}

// Device is the device side. Deliver is called once per accepted message
// identity, in request-before-completion order per exchange, from a relay
// goroutine; it must not block for long (the device queues work). A nil
// return means the device accepted responsibility: the relay marks the
// message delivered and sends `receipt`. A non-nil return: retry delivery
// later (with backoff) while the exchange lives.
//
// This relay makes every Deliver call from one goroutine, so calls never
// overlap; Deliver may call Respond and SetClientState.
type Device interface {
	Deliver(m Message) error
}

// ClientRecord is what the relay knows about one client. It never holds the
// raw client token, only its SHA-256.
type ClientRecord struct {
	DeviceID  string      `json:"device_id"`
	ClientID  string      `json:"client_id"`
	AddressID string      `json:"address_id,omitempty"`
	TokenHash string      `json:"token_sha256"` // hex SHA-256 of the raw token string
	State     ClientState `json:"state"`
	CreatedAt time.Time   `json:"created_at"`
}

// ClientStore persists client records across relay restarts (the device
// program keeps them in its state directory). Save gets the full list.
// The relay calls Save while holding its own lock, so a store must not call
// back into the Relay.
type ClientStore interface {
	Load() ([]ClientRecord, error)
	Save([]ClientRecord) error
}

// Config configures a Relay.
type Config struct {
	Device    Device
	Store     ClientStore                                       // nil: memory only
	Addresses func(addressID string) (deviceID string, ok bool) // nil: no pairing address resolves
	Now       func() time.Time                                  // nil: time.Now
	MaxAge    time.Duration                                     // request id admission; 0: 5m
	MaxAhead  time.Duration                                     // 0: 1m
	Logf      func(format string, args ...any)                  // nil: silent; never logs payloads or tokens
	Faults    *Faults                                           // nil: none; for tests only
}

// Errors returned by Respond and SetClientState.
var (
	ErrUnknownExchange  = errors.New("relay: unknown exchange")
	ErrExchangeInactive = errors.New("relay: exchange is no longer active")
	ErrUnknownClient    = errors.New("relay: unknown client")
	ErrClosed           = errors.New("relay: closed")
)
