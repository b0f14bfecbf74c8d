// GitSign and SshAuthenticate (client-device protocol "Git signing" and "SSH
// authentication"): each is tied to an approved invocation by request id,
// token (compared in constant time) and secret name, is approved on its own,
// and signs only what the method allows: an SSHSIG in the "git" namespace
// over the exact Git payload, or a fully validated SSH user-authentication
// request.
package device

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"golang.org/x/crypto/ssh"
)

type signRequestWire struct {
	InvocationID    *string         `json:"invocation_id"`
	InvocationToken *string         `json:"invocation_token"`
	Secret          *string         `json:"secret"`
	Message         *string         `json:"message"`
	Repository      json.RawMessage `json:"repository"`
}

// signTarget is the invocation and key a signature request resolved to.
type signTarget struct {
	inv     *invocation
	secret  string
	key     *sshKey
	message []byte
	repo    json.RawMessage
}

// resolveSign checks the request shape, then that invocation, token and
// secret belong together for this client and the key is still the one the
// invocation released.
func (d *Device) resolveSign(r *request) (*signTarget, error) {
	var w signRequestWire
	if err := json.Unmarshal(r.plaintext, &w); err != nil {
		return nil, malformedf("%s request: %v", r.method, err)
	}
	if w.InvocationID == nil || w.Secret == nil {
		return nil, malformedf("invocation_id and secret are required")
	}
	if _, err := parseULID(*w.InvocationID); err != nil {
		return nil, malformedf("invocation_id is not a canonical ULID")
	}
	token, err := decodeB64Len(w.InvocationToken, "invocation_token", 32)
	if err != nil {
		return nil, malformed{err.Error()}
	}
	msg, err := decodeB64Len(w.Message, "message", -1)
	if err != nil {
		return nil, malformed{err.Error()}
	}
	repo := bytes.TrimSpace(w.Repository)
	if len(repo) > 0 && !bytes.Equal(repo, []byte("null")) && repo[0] != '{' {
		return nil, malformedf("repository must be an object")
	}
	if bytes.Equal(repo, []byte("null")) {
		repo = nil
	}

	var inv *invocation
	var stored *storedSecret
	err = d.transactFor(r, func(t *txn) error {
		st, err := t.state()
		if err != nil {
			return err
		}
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		if i := st.invocation(*w.InvocationID); i != nil {
			c := *i
			inv = &c
		}
		stored = ss.Secrets[*w.Secret]
		return nil
	})
	if err != nil {
		return nil, err
	}
	// One answer for every mismatch, so the response tells nothing about
	// which of id, token and secret was wrong.
	mismatch := ruleErrorf("the invocation id, token and secret do not belong to one approved invocation of this client")
	if inv == nil {
		return nil, mismatch
	}
	th := sha256.Sum256(token)
	tokenOK := subtle.ConstantTimeCompare(th[:], inv.TokenHash) == 1
	if !tokenOK || inv.ClientID != r.clientID || inv.SSHSecret == "" || inv.SSHSecret != *w.Secret {
		return nil, mismatch
	}
	if stored == nil || stored.Type != typeSSH || stored.PublicKey != inv.SSHPublicKey {
		return nil, ruleErrorf("SSH secret %s changed since the invocation was approved", printable(*w.Secret))
	}
	key, err := stored.sshKey()
	if err != nil {
		return nil, ruleErrorf("SSH secret %s cannot be used: %v", printable(*w.Secret), err)
	}
	return &signTarget{inv: inv, secret: *w.Secret, key: key, message: msg, repo: repo}, nil
}

func (d *Device) gitSign(r *request) methodResult {
	tg, err := d.resolveSign(r)
	if err != nil {
		return d.refuse(r, "git-sign", nil, nil, err)
	}
	a := &Approval{ID: newApprovalID(), Kind: "git-sign", ClientID: r.clientID, Client: r.client,
		RequestID: r.requestID, Received: r.received, Secrets: []string{tg.secret},
		GitSign: &GitSignDetails{Secret: tg.secret, PublicKey: tg.key.publicKey, Message: string(tg.message),
			Repository: tg.repo, Invocation: tg.inv.Details}}
	if res, ok := d.decide(r, a); !ok {
		return res
	}
	sig, err := sshsig(tg.key.signer, "git", tg.message)
	if err != nil {
		d.logf("request %s: signing failed: %v", r.requestID, err)
		return denialResult("OTHER", "The device could not sign.")
	}
	return methodResult{body: map[string]string{"result": "APPROVED", "signature": sig}, outcome: "APPROVED",
		apply: requireActive(r.clientID)}
}

func requireActive(clientID string) func(*txn, *stateTx, time.Time) error {
	return func(_ *txn, st *stateTx, _ time.Time) error {
		if !clientActive(st, clientID) {
			return errStateChanged
		}
		return nil
	}
}

// sshsig makes an armored OpenSSH SSHSIG signature (PROTOCOL.sshsig) with
// SHA-512 as the message hash; RSA keys sign with rsa-sha2-512.
func sshsig(signer ssh.Signer, namespace string, message []byte) (string, error) {
	h := sha512.Sum512(message)
	var signed []byte
	signed = append(signed, "SSHSIG"...)
	signed = appendString(signed, []byte(namespace))
	signed = appendString(signed, nil) // reserved
	signed = appendString(signed, []byte("sha512"))
	signed = appendString(signed, h[:])
	sig, err := signWith(signer, signed, "")
	if err != nil {
		return "", err
	}
	var blob []byte
	blob = append(blob, "SSHSIG"...)
	blob = binary.BigEndian.AppendUint32(blob, 1)
	blob = appendString(blob, signer.PublicKey().Marshal())
	blob = appendString(blob, []byte(namespace))
	blob = appendString(blob, nil)
	blob = appendString(blob, []byte("sha512"))
	blob = appendString(blob, ssh.Marshal(sig))
	b64 := base64.StdEncoding.EncodeToString(blob)
	var sb strings.Builder
	sb.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(b64) > 70 {
		sb.WriteString(b64[:70] + "\n")
		b64 = b64[70:]
	}
	sb.WriteString(b64 + "\n-----END SSH SIGNATURE-----\n")
	return sb.String(), nil
}

// signWith signs with an explicit algorithm; "" picks ssh-ed25519 for
// Ed25519 and rsa-sha2-512 for RSA. The legacy ssh-rsa (SHA-1) is never used.
func signWith(signer ssh.Signer, data []byte, alg string) (*ssh.Signature, error) {
	keyType := signer.PublicKey().Type()
	if alg == "" {
		alg = keyType
		if keyType == ssh.KeyAlgoRSA {
			alg = ssh.KeyAlgoRSASHA512
		}
	}
	if !algorithmFits(keyType, alg) {
		return nil, errors.New("signature algorithm does not fit the key")
	}
	as, ok := signer.(ssh.AlgorithmSigner)
	if !ok {
		return nil, errors.New("signer cannot choose an algorithm")
	}
	return as.SignWithAlgorithm(rand.Reader, data, alg)
}

func algorithmFits(keyType, alg string) bool {
	switch keyType {
	case ssh.KeyAlgoED25519:
		return alg == ssh.KeyAlgoED25519
	case ssh.KeyAlgoRSA:
		return alg == ssh.KeyAlgoRSASHA256 || alg == ssh.KeyAlgoRSASHA512
	}
	return false
}

func appendString(b, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// userauth is a parsed SSH_MSG_USERAUTH_REQUEST signing payload.
type userauth struct {
	sessionID []byte
	user      string
	method    string
	alg       string
	key       []byte
	hostKey   []byte // host-bound form only
}

func readString(b []byte) (s, rest []byte, ok bool) {
	if len(b) < 4 {
		return nil, nil, false
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, nil, false
	}
	return b[4 : 4+n], b[4+n:], true
}

const (
	methodPublickey = "publickey"
	methodHostbound = "publickey-hostbound-v00@openssh.com"
)

// parseUserauth accepts exactly the two forms of the protocol and nothing
// after them.
func parseUserauth(b []byte) (*userauth, error) {
	bad := func(what string) (*userauth, error) {
		return nil, ruleErrorf("not an SSH user-authentication request: %s", what)
	}
	var u userauth
	var s []byte
	var ok bool
	if u.sessionID, b, ok = readString(b); !ok || len(u.sessionID) == 0 {
		return bad("missing or empty session identifier")
	}
	if len(b) < 1 || b[0] != 50 {
		return bad("message type is not SSH_MSG_USERAUTH_REQUEST (50)")
	}
	b = b[1:]
	if s, b, ok = readString(b); !ok {
		return bad("missing user name")
	}
	u.user = string(s)
	if s, b, ok = readString(b); !ok || string(s) != "ssh-connection" {
		return bad(`service is not "ssh-connection"`)
	}
	if s, b, ok = readString(b); !ok || (string(s) != methodPublickey && string(s) != methodHostbound) {
		return bad("method is not publickey or publickey-hostbound-v00@openssh.com")
	}
	u.method = string(s)
	if len(b) < 1 || b[0] != 1 {
		return bad("the signature flag is not TRUE")
	}
	b = b[1:]
	if s, b, ok = readString(b); !ok {
		return bad("missing signature algorithm")
	}
	u.alg = string(s)
	if u.key, b, ok = readString(b); !ok {
		return bad("missing public key")
	}
	if u.method == methodHostbound {
		if u.hostKey, b, ok = readString(b); !ok {
			return bad("missing server host key")
		}
		alg, data, ok := readString(u.hostKey)
		if !ok || len(alg) == 0 || len(data) == 0 {
			return bad("server host key has no algorithm or key data")
		}
	}
	if len(b) != 0 {
		return bad("trailing bytes")
	}
	return &u, nil
}

func hostKeyFingerprint(blob []byte) string {
	if blob == nil {
		return ""
	}
	h := sha256.Sum256(blob)
	return "SHA256:" + base64.RawStdEncoding.EncodeToString(h[:])
}

func (d *Device) sshAuthenticate(r *request) methodResult {
	tg, err := d.resolveSign(r)
	if err != nil {
		return d.refuse(r, "ssh-authenticate", nil, nil, err)
	}
	refuse := func(err error) methodResult {
		return d.refuse(r, "ssh-authenticate", []string{tg.secret}, tg.inv.Details, err)
	}
	u, err := parseUserauth(tg.message)
	if err != nil {
		return refuse(err)
	}
	pub := tg.key.signer.PublicKey()
	if !bytes.Equal(u.key, pub.Marshal()) {
		return refuse(ruleErrorf("the public key in the message is not the key of secret %s", printable(tg.secret)))
	}
	if u.alg == ssh.KeyAlgoRSA {
		return refuse(ruleErrorf("the legacy ssh-rsa (SHA-1) signature algorithm is not allowed"))
	}
	if !algorithmFits(pub.Type(), u.alg) {
		return refuse(ruleErrorf("signature algorithm %s does not fit the key", printable(u.alg)))
	}
	a := &Approval{ID: newApprovalID(), Kind: "ssh-authenticate", ClientID: r.clientID, Client: r.client,
		RequestID: r.requestID, Received: r.received, Secrets: []string{tg.secret},
		SSH: &SSHDetails{Secret: tg.secret, PublicKey: tg.key.publicKey, User: u.user, Method: u.method,
			Algorithm: u.alg, HostKeyFingerprint: hostKeyFingerprint(u.hostKey), Invocation: tg.inv.Details}}
	if res, ok := d.decide(r, a); !ok {
		return res
	}
	sig, err := signWith(tg.key.signer, tg.message, u.alg)
	if err != nil {
		d.logf("request %s: signing failed: %v", r.requestID, err)
		return denialResult("OTHER", "The device could not sign.")
	}
	return methodResult{
		body:    map[string]string{"result": "APPROVED", "signature": base64.StdEncoding.EncodeToString(ssh.Marshal(sig))},
		outcome: "APPROVED", apply: requireActive(r.clientID),
	}
}
