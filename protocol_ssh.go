// protocol_ssh.go: the SSH side of the client-device-protocol.md
// (client-device-protocol.md "Git signing" and "SSH authentication"): the
// GitSign and SshAuthenticate response checks, SSHSIG verification (OpenSSH
// PROTOCOL.sshsig), the user-authentication message parser (RFC 4252), and
// the SSH wire and public-key helpers they share.

package main

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/ssh"
)

// parseOpenSSHPublicKey accepts exactly one plain public key line
// ("type base64 [comment]"): no options, no certificate, nothing after it.
func parseOpenSSHPublicKey(text string) (ssh.PublicKey, error) {
	if strings.ContainsAny(text, "\r\n") {
		return nil, errors.New("public key is not a single line")
	}
	// With no line break there is nothing after the key; requiring the line
	// to start with the key type also excludes options and leading blanks,
	// which ParseAuthorizedKey would skip.
	key, _, _, _, err := ssh.ParseAuthorizedKey([]byte(text))
	if err != nil || !strings.HasPrefix(text, key.Type()+" ") {
		return nil, errors.New("public key is not an OpenSSH public key")
	}
	if _, isCert := key.(*ssh.Certificate); isCert {
		return nil, errors.New("public key is a certificate")
	}
	return key, nil
}

// ---- GitSign and SshAuthenticate responses ----

// signatureResponse is a checked GitSign or SshAuthenticate response.
// Armored is set for GitSign (the SSHSIG text as received, for Git's
// signature file); Signature is the verified signature for both.
type signatureResponse struct {
	Outcome   responseOutcome
	Denial    deviceDenial
	Error     deviceError
	Armored   string
	Signature *ssh.Signature
}

// decodeSignatureResponse handles the forms both signing methods share and
// returns the "signature" member of an approval.
func decodeSignatureResponse(plaintext []byte) (*signatureResponse, string, error) {
	obj, devErr, err := decodeDeviceResponse(plaintext)
	if err != nil {
		return nil, "", err
	}
	if devErr != nil {
		return &signatureResponse{Outcome: outcomeDeviceError, Error: *devErr}, "", nil
	}
	result, err := obj.requiredString("result")
	if err != nil {
		return nil, "", err
	}
	switch result {
	case resultDenied:
		d, err := decodeDenial(obj)
		if err != nil {
			return nil, "", err
		}
		return &signatureResponse{Outcome: outcomeDenied, Denial: d}, "", nil
	case resultApproved:
		sig, err := obj.requiredString("signature")
		if err != nil {
			return nil, "", err
		}
		return &signatureResponse{Outcome: outcomeApproved}, sig, nil
	}
	return nil, "", invalidResponse("unexpected result %q", result)
}

// checkGitSignResponse verifies an approved SSHSIG over message, in the git
// namespace, by the selected key.
func checkGitSignResponse(plaintext []byte, key ssh.PublicKey, message []byte) (*signatureResponse, error) {
	r, armored, err := decodeSignatureResponse(plaintext)
	if err != nil || r.Outcome != outcomeApproved {
		return r, err
	}
	sig, err := verifySSHSIG(armored, key, sshsigNamespaceGit, message)
	if err != nil {
		return nil, invalidResponse("signature: %v", err)
	}
	r.Armored = armored
	r.Signature = sig
	return r, nil
}

// checkSSHAuthenticateResponse verifies an approved SSH signature blob over
// the exact user-auth message, with the algorithm that message names.
func checkSSHAuthenticateResponse(plaintext []byte, key ssh.PublicKey, message []byte) (*signatureResponse, error) {
	m, err := parseSSHUserAuthMessage(message)
	if err != nil {
		return nil, err
	}
	if err := m.checkKey(key); err != nil {
		return nil, err
	}
	r, encoded, err := decodeSignatureResponse(plaintext)
	if err != nil || r.Outcome != outcomeApproved {
		return r, err
	}
	blob, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil {
		return nil, invalidResponse("signature is not base64")
	}
	sig, err := parseSSHSignatureBlob(blob)
	if err != nil {
		return nil, invalidResponse("signature: %v", err)
	}
	if sig.Format != m.Algorithm {
		return nil, invalidResponse("signature algorithm %q differs from the requested %q", sig.Format, m.Algorithm)
	}
	if err := checkSignatureAlgorithm(key, sig); err != nil {
		return nil, invalidResponse("signature: %v", err)
	}
	if err := key.Verify(message, sig); err != nil {
		return nil, invalidResponse("signature does not verify")
	}
	r.Signature = sig
	return r, nil
}

// sshWire reads SSH wire encodings (RFC 4251); any short read latches bad.
type sshWire struct {
	b   []byte
	bad bool
}

func (r *sshWire) uint32() uint32 {
	if len(r.b) < 4 {
		r.bad = true
		return 0
	}
	v := binary.BigEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

func (r *sshWire) byte() byte {
	if len(r.b) < 1 {
		r.bad = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *sshWire) string() []byte {
	n := r.uint32()
	if r.bad || uint64(n) > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

// done reports a complete read with no trailing bytes.
func (r *sshWire) done() bool { return !r.bad && len(r.b) == 0 }

func appendSSHString(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// parseSSHSignatureBlob reads "string format, string signature" with
// nothing after it (so no security-key flags and counter).
func parseSSHSignatureBlob(blob []byte) (*ssh.Signature, error) {
	r := sshWire{b: blob}
	format := r.string()
	sig := r.string()
	if !r.done() || len(format) == 0 || len(sig) == 0 {
		return nil, errors.New("malformed SSH signature blob")
	}
	return &ssh.Signature{Format: string(format), Blob: bytes.Clone(sig)}, nil
}

// checkSignatureAlgorithm pins the algorithm to the key: RSA only with
// SHA-2 (never ssh-rsa/SHA-1), Ed25519 with a 64-byte signature, other
// types with their own name; security keys are refused.
func checkSignatureAlgorithm(key ssh.PublicKey, sig *ssh.Signature) error {
	switch kt := key.Type(); {
	case kt == ssh.KeyAlgoRSA:
		if sig.Format != ssh.KeyAlgoRSASHA256 && sig.Format != ssh.KeyAlgoRSASHA512 {
			return fmt.Errorf("RSA signature algorithm %q is not rsa-sha2-256 or rsa-sha2-512", sig.Format)
		}
	case strings.HasPrefix(kt, "sk-"):
		return errors.New("security-key signatures are not supported")
	case sig.Format != kt:
		return fmt.Errorf("signature algorithm %q does not match key type %q", sig.Format, kt)
	case kt == ssh.KeyAlgoED25519 && len(sig.Blob) != 64:
		return errors.New("Ed25519 signature is not 64 bytes")
	}
	return nil
}

const (
	sshsigArmorBegin = "-----BEGIN SSH SIGNATURE-----"
	sshsigArmorEnd   = "-----END SSH SIGNATURE-----"
	sshsigMagic      = "SSHSIG"
)

// verifySSHSIG parses an armored SSHSIG (OpenSSH PROTOCOL.sshsig) and
// verifies it over message with key in namespace.
func verifySSHSIG(armored string, key ssh.PublicKey, namespace string, message []byte) (*ssh.Signature, error) {
	lines := strings.Split(strings.TrimSuffix(armored, "\n"), "\n")
	if len(lines) < 3 || lines[0] != sshsigArmorBegin || lines[len(lines)-1] != sshsigArmorEnd {
		return nil, errors.New("not an armored SSH signature")
	}
	var body strings.Builder
	for _, l := range lines[1 : len(lines)-1] {
		if l == "" {
			return nil, errors.New("not an armored SSH signature")
		}
		body.WriteString(l)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(body.String())
	if err != nil {
		return nil, errors.New("armored SSH signature is not base64")
	}
	if !bytes.HasPrefix(raw, []byte(sshsigMagic)) {
		return nil, errors.New("missing SSHSIG magic")
	}
	r := sshWire{b: raw[len(sshsigMagic):]}
	ver := r.uint32()
	pub := r.string()
	ns := r.string()
	reserved := r.string()
	hashAlg := r.string()
	sigBlob := r.string()
	if !r.done() || ver != 1 {
		return nil, errors.New("malformed SSHSIG blob")
	}
	if !bytes.Equal(pub, key.Marshal()) {
		return nil, errors.New("signed by a different key")
	}
	if string(ns) != namespace {
		return nil, fmt.Errorf("namespace %q, want %q", ns, namespace)
	}
	var digest []byte
	switch string(hashAlg) {
	case "sha512":
		d := sha512.Sum512(message)
		digest = d[:]
	case "sha256":
		d := sha256.Sum256(message)
		digest = d[:]
	default:
		return nil, fmt.Errorf("unsupported SSHSIG hash %q", hashAlg)
	}
	sig, err := parseSSHSignatureBlob(sigBlob)
	if err != nil {
		return nil, err
	}
	if err := checkSignatureAlgorithm(key, sig); err != nil {
		return nil, err
	}
	signed := []byte(sshsigMagic)
	signed = appendSSHString(signed, ns)
	signed = appendSSHString(signed, reserved)
	signed = appendSSHString(signed, hashAlg)
	signed = appendSSHString(signed, digest)
	if err := key.Verify(signed, sig); err != nil {
		return nil, errors.New("signature does not verify")
	}
	return sig, nil
}

// sshUserAuthMessage is the SSH_MSG_USERAUTH_REQUEST an agent is asked to
// sign (RFC 4252 section 7, plus OpenSSH's host-bound variant).
type sshUserAuthMessage struct {
	SessionID []byte
	User      string
	Method    string // "publickey" or "publickey-hostbound-v00@openssh.com"
	Algorithm string // ssh-ed25519, rsa-sha2-256 or rsa-sha2-512
	PublicKey []byte
	HostKey   []byte // host-bound form only
}

const (
	sshMsgUserAuthRequest  = 50
	sshUserAuthPublicKey   = "publickey"
	sshUserAuthHostBound   = "publickey-hostbound-v00@openssh.com"
	sshUserAuthServiceName = "ssh-connection"
)

// parseSSHUserAuthMessage accepts exactly the two forms of the protocol,
// with no trailing bytes, so SshAuthenticate can never sign anything else.
func parseSSHUserAuthMessage(msg []byte) (*sshUserAuthMessage, error) {
	bad := errors.New("not an SSH public-key user-authentication request")
	r := sshWire{b: msg}
	m := &sshUserAuthMessage{}
	m.SessionID = r.string()
	if r.byte() != sshMsgUserAuthRequest {
		return nil, bad
	}
	m.User = string(r.string())
	service := string(r.string())
	m.Method = string(r.string())
	hasSig := r.byte()
	m.Algorithm = string(r.string())
	m.PublicKey = r.string()
	if m.Method == sshUserAuthHostBound {
		m.HostKey = r.string()
	}
	if !r.done() || len(m.SessionID) == 0 || service != sshUserAuthServiceName || hasSig != 1 || len(m.PublicKey) == 0 {
		return nil, bad
	}
	switch m.Method {
	case sshUserAuthPublicKey:
	case sshUserAuthHostBound:
		h := sshWire{b: m.HostKey}
		alg := h.string()
		if h.bad || len(alg) == 0 || len(h.b) == 0 {
			return nil, errors.New("host-bound request has an empty server host key")
		}
	default:
		return nil, bad
	}
	switch m.Algorithm {
	case ssh.KeyAlgoED25519, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512:
	default:
		return nil, fmt.Errorf("unsupported signature algorithm %q", m.Algorithm)
	}
	return m, nil
}

// checkKey requires the request to be for key, with an algorithm that key
// can produce.
func (m *sshUserAuthMessage) checkKey(key ssh.PublicKey) error {
	if !bytes.Equal(m.PublicKey, key.Marshal()) {
		return errors.New("user-authentication request is for a different key")
	}
	switch key.Type() {
	case ssh.KeyAlgoED25519:
		if m.Algorithm == ssh.KeyAlgoED25519 {
			return nil
		}
	case ssh.KeyAlgoRSA:
		if m.Algorithm == ssh.KeyAlgoRSASHA256 || m.Algorithm == ssh.KeyAlgoRSASHA512 {
			return nil
		}
	}
	return fmt.Errorf("algorithm %q does not fit a %s key", m.Algorithm, key.Type())
}
