// End-to-end relay faults (client-relay protocol "Recovery" and "Security
// properties"): the relay drops, duplicates, forges, corrupts and replays
// through `serve --faults`, and the client either recovers with exactly one
// exchange or refuses to run the command and completes ABORTED.
package e2e

import (
	"strings"
	"testing"
)

// pairThenFault pairs on a clean serve (a fault must not hit the pairing),
// then restarts serve on the same state with the fault spec.
func pairThenFault(t *testing.T, faults string) (*world, string) {
	w := newWorld(t)
	value := secretValue(t, "fault")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": value})
	w.startServe(approvePairingPolicy, "")
	w.pair()
	w.stopServe()
	w.startServe(approvePairingPolicy, faults)
	return w, value
}

func TestRelayFaultsRecovered(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		faults, applied string
	}{
		{"drop-before-ack:request:1", "fault drop-before-ack: closing client .* before request"},
		{"drop-after-ack:request:1", "fault drop-after-ack: closing client .* after request"},
		{"drop-before-ack:completion:1", "fault drop-before-ack: closing client .* before completion"},
		{"drop-after-ack:completion:1", "fault drop-after-ack: closing client .* after completion"},
		{"duplicate-response:response:1", "fault duplicate-response applied"},
	} {
		t.Run(tc.faults, func(t *testing.T) {
			t.Parallel()
			w, value := pairThenFault(t, tc.faults)
			r := w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
			if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
				t.Fatalf("run: %s\nserve log:\n%s", r, clip(w.log()))
			}
			if tc.applied != "" && len(w.waitLog(tc.applied)) != 1 {
				t.Fatalf("the fault was applied more than once; serve log:\n%s", clip(w.log()))
			}
			// One request reached the device, one approval, one completion.
			w.waitLog(`completion .*: Invocation APPROVED$`)
			if n := len(w.logLines(`: Invocation accepted$`)); n != 1 {
				t.Errorf("the device accepted %d invocation requests, want 1", n)
			}
			if n := len(w.logLines(`approval .*: invocation for client`)); n != 1 {
				t.Errorf("the device decided %d times, want once", n)
			}
			if n := len(w.logLines(`completion .*: Invocation APPROVED$`)); n != 1 {
				t.Errorf("the device saw %d completions, want 1; log:\n%s", n, clip(w.log()))
			}
			// A run after the fault works as usual.
			r = w.agentknock("-s", "demo", "--", "true")
			if r.code != 0 {
				t.Fatalf("run after the fault: %s", r)
			}
			w.leakCheck(value)
		})
	}
}

func TestRelayFaultsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		faults, applied, says, reason string
		warmup                        bool   // a first exchange whose response gets replayed
		action                        string // the suggested action
	}{
		{"forge-error:response:1", "fault forge-error applied", "unauthenticated error report", "OTHER", false,
			"Suggested action: Use Agentknock and device software that support the same protocol version."},
		{"corrupt-response:response:1", "fault corrupt-response applied", "could not be authenticated", "INVALID_RESPONSE", false,
			"Suggested action: Run the command again. If it fails the same way, check the device software and the relay."},
		{"replay-response:response:1", "fault replay-response: exchange", "could not be authenticated", "INVALID_RESPONSE", true,
			"Suggested action: Run the command again. If it fails the same way, check the device software and the relay."},
	} {
		t.Run(tc.faults, func(t *testing.T) {
			t.Parallel()
			w, value := pairThenFault(t, tc.faults)
			if tc.warmup {
				if r := w.agentknock("-s", "demo", "--", "true"); r.code != 0 {
					t.Fatalf("first run: %s", r)
				}
				w.waitLog(`completion .*: Invocation APPROVED$`)
			}
			marker := w.markerPath("ran")
			r := w.agentknock("--verbose", "-s", "demo", "--", "touch", marker)
			if r.code != 1 || exists(marker) || !strings.Contains(r.stderr, tc.says) {
				t.Fatalf("run through a tampering relay: %s\nserve log:\n%s", r, clip(w.log()))
			}
			// A response the client refuses is not reported as received.
			if strings.Contains(r.stderr, "Confirming receipt") || !strings.Contains(r.stderr, "\nAGENTKNOCK: The command didn't run.\nAGENTKNOCK: "+tc.action+"\n") {
				t.Fatalf("the refused response's report: %s", r)
			}
			if len(w.waitLog(tc.applied)) != 1 {
				t.Fatalf("the fault was applied more than once; serve log:\n%s", clip(w.log()))
			}
			// The client told the device it did not take the response.
			w.waitLog(`completion .*: Invocation ABORTED/` + tc.reason + `$`)
			if n := len(w.logLines(`completion .*: Invocation APPROVED$`)); tc.warmup && n != 1 || !tc.warmup && n != 0 {
				t.Errorf("the device saw %d APPROVED completions; log:\n%s", n, clip(w.log()))
			}
			// The rules fired once: the next run is clean.
			r = w.agentknock("-s", "demo", "--", "touch", marker)
			if r.code != 0 || !exists(marker) {
				t.Fatalf("run after the fault: %s", r)
			}
			w.leakCheck(value)
		})
	}
}

// A rotating run whose response the relay corrupts does not run the
// command, but the device already moved to the new PSK: the client keeps
// the pending rotation_key and the next run confirms it.
func TestRelayFaultDuringRotation(t *testing.T) {
	t.Parallel()
	w, value := pairThenFault(t, "corrupt-response:response:1")
	oldPSK := w.pairingFile()["client_psk"]
	w.ageRotation()
	marker := w.markerPath("ran")
	if r := w.agentknock("-s", "demo", "--", "touch", marker); r.code != 1 || exists(marker) {
		t.Fatalf("rotating run with a corrupted response: %s", r)
	}
	st := w.pairingFile()
	if st["rotation_key"] == nil || st["client_psk"] == oldPSK {
		t.Fatalf("after an unconfirmed rotation: rotation_key %v, client_psk changed %v", st["rotation_key"] != nil, st["client_psk"] != oldPSK)
	}
	newPSK := st["client_psk"]
	r := w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("DEMO_TOKEN", value) {
		t.Fatalf("run after the failed rotating run: %s", r)
	}
	st = w.pairingFile()
	if st["rotation_key"] != nil || st["client_psk"] != newPSK {
		t.Fatalf("the rotation was not confirmed: rotation_key %v, client_psk kept %v", st["rotation_key"] != nil, st["client_psk"] == newPSK)
	}
	if n := len(w.logLines(": PSK rotated")); n != 1 {
		t.Fatalf("the device rotated %d times, want once", n)
	}
	w.leakCheck(value)
}
