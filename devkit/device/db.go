// The state database, state.db in the state directory (go.etcd.io/bbolt,
// https://github.com/etcd-io/bbolt): bindings, pairing attempts, the
// idempotency state of paired exchanges (cryptosystem §5.6, §8), approved
// invocations and the relay's client records, one JSON record per key, and
// an expiry index through which retained records are pruned a few at a
// time. A request reads and rewrites a bounded number of pages however many
// exchanges the device retains, where the earlier single state.json was
// decoded, re-encoded and rewritten whole three times per request. A
// state.json left by an earlier version is imported on first use and then
// renamed to state.json.migrated.
package device

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"go.etcd.io/bbolt"

	"agentknock.dev/agentknock/devkit/relay"
)

const (
	dbFile       = "state.db"
	legacyFile   = "state.json"          // the whole-document state of earlier versions
	migratedFile = "state.json.migrated" // legacyFile once state.db holds its contents
)

// Buckets of state.db.
const (
	bucketClients     = "clients"     // client id -> binding
	bucketPairings    = "pairings"    // client id -> pairing attempt
	bucketExchanges   = "exchanges"   // exchangeKey -> exchange
	bucketInvocations = "invocations" // request id -> invocation
	bucketExpiry      = "expiry"      // due time, kind, key -> empty
	bucketMeta        = "meta"        // metaSchema, metaRelayClients
)

const (
	metaSchema       = "schema"
	metaRelayClients = "relay_clients"
	schemaVersion    = "1"
)

func bucketNames() []string {
	return []string{bucketClients, bucketPairings, bucketExchanges, bucketInvocations, bucketExpiry, bucketMeta}
}

// dbLockTimeout bounds the wait for bbolt's own file lock. Every opener
// holds the directory lock first, so the wait only ends early when a
// foreign process holds state.db.
const dbLockTimeout = 10 * time.Second

// openDB opens state.db, creating it (and importing a legacy state.json)
// when it does not exist yet. The caller holds the directory lock, which is
// why the database is opened per transaction rather than kept open: bbolt
// locks its file for as long as it is open, and the command-line tools read
// and change the state while `serve` runs.
//
// The freelist stays synced (NoFreelistSync off): without it every open
// would rebuild the freelist by walking the whole file, a cost proportional
// to the retained history. Commits keep bbolt's two fdatasyncs (pages, then
// the meta page), the ordering that makes a commit atomic across power loss.
func openDB(dir string) (*bbolt.DB, error) {
	path := filepath.Join(dir, dbFile)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		if err := createDB(dir); err != nil {
			return nil, fmt.Errorf("creating %s: %w", dbFile, err)
		}
	} else if err != nil {
		return nil, err
	}
	db, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: dbLockTimeout})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dbFile, err)
	}
	// A migration interrupted after state.db was in place: the database is
	// authoritative, so the old file only has to be set aside.
	if err := setLegacyAside(dir); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// createDB builds state.db under a temporary name, with the contents of
// state.json when there is one, and renames it into place once committed.
// Until then state.json is untouched, so a failure at any point leaves the
// directory as it was (a stray temporary database is removed by the next
// attempt).
func createDB(dir string) (err error) {
	var doc *stateDocument
	raw, err := os.ReadFile(filepath.Join(dir, legacyFile))
	switch {
	case err == nil:
		doc = &stateDocument{}
		if err := json.Unmarshal(raw, doc); err != nil {
			return fmt.Errorf("%s: %w", legacyFile, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	stale, _ := filepath.Glob(filepath.Join(dir, "."+dbFile+".tmp-*"))
	for _, s := range stale {
		os.Remove(s)
	}
	f, err := os.CreateTemp(dir, "."+dbFile+".tmp-*") // created 0600
	if err != nil {
		return err
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
		}
	}()
	db, err := bbolt.Open(tmp, 0o600, &bbolt.Options{Timeout: dbLockTimeout})
	if err != nil {
		return err
	}
	err = db.Update(func(tx *bbolt.Tx) error {
		for _, name := range bucketNames() {
			if _, err := tx.CreateBucket([]byte(name)); err != nil {
				return err
			}
		}
		if err := tx.Bucket([]byte(bucketMeta)).Put([]byte(metaSchema), []byte(schemaVersion)); err != nil {
			return err
		}
		if doc == nil {
			return nil
		}
		s := newStateTx(tx)
		s.importDocument(doc)
		_, err := s.flush()
		return err
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if err = os.Rename(tmp, filepath.Join(dir, dbFile)); err != nil {
		return err
	}
	if err = syncDir(dir); err != nil {
		return err
	}
	return setLegacyAside(dir)
}

// setLegacyAside renames an imported state.json so that it is neither read
// again nor lost.
func setLegacyAside(dir string) error {
	legacy := filepath.Join(dir, legacyFile)
	if _, err := os.Lstat(legacy); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err := os.Rename(legacy, filepath.Join(dir, migratedFile)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// stateDocument is the whole-document layout of state.json, read only to
// migrate it.
type stateDocument struct {
	Clients      map[string]*binding        `json:"clients"`
	Pairings     map[string]*pairingAttempt `json:"pairings"`
	Exchanges    map[string]*exchange       `json:"exchanges"`
	Invocations  map[string]*invocation     `json:"invocations"`
	RelayClients []relay.ClientRecord       `json:"relay_clients"`
}

// importDocument stores every record of a state.json with its expiry
// entries. Records already past their retention are imported too and go
// with the next prunes, as they would have in the old file.
func (s *stateTx) importDocument(doc *stateDocument) {
	for _, b := range doc.Clients {
		s.putClient(b)
		if b.PreviousPSK != nil {
			s.due(b.PreviousUntil, dueOverlap, b.ClientID)
		}
	}
	for _, p := range doc.Pairings {
		s.addPairing(p)
	}
	for key, ex := range doc.Exchanges {
		if key != exchangeKey(ex.ClientID, ex.RequestID) {
			s.fail(fmt.Errorf("%s: exchange %q does not match its ids", legacyFile, key))
			return
		}
		s.addExchange(ex)
	}
	for id, inv := range doc.Invocations {
		if id != inv.ID {
			s.fail(fmt.Errorf("%s: invocation %q does not match its id", legacyFile, id))
			return
		}
		s.addInvocation(inv)
	}
	if doc.RelayClients != nil {
		s.setRelayClients(doc.RelayClients)
	}
}

// Kinds of expiry entries. An entry's key is the due time (milliseconds
// since 1970, big endian, rounded up), the kind and the record key, so a
// cursor from the start meets due entries first.
const (
	dueExchange   = 'x' // a responded exchange whose request id can no longer be fresh
	dueInvocation = 'i' // an approved invocation past invocationRetention
	duePairing    = 'p' // a finished pairing attempt whose client id can no longer be fresh
	dueTimeout    = 't' // a pending pairing attempt reaching pairingTimeout
	dueOverlap    = 'k' // the end of a rotation's previous-PSK overlap
)

func dueKey(at time.Time, kind byte, key string) []byte {
	ms := max((at.UnixNano()+int64(time.Millisecond)-1)/int64(time.Millisecond), 0)
	k := make([]byte, 9, 9+len(key))
	binary.BigEndian.PutUint64(k, uint64(ms))
	k[8] = kind
	return append(k, key...)
}

// retentionEnd is when an exchange or a finished pairing attempt keyed by
// id may go: a request id older than the freshness window can never be
// accepted as new again, so its retained response cannot matter any more
// (cryptosystem §5.6). An hour of margin covers clock adjustments. An id
// that does not parse is due at once.
func retentionEnd(id string) time.Time {
	u, err := parseULID(id)
	if err != nil {
		return time.Unix(0, 0)
	}
	return u.time().Add(freshBack + time.Hour)
}

// pruneBatch bounds how many due entries one accepting transition
// handles, so a backlog (a device that was off for days, a migrated file)
// drains over several requests instead of stalling one.
const pruneBatch = 32

// prune drops idempotency state that can no longer matter and ends expired
// overlaps and pairing attempts, at most limit entries of the expiry index;
// it reports whether more were due.
func prune(s *stateTx, now time.Time, limit int) bool {
	if s.err != nil {
		return false
	}
	idx := s.tx.Bucket([]byte(bucketExpiry))
	var due [][]byte
	c := idx.Cursor()
	for k, _ := c.First(); k != nil && len(due) <= limit; k, _ = c.Next() {
		if len(k) >= 9 && !time.UnixMilli(int64(binary.BigEndian.Uint64(k))).Before(now) {
			break
		}
		due = append(due, bytes.Clone(k))
	}
	more := len(due) > limit
	if more {
		due = due[:limit]
	}
	for _, k := range due {
		if err := idx.Delete(k); err != nil {
			s.fail(err)
			return false
		}
		s.wrote = true
		if len(k) >= 9 {
			s.expire(k[8], string(k[9:]), now)
		}
	}
	return more
}

// expire applies one due entry. Each rule is checked against the record
// itself; an entry that turns out early is put back at the right time.
func (s *stateTx) expire(kind byte, key string, now time.Time) {
	switch kind {
	case dueExchange:
		ex := s.exchange(key)
		switch {
		case ex == nil:
		case ex.Status == exProcessing:
			// Kept until answered (a redelivery after a restart gets an
			// authenticated error); looked at again later.
			s.due(now.Add(time.Hour), dueExchange, key)
		case retentionEnd(ex.RequestID).Before(now):
			s.remove(bucketExchanges, key)
		default:
			s.due(retentionEnd(ex.RequestID), dueExchange, key)
		}
	case dueInvocation:
		if inv := s.invocation(key); inv != nil {
			if end := inv.ApprovedAt.Add(invocationRetention); end.Before(now) {
				s.remove(bucketInvocations, key)
			} else {
				s.due(end, dueInvocation, key)
			}
		}
	case duePairing:
		p := s.pairing(key)
		switch {
		case p == nil:
		case p.pending():
			s.due(now.Add(time.Hour), duePairing, key)
		case retentionEnd(p.ClientID).Before(now):
			s.remove(bucketPairings, key)
		default:
			s.due(retentionEnd(p.ClientID), duePairing, key)
		}
	case dueTimeout:
		if p := s.pairing(key); p != nil && p.pending() {
			if end := p.deadline(); now.After(end) {
				p.Status = pairRejected
				p.DecidedAt = &now
			} else {
				s.due(end, dueTimeout, key)
			}
		}
	case dueOverlap:
		if b := s.client(key); b != nil && b.PreviousPSK != nil {
			if !now.Before(b.PreviousUntil) {
				b.PreviousPSK, b.PreviousUntil = nil, time.Time{}
			} else {
				s.due(b.PreviousUntil, dueOverlap, key)
			}
		}
	}
}
