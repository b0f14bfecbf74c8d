// End-to-end pairing (client-device protocol "Initial pairing", cryptosystem
// "Pairing" and the SAS): the verification code a person compares, a wrong
// code, the single-pairing rule, and removal (PairingRemove) as the device
// sees it.
package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const askPairingPolicy = `{"default":"ask","pairing":"ask","secrets":{"demo":"approve","prod":"deny"}}`

// startPairing runs `pairing start` and returns the code it printed.
func (w *world) startPairing() string {
	w.t.Helper()
	r := w.agentknock("pairing", "start", w.address)
	m := sasLine.FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		w.t.Fatalf("pairing start: %s", r)
	}
	return m[1]
}

// otherCode changes one digit of a verification code.
func otherCode(code string) string {
	b := []byte(code)
	if b[0] == '9' {
		b[0] = '0'
	} else {
		b[0]++
	}
	return string(b)
}

func TestPairingWithVerificationCode(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "pairing")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	w.startServe(askPairingPolicy, "")

	// A wrong code rejects the pairing; finish then fails; abort cleans up.
	code := w.startPairing()
	rejected := w.pairingFile()["client_id"].(string)
	items := w.waitPending()
	if len(items) != 1 || items[0].Kind != "pairing" || items[0].ClientID != rejected {
		t.Fatalf("device pending = %+v, want one pairing of client %s", items, rejected)
	}
	if r := w.device("pairing", "confirm", otherCode(code)); r.code != 1 {
		t.Fatalf("pairing confirm with a wrong digit: %s", r)
	}
	if items := w.pending(); len(items) != 0 {
		t.Fatalf("the rejected pairing is still pending on the device: %+v", items)
	}
	r := w.agentknock("pairing", "finish")
	if r.code != 1 || !strings.Contains(r.stderr, "rejected") {
		t.Fatalf("pairing finish after a rejection: %s", r)
	}
	if c, ok := w.clients()[rejected]; ok && c.State == "active" {
		t.Fatalf("the device lists rejected client %s as active", rejected)
	}
	if r := w.agentknock("pairing", "abort"); r.code != 0 {
		t.Fatalf("pairing abort: %s", r)
	}
	if exists(filepath.Join(w.home, "pairing.json")) {
		t.Fatal("pairing abort left pairing.json")
	}
	if r := w.agentknock("-s", "demo", "--", "true"); r.code != 1 {
		t.Fatalf("run after abort: %s", r)
	}

	// The right code, confirmed while `pairing finish` already waits.
	code = w.startPairing()
	st := w.pairingFile()
	clientID := st["client_id"].(string)
	if st["pending"] != true || clientID == rejected {
		t.Fatalf("pairing.json after start: pending=%v client_id=%s (rejected one %s)", st["pending"], clientID, rejected)
	}
	if r := w.agentknock("pairing", "status"); r.code != 0 || !strings.HasPrefix(r.stdout, "Pairing status: waiting for confirmation.\n") {
		t.Fatalf("pairing status while pending: %s", r)
	}
	finish := w.startAgentknock(runOpts{}, "pairing", "finish")
	w.waitLog("client " + clientID + ": PairingFinish accepted")
	if r := w.device("pairing", "confirm", code); r.code != 0 {
		t.Fatalf("pairing confirm %q: %s", code, r)
	}
	if r := finish.wait(); r.code != 0 {
		t.Fatalf("pairing finish: %s", r)
	}
	r = w.agentknock("pairing", "status", "--verbose")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Pairing status: active.\n") || !strings.Contains(r.stdout, clientID) {
		t.Fatalf("pairing status: %s", r)
	}
	if c := w.clients()[clientID]; c.State != "active" {
		t.Fatalf("device lists client %s as %q, want active", clientID, c.State)
	}
	checkMode(t, w.home, 0o700|os.ModeDir)
	checkMode(t, filepath.Join(w.home, "pairing.json"), 0o600)
	if _, ok := w.pairingFile()["pending"]; ok {
		t.Fatal("pairing.json still has pending after finish")
	}

	// The pairing works.
	r = w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run after pairing: %s", r)
	}

	// A second pairing is refused and changes nothing.
	before, err := os.ReadFile(filepath.Join(w.home, "pairing.json"))
	if err != nil {
		t.Fatal(err)
	}
	r = w.agentknock("pairing", "start", w.address)
	if r.code != 1 || sasLine.MatchString(r.stdout) {
		t.Fatalf("pairing start while paired: %s", r)
	}
	after, err := os.ReadFile(filepath.Join(w.home, "pairing.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatalf("pairing start while paired changed pairing.json:\n%s\n->\n%s", before, after)
	}
	checkMode(t, filepath.Join(w.home, "pairing.json"), 0o600)
	w.leakCheck(value)
}

func checkMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode() & (os.ModePerm | os.ModeDir); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}

func TestPairingRemove(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "remove")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	s := w.startServe(approvePairingPolicy, "")
	// The relay chosen at pairing is stored with it and used afterwards.
	stored := runOpts{storedRelay: true}
	if r := w.agentknockWith(stored, "pairing", "start", w.address, "--relay", s.url); r.code != 0 {
		t.Fatalf("pairing start --relay: %s", r)
	}
	if r := w.agentknockWith(stored, "pairing", "finish"); r.code != 0 {
		t.Fatalf("pairing finish with the stored relay: %s", r)
	}
	clientID := w.pairingFile()["client_id"].(string)
	if r := w.agentknockWith(stored, "-s", "demo", "--", "true"); r.code != 0 {
		t.Fatalf("run with the stored relay: %s", r)
	}
	saved, err := os.ReadFile(filepath.Join(w.home, "pairing.json"))
	if err != nil {
		t.Fatal(err)
	}

	if r := w.agentknockWith(stored, "pairing", "remove"); r.code != 0 {
		t.Fatalf("pairing remove: %s", r)
	}
	if exists(filepath.Join(w.home, "pairing.json")) {
		t.Fatal("pairing remove left pairing.json")
	}
	if c := w.clients()[clientID]; c.State != "revoked" {
		t.Fatalf("device lists removed client %s as %q, want revoked", clientID, c.State)
	}
	marker := w.markerPath("ran")
	r := w.agentknock("-s", "demo", "--", "touch", marker)
	if r.code != 1 || !strings.Contains(r.stderr, "Agentknock isn't paired") || exists(marker) {
		t.Fatalf("run after pairing remove: %s", r)
	}

	// The old credentials no longer work: the relay refuses the client.
	if err := os.WriteFile(filepath.Join(w.home, "pairing.json"), saved, 0o600); err != nil {
		t.Fatal(err)
	}
	r = w.agentknock("-s", "demo", "--", "touch", marker)
	if r.code != 1 || !strings.Contains(r.stderr, "paired client is inactive") || exists(marker) {
		t.Fatalf("run with the removed pairing's credentials: %s", r)
	}
	w.leakCheck(value)
}

// Revoking a client on the device while its run waits for approval ends
// the run at once with a clear error (close code 4003), not a hang.
func TestRevokeWhileWaiting(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "revoke")
	w.setSecret("slow", map[string]string{"SLOW_TOKEN": value})
	w.startServe(approvePairingPolicy, "") // "slow" is asked
	clientID := w.pair()
	marker := w.markerPath("ran")
	p := w.startAgentknock(runOpts{}, "-s", "slow", "--", "touch", marker)
	w.waitPending()
	w.deviceOK("revoke", clientID)
	r := p.wait()
	if r.code != 1 || exists(marker) || !strings.Contains(r.stderr, "paired client is inactive") {
		t.Fatalf("run whose client was revoked while waiting: %s", r)
	}
	if items := w.pending(); len(items) != 0 {
		t.Fatalf("the revoked client's request stays pending: %+v", items)
	}
	r = w.agentknock("secret", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "paired client is inactive") {
		t.Fatalf("secret list of a revoked client: %s", r)
	}
	w.leakCheck(value)
}
