// The outcome of an Invocation response (client-device-protocol.md,
// "Invocation"): which completion to send and what to tell the user. The
// checks themselves are checkInvocationResponse's.

package main

import (
	"errors"
	"strings"
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
		return nil, err
	}
	return nil, err
}

// denialError words each denial reason for the person or agent that ran
// agentknock, with its failure class. The device's message is shown as
// the device sent it, escaped, once: not when it only repeats what the
// reason already says.
func denialError(d deviceDenial) error {
	var text string
	class := failDenied
	switch d.Reason {
	case denialUserDenied:
		text, class = "The request was denied on the device", failDeniedByPerson
	case denialPolicyDenied:
		text, class = "The device's policy denied the request", failDeniedByPolicy
	case denialInvalidRequest:
		text, class = "The device refused the request as invalid", failInvalidRequest
	default:
		text = "The device denied the request"
	}
	message := strings.TrimSpace(printable(d.Message))
	if bare := strings.TrimRight(message, ". "); bare != "" && !strings.EqualFold(bare, text) {
		text += ": " + message
	}
	return classify(class, errors.New(sentence(text)))
}
