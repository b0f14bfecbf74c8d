// The outcome of an Invocation response (client-device-protocol.md,
// "Invocation"): which completion to send and what to tell the user. The
// checks themselves are checkInvocationResponse's.

package main

import (
	"errors"
	"fmt"
)

// invocationMethod is the Invocation exchange for askDevice: the response
// is checked against the request's secrets and routing, and the completion
// repeats the device's decision.
func invocationMethod(inv invocationRequest, ahead *relayAhead) pairedMethod[*invocationResponse] {
	return pairedMethod[*invocationResponse]{
		request: inv,
		ahead:   ahead,
		check: func(plaintext []byte) (*invocationResponse, error) {
			return checkInvocationResponse(inv.Secrets, plaintext)
		},
		settle: func(r *invocationResponse) (any, error) { return approvedOrDenied(r.Outcome, r.Denial) },
	}
}

// invocationOutcome is what a run may use of askDevice's answer: the
// approval, or the error to report (a failed check says the command did
// not run; a denial says why on its own).
func invocationOutcome(resp *invocationResponse, err error) (*invocationResponse, error) {
	var answered *answeredError
	switch {
	case err == nil:
		return resp, nil
	case resp == nil && errors.As(err, &answered):
		return nil, fmt.Errorf("%v; the command did not run", err)
	}
	return nil, err
}

// describeDenial words each denial reason for the person or agent that ran
// agentknock; the device's message is shown as the device sent it, escaped.
func describeDenial(d deviceDenial) string {
	var text string
	switch d.Reason {
	case denialUserDenied:
		text = "The request was denied on the device"
	case denialPolicyDenied:
		text = "The device's policy denied the request"
	case denialInvalidRequest:
		text = "The device refused the request as invalid"
	default:
		text = "The device denied the request"
	}
	if d.Message != "" {
		text += ": " + printable(d.Message)
	}
	return text + ". The command did not run."
}
