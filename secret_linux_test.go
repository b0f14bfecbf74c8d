// Tests of `agentknock secret` through the built binary (testBinary, from
// run_linux_test.go): command-line errors and help, and whole exchanges
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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cloudflare/circl/hpke"
	"github.com/cloudflare/circl/kem"
	"golang.org/x/crypto/chacha20poly1305"
	"golang.org/x/crypto/hkdf"
	"golang.org/x/sys/unix"
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

// Tests of the terminal prompts of `secret upload` on a real
// pseudo-terminal that is the controlling terminal of the built binary:
// echo is off while it waits, the terminal is restored afterwards and
// after SIGINT or SIGTERM, and the typed value reaches the device.

// testPTY is a pseudo-terminal whose master side output is collected.
type testPTY struct {
	t             *testing.T
	master, slave *os.File

	mu      sync.Mutex
	output  bytes.Buffer
	changed chan struct{}
}

func openTestPTY(t *testing.T) *testPTY {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n int
	rc, _ := master.SyscallConn()
	rc.Control(func(fd uintptr) {
		if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
			n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if err != nil {
		master.Close()
		t.Fatalf("pseudo-terminal setup: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatal(err)
	}
	p := &testPTY{t: t, master: master, slave: slave, changed: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.output.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
	})
	return p
}

func (p *testPTY) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// waitFor returns once the terminal has shown s; the timeout only breaks
// a deadlock.
func (p *testPTY) waitFor(s string) {
	p.t.Helper()
	guard := time.After(20 * time.Second)
	for !strings.Contains(p.text(), s) {
		select {
		case <-p.changed:
		case <-guard:
			p.t.Fatalf("the terminal never showed %q; it shows %q", s, p.text())
		}
	}
}

func (p *testPTY) lflag() uint32 {
	p.t.Helper()
	var t *unix.Termios
	var err error
	rc, _ := p.slave.SyscallConn()
	rc.Control(func(fd uintptr) { t, err = unix.IoctlGetTermios(int(fd), unix.TCGETS) })
	if err != nil {
		p.t.Fatal(err)
	}
	return uint32(t.Lflag)
}

// start runs cmd in a new session with the terminal as its controlling
// terminal and standard input; output goes to the returned buffers.
func (p *testPTY) start(cmd *exec.Cmd) (stdout, stderr *bytes.Buffer) {
	p.t.Helper()
	if p.lflag()&unix.ECHO == 0 {
		p.t.Fatal("a new terminal should echo; the test proves nothing otherwise")
	}
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.slave, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if cmd.Env == nil {
		cmd.Env = secretEnv()
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	return stdout, stderr
}

// hiddenWhileWaiting checks the terminal while the prompt waits.
func (p *testPTY) hiddenWhileWaiting(prompt string) {
	p.t.Helper()
	p.waitFor(prompt)
	if l := p.lflag(); l&unix.ECHO != 0 || l&unix.ICANON == 0 {
		p.t.Errorf("while prompting: lflag %#x, want ECHO off and ICANON on", l)
	}
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

func TestSecretPromptHidesTheValue(t *testing.T) {
	t.Parallel()
	const typed = "typed s3cret ✓"
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	p := openTestPTY(t)
	cmd := d.cmd("upload", "app", "--from-prompt", "TOKEN", "--from-env", "HOST")
	cmd.Env = secretEnv("HOST=example.org")
	_, stderr := p.start(cmd)
	p.hiddenWhileWaiting("Value for TOKEN: ")
	fmt.Fprintf(p.master, "%s\n", typed)
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(p.text(), "s3cret") || strings.Contains(stderr.String(), "s3cret") {
		t.Errorf("the value was shown: terminal %q, stderr %q", p.text(), stderr)
	}
	if p.lflag()&unix.ECHO == 0 {
		t.Error("echo is still off after the upload")
	}
	var up secretTestUpload
	d.received(&up, nil)
	if got := up.Secret.Variables["TOKEN"]["value"]; got != typed {
		t.Errorf("the device received %q, want %q", got, typed)
	}
	if got := up.Secret.Variables["HOST"]["value"]; got != "example.org" {
		t.Errorf("HOST %q", got)
	}
}

func TestSecretPassphrasePrompt(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	path := sshKeygen(t, t.TempDir(), "id", "-t", "ed25519", "-N", "open sesame", "-C", "prompted")
	p := openTestPTY(t)
	cmd := d.cmd("upload", "key", "--from-ssh-key", path, "--passphrase-prompt")
	_, stderr := p.start(cmd)
	p.hiddenWhileWaiting(fmt.Sprintf("Passphrase for %q: ", path))
	fmt.Fprintf(p.master, "open sesame\n")
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(p.text(), "sesame") || p.lflag()&unix.ECHO == 0 {
		t.Errorf("terminal %q, lflag %#x", p.text(), p.lflag())
	}
	var up secretTestUpload
	d.received(&up, nil)
	checkConverted(t, up.Secret.PrivateKey, path+".pub", "prompted")
}

// TestSecretPromptInterrupted: a termination signal during the prompt ends
// the upload with 128+N and gives the terminal back with echo on.
func TestSecretPromptInterrupted(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(signalName(sig), func(t *testing.T) {
			t.Parallel()
			d := newSecretTestDevice(t, nil)
			p := openTestPTY(t)
			cmd := d.cmd("upload", "app", "--from-prompt", "TOKEN")
			_, stderr := p.start(cmd)
			p.hiddenWhileWaiting("Value for TOKEN: ")
			fmt.Fprintf(p.master, "half-typed")
			p.waitFor("Value for TOKEN: ") // still waiting for the newline
			cmd.Process.Signal(sig)
			if code := exitCode(t, cmd); code != 128+int(sig) {
				t.Errorf("exit %d, want %d; stderr %q", code, 128+int(sig), stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted by "+signalName(sig)+"); nothing was uploaded") {
				t.Errorf("stderr %q", stderr)
			}
			if p.lflag()&unix.ECHO == 0 {
				t.Error("echo is still off after the interruption")
			}
		})
	}
}

func TestSecretStdinTerminalRefused(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, nil)
	p := openTestPTY(t)
	cmd := d.cmd("upload", "app", "--from-file", "V=-")
	_, stderr := p.start(cmd)
	if code := exitCode(t, cmd); code != 1 || !strings.Contains(stderr.String(), "standard input is a terminal") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

// secret upload through a fake device on a real relay connection: values,
// SSH keys, refusals, and failures that never show a value.

func TestSecretUploadThroughRelay(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	dir := t.TempDir()
	envFile := filepath.Join(dir, "app.env")
	os.WriteFile(envFile, []byte("# app\nexport DB_URL=\"postgres://u:p@h/db\"\n"), 0o600)
	cmd := d.cmd("upload", "--from-env", "API_TOKEN", "app", "--update", "--description", "", "--from-env-file", envFile, "--from-file", "CERT=-")
	cmd.Env = secretEnv("API_TOKEN=tok-123")
	cmd.Stdin = strings.NewReader("-----CERT-----\n\n")
	r := runSecret(t, cmd)
	// The reference client's three lines on standard output, and nothing
	// on standard error for a quick exchange.
	wantOut := "Secret upload \"app\" delivered to the device.\n" +
		"The secret isn't available until you approve the upload on the device.\n" +
		"Suggested action: Review the secret upload on the device.\n"
	if r.code != 0 || r.stdout != wantOut || r.stderr != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	var up secretTestUpload
	var done secretTestCompletion
	d.received(&up, &done)
	want := map[string]string{"API_TOKEN": "tok-123", "DB_URL": "postgres://u:p@h/db", "CERT": "-----CERT-----\n\n"}
	if up.Method != "SecretUpload" || up.Mode != "UPDATE" || up.Secret.Name != "app" || up.Secret.Type != "environment" ||
		up.Secret.Description == nil || *up.Secret.Description != "" || len(up.Secret.Variables) != len(want) {
		t.Fatalf("request %+v", up)
	}
	for k, v := range want {
		if got := up.Secret.Variables[k]["value"]; got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if done.Result != resultReceived || done.Message != nil || done.AppInfo == nil {
		t.Errorf("completion %+v, want RECEIVED", done)
	}
	for _, v := range want {
		if strings.Contains(r.stderr, v) {
			t.Errorf("stderr contains a value: %q", r.stderr)
		}
	}
}

func TestSecretUploadSSHKeyThroughRelay(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	path := sshKeygen(t, t.TempDir(), "id", "-t", "ed25519", "-N", "pass phrase", "-C", "me@host")
	cmd := d.cmd("upload", "deploy", "--from-ssh-key", path, "--passphrase-env", "KEY_PASS", "--replace", "--description", "Deploy key")
	cmd.Env = secretEnv("KEY_PASS=pass phrase")
	r := runSecret(t, cmd)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var up secretTestUpload
	d.received(&up, nil)
	if up.Mode != "REPLACE" || up.Secret.Type != "ssh" || *up.Secret.Description != "Deploy key" || up.Secret.Variables != nil {
		t.Fatalf("request %+v", up)
	}
	checkConverted(t, up.Secret.PrivateKey, path+".pub", "me@host")
}

func TestSecretUploadRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, response, stderr, result, reason string
		message                                string // the completion's, when not ""
	}{
		{"rejected", `{"result":"REJECTED","message":"name taken \u001b]0;x\u0007"}`, `The device rejected the secret upload: name taken \x1b]0;x\x07`, resultRejected, "", "name taken \x1b]0;x\x07"},
		{"device error", `{"error":"INVALID_REQUEST","message":"bad"}`, "the device reported an error: INVALID_REQUEST: bad.\nAgentknock didn't receive confirmation that the device saved the upload", resultAborted, abortClientError, ""},
		{"invalid", `{"result":"STORED"}`, "the device's response is invalid (invalid device response: unexpected result \"STORED\").\nAgentknock didn't receive confirmation", resultAborted, abortInvalidResponse, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := newSecretTestDevice(t, func([]byte) string { return c.response })
			cmd := d.cmd("upload", "x", "--from-env", "V")
			cmd.Env = secretEnv("V=value-that-stays-secret")
			r := runSecret(t, cmd)
			if r.code != 1 || !strings.Contains(r.stderr, c.stderr) || strings.Contains(r.stderr, "value-that-stays-secret") {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			var done secretTestCompletion
			d.received(&map[string]any{}, &done)
			if done.Result != c.result || done.Reason != c.reason || (c.message != "" && (done.Message == nil || *done.Message != c.message)) {
				t.Errorf("completion %+v, want %s/%s", done, c.result, c.reason)
			}
		})
	}
}

// TestSecretUploadFailuresHideValues: failures after the sources were read
// (by the relay, by the client's own checks) never print a value.
func TestSecretUploadFailuresHideValues(t *testing.T) {
	t.Parallel()
	const value = "v4lue-n0t-for-0utput"
	d := newSecretTestDevice(t, nil)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	cases := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"--from-env", "V"}, "", "not active"},
		{[]string{"--from-file", "V=" + write("v", value)}, "", "not active"},
		{[]string{"--from-env-file", "-"}, "A=" + value + "\n" + value + "\n", "environment file standard input isn't valid: line 2: expected NAME=VALUE"},
		{[]string{"--from-env-file", write("q.env", "A=\""+value+"\\x\"\n")}, "", "line 1: unsupported escape"},
		{[]string{"--from-file", "V=" + write("nul", value+"\x00")}, "", "value of V contains a NUL byte"},
		{[]string{"--from-env", "W"}, "", "environment variable W (--from-env) is not set"},
	}
	for _, c := range cases {
		cmd := d.cmd(append([]string{"upload", "x"}, c.args...)...)
		cmd.Env = secretEnv("V=" + value)
		cmd.Stdin = strings.NewReader(c.stdin)
		r := runSecret(t, cmd)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
		if strings.Contains(r.stderr+r.stdout, value) {
			t.Errorf("%q: the value is in the output: %q", c.args, r.stderr)
		}
	}
}

// TestSecretPromptWithoutTerminal: --from-prompt refuses when the process
// has no controlling terminal.
func TestSecretPromptWithoutTerminal(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, nil)
	cmd := d.cmd("upload", "x", "--from-prompt", "TOKEN")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	r := runSecret(t, cmd)
	if r.code != 1 || !strings.Contains(r.stderr, "there is no terminal to prompt on") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}
