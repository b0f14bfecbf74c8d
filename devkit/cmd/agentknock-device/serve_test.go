// Tests of `serve` as a user runs it: the URL line, real WebSocket
// upgrades against the relay it serves, the control socket, one serve per
// state directory, graceful exit on SIGTERM.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"crypto/sha256"
	"github.com/coder/websocket"
	"golang.org/x/crypto/hkdf"
)

type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	done   chan error
}

func startServe(t *testing.T, dir string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"--state", dir, "serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = testEnv(t, nil)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		p.done <- cmd.Wait()
	}()
	var got []string
	timeout := time.After(guard)
	for len(got) < 2 {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("serve exited before printing its URL; stdout %q, stderr:\n%s", got, p.stderr.String())
			}
			got = append(got, l)
		case <-timeout:
			t.Fatalf("serve printed no URL; stderr:\n%s", p.stderr.String())
		}
	}
	m := regexp.MustCompile(`^AGENTKNOCK_RELAY_URL=(ws://127\.0\.0\.1:[0-9]+)$`).FindStringSubmatch(got[0])
	if m == nil {
		t.Fatalf("first line %q is not the URL line", got[0])
	}
	p.url = m[1]
	if !strings.HasPrefix(got[1], "AGENTKNOCK_PAIRING_ADDRESS=") {
		t.Fatalf("second line %q is not the address line", got[1])
	}
	return p
}

func (p *serveProc) stop(t *testing.T) error {
	t.Helper()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		return err
	case <-time.After(guard):
		t.Fatal("serve did not exit on SIGTERM")
	}
	return nil
}

func newULIDText() string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(time.Now().UnixMilli())<<16)
	rand.Read(b[6:])
	const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	hi, lo := binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- {
		out[i] = alphabet[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out)
}

func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// addressIDOf is the cryptosystem's pairing address id.
func addressIDOf(address string) string {
	out := make([]byte, 16)
	io.ReadFull(hkdf.New(sha256.New, []byte(address), []byte("agentknock-v1"), []byte("agentknock-v1 address")), out)
	return hex.EncodeToString(out)
}

// upgrade sends a WebSocket upgrade request with net/http so the refusal's
// status and JSON body can be read.
func upgrade(t *testing.T, url, token string, asUpgrade bool) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("GET", "http"+strings.TrimPrefix(url, "ws"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if asUpgrade {
		key := make([]byte, 16)
		rand.Read(key)
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", "websocket")
		req.Header.Set("Sec-WebSocket-Version", "13")
		req.Header.Set("Sec-WebSocket-Key", base64.StdEncoding.EncodeToString(key))
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("refusal %d without a JSON body: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, body
}

func TestServe(t *testing.T) {
	dir := stateDir(t)
	address := mustInit(t, dir)
	policyFile := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(policyFile, []byte(`{"default": "deny"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, dir, "--policy", policyFile)
	// stderr is copied by another goroutine: wait for the start line.
	var m []string
	for deadline := time.Now().Add(guard); m == nil; time.Sleep(2 * time.Millisecond) {
		m = regexp.MustCompile(`device ([0-9A-Z]{26})\)`).FindStringSubmatch(p.stderr.String())
		if time.Now().After(deadline) {
			t.Fatalf("serve did not log its device id:\n%s", p.stderr.String())
		}
	}
	deviceID := m[1]

	clientID := newULIDText()
	deviceRoute := p.url + "/v1/device/" + deviceID + "/client/" + clientID

	if status, body := upgrade(t, deviceRoute, newToken(), false); status != http.StatusUpgradeRequired || body["error"] == nil {
		t.Errorf("plain GET: %d %v, want 426 with a JSON error", status, body)
	}
	if status, body := upgrade(t, deviceRoute, newToken(), true); status != http.StatusNotFound || body["error"] == nil {
		t.Errorf("unknown client: %d %v, want 404 with a JSON error", status, body)
	}

	// A real WebSocket on the pairing route admits the client with its
	// token; the same client id with another token is refused.
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	token := newToken()
	conn, resp, err := websocket.Dial(ctx, p.url+"/v1/address/"+addressIDOf(address)+"/request/"+clientID,
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		t.Fatalf("pairing-route upgrade: %v (%v)\n%s", err, resp, p.stderr.String())
	}
	defer conn.CloseNow()
	// The clear pairing request reaches the device, whose clear response
	// comes back through the relay: serve wired the address, the device
	// and the publisher together.
	commitment := make([]byte, 32)
	rand.Read(commitment)
	request, _ := json.Marshal(map[string]any{
		"type": "message", "client_id": clientID, "request_id": clientID, "kind": "request",
		"payload": map[string]string{"version": "agentknock-v1", "commitment": base64.StdEncoding.EncodeToString(commitment)},
	})
	if err := conn.Write(ctx, websocket.MessageText, request); err != nil {
		t.Fatal(err)
	}
	var response struct {
		Payload struct {
			DeviceID  string `json:"device_id"`
			DeviceKey string `json:"device_key"`
		} `json:"payload"`
	}
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("waiting for the pairing response: %v\n%s", err, p.stderr.String())
		}
		var frame map[string]any
		json.Unmarshal(data, &frame)
		if frame["type"] == "error" {
			t.Fatalf("relay error frame: %s", data)
		}
		if frame["type"] == "message" && frame["kind"] == "response" {
			json.Unmarshal(data, &response)
			break
		}
	}
	if response.Payload.DeviceID != deviceID || response.Payload.DeviceKey == "" {
		t.Fatalf("pairing response %+v, want device %s", response.Payload, deviceID)
	}

	status, body := upgrade(t, deviceRoute, newToken(), true)
	if status != http.StatusUnauthorized || body["error"] == nil {
		t.Errorf("bad token on the device route: %d %v, want 401 with a JSON error", status, body)
	}

	// The control socket answers through the real serve.
	r := runCLI(t, "", nil, "--state", dir, "pending", "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Errorf("pending through serve: %s", r)
	}
	if fi, err := os.Stat(filepath.Join(dir, controlSocket)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("control socket: %v %v", fi, err)
	}
	// One serve per state directory.
	r = runCLI(t, "", nil, "--state", dir, "serve", "--listen", "127.0.0.1:0")
	if r.code != 1 || !strings.Contains(r.stderr, "already running") {
		t.Errorf("second serve: %s", r)
	}

	if err := p.stop(t); err != nil {
		t.Fatalf("serve exit after SIGTERM: %v\n%s", err, p.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, controlSocket)); !os.IsNotExist(err) {
		t.Errorf("control socket left behind: %v", err)
	}
	if strings.Contains(p.stderr.String(), token) {
		t.Error("a client token was logged")
	}
	checkModes(t, dir)
}

func TestServeRemoteListenNeedsFlag(t *testing.T) {
	dir := stateDir(t)
	mustInit(t, dir)
	r := runCLI(t, "", nil, "--state", dir, "serve", "--listen", "0.0.0.0:0")
	if r.code != 2 || !strings.Contains(r.stderr, "--allow-remote") {
		t.Fatalf("non-loopback listen without --allow-remote: %s", r)
	}
	cmd := exec.Command(binPath, "--state", dir, "serve", "--listen", "0.0.0.0:0", "--allow-remote")
	cmd.Env = testEnv(t, nil)
	stdout, _ := cmd.StdoutPipe()
	errb := &syncBuffer{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "AGENTKNOCK_RELAY_URL=ws://") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("remote serve: %q %v\n%s", line, err, errb.String())
	}
	cmd.Process.Signal(syscall.SIGTERM)
	go io.Copy(io.Discard, stdout)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("remote serve exit: %v", err)
	}
	if !strings.Contains(errb.String(), "wss://") || !strings.Contains(errb.String(), "TLS") {
		t.Errorf("no TLS warning:\n%s", errb.String())
	}
}
