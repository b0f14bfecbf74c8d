// SecretList, SecretUpload and PairingRemove (client-device protocol
// "Secret list", "Secret upload", "Pairing removal").
package device

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"agentknock.dev/agentknock/devkit/relay"
)

type secretMeta struct {
	Description string   `json:"description,omitempty"`
	Type        string   `json:"type"`
	Variables   []string `json:"variables,omitempty"`
	PublicKey   string   `json:"public_key,omitempty"`
}

// secretList answers with metadata only; it needs no approval because it
// releases no value.
func (d *Device) secretList(r *request) methodResult {
	out := map[string]secretMeta{}
	if err := d.transactFor(r, func(t *txn) error {
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		for name, s := range ss.Secrets {
			i := s.info(name)
			m := secretMeta{Description: i.Description, Type: i.Type, PublicKey: i.PublicKey, Variables: i.Variables}
			if m.Type == typeEnvironment && m.Variables == nil {
				m.Variables = []string{}
			}
			out[name] = m
		}
		return nil
	}); err != nil {
		return errorResult(errInvalidState, "secret store unavailable")
	}
	return methodResult{body: map[string]any{"secrets": out}, outcome: fmt.Sprintf("%d secrets", len(out))}
}

type uploadValueWire struct {
	Value *string `json:"value"`
}

type uploadSecretWire struct {
	Name        *string                      `json:"name"`
	Description *string                      `json:"description"`
	Type        *string                      `json:"type"`
	Variables   *map[string]*uploadValueWire `json:"variables"`
	PrivateKey  *string                      `json:"private_key"`
}

type uploadWire struct {
	Mode   *string           `json:"mode"`
	Secret *uploadSecretWire `json:"secret"`
}

func rejected(msg string) methodResult {
	return methodResult{body: map[string]string{"result": "REJECTED", "message": msg}, outcome: "REJECTED"}
}

// secretUpload queues a proposal for review. RECEIVED is fixed in the same
// transaction that queues it; anything wrong with the proposal is REJECTED
// at once with a message.
func (d *Device) secretUpload(r *request) methodResult {
	var w uploadWire
	if err := json.Unmarshal(r.plaintext, &w); err != nil {
		return errorResult(errInvalidRequest, "SecretUpload request: "+err.Error())
	}
	if w.Mode == nil || w.Secret == nil {
		return errorResult(errInvalidRequest, "mode and secret are required")
	}
	s := w.Secret
	if s.Name == nil || s.Type == nil {
		return errorResult(errInvalidRequest, "secret.name and secret.type are required")
	}
	mode := *w.Mode
	if mode != "CREATE" && mode != "UPDATE" && mode != "REPLACE" {
		return rejected(fmt.Sprintf("unknown mode %q", printable(mode)))
	}
	if err := validSecretName(*s.Name); err != nil {
		return rejected(err.Error())
	}
	up := &storedUpload{ID: newApprovalID(), ClientID: r.clientID, RequestID: r.requestID, Mode: mode,
		Name: *s.Name, Type: *s.Type, Description: s.Description}
	switch *s.Type {
	case typeEnvironment:
		if s.PrivateKey != nil {
			return rejected("an environment secret has no private_key")
		}
		if s.Variables == nil || len(*s.Variables) == 0 {
			return rejected("an environment secret needs a nonempty variables map")
		}
		up.Variables = map[string]string{}
		for k, v := range *s.Variables {
			if v == nil || v.Value == nil {
				return errorResult(errInvalidRequest, "every variable needs a string value")
			}
			up.Variables[k] = *v.Value
		}
		if err := validVars(up.Variables); err != nil {
			return rejected(err.Error())
		}
	case typeSSH:
		if s.Variables != nil {
			return rejected("an SSH secret has no variables")
		}
		if s.PrivateKey == nil {
			return rejected("an SSH secret upload needs private_key")
		}
		k, err := parseOpenSSHKey([]byte(*s.PrivateKey))
		if err != nil {
			return rejected(err.Error())
		}
		up.PrivateKey, up.PublicKey = k.pem, k.publicKey
	default:
		return rejected(fmt.Sprintf("unknown secret type %q", printable(*s.Type)))
	}
	var problem string
	if err := d.transactFor(r, func(t *txn) error {
		ss, err := t.secrets()
		if err == nil {
			problem = uploadProblem(ss, up)
		}
		return err
	}); err != nil {
		return errorResult(errInvalidState, "secret store unavailable")
	}
	if problem != "" {
		return rejected(problem)
	}
	return methodResult{body: map[string]string{"result": "RECEIVED"}, outcome: "RECEIVED upload " + up.ID,
		apply: func(t *txn, st *stateTx, now time.Time) error {
			if !clientActive(st, r.clientID) {
				return errStateChanged
			}
			ss, err := t.secrets()
			if err != nil {
				return err
			}
			if uploadProblem(ss, up) != "" {
				return errStateChanged
			}
			up.ReceivedAt = now
			ss.Uploads[up.ID] = up
			t.ssDirty = true
			return nil
		}}
}

// uploadProblem is why a proposal cannot apply to the current store, or "".
// CREATE always can (AcceptUpload picks a free name).
func uploadProblem(ss *secretStore, up *storedUpload) string {
	ex := ss.Secrets[up.Name]
	switch {
	case up.Mode == "CREATE":
		return ""
	case ex == nil:
		return fmt.Sprintf("there is no secret %q to %s", up.Name, strings.ToLower(up.Mode))
	case up.Mode == "UPDATE" && ex.Type != up.Type:
		return fmt.Sprintf("secret %q is of type %s, not %s", up.Name, ex.Type, up.Type)
	}
	return ""
}

// pairingRemove revokes the binding before the response is released. The
// relay is told only after the client's completion (or a grace period), since
// revoking there closes the client's connection and would drop the response.
func (d *Device) pairingRemove(r *request) methodResult {
	return methodResult{
		body:    map[string]string{},
		outcome: "removed",
		apply: func(t *txn, st *stateTx, now time.Time) error {
			if !clientActive(st, r.clientID) {
				return errStateChanged
			}
			return revokeIn(st, r.clientID, now)
		},
		before: func() { d.cancelClient(r.clientID) },
		after: func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.closed {
				return
			}
			d.goLocked(func() {
				select {
				case <-time.After(removalGrace):
					d.releaseRemoved(r.clientID)
				case <-d.ctx.Done():
				}
			})
		},
	}
}

// removalGrace is how long a removed client may still fetch the response
// and send its completion before the relay closes it.
const removalGrace = 30 * time.Second

// releaseRemoved tells the relay that a removed client is revoked.
func (d *Device) releaseRemoved(clientID string) {
	if p := d.publisher(); p != nil {
		if err := p.SetClientState(clientID, relay.ClientRevoked); err != nil && !errors.Is(err, relay.ErrUnknownClient) {
			d.logf("client %s: relay did not take the revoked state: %v", clientID, err)
		}
	}
}
