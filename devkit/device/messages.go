// Wire forms of the client-device protocol (docs/client-device-protocol.md):
// the JSON envelopes that carry the cryptosystem's tuples, the common parts
// of protected plaintexts, and the error and denial forms. Required members
// are pointers so that a missing member or JSON null is told apart from an
// empty value and rejected.
package device

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Clear pairing envelopes.
type pairingRequestEnv struct {
	Version    *string `json:"version"`
	Commitment *string `json:"commitment"`
}

type pairingResponseEnv struct {
	DeviceID     string `json:"device_id"`
	DeviceKey    []byte `json:"device_key"`
	DeviceRandom []byte `json:"device_random"`
}

type pairingCompletionEnv struct {
	Key        *string `json:"key"`
	Secret     *string `json:"secret"`
	Ciphertext *string `json:"ciphertext"`
}

// Paired envelopes.
type pairedRequestEnv struct {
	Version     *string `json:"version"`
	Key         *string `json:"key"`
	Ciphertext  *string `json:"ciphertext"`
	RotationKey *string `json:"rotation_key"`
}

type pairedResponseEnv struct {
	Nonce      []byte `json:"nonce"`
	Ciphertext []byte `json:"ciphertext"`
}

type pairedCompletionEnv struct {
	Ciphertext *string `json:"ciphertext"`
}

// errorBody is both the authenticated error plaintext and the unprotected
// error report.
type errorBody struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// Authenticated error codes (client-device protocol "Authenticated errors").
const (
	errInvalidRequest    = "INVALID_REQUEST"
	errUnsupportedMethod = "UNSUPPORTED_METHOD"
	errInvalidState      = "INVALID_STATE"
)

// Unprotected report codes. Only UNSUPPORTED_PROTOCOL_VERSION is defined by
// the protocol; the others are diagnostic and carry no trusted meaning.
const (
	clearUnsupportedVersion = "UNSUPPORTED_PROTOCOL_VERSION"
	clearInvalidRequest     = "INVALID_REQUEST"
	clearStaleRequestID     = "INVALID_REQUEST_ID"
	clearNotPaired          = "NOT_PAIRED"
	clearAuthFailed         = "AUTHENTICATION_FAILED"
	clearPairingBusy        = "PAIRING_UNAVAILABLE"
)

func clearError(code, msg string) json.RawMessage {
	b, _ := json.Marshal(errorBody{Error: code, Message: msg})
	return b
}

// denial is the DENIED response (and completion) form.
type denial struct {
	Result  string `json:"result"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func denied(reason, msg string) denial {
	return denial{Result: "DENIED", Reason: reason, Message: msg}
}

// softwareInfoWire checks app_info / lib_info, required in every protected
// client plaintext.
type softwareInfoWire struct {
	Name    *string `json:"name"`
	Version *string `json:"version"`
}

func (w *softwareInfoWire) value(member string) (*softwareInfo, error) {
	if w == nil || w.Name == nil || w.Version == nil {
		return nil, fmt.Errorf("%s with name and version is required", member)
	}
	return &softwareInfo{Name: *w.Name, Version: *w.Version}, nil
}

// plaintextHead is what every protected client request carries.
type plaintextHead struct {
	Method  *string           `json:"method"`
	AppInfo *softwareInfoWire `json:"app_info"`
	LibInfo *softwareInfoWire `json:"lib_info"`
}

func parseHead(pt []byte) (string, error) {
	var h plaintextHead
	if err := json.Unmarshal(pt, &h); err != nil {
		return "", fmt.Errorf("request is not a JSON object of the expected form: %v", err)
	}
	if h.Method == nil {
		return "", errors.New("request has no method")
	}
	if _, err := h.AppInfo.value("app_info"); err != nil {
		return *h.Method, err
	}
	if _, err := h.LibInfo.value("lib_info"); err != nil {
		return *h.Method, err
	}
	return *h.Method, nil
}

// pairingMetadataWire is the pairing application plaintext.
type pairingMetadataWire struct {
	AppInfo      *softwareInfoWire `json:"app_info"`
	LibInfo      *softwareInfoWire `json:"lib_info"`
	Platform     *string           `json:"platform"`
	Architecture *string           `json:"architecture"`
	Hostname     *string           `json:"hostname"`
	MachineID    *string           `json:"machine_id"`
	OSVersion    *string           `json:"os_version"`
}

func parsePairingMetadata(b []byte) (*pairingMetadata, error) {
	var w pairingMetadataWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	app, err := w.AppInfo.value("app_info")
	if err != nil {
		return nil, err
	}
	lib, err := w.LibInfo.value("lib_info")
	if err != nil {
		return nil, err
	}
	if w.Platform == nil || w.Architecture == nil {
		return nil, errors.New("platform and architecture are required")
	}
	m := &pairingMetadata{AppInfo: app, LibInfo: lib, Platform: w.Platform, Architecture: w.Architecture}
	if w.Hostname != nil {
		m.Hostname = *w.Hostname
	}
	if w.MachineID != nil {
		m.MachineID = *w.MachineID
	}
	if w.OSVersion != nil {
		m.OSVersion = *w.OSVersion
	}
	return m, nil
}

// completionBody is the part of a completion plaintext the device uses.
type completionBody struct {
	Result *string `json:"result"`
	Reason string  `json:"reason"` // ABORTED and DENIED completions
}

// decodeB64 takes standard Base64, padded as senders must produce it, and
// also unpadded input, which the protocol lets receivers accept.
func decodeB64(s string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return b, nil
	}
	return base64.RawStdEncoding.DecodeString(s)
}

// decodeB64Len decodes a required fixed-length binary member.
func decodeB64Len(s *string, member string, n int) ([]byte, error) {
	if s == nil {
		return nil, fmt.Errorf("%s is required", member)
	}
	b, err := decodeB64(*s)
	if err != nil {
		return nil, fmt.Errorf("%s is not Base64", member)
	}
	if n >= 0 && len(b) != n {
		return nil, fmt.Errorf("%s must decode to %d bytes, not %d", member, n, len(b))
	}
	return b, nil
}
