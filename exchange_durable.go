// Requests that are safe to retry after a crash (cryptosystem.md, "Paired
// exchange": "a retry resends the identical bytes, never a new seal. A
// receiver that already accepted a slot answers from retained state and
// does not re-process"; client-relay-protocol.md, "Reconnection and
// recovery"). Before a PairingFinish or PairingRemove request first leaves,
// what rebuilds it exactly (request id, the randomness of the seal, the PSK
// and rotation key used, the plaintext) is stored in pairing.json as
// outstanding_request. A rerun of the command, even after kill -9, resends
// the identical request and gets the device's answer to the first one,
// instead of racing it with a new request id. The record goes when an
// authenticated answer has been handled, the relay says the exchange is
// gone, or a signal cancels the request (with an ABORTED completion, as
// for any request).
//
// These two methods carry no secret in either direction, so the record
// holds nothing a secret could be recovered from. SecretUpload carries the
// value, and Invocation, GitSign and SshAuthenticate are a new decision
// each time: a retry of those is a new request.

package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/crypto/chacha20"
)

// outstandingRetryWindow is how long a stored request is resent; the
// device keeps exchanges for a day, and past this a new request is safer
// than one the relay no longer admits.
const outstandingRetryWindow = 24 * time.Hour

type outstandingRequest struct {
	Method      string `json:"method"`
	RequestID   ULID   `json:"request_id"`
	Seed        []byte `json:"seed"` // keys the stream the seal reads
	PSK         []byte `json:"psk"`
	RotationKey string `json:"rotation_key,omitempty"`
	Plaintext   []byte `json:"plaintext"`
	CreatedAt   uint64 `json:"created_at"`
	// Command names the command that resends it, for messages.
	Command string `json:"command"`

	resent bool // taken from the file: an earlier process may have sent it
}

func (r *outstandingRequest) check() error {
	switch {
	case r == nil:
		return nil
	case r.Method != methodPairingFinish && r.Method != methodPairingRemove:
		return fmt.Errorf("method %q cannot be resent", r.Method)
	case r.RequestID.IsZero():
		return errors.New("request_id is required")
	case len(r.Seed) != 32 || len(r.PSK) != 32:
		return errors.New("seed and psk must be 32 bytes")
	case len(r.Plaintext) == 0 || len(r.Plaintext) > 4096:
		return errors.New("plaintext must be 1 to 4096 bytes")
	}
	return nil
}

// seedStream is the deterministic randomness of one stored request.
type seedStream struct{ c *chacha20.Cipher }

func newSeedStream(seed []byte) (*seedStream, error) {
	c, err := chacha20.NewUnauthenticatedCipher(seed, make([]byte, chacha20.NonceSize))
	if err != nil {
		return nil, err
	}
	return &seedStream{c}, nil
}

func (s *seedStream) Read(p []byte) (int, error) {
	clear(p)
	s.c.XORKeyStream(p, p)
	return len(p), nil
}

// callDeviceDurable is callDevice for method (PairingFinish or
// PairingRemove): it reuses the stored request when there is one for this
// method, or stores a new one before anything is sent.
func callDeviceDurable(home string, p *pairingState, method, command string, request any, watch *signalWatch, out *output) (*deviceCall, *outstandingRequest, []byte, error) {
	call, rec, plaintext, err := callDeviceOutstanding(home, p, method, command, request, watch, out)
	if rec != nil && rec.resent && errors.Is(err, errExchangeInactive) {
		// The earlier process took the response and died before acting on
		// it; the exchange is over, so a new request cannot race it.
		out.detail("the resent request's exchange is over; sending a new request")
		return callDeviceOutstanding(home, p, method, command, request, watch, out)
	}
	return call, rec, plaintext, err
}

func callDeviceOutstanding(home string, p *pairingState, method, command string, request any, watch *signalWatch, out *output) (*deviceCall, *outstandingRequest, []byte, error) {
	rec, err := outstandingFor(home, p, method, command, request)
	if err != nil {
		return nil, nil, nil, err
	}
	rnd, err := newSeedStream(rec.Seed)
	if err != nil {
		return nil, nil, nil, err
	}
	var rotationEnc []byte
	if rec.RotationKey != "" {
		rotationEnc, _ = base64.StdEncoding.DecodeString(rec.RotationKey)
	}
	keys := pairedKeys{DeviceID: p.DeviceID, DeviceKey: p.DeviceKey, ClientID: p.ClientID, PSK: rec.PSK}
	x, payload, err := sealProtectedPlaintext(rnd, keys, rec.RequestID, rotationEnc, rec.Plaintext)
	if err != nil {
		return nil, nil, nil, err
	}
	call, plaintext, err := exchangeWithDevice(home, p, x, payload, rec.RotationKey, rec, nil, watch, out)
	if err != nil && rec.resent && errors.Is(err, errExchangeInactive) {
		return nil, rec, nil, err
	}
	return call, rec, plaintext, err
}

// outstandingFor returns the stored request to resend, or stores a new one.
func outstandingFor(home string, p *pairingState, method, command string, request any) (*outstandingRequest, error) {
	s, err := lockStateDir(home)
	if err != nil {
		return nil, err
	}
	defer s.unlock()
	current, err := readPairingFile(home)
	if err != nil {
		return nil, err
	}
	if current.ClientID != p.ClientID || current.DeviceID != p.DeviceID {
		return nil, errors.New("the pairing changed meanwhile; check `agentknock pairing status`")
	}
	if r := current.Outstanding; r != nil && r.Method == method &&
		time.Since(time.Unix(int64(r.CreatedAt), 0)) < outstandingRetryWindow {
		r.resent = true
		return r, nil
	}
	plaintext, err := json.Marshal(request)
	if err != nil {
		return nil, err
	}
	id, err := newULID()
	if err != nil {
		return nil, err
	}
	seed := make([]byte, 32)
	if _, err := io.ReadFull(rand.Reader, seed); err != nil {
		return nil, err
	}
	r := &outstandingRequest{
		Method: method, RequestID: id, Seed: seed, PSK: current.ClientPSK, RotationKey: current.RotationKey,
		Plaintext: plaintext, CreatedAt: uint64(time.Now().Unix()), Command: command,
	}
	current.Outstanding = r
	if err := s.writePairing(current); err != nil {
		return nil, err
	}
	return r, nil
}

// clearOutstanding removes the record if it is still this request's.
func clearOutstanding(home string, requestID ULID) error {
	s, err := lockStateDir(home)
	if err != nil {
		return err
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if err != nil {
		return err
	}
	if p.Outstanding == nil || p.Outstanding.RequestID != requestID {
		return nil
	}
	p.Outstanding = nil
	return s.writePairing(p)
}

func (r *outstandingRequest) rerunAdvice() string {
	return fmt.Sprintf("run `%s` again: it resends the same request", r.Command)
}

// failed handles a failure of a stored request. A signal cancels it like
// any request (ABORTED completion, record removed). Otherwise nothing is
// aborted, since the device may have the request and a rerun must be able
// to collect its answer, unless the relay says the exchange is gone.
func (r *outstandingRequest) failed(home string, call *deviceCall, err error, out *output) error {
	var intr *interrupted
	var refusal *relayRefusal
	switch {
	case errors.As(err, &intr):
		// A person cancelled: the device is told, as for any request, and
		// the next run sends a new one.
		call.abort(abortCancelled, "interrupted by "+signalName(intr.sig), out)
		if cerr := clearOutstanding(home, r.RequestID); cerr != nil {
			out.failure("%v", cerr)
		}
		return err
	}
	call.close()
	switch {
	case errors.Is(err, errExchangeInactive), errors.As(err, &refusal) && !errors.Is(err, errClientInactive):
		if cerr := clearOutstanding(home, r.RequestID); cerr != nil {
			out.failure("%v", cerr)
		}
		return fmt.Errorf("%w; run `%s` again to send a new request", describeRelayError(err), r.Command)
	}
	return fmt.Errorf("%v; %s", describeRelayError(err), r.rerunAdvice())
}
