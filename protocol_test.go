// protocol_test.go: shared test helpers, and tests of protocol.go: the
// clear pairing payloads and paired envelopes (client-device-protocol.md
// "Initial pairing", "Cryptographic envelopes", "Unprotected error
// reports") and the redaction of secret text.

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ---- helpers ----

func protoMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// protoAssertJSONEqual compares two JSON texts as values.
func protoAssertJSONEqual(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON differs\n got: %s\nwant: %s", got, want)
	}
}

func protoTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// protoSecretValues returns every "value" string in a JSON document: the
// secret values an error message must never contain.
func protoSecretValues(v any) []string {
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if s, ok := e.(string); ok && k == "value" {
				out = append(out, s)
			}
			out = append(out, protoSecretValues(e)...)
		}
	case []any:
		for _, e := range x {
			out = append(out, protoSecretValues(e)...)
		}
	}
	return out
}

func protoAssertNoSecret(t *testing.T, text string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if s != "" && strings.Contains(text, s) {
			t.Errorf("%q reveals secret value %q", text, s)
		}
	}
}

// ---- envelopes ----

func TestPairingRequestAndCompletionPayloads(t *testing.T) {
	v := loadCryptoVectors(t)
	deviceID, clientID, pkD, _, clientSecret, deviceRandom := vectorPairing(t, v)
	attempt := pairingAttemptWith(clientID, [32]byte(clientSecret))
	req := protoMarshal(t, newPairingRequestPayload(attempt))
	protoAssertJSONEqual(t, req, []byte(`{"version":"agentknock-v1","commitment":"`+
		base64.StdEncoding.EncodeToString(cryptoVecHex(t, v.Pairing, "commitment"))+`"}`))

	// The clear response as a device would send it, round-tripped.
	resp := fmt.Sprintf(`{"device_id":%q,"device_key":%q,"device_random":%q,"extra":1}`,
		deviceID.String(), base64.StdEncoding.EncodeToString(pkD), base64.StdEncoding.EncodeToString(deviceRandom))
	got, report, err := decodePairingResponsePayload([]byte(resp))
	if err != nil || report != nil {
		t.Fatalf("decode: %v %v", err, report)
	}
	if got.DeviceID != deviceID || !bytes.Equal(got.DeviceKey, pkD) || !bytes.Equal(got.DeviceRandom, deviceRandom) {
		t.Fatal("decoded pairing response differs")
	}
	done, err := attempt.complete(bytes.NewReader(cryptoVecHex(t, v.Pairing, "ikmE")), got.DeviceID, got.DeviceKey, got.DeviceRandom, []byte("application"))
	if err != nil {
		t.Fatal(err)
	}
	comp := protoMarshal(t, newPairingCompletionPayload(done))
	protoAssertJSONEqual(t, comp, []byte(fmt.Sprintf(`{"key":%q,"secret":%q,"ciphertext":%q}`,
		base64.StdEncoding.EncodeToString(cryptoVecHex(t, v.Pairing, "enc")),
		base64.StdEncoding.EncodeToString(cryptoVecHex(t, v.Pairing, "secret_ciphertext")),
		base64.StdEncoding.EncodeToString(cryptoVecHex(t, v.Pairing, "application_ciphertext")))))
}

func TestDecodePairingResponseRejects(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	short := base64.StdEncoding.EncodeToString(make([]byte, 31))
	long := base64.StdEncoding.EncodeToString(make([]byte, 33))
	id := "01K2ENXDTW1P3XAR4J7V7C9D0H"
	cases := map[string]string{
		"lowercase device id":  fmt.Sprintf(`{"device_id":%q,"device_key":%q,"device_random":%q}`, strings.ToLower(id), key, key),
		"zero device id":       fmt.Sprintf(`{"device_id":"00000000000000000000000000","device_key":%q,"device_random":%q}`, key, key),
		"device id missing":    fmt.Sprintf(`{"device_key":%q,"device_random":%q}`, key, key),
		"device key 31 bytes":  fmt.Sprintf(`{"device_id":%q,"device_key":%q,"device_random":%q}`, id, short, key),
		"device key 33 bytes":  fmt.Sprintf(`{"device_id":%q,"device_key":%q,"device_random":%q}`, id, long, key),
		"device key null":      fmt.Sprintf(`{"device_id":%q,"device_key":null,"device_random":%q}`, id, key),
		"device key not b64":   fmt.Sprintf(`{"device_id":%q,"device_key":"!!!","device_random":%q}`, id, key),
		"device random 31":     fmt.Sprintf(`{"device_id":%q,"device_key":%q,"device_random":%q}`, id, key, short),
		"device random absent": fmt.Sprintf(`{"device_id":%q,"device_key":%q}`, id, key),
		"error not a string":   `{"error":5}`,
		"not an object":        `[1]`,
	}
	for name, payload := range cases {
		if r, report, err := decodePairingResponsePayload([]byte(payload)); err == nil {
			t.Errorf("%s: accepted (%v, %v)", name, r, report)
		}
	}
	_, report, err := decodePairingResponsePayload([]byte(`{"error":"UNSUPPORTED_PROTOCOL_VERSION","message":"no"}`))
	if err != nil || report == nil || report.Code != "UNSUPPORTED_PROTOCOL_VERSION" || report.Message != "no" {
		t.Errorf("unprotected report: %v %v", report, err)
	}
}

func TestPairedEnvelopeRoundTrip(t *testing.T) {
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	requestID, _ := newULID()
	requested := map[string]secretDelivery{"plain": {}}
	token := bytes.Repeat([]byte{7}, 32)
	req, err := newInvocationRequest(requested, "", execOperation{
		Command: "env", WorkingDirectory: "/", ExecutablePath: "/usr/bin/env", ExecutableMode: executableBinary,
		Stdin: streamPipe, Stdout: streamPipe, Stderr: streamPipe,
	}, nil, token)
	if err != nil {
		t.Fatal(err)
	}
	rotationEnc := bytes.Repeat([]byte{9}, 32)
	x, payload, err := sealProtectedRequest(keys, requestID, rotationEnc, req)
	if err != nil {
		t.Fatal(err)
	}
	wire := protoMarshal(t, payload)
	var env map[string]string
	json.Unmarshal(wire, &env)
	if env["version"] != "agentknock-v1" || env["rotation_key"] != base64.StdEncoding.EncodeToString(rotationEnc) ||
		env["key"] != base64.StdEncoding.EncodeToString(x.Enc()) || env["ciphertext"] != base64.StdEncoding.EncodeToString(x.RequestCiphertext()) {
		t.Fatalf("request envelope %s", wire)
	}
	ctx, pt := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x)
	var opened map[string]any
	if err := json.Unmarshal(pt, &opened); err != nil || opened["method"] != "Invocation" || opened["invocation_token"] != base64.StdEncoding.EncodeToString(token) {
		t.Fatalf("device saw %s", pt)
	}

	random, ct := testDeviceSealResponse(t, ctx, x.Enc(), []byte(`{"result":"APPROVED","secrets":{"plain":{"type":"environment","variables":{"A":{"value":"sv-a"}}}}}`))
	respPayload := protoMarshal(t, map[string]any{"nonce": random, "ciphertext": ct})
	plain, report, err := openPairedResponse(x, respPayload)
	if err != nil || report != nil {
		t.Fatalf("open: %v %v", err, report)
	}
	resp, err := checkInvocationResponse(requested, plain)
	if err != nil {
		t.Fatal(err)
	}
	if environmentOf(resp)["A"] != "sv-a" {
		t.Errorf("environment %v", environmentOf(resp))
	}
	comp, err := sealProtectedCompletion(x, newApprovedCompletion())
	if err != nil {
		t.Fatal(err)
	}
	cpt, err := ctx.Open(comp.Ciphertext, nil)
	if err != nil {
		t.Fatal("device cannot open the completion:", err)
	}
	protoAssertJSONEqual(t, cpt, []byte(`{"app_info":{"name":"agentknock","version":"dev"},"lib_info":{"name":"agentknock","version":"dev"},"result":"APPROVED"}`))
	if _, err := sealProtectedCompletion(x, newApprovedCompletion()); !errors.Is(err, errCryptoSealedTwice) {
		t.Errorf("second completion: %v", err)
	}

	// Without a pending rotation the member is absent, and a malformed
	// rotation value is refused.
	requestID2, _ := newULID()
	x2, payload2, err := sealProtectedRequest(keys, requestID2, nil, req)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(protoMarshal(t, payload2), []byte("rotation_key")) {
		t.Error("rotation_key sent without a pending rotation")
	}
	if _, err := newPairedRequestPayload(x2, make([]byte, 31)); !errors.Is(err, errCryptoLength) {
		t.Errorf("31-byte rotation key: %v", err)
	}
}

func TestOpenPairedResponseRejects(t *testing.T) {
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	requestID, _ := newULID()
	x, err := sealPairedRequest(keys, requestID, []byte("{}"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, _ := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x)
	random, ct := testDeviceSealResponse(t, ctx, x.Enc(), []byte(`{}`))
	b64 := base64.StdEncoding.EncodeToString
	bad := bytes.Clone(ct)
	bad[0] ^= 1
	cases := map[string]struct {
		payload string
		want    error
	}{
		"nonce 31 bytes":     {fmt.Sprintf(`{"nonce":%q,"ciphertext":%q}`, b64(random[:31]), b64(ct)), errInvalidResponse},
		"nonce 12 bytes":     {fmt.Sprintf(`{"nonce":%q,"ciphertext":%q}`, b64(random[:12]), b64(ct)), errInvalidResponse},
		"ciphertext 15":      {fmt.Sprintf(`{"nonce":%q,"ciphertext":%q}`, b64(random), b64(ct[:15])), errInvalidResponse},
		"ciphertext missing": {fmt.Sprintf(`{"nonce":%q}`, b64(random)), errInvalidResponse},
		"nonce null":         {fmt.Sprintf(`{"nonce":null,"ciphertext":%q}`, b64(ct)), errInvalidResponse},
		"corrupted":          {fmt.Sprintf(`{"nonce":%q,"ciphertext":%q}`, b64(random), b64(bad)), errCryptoOpen},
		"not json":           {`nonce`, errInvalidResponse},
	}
	for name, c := range cases {
		pt, report, err := openPairedResponse(x, []byte(c.payload))
		if !errors.Is(err, c.want) || pt != nil || report != nil {
			t.Errorf("%s: %v (report %v), want %v", name, err, report, c.want)
		}
	}
	pt, report, err := openPairedResponse(x, []byte(`{"error":"UNSUPPORTED_PROTOCOL_VERSION","message":"old"}`))
	if err != nil || pt != nil || report == nil || report.Code != "UNSUPPORTED_PROTOCOL_VERSION" {
		t.Errorf("clear report: %v %v %v", pt, report, err)
	}
	if pt, _, err := openPairedResponse(x, protoMarshal(t, map[string]any{"nonce": random, "ciphertext": ct})); err != nil || string(pt) != "{}" {
		t.Errorf("genuine response: %q %v", pt, err)
	}
}

func TestSecretTextRedacted(t *testing.T) {
	v := secretText("sv-hidden")
	s := stdinDelivery{Secret: "a", Variable: "B", Value: v}
	e := envValues{"X": v}
	for _, f := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d", "%10s"} {
		out := fmt.Sprintf(f, v) + fmt.Sprintf(f, s) + fmt.Sprintf(f, &s) + fmt.Sprintf(f, e)
		if strings.Contains(out, "sv-hidden") || strings.Contains(out, "73762d") {
			t.Errorf("%s reveals the value: %s", f, out)
		}
	}
	if b := protoMarshal(t, uploadVariable{Value: v}); string(b) != `{"value":"sv-hidden"}` {
		t.Errorf("JSON form %s", b)
	}
}
