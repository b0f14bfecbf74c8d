// Client bindings seen from outside a running device: listing, revocation,
// and the relay's client records kept in state.json (relay.ClientStore).
// A binding's own state is authoritative over the relay's copy, so a
// revocation made while the relay was stopped survives its next Save.
package device

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

// ListClients lists active and revoked bindings and the pending pairing
// attempt (with its untrusted client-reported hostname), by pairing time.
func ListClients(stateDir string) ([]ClientInfo, error) {
	var out []ClientInfo
	err := transact(stateDir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		for _, b := range st.Clients {
			out = append(out, *b.info())
		}
		now := time.Now()
		for _, p := range st.Pairings {
			if p.pending() && now.Before(p.CreatedAt.Add(pairingTimeout)) {
				ci := ClientInfo{ClientID: p.ClientID, State: "pending", PairedAt: p.CreatedAt}
				if p.Metadata != nil {
					ci.Hostname = p.Metadata.Hostname
					if p.Metadata.Platform != nil {
						ci.Platform = *p.Metadata.Platform
					}
				}
				out = append(out, ci)
			}
		}
		return nil
	})
	slices.SortFunc(out, func(a, b ClientInfo) int {
		if c := a.PairedAt.Compare(b.PairedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ClientID, b.ClientID)
	})
	return out, err
}

// RevokeClient revokes an active binding (erasing its PSKs) or rejects a
// pending pairing attempt, and forgets the client's approved invocations. A
// running device notices on the client's next request; Device.Revoke also
// tells the relay.
func RevokeClient(stateDir, clientID string) error {
	return transact(stateDir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		if err := revokeIn(st, clientID, time.Now().UTC()); err != nil {
			return err
		}
		t.stDirty = true
		return nil
	})
}

// revokeIn is the revocation transition inside a transaction.
func revokeIn(st *deviceState, clientID string, now time.Time) error {
	found := false
	if b := st.Clients[clientID]; b != nil {
		found = true
		if b.State != bindRevoked {
			b.State = bindRevoked
			b.PSK, b.PreviousPSK, b.PreviousUntil = nil, nil, time.Time{}
			b.RevokedAt = &now
		}
	}
	if p := st.Pairings[clientID]; p != nil {
		found = true
		if p.pending() {
			// The pending PSK stays: it can now only authenticate a
			// PairingFinish, which gets REJECTED.
			p.Status = pairRejected
			p.DecidedAt = &now
		}
	}
	if !found {
		return fmt.Errorf("no client %s", clientID)
	}
	for id, inv := range st.Invocations {
		if inv.ClientID == clientID {
			delete(st.Invocations, id)
		}
	}
	for i := range st.RelayClients {
		if st.RelayClients[i].ClientID == clientID {
			st.RelayClients[i].State = relay.ClientRevoked
		}
	}
	return nil
}

// clientStore is the relay's record store inside state.json.
type clientStore struct{ dir string }

// authoritative overrides a relay record's state with what the device knows.
func authoritative(st *deviceState, recs []relay.ClientRecord) []relay.ClientRecord {
	out := slices.Clone(recs)
	for i := range out {
		if b := st.Clients[out[i].ClientID]; b != nil {
			switch b.State {
			case bindRevoked:
				out[i].State = relay.ClientRevoked
			case bindActive:
				if out[i].State == relay.ClientPending {
					out[i].State = relay.ClientActive
				}
			}
		}
	}
	return out
}

func (c clientStore) Load() ([]relay.ClientRecord, error) {
	var out []relay.ClientRecord
	err := transact(c.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		out = authoritative(st, st.RelayClients)
		return nil
	})
	return out, err
}

func (c clientStore) Save(recs []relay.ClientRecord) error {
	return transact(c.dir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		st.RelayClients = authoritative(st, recs)
		t.stDirty = true
		return nil
	})
}
