// The client-side checks of the device responses other than Invocation
// (client-device-protocol.md "Secret list", "Secret upload", "Pairing
// activation" and "Pairing removal"): SecretList, SecretUpload,
// PairingFinish and PairingRemove, with the common decoding of
// protocol_responses.go.

package main

import (
	"encoding/json"
	"slices"
)

// secretMetadata is one listed secret. Types other than environment and
// ssh are listed by name and type only: the list is display data and a
// newer device may hold kinds this client cannot use.
type secretMetadata struct {
	Name           string
	Description    string
	HasDescription bool // "description" was present (it may be "")
	Type           string
	Variables      []string // environment
	PublicKey      string   // ssh
}

type secretListResponse struct {
	Outcome responseOutcome
	Error   deviceError
	Secrets []secretMetadata // name order
}

func checkSecretListResponse(plaintext []byte) (*secretListResponse, error) {
	obj, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &secretListResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	secrets, err := obj.requiredObject("secrets")
	if err != nil {
		return nil, err
	}
	out := &secretListResponse{Outcome: outcomeApproved, Secrets: []secretMetadata{}}
	for _, name := range protoSortedKeys(secrets) {
		if name == "" {
			return nil, invalidResponse("listed secret has an empty name")
		}
		sobj, ok := rawJSONObject(secrets[name])
		if !ok {
			return nil, invalidResponse("secret %q is not an object", name)
		}
		md := secretMetadata{Name: name}
		if md.Type, err = sobj.requiredString("type"); err != nil {
			return nil, invalidInSecret(name, err)
		}
		if md.Description, md.HasDescription, err = sobj.optionalString("description"); err != nil {
			return nil, invalidInSecret(name, err)
		}
		switch md.Type {
		case secretTypeEnvironment:
			raw, ok := sobj["variables"]
			if !ok || len(raw) == 0 || raw[0] != '[' {
				return nil, invalidResponse("secret %q: \"variables\" is not an array", name)
			}
			var items []json.RawMessage
			if json.Unmarshal(raw, &items) != nil {
				return nil, invalidResponse("secret %q: \"variables\" is not an array", name)
			}
			md.Variables = make([]string, 0, len(items))
			for _, it := range items {
				v, ok := rawJSONString(it)
				if !ok {
					return nil, invalidResponse("secret %q: a variable name is not a string", name)
				}
				if slices.Contains(md.Variables, v) {
					return nil, invalidResponse("secret %q lists %q twice", name, v)
				}
				md.Variables = append(md.Variables, v)
			}
		case secretTypeSSH:
			if md.PublicKey, err = sobj.requiredString("public_key"); err != nil {
				return nil, invalidInSecret(name, err)
			}
		}
		out.Secrets = append(out.Secrets, md)
	}
	return out, nil
}

// resultResponse is a checked PairingFinish, SecretUpload or PairingRemove
// response. outcomeApproved is ACCEPTED, RECEIVED or the PairingRemove {};
// outcomeDenied is REJECTED (Message holds the upload rejection text).
type resultResponse struct {
	Outcome responseOutcome
	Error   deviceError
	Message string
}

func checkResultResponse(plaintext []byte, approved, rejected string, rejectionMessage bool) (*resultResponse, error) {
	obj, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &resultResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	result, err := obj.requiredString("result")
	if err != nil {
		return nil, err
	}
	switch result {
	case approved:
		return &resultResponse{Outcome: outcomeApproved}, nil
	case rejected:
		r := &resultResponse{Outcome: outcomeDenied}
		if rejectionMessage {
			if r.Message, err = obj.requiredString("message"); err != nil {
				return nil, err
			}
		}
		return r, nil
	}
	return nil, invalidResponse("unexpected result %q", result)
}

// checkPairingFinishResponse: ACCEPTED means the device activated the
// pairing; REJECTED leaves the client pairing pending.
func checkPairingFinishResponse(plaintext []byte) (*resultResponse, error) {
	return checkResultResponse(plaintext, resultAccepted, resultRejected, false)
}

// checkSecretUploadResponse: RECEIVED or REJECTED with a message.
func checkSecretUploadResponse(plaintext []byte) (*resultResponse, error) {
	return checkResultResponse(plaintext, resultReceived, resultRejected, true)
}

// checkPairingRemoveResponse: any authenticated object other than the error
// form ({} in v1) means the device removed the pairing.
func checkPairingRemoveResponse(plaintext []byte) (*resultResponse, error) {
	_, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &resultResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	return &resultResponse{Outcome: outcomeApproved}, nil
}
