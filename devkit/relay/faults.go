// Fault injection, for end-to-end tests only: the relay misbehaves on
// purpose the way an untrusted relay may ("Security properties" in
// docs/client-relay-protocol.md: it can drop, duplicate, replay or forge).
// The response rules are the only place the relay looks inside a payload.

package relay

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Faults makes the relay misbehave on purpose, each rule firing Count times
// (0 = every time) for frames matching Kind ("" = any). Test use only.
type Faults struct{ Rules []FaultRule }

// FaultRule is one kind of misbehaviour.
type FaultRule struct {
	Action string // "drop-before-ack": close the client socket after reading a
	//   client message, before storing/acking it;
	// "drop-after-ack": store+ack the message, then close the socket
	//   before receipt;
	// "duplicate-response": send each response frame twice;
	// "corrupt-response": flip one bit of the base64-decoded
	//   `ciphertext` member of a response payload (re-encoded);
	// "forge-error": replace the response payload with a clear
	//   {"error":"UNSUPPORTED_PROTOCOL_VERSION","message":"forged by relay"};
	// "replay-response": deliver, for a new exchange, the previous
	//   exchange's response payload instead of waiting for the device
	//   (the client must reject it).
	Kind  string
	Count int
}

const (
	faultDropBeforeAck     = "drop-before-ack"
	faultDropAfterAck      = "drop-after-ack"
	faultDuplicateResponse = "duplicate-response"
	faultCorruptResponse   = "corrupt-response"
	faultForgeError        = "forge-error"
	faultReplayResponse    = "replay-response"
)

// faultKinds lists, per action, the frame kinds it can match: the drops act
// on client messages, the rest on device responses.
var faultKinds = map[string][]string{
	faultDropBeforeAck:     {kindRequest, kindCompletion},
	faultDropAfterAck:      {kindRequest, kindCompletion},
	faultDuplicateResponse: {kindResponse},
	faultCorruptResponse:   {kindResponse},
	faultForgeError:        {kindResponse},
	faultReplayResponse:    {kindResponse},
}

// ParseFaults reads rules written as ACTION[:KIND[:COUNT]], comma-separated,
// e.g. "drop-before-ack:request:1,corrupt-response::1". An empty spec
// returns nil, which means no faults.
func ParseFaults(spec string) (*Faults, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, nil
	}
	f := &Faults{}
	for _, item := range strings.Split(spec, ",") {
		parts := strings.Split(strings.TrimSpace(item), ":")
		if len(parts) > 3 {
			return nil, fmt.Errorf("relay: fault %q: want ACTION[:KIND[:COUNT]]", item)
		}
		rule := FaultRule{Action: parts[0]}
		if len(parts) > 1 {
			rule.Kind = parts[1]
		}
		if len(parts) > 2 && parts[2] != "" {
			n, err := strconv.Atoi(parts[2])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("relay: fault %q: count must be a non-negative integer", item)
			}
			rule.Count = n
		}
		if err := rule.check(); err != nil {
			return nil, err
		}
		f.Rules = append(f.Rules, rule)
	}
	return f, nil
}

func (fr FaultRule) check() error {
	kinds, ok := faultKinds[fr.Action]
	if !ok {
		return fmt.Errorf("relay: unknown fault action %q", fr.Action)
	}
	if fr.Count < 0 {
		return fmt.Errorf("relay: fault %s: negative count", fr.Action)
	}
	if fr.Kind == "" {
		return nil
	}
	for _, k := range kinds {
		if k == fr.Kind {
			return nil
		}
	}
	return fmt.Errorf("relay: fault %s cannot match kind %q", fr.Action, fr.Kind)
}

// faultState is a relay's own copy of a rule with its firing count, so a
// Faults value shared by several relays is never mutated.
type faultState struct {
	rule  FaultRule
	fired int
}

// fire reports whether a rule for action matches kind and still has firings
// left, and uses one. Called with Relay.mu held.
func (r *Relay) fire(action, kind string) bool {
	for i := range r.faults {
		fs := &r.faults[i]
		if fs.rule.Action != action || (fs.rule.Kind != "" && fs.rule.Kind != kind) {
			continue
		}
		if fs.rule.Count != 0 && fs.fired >= fs.rule.Count {
			continue
		}
		fs.fired++
		return true
	}
	return false
}

// peek is fire without using a firing, for rules that may not apply.
func (r *Relay) peek(action string) bool {
	for _, fs := range r.faults {
		if fs.rule.Action == action && (fs.rule.Count == 0 || fs.fired < fs.rule.Count) {
			return true
		}
	}
	return false
}

func (r *Relay) hasReplayRule() bool {
	for _, fs := range r.faults {
		if fs.rule.Action == faultReplayResponse {
			return true
		}
	}
	return false
}

// lastResponse is the most recent genuine response for a client, kept only
// while a replay-response rule exists.
type lastResponse struct {
	requestID string
	payload   json.RawMessage
}

var forgedError = json.RawMessage(`{"error":"UNSUPPORTED_PROTOCOL_VERSION","message":"forged by relay"}`)

// tamperResponse applies forge-error and corrupt-response to a response
// payload as the device publishes it, so every copy the relay sends is the
// same tampered value.
func (r *Relay) tamperResponse(payload json.RawMessage) json.RawMessage {
	if len(r.faults) == 0 {
		return payload
	}
	if r.fire(faultForgeError, kindResponse) {
		r.logf("relay: fault forge-error applied")
		return forgedError
	}
	if r.peek(faultCorruptResponse) {
		if out, ok := flipCiphertextBit(payload); ok && r.fire(faultCorruptResponse, kindResponse) {
			r.logf("relay: fault corrupt-response applied")
			return out
		}
	}
	return payload
}

// flipCiphertextBit flips the low bit of the middle byte of the decoded
// `ciphertext` member. A payload without one (a clear report, the initial
// pairing response) is left alone and does not use up the rule.
func flipCiphertextBit(payload json.RawMessage) (json.RawMessage, bool) {
	var members map[string]json.RawMessage
	if json.Unmarshal(payload, &members) != nil {
		return nil, false
	}
	var ct string
	raw, ok := members["ciphertext"]
	if !ok || json.Unmarshal(raw, &ct) != nil {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(ct)
	if err != nil || len(b) == 0 {
		return nil, false
	}
	b[len(b)/2] ^= 1
	enc, _ := json.Marshal(base64.StdEncoding.EncodeToString(b))
	members["ciphertext"] = enc
	out, err := json.Marshal(members)
	if err != nil {
		return nil, false
	}
	return out, true
}
