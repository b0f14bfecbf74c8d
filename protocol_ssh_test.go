// protocol_ssh_test.go: tests of protocol_ssh.go (client-device-protocol.md
// "Git signing" and "SSH authentication"): GitSign and SshAuthenticate
// response checks, SSHSIG verification, signature algorithms and the
// user-authentication message parser, with keys and signatures from the
// real ssh-keygen; plus the SSH test-key helpers the other tests share.

package main

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

type sshTestKey struct {
	signer ssh.AlgorithmSigner
	pub    ssh.PublicKey
	line   string // authorized_keys form
	path   string
}

// newSSHTestKey makes a key with the real ssh-keygen.
func newSSHTestKey(t *testing.T, keyType string, extra ...string) *sshTestKey {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Fatal("these tests need OpenSSH's ssh-keygen:", err)
	}
	path := filepath.Join(t.TempDir(), "key")
	args := append([]string{"-q", "-t", keyType, "-N", "", "-C", "test@example", "-f", path}, extra...)
	if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pem, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.ParsePrivateKey(pem)
	if err != nil {
		t.Fatal(err)
	}
	line, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	return &sshTestKey{signer: signer.(ssh.AlgorithmSigner), pub: signer.PublicKey(), line: strings.TrimSpace(string(line)), path: path}
}

// sshkeygenSign makes an armored SSHSIG with ssh-keygen -Y sign.
func sshkeygenSign(t *testing.T, k *sshTestKey, namespace string, message []byte) string {
	t.Helper()
	msgPath := filepath.Join(t.TempDir(), "message")
	if err := os.WriteFile(msgPath, message, 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("ssh-keygen", "-Y", "sign", "-n", namespace, "-f", k.path, msgPath).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen -Y sign: %v\n%s", err, out)
	}
	sig, err := os.ReadFile(msgPath + ".sig")
	if err != nil {
		t.Fatal(err)
	}
	return string(sig)
}

// sshkeygenVerify checks an armored signature with ssh-keygen -Y verify, so
// hand-built test signatures are known to be what OpenSSH accepts.
func sshkeygenVerify(t *testing.T, k *sshTestKey, namespace string, message []byte, armored string) bool {
	t.Helper()
	dir := t.TempDir()
	allowed := filepath.Join(dir, "allowed")
	sigPath := filepath.Join(dir, "sig")
	if err := os.WriteFile(allowed, []byte("test@example "+k.line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sigPath, []byte(armored), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("ssh-keygen", "-Y", "verify", "-f", allowed, "-I", "test@example", "-n", namespace, "-s", sigPath)
	cmd.Stdin = bytes.NewReader(message)
	return cmd.Run() == nil
}

func sshWireString(b []byte, s []byte) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

// buildSSHSIG assembles an armored SSHSIG by hand so tests can vary one
// field at a time.
func buildSSHSIG(t *testing.T, k *sshTestKey, alg, namespace, hashAlg string, message []byte) string {
	t.Helper()
	var digest []byte
	switch hashAlg {
	case "sha256":
		d := sha256.Sum256(message)
		digest = d[:]
	default:
		d := sha512.Sum512(message)
		digest = d[:]
	}
	signed := []byte("SSHSIG")
	signed = sshWireString(signed, []byte(namespace))
	signed = sshWireString(signed, nil)
	signed = sshWireString(signed, []byte(hashAlg))
	signed = sshWireString(signed, digest)
	sig, err := k.signer.SignWithAlgorithm(rand.Reader, signed, alg)
	if err != nil {
		t.Fatal(err)
	}
	blob := []byte("SSHSIG")
	blob = binary.BigEndian.AppendUint32(blob, 1)
	blob = sshWireString(blob, k.pub.Marshal())
	blob = sshWireString(blob, []byte(namespace))
	blob = sshWireString(blob, nil)
	blob = sshWireString(blob, []byte(hashAlg))
	blob = sshWireString(blob, ssh.Marshal(sig))
	return armorSSHSIG(blob)
}

func armorSSHSIG(blob []byte) string {
	enc := base64.StdEncoding.EncodeToString(blob)
	var b strings.Builder
	b.WriteString("-----BEGIN SSH SIGNATURE-----\n")
	for len(enc) > 70 {
		b.WriteString(enc[:70] + "\n")
		enc = enc[70:]
	}
	b.WriteString(enc + "\n-----END SSH SIGNATURE-----\n")
	return b.String()
}

// userAuthMessage builds an SSH_MSG_USERAUTH_REQUEST to be signed.
func userAuthMessage(sessionID []byte, method, alg string, keyBlob, hostKey []byte) []byte {
	m := sshWireString(nil, sessionID)
	m = append(m, 50)
	m = sshWireString(m, []byte("git"))
	m = sshWireString(m, []byte("ssh-connection"))
	m = sshWireString(m, []byte(method))
	m = append(m, 1)
	m = sshWireString(m, []byte(alg))
	m = sshWireString(m, keyBlob)
	if hostKey != nil {
		m = sshWireString(m, hostKey)
	}
	return m
}

// ---- GitSign and SshAuthenticate ----

func TestCheckGitSignResponse(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	other := newSSHTestKey(t, "ed25519")
	message := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@example> 0 +0000\n\nsigned\n")
	approved := func(armored string) []byte {
		return protoMarshal(t, map[string]string{"result": "APPROVED", "signature": armored})
	}

	good := []struct {
		name    string
		key     *sshTestKey
		armored string
	}{
		{"ssh-keygen ed25519", ed, sshkeygenSign(t, ed, "git", message)},
		{"ssh-keygen rsa", rsaKey, sshkeygenSign(t, rsaKey, "git", message)},
		{"sha256 digest", ed, buildSSHSIG(t, ed, ssh.KeyAlgoED25519, "git", "sha256", message)},
		{"rsa-sha2-256", rsaKey, buildSSHSIG(t, rsaKey, ssh.KeyAlgoRSASHA256, "git", "sha512", message)},
	}
	for _, c := range good {
		if !sshkeygenVerify(t, c.key, "git", message, c.armored) {
			t.Fatalf("%s: OpenSSH itself rejects the test signature", c.name)
		}
		r, err := checkGitSignResponse(approved(c.armored), c.key.pub, message)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.Outcome != outcomeApproved || r.Armored != c.armored || r.Signature == nil {
			t.Errorf("%s: result %+v", c.name, r)
		}
	}

	edSig := sshkeygenSign(t, ed, "git", message)
	lines := strings.Split(edSig, "\n")
	corrupt := []byte(edSig)
	corrupt[len("-----BEGIN SSH SIGNATURE-----\n")+60] ^= 0x01
	// ssh-rsa (SHA-1) is a valid OpenSSH signature that v1 forbids.
	sha1Sig := buildSSHSIG(t, rsaKey, ssh.KeyAlgoRSA, "git", "sha512", message)
	bad := []struct {
		name    string
		key     *sshTestKey
		armored string
		message []byte
		want    string
	}{
		{"different message", ed, edSig, append(bytes.Clone(message), 'x'), "does not verify"},
		{"file namespace", ed, sshkeygenSign(t, ed, "file", message), message, `namespace "file"`},
		{"other key's signature", ed, sshkeygenSign(t, other, "git", message), message, "different key"},
		{"verified against another key", other, edSig, message, "different key"},
		{"ssh-rsa SHA-1", rsaKey, sha1Sig, message, "rsa-sha2"},
		{"unknown hash", ed, buildSSHSIG(t, ed, ssh.KeyAlgoED25519, "git", "sha1", message), message, "unsupported SSHSIG hash"},
		{"corrupted body", ed, string(corrupt), message, ""},
		{"missing begin line", ed, strings.Join(lines[1:], "\n"), message, "not an armored"},
		{"missing end line", ed, strings.Join(lines[:len(lines)-2], "\n") + "\n", message, "not an armored"},
		{"blank line inside", ed, lines[0] + "\n\n" + strings.Join(lines[1:], "\n"), message, "not an armored"},
		{"not base64", ed, "-----BEGIN SSH SIGNATURE-----\n!!!!\n-----END SSH SIGNATURE-----\n", message, "base64"},
		{"not SSHSIG", ed, armorSSHSIG([]byte("NOTSIG\x00\x00\x00\x01")), message, "magic"},
		{"trailing bytes", ed, armorSSHSIG(append(sshsigBlobOf(t, edSig), 0)), message, "malformed"},
	}
	for _, c := range bad {
		_, err := checkGitSignResponse(approved(c.armored), c.key.pub, c.message)
		if err == nil || !errors.Is(err, errInvalidResponse) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want invalid response containing %q", c.name, err, c.want)
		}
	}

	forms := []struct {
		name    string
		body    string
		outcome responseOutcome
		wantErr string
	}{
		{"denied", `{"result":"DENIED","reason":"USER_DENIED","message":"no"}`, outcomeDenied, ""},
		{"error", `{"error":"INVALID_REQUEST","message":"bad token"}`, outcomeDeviceError, ""},
		{"approved without signature", `{"result":"APPROVED"}`, 0, `missing "signature"`},
		{"signature not a string", `{"result":"APPROVED","signature":["x"]}`, 0, `"signature" is not a string`},
		{"aborted", `{"result":"ABORTED","reason":"OTHER","message":"m"}`, 0, "unexpected result"},
	}
	for _, c := range forms {
		r, err := checkGitSignResponse([]byte(c.body), ed.pub, message)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: %v, want %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || r.Outcome != c.outcome {
			t.Errorf("%s: %v %v", c.name, r, err)
		}
	}
}

func TestCheckSignatureAlgorithm(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	ecdsa := newSSHTestKey(t, "ecdsa")
	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	// A security-key public key (the device cannot hold one; refuse it).
	skBlob := sshWireString(nil, []byte("sk-ssh-ed25519@openssh.com"))
	skBlob = sshWireString(skBlob, ed.pub.Marshal()[19:])
	skBlob = sshWireString(skBlob, []byte("ssh:"))
	sk, err := ssh.ParsePublicKey(skBlob)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		key  ssh.PublicKey
		sig  ssh.Signature
		want string // "" = accepted
	}{
		{"ed25519", ed.pub, ssh.Signature{Format: "ssh-ed25519", Blob: make([]byte, 64)}, ""},
		{"ed25519 short", ed.pub, ssh.Signature{Format: "ssh-ed25519", Blob: make([]byte, 63)}, "64 bytes"},
		{"ed25519 as rsa", ed.pub, ssh.Signature{Format: "rsa-sha2-512", Blob: make([]byte, 64)}, "does not match"},
		{"ecdsa", ecdsa.pub, ssh.Signature{Format: ecdsa.pub.Type(), Blob: []byte{1}}, ""},
		{"rsa-sha2-512", rsaKey.pub, ssh.Signature{Format: "rsa-sha2-512", Blob: []byte{1}}, ""},
		{"rsa-sha2-256", rsaKey.pub, ssh.Signature{Format: "rsa-sha2-256", Blob: []byte{1}}, ""},
		{"ssh-rsa", rsaKey.pub, ssh.Signature{Format: "ssh-rsa", Blob: []byte{1}}, "rsa-sha2"},
		{"security key", sk, ssh.Signature{Format: sk.Type(), Blob: make([]byte, 64)}, "security-key"},
	}
	for _, c := range cases {
		err := checkSignatureAlgorithm(c.key, &c.sig)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// sshsigBlobOf undoes the armor of a signature.
func sshsigBlobOf(t *testing.T, armored string) []byte {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(armored), "\n")
	raw, err := base64.StdEncoding.DecodeString(strings.Join(lines[1:len(lines)-1], ""))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func TestCheckSSHAuthenticateResponse(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	other := newSSHTestKey(t, "ed25519")
	session := bytes.Repeat([]byte{0x5a}, 32)
	hostKey := other.pub.Marshal()

	sign := func(k *sshTestKey, msg []byte, alg string) string {
		sig, err := k.signer.SignWithAlgorithm(rand.Reader, msg, alg)
		if err != nil {
			t.Fatal(err)
		}
		return base64.StdEncoding.EncodeToString(ssh.Marshal(sig))
	}
	approved := func(sig string) []byte {
		return protoMarshal(t, map[string]string{"result": "APPROVED", "signature": sig})
	}

	edMsg := userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, ed.pub.Marshal(), nil)
	edHostBound := userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, ed.pub.Marshal(), hostKey)
	rsa512 := userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA512, rsaKey.pub.Marshal(), nil)
	rsa256 := userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA256, rsaKey.pub.Marshal(), nil)
	good := []struct {
		name string
		key  *sshTestKey
		msg  []byte
		alg  string
	}{
		{"ed25519", ed, edMsg, ssh.KeyAlgoED25519},
		{"ed25519 host-bound", ed, edHostBound, ssh.KeyAlgoED25519},
		{"rsa-sha2-512", rsaKey, rsa512, ssh.KeyAlgoRSASHA512},
		{"rsa-sha2-256", rsaKey, rsa256, ssh.KeyAlgoRSASHA256},
	}
	for _, c := range good {
		r, err := checkSSHAuthenticateResponse(approved(sign(c.key, c.msg, c.alg)), c.key.pub, c.msg)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.Outcome != outcomeApproved || r.Signature == nil || r.Signature.Format != c.alg {
			t.Errorf("%s: %+v", c.name, r)
		}
		if err := c.key.pub.Verify(c.msg, r.Signature); err != nil {
			t.Errorf("%s: returned signature does not verify: %v", c.name, err)
		}
	}

	edSigBlob, _ := base64.StdEncoding.DecodeString(sign(ed, edMsg, ssh.KeyAlgoED25519))
	flipped := bytes.Clone(edSigBlob)
	flipped[len(flipped)-1] ^= 1
	shortSig := ssh.Marshal(&ssh.Signature{Format: ssh.KeyAlgoED25519, Blob: make([]byte, 63)})
	bad := []struct {
		name string
		key  *sshTestKey
		msg  []byte
		sig  string
		want string
	}{
		{"algorithm differs from request", rsaKey, rsa512, sign(rsaKey, rsa512, ssh.KeyAlgoRSASHA256), "differs from the requested"},
		{"signature over another message", ed, edMsg, sign(ed, edHostBound, ssh.KeyAlgoED25519), "does not verify"},
		{"other key's signature", ed, edMsg, sign(other, edMsg, ssh.KeyAlgoED25519), "does not verify"},
		{"tampered signature", ed, edMsg, base64.StdEncoding.EncodeToString(flipped), "does not verify"},
		{"trailing bytes after blob", ed, edMsg, base64.StdEncoding.EncodeToString(append(bytes.Clone(edSigBlob), 0)), "malformed"},
		{"63-byte Ed25519 signature", ed, edMsg, base64.StdEncoding.EncodeToString(shortSig), "64 bytes"},
		{"not base64", ed, edMsg, "%%%", "not base64"},
		{"empty blob", ed, edMsg, "", "malformed"},
	}
	for _, c := range bad {
		_, err := checkSSHAuthenticateResponse(approved(c.sig), c.key.pub, c.msg)
		if err == nil || !errors.Is(err, errInvalidResponse) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want invalid response containing %q", c.name, err, c.want)
		}
	}

	if r, err := checkSSHAuthenticateResponse([]byte(`{"result":"DENIED","reason":"USER_DENIED","message":"no"}`), ed.pub, edMsg); err != nil || r.Outcome != outcomeDenied {
		t.Errorf("denied: %v %v", r, err)
	}
	if r, err := checkSSHAuthenticateResponse([]byte(`{"error":"INVALID_REQUEST","message":"m"}`), ed.pub, edMsg); err != nil || r.Outcome != outcomeDeviceError {
		t.Errorf("error: %v %v", r, err)
	}
	// The request itself is checked before any response is trusted.
	if _, err := checkSSHAuthenticateResponse(approved(sign(ed, edMsg, ssh.KeyAlgoED25519)), other.pub, edMsg); err == nil {
		t.Error("response accepted for a message naming another key")
	}
}

func TestParseSSHUserAuthMessage(t *testing.T) {
	ed := newSSHTestKey(t, "ed25519")
	host := newSSHTestKey(t, "ed25519")
	session := []byte("session-id")
	blob := ed.pub.Marshal()
	valid := userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, blob, nil)
	m, err := parseSSHUserAuthMessage(valid)
	if err != nil {
		t.Fatal(err)
	}
	if string(m.SessionID) != "session-id" || m.User != "git" || m.Method != "publickey" || m.Algorithm != "ssh-ed25519" || !bytes.Equal(m.PublicKey, blob) || m.HostKey != nil {
		t.Errorf("parsed %+v", m)
	}
	if err := m.checkKey(ed.pub); err != nil {
		t.Errorf("checkKey: %v", err)
	}
	hb, err := parseSSHUserAuthMessage(userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, host.pub.Marshal()))
	if err != nil || !bytes.Equal(hb.HostKey, host.pub.Marshal()) {
		t.Errorf("host-bound: %v", err)
	}

	withByte := func(i int, b byte) []byte { v := bytes.Clone(valid); v[i] = b; return v }
	sessionLen := 4 + len(session)
	bad := map[string][]byte{
		"empty":                     nil,
		"empty session id":          userAuthMessage(nil, "publickey", ssh.KeyAlgoED25519, blob, nil),
		"wrong message number":      withByte(sessionLen, 51),
		"wrong service":             bytes.Replace(valid, []byte("ssh-connection"), []byte("ssh-connectioX"), 1),
		"password method":           userAuthMessage(session, "password", ssh.KeyAlgoED25519, blob, nil),
		"query without signature":   bytes.Replace(valid, []byte("publickey\x01"), []byte("publickey\x00"), 1),
		"legacy ssh-rsa":            userAuthMessage(session, "publickey", ssh.KeyAlgoRSA, blob, nil),
		"unknown algorithm":         userAuthMessage(session, "publickey", "ssh-dss", blob, nil),
		"trailing byte":             append(bytes.Clone(valid), 0),
		"truncated":                 valid[:len(valid)-1],
		"host key on plain form":    userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, blob, host.pub.Marshal()),
		"host-bound without key":    userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, nil),
		"host-bound empty key":      userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, []byte{}),
		"host-bound key no data":    userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, sshWireString(nil, []byte("ssh-ed25519"))),
		"host-bound empty key type": userAuthMessage(session, "publickey-hostbound-v00@openssh.com", ssh.KeyAlgoED25519, blob, append(sshWireString(nil, nil), 1, 2)),
		"empty key blob":            userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, nil, nil),
		"oversized length":          append(binary.BigEndian.AppendUint32(nil, 0xffffffff), valid[4:]...),
	}
	for name, msg := range bad {
		if m, err := parseSSHUserAuthMessage(msg); err == nil {
			t.Errorf("%s: accepted %+v", name, m)
		}
	}

	rsaKey := newSSHTestKey(t, "rsa", "-b", "2048")
	keyCases := []struct {
		name string
		msg  []byte
		key  ssh.PublicKey
		ok   bool
	}{
		{"ed25519 key, ed25519 alg", valid, ed.pub, true},
		{"request for another key", valid, host.pub, false},
		{"rsa key, ed25519 alg", userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, rsaKey.pub.Marshal(), nil), rsaKey.pub, false},
		{"ed25519 key, rsa alg", userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA512, blob, nil), ed.pub, false},
		{"rsa key, rsa-sha2-256", userAuthMessage(session, "publickey", ssh.KeyAlgoRSASHA256, rsaKey.pub.Marshal(), nil), rsaKey.pub, true},
	}
	for _, c := range keyCases {
		m, err := parseSSHUserAuthMessage(c.msg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if err := m.checkKey(c.key); (err == nil) != c.ok {
			t.Errorf("%s: checkKey %v, want ok=%v", c.name, err, c.ok)
		}
		token := bytes.Repeat([]byte{3}, 32)
		id, _ := newULID()
		if _, err := newSSHAuthenticateRequest(id, token, "s", c.key, c.msg); (err == nil) != c.ok {
			t.Errorf("%s: newSSHAuthenticateRequest %v, want ok=%v", c.name, err, c.ok)
		}
	}
	id, _ := parseULID("01K2ENXDTW1P3XAR4J7V7C9D0H")
	req, err := newSSHAuthenticateRequest(id, bytes.Repeat([]byte{1}, 32), "prod", ed.pub, valid)
	if err != nil {
		t.Fatal(err)
	}
	protoAssertJSONEqual(t, protoMarshal(t, req), []byte(`{
		"app_info":{"name":"agentknock","version":"dev"},"lib_info":{"name":"agentknock","version":"dev"},
		"method":"SshAuthenticate","invocation_id":"01K2ENXDTW1P3XAR4J7V7C9D0H",
		"invocation_token":"AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=","secret":"prod",
		"message":"`+base64.StdEncoding.EncodeToString(valid)+`"}`))
}
