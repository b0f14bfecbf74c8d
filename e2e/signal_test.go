// End-to-end cancellation while waiting for the device (command-execution.md
// "Signals and process state"): SIGINT or SIGTERM stops agentknock with
// 128+N, the command never runs, and the device gets an ABORTED completion
// that withdraws its pending decision; an interrupted `pairing finish`
// leaves the pairing pending on both sides.
package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSignalWhileWaiting(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			value := secretValue(t, "signal")
			w.setSecret("slow", map[string]string{"SLOW_TOKEN": value})
			w.startServe(approvePairingPolicy, "") // "slow" is asked
			clientID := w.pair()

			marker := w.markerPath("ran")
			p := w.startAgentknock(runOpts{}, "-s", "slow", "--", "touch", marker)
			items := w.waitPending()
			if len(items) != 1 || items[0].ClientID != clientID || strings.Join(items[0].Secrets, ",") != "slow" {
				t.Fatalf("pending = %+v, want one request for slow from %s", items, clientID)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			r := p.wait()
			if r.code != 128+int(sig) || exists(marker) {
				t.Fatalf("agentknock after %v: %s", sig, r)
			}
			w.waitLog(`completion ` + items[0].RequestID + ` from client ` + clientID + `: Invocation ABORTED/CANCELLED$`)
			deadline := time.Now().Add(waitGuard)
			for len(w.pending()) != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the cancelled request stays pending on the device: %+v", w.pending())
				}
				time.Sleep(20 * time.Millisecond)
			}
			// Approving it now is impossible: the decision is gone.
			if r := w.device("approve", items[0].ID); r.code == 0 {
				t.Fatalf("approve of a cancelled request succeeded: %s", r)
			}
			w.leakCheck(value)
		})
	}
}

// An interrupted `pairing finish` keeps the pending pairing on both sides;
// once the code is confirmed, finish works.
func TestSignalWhilePairingFinish(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	value := secretValue(t, "finish")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	w.startServe(askPairingPolicy, "")
	code := w.startPairing()
	clientID := w.pairingFile()["client_id"].(string)
	p := w.startAgentknock(runOpts{}, "pairing", "finish")
	w.waitLog("client " + clientID + ": PairingFinish accepted")
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if r := p.wait(); r.code != 130 {
		t.Fatalf("pairing finish after SIGINT: %s", r)
	}
	w.waitLog(`completion .* from client ` + clientID + `: PairingFinish ABORTED/CANCELLED$`)
	if st := w.pairingFile(); st["pending"] != true || st["client_id"] != clientID {
		t.Fatalf("pairing.json after an interrupted finish: %v", st)
	}
	if items := w.pending(); len(items) != 1 || items[0].Kind != "pairing" {
		t.Fatalf("device pending after an interrupted finish: %+v", items)
	}
	w.deviceOK("pairing", "confirm", code)
	if r := w.agentknock("pairing", "finish"); r.code != 0 {
		t.Fatalf("pairing finish after confirmation: %s", r)
	}
	r := w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run after the pairing: %s", r)
	}
	w.leakCheck(value)
}
