//go:build !agentknock_testapproval || !linux

// Approval from the paired device: command-execution.md steps 3-4, the
// Invocation method of the client-device protocol.

package main

import "fmt"

// requestApproval returns the checked approval and its invocation id (the
// request id, which later SSH and Git exchanges name).
func requestApproval(home string, inv invocationRequest, watch *signalWatch, out *output) (*invocationResponse, ULID, error) {
	p, err := activePairing(home, out)
	if err != nil {
		return nil, ULID{}, fmt.Errorf("%v. Agentknock did not contact the device", err)
	}
	traceStep("pairing read")
	call, plaintext, err := callDevice(home, p, inv, watch, out)
	if err != nil {
		return nil, ULID{}, err
	}
	resp, completion, err := judgeInvocationResponse(inv, plaintext)
	traceStep("response checked")
	call.finish(completion, out)
	traceStep("completion acknowledged")
	return resp, call.x.RequestID(), err
}
