// The completions the client sends after a response (client-device-protocol.md,
// "Paired exchanges", and each method's section): the result it acted on,
// or ABORTED with a reason.

package main

// resultCompletion is every completion with a result: APPROVED, repeated
// DENIED, ABORTED, PairingFinish ACCEPTED, and the SecretUpload echo.
type resultCompletion struct {
	clientInfo
	Result  string  `json:"result"`
	Reason  string  `json:"reason,omitempty"`
	Message *string `json:"message,omitempty"`
}

// infoCompletion carries only the client software information
// (SecretList, PairingRemove).
type infoCompletion struct {
	clientInfo
}

func newInfoCompletion() infoCompletion { return infoCompletion{newClientInfo()} }

// newApprovedCompletion confirms an approval without repeating any value
// or signature.
func newApprovedCompletion() resultCompletion {
	return resultCompletion{clientInfo: newClientInfo(), Result: resultApproved}
}

// newDeniedCompletion repeats the complete denial.
func newDeniedCompletion(d deviceDenial) resultCompletion {
	msg := d.Message
	return resultCompletion{clientInfo: newClientInfo(), Result: resultDenied, Reason: d.Reason, Message: &msg}
}

// newAbortedCompletion reports a client-side abort. The message is sent to
// the device: callers must not put secret values in it.
func newAbortedCompletion(reason, message string) resultCompletion {
	return resultCompletion{clientInfo: newClientInfo(), Result: resultAborted, Reason: reason, Message: &message}
}

// newDeviceErrorCompletion is the ABORTED/CLIENT_ERROR completion sent after
// an authenticated device error.
func newDeviceErrorCompletion(e deviceError) resultCompletion {
	return newAbortedCompletion(abortClientError, e.Error())
}

func newPairingFinishCompletion() resultCompletion {
	return resultCompletion{clientInfo: newClientInfo(), Result: resultAccepted}
}

// newSecretUploadCompletion repeats the upload result and, for REJECTED,
// its message.
func newSecretUploadCompletion(r *resultResponse) resultCompletion {
	if r.Outcome == outcomeDenied {
		msg := r.Message
		return resultCompletion{clientInfo: newClientInfo(), Result: resultRejected, Message: &msg}
	}
	return resultCompletion{clientInfo: newClientInfo(), Result: resultReceived}
}
