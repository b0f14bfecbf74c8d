// protocol_responses.go: the client-side checks of Agentknock v1 device
// responses (client-device-protocol.md "Authenticated errors",
// "Invocation", "Secret list", "Secret upload", "Pairing activation",
// "Pairing removal"): strict decoding of response members, the error and
// denial forms, and the Invocation response with its environment routing.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"
)

// ---- Responses: common decoding ----

// errInvalidResponse marks every response the client cannot validate or
// use; the caller completes ABORTED/INVALID_RESPONSE. Messages built on it
// name members, secrets and variables, never values.
var errInvalidResponse = errors.New("invalid device response")

// invalidResponseError is errInvalidResponse with a detail; keeping the
// detail apart lets a check add context without repeating the prefix.
type invalidResponseError struct{ detail string }

func (e *invalidResponseError) Error() string { return errInvalidResponse.Error() + ": " + e.detail }

func (e *invalidResponseError) Is(target error) bool { return target == errInvalidResponse }

func invalidResponse(format string, args ...any) error {
	return &invalidResponseError{detail: fmt.Sprintf(format, args...)}
}

// invalidWithin prefixes a check failure with the part of the response it
// concerns ("secret \"x\"").
func invalidWithin(where string, err error) error {
	var e *invalidResponseError
	if errors.As(err, &e) {
		return invalidResponse("%s: %s", where, e.detail)
	}
	return invalidResponse("%s: %v", where, err)
}

func invalidInSecret(name string, err error) error {
	return invalidWithin(fmt.Sprintf("secret %q", name), err)
}

// responseOutcome is what an authenticated response decided.
type responseOutcome int

const (
	// outcomeApproved: APPROVED, ACCEPTED, RECEIVED, or a plain success.
	outcomeApproved responseOutcome = iota + 1
	// outcomeDenied: DENIED (with a denial) or REJECTED.
	outcomeDenied
	// outcomeDeviceError: an authenticated {"error","message"}.
	outcomeDeviceError
)

// deviceDenial is a DENIED response's reason and message.
type deviceDenial struct {
	Reason  string
	Message string
}

// deviceError is an authenticated error; unknown codes are kept as-is.
type deviceError struct {
	Code    string
	Message string
}

func (e deviceError) Error() string { return "device error " + e.Code + ": " + e.Message }

// jsonObject is one decoded JSON object with its members still raw, so each
// member's presence and JSON type can be checked exactly (encoding/json
// would silently accept null or a missing member).
type jsonObject map[string]json.RawMessage

// decodeJSONObject never wraps the decoder's error: its text can quote a
// byte of the plaintext, which may be a secret.
func decodeJSONObject(data []byte) (jsonObject, error) {
	if !utf8.Valid(data) {
		return nil, invalidResponse("message is not valid UTF-8")
	}
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return nil, invalidResponse("message is not a JSON object")
	}
	var obj jsonObject
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, invalidResponse("message is not a JSON object")
	}
	return obj, nil
}

func rawJSONString(raw []byte) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func rawJSONObject(raw []byte) (jsonObject, bool) {
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	var obj jsonObject
	if json.Unmarshal(raw, &obj) != nil {
		return nil, false
	}
	return obj, true
}

func (o jsonObject) has(name string) bool {
	_, ok := o[name]
	return ok
}

func (o jsonObject) requiredString(name string) (string, error) {
	raw, ok := o[name]
	if !ok {
		return "", invalidResponse("missing %q", name)
	}
	s, ok := rawJSONString(raw)
	if !ok {
		return "", invalidResponse("%q is not a string", name)
	}
	return s, nil
}

func (o jsonObject) optionalString(name string) (string, bool, error) {
	if !o.has(name) {
		return "", false, nil
	}
	s, err := o.requiredString(name)
	return s, err == nil, err
}

func (o jsonObject) requiredObject(name string) (jsonObject, error) {
	raw, ok := o[name]
	if !ok {
		return nil, invalidResponse("missing %q", name)
	}
	obj, ok := rawJSONObject(raw)
	if !ok {
		return nil, invalidResponse("%q is not an object", name)
	}
	return obj, nil
}

// requiredBinary decodes a base64 member; size < 0 means "at least a tag".
func (o jsonObject) requiredBinary(name string, size int) ([]byte, error) {
	raw, ok := o[name]
	if !ok {
		return nil, invalidResponse("missing %q", name)
	}
	v, err := unmarshalB64(raw)
	if err != nil {
		return nil, invalidResponse("%q is not a base64 string", name)
	}
	if (size >= 0 && len(v) != size) || (size < 0 && len(v) < 16) {
		return nil, invalidResponse("%q has the wrong length", name)
	}
	return v, nil
}

// decodeDeviceResponse parses a response plaintext and splits off the
// authenticated error form, which any method may return.
func decodeDeviceResponse(plaintext []byte) (jsonObject, *deviceError, error) {
	obj, err := decodeJSONObject(plaintext)
	if err != nil {
		return nil, nil, err
	}
	if !obj.has("error") {
		return obj, nil, nil
	}
	code, err := obj.requiredString("error")
	if err != nil {
		return nil, nil, err
	}
	message, err := obj.requiredString("message")
	if err != nil {
		return nil, nil, err
	}
	return nil, &deviceError{Code: code, Message: message}, nil
}

// decodeDenial reads a DENIED response. The reason set is closed in v1, so
// an unknown reason is an invalid response rather than a guess.
func decodeDenial(obj jsonObject) (deviceDenial, error) {
	reason, err := obj.requiredString("reason")
	if err != nil {
		return deviceDenial{}, err
	}
	switch reason {
	case denialUserDenied, denialPolicyDenied, denialInvalidRequest, denialOther:
	default:
		return deviceDenial{}, invalidResponse("unknown denial reason %q", reason)
	}
	message, err := obj.requiredString("message")
	if err != nil {
		return deviceDenial{}, err
	}
	return deviceDenial{Reason: reason, Message: message}, nil
}

// ---- Invocation response ----

// envValues maps final environment names to delivered values.
type envValues map[string]secretText

// approvedSecret is one approved secret. Variables is what the device
// returned, by stored name; Environment is the result of routing, by final
// name (renames applied, the stdin variable removed). Both are empty for an
// SSH secret.
type approvedSecret struct {
	Name        string
	Type        string
	Description string
	Variables   envValues
	Environment envValues
}

// stdinDelivery is the one value routed to the command's standard input.
type stdinDelivery struct {
	Secret   string
	Variable string // stored name
	Value    secretText
}

// Format prints the routing but never the value. It is defined on the
// struct as well as on secretText because fmt skips Formatters while it
// reports a bad verb on a pointer, which would otherwise expose Value.
func (s stdinDelivery) Format(f fmt.State, verb rune) {
	fmt.Fprintf(f, "{%s %s [redacted]}", s.Secret, s.Variable)
}

// sshSelection is the invocation's SSH secret: its name and public key.
type sshSelection struct {
	Secret        string
	PublicKey     ssh.PublicKey
	AuthorizedKey string // the public_key text as sent
}

// invocationResponse is a checked Invocation response. For outcomeApproved
// Secrets lists every requested secret in name order.
type invocationResponse struct {
	Outcome responseOutcome
	Denial  deviceDenial
	Error   deviceError
	Secrets []approvedSecret
	Stdin   *stdinDelivery
	SSH     *sshSelection
}

// checkInvocationResponse validates an Invocation response against the
// request's secrets and routes the values. An error wrapping
// errInvalidResponse means the client must not start the command and
// completes ABORTED/INVALID_RESPONSE; any other error is a client bug (the
// request itself was invalid).
func checkInvocationResponse(requested map[string]secretDelivery, plaintext []byte) (*invocationResponse, error) {
	// The routing rules below rely on a valid request (e.g. one stdin).
	if err := validateSecretDeliveries(requested); err != nil {
		return nil, fmt.Errorf("checking a response to an invalid request: %w", err)
	}
	obj, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil {
		return nil, err
	}
	if devErr != nil {
		return &invocationResponse{Outcome: outcomeDeviceError, Error: *devErr}, nil
	}
	result, err := obj.requiredString("result")
	if err != nil {
		return nil, err
	}
	switch result {
	case resultDenied:
		d, err := decodeDenial(obj)
		if err != nil {
			return nil, err
		}
		return &invocationResponse{Outcome: outcomeDenied, Denial: d}, nil
	case resultApproved:
	default:
		return nil, invalidResponse("unexpected result %q", result)
	}

	secrets, err := obj.requiredObject("secrets")
	if err != nil {
		return nil, err
	}
	for _, name := range protoSortedKeys(requested) {
		if !secrets.has(name) {
			return nil, invalidResponse("secret %q was requested but not returned", name)
		}
	}
	for _, name := range protoSortedKeys(secrets) {
		if _, ok := requested[name]; !ok {
			return nil, invalidResponse("secret %q was returned but not requested", name)
		}
	}

	out := &invocationResponse{Outcome: outcomeApproved}
	for _, name := range protoSortedKeys(secrets) {
		sobj, ok := rawJSONObject(secrets[name])
		if !ok {
			return nil, invalidResponse("secret %q is not an object", name)
		}
		typ, err := sobj.requiredString("type")
		if err != nil {
			return nil, invalidInSecret(name, err)
		}
		desc, _, err := sobj.optionalString("description")
		if err != nil {
			return nil, invalidInSecret(name, err)
		}
		delivered := approvedSecret{Name: name, Type: typ, Description: desc}
		routing := requested[name].Environment
		switch typ {
		case secretTypeEnvironment:
			if delivered.Variables, err = decodeVariables(name, sobj); err != nil {
				return nil, err
			}
			var stdin *stdinDelivery
			if delivered.Environment, stdin, err = routeEnvironmentSecret(name, delivered.Variables, routing); err != nil {
				return nil, err
			}
			if stdin != nil {
				out.Stdin = stdin
			}
		case secretTypeSSH:
			if !routing.isEmpty() {
				return nil, invalidResponse("SSH secret %q cannot honour environment options", name)
			}
			if out.SSH != nil {
				return nil, invalidResponse("more than one SSH secret (%q and %q)", out.SSH.Secret, name)
			}
			text, err := sobj.requiredString("public_key")
			if err != nil {
				return nil, invalidInSecret(name, err)
			}
			key, err := parseOpenSSHPublicKey(text)
			if err != nil {
				return nil, invalidInSecret(name, err)
			}
			out.SSH = &sshSelection{Secret: name, PublicKey: key, AuthorizedKey: text}
		default:
			return nil, invalidResponse("secret %q has unsupported type %q", name, typ)
		}
		out.Secrets = append(out.Secrets, delivered)
	}
	if err := checkFinalNames(out.Secrets); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeVariables reads an environment secret's stored variables.
func decodeVariables(name string, sobj jsonObject) (envValues, error) {
	vars, err := sobj.requiredObject("variables")
	if err != nil {
		return nil, invalidInSecret(name, err)
	}
	values := envValues{}
	for _, v := range protoSortedKeys(vars) {
		vobj, ok := rawJSONObject(vars[v])
		if !ok {
			return nil, invalidResponse("secret %q: variable %q is not an object", name, v)
		}
		value, err := vobj.requiredString("value")
		if err != nil {
			return nil, invalidWithin(fmt.Sprintf("secret %q: variable %q", name, v), err)
		}
		values[v] = secretText(value)
	}
	return values, nil
}
