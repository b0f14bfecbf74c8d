// The persistent model of the state directory and the transaction helper
// through which every change goes: identity.json (written once by Init),
// state.db (bindings, pairing attempts, exchange idempotency state,
// approved invocations, relay client records; see db.go) and secrets.json
// (secrets and the upload review queue). One lock covers all three, so a
// transition that touches several records is serialized and each is old or
// new.
package device

import (
	"errors"
	"time"

	"go.etcd.io/bbolt"
)

// identity is the device's long-term identity (cryptosystem §10).
type identity struct {
	DeviceID    string    `json:"device_id"`
	PrivateKey  []byte    `json:"private_key"`
	PublicKey   []byte    `json:"public_key"`
	Address     string    `json:"address"`
	DeviceToken string    `json:"device_token"`
	CreatedAt   time.Time `json:"created_at"`
}

// softwareInfo is a client's app_info / lib_info.
type softwareInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// pairingMetadata is the client-reported pairing plaintext; untrusted until
// the SAS is accepted.
type pairingMetadata struct {
	AppInfo      *softwareInfo `json:"app_info"`
	LibInfo      *softwareInfo `json:"lib_info"`
	Platform     *string       `json:"platform"`
	Architecture *string       `json:"architecture"`
	Hostname     string        `json:"hostname,omitempty"`
	MachineID    string        `json:"machine_id,omitempty"`
	OSVersion    string        `json:"os_version,omitempty"`
}

// Pairing attempt states (cryptosystem §7.4).
const (
	pairAwaitCompletion = "awaiting-completion"
	pairAwaitSAS        = "awaiting-sas"
	pairAwaitActivation = "awaiting-activation"
	pairActive          = "active"
	pairRejected        = "rejected"
)

// pairingTimeout ends a pairing attempt that is not active this long after
// it began. It is the device's own policy (client traffic never releases the
// slot), so an abandoned attempt cannot block pairing forever.
const pairingTimeout = 30 * time.Minute

// activationTimeout ends a pairing that was confirmed on the device but
// that no client finished (`agentknock pairing finish`) this long after
// the confirmation: a client that went away after `pairing start` blocks
// new pairings only this long, not for the rest of pairingTimeout.
const activationTimeout = 5 * time.Minute

type pairingAttempt struct {
	ClientID     string           `json:"client_id"`
	Status       string           `json:"status"`
	Commitment   []byte           `json:"commitment"`
	DeviceRandom []byte           `json:"device_random"`
	Response     []byte           `json:"response"` // the fixed clear response, exact bytes
	PSK          []byte           `json:"psk,omitempty"`
	SAS          string           `json:"sas,omitempty"`
	Metadata     *pairingMetadata `json:"metadata,omitempty"`
	CreatedAt    time.Time        `json:"created_at"`
	DecidedAt    *time.Time       `json:"decided_at,omitempty"`
}

// deadline is when a pending attempt ends: pairingTimeout after it began,
// or activationTimeout after its confirmation if that comes first.
func (p *pairingAttempt) deadline() time.Time {
	end := p.CreatedAt.Add(pairingTimeout)
	if p.Status == pairAwaitActivation && p.DecidedAt != nil {
		end = minTime(end, p.DecidedAt.Add(activationTimeout))
	}
	return end
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func (p *pairingAttempt) pending() bool {
	switch p.Status {
	case pairAwaitCompletion, pairAwaitSAS, pairAwaitActivation:
		return true
	}
	return false
}

// Binding states; a pending binding lives in its pairing attempt.
const (
	bindActive  = "active"
	bindRevoked = "revoked"
)

// pskOverlap is how long the previous PSK still opens ordinary requests
// after a rotation (the phone app's choice).
const pskOverlap = 10 * time.Minute

type binding struct {
	ClientID      string           `json:"client_id"`
	State         string           `json:"state"`
	PSK           []byte           `json:"psk,omitempty"`
	PreviousPSK   []byte           `json:"previous_psk,omitempty"`
	PreviousUntil time.Time        `json:"previous_until,omitzero"`
	Metadata      *pairingMetadata `json:"metadata,omitempty"`
	PairedAt      time.Time        `json:"paired_at"`
	RotatedAt     *time.Time       `json:"rotated_at,omitempty"`
	RevokedAt     *time.Time       `json:"revoked_at,omitempty"`
}

func (b *binding) info() *ClientInfo {
	ci := &ClientInfo{ClientID: b.ClientID, State: b.State, PairedAt: b.PairedAt, RotatedAt: b.RotatedAt}
	if b.Metadata != nil {
		ci.Hostname = b.Metadata.Hostname
		if b.Metadata.Platform != nil {
			ci.Platform = *b.Metadata.Platform
		}
	}
	return ci
}

// Exchange processing states.
const (
	exProcessing = "processing"
	exResponded  = "responded"
)

// exchange is the idempotency state of one paired exchange (cryptosystem
// §5.6, §8): the PSK generation and request record needed to open the
// completion, and the exact response payload for redelivery.
type exchange struct {
	ClientID   string    `json:"client_id"`
	RequestID  string    `json:"request_id"`
	Method     string    `json:"method,omitempty"`
	Status     string    `json:"status"`
	PSK        []byte    `json:"psk,omitempty"`
	Enc        []byte    `json:"enc,omitempty"`
	Ciphertext []byte    `json:"ciphertext,omitempty"`
	Response   []byte    `json:"response,omitempty"` // exact payload bytes (Base64 in the file, so re-indenting cannot alter them)
	Completion string    `json:"completion,omitempty"`
	AcceptedAt time.Time `json:"accepted_at"`
}

// invocationRetention bounds how long an approved invocation can still
// authorize signature requests.
const invocationRetention = 7 * 24 * time.Hour

// invocation is an approved Invocation that later GitSign/SshAuthenticate
// requests refer to by request id and token.
type invocation struct {
	ID           string             `json:"id"`
	ClientID     string             `json:"client_id"`
	TokenHash    []byte             `json:"token_sha256"`
	Secrets      []string           `json:"secrets"`
	SSHSecret    string             `json:"ssh_secret,omitempty"`
	SSHPublicKey string             `json:"ssh_public_key,omitempty"`
	Details      *InvocationDetails `json:"details,omitempty"`
	ApprovedAt   time.Time          `json:"approved_at"`
}

func exchangeKey(clientID, requestID string) string { return clientID + "/" + requestID }

type storedSecret struct {
	Type        string            `json:"type"`
	Description string            `json:"description,omitempty"`
	Variables   map[string]string `json:"variables,omitempty"`
	PrivateKey  string            `json:"private_key,omitempty"`
	PublicKey   string            `json:"public_key,omitempty"`
	UpdatedAt   time.Time         `json:"updated_at"`
}

type storedUpload struct {
	ID          string            `json:"id"`
	ClientID    string            `json:"client_id"`
	RequestID   string            `json:"request_id"`
	Mode        string            `json:"mode"`
	Name        string            `json:"name"`
	Type        string            `json:"type"`
	Description *string           `json:"description,omitempty"`
	Variables   map[string]string `json:"variables,omitempty"`
	PrivateKey  string            `json:"private_key,omitempty"`
	PublicKey   string            `json:"public_key,omitempty"`
	ReceivedAt  time.Time         `json:"received_at"`
}

type secretStore struct {
	Secrets map[string]*storedSecret `json:"secrets"`
	Uploads map[string]*storedUpload `json:"uploads"`
}

// txn is one locked read-modify-write of the state directory: state.db
// through one bbolt write transaction, opened on first use, and
// secrets.json, loaded on first use and written back when marked dirty.
type txn struct {
	dir     string
	unlock  func()
	db      *bbolt.DB
	st      *stateTx
	ss      *secretStore
	ssDirty bool
}

func (t *txn) state() (*stateTx, error) {
	if t.st == nil {
		db, err := openDB(t.dir)
		if err != nil {
			return nil, err
		}
		tx, err := db.Begin(true)
		if err != nil {
			db.Close()
			return nil, err
		}
		t.db, t.st = db, newStateTx(tx)
	}
	return t.st, nil
}

func (t *txn) secrets() (*secretStore, error) {
	if t.ss == nil {
		ss := &secretStore{}
		if _, err := readJSON(t.dir, secretsFile, ss); err != nil {
			return nil, err
		}
		if ss.Secrets == nil {
			ss.Secrets = map[string]*storedSecret{}
		}
		if ss.Uploads == nil {
			ss.Uploads = map[string]*storedUpload{}
		}
		t.ss = ss
	}
	return t.ss, nil
}

// beginTxn takes the directory lock for a transaction; end or commit
// releases it.
func beginTxn(dir string) (*txn, error) {
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	return &txn{dir: dir, unlock: unlock}, nil
}

// end abandons what was not committed, closes the database and releases
// the lock.
func (t *txn) end() {
	if t.st != nil && t.st.tx.DB() != nil {
		t.st.tx.Rollback()
	}
	if t.db != nil {
		t.db.Close()
	}
	t.unlock()
}

// commit stores what the transaction changed, in one bbolt commit, and
// ends it.
func (t *txn) commit() error {
	defer t.end()
	if t.st != nil && t.st.err != nil {
		return t.st.err
	}
	// Secrets first: an upload is queued before the response that confirms
	// it is fixed in state.db.
	if t.ssDirty {
		if err := writeJSON(t.dir, secretsFile, t.ss); err != nil {
			return err
		}
	}
	if t.st != nil {
		return t.st.commit()
	}
	return nil
}

// transact runs fn under the directory lock and stores what it changed.
// Callers never call into the relay while inside fn: the relay holds its
// own lock while it saves client records here.
func transact(dir string, fn func(t *txn) error) error {
	t, err := beginTxn(dir)
	if err != nil {
		return err
	}
	if err := fn(t); err != nil {
		t.end()
		return err
	}
	return t.commit()
}

func loadIdentity(dir string) (*identity, error) {
	id := &identity{}
	ok, err := readJSON(dir, identityFile, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errors.New("state directory has no device identity; run init first")
	}
	return id, nil
}

func nowUTC() time.Time { return time.Now().UTC() }
