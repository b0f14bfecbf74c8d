// `agentknock secret upload`: the SecretUpload method of the client-device
// protocol ("Secret upload"), from the sources of secret_sources.go.

package main

import (
	"errors"
	"fmt"
)

func runSecretUpload(o *secretUploadOptions, cs callerState) int {
	out := newPlainOutput(o.Quiet, o.Verbose, &secretUploadStageMessages)
	// The pairing is checked before any source is read, so that nobody
	// types a value for an upload that cannot be sent.
	home, p, ok := secretPairing(o.Home, "Nothing was uploaded.", out)
	if !ok {
		return 1
	}
	watch := watchTermination(cs)
	secret, err := readUploadSecret(o, defaultUploadInput(watch))
	if err != nil {
		var intr *interrupted
		if errors.As(err, &intr) {
			out.failure("%v; nothing was uploaded.", err)
			return exitStatusFor(intr.sig)
		}
		if errors.As(err, new(*usageError)) {
			return reportSecretUsage(err)
		}
		out.failure("cannot prepare the secret upload: %v", err)
		return 1
	}
	req, err := newSecretUploadRequest(o.Mode, secret)
	if err != nil {
		out.failure("cannot prepare the secret upload: %v", err)
		return 1
	}
	select {
	case sig := <-watch.ch:
		out.failure("%v; nothing was uploaded.", &interrupted{sig: toSignal(sig)})
		return exitStatusFor(toSignal(sig))
	default:
	}

	resp, _, err := askDevice(home, p, secretUploadMethod(req), watch, out)
	var answered *answeredError
	switch {
	case errors.As(err, &answered), err != nil:
		out.stopped(stopReport{consequence: "Agentknock didn't receive confirmation that the device saved the upload; it may have received it. Check the device before you upload again.", rerun: "this command"}, err, failOther)
		return exitStatusOf(err)
	}
	if resp.Outcome == outcomeDenied {
		out.failure("The device rejected the secret upload: %s", printable(resp.Message))
		return 1
	}
	fmt.Printf("Secret upload %s delivered to the device.\n", quoted(o.Name))
	fmt.Println("The secret isn't available until you approve the upload on the device.")
	fmt.Println("Suggested action: Review the secret upload on the device.")
	return 0
}

// secretUploadMethod is SecretUpload for askDevice: the completion echoes
// what the device said of the upload.
func secretUploadMethod(req secretUploadRequest) pairedMethod[*resultResponse] {
	return pairedMethod[*resultResponse]{
		request: req,
		check:   checkSecretUploadResponse,
		settle:  func(r *resultResponse) (any, error) { return newSecretUploadCompletion(r), nil },
	}
}
