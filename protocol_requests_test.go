// protocol_requests_test.go: tests of protocol_requests.go, the request
// and completion encodings (client-device-protocol.md "Pairing activation",
// "Invocation", "Git signing", "SSH authentication", "Secret upload") and
// their client-side validation.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

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
