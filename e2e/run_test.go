// End-to-end `agentknock run` (command-execution.md "Environment
// construction", client-device protocol "Invocation"): routing of returned
// variables, large values, the command's own exit status, denials, and PSK
// rotation across runs (cryptosystem "PSK rotation").
package e2e

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRunRoutesVariables(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Linux limits one environment string ("BIG=value\0") to 128 KiB
	// (MAX_ARG_STRLEN): the largest value a command can receive.
	big := strings.Repeat(secretValue(t, "big"), 1<<17/28+1)[:128<<10-len("BIG=")-1]
	huge := strings.Repeat(secretValue(t, "huge"), 1<<17/29+1)[:128<<10]
	token := secretValue(t, "token")
	user := secretValue(t, "user")
	key := secretValue(t, "key")
	id := secretValue(t, "id")
	w.setSecret("demo", map[string]string{"BIG": big, "DEMO_TOKEN": token, "DEMO_USER": user})
	w.setSecret("cloud", map[string]string{"CLOUD_KEY": key, "CLOUD_ID": id})
	w.setSecret("huge", map[string]string{"HUGE": huge})
	w.startServe(`{"default":"ask","pairing":"approve","secrets":{"demo":"approve","cloud":"approve","huge":"approve"}}`, "")
	w.pair()

	names := []string{"BIG", "DEMO_TOKEN", "TOKEN_RENAMED", "DEMO_USER", "CLOUD_KEY", "CLOUD_ID", "KEEP"}
	r := w.agentknockWith(runOpts{env: []string{
		// Inherited: CLOUD_KEY is replaced by the returned value, CLOUD_ID
		// (omitted) and KEEP stay as they are.
		"CLOUD_KEY=inherited-key", "CLOUD_ID=inherited-id", "KEEP=kept",
	}},
		"run", "-s", "demo", "-s", "cloud",
		"--only-env", "demo", "BIG", "--only-env", "demo", "DEMO_TOKEN",
		"--rename-env", "demo", "DEMO_TOKEN", "TOKEN_RENAMED",
		"--omit-env", "cloud", "CLOUD_ID",
		"--reason", "e2e routing",
		"--", "sh", "-c", envReport(names...))
	want := strings.Join([]string{
		reportLine("BIG", big),
		"DEMO_TOKEN=unset",
		reportLine("TOKEN_RENAMED", token),
		"DEMO_USER=unset",
		reportLine("CLOUD_KEY", key),
		reportLine("CLOUD_ID", "inherited-id"),
		reportLine("KEEP", "kept"),
	}, "\n") + "\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("routed run: %s\nwant stdout:\n%s", r, want)
	}
	// The device saw the routing it approved.
	w.waitLog(`demo: DEMO_TOKEN -> env TOKEN_RENAMED`)

	// Everything returned, nothing routed.
	r = w.agentknock("-s", "demo", "--", "sh", "-c", envReport("BIG", "DEMO_TOKEN", "DEMO_USER"))
	want = reportLine("BIG", big) + "\n" + reportLine("DEMO_TOKEN", token) + "\n" + reportLine("DEMO_USER", user) + "\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("plain run: %s\nwant stdout:\n%s", r, want)
	}

	// A full 128 KiB value travels through relay and device, but the
	// kernel refuses it in an environment: a clear error, nothing runs.
	marker := w.markerPath("ran")
	r = w.agentknock("-s", "huge", "--", "touch", marker)
	if r.code != 1 || exists(marker) || !strings.Contains(r.stderr, "argument list too long") {
		t.Fatalf("run with a 128 KiB variable: %s", r)
	}

	// The same 128 KiB value on standard input, through the invocation
	// service: exact bytes, no newline, nothing in the environment.
	r = w.agentknock("-s", "huge", "--stdin", "huge", "HUGE", "--", "sh", "-c", `printf 'HUGE=%s\n' "${HUGE-unset}"; wc -c | tr -d ' '; echo`)
	if r.code != 0 || r.stdout != fmt.Sprintf("HUGE=unset\n%d\n\n", len(huge)) {
		t.Fatalf("run with a 128 KiB value on standard input: %s", r)
	}
	r = w.agentknock("-s", "huge", "--stdin", "huge", "HUGE", "--", "sh", "-c", "if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi | cut -c1-64")
	if want := fmt.Sprintf("%x\n", sha256.Sum256([]byte(huge))); r.code != 0 || r.stdout != want {
		t.Fatalf("standard input hash: %s, want %s", r, want)
	}

	// The command's own exit status, whatever it is.
	for _, status := range []string{"0", "1", "2", "42", "130"} {
		r = w.agentknock("-s", "demo", "--", "sh", "-c", "exit "+status)
		if got := r.code; strconv.Itoa(got) != status {
			t.Errorf("sh -c 'exit %s' through agentknock exited %d: %s", status, got, r)
		}
	}
	for _, v := range []string{big, huge, token, user, key, id} {
		w.leakCheck(v)
	}
}

func TestRunDenied(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	prod := secretValue(t, "prod")
	other := secretValue(t, "other")
	w.setSecret("prod", map[string]string{"PROD_TOKEN": prod})
	w.setSecret("other", map[string]string{"OTHER_TOKEN": other})
	w.startServe(approvePairingPolicy, "")
	w.pair()

	// By policy: the device names the secret in its message.
	marker := w.markerPath("ran")
	r := w.agentknock("-s", "prod", "--", "touch", marker)
	if r.code != 1 || exists(marker) {
		t.Fatalf("denied run: %s", r)
	}
	if !strings.Contains(r.stderr, "policy denied") || !strings.Contains(r.stderr, "prod") {
		t.Fatalf("denied run does not explain the policy denial and the device's message: %s", r)
	}
	// The client confirms the denial it received (completion DENIED).
	w.waitLog(`completion .*: Invocation DENIED/POLICY_DENIED$`)

	// By a person, with a message that tries to act on the terminal: it
	// is shown, escaped.
	p := w.startAgentknock(runOpts{}, "-s", "other", "--", "touch", marker)
	items := w.waitPending()
	if len(items) != 1 || items[0].Kind != "invocation" || strings.Join(items[0].Secrets, ",") != "other" {
		t.Fatalf("pending = %+v, want one invocation for other", items)
	}
	w.deviceOK("deny", items[0].ID, "--message", "not on a Friday\x1b[2J\x07")
	r = p.wait()
	if r.code != 1 || exists(marker) || !strings.Contains(r.stderr, "denied on the device: not on a Friday") {
		t.Fatalf("run denied by a person: %s", r)
	}
	if strings.ContainsAny(r.stderr, "\x1b\x07") || !strings.Contains(r.stderr, `\x1b[2J\x07`) {
		t.Fatalf("the device's message reached the terminal unescaped: %q", r.stderr)
	}
	w.waitLog(`completion ` + items[0].RequestID + ` .*: Invocation DENIED/USER_DENIED$`)
	w.leakCheck(prod)
	w.leakCheck(other)
}

func TestRunRotatesPSK(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "rotate")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	w.startServe(approvePairingPolicy, "")
	clientID := w.pair()
	if c := w.clients()[clientID]; c.RotatedAt != nil {
		t.Fatalf("device reports a rotation before any: %v", c.RotatedAt)
	}

	path := filepath.Join(w.home, "pairing.json")
	oldPSK := w.pairingFile()["client_psk"].(string)
	w.ageRotation()

	r := w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run with an old PSK: %s", r)
	}
	st := w.pairingFile()
	if _, ok := st["rotation_key"]; ok {
		t.Fatalf("rotation_key still pending after a confirmed run: %v", st["rotation_key"])
	}
	if st["client_psk"] == oldPSK {
		t.Fatal("client_psk did not change")
	}
	if age := time.Since(time.Unix(int64(st["rotated_at"].(float64)), 0)); age > time.Hour {
		t.Fatalf("rotated_at is %v old after the rotation", age)
	}
	checkMode(t, path, 0o600)
	w.waitLog("client " + clientID + ": PSK rotated")
	if c := w.clients()[clientID]; c.RotatedAt == nil {
		t.Fatal("the device does not report the rotation")
	}

	// The next run authenticates under the new PSK only.
	r = w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run after the rotation: %s", r)
	}
	if n := len(w.logLines(": PSK rotated")); n != 1 {
		t.Fatalf("the device rotated %d times, want once", n)
	}
	w.leakCheck(value)
}

// Several runs at once, with a rotation due: exactly one of them rotates
// (under the pairing file's lock), the others carry the same rotation_key
// or the new PSK, and all of them get their secrets.
func TestRunConcurrentWithRotation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "concurrent")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	w.startServe(approvePairingPolicy, "")
	clientID := w.pair()
	w.ageRotation()

	var runs []*bgProcess
	for range 6 {
		runs = append(runs, w.startAgentknock(runOpts{}, "-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN")))
	}
	for i, p := range runs {
		if r := p.wait(); r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
			t.Errorf("concurrent run %d: %s", i, r)
		}
	}
	if st := w.pairingFile(); st["rotation_key"] != nil {
		t.Fatalf("rotation_key still pending after six confirmed runs")
	}
	if n := len(w.logLines("client " + clientID + ": PSK rotated")); n != 1 {
		t.Fatalf("the device rotated %d times, want once", n)
	}
	if r := w.agentknock("-s", "demo", "--", "true"); r.code != 0 {
		t.Fatalf("run after the concurrent runs: %s", r)
	}
	w.leakCheck(value)
}

// ageRotation makes the pairing's PSK two days old, so the next run
// rotates it.
func (w *world) ageRotation() {
	w.t.Helper()
	st := w.pairingFile()
	st["rotated_at"] = time.Now().Add(-48 * time.Hour).Unix()
	b, err := json.Marshal(st)
	if err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.home, "pairing.json"), b, 0o600); err != nil {
		w.t.Fatal(err)
	}
}
