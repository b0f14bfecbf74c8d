// kill -9 loops (issue finding 2): a client killed at any point of pairing
// finish, of a run that rotates the PSK, or of a secret upload, then run
// again. What must hold each time: pairing.json stays valid and private,
// the rerun of pairing finish activates the pairing with the device's
// answer to the first request (no abort advice, one active client on the
// device), no secret reaches a file, and no stale temporary file survives
// the next write.
package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killAfter starts agentknock and kills it with SIGKILL after d (or lets
// it finish first); it returns the combined output.
func (w *world) killAfter(d time.Duration, o runOpts, args ...string) string {
	w.t.Helper()
	p := w.startAgentknock(o, args...)
	select {
	case <-p.done:
	case <-time.After(d):
		p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
	out := p.stdout.String() + p.stderr.String()
	w.record(out)
	return out
}

// killDelays spreads kills over the first ~100 ms of a command, where the
// request is stored, sent, answered and acted on.
func killDelays(n int) []time.Duration {
	d := make([]time.Duration, n)
	for i := range d {
		d[i] = time.Duration((i*37)%100) * time.Millisecond
	}
	return d
}

func (w *world) checkStateFiles() {
	w.t.Helper()
	entries, err := os.ReadDir(w.home)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() == "pairing.json" {
			checkMode(w.t, filepath.Join(w.home, e.Name()), 0o600)
			w.pairingFile() // parses
		}
	}
}

func (w *world) staleTemporaries() []string {
	m, _ := filepath.Glob(filepath.Join(w.home, ".pairing.json.*"))
	return m
}

func TestKillDuringPairingFinish(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startServe(approvePairingPolicy, "")
	var outputs []string
	for round := range 2 {
		if r := w.agentknock("pairing", "start", w.address); r.code != 0 {
			t.Fatalf("round %d: pairing start: %s", round, r)
		}
		clientID := w.pairingFile()["client_id"].(string)
		for _, d := range killDelays(10) {
			outputs = append(outputs, w.killAfter(d, runOpts{}, "pairing", "finish"))
			w.checkStateFiles()
		}
		r := w.agentknock("pairing", "finish")
		outputs = append(outputs, r.stderr)
		if r.code != 0 && !strings.Contains(r.stderr, "already active") {
			t.Fatalf("round %d: pairing finish after kills: %s", round, r)
		}
		if st := w.pairingFile(); st["pending"] == true || st["outstanding_request"] != nil {
			t.Fatalf("round %d: after finish the pairing is %v", round, st)
		}
		active := 0
		for id, c := range w.clients() {
			if c.State == "active" {
				active++
				if id != clientID {
					t.Fatalf("round %d: client %s is active on the device, not %s", round, id, clientID)
				}
			}
		}
		if active != 1 {
			t.Fatalf("round %d: %d active clients on the device, want 1: %v", round, active, w.clients())
		}
		if s := w.staleTemporaries(); len(s) != 0 {
			t.Fatalf("round %d: stale temporaries after finish: %v", round, s)
		}
		if r := w.agentknock("pairing", "remove"); r.code != 0 {
			t.Fatalf("round %d: pairing remove: %s", round, r)
		}
	}
	for _, o := range outputs {
		if strings.Contains(o, "pairing abort") {
			t.Fatalf("a pairing finish advised abort although the device approved the pairing:\n%s", o)
		}
	}
}

// waitOutput waits until a background run printed text.
func (p *bgProcess) waitOutput(text string) {
	p.w.t.Helper()
	deadline := time.Now().Add(waitGuard)
	for !strings.Contains(p.stderr.String(), text) {
		if time.Now().After(deadline) {
			p.w.t.Fatalf("agentknock %q never printed %q (deadlock guard):\n%s", p.cmd.Args[1:], text, clip(p.stderr.String()))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A pairing finish killed while the device waits for the person, run
// again, and only then confirmed on the device: the rerun must get the
// device's answer to the first request. With a new request id the two
// requests race, and one is REJECTED once the other activated the pairing.
func TestPairingFinishRerunWhileTheFirstWaits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startServe(askPairingPolicy, "")
	for round := range 4 {
		code := w.startPairing()
		clientID := w.pairingFile()["client_id"].(string)
		first := w.startAgentknock(runOpts{}, "pairing", "finish", "--verbose")
		w.waitLog("from client " + clientID + ": PairingFinish accepted")
		first.cmd.Process.Signal(syscall.SIGKILL)
		<-first.done
		rerun := w.startAgentknock(runOpts{}, "pairing", "finish", "--verbose")
		rerun.waitOutput("The device received the pairing confirmation")
		time.Sleep(300 * time.Millisecond) // a second request would reach the device by now
		w.deviceOK("pairing", "confirm", code)
		r := rerun.wait()
		if r.code != 0 || strings.Contains(r.stderr, "abort") {
			t.Fatalf("round %d: the rerun of pairing finish: %s", round, r)
		}
		if c := w.clients()[clientID]; c.State != "active" {
			t.Fatalf("round %d: the device lists the client as %q", round, c.State)
		}
		if r := w.agentknock("pairing", "remove"); r.code != 0 {
			t.Fatalf("round %d: pairing remove: %s", round, r)
		}
	}
}

func TestKillDuringRotatingRuns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "rotation")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	w.startServe(approvePairingPolicy, "")
	w.pair()
	for _, d := range killDelays(12) {
		w.ageRotation()
		w.killAfter(d, runOpts{}, "-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
		w.checkStateFiles()
	}
	w.ageRotation()
	r := w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run after the kills: %s", r)
	}
	if st := w.pairingFile(); st["rotation_key"] != nil {
		t.Fatalf("the last rotation was not confirmed: %v", st["rotation_key"])
	}
	if s := w.staleTemporaries(); len(s) != 0 {
		t.Fatalf("stale temporaries after a write: %v", s)
	}
	w.leakCheck(value)
}

func TestKillDuringSecretUpload(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "upload")
	w.startServe(approvePairingPolicy, "")
	w.pair()
	o := runOpts{env: []string{"UP_TOKEN=" + value}}
	for _, d := range killDelays(10) {
		w.killAfter(d, o, "secret", "upload", "up-crash", "--from-env", "UP_TOKEN")
		w.checkStateFiles()
	}
	r := w.agentknockWith(o, "secret", "upload", "up-crash", "--from-env", "UP_TOKEN")
	if r.code != 0 || !strings.Contains(r.stdout, `Secret upload "up-crash" delivered to the device.`) {
		t.Fatalf("upload after the kills: %s", r)
	}
	if u := w.deviceOK("uploads", "--json"); !strings.Contains(u.stdout, "up-crash") {
		t.Fatalf("the device holds no upload of up-crash: %s", u)
	}
	w.leakCheck(value)
}
