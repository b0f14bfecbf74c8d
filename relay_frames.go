// relay_frames.go: frame encoding for the client (Agentknock v1
// client-relay-protocol.md, "Frame encoding" through "Error frame" in
// client-relay-protocol.md): the frames a client sends, strict parsing of
// the frames a relay may send, and sanitizing of relay-supplied text and
// retry delays.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode"
)

type relayOutFrame struct {
	Type      string          `json:"type"`
	ClientID  string          `json:"client_id"`
	RequestID string          `json:"request_id"`
	Kind      string          `json:"kind,omitempty"`
	Payload   json.RawMessage `json:"payload,omitempty"`
}

// messageFrame is the message frame of one exchange (its client and
// request ids) carrying payload.
func messageFrame(clientID, requestID, kind string, payload json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(payload)) == 0 || !json.Valid(payload) {
		return nil, fmt.Errorf("relay exchange: the %s payload is not valid JSON", kind)
	}
	frame, err := json.Marshal(relayOutFrame{Type: "message", ClientID: clientID, RequestID: requestID, Kind: kind, Payload: payload})
	if err != nil {
		return nil, err
	}
	if len(frame) > relayMaxFrame {
		return nil, fmt.Errorf("relay exchange: the %s frame is %d bytes, over the relay's 256 KiB frame limit", kind, len(frame))
	}
	return frame, nil
}

// controlFrame is an ack or resume frame of one exchange.
func controlFrame(clientID, requestID, typ, kind string) []byte {
	// A struct of strings always encodes.
	frame, _ := json.Marshal(relayOutFrame{Type: typ, ClientID: clientID, RequestID: requestID, Kind: kind})
	return frame
}

// relayFrame is any frame the relay may send. Pointers distinguish a missing
// member from an empty one; a member of the wrong JSON type fails decoding.
type relayFrame struct {
	Type         string          `json:"type"`
	ClientID     *string         `json:"client_id"`
	RequestID    *string         `json:"request_id"`
	Kind         *string         `json:"kind"`
	Payload      json.RawMessage `json:"payload"` // "null" is a present payload
	Exchange     *string         `json:"exchange"`
	Request      *string         `json:"request"`
	Response     *string         `json:"response"`
	Completion   *string         `json:"completion"`
	Error        *string         `json:"error"`
	Message      *string         `json:"message"`
	Retryable    *bool           `json:"retryable"`
	RetryAfterMS *uint64         `json:"retry_after_ms"`
}

// parseRelayFrame accepts only frames a relay may send to a client, with
// every required member; anything else is discarded by the caller.
func parseRelayFrame(data []byte) (*relayFrame, bool) {
	var f relayFrame
	if json.Unmarshal(data, &f) != nil {
		return nil, false
	}
	in := func(p *string, values ...string) bool {
		if p == nil {
			return false
		}
		for _, v := range values {
			if *p == v {
				return true
			}
		}
		return false
	}
	ids := f.ClientID != nil && f.RequestID != nil
	message := []string{"absent", "accepted", "delivered", "discarded"}
	var ok bool
	switch f.Type {
	case "ack", "receipt":
		ok = ids && in(f.Kind, "request", "completion")
	case "message":
		ok = ids && in(f.Kind, "response") && f.Payload != nil
	case "state":
		ok = ids && in(f.Exchange, "open", "closing", "settled", "expired") &&
			in(f.Request, message...) && in(f.Response, message...) && in(f.Completion, message...)
	case "inactive":
		ok = ids && (f.Kind == nil || in(f.Kind, "request", "response", "completion"))
	case "error":
		ok = f.Error != nil && f.Message != nil && f.Retryable != nil &&
			(f.Kind == nil || in(f.Kind, "request", "response", "completion"))
	}
	if !ok {
		return nil, false
	}
	return &f, true
}

func relayMillis(ms uint64) time.Duration {
	if ms > uint64(relayMaxRetryAfter/time.Millisecond) {
		return relayMaxRetryAfter
	}
	return time.Duration(ms) * time.Millisecond
}

// relayText makes relay-supplied text safe to print: the relay is
// untrusted, so no control or formatting characters reach the terminal.
func relayText(s string) string {
	const limit = 200
	var b strings.Builder
	n := 0
	for _, r := range s {
		if n == limit {
			b.WriteString("...")
			break
		}
		if !unicode.IsPrint(r) {
			r = '?'
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
