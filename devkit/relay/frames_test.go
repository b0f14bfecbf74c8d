// Tests of frame validation ("Frame encoding" in
// docs/client-relay-protocol.md): invalid frames get INVALID_FRAME and close
// 1008, oversized ones close 1009, and identifiers are canonical.

package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

func TestInvalidFramesCloseWith1008(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	req := e.newID()
	otherClient := ulidAt(e.clock.Now())
	msg := func(extra string) string {
		return `{"type":"message","client_id":"` + id + `","request_id":"` + req + `"` + extra + `}`
	}
	cases := map[string]string{
		"not json":              `hello`,
		"array":                 `[]`,
		"null":                  `null`,
		"two values":            msg(`,"kind":"request","payload":1`) + ` {}`,
		"no type":               `{"client_id":"` + id + `","request_id":"` + req + `"}`,
		"type null":             `{"type":null,"client_id":"` + id + `","request_id":"` + req + `"}`,
		"type number":           `{"type":1,"client_id":"` + id + `","request_id":"` + req + `"}`,
		"unknown type":          `{"type":"hello","client_id":"` + id + `","request_id":"` + req + `"}`,
		"relay-only receipt":    `{"type":"receipt","client_id":"` + id + `","request_id":"` + req + `","kind":"request"}`,
		"relay-only state":      `{"type":"state","client_id":"` + id + `","request_id":"` + req + `"}`,
		"relay-only inactive":   `{"type":"inactive","client_id":"` + id + `","request_id":"` + req + `"}`,
		"relay-only error":      `{"type":"error","error":"X","message":"m","retryable":false}`,
		"no payload":            msg(`,"kind":"request"`),
		"no kind":               msg(`,"payload":{}`),
		"kind number":           msg(`,"kind":1,"payload":{}`),
		"client publishes resp": msg(`,"kind":"response","payload":{}`),
		"unknown kind":          msg(`,"kind":"note","payload":{}`),
		"ack of request":        `{"type":"ack","client_id":"` + id + `","request_id":"` + req + `","kind":"request"}`,
		"ack without kind":      `{"type":"ack","client_id":"` + id + `","request_id":"` + req + `"}`,
		"resume without id":     `{"type":"resume","client_id":"` + id + `"}`,
		"client_id number":      `{"type":"resume","client_id":7,"request_id":"` + req + `"}`,
		"request_id lowercase":  `{"type":"resume","client_id":"` + id + `","request_id":"` + strings.ToLower(req) + `"}`,
		"request_id with I":     `{"type":"resume","client_id":"` + id + `","request_id":"` + req[:25] + `I"}`,
		"client_id mismatch":    `{"type":"resume","client_id":"` + otherClient + `","request_id":"` + req + `"}`,
		"invalid utf-8":         msg(`,"kind":"request","payload":"` + "\xff" + `"`),
	}
	for name, raw := range cases {
		t.Run(name, func(t *testing.T) {
			c := e.dialClient(id, tok)
			c.sendRaw(raw)
			f := c.read()
			if f.str("type") != "error" || f.str("error") != "INVALID_FRAME" || f["retryable"] != false || f.str("message") == "" {
				t.Fatalf("got %v", f)
			}
			c.expectClose(websocket.StatusPolicyViolation)
		})
	}

	t.Run("binary frame", func(t *testing.T) {
		c := e.dialClient(id, tok)
		ctx, cancel := context.WithTimeout(context.Background(), guard)
		defer cancel()
		if err := c.c.Write(ctx, websocket.MessageBinary, []byte(msg(`,"kind":"request","payload":{}`))); err != nil {
			t.Fatal(err)
		}
		if f := c.read(); f.str("error") != "INVALID_FRAME" {
			t.Fatalf("got %v", f)
		}
		c.expectClose(websocket.StatusPolicyViolation)
	})

	// None of the refused frames created an exchange or reached the device.
	c := e.dialClient(id, tok)
	c.resume(req)
	c.expect("inactive", req, "")
	if n := len(e.dev.deliveredFor(req)); n != 0 {
		t.Fatalf("device got %d messages", n)
	}
}

func TestValidFrameVariants(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()
	c := e.dialClient(id, tok)
	// Unknown members are ignored and a null payload is still a payload.
	req := e.newID()
	c.sendRaw(`{"kind":"request","payload":null,"extra":{"a":[1]},"request_id":"` + req + `","client_id":"` + id + `","type":"message"}`)
	c.expect("ack", req, "request")
	c.expect("receipt", req, "request")
	if m := e.dev.deliveredFor(req); len(m) != 1 || string(m[0].Payload) != "null" {
		t.Fatalf("delivered %+v", m)
	}
	// The payload reaches the device byte for byte.
	req2 := e.newID()
	payload := `{ "b" : 1,  "a":"\u00e9" }`
	c.sendRaw(`{"type":"message","client_id":"` + id + `","request_id":"` + req2 + `","kind":"request","payload":` + payload + `}`)
	c.expect("ack", req2, "request")
	c.expect("receipt", req2, "request")
	if m := e.dev.deliveredFor(req2); len(m) != 1 || string(m[0].Payload) != payload {
		t.Fatalf("delivered %+v", m)
	}
	// An ack for a response that was never sent is harmless.
	c.ackResponse(e.newID())
	c.sync(e)
}

// frameOfSize builds a valid request frame of exactly n bytes.
func frameOfSize(t *testing.T, clientID, requestID string, n int) string {
	t.Helper()
	head := `{"type":"message","client_id":"` + clientID + `","request_id":"` + requestID + `","kind":"request","payload":"`
	tail := `"}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		t.Fatal("frame too small")
	}
	return head + strings.Repeat("a", pad) + tail
}

func TestFrameSizeLimit(t *testing.T) {
	e := newEnv(t)
	id, tok := e.activeClient()

	c := e.dialClient(id, tok)
	req := e.newID()
	c.sendRaw(frameOfSize(t, id, req, MaxFrameSize))
	c.expect("ack", req, "request")
	c.expect("receipt", req, "request")

	d := e.dialClient(id, tok)
	big := e.newID()
	d.sendRaw(frameOfSize(t, id, big, MaxFrameSize+1))
	d.expectClose(websocket.StatusMessageTooBig)
	c.resume(big)
	c.expect("inactive", big, "")
}

func TestULIDSyntaxAndTime(t *testing.T) {
	at := time.UnixMilli(1_772_000_000_123)
	for range 100 {
		id := ulidAt(at)
		if !validULID(id) {
			t.Fatalf("%s not canonical", id)
		}
		if !ulidTime(id).Equal(at) {
			t.Fatalf("%s decodes to %v, want %v", id, ulidTime(id), at)
		}
	}
	// The largest ULID has time 2^48-1 ms.
	if got := ulidTime("7ZZZZZZZZZZZZZZZZZZZZZZZZZ").UnixMilli(); got != 1<<48-1 {
		t.Fatalf("max time %d", got)
	}
	if !ulidTime("00000000000000000000000000").Equal(time.UnixMilli(0)) {
		t.Fatal("zero time")
	}
	for _, bad := range []string{"", "8ZZZZZZZZZZZZZZZZZZZZZZZZZ", "01K2ENXDTW1P3XAR4J7V7C9D0", "01K2ENXDTW1P3XAR4J7V7C9D0HH",
		"01k2enxdtw1p3xar4j7v7c9d0h", "01K2ENXDTW1P3XAR4J7V7C9D0U", "01K2ENXDTW1P3XAR4J7V7C9D0L", "01K2ENXDTW1P3XAR4J7V7C9D0O"} {
		if validULID(bad) {
			t.Fatalf("%q accepted", bad)
		}
	}
	if !validULID("01K2ENXDTW1P3XAR4J7V7C9D0H") {
		t.Fatal("doc example refused")
	}
	for s, ok := range map[string]bool{
		strings.Repeat("0", 32): true, "0123456789abcdef0123456789abcdef": true,
		"0123456789ABCDEF0123456789abcdef": false, strings.Repeat("0", 31): false, strings.Repeat("g", 32): false,
	} {
		if validAddressID(s) != ok {
			t.Fatalf("validAddressID(%q) = %v", s, !ok)
		}
	}
	if !validNewToken(newToken()) || validNewToken(newToken()+"=") || validNewToken(strings.Repeat("A", 42)) {
		t.Fatal("token syntax")
	}
}

func TestRelayFramesAreWellFormed(t *testing.T) {
	// The error frame carries the required members even when false or
	// empty-looking, and omits optional ones that do not apply.
	var f map[string]any
	if err := json.Unmarshal(errorFrame("", "", "", "INVALID_FRAME", "m", false, 0), &f); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(f) != "map[error:INVALID_FRAME message:m retryable:false type:error]" {
		t.Fatalf("error frame %v", f)
	}
	f = nil
	json.Unmarshal(messageFrame("A", "B", json.RawMessage("null")), &f)
	if p, ok := f["payload"]; !ok || p != nil {
		t.Fatalf("null payload lost: %v", f)
	}
}
