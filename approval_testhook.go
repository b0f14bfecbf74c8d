//go:build agentknock_testapproval

// A test-only approval, compiled only with the agentknock_testapproval build
// tag that release builds never set: the launch path's tests stand in for
// the device through files in $AGENTKNOCK_TEST_APPROVAL. The launcher writes
// the Invocation plaintext to request.json, then waits for response.json;
// while it waits, a test can change files and send signals exactly as during
// a real approval. The response goes through the same checks as a device's.

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

type testApprovalResponse struct {
	// Plaintext is a device response plaintext, used as is.
	Plaintext json.RawMessage `json:"plaintext"`
	// Deny and Secrets are a shorthand for DENIED and APPROVED responses.
	Deny    string                       `json:"deny"`
	Secrets map[string]map[string]string `json:"secrets"`
	// RaiseAfterBlock sends this signal to the launcher's own thread once
	// the hand-off has blocked termination signals.
	RaiseAfterBlock int `json:"raise_after_block"`
	// ThreadChurn keeps the runtime creating threads until the exec, the
	// situation in which an exec outside the runtime's exec lock drops
	// setuid privileges.
	ThreadChurn bool `json:"thread_churn"`
}

// churnThreads ends and starts OS threads continuously: a goroutine that
// exits while locked to its thread takes the thread with it.
func churnThreads() {
	go func() {
		for {
			done := make(chan struct{})
			go func() {
				runtime.LockOSThread()
				close(done)
			}()
			<-done
		}
	}()
}

func (r *testApprovalResponse) plaintext(inv invocationRequest) ([]byte, error) {
	if r.Plaintext != nil {
		return r.Plaintext, nil
	}
	if r.Deny != "" {
		return json.Marshal(map[string]string{"result": "DENIED", "reason": "USER_DENIED", "message": r.Deny})
	}
	secrets := map[string]any{}
	for name := range inv.Secrets {
		vars := map[string]map[string]string{}
		for v, value := range r.Secrets[name] {
			vars[v] = map[string]string{"value": value}
		}
		secrets[name] = map[string]any{"type": "environment", "variables": vars}
	}
	return json.Marshal(map[string]any{"result": "APPROVED", "secrets": secrets})
}

func requestApproval(home string, _ *pairingAhead, inv invocationRequest, watch *signalWatch, out *output) (*invocationResponse, ULID, error) {
	dir := os.Getenv("AGENTKNOCK_TEST_APPROVAL")
	if dir == "" {
		return nil, ULID{}, errors.New("test approval build: AGENTKNOCK_TEST_APPROVAL is not set")
	}
	data, err := json.Marshal(inv)
	if err != nil {
		return nil, ULID{}, err
	}
	tmp := filepath.Join(dir, "request.json.tmp")
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return nil, ULID{}, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, "request.json")); err != nil {
		return nil, ULID{}, err
	}
	out.detail("Waiting for approval (test approval in %s)", dir)
	// A response already in place is taken at once (BenchmarkLaunchOverhead
	// measures the launcher, not this poll); otherwise it is looked for
	// every 2 ms while signals are watched.
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		data, err := os.ReadFile(filepath.Join(dir, "response.json"))
		if errors.Is(err, os.ErrNotExist) {
			select {
			case sig := <-watch.ch:
				return nil, ULID{}, &interrupted{sig: toSignal(sig)}
			case <-tick.C:
			}
			continue
		}
		if err != nil {
			return nil, ULID{}, err
		}
		var resp testApprovalResponse
		if err := json.Unmarshal(data, &resp); err != nil {
			return nil, ULID{}, fmt.Errorf("test approval: %v", err)
		}
		if resp.ThreadChurn {
			churnThreads()
		}
		if resp.RaiseAfterBlock != 0 {
			sig := syscall.Signal(resp.RaiseAfterBlock)
			watch.testOnlyAfterBlock = func() { raiseOnThisThread(sig) }
		}
		pt, err := resp.plaintext(inv)
		if err != nil {
			return nil, ULID{}, err
		}
		approval, err := checkedApproval(inv, pt)
		id, _ := newULID()
		return approval, id, err
	}
}

// checkedApproval is askDevice's check and settle without an exchange to
// complete.
func checkedApproval(inv invocationRequest, plaintext []byte) (*invocationResponse, error) {
	m := invocationMethod(inv, nil)
	resp, err := m.check(plaintext)
	if _, failure := responseFailure(err, resp); failure != nil {
		return invocationOutcome(nil, &answeredError{err: failure})
	}
	if _, err := m.settle(resp); err != nil {
		return invocationOutcome(resp, &answeredError{err: err})
	}
	return resp, nil
}
