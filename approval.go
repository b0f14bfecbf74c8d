// The outcome of an Invocation response (client-device protocol,
// "Invocation"): which completion to send and what to tell the user. The
// checks themselves are checkInvocationResponse's.

package main

import (
	"errors"
	"fmt"
)

// judgeInvocationResponse returns the checked approval, or the error to
// report; the completion is what the client sends back in either case.
func judgeInvocationResponse(inv invocationRequest, plaintext []byte) (*invocationResponse, resultCompletion, error) {
	resp, err := checkInvocationResponse(inv.Secrets, plaintext)
	if completion, failure := responseFailure(err, resp); failure != nil {
		return nil, completion, fmt.Errorf("%v; the command did not run", failure)
	}
	if resp.Outcome == outcomeDenied {
		return nil, newDeniedCompletion(resp.Denial), errors.New(describeDenial(resp.Denial))
	}
	return resp, newApprovedCompletion(), nil
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
