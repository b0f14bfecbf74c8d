// Records of state.db inside one transaction (see db.go): typed access to
// bindings, pairing attempts, exchanges, invocations and the relay's client
// records. A record is decoded on first use and kept for the rest of the
// transaction, so a transition changes it in place; commit writes back only
// the records whose encoding changed, which keeps a request's writes to the
// few records it touched.
package device

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.etcd.io/bbolt"

	"agentknock.dev/agentknock/devkit/relay"
)

type stateTx struct {
	tx    *bbolt.Tx
	err   error // the first failure; the transaction then fails as a whole
	recs  map[string]*record
	wrote bool // the expiry index changed
}

// record is one decoded record of the transaction.
type record struct {
	bucket, key string
	stored      []byte // as read; nil when not read from the database
	v           any    // pointer to the decoded value
	gone        bool   // deleted
}

func newStateTx(tx *bbolt.Tx) *stateTx {
	return &stateTx{tx: tx, recs: map[string]*record{}}
}

func (s *stateTx) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func recordID(bucket, key string) string { return bucket + "\x00" + key }

func load[T any](s *stateTx, bucket, key string) *T {
	if r := s.recs[recordID(bucket, key)]; r != nil {
		if r.gone {
			return nil
		}
		return r.v.(*T)
	}
	if s.err != nil {
		return nil
	}
	raw := s.tx.Bucket([]byte(bucket)).Get([]byte(key))
	if raw == nil {
		return nil
	}
	v := new(T)
	if err := json.Unmarshal(raw, v); err != nil {
		s.fail(fmt.Errorf("%s: %s record %q: %w", dbFile, bucket, key, err))
		return nil
	}
	s.recs[recordID(bucket, key)] = &record{bucket: bucket, key: key, stored: bytes.Clone(raw), v: v}
	return v
}

func (s *stateTx) put(bucket, key string, v any) {
	if r := s.recs[recordID(bucket, key)]; r != nil {
		r.v, r.gone = v, false
		return
	}
	s.recs[recordID(bucket, key)] = &record{bucket: bucket, key: key, v: v}
}

func (s *stateTx) remove(bucket, key string) {
	if r := s.recs[recordID(bucket, key)]; r != nil {
		r.gone = true
		return
	}
	s.recs[recordID(bucket, key)] = &record{bucket: bucket, key: key, gone: true}
}

// each calls fn for every record of a bucket, those created in this
// transaction included, in key order.
func each[T any](s *stateTx, bucket string, fn func(*T)) {
	if s.err != nil {
		return
	}
	var keys []string
	c := s.tx.Bucket([]byte(bucket)).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		keys = append(keys, string(k))
	}
	for _, r := range s.recs {
		if r.bucket == bucket && r.stored == nil && !r.gone {
			keys = append(keys, r.key)
		}
	}
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if v := load[T](s, bucket, k); v != nil {
			fn(v)
		}
	}
}

// due adds an expiry entry.
func (s *stateTx) due(at time.Time, kind byte, key string) {
	if s.err != nil {
		return
	}
	b := s.tx.Bucket([]byte(bucketExpiry))
	b.FillPercent = 0.9
	if err := b.Put(dueKey(at, kind, key), []byte{}); err != nil {
		s.fail(err)
	}
	s.wrote = true
}

// commit writes the changed records and commits, or rolls back a
// transaction that changed nothing (no write, no fsync).
func (s *stateTx) commit() error {
	changed, err := s.flush()
	if err != nil {
		return err
	}
	if !changed {
		return s.tx.Rollback()
	}
	return s.tx.Commit()
}

// flush writes the records whose encoding changed into the transaction.
func (s *stateTx) flush() (changed bool, err error) {
	if s.err != nil {
		return false, s.err
	}
	changed = s.wrote
	for _, id := range slices.Sorted(maps.Keys(s.recs)) {
		r := s.recs[id]
		b := s.tx.Bucket([]byte(r.bucket))
		if r.bucket != bucketClients && r.bucket != bucketPairings {
			// Keys grow with time (per client), so most inserts append:
			// pages are filled rather than split in half.
			b.FillPercent = 0.9
		}
		if r.gone {
			if r.stored != nil || b.Get([]byte(r.key)) != nil {
				if err := b.Delete([]byte(r.key)); err != nil {
					return false, err
				}
				changed = true
			}
			continue
		}
		enc, err := json.Marshal(r.v)
		if err != nil {
			return false, err
		}
		if r.stored != nil && bytes.Equal(enc, r.stored) {
			continue
		}
		if err := b.Put([]byte(r.key), enc); err != nil {
			return false, err
		}
		changed = true
	}
	return changed, nil
}

func (s *stateTx) client(id string) *binding { return load[binding](s, bucketClients, id) }

func (s *stateTx) putClient(b *binding) { s.put(bucketClients, b.ClientID, b) }

func (s *stateTx) eachClient(fn func(*binding)) { each(s, bucketClients, fn) }

// rotated records that b's previous PSK overlap ends at b.PreviousUntil.
func (s *stateTx) rotated(b *binding) { s.due(b.PreviousUntil, dueOverlap, b.ClientID) }

func (s *stateTx) pairing(clientID string) *pairingAttempt {
	return load[pairingAttempt](s, bucketPairings, clientID)
}

func (s *stateTx) eachPairing(fn func(*pairingAttempt)) { each(s, bucketPairings, fn) }

// addPairing stores a new attempt with its deadline and retention.
func (s *stateTx) addPairing(p *pairingAttempt) {
	s.put(bucketPairings, p.ClientID, p)
	s.due(retentionEnd(p.ClientID), duePairing, p.ClientID)
	if p.pending() {
		s.due(p.CreatedAt.Add(pairingTimeout), dueTimeout, p.ClientID)
	}
}

func (s *stateTx) exchange(key string) *exchange { return load[exchange](s, bucketExchanges, key) }

// addExchange stores a newly accepted exchange with its retention.
func (s *stateTx) addExchange(ex *exchange) {
	key := exchangeKey(ex.ClientID, ex.RequestID)
	s.put(bucketExchanges, key, ex)
	s.due(retentionEnd(ex.RequestID), dueExchange, key)
}

func (s *stateTx) invocation(id string) *invocation {
	return load[invocation](s, bucketInvocations, id)
}

// addInvocation stores an approved invocation with its retention.
func (s *stateTx) addInvocation(inv *invocation) {
	s.put(bucketInvocations, inv.ID, inv)
	s.due(inv.ApprovedAt.Add(invocationRetention), dueInvocation, inv.ID)
}

func (s *stateTx) deleteInvocation(id string) { s.remove(bucketInvocations, id) }

// deleteInvocationsOf forgets every approved invocation of a client. It
// reads each record's client id without keeping the records, since a
// revocation looks at the whole retention window.
func (s *stateTx) deleteInvocationsOf(clientID string) {
	if s.err != nil {
		return
	}
	var owner struct {
		ClientID string `json:"client_id"`
	}
	var doomed []string
	c := s.tx.Bucket([]byte(bucketInvocations)).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if r := s.recs[recordID(bucketInvocations, string(k))]; r != nil {
			continue // looked at below
		}
		owner.ClientID = ""
		if err := json.Unmarshal(v, &owner); err != nil {
			s.fail(fmt.Errorf("%s: invocation %q: %w", dbFile, k, err))
			return
		}
		if owner.ClientID == clientID {
			doomed = append(doomed, string(k))
		}
	}
	for _, r := range s.recs {
		if r.bucket == bucketInvocations && !r.gone && r.v.(*invocation).ClientID == clientID {
			doomed = append(doomed, r.key)
		}
	}
	for _, id := range doomed {
		s.deleteInvocation(id)
	}
}

// relayRecords is the relay's client list as one record.
type relayRecords struct {
	Clients []relay.ClientRecord `json:"clients"`
}

func (s *stateTx) relayClients() []relay.ClientRecord {
	if r := load[relayRecords](s, bucketMeta, metaRelayClients); r != nil {
		return r.Clients
	}
	return nil
}

func (s *stateTx) setRelayClients(recs []relay.ClientRecord) {
	if r := load[relayRecords](s, bucketMeta, metaRelayClients); r != nil {
		r.Clients = recs
		return
	}
	s.put(bucketMeta, metaRelayClients, &relayRecords{Clients: recs})
}
