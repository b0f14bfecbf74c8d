// Tests of the test-only fault rules and their parser.

package relay

import (
	"encoding/base64"
	"encoding/json"
	"math/bits"
	"testing"
)

func TestParseFaults(t *testing.T) {
	f, err := ParseFaults("drop-before-ack:request:1,corrupt-response::1, duplicate-response ,forge-error:response,replay-response::0,drop-after-ack:completion:3")
	if err != nil {
		t.Fatal(err)
	}
	want := []FaultRule{
		{"drop-before-ack", "request", 1}, {"corrupt-response", "", 1}, {"duplicate-response", "", 0},
		{"forge-error", "response", 0}, {"replay-response", "", 0}, {"drop-after-ack", "completion", 3},
	}
	if len(f.Rules) != len(want) {
		t.Fatalf("rules %+v", f.Rules)
	}
	for i := range want {
		if f.Rules[i] != want[i] {
			t.Fatalf("rule %d: %+v, want %+v", i, f.Rules[i], want[i])
		}
	}
	if f, err := ParseFaults("  "); f != nil || err != nil {
		t.Fatalf("empty spec: %v %v", f, err)
	}
	for _, bad := range []string{
		"explode", "drop-before-ack:response", "corrupt-response:request", "drop-after-ack:request:-1",
		"drop-after-ack:request:x", "drop-after-ack:request:1:2", "drop-before-ack:ack", ",",
	} {
		if _, err := ParseFaults(bad); err == nil {
			t.Fatalf("%q accepted", bad)
		}
	}
	if _, err := New(Config{Device: newRecDevice(), Faults: &Faults{Rules: []FaultRule{{Action: "nope"}}}}); err == nil {
		t.Fatal("New accepted an unknown fault")
	}
}

// exchangeWithResponse runs one exchange up to the client receiving the
// response frame(s) that the relay sends for the device's payload.
func exchangeWithResponse(t *testing.T, e *env, a *wsClient, payload string) string {
	t.Helper()
	req := e.newID()
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	if err := e.relay.Respond(a.clientID, req, json.RawMessage(payload)); err != nil {
		t.Fatal(err)
	}
	return req
}

func payloadOf(t *testing.T, f frame) map[string]any {
	t.Helper()
	p, ok := f["payload"].(map[string]any)
	if !ok {
		t.Fatalf("payload %v", f["payload"])
	}
	return p
}

func TestFaultDuplicateResponse(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Faults, _ = ParseFaults("duplicate-response::1") })
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	req := exchangeWithResponse(t, e, a, `{"v":1}`)
	a.expect("message", req, "response")
	a.expect("message", req, "response")
	a.sync(e)
	// Count 1: the next response is sent once.
	req = exchangeWithResponse(t, e, a, `{"v":2}`)
	a.expect("message", req, "response")
	a.sync(e)
}

func TestFaultCorruptResponse(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Faults, _ = ParseFaults("corrupt-response::1") })
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)

	// A clear payload without ciphertext passes and does not use the rule.
	req := exchangeWithResponse(t, e, a, `{"device_id":"D"}`)
	if p := payloadOf(t, a.expect("message", req, "response")); p["device_id"] != "D" || len(p) != 1 {
		t.Fatalf("clear payload changed: %v", p)
	}

	ct := make([]byte, 48)
	for i := range ct {
		ct[i] = byte(i * 7)
	}
	orig := base64.StdEncoding.EncodeToString(ct)
	req = exchangeWithResponse(t, e, a, `{"nonce":"Tk9OQ0U=","ciphertext":"`+orig+`"}`)
	p := payloadOf(t, a.expect("message", req, "response"))
	if p["nonce"] != "Tk9OQ0U=" {
		t.Fatalf("nonce changed: %v", p)
	}
	got, err := base64.StdEncoding.DecodeString(p["ciphertext"].(string))
	if err != nil || len(got) != len(ct) {
		t.Fatalf("ciphertext %v: %v", p["ciphertext"], err)
	}
	diff := 0
	for i := range ct {
		diff += bits.OnesCount8(ct[i] ^ got[i])
	}
	if diff != 1 {
		t.Fatalf("%d bits differ, want 1", diff)
	}
	// A resend carries the same tampered value.
	a.resume(req)
	a.expectState(req, "open", "delivered", "accepted", "absent")
	if p2 := payloadOf(t, a.expect("message", req, "response")); p2["ciphertext"] != p["ciphertext"] {
		t.Fatal("resent response differs")
	}
	// Used up.
	req = exchangeWithResponse(t, e, a, `{"nonce":"Tk9OQ0U=","ciphertext":"`+orig+`"}`)
	if p := payloadOf(t, a.expect("message", req, "response")); p["ciphertext"] != orig {
		t.Fatal("second response corrupted")
	}
}

func TestFaultForgeError(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Faults, _ = ParseFaults("forge-error") })
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	req := exchangeWithResponse(t, e, a, `{"nonce":"A","ciphertext":"B"}`)
	p := payloadOf(t, a.expect("message", req, "response"))
	if p["error"] != "UNSUPPORTED_PROTOCOL_VERSION" || p["message"] != "forged by relay" || len(p) != 2 {
		t.Fatalf("payload %v", p)
	}
}

func TestFaultReplayResponse(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Faults, _ = ParseFaults("replay-response::1") })
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	// The first exchange has nothing to replay: the device's answer passes.
	first := exchangeWithResponse(t, e, a, `{"ciphertext":"first"}`)
	if p := payloadOf(t, a.expect("message", first, "response")); p["ciphertext"] != "first" {
		t.Fatalf("payload %v", p)
	}
	a.ackResponse(first)

	// The second gets the first's response as soon as its request is
	// delivered, before the device answers.
	second := e.newID()
	a.message(second, "request", "r")
	a.expect("ack", second, "request")
	a.expect("receipt", second, "request")
	if p := payloadOf(t, a.expect("message", second, "response")); p["ciphertext"] != "first" {
		t.Fatalf("replayed payload %v", p)
	}
	// The device's real answer is now a duplicate and never sent.
	if err := e.relay.Respond(id, second, json.RawMessage(`{"ciphertext":"second"}`)); err != nil {
		t.Fatal(err)
	}
	a.sync(e)
}

func TestFaultDropBeforeAckOnCompletion(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Faults, _ = ParseFaults("drop-before-ack:completion:1") })
	id, tok := e.activeClient()
	a := e.dialClient(id, tok)
	req := e.newID()
	// The rule matches completions only: the request passes.
	a.message(req, "request", "r")
	a.expect("ack", req, "request")
	a.expect("receipt", req, "request")
	a.message(req, "completion", "c")
	a.expectClose(1011)
	b := e.dialClient(id, tok)
	b.resume(req)
	b.expectState(req, "open", "delivered", "absent", "absent")
	b.message(req, "completion", "c")
	b.expect("ack", req, "completion")
	b.expect("receipt", req, "completion")
}
