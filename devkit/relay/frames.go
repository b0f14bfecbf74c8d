// Frame encoding for the client-relay protocol v1 ("Frame encoding" through
// "Error frame" in docs/client-relay-protocol.md): strict parsing of the
// three frames a client may send and encoding of the six the relay sends.

package relay

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// MaxFrameSize is the largest encoded WebSocket frame either side accepts.
const MaxFrameSize = 256 << 10

const (
	kindRequest    = "request"
	kindResponse   = "response"
	kindCompletion = "completion"
)

// clientFrame is a validated frame from a client.
type clientFrame struct {
	Type      string // "message", "ack" or "resume"
	ClientID  string
	RequestID string
	Kind      string          // message: request|completion; ack: response
	Payload   json.RawMessage // message only; may be the literal null
}

// frameError explains why a client frame is invalid. Its text goes back to
// the client in an INVALID_FRAME error, so it never quotes frame contents.
type frameError string

func (e frameError) Error() string { return string(e) }

// parseClientFrame validates one text frame from a client. Unknown members
// are ignored; everything the doc makes required is checked for presence
// and JSON type, and frames only the relay may send are refused.
func parseClientFrame(data []byte) (clientFrame, error) {
	var f clientFrame
	if !utf8.Valid(data) {
		return f, frameError("The frame is not valid UTF-8.")
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil || members == nil {
		return f, frameError("The frame is not a JSON object.")
	}
	var err error
	if f.Type, err = stringMember(members, "type"); err != nil {
		return f, err
	}
	switch f.Type {
	case "message", "ack", "resume":
	case "receipt", "state", "inactive", "error":
		return f, frameError("A client cannot send a " + f.Type + " frame.")
	default:
		return f, frameError("The frame type is unknown.")
	}
	if f.ClientID, err = idMember(members, "client_id"); err != nil {
		return f, err
	}
	if f.RequestID, err = idMember(members, "request_id"); err != nil {
		return f, err
	}
	switch f.Type {
	case "message":
		if f.Kind, err = stringMember(members, "kind"); err != nil {
			return f, err
		}
		switch f.Kind {
		case kindRequest, kindCompletion:
		case kindResponse:
			return f, frameError("A client cannot publish a response.")
		default:
			return f, frameError("The message kind is unknown.")
		}
		p, ok := members["payload"]
		if !ok {
			return f, frameError("The message has no payload.")
		}
		f.Payload = bytes.Clone(p)
	case "ack":
		if f.Kind, err = stringMember(members, "kind"); err != nil {
			return f, err
		}
		switch f.Kind {
		case kindResponse:
		case kindRequest, kindCompletion:
			return f, frameError("A client can acknowledge only a response.")
		default:
			return f, frameError("The acknowledged kind is unknown.")
		}
	}
	return f, nil
}

// stringMember returns a required JSON string member. A JSON null would
// decode into "" without error, so the leading quote is checked first.
func stringMember(m map[string]json.RawMessage, name string) (string, error) {
	raw, ok := m[name]
	if !ok {
		return "", frameError("The frame has no " + name + " member.")
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", frameError("The " + name + " member is not a string.")
	}
	return s, nil
}

func idMember(m map[string]json.RawMessage, name string) (string, error) {
	s, err := stringMember(m, name)
	if err != nil {
		return "", err
	}
	if !validULID(s) {
		return "", frameError("The " + name + " member is not a canonical ULID.")
	}
	return s, nil
}

// relayFrame is any frame the relay sends; omitempty leaves out the members
// a frame type does not carry.
type relayFrame struct {
	Type         string          `json:"type"`
	ClientID     string          `json:"client_id,omitempty"`
	RequestID    string          `json:"request_id,omitempty"`
	Kind         string          `json:"kind,omitempty"`
	Payload      json.RawMessage `json:"payload,omitempty"`
	Exchange     string          `json:"exchange,omitempty"`
	Request      string          `json:"request,omitempty"`
	Response     string          `json:"response,omitempty"`
	Completion   string          `json:"completion,omitempty"`
	Error        string          `json:"error,omitempty"`
	Message      *string         `json:"message,omitempty"`
	Retryable    *bool           `json:"retryable,omitempty"`
	RetryAfterMS int64           `json:"retry_after_ms,omitempty"`
}

func encodeFrame(f relayFrame) []byte {
	b, err := json.Marshal(f)
	if err != nil {
		// Only an invalid payload could fail, and payloads are validated
		// before they are stored.
		panic("relay: encoding a frame: " + err.Error())
	}
	return b
}

func messageFrame(clientID, requestID string, payload json.RawMessage) []byte {
	// omitempty would drop an empty RawMessage, but a stored payload is
	// never empty: the literal null is four bytes.
	return encodeFrame(relayFrame{Type: "message", ClientID: clientID, RequestID: requestID, Kind: kindResponse, Payload: payload})
}

func ackFrame(clientID, requestID, kind string) []byte {
	return encodeFrame(relayFrame{Type: "ack", ClientID: clientID, RequestID: requestID, Kind: kind})
}

func receiptFrame(clientID, requestID, kind string) []byte {
	return encodeFrame(relayFrame{Type: "receipt", ClientID: clientID, RequestID: requestID, Kind: kind})
}

func inactiveFrame(clientID, requestID string) []byte {
	return encodeFrame(relayFrame{Type: "inactive", ClientID: clientID, RequestID: requestID})
}

func stateFrame(clientID, requestID string, s snapshot) []byte {
	return encodeFrame(relayFrame{
		Type: "state", ClientID: clientID, RequestID: requestID,
		Exchange: string(s.exchange), Request: string(s.request),
		Response: string(s.response), Completion: string(s.completion),
	})
}

// errorFrame builds an error frame; ids and kind are included when known.
func errorFrame(clientID, requestID, kind, code, message string, retryable bool, retryAfterMS int64) []byte {
	return encodeFrame(relayFrame{
		Type: "error", ClientID: clientID, RequestID: requestID, Kind: kind,
		Error: code, Message: &message, Retryable: &retryable, RetryAfterMS: retryAfterMS,
	})
}

var errPayloadTooLarge = errors.New("relay: response payload does not fit in one frame")

// ResponseFrameSize is the size of the frame that carries a response
// payload to the client; the relay accepts it only up to MaxFrameSize.
func ResponseFrameSize(clientID, requestID string, payload json.RawMessage) int {
	return len(messageFrame(clientID, requestID, payload))
}

// checkPayload verifies that a device payload is one JSON value and that the
// frame carrying it stays within MaxFrameSize, since a client would close
// the socket with 1009 on a larger one.
func checkPayload(clientID, requestID string, payload json.RawMessage) error {
	if len(bytes.TrimSpace(payload)) == 0 || !json.Valid(payload) {
		return errors.New("relay: payload is not a JSON value")
	}
	if len(messageFrame(clientID, requestID, payload)) > MaxFrameSize {
		return errPayloadTooLarge
	}
	return nil
}
