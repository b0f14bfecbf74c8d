//go:build !agentknock_testapproval

// Approval from the paired device: command-execution.md steps 3-4, the
// Invocation method of the client-device-protocol.md.

package main

// requestApproval returns the checked approval and its invocation id (the
// request id, which later SSH and Git exchanges name). The pairing was read,
// and its relay dialed, while the request was prepared.
func requestApproval(home string, ahead *pairingAhead, inv invocationRequest, watch *signalWatch, out *output) (*invocationResponse, ULID, error) {
	p, err := ahead.pairing(home, out)
	if err != nil {
		return nil, ULID{}, beforeContact(err)
	}
	traceStep("pairing read")
	resp, id, err := askDevice(home, p, invocationMethod(inv, ahead.relay), watch, out)
	resp, err = invocationOutcome(resp, err)
	return resp, id, err
}
