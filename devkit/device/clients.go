// Client bindings seen from outside a running device: listing, revocation,
// and the relay's client records kept in state.db (relay.ClientStore).
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
		st.eachClient(func(b *binding) {
			out = append(out, *b.info())
		})
		now := time.Now()
		st.eachPairing(func(p *pairingAttempt) {
			if p.pending() && now.Before(p.deadline()) {
				ci := ClientInfo{ClientID: p.ClientID, State: "pending", PairedAt: p.CreatedAt}
				if p.Metadata != nil {
					ci.Hostname = p.Metadata.Hostname
					if p.Metadata.Platform != nil {
						ci.Platform = *p.Metadata.Platform
					}
				}
				out = append(out, ci)
			}
		})
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

// UnfinishedPairings lists the pairing attempts that hold the device's one
// pairing slot without a verification code for a person to compare: those
// confirmed on the device that no client has finished yet (`agentknock
// pairing finish`, until activationTimeout), and those still awaiting the
// client's completion (until pairingTimeout), which is where a client that
// went away, or a relay that forged the pairing response the client saw,
// leaves one, and one awaiting the code whose answer is on its way (the
// approver has decided, the state does not say so yet: under load the
// commit can trail the decision's log line). `agentknock-device pairing
// reject` ends them with RevokeClient.
func UnfinishedPairings(stateDir string, now time.Time) ([]string, error) {
	var ids []string
	err := transact(stateDir, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		st.eachPairing(func(p *pairingAttempt) {
			if p.pending() && now.Before(p.deadline()) {
				ids = append(ids, p.ClientID)
			}
		})
		return nil
	})
	return ids, err
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
		return revokeIn(st, clientID, time.Now().UTC())
	})
}

// revokeIn is the revocation transition inside a transaction.
func revokeIn(st *stateTx, clientID string, now time.Time) error {
	found := false
	if b := st.client(clientID); b != nil {
		found = true
		if b.State != bindRevoked {
			b.State = bindRevoked
			b.PSK, b.PreviousPSK, b.PreviousUntil = nil, nil, time.Time{}
			b.RevokedAt = &now
		}
	}
	if p := st.pairing(clientID); p != nil {
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
	st.deleteInvocationsOf(clientID)
	recs := st.relayClients()
	for i := range recs {
		if recs[i].ClientID == clientID {
			recs[i].State = relay.ClientRevoked
		}
	}
	return nil
}

// clientStore is the relay's record store inside state.db.
type clientStore struct{ dir string }

// authoritative overrides a relay record's state with what the device knows.
func authoritative(st *stateTx, recs []relay.ClientRecord) []relay.ClientRecord {
	out := slices.Clone(recs)
	for i := range out {
		if b := st.client(out[i].ClientID); b != nil {
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
		out = authoritative(st, st.relayClients())
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
		st.setRelayClients(authoritative(st, recs))
		return nil
	})
}
