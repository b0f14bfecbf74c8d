// Tests of `agentknock secret` through the built binary (testBinary, from
// launch_linux_test.go): command-line errors and help, and whole exchanges
// with a stand-in device behind the fake relay of relay_test.go, over a
// real WebSocket, checking what the device receives (request and
// completion) and what the user sees.

package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/hkdf"
)

// secretRun is one finished run of the binary.
type secretRun struct {
	code           int
	stdout, stderr string
}

// secretEnv is the environment of a run: the test's own, without anything
// that could redirect it to a real relay or state directory.
func secretEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTKNOCK_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

func runSecret(t *testing.T, cmd *exec.Cmd) secretRun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if cmd.Env == nil {
		cmd.Env = secretEnv()
	}
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return secretRun{code, stdout.String(), stderr.String()}
}

func secretCmd(args ...string) *exec.Cmd {
	return exec.Command(testBinary, append([]string{"secret"}, args...)...)
}

// TestSecretUsageErrors: each mistake exits 2 with the error and the
// pointer to the help, and the state directory is never looked at (it does
// not even exist).
func TestSecretUsageErrors(t *testing.T) {
	t.Parallel()
	home := filepath.Join(t.TempDir(), "absent")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"upload", "x", "--from-file", "A=-", "--from-env-file", "-"}, "only one secret source can read from standard input"},
		{[]string{"upload", "x", "--from-ssh-key", "-", "--from-file", "A=-"}, "--from-ssh-key cannot be combined"},
		{[]string{"upload", "x", "--from-ssh-key", "k", "--from-env", "A"}, "--from-ssh-key cannot be combined"},
		{[]string{"upload", "x", "--from-env", "A", "--from-file", "A=f"}, "variable A is given by more than one source"},
		{[]string{"upload", "x"}, "a source is required"},
		{[]string{"upload", "x", "--quiet"}, "a source is required"},
		{[]string{"upload", "x", "--from-env", "A", "--update", "--replace"}, "--update and --replace cannot be used together"},
		{[]string{"upload", "--from-env", "A"}, "the secret NAME is missing"},
		{[]string{"upload", "x", "--from-env", "A", "--from-prompt"}, "flag needs an argument"},
		{[]string{"list", "extra"}, `unexpected argument "extra"`},
		{[]string{"list", "--from-env", "A"}, "not defined"},
		{[]string{"remove", "x"}, `unknown secret command "remove"`},
	}
	for _, c := range cases {
		args := append([]string{c.args[0], "--agentknock-home", home}, c.args[1:]...)
		r := runSecret(t, secretCmd(args...))
		if r.code != 2 || !strings.HasPrefix(r.stderr, "error: ") || !strings.Contains(r.stderr, c.want) ||
			!strings.HasSuffix(r.stderr, "\n\nFor more information, try 'agentknock secret --help'.\n") || r.stdout != "" {
			t.Errorf("%q: exit %d\nstdout %q\nstderr %q\nwant exit 2 and %q", c.args, r.code, r.stdout, r.stderr, c.want)
		}
	}
	if _, err := os.Stat(home); !os.IsNotExist(err) {
		t.Errorf("the state directory was created: %v", err)
	}
	if r := runSecret(t, secretCmd()); r.code != 2 || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("no subcommand: exit %d, stderr %q", r.code, r.stderr)
	}
}

func TestSecretHelp(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"--help"}, []string{"agentknock secret list", "agentknock secret upload NAME", "Examples:"}},
		{[]string{"list", "--help"}, []string{"Example output:", `"public_key"`, "--agentknock-home"}},
		{[]string{"upload", "-h"}, []string{"--from-env NAME", "--from-env-file PATH", "--from-file NAME=PATH", "--from-prompt NAME",
			"--from-ssh-key PATH", "--passphrase-prompt", "--passphrase-env VAR", "--update", "--replace", "ssh-keygen -p -f PATH", "Examples:"}},
		{[]string{"upload", "name", "--from-env", "A", "--help"}, []string{"--from-ssh-key PATH"}},
	}
	for _, c := range cases {
		r := runSecret(t, secretCmd(c.args...))
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%q: exit %d, stderr %q", c.args, r.code, r.stderr)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stdout, w) {
				t.Errorf("%q: help lacks %q", c.args, w)
			}
		}
	}
}

func TestSecretNeedsActivePairing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, args := range [][]string{{"list"}, {"upload", "x", "--from-env", "HOME"}} {
		r := runSecret(t, secretCmd(append(args, "--agentknock-home", home)...))
		if r.code != 1 || !strings.HasPrefix(r.stderr, "Agentknock isn't paired") {
			t.Errorf("%q: exit %d, stderr %q", args, r.code, r.stderr)
		}
	}
}

// ---- a stand-in device behind the fake relay ----

// secretTestDevice holds the device's side of a pairing written to a state
// directory, and what it received.
type secretTestDevice struct {
	t        *testing.T
	home     string
	id       ULID
	sk       kem.PrivateKey
	clientID ULID
	psk      []byte
	relay    *relayFake

	mu         sync.Mutex
	request    []byte // the last request plaintext
	completion []byte // the last completion plaintext
}

// newSecretTestDevice pairs a fresh state directory with a device that
// answers each request with respond(request plaintext), sealed. A nil
// respond refuses every connection as an inactive client.
func newSecretTestDevice(t *testing.T, respond func(request []byte) string) *secretTestDevice {
	t.Helper()
	pub, priv, err := hpke.KEM_X25519_HKDF_SHA256.Scheme().GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := pub.MarshalBinary()
	d := &secretTestDevice{t: t, home: t.TempDir(), sk: priv, psk: make([]byte, 32)}
	rand.Read(d.psk)
	if d.id, err = newULID(); err != nil {
		t.Fatal(err)
	}
	if d.clientID, err = newULID(); err != nil {
		t.Fatal(err)
	}
	token := make([]byte, 32)
	rand.Read(token)

	var relayURL string
	if respond == nil {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"error":"CLIENT_INACTIVE","message":"revoked in this test"}`)
		}))
		t.Cleanup(srv.Close)
		relayURL = "ws" + strings.TrimPrefix(srv.URL, "http")
	} else {
		d.relay = newRelayFake(t, false, nil, func(n int, c *relayFakeConn) { d.serve(c, respond) })
		relayURL = d.relay.baseURL().String()
	}

	s, err := lockStateDir(d.home)
	if err != nil {
		t.Fatal(err)
	}
	defer s.unlock()
	err = s.writePairing(&pairingState{
		DeviceID: d.id, ClientID: d.clientID, ClientToken: base64.RawURLEncoding.EncodeToString(token),
		ClientPSK: d.psk, DeviceKey: pk, RotatedAt: uint64(time.Now().Unix()), RelayURL: relayURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// serve plays one exchange: open the request, answer it, take the
// completion.
func (d *secretTestDevice) serve(c *relayFakeConn, respond func([]byte) string) {
	f := c.next()
	requestID, _ := f.m["request_id"].(string)
	frame := func(typ string, members ...any) map[string]any {
		m := map[string]any{"type": typ, "client_id": f.m["client_id"], "request_id": requestID}
		for i := 0; i+1 < len(members); i += 2 {
			m[members[i].(string)] = members[i+1]
		}
		return m
	}
	if f.m["type"] != "message" || f.m["kind"] != "request" || f.m["client_id"] != d.clientID.String() {
		c.fail("want the request, got %s", f.raw)
	}
	c.send(frame("ack", "kind", "request"))
	var payload struct{ Key, Ciphertext []byte }
	raw, _ := json.Marshal(f.m["payload"])
	if err := json.Unmarshal(raw, &payload); err != nil {
		c.fail("request payload %s: %v", raw, err)
	}
	rid, err := parseULID(requestID)
	if err != nil {
		c.fail("request id %q", requestID)
	}
	recv, err := cryptoSuite.NewReceiver(d.sk, cryptoHPKEInfo(d.id, rid))
	if err != nil {
		c.fail("receiver: %v", err)
	}
	ctx, err := recv.SetupPSK(payload.Key, d.psk, d.clientID[:])
	if err != nil {
		c.fail("setup: %v", err)
	}
	request, err := ctx.Open(payload.Ciphertext, nil)
	if err != nil {
		c.fail("the request does not open: %v", err)
	}
	d.mu.Lock()
	d.request = request
	d.mu.Unlock()

	// The response: ChaCha20-Poly1305 under keys derived from the exported
	// response secret, salted with enc and a fresh random.
	secret := ctx.Export([]byte("agentknock-v1 response"), 32)
	random := make([]byte, 32)
	rand.Read(random)
	salt := append(append([]byte{}, payload.Key...), random...)
	derive := func(label string, n int) []byte {
		out := make([]byte, n)
		io.ReadFull(hkdf.New(sha256.New, secret, salt, []byte(label)), out)
		return out
	}
	aead, _ := chacha20poly1305.New(derive("key", 32))
	sealed := aead.Seal(nil, derive("nonce", 12), []byte(respond(request)), nil)
	c.send(frame("message", "kind", "response", "payload", map[string]any{"nonce": random, "ciphertext": sealed}))
	if a := c.next(); a.m["type"] != "ack" || a.m["kind"] != "response" {
		c.fail("want the response ack, got %s", a.raw)
	}
	m := c.next()
	if m.m["type"] != "message" || m.m["kind"] != "completion" {
		c.fail("want the completion, got %s", m.raw)
	}
	var done struct{ Ciphertext []byte }
	raw, _ = json.Marshal(m.m["payload"])
	json.Unmarshal(raw, &done)
	completion, err := ctx.Open(done.Ciphertext, nil)
	if err != nil {
		c.fail("the completion does not open: %v", err)
	}
	d.mu.Lock()
	d.completion = completion
	d.mu.Unlock()
	c.send(frame("ack", "kind", "completion"))
	c.hold()
}

func (d *secretTestDevice) cmd(args ...string) *exec.Cmd {
	return secretCmd(append(args, "--agentknock-home", d.home)...)
}

// received decodes what the device got; the completion may be nil when
// the client sent none.
func (d *secretTestDevice) received(request, completion any) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := json.Unmarshal(d.request, request); err != nil {
		d.t.Fatalf("request %q: %v", d.request, err)
	}
	if completion != nil {
		if err := json.Unmarshal(d.completion, completion); err != nil {
			d.t.Fatalf("completion %q: %v", d.completion, err)
		}
	}
}

type secretTestCompletion struct {
	AppInfo *softwareInfo `json:"app_info"`
	Result  string        `json:"result"`
	Reason  string        `json:"reason"`
	Message *string       `json:"message"`
}

func TestSecretListThroughRelay(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, func([]byte) string {
		return `{"secrets":{"b-ssh":{"type":"ssh","public_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEx","description":"Signing"},` +
			`"a-env":{"type":"environment","variables":["TOKEN","HOST"]}}}`
	})
	r := runSecret(t, d.cmd("list"))
	// The reference's shape: members in name order, description null
	// when the device sent none (tests/secret_list.rs).
	want := "{\n  \"secrets\": {\n    \"a-env\": {\n      \"description\": null,\n      \"type\": \"environment\",\n      \"variables\": [\n        \"HOST\",\n        \"TOKEN\"\n      ]\n    },\n" +
		"    \"b-ssh\": {\n      \"description\": \"Signing\",\n      \"public_key\": \"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEx\",\n      \"type\": \"ssh\"\n    }\n  }\n}\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("exit %d\nstdout\n%s\nstderr\n%s", r.code, r.stdout, r.stderr)
	}
	var req map[string]any
	var done map[string]any
	d.received(&req, &done)
	if req["method"] != "SecretList" || req["app_info"] == nil || len(req) != 3 {
		t.Errorf("request %v", req)
	}
	if _, has := done["result"]; has || done["app_info"] == nil || len(done) != 2 {
		t.Errorf("completion %v, want client information only", done)
	}
}

func TestSecretListRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, response, stderr, reason string
	}{
		{"invalid", `{"secrets":{"x":{"type":"environment","variables":"TOKEN"}}}`, "the device's response is invalid (invalid device response: secret \"x\": \"variables\" is not an array).\nAgentknock didn't receive a secret list.\nSuggested action: ", abortInvalidResponse},
		{"device error", `{"error":"INVALID_STATE","message":"locked \u001b[2J"}`, "the device reported an error: INVALID_STATE: locked \\x1b[2J.\nAgentknock didn't receive a secret list.\nSuggested action: Read the device's error above", abortClientError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := newSecretTestDevice(t, func([]byte) string { return c.response })
			r := runSecret(t, d.cmd("list"))
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, c.stderr) {
				t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
			}
			var done secretTestCompletion
			d.received(&map[string]any{}, &done)
			if done.Result != resultAborted || done.Reason != c.reason {
				t.Errorf("completion %+v, want ABORTED/%s", done, c.reason)
			}
		})
	}
}

type secretTestUpload struct {
	Method string `json:"method"`
	Mode   string `json:"mode"`
	Secret struct {
		Name        string                       `json:"name"`
		Description *string                      `json:"description"`
		Type        string                       `json:"type"`
		Variables   map[string]map[string]string `json:"variables"`
		PrivateKey  string                       `json:"private_key"`
	} `json:"secret"`
}
