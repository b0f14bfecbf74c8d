// protocol_test.go: shared test helpers, and tests of protocol.go: the
// clear pairing payloads and paired envelopes (client-device-protocol.md
// "Initial pairing", "Cryptographic envelopes", "Unprotected error
// reports") and the redaction of secret text.

package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
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

// Tests of protocol.go, the request
// and completion encodings (client-device-protocol.md "Pairing activation",
// "Invocation", "Git signing", "SSH authentication", "Secret upload") and
// their client-side validation.

// ---- requests ----

func TestInvocationRequestMatchesDocumentedShape(t *testing.T) {
	token := make([]byte, 32)
	for i := range token {
		token[i] = byte(32 + i)
	}
	hash := make([]byte, 32)
	for i := range hash {
		hash[i] = byte(i)
	}
	req, err := newInvocationRequest(map[string]secretDelivery{
		"cloudflare": {Environment: &environmentDelivery{Omit: []string{"CLOUDFLARE_ACCOUNT_ID"}}},
		"github": {Environment: &environmentDelivery{
			Only: []string{"GH_HOST", "GH_TOKEN"}, Rename: map[string]string{"GH_HOST": "GITHUB_HOST"}, Stdin: "GH_TOKEN",
		}},
		"plain": {Environment: &environmentDelivery{Rename: map[string]string{}}},
	}, "Publish the release", execOperation{
		Command: "wrangler", Arguments: []string{"deploy"}, WorkingDirectory: "/work/project",
		ExecutablePath: "/usr/bin/wrangler", ExecutableHash: hash, ExecutableMode: executableBinary,
		Stdin: streamTerminal, Stdout: streamTerminal, Stderr: streamTerminal,
	}, []string{"/usr/bin/bash"}, token)
	if err != nil {
		t.Fatal(err)
	}
	protoAssertJSONEqual(t, protoMarshal(t, req), protoTestdata(t, "protocol-invocation-request.json"))
	for _, leak := range []string{fmt.Sprintf("%v", req), fmt.Sprintf("%+v", req), fmt.Sprintf("%#v", req)} {
		if strings.Contains(leak, "32 33 34") || strings.Contains(leak, "202122") || strings.Contains(leak, "ICEi") {
			t.Errorf("formatted request reveals the invocation token: %s", leak)
		}
	}

	// Empty lists are sent as [] and the optional members are omitted.
	minimal, err := newInvocationRequest(map[string]secretDelivery{"a": {}}, "", execOperation{
		Command: "x", WorkingDirectory: "/", ExecutablePath: "/x", ExecutableMode: executableScript,
		Stdin: streamUnknown, Stdout: streamNullDevice, Stderr: streamRegularFile,
	}, nil, token)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(protoMarshal(t, minimal), &m)
	op := m["operation"].(map[string]any)
	if _, ok := m["reason"]; ok {
		t.Error("empty reason sent")
	}
	if _, ok := op["executable_hash"]; ok {
		t.Error("absent hash sent")
	}
	if _, ok := op["script_contents"]; ok {
		t.Error("absent script contents sent")
	}
	if fmt.Sprint(m["launcher_chain"]) != "[]" || fmt.Sprint(op["arguments"]) != "[]" {
		t.Errorf("empty lists encoded as %v / %v", m["launcher_chain"], op["arguments"])
	}
}

func TestInvocationRequestRejects(t *testing.T) {
	token := make([]byte, 32)
	op := execOperation{Command: "x", WorkingDirectory: "/", ExecutablePath: "/x", ExecutableMode: executableBinary,
		Stdin: streamTerminal, Stdout: streamTerminal, Stderr: streamTerminal}
	secrets := map[string]secretDelivery{"a": {}}
	mod := func(f func(o *execOperation)) execOperation { o := op; f(&o); return o }
	cases := []struct {
		name    string
		op      execOperation
		chain   []string
		token   []byte
		wantErr string
	}{
		{"token 31 bytes", op, nil, token[:31], "32 bytes"},
		{"five launchers", op, []string{"/a", "/b", "/c", "/d", "/e"}, token, "launcher chain"},
		{"hash 31 bytes", mod(func(o *execOperation) { o.ExecutableHash = make([]byte, 31) }), nil, token, "SHA-256"},
		{"bad mode", mod(func(o *execOperation) { o.ExecutableMode = "binary" }), nil, token, "executable mode"},
		{"bad stream", mod(func(o *execOperation) { o.Stdout = "FILE" }), nil, token, "stream kind"},
		{"script text in binary mode", mod(func(o *execOperation) { s := "#!/bin/sh"; o.ScriptContents = &s }), nil, token, "SCRIPT"},
		{"other operation type", mod(func(o *execOperation) { o.Type = "shell" }), nil, token, "exec"},
		{"no executable path", mod(func(o *execOperation) { o.ExecutablePath = "" }), nil, token, "executable path"},
	}
	for _, c := range cases {
		if _, err := newInvocationRequest(secrets, "", c.op, c.chain, c.token); err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%s: %v, want error containing %q", c.name, err, c.wantErr)
		}
	}
	if _, err := newInvocationRequest(secrets, "", op, []string{"/a", "/b", "/c", "/d"}, token); err != nil {
		t.Errorf("four launchers rejected: %v", err)
	}
}

func TestValidateSecretDeliveries(t *testing.T) {
	env := func(e environmentDelivery) secretDelivery { return secretDelivery{Environment: &e} }
	cases := []struct {
		name    string
		secrets map[string]secretDelivery
		wantErr string // "" = valid
	}{
		{"plain", map[string]secretDelivery{"a": {}}, ""},
		{"full routing", map[string]secretDelivery{
			"a": env(environmentDelivery{Only: []string{"X", "Y", "Z"}, Rename: map[string]string{"X": "X2"}, Stdin: "Y"}),
			"b": env(environmentDelivery{Omit: []string{"Q"}, Rename: map[string]string{"R": "R2"}}),
		}, ""},
		{"no secrets", map[string]secretDelivery{}, "at least one"},
		{"empty secret name", map[string]secretDelivery{"": {}}, "empty name"},
		{"only and omit", map[string]secretDelivery{"a": env(environmentDelivery{Only: []string{"X"}, Omit: []string{"Y"}})}, "cannot be combined"},
		{"empty only", map[string]secretDelivery{"a": env(environmentDelivery{Only: []string{}})}, "empty only"},
		{"empty omit", map[string]secretDelivery{"a": env(environmentDelivery{Omit: []string{}})}, "empty omit"},
		{"duplicate only", map[string]secretDelivery{"a": env(environmentDelivery{Only: []string{"X", "X"}})}, "twice in only"},
		{"duplicate omit", map[string]secretDelivery{"a": env(environmentDelivery{Omit: []string{"X", "X"}})}, "twice in omit"},
		{"rename source outside only", map[string]secretDelivery{"a": env(environmentDelivery{Only: []string{"X"}, Rename: map[string]string{"Y": "Z"}})}, "not selected by only"},
		{"stdin source outside only", map[string]secretDelivery{"a": env(environmentDelivery{Only: []string{"X"}, Stdin: "Y"})}, "not selected by only"},
		{"rename source omitted", map[string]secretDelivery{"a": env(environmentDelivery{Omit: []string{"X"}, Rename: map[string]string{"X": "Z"}})}, "both routed and omitted"},
		{"stdin source omitted", map[string]secretDelivery{"a": env(environmentDelivery{Omit: []string{"X"}, Stdin: "X"})}, "both routed and omitted"},
		{"renamed and stdin", map[string]secretDelivery{"a": env(environmentDelivery{Rename: map[string]string{"X": "Z"}, Stdin: "X"})}, "renamed and sent"},
		{"two stdin", map[string]secretDelivery{"a": env(environmentDelivery{Stdin: "X"}), "b": env(environmentDelivery{Stdin: "Y"})}, "at most one"},
		{"name with =", map[string]secretDelivery{"a": env(environmentDelivery{Only: []string{"X=1"}})}, "invalid environment variable name"},
		{"rename target with NUL", map[string]secretDelivery{"a": env(environmentDelivery{Rename: map[string]string{"X": "A\x00B"}})}, "invalid environment variable name"},
		{"empty rename target", map[string]secretDelivery{"a": env(environmentDelivery{Rename: map[string]string{"X": ""}})}, "invalid environment variable name"},
	}
	for _, c := range cases {
		err := validateSecretDeliveries(c.secrets)
		if c.wantErr == "" && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
			t.Errorf("%s: %v, want error containing %q", c.name, err, c.wantErr)
		}
	}
}

func TestPairingMetadataAndMethodRequests(t *testing.T) {
	md := newPairingMetadata("", "", "")
	var m map[string]any
	json.Unmarshal(protoMarshal(t, md), &m)
	for _, k := range []string{"app_info", "lib_info", "platform", "architecture"} {
		if _, ok := m[k]; !ok {
			t.Errorf("metadata lacks %s", k)
		}
	}
	for _, k := range []string{"hostname", "machine_id", "os_version"} {
		if _, ok := m[k]; ok {
			t.Errorf("empty optional %s sent", k)
		}
	}
	full := protoMarshal(t, newPairingMetadata("host", "mid", "Linux 6"))
	if !bytes.Contains(full, []byte(`"hostname":"host"`)) || !bytes.Contains(full, []byte(`"machine_id":"mid"`)) || !bytes.Contains(full, []byte(`"os_version":"Linux 6"`)) {
		t.Errorf("metadata %s", full)
	}
	for goos, want := range map[string]string{"linux": "linux", "darwin": "macos"} {
		if got := clientPlatformName(goos); got != want {
			t.Errorf("platform %s -> %s, want %s", goos, got, want)
		}
	}
	for goarch, want := range map[string]string{"amd64": "x86_64", "arm64": "aarch64"} {
		if got := clientArchitectureName(goarch); got != want {
			t.Errorf("architecture %s -> %s, want %s", goarch, got, want)
		}
	}
	for _, method := range []string{methodPairingFinish, methodSecretList, methodPairingRemove} {
		protoAssertJSONEqual(t, protoMarshal(t, newMethodRequest(method)),
			[]byte(`{"app_info":{"name":"agentknock","version":"dev"},"lib_info":{"name":"agentknock","version":"dev"},"method":"`+method+`"}`))
	}
}

func TestGitSignRequest(t *testing.T) {
	id, _ := parseULID("01K2ENXDTW1P3XAR4J7V7C9D0H")
	token := bytes.Repeat([]byte{1}, 32)
	count := 0
	repo := &gitRepositoryContext{
		Remote: "github.com/example/project", Worktree: "/w",
		Head:             &gitHeadContext{Type: "BRANCH", Name: "main", Upstream: "origin/main"},
		ChangedPathCount: &count, ChangedPaths: []gitChangedPath{},
	}
	req, err := newGitSignRequest(id, token, "release-signing", []byte("tree abc\n"), repo)
	if err != nil {
		t.Fatal(err)
	}
	protoAssertJSONEqual(t, protoMarshal(t, req), []byte(`{
		"app_info":{"name":"agentknock","version":"dev"},"lib_info":{"name":"agentknock","version":"dev"},
		"method":"GitSign","invocation_id":"01K2ENXDTW1P3XAR4J7V7C9D0H",
		"invocation_token":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","secret":"release-signing",
		"message":"dHJlZSBhYmMK",
		"repository":{"remote":"github.com/example/project","worktree":"/w",
			"head":{"type":"BRANCH","name":"main","upstream":"origin/main"},
			"changed_path_count":0,"changed_paths":[]}}`))

	// Not collected: both members absent, unlike the empty list above.
	req, err = newGitSignRequest(id, token, "s", []byte("m"), &gitRepositoryContext{Head: &gitHeadContext{Type: "DETACHED"}})
	if err != nil {
		t.Fatal(err)
	}
	if b := protoMarshal(t, req); bytes.Contains(b, []byte("changed_path")) || !bytes.Contains(b, []byte(`"head":{"type":"DETACHED"}`)) {
		t.Errorf("encoded %s", b)
	}

	two := 2
	fiftyOne := 51
	many := make([]gitChangedPath, 51)
	for i := range many {
		many[i] = gitChangedPath{Status: "ADDED", Path: fmt.Sprint(i)}
	}
	bad := []struct {
		name string
		repo *gitRepositoryContext
	}{
		{"branch without name", &gitRepositoryContext{Head: &gitHeadContext{Type: "BRANCH"}}},
		{"detached with name", &gitRepositoryContext{Head: &gitHeadContext{Type: "DETACHED", Name: "x"}}},
		{"unknown head", &gitRepositoryContext{Head: &gitHeadContext{Type: "TAG", Name: "x"}}},
		{"paths without count", &gitRepositoryContext{ChangedPaths: []gitChangedPath{{Status: "ADDED", Path: "a"}}}},
		{"count mismatch", &gitRepositoryContext{ChangedPathCount: &two, ChangedPaths: []gitChangedPath{{Status: "ADDED", Path: "a"}}}},
		{"more than 50 paths", &gitRepositoryContext{ChangedPathCount: &fiftyOne, ChangedPaths: many}},
		{"bad status", &gitRepositoryContext{ChangedPathCount: &two, ChangedPaths: []gitChangedPath{{Status: "ADDED", Path: "a"}, {Status: "RENAMED", Path: "b"}}}},
	}
	for _, c := range bad {
		if _, err := newGitSignRequest(id, token, "s", []byte("m"), c.repo); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if _, err := newGitSignRequest(ULID{}, token, "s", []byte("m"), nil); err == nil {
		t.Error("zero invocation id accepted")
	}
	if _, err := newGitSignRequest(id, token[:31], "s", []byte("m"), nil); err == nil {
		t.Error("short token accepted")
	}
	if _, err := newGitSignRequest(id, token, "", []byte("m"), nil); err == nil {
		t.Error("empty secret name accepted")
	}
}

func TestSecretUploadRequest(t *testing.T) {
	desc := ""
	req, err := newSecretUploadRequest(uploadModeUpdate, uploadSecret{
		Name: "github", Description: &desc, Type: secretTypeEnvironment,
		Variables: map[string]uploadVariable{"GH_TOKEN": {Value: "sv-upload-token"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	protoAssertJSONEqual(t, protoMarshal(t, req), []byte(`{
		"app_info":{"name":"agentknock","version":"dev"},"lib_info":{"name":"agentknock","version":"dev"},
		"method":"SecretUpload","mode":"UPDATE",
		"secret":{"name":"github","description":"","type":"environment","variables":{"GH_TOKEN":{"value":"sv-upload-token"}}}}`))
	if s := fmt.Sprintf("%v %+v %#v", req, req, req); strings.Contains(s, "sv-upload-token") {
		t.Errorf("formatted upload reveals the value: %s", s)
	}

	key := newSSHTestKey(t, "ed25519")
	pem, _ := os.ReadFile(key.path)
	sshReq, err := newSecretUploadRequest(uploadModeCreate, uploadSecret{Name: "deploy", Type: secretTypeSSH, PrivateKey: secretText(pem)})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]map[string]any
	json.Unmarshal(protoMarshal(t, sshReq), &m)
	if m["secret"]["private_key"] != string(pem) || m["secret"]["type"] != "ssh" {
		t.Errorf("ssh upload %v", m["secret"]["type"])
	}
	if _, ok := m["secret"]["description"]; ok {
		t.Error("absent description sent")
	}

	encrypted := newSSHTestKey(t, "ed25519")
	if out, err := exec.Command("ssh-keygen", "-q", "-p", "-N", "sv-passphrase", "-P", "", "-f", encrypted.path).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -p: %v %s", err, out)
	}
	encPEM, _ := os.ReadFile(encrypted.path)
	pemKey := newSSHTestKey(t, "ecdsa", "-m", "PEM")
	legacyPEM, _ := os.ReadFile(pemKey.path)

	bad := []struct {
		name   string
		mode   string
		secret uploadSecret
		want   string
	}{
		{"bad mode", "MERGE", uploadSecret{Name: "a", Type: secretTypeEnvironment, Variables: map[string]uploadVariable{"A": {"sv-1"}}}, "mode"},
		{"empty name", uploadModeCreate, uploadSecret{Type: secretTypeEnvironment, Variables: map[string]uploadVariable{"A": {"sv-1"}}}, "name"},
		{"no variables", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeEnvironment}, "at least one variable"},
		{"bad variable name", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeEnvironment, Variables: map[string]uploadVariable{"A=B": {"sv-1"}}}, "invalid environment variable name"},
		{"NUL in value", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeEnvironment, Variables: map[string]uploadVariable{"A": {"sv-\x00-1"}}}, "NUL"},
		{"env with private key", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeEnvironment, Variables: map[string]uploadVariable{"A": {"sv-1"}}, PrivateKey: secretText(pem)}, "private key"},
		{"ssh without key", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeSSH}, "OpenSSH format"},
		{"ssh with variables", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeSSH, PrivateKey: secretText(pem), Variables: map[string]uploadVariable{"A": {"sv-1"}}}, "variables"},
		{"encrypted key", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeSSH, PrivateKey: secretText(encPEM)}, "passphrase"},
		{"PEM (not OpenSSH) key", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeSSH, PrivateKey: secretText(legacyPEM)}, "OpenSSH format"},
		{"garbled key", uploadModeCreate, uploadSecret{Name: "a", Type: secretTypeSSH, PrivateKey: "-----BEGIN OPENSSH PRIVATE KEY-----\nsv-garbage\n-----END OPENSSH PRIVATE KEY-----\n"}, "does not parse"},
		{"unknown type", uploadModeCreate, uploadSecret{Name: "a", Type: "password"}, "type"},
	}
	for _, c := range bad {
		_, err := newSecretUploadRequest(c.mode, c.secret)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want error containing %q", c.name, err, c.want)
			continue
		}
		protoAssertNoSecret(t, err.Error(), []string{"sv-", "PRIVATE KEY", string(pem[40:80])})
	}
}

func TestCompletionEncodings(t *testing.T) {
	info := `"app_info":{"name":"agentknock","version":"dev"},"lib_info":{"name":"agentknock","version":"dev"}`
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"approved", newApprovedCompletion(), `{` + info + `,"result":"APPROVED"}`},
		{"denied repeats reason and message", newDeniedCompletion(deviceDenial{Reason: denialPolicyDenied, Message: "no"}), `{` + info + `,"result":"DENIED","reason":"POLICY_DENIED","message":"no"}`},
		{"denied with empty message keeps it", newDeniedCompletion(deviceDenial{Reason: denialOther}), `{` + info + `,"result":"DENIED","reason":"OTHER","message":""}`},
		{"aborted", newAbortedCompletion(abortInvalidResponse, "bad response"), `{` + info + `,"result":"ABORTED","reason":"INVALID_RESPONSE","message":"bad response"}`},
		{"device error", newDeviceErrorCompletion(deviceError{Code: "INVALID_STATE", Message: "pending"}), `{` + info + `,"result":"ABORTED","reason":"CLIENT_ERROR","message":"device error INVALID_STATE: pending"}`},
		{"pairing finish", newPairingFinishCompletion(), `{` + info + `,"result":"ACCEPTED"}`},
		{"upload received", newSecretUploadCompletion(&resultResponse{Outcome: outcomeApproved}), `{` + info + `,"result":"RECEIVED"}`},
		{"upload rejected", newSecretUploadCompletion(&resultResponse{Outcome: outcomeDenied, Message: "full"}), `{` + info + `,"result":"REJECTED","message":"full"}`},
		{"info only", newInfoCompletion(), `{` + info + `}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { protoAssertJSONEqual(t, protoMarshal(t, c.v), []byte(c.want)) })
	}
	for _, r := range []string{abortCancelled, abortTimedOut, abortInvalidResponse, abortClientError, abortOther} {
		if !bytes.Contains(protoMarshal(t, newAbortedCompletion(r, "")), []byte(`"reason":"`+r+`"`)) {
			t.Errorf("abort reason %s not encoded", r)
		}
	}
}

// Tests of protocol.go, the
// Invocation response checks and routing, and the SecretList, SecretUpload,
// PairingFinish and PairingRemove response checks (client-device-protocol.md
// "Invocation", "Authenticated errors", "Secret list", "Secret upload",
// "Pairing activation", "Pairing removal").

// ---- Invocation response checks ----

func baseInvocationRequest() map[string]secretDelivery {
	return map[string]secretDelivery{
		"cloudflare": {Environment: &environmentDelivery{Omit: []string{"CLOUDFLARE_ACCOUNT_ID"}}},
		"github": {Environment: &environmentDelivery{
			Only: []string{"GH_HOST", "GH_TOKEN"}, Rename: map[string]string{"GH_HOST": "GITHUB_HOST"}, Stdin: "GH_TOKEN",
		}},
		"plain": {},
	}
}

func TestCheckInvocationResponseRouting(t *testing.T) {
	resp, err := checkInvocationResponse(baseInvocationRequest(), protoTestdata(t, "protocol-invocation-response.json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome != outcomeApproved {
		t.Fatalf("outcome %v", resp.Outcome)
	}
	want := map[string]string{"CLOUDFLARE_API_TOKEN": "sv-cloudflare-token", "GITHUB_HOST": "github.com", "PLAIN_TOKEN": "sv-plain-token"}
	if got := environmentOf(resp); !reflect.DeepEqual(got, want) {
		t.Errorf("environment %v, want %v", got, want)
	}
	if resp.Stdin == nil || resp.Stdin.Secret != "github" || resp.Stdin.Variable != "GH_TOKEN" || resp.Stdin.Value != "sv-github-token" {
		t.Errorf("stdin %+v", resp.Stdin)
	}
	if resp.SSH != nil {
		t.Error("unexpected SSH selection")
	}
	if len(resp.Secrets) != 3 || resp.Secrets[0].Name != "cloudflare" || resp.Secrets[1].Name != "github" || resp.Secrets[2].Name != "plain" {
		t.Fatalf("secrets %v", resp.Secrets)
	}
	gh := resp.Secrets[1]
	if gh.Description != "GitHub API access" || gh.Type != "environment" || len(gh.Environment) != 1 || gh.Environment["GITHUB_HOST"] != "github.com" {
		t.Errorf("github secret %v", gh.Environment)
	}
	if len(gh.Variables) != 2 || gh.Variables["GH_HOST"] != "github.com" || gh.Variables["GH_TOKEN"] != "sv-github-token" {
		t.Errorf("github stored variables %v", gh.Variables)
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		protoAssertNoSecret(t, fmt.Sprintf(f, resp)+fmt.Sprintf(f, *resp)+fmt.Sprintf(f, resp.Secrets)+fmt.Sprintf(f, resp.Stdin),
			[]string{"sv-cloudflare-token", "sv-github-token", "sv-plain-token"})
	}
}

func TestCheckInvocationResponseNeedsValidRequest(t *testing.T) {
	twoStdin := map[string]secretDelivery{
		"a": {Environment: &environmentDelivery{Stdin: "X"}},
		"b": {Environment: &environmentDelivery{Stdin: "Y"}},
	}
	body := `{"result":"APPROVED","secrets":{"a":{"type":"environment","variables":{"X":{"value":"sv-x"}}},"b":{"type":"environment","variables":{"Y":{"value":"sv-y"}}}}}`
	r, err := checkInvocationResponse(twoStdin, []byte(body))
	if err == nil || errors.Is(err, errInvalidResponse) {
		t.Fatalf("two stdin routes: %v %v", r, err)
	}
	protoAssertNoSecret(t, err.Error(), []string{"sv-x", "sv-y"})
}

func TestCheckInvocationResponseWithSSH(t *testing.T) {
	key := newSSHTestKey(t, "ed25519")
	requested := map[string]secretDelivery{"token": {}, "release-signing": {}}
	body := fmt.Sprintf(`{"result":"APPROVED","secrets":{
		"token":{"type":"environment","variables":{"T":{"value":"sv-t"}}},
		"release-signing":{"description":"Release signing key","type":"ssh","public_key":%q}}}`, key.line)
	resp, err := checkInvocationResponse(requested, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.SSH == nil || resp.SSH.Secret != "release-signing" || !bytes.Equal(resp.SSH.PublicKey.Marshal(), key.pub.Marshal()) || resp.SSH.AuthorizedKey != key.line {
		t.Fatalf("ssh selection %+v", resp.SSH)
	}
	if got := environmentOf(resp); !reflect.DeepEqual(got, map[string]string{"T": "sv-t"}) {
		t.Errorf("environment %v", got)
	}
	// Without a comment is fine too.
	fields := strings.Fields(key.line)
	bare := fields[0] + " " + fields[1]
	body = fmt.Sprintf(`{"result":"APPROVED","secrets":{"token":{"type":"environment","variables":{}},"release-signing":{"type":"ssh","public_key":%q}}}`, bare)
	if _, err := checkInvocationResponse(requested, []byte(body)); err != nil {
		t.Errorf("key without comment: %v", err)
	}
}

func TestCheckInvocationResponseRules(t *testing.T) {
	key := newSSHTestKey(t, "ed25519")
	other := newSSHTestKey(t, "ed25519")
	certPath := filepath.Join(t.TempDir(), "ca")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", certPath).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-s", certPath, "-I", "id", key.path+".pub").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	certLine, _ := os.ReadFile(key.path + "-cert.pub")

	base := protoTestdata(t, "protocol-invocation-response.json")
	type doc = map[string]any
	secret := func(d doc, name string) doc { return d["secrets"].(doc)[name].(doc) }
	vars := func(d doc, name string) doc { return secret(d, name)["variables"].(doc) }
	sshSecret := func(line string) doc { return doc{"type": "ssh", "public_key": line} }

	cases := []struct {
		name    string
		request func(r map[string]secretDelivery)
		mutate  func(d doc)
		raw     string // replaces the document when set
		wantErr string // "" = accepted
		outcome responseOutcome
		check   func(t *testing.T, r *invocationResponse)
	}{
		// The response's secret set is exactly the request's.
		{name: "requested secret missing", mutate: func(d doc) { delete(d["secrets"].(doc), "plain") }, wantErr: `"plain" was requested but not returned`},
		{name: "unrequested secret", mutate: func(d doc) {
			d["secrets"].(doc)["extra"] = doc{"type": "environment", "variables": doc{}}
		}, wantErr: `"extra" was returned but not requested`},
		{name: "secrets missing", mutate: func(d doc) { delete(d, "secrets") }, wantErr: `missing "secrets"`},
		{name: "secrets not an object", mutate: func(d doc) { d["secrets"] = []any{"plain"} }, wantErr: `"secrets" is not an object`},
		{name: "secret not an object", mutate: func(d doc) { d["secrets"].(doc)["plain"] = "sv-x" }, wantErr: `secret "plain" is not an object`},
		// Member forms.
		{name: "type missing", mutate: func(d doc) { delete(secret(d, "plain"), "type") }, wantErr: `missing "type"`},
		{name: "type unsupported", mutate: func(d doc) { secret(d, "plain")["type"] = "password" }, wantErr: `unsupported type "password"`},
		{name: "description not a string", mutate: func(d doc) { secret(d, "plain")["description"] = 5 }, wantErr: `"description" is not a string`},
		{name: "variables missing", mutate: func(d doc) { delete(secret(d, "plain"), "variables") }, wantErr: `missing "variables"`},
		{name: "variables as a list", mutate: func(d doc) { secret(d, "plain")["variables"] = []any{"PLAIN_TOKEN"} }, wantErr: `"variables" is not an object`},
		{name: "variable as a bare string", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = "sv-bare" }, wantErr: `variable "PLAIN_TOKEN" is not an object`},
		{name: "value missing", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{} }, wantErr: `missing "value"`},
		{name: "value null", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{"value": nil} }, wantErr: `"value" is not a string`},
		{name: "value a number", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{"value": 12345} }, wantErr: `"value" is not a string`},
		// Routing: only, omit, rename and stdin sources.
		{name: "only: selected variable missing", request: func(r map[string]secretDelivery) {
			r["github"].Environment.Only = append(r["github"].Environment.Only, "GH_EXTRA")
		}, wantErr: `lacks variable "GH_EXTRA" selected by only`},
		{name: "only: unselected variable returned", mutate: func(d doc) { vars(d, "github")["GH_OTHER"] = doc{"value": "sv-other"} },
			wantErr: `returned variable "GH_OTHER" not selected by only`},
		{name: "omit: omitted variable returned", mutate: func(d doc) { vars(d, "cloudflare")["CLOUDFLARE_ACCOUNT_ID"] = doc{"value": "sv-account"} },
			wantErr: `returned omitted variable "CLOUDFLARE_ACCOUNT_ID"`},
		{name: "rename source missing", request: func(r map[string]secretDelivery) {
			r["cloudflare"].Environment.Rename = map[string]string{"CLOUDFLARE_ZONE": "ZONE"}
		}, wantErr: `lacks variable "CLOUDFLARE_ZONE" named by rename`},
		{name: "stdin source missing", request: func(r map[string]secretDelivery) {
			r["github"].Environment.Stdin = ""
			r["plain"] = secretDelivery{Environment: &environmentDelivery{Stdin: "PLAIN_INPUT"}}
		}, wantErr: `lacks variable "PLAIN_INPUT" named by stdin`},
		// Same final name: identical values merge, different values fail.
		{name: "conflicting final name across secrets", mutate: func(d doc) { vars(d, "plain")["GITHUB_HOST"] = doc{"value": "sv-evil-host"} },
			wantErr: `deliver different values for "GITHUB_HOST"`},
		{name: "identical final name across secrets", mutate: func(d doc) { vars(d, "plain")["GITHUB_HOST"] = doc{"value": "github.com"} },
			check: func(t *testing.T, r *invocationResponse) {
				if environmentOf(r)["GITHUB_HOST"] != "github.com" {
					t.Error("merged value lost")
				}
			}},
		{name: "conflicting final name inside one secret", request: func(r map[string]secretDelivery) {
			r["cloudflare"].Environment.Rename = map[string]string{"CF_A": "CF_B"}
		}, mutate: func(d doc) {
			vars(d, "cloudflare")["CF_A"] = doc{"value": "sv-a"}
			vars(d, "cloudflare")["CF_B"] = doc{"value": "sv-b"}
		}, wantErr: `delivers different values for "CF_B"`},
		{name: "stdin value stays out of the environment", check: func(t *testing.T, r *invocationResponse) {
			if _, ok := environmentOf(r)["GH_TOKEN"]; ok {
				t.Error("stdin variable also in the environment")
			}
		}},
		{name: "stored name unusable in the environment", mutate: func(d doc) { vars(d, "plain")["BAD=NAME"] = doc{"value": "sv-v"} },
			wantErr: `invalid environment variable name "BAD=NAME"`},
		{name: "NUL in an environment value", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{"value": "sv-a\x00b"} },
			wantErr: `contains a NUL byte`},
		// SSH secrets.
		{name: "two SSH secrets", request: func(r map[string]secretDelivery) { r["ssh2"] = secretDelivery{} },
			mutate: func(d doc) {
				d["secrets"].(doc)["plain"] = sshSecret(key.line)
				d["secrets"].(doc)["ssh2"] = sshSecret(other.line)
			}, wantErr: `more than one SSH secret`},
		{name: "one SSH secret", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(key.line) },
			check: func(t *testing.T, r *invocationResponse) {
				if r.SSH == nil || r.SSH.Secret != "plain" {
					t.Error("SSH secret not selected")
				}
			}},
		{name: "SSH secret with environment options", request: func(r map[string]secretDelivery) {
			r["plain"] = secretDelivery{Environment: &environmentDelivery{Omit: []string{"X"}}}
		}, mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(key.line) }, wantErr: `cannot honour environment options`},
		{name: "SSH public key placeholder", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret("ssh-ed25519 AAAA...") },
			wantErr: `not an OpenSSH public key`},
		{name: "SSH public key with options", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(`command="sh" ` + key.line) },
			wantErr: `not an OpenSSH public key`},
		{name: "SSH public key on two lines", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(key.line + "\n" + other.line) },
			wantErr: `not a single line`},
		{name: "SSH certificate", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(strings.TrimSpace(string(certLine))) },
			wantErr: `certificate`},
		{name: "SSH public key missing", mutate: func(d doc) { d["secrets"].(doc)["plain"] = doc{"type": "ssh"} },
			wantErr: `missing "public_key"`},
		// Result forms.
		{name: "result missing", mutate: func(d doc) { delete(d, "result") }, wantErr: `missing "result"`},
		{name: "result ABORTED (client-only)", mutate: func(d doc) { d["result"] = "ABORTED" }, wantErr: `unexpected result "ABORTED"`},
		{name: "result lowercase", mutate: func(d doc) { d["result"] = "approved" }, wantErr: `unexpected result`},
		{name: "result not a string", mutate: func(d doc) { d["result"] = true }, wantErr: `"result" is not a string`},
		{name: "denied", raw: `{"result":"DENIED","reason":"USER_DENIED","message":"The request was denied."}`, outcome: outcomeDenied,
			check: func(t *testing.T, r *invocationResponse) {
				if r.Denial != (deviceDenial{Reason: "USER_DENIED", Message: "The request was denied."}) || r.Secrets != nil {
					t.Errorf("denial %+v", r.Denial)
				}
			}},
		{name: "denied by policy", raw: `{"result":"DENIED","reason":"POLICY_DENIED","message":""}`, outcome: outcomeDenied},
		{name: "denied as invalid", raw: `{"result":"DENIED","reason":"INVALID_REQUEST","message":"m"}`, outcome: outcomeDenied},
		{name: "denied other", raw: `{"result":"DENIED","reason":"OTHER","message":"m","secrets":{"plain":{}}}`, outcome: outcomeDenied},
		{name: "denied with unknown reason", raw: `{"result":"DENIED","reason":"BORED","message":"m"}`, wantErr: `unknown denial reason "BORED"`},
		{name: "denied without message", raw: `{"result":"DENIED","reason":"OTHER"}`, wantErr: `missing "message"`},
		{name: "denied without reason", raw: `{"result":"DENIED","message":"m"}`, wantErr: `missing "reason"`},
		{name: "authenticated error", raw: `{"error":"INVALID_STATE","message":"pending"}`, outcome: outcomeDeviceError,
			check: func(t *testing.T, r *invocationResponse) {
				if r.Error != (deviceError{Code: "INVALID_STATE", Message: "pending"}) {
					t.Errorf("error %+v", r.Error)
				}
			}},
		{name: "authenticated error with unknown code", raw: `{"error":"FUTURE_CODE","message":"x","result":"APPROVED"}`, outcome: outcomeDeviceError,
			check: func(t *testing.T, r *invocationResponse) {
				if r.Error.Code != "FUTURE_CODE" || r.Secrets != nil {
					t.Errorf("error %+v", r.Error)
				}
			}},
		{name: "authenticated error without message", raw: `{"error":"INVALID_STATE"}`, wantErr: `missing "message"`},
		{name: "authenticated error code not a string", raw: `{"error":1,"message":"m"}`, wantErr: `"error" is not a string`},
		// Framing.
		{name: "not JSON", raw: `APPROVED sv-raw`, wantErr: `not a JSON object`},
		{name: "JSON array", raw: `[{"result":"APPROVED"}]`, wantErr: `not a JSON object`},
		{name: "trailing data", raw: `{"result":"DENIED","reason":"OTHER","message":"m"} {}`, wantErr: `not a JSON object`},
		{name: "invalid UTF-8", raw: "{\"result\":\"DENIED\",\"reason\":\"OTHER\",\"message\":\"\xff\"}", wantErr: `not valid UTF-8`},
		// Unknown members are ignored at every level.
		{name: "unknown members", mutate: func(d doc) {
			d["future"] = doc{"x": 1}
			secret(d, "plain")["future"] = []any{1}
			vars(d, "plain")["PLAIN_TOKEN"].(doc)["future"] = "f"
		}, check: func(t *testing.T, r *invocationResponse) {
			if environmentOf(r)["PLAIN_TOKEN"] != "sv-plain-token" {
				t.Error("value lost")
			}
		}},
		{name: "insignificant whitespace", raw: "\n { \"result\" : \"APPROVED\" , \"secrets\" : { \"plain\" : { \"type\" : \"environment\" , \"variables\" : { \"PLAIN_TOKEN\" : { \"value\" : \"sv-p\" } } } ," +
			" \"cloudflare\" : { \"type\" : \"environment\" , \"variables\" : { } } , \"github\" : { \"type\" : \"environment\" , \"variables\" : { \"GH_HOST\" : { \"value\" : \"h\" } , \"GH_TOKEN\" : { \"value\" : \"sv-t\" } } } } } \n",
			check: func(t *testing.T, r *invocationResponse) {
				if environmentOf(r)["PLAIN_TOKEN"] != "sv-p" || r.Stdin == nil || r.Stdin.Value != "sv-t" {
					t.Error("whitespace changed the result")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requested := baseInvocationRequest()
			if c.request != nil {
				c.request(requested)
			}
			if err := validateSecretDeliveries(requested); err != nil {
				t.Fatalf("test request invalid: %v", err)
			}
			body := []byte(c.raw)
			if c.raw == "" {
				var d doc
				json.Unmarshal(base, &d)
				if c.mutate != nil {
					c.mutate(d)
				}
				body = protoMarshal(t, d)
			}
			var parsed any
			json.Unmarshal(body, &parsed)
			secrets := append(protoSecretValues(parsed), "sv-raw", "sv-bare", "sv-x")

			resp, err := checkInvocationResponse(requested, body)
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("accepted; want error containing %q", c.wantErr)
				}
				if !errors.Is(err, errInvalidResponse) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %q, want errInvalidResponse containing %q", err, c.wantErr)
				}
				protoAssertNoSecret(t, err.Error(), secrets)
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			want := c.outcome
			if want == 0 {
				want = outcomeApproved
			}
			if resp.Outcome != want {
				t.Fatalf("outcome %v, want %v", resp.Outcome, want)
			}
			if c.check != nil {
				c.check(t, resp)
			}
		})
	}
}

// ---- SecretList, SecretUpload, PairingFinish, PairingRemove ----

func TestCheckSecretListResponse(t *testing.T) {
	ok := `{"secrets":{
		"release-signing":{"description":"Release signing key","type":"ssh","public_key":"ssh-ed25519 AAAAC3 x"},
		"github":{"description":"GitHub API access","type":"environment","variables":["GH_TOKEN","GH_HOST"],"future":1},
		"card":{"type":"credit-card","number":"n"}},"future":true}`
	r, err := checkSecretListResponse([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	want := []secretMetadata{
		{Name: "card", Type: "credit-card"},
		{Name: "github", Description: "GitHub API access", HasDescription: true, Type: "environment", Variables: []string{"GH_TOKEN", "GH_HOST"}},
		{Name: "release-signing", Description: "Release signing key", HasDescription: true, Type: "ssh", PublicKey: "ssh-ed25519 AAAAC3 x"},
	}
	if r.Outcome != outcomeApproved || !reflect.DeepEqual(r.Secrets, want) {
		t.Errorf("list %+v", r.Secrets)
	}
	if r, err := checkSecretListResponse([]byte(`{"secrets":{}}`)); err != nil || len(r.Secrets) != 0 || r.Secrets == nil {
		t.Errorf("empty list: %v %v", r, err)
	}
	if r, err := checkSecretListResponse([]byte(`{"error":"INVALID_STATE","message":"m"}`)); err != nil || r.Outcome != outcomeDeviceError || r.Error.Code != "INVALID_STATE" {
		t.Errorf("error form: %v %v", r, err)
	}
	bad := map[string]string{
		"secrets missing":          `{}`,
		"secrets a list":           `{"secrets":[]}`,
		"entry not an object":      `{"secrets":{"a":"x"}}`,
		"type missing":             `{"secrets":{"a":{"variables":[]}}}`,
		"description not a string": `{"secrets":{"a":{"type":"environment","variables":[],"description":1}}}`,
		"variables missing":        `{"secrets":{"a":{"type":"environment"}}}`,
		"variables an object":      `{"secrets":{"a":{"type":"environment","variables":{"A":{"value":"sv-leak"}}}}}`,
		"variable not a string":    `{"secrets":{"a":{"type":"environment","variables":[1]}}}`,
		"duplicate variable":       `{"secrets":{"a":{"type":"environment","variables":["A","A"]}}}`,
		"public key missing":       `{"secrets":{"a":{"type":"ssh"}}}`,
		"empty name":               `{"secrets":{"":{"type":"ssh","public_key":"k"}}}`,
	}
	for name, body := range bad {
		_, err := checkSecretListResponse([]byte(body))
		if !errors.Is(err, errInvalidResponse) {
			t.Errorf("%s: %v", name, err)
		} else {
			protoAssertNoSecret(t, err.Error(), []string{"sv-leak"})
		}
	}
}

func TestCheckResultResponses(t *testing.T) {
	cases := []struct {
		name    string
		check   func([]byte) (*resultResponse, error)
		body    string
		outcome responseOutcome
		message string
		wantErr bool
	}{
		{"finish accepted", checkPairingFinishResponse, `{"result":"ACCEPTED"}`, outcomeApproved, "", false},
		{"finish rejected", checkPairingFinishResponse, `{"result":"REJECTED"}`, outcomeDenied, "", false},
		{"finish error", checkPairingFinishResponse, `{"error":"INVALID_STATE","message":"m"}`, outcomeDeviceError, "", false},
		{"finish received is wrong", checkPairingFinishResponse, `{"result":"RECEIVED"}`, 0, "", true},
		{"finish result missing", checkPairingFinishResponse, `{}`, 0, "", true},
		{"upload received", checkSecretUploadResponse, `{"result":"RECEIVED","extra":1}`, outcomeApproved, "", false},
		{"upload rejected", checkSecretUploadResponse, `{"result":"REJECTED","message":"The upload cannot be accepted."}`, outcomeDenied, "The upload cannot be accepted.", false},
		{"upload rejected without message", checkSecretUploadResponse, `{"result":"REJECTED"}`, 0, "", true},
		{"upload accepted is wrong", checkSecretUploadResponse, `{"result":"ACCEPTED"}`, 0, "", true},
		{"upload error", checkSecretUploadResponse, `{"error":"UNSUPPORTED_METHOD","message":"m"}`, outcomeDeviceError, "", false},
		{"remove empty object", checkPairingRemoveResponse, `{}`, outcomeApproved, "", false},
		{"remove with unknown members", checkPairingRemoveResponse, `{"note":"bye"}`, outcomeApproved, "", false},
		{"remove error", checkPairingRemoveResponse, `{"error":"INVALID_STATE","message":"m"}`, outcomeDeviceError, "", false},
		{"remove not an object", checkPairingRemoveResponse, `null`, 0, "", true},
		{"remove malformed error", checkPairingRemoveResponse, `{"error":null}`, 0, "", true},
	}
	for _, c := range cases {
		r, err := c.check([]byte(c.body))
		if c.wantErr {
			if !errors.Is(err, errInvalidResponse) {
				t.Errorf("%s: %v, want invalid response", c.name, err)
			}
			continue
		}
		if err != nil || r.Outcome != c.outcome || r.Message != c.message {
			t.Errorf("%s: %+v %v", c.name, r, err)
		}
	}
}

// environmentOf is what the approved secrets add to an empty environment,
// built the one way the launcher builds it.
func environmentOf(r *invocationResponse) map[string]string {
	env, err := buildEnvironment(envPlan{Secrets: r.Secrets})
	if err != nil {
		panic(err)
	}
	out := map[string]string{}
	for _, entry := range env {
		name, value, _ := strings.Cut(entry, "=")
		out[name] = value
	}
	return out
}

// Tests of protocol.go (client-device-protocol.md
// "Git signing" and "SSH authentication"): GitSign and SshAuthenticate
// response checks, SSHSIG verification, signature algorithms and the
// user-authentication message parser, with keys and signatures from the
// real ssh-keygen; plus the SSH test-key helpers the other tests share.

type sshTestKey struct {
	signer ssh.AlgorithmSigner
	pub    ssh.PublicKey
	line   string // authorized_keys form
	path   string
}

// newSSHTestKey makes a key with the real ssh-keygen.
func newSSHTestKey(t *testing.T, keyType string, extra ...string) *sshTestKey {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("these tests need OpenSSH's ssh-keygen:", err)
	}
	path := filepath.Join(t.TempDir(), "key")
	args := append([]string{"-q", "-t", keyType, "-N", "", "-C", "test@example", "-f", path}, extra...)
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	line, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return &sshTestKey{signer: signer.(ssh.AlgorithmSigner), pub: signer.PublicKey(), line: strings.TrimSpace(string(line)), path: path}
}

// sshkeygenSign makes an armored SSHSIG with ssh-keygen -Y sign.
func sshkeygenSign(t *testing.T, k *sshTestKey, namespace string, message []byte) string {
	t.Helper()
	msgPath := filepath.Join(t.TempDir(), "message")
	if err := os.WriteFile(msgPath, message, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", namespace, "-f", k.path, msgPath).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	sig, err := os.ReadFile(msgPath + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	return string(sig)
}

// sshkeygenVerify checks an armored signature with ssh-keygen -Y verify, so
// hand-built test signatures are known to be what OpenSSH accepts.
func sshkeygenVerify(t *testing.T, k *sshTestKey, namespace string, message []byte, armored string) bool {
	t.Helper()
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed")
	sigPath := filepath.Join(dir, "sig")
	if err := os.WriteFile(allowed, []byte("test@example "+k.line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sigPath, []byte(armored), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "test@example", "-n", namespace, "-s", sigPath)
	cmd.Stdin = bytes.NewReader(message)
	return cmd.Run() == nil
}

func sshWireString(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// buildSSHSIG assembles an armored SSHSIG by hand so tests can vary one
// field at a time.
func buildSSHSIG(t *testing.T, k *sshTestKey, alg, namespace, hashAlg string, message []byte) string {
	t.Helper()
	var digest []byte
	switch hashAlg {
	case "sha256":
		d := sha256.Sum256(message)
		digest = d[:]
	default:
		d := sha512.Sum512(message)
		digest = d[:]
	}
	signed := []byte("SSHSIG")
	signed = sshWireString(signed, []byte(namespace))
	signed = sshWireString(signed, nil)
	signed = sshWireString(signed, []byte(hashAlg))
	signed = sshWireString(signed, digest)
	sig, err := k.signer.SignWithAlgorithm(rand.Reader, signed, alg)
	if err != nil {
		t.Fatal(err)
	}
	blob := []byte("SSHSIG")
	blob = binary.BigEndian.AppendUint32(blob, 1)
	blob = sshWireString(blob, k.pub.Marshal())
	blob = sshWireString(blob, []byte(namespace))
	blob = sshWireString(blob, nil)
	blob = sshWireString(blob, []byte(hashAlg))
	blob = sshWireString(blob, ssh.Marshal(sig))
	return armorSSHSIG(blob)
}

func armorSSHSIG(blob []byte) string {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b strings.Builder
	b.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	b.WriteString(enc + "\n-----END SSH SIGNATURE-----\n")
	return b.String()
}

// userAuthMessage builds an SSH_MSG_USERAUTH_REQUEST to be signed.
func userAuthMessage(sessionID []byte, method, alg string, keyBlob, hostKey []byte) []byte {
	m := sshWireString(nil, sessionID)
	m = append(m, 50)
	m = sshWireString(m, []byte("git"))
	m = sshWireString(m, []byte("ssh-connection"))
	m = sshWireString(m, []byte(method))
	m = append(m, 1)
	m = sshWireString(m, []byte(alg))
	m = sshWireString(m, keyBlob)
	if hostKey != nil {
		m = sshWireString(m, hostKey)
	}
	return m
}

// ---- GitSign and SshAuthenticate ----

func TestCheckGitSignResponse(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	other := newSSHTestKey(t, "ed25519")
	message := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@example> 0 +0000\n\nsigned\n")
	approved := func(armored string) []byte {
		return protoMarshal(t, map[string]string{"result": "APPROVED", "signature": armored})
	}

	good := []struct {
		name    string
		key     *sshTestKey
		armored string
	}{
		{"ssh-keygen ed25519", ed, sshkeygenSign(t, ed, "git", message)},
		{"ssh-keygen rsa", rsaKey, sshkeygenSign(t, rsaKey, "git", message)},
		{"sha256 digest", ed, buildSSHSIG(t, ed, ssh.KeyAlgoED25519, "git", "sha256", message)},
		{"rsa-sha2-256", rsaKey, buildSSHSIG(t, rsaKey, ssh.KeyAlgoRSASHA256, "git", "sha512", message)},
	}
	for _, c := range good {
		if !sshkeygenVerify(t, c.key, "git", message, c.armored) {
			t.Fatalf("%s: OpenSSH itself rejects the test signature", c.name)
		}
		r, err := checkGitSignResponse(approved(c.armored), c.key.pub, message)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.Outcome != outcomeApproved || r.Armored != c.armored || r.Signature == nil {
			t.Errorf("%s: result %+v", c.name, r)
		}
	}

	edSig := sshkeygenSign(t, ed, "git", message)
	lines := strings.Split(edSig, "\n")
	corrupt := []byte(edSig)
	corrupt[len("-----BEGIN SSH SIGNATURE-----\n")+60] ^= 0x01
	// ssh-rsa (SHA-1) is a valid OpenSSH signature that v1 forbids.
	sha1Sig := buildSSHSIG(t, rsaKey, ssh.KeyAlgoRSA, "git", "sha512", message)
	bad := []struct {
		name    string
		key     *sshTestKey
		armored string
		message []byte
		want    string
	}{
		{"different message", ed, edSig, append(bytes.Clone(message), 'x'), "does not verify"},
		{"file namespace", ed, sshkeygenSign(t, ed, "file", message), message, `namespace "file"`},
		{"other key's signature", ed, sshkeygenSign(t, other, "git", message), message, "different key"},
		{"verified against another key", other, edSig, message, "different key"},
		{"ssh-rsa SHA-1", rsaKey, sha1Sig, message, "rsa-sha2"},
		{"unknown hash", ed, buildSSHSIG(t, ed, ssh.KeyAlgoED25519, "git", "sha1", message), message, "unsupported SSHSIG hash"},
		{"corrupted body", ed, string(corrupt), message, ""},
		{"missing begin line", ed, strings.Join(lines[1:], "\n"), message, "not an armored"},
		{"missing end line", ed, strings.Join(lines[:len(lines)-2], "\n") + "\n", message, "not an armored"},
		{"blank line inside", ed, lines[0] + "\n\n" + strings.Join(lines[1:], "\n"), message, "not an armored"},
		{"not base64", ed, "-----BEGIN SSH SIGNATURE-----\n!!!!\n-----END SSH SIGNATURE-----\n", message, "base64"},
		{"not SSHSIG", ed, armorSSHSIG([]byte("NOTSIG\x00\x00\x00\x01")), message, "magic"},
		{"trailing bytes", ed, armorSSHSIG(append(sshsigBlobOf(t, edSig), 0)), message, "malformed"},
	}
	for _, c := range bad {
		_, err := checkGitSignResponse(approved(c.armored), c.key.pub, c.message)
		if err == nil || !errors.Is(err, errInvalidResponse) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want invalid response containing %q", c.name, err, c.want)
		}
	}

	forms := []struct {
		name    string
		body    string
		outcome responseOutcome
		wantErr string
	}{
		{"denied", `{"result":"DENIED","reason":"USER_DENIED","message":"no"}`, outcomeDenied, ""},
		{"error", `{"error":"INVALID_REQUEST","message":"bad token"}`, outcomeDeviceError, ""},
		{"approved without signature", `{"result":"APPROVED"}`, 0, `missing "signature"`},
		{"signature not a string", `{"result":"APPROVED","signature":["x"]}`, 0, `"signature" is not a string`},
		{"aborted", `{"result":"ABORTED","reason":"OTHER","message":"m"}`, 0, "unexpected result"},
	}
	for _, c := range forms {
		r, err := checkGitSignResponse([]byte(c.body), ed.pub, message)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || r.Outcome != c.outcome {
			t.Errorf("%s: %v %v", c.name, r, err)
		}
	}
}

func TestCheckSignatureAlgorithm(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	ecdsa := newSSHTestKey(t, "ecdsa")
	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	// A security-key public key (the device cannot hold one; refuse it).
	skBlob := sshWireString(nil, []byte("sk-ssh-ed25519@openssh.com"))
	skBlob = sshWireString(skBlob, ed.pub.Marshal()[19:])
	skBlob = sshWireString(skBlob, []byte("ssh:"))
	sk, err := ssh.ParsePublicKey(skBlob)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		key  ssh.PublicKey
		sig  ssh.Signature
		want string // "" = accepted
	}{
		{"ed25519", ed.pub, ssh.Signature{Format: "ssh-ed25519", Blob: make([]byte, 64)}, ""},
		{"ed25519 short", ed.pub, ssh.Signature{Format: "ssh-ed25519", Blob: make([]byte, 63)}, "64 bytes"},
		{"ed25519 as rsa", ed.pub, ssh.Signature{Format: "rsa-sha2-512", Blob: make([]byte, 64)}, "does not match"},
		{"ecdsa", ecdsa.pub, ssh.Signature{Format: ecdsa.pub.Type(), Blob: []byte{1}}, ""},
		{"rsa-sha2-512", rsaKey.pub, ssh.Signature{Format: "rsa-sha2-512", Blob: []byte{1}}, ""},
		{"rsa-sha2-256", rsaKey.pub, ssh.Signature{Format: "rsa-sha2-256", Blob: []byte{1}}, ""},
		{"ssh-rsa", rsaKey.pub, ssh.Signature{Format: "ssh-rsa", Blob: []byte{1}}, "rsa-sha2"},
		{"security key", sk, ssh.Signature{Format: sk.Type(), Blob: make([]byte, 64)}, "security-key"},
	}
	for _, c := range cases {
		err := checkSignatureAlgorithm(c.key, &c.sig)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// sshsigBlobOf undoes the armor of a signature.
func sshsigBlobOf(t *testing.T, armored string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(armored), "\n")
	raw, err := base64.StdEncoding.DecodeString(strings.Join(lines[1:len(lines)-1], ""))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestCheckSSHAuthenticateResponse(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	other := newSSHTestKey(t, "ed25519")
	session := bytes.Repeat([]byte{0x5a}, 32)
	hostKey := other.pub.Marshal()

	sign := func(k *sshTestKey, msg []byte, alg string) string {
		sig, err := k.signer.SignWithAlgorithm(rand.Reader, msg, alg)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(ssh.Marshal(sig))
	}
	approved := func(sig string) []byte {
		return protoMarshal(t, map[string]string{"result": "APPROVED", "signature": sig})
	}

	edMsg := userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, ed.pub.Marshal(), nil)
	edHostBound := userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, ed.pub.Marshal(), hostKey)
	rsa512 := userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA512, rsaKey.pub.Marshal(), nil)
	rsa256 := userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA256, rsaKey.pub.Marshal(), nil)
	good := []struct {
		name string
		key  *sshTestKey
		msg  []byte
		alg  string
	}{
		{"ed25519", ed, edMsg, ssh.KeyAlgoED25519},
		{"ed25519 host-bound", ed, edHostBound, ssh.KeyAlgoED25519},
		{"rsa-sha2-512", rsaKey, rsa512, ssh.KeyAlgoRSASHA512},
		{"rsa-sha2-256", rsaKey, rsa256, ssh.KeyAlgoRSASHA256},
	}
	for _, c := range good {
		r, err := checkSSHAuthenticateResponse(approved(sign(c.key, c.msg, c.alg)), c.key.pub, c.msg)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.Outcome != outcomeApproved || r.Signature == nil || r.Signature.Format != c.alg {
			t.Errorf("%s: %+v", c.name, r)
		}
		if err := c.key.pub.Verify(c.msg, r.Signature); err != nil {
			t.Errorf("%s: returned signature does not verify: %v", c.name, err)
		}
	}

	edSigBlob, _ := base64.StdEncoding.DecodeString(sign(ed, edMsg, ssh.KeyAlgoED25519))
	flipped := bytes.Clone(edSigBlob)
	flipped[len(flipped)-1] ^= 1
	shortSig := ssh.Marshal(&ssh.Signature{Format: ssh.KeyAlgoED25519, Blob: make([]byte, 63)})
	bad := []struct {
		name string
		key  *sshTestKey
		msg  []byte
		sig  string
		want string
	}{
		{"algorithm differs from request", rsaKey, rsa512, sign(rsaKey, rsa512, ssh.KeyAlgoRSASHA256), "differs from the requested"},
		{"signature over another message", ed, edMsg, sign(ed, edHostBound, ssh.KeyAlgoED25519), "does not verify"},
		{"other key's signature", ed, edMsg, sign(other, edMsg, ssh.KeyAlgoED25519), "does not verify"},
		{"tampered signature", ed, edMsg, base64.StdEncoding.EncodeToString(flipped), "does not verify"},
		{"trailing bytes after blob", ed, edMsg, base64.StdEncoding.EncodeToString(append(bytes.Clone(edSigBlob), 0)), "malformed"},
		{"63-byte Ed25519 signature", ed, edMsg, base64.StdEncoding.EncodeToString(shortSig), "64 bytes"},
		{"not base64", ed, edMsg, "%%%", "not base64"},
		{"empty blob", ed, edMsg, "", "malformed"},
	}
	for _, c := range bad {
		_, err := checkSSHAuthenticateResponse(approved(c.sig), c.key.pub, c.msg)
		if err == nil || !errors.Is(err, errInvalidResponse) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want invalid response containing %q", c.name, err, c.want)
		}
	}

	if r, err := checkSSHAuthenticateResponse([]byte(`{"result":"DENIED","reason":"USER_DENIED","message":"no"}`), ed.pub, edMsg); err != nil || r.Outcome != outcomeDenied {
		t.Errorf("denied: %v %v", r, err)
	}
	if r, err := checkSSHAuthenticateResponse([]byte(`{"error":"INVALID_REQUEST","message":"m"}`), ed.pub, edMsg); err != nil || r.Outcome != outcomeDeviceError {
		t.Errorf("error: %v %v", r, err)
	}
	// The request itself is checked before any response is trusted.
	if _, err := checkSSHAuthenticateResponse(approved(sign(ed, edMsg, ssh.KeyAlgoED25519)), other.pub, edMsg); err == nil {
		t.Error("response accepted for a message naming another key")
	}
}

func TestParseSSHUserAuthMessage(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	host := newSSHTestKey(t, "ed25519")
	session := []byte("session-id")
	blob := ed.pub.Marshal()
	valid := userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, blob, nil)
	m, err := parseSSHUserAuthMessage(valid)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.SessionID) != "session-id" || m.User != "git" || m.Method != "publickey" || m.Algorithm != "ssh-ed25519" || !bytes.Equal(m.PublicKey, blob) || m.HostKey != nil {
		t.Errorf("parsed %+v", m)
	}
	if err := m.checkKey(ed.pub); err != nil {
		t.Errorf("checkKey: %v", err)
	}
	hb, err := parseSSHUserAuthMessage(userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, host.pub.Marshal()))
	if err != nil || !bytes.Equal(hb.HostKey, host.pub.Marshal()) {
		t.Errorf("host-bound: %v", err)
	}

	withByte := func(i int, b byte) []byte { v := bytes.Clone(valid); v[i] = b; return v }
	sessionLen := 4 + len(session)
	bad := map[string][]byte{
		"empty":                     nil,
		"empty session id":          userAuthMessage(nil, "publickey", ssh.KeyAlgoED25519, blob, nil),
		"wrong message number":      withByte(sessionLen, 51),
		"wrong service":             bytes.Replace(valid, []byte("ssh-connection"), []byte("ssh-connectioX"), 1),
		"password method":           userAuthMessage(session, "password", ssh.KeyAlgoED25519, blob, nil),
		"query without signature":   bytes.Replace(valid, []byte("publickey\x01"), []byte("publickey\x00"), 1),
		"legacy ssh-rsa":            userAuthMessage(session, "publickey", ssh.KeyAlgoRSA, blob, nil),
		"unknown algorithm":         userAuthMessage(session, "publickey", "ssh-dss", blob, nil),
		"trailing byte":             append(bytes.Clone(valid), 0),
		"truncated":                 valid[:len(valid)-1],
		"host key on plain form":    userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, blob, host.pub.Marshal()),
		"host-bound without key":    userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, nil),
		"host-bound empty key":      userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, []byte{}),
		"host-bound key no data":    userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, sshWireString(nil, []byte("ssh-ed25519"))),
		"host-bound empty key type": userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, append(sshWireString(nil, nil), 1, 2)),
		"empty key blob":            userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, nil, nil),
		"oversized length":          append(binary.BigEndian.AppendUint32(nil, 0xffffffff), valid[4:]...),
	}
	for name, msg := range bad {
		if m, err := parseSSHUserAuthMessage(msg); err == nil {
			t.Errorf("%s: accepted %+v", name, m)
		}
	}

	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	keyCases := []struct {
		name string
		msg  []byte
		key  ssh.PublicKey
		ok   bool
	}{
		{"ed25519 key, ed25519 alg", valid, ed.pub, true},
		{"request for another key", valid, host.pub, false},
		{"rsa key, ed25519 alg", userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, rsaKey.pub.Marshal(), nil), rsaKey.pub, false},
		{"ed25519 key, rsa alg", userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA512, blob, nil), ed.pub, false},
		{"rsa key, rsa-sha2-256", userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA256, rsaKey.pub.Marshal(), nil), rsaKey.pub, true},
	}
	for _, c := range keyCases {
		m, err := parseSSHUserAuthMessage(c.msg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := m.checkKey(c.key); (err == nil) != c.ok {
			t.Errorf("%s: checkKey %v, want ok=%v", c.name, err, c.ok)
		}
		token := bytes.Repeat([]byte{3}, 32)
		id, _ := newULID()
		if _, err := newSSHAuthenticateRequest(id, token, "s", c.key, c.msg); (err == nil) != c.ok {
			t.Errorf("%s: newSSHAuthenticateRequest %v, want ok=%v", c.name, err, c.ok)
		}
	}
	id, _ := parseULID("01K2ENXDTW1P3XAR4J7V7C9D0H")
	req, err := newSSHAuthenticateRequest(id, bytes.Repeat([]byte{1}, 32), "prod", ed.pub, valid)
	if err != nil {
		t.Fatal(err)
	}
	protoAssertJSONEqual(t, protoMarshal(t, req), []byte(`{
		"app_info":{"name":"agentknock","version":"dev"},"lib_info":{"name":"agentknock","version":"dev"},
		"method":"SshAuthenticate","invocation_id":"01K2ENXDTW1P3XAR4J7V7C9D0H",
		"invocation_token":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","secret":"prod",
		"message":"`+base64.StdEncoding.EncodeToString(valid)+`"}`))
}

// Tests of exchange_durable.go: a stored request rebuilds the identical
// envelope in another process, and the record is kept, reused and removed
// as the rules say.

func TestOutstandingRequestRebuildsTheIdenticalEnvelope(t *testing.T) {
	home := t.TempDir()
	dev := newTestDevice(t)
	keys := testPairedKeysFor(t, dev)
	p := &pairingState{Pending: true, DeviceID: dev.id, ClientID: keys.ClientID, ClientToken: "ERERERERERERERERERERERERERERERERERERERERERE",
		ClientPSK: keys.PSK, DeviceKey: dev.pk, RotatedAt: 1700000000}
	s, err := lockStateDir(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.writePairing(p); err != nil {
		t.Fatal(err)
	}
	s.unlock()

	envelope := func() ([]byte, *outstandingRequest) {
		rec, err := outstandingFor(home, p, methodPairingFinish, "agentknock pairing finish", newMethodRequest(methodPairingFinish))
		if err != nil {
			t.Fatal(err)
		}
		rnd, err := newSeedStream(rec.Seed)
		if err != nil {
			t.Fatal(err)
		}
		k := keys
		k.PSK = rec.PSK
		x, payload, err := sealProtectedPlaintext(rnd, k, rec.RequestID, nil, rec.Plaintext)
		if err != nil {
			t.Fatal(err)
		}
		if _, pt := testDeviceOpenRequest(t, dev, keys.ClientID, keys.PSK, x); !bytes.Contains(pt, []byte(`"method":"PairingFinish"`)) {
			t.Fatalf("the device opens %q", pt)
		}
		b, _ := json.Marshal(payload)
		return b, rec
	}
	first, rec1 := envelope()
	if rec1.resent {
		t.Fatal("a new record is marked as resent")
	}
	// What a rerun after kill -9 does: the same record, the same bytes.
	second, rec2 := envelope()
	if !rec2.resent || rec2.RequestID != rec1.RequestID || !bytes.Equal(first, second) {
		t.Fatalf("the rerun sent a different request:\n%s\n%s", first, second)
	}
	stored, err := readPairingFile(home)
	if err != nil || stored.Outstanding == nil || stored.Outstanding.RequestID != rec1.RequestID {
		t.Fatalf("pairing.json holds %+v (%v)", stored, err)
	}
	// Answered: the record goes, and the next request is a new one.
	if err := clearOutstanding(home, rec1.RequestID); err != nil {
		t.Fatal(err)
	}
	third, rec3 := envelope()
	if rec3.RequestID == rec1.RequestID || bytes.Equal(third, first) {
		t.Fatal("a cleared record was reused")
	}
}
