// GitSign and SshAuthenticate on the device side (client-device protocol
// "Git signing", "SSH authentication"): signatures checked by ssh-keygen
// -Y verify and x/crypto/ssh, and their tie to the invocation.
package device

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

// approvedInvocation runs an approved Invocation selecting secret and
// returns its id.
func approvedInvocation(t *testing.T, c *testClient, secret string) string {
	t.Helper()
	res, ok, x := c.callRaw(body(t, "Invocation", invocationFields(map[string]any{secret: map[string]any{}})))
	if !ok || res["result"] != "APPROVED" {
		t.Fatalf("invocation: %v", res)
	}
	x.complete(map[string]any{"result": "APPROVED"})
	return x.requestID.String()
}

func signFields(invID, secret string, message []byte) map[string]any {
	return map[string]any{"invocation_id": invID, "invocation_token": b64(testToken), "secret": secret, "message": b64(message)}
}

const commitText = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@example.com> 1700000000 +0000\ncommitter A <a@example.com> 1700000000 +0000\n\nsigned commit\n"

func TestGitSignVerifiesWithSSHKeygen(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not in PATH")
	}
	h := newHarness(t)
	keys := h.secrets()
	c := h.pair()
	for _, secret := range []string{"sshkey", "rsakey"} {
		t.Run(secret, func(t *testing.T) {
			inv := approvedInvocation(t, c, secret)
			f := signFields(inv, secret, []byte(commitText))
			f["repository"] = map[string]any{"remote": "github.com/example/project", "head": map[string]any{"type": "BRANCH", "name": "main"}}
			res := c.call("GitSign", f)
			if res["result"] != "APPROVED" {
				t.Fatalf("GitSign: %v", res)
			}
			sig, _ := res["signature"].(string)
			if !strings.HasPrefix(sig, "-----BEGIN SSH SIGNATURE-----\n") || !strings.HasSuffix(sig, "\n-----END SSH SIGNATURE-----\n") {
				t.Fatalf("signature not armored: %q", sig)
			}
			a := h.appr.last()
			if a.Kind != "git-sign" || a.GitSign.Message != commitText || a.GitSign.Secret != secret ||
				a.GitSign.PublicKey != keys[secret] || !strings.Contains(string(a.GitSign.Repository), "github.com/example/project") ||
				a.GitSign.Invocation == nil || a.GitSign.Invocation.Command != "gh" {
				t.Fatalf("approval %+v / %+v", a, a.GitSign)
			}

			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "allowed"), []byte("signer@example.com "+keys[secret]+"\n"), 0o600)
			os.WriteFile(filepath.Join(dir, "sig"), []byte(sig), 0o600)
			verify := func(msg string) error {
				cmd := exec.Command(keygen, "-Y", "verify", "-f", filepath.Join(dir, "allowed"), "-I", "signer@example.com", "-n", "git", "-s", filepath.Join(dir, "sig"))
				cmd.Stdin = strings.NewReader(msg)
				out, err := cmd.CombinedOutput()
				if err != nil {
					return &exec.ExitError{ProcessState: cmd.ProcessState, Stderr: out}
				}
				return nil
			}
			if err := verify(commitText); err != nil {
				t.Fatalf("ssh-keygen -Y verify: %v: %s", err, err.(*exec.ExitError).Stderr)
			}
			if verify(commitText+"x") == nil {
				t.Fatal("ssh-keygen accepted the signature for another message")
			}
			// RSA keys sign with rsa-sha2-512, never ssh-rsa.
			if secret == "rsakey" {
				blob := dearmor(t, sig)
				if !bytes.Contains(blob, []byte("rsa-sha2-512")) {
					t.Fatal("RSA SSHSIG not made with rsa-sha2-512")
				}
			}
		})
	}
}

func dearmor(t *testing.T, sig string) []byte {
	s := strings.TrimPrefix(sig, "-----BEGIN SSH SIGNATURE-----\n")
	s = strings.TrimSuffix(s, "-----END SSH SIGNATURE-----\n")
	b, err := base64.StdEncoding.DecodeString(strings.ReplaceAll(s, "\n", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignTiedToInvocation(t *testing.T) {
	h := newHarness(t)
	h.secrets()
	c := h.pair()
	inv := approvedInvocation(t, c, "sshkey")
	envInv := approvedInvocation(t, c, "github")
	other := h.pair() // a second client of the same device
	before := h.appr.count("")

	deniedInvalid := func(t *testing.T, who *testClient, method string, f map[string]any) {
		t.Helper()
		res := who.call(method, f)
		if res["result"] != "DENIED" || res["reason"] != "INVALID_REQUEST" {
			t.Fatalf("%s: %v", method, res)
		}
	}
	for _, method := range []string{"GitSign", "SshAuthenticate"} {
		t.Run(method, func(t *testing.T) {
			wrongToken := signFields(inv, "sshkey", []byte("x"))
			wrongToken["invocation_token"] = b64(bytes.Repeat([]byte{7}, 32))
			deniedInvalid(t, c, method, wrongToken)
			deniedInvalid(t, c, method, signFields(inv, "rsakey", []byte("x")))                     // not the invocation's secret
			deniedInvalid(t, c, method, signFields(newULID(h.clock.now()).String(), "sshkey", nil)) // unknown invocation
			deniedInvalid(t, c, method, signFields(envInv, "github", []byte("x")))                  // invocation without SSH key
			deniedInvalid(t, other, method, signFields(inv, "sshkey", []byte("x")))                 // another client's invocation

			for name, mut := range map[string]func(map[string]any){
				"missing id":     func(f map[string]any) { delete(f, "invocation_id") },
				"bad id":         func(f map[string]any) { f["invocation_id"] = strings.ToLower(inv) },
				"short token":    func(f map[string]any) { f["invocation_token"] = b64(make([]byte, 16)) },
				"missing secret": func(f map[string]any) { delete(f, "secret") },
				"missing msg":    func(f map[string]any) { delete(f, "message") },
			} {
				f := signFields(inv, "sshkey", []byte("x"))
				mut(f)
				if res := c.call(method, f); res["error"] != "INVALID_REQUEST" {
					t.Fatalf("%s: %v", name, res)
				}
			}
		})
	}
	if n := h.appr.count(""); n != before {
		t.Fatalf("mismatched sign requests reached the approver %d times", n-before)
	}

	// An invocation the client aborted can never sign.
	res, _, x := c.callRaw(body(t, "Invocation", invocationFields(map[string]any{"sshkey": map[string]any{}})))
	if res["result"] != "APPROVED" {
		t.Fatal(res)
	}
	x.complete(map[string]any{"result": "ABORTED", "reason": "INVALID_RESPONSE", "message": "x"})
	waitInvocationGone(t, h, x.requestID.String())
	deniedInvalid(t, c, "GitSign", signFields(x.requestID.String(), "sshkey", []byte("x")))
}

func waitInvocationGone(t *testing.T, h *harness, id string) {
	t.Helper()
	h.dev.Close() // completion workers finish before Close returns
	if readState(t, h.dir).Invocations[id] != nil {
		t.Fatal("aborted invocation still recorded")
	}
	dev, err := Open(Options{StateDir: h.dir, Approver: h.appr, Publisher: h.pub, Now: h.clock.now})
	if err != nil {
		t.Fatal(err)
	}
	h.dev = dev
	t.Cleanup(func() { dev.Close() })
}

// userauth builds an SSH user-authentication signing payload.
type userauthT struct {
	session, user, service, method string
	flag                           byte
	alg                            string
	key, host                      []byte
	trailing                       []byte
}

func (u userauthT) bytes() []byte {
	str := func(b []byte, s []byte) []byte {
		b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
		return append(b, s...)
	}
	var b []byte
	b = str(b, []byte(u.session))
	b = append(b, 50)
	b = str(b, []byte(u.user))
	b = str(b, []byte(u.service))
	b = str(b, []byte(u.method))
	b = append(b, u.flag)
	b = str(b, []byte(u.alg))
	b = str(b, u.key)
	if u.host != nil {
		b = str(b, u.host)
	}
	return append(b, u.trailing...)
}

func TestSshAuthenticateSignatures(t *testing.T) {
	h := newHarness(t)
	keys := h.secrets()
	c := h.pair()
	hostPub, _, _ := ed25519.GenerateKey(rand.Reader)
	hostKey, _ := ssh.NewPublicKey(hostPub)
	for _, tc := range []struct{ secret, alg, method string }{
		{"sshkey", "ssh-ed25519", "publickey"},
		{"rsakey", "rsa-sha2-256", "publickey"},
		{"rsakey", "rsa-sha2-512", "publickey-hostbound-v00@openssh.com"},
	} {
		t.Run(tc.alg, func(t *testing.T) {
			pub, _, _, _, err := ssh.ParseAuthorizedKey([]byte(keys[tc.secret]))
			if err != nil {
				t.Fatal(err)
			}
			inv := approvedInvocation(t, c, tc.secret)
			u := userauthT{session: "session-id-bytes", user: "git", service: "ssh-connection", method: tc.method, flag: 1, alg: tc.alg, key: pub.Marshal()}
			if tc.method != "publickey" {
				u.host = hostKey.Marshal()
			}
			msg := u.bytes()
			res := c.call("SshAuthenticate", signFields(inv, tc.secret, msg))
			if res["result"] != "APPROVED" {
				t.Fatalf("SshAuthenticate: %v", res)
			}
			blob, err := base64.StdEncoding.DecodeString(res["signature"].(string))
			if err != nil {
				t.Fatal(err)
			}
			var sig ssh.Signature
			if err := ssh.Unmarshal(blob, &sig); err != nil {
				t.Fatal(err)
			}
			if sig.Format != tc.alg || len(sig.Rest) != 0 {
				t.Fatalf("signature format %q (want %q), %d extra bytes", sig.Format, tc.alg, len(sig.Rest))
			}
			if tc.alg == "ssh-ed25519" && len(sig.Blob) != 64 {
				t.Fatalf("ed25519 signature of %d bytes", len(sig.Blob))
			}
			if err := pub.Verify(msg, &sig); err != nil {
				t.Fatalf("signature does not verify: %v", err)
			}
			if pub.Verify(append(msg, 0), &sig) == nil {
				t.Fatal("signature verifies for another message")
			}
			a := h.appr.last()
			if a.Kind != "ssh-authenticate" || a.SSH.User != "git" || a.SSH.Algorithm != tc.alg || a.SSH.Method != tc.method || a.SSH.PublicKey != keys[tc.secret] {
				t.Fatalf("approval %+v", a.SSH)
			}
			if want := ""; tc.method != "publickey" {
				want = ssh.FingerprintSHA256(hostKey)
				if a.SSH.HostKeyFingerprint != want {
					t.Fatalf("host key fingerprint %q, want %q", a.SSH.HostKeyFingerprint, want)
				}
			} else if a.SSH.HostKeyFingerprint != want {
				t.Fatalf("host key fingerprint %q for plain publickey", a.SSH.HostKeyFingerprint)
			}
		})
	}
}

func TestSshAuthenticateValidation(t *testing.T) {
	h := newHarness(t)
	keys := h.secrets()
	c := h.pair()
	edPub, _, _, _, _ := ssh.ParseAuthorizedKey([]byte(keys["sshkey"]))
	rsaPub, _, _, _, _ := ssh.ParseAuthorizedKey([]byte(keys["rsakey"]))
	edInv := approvedInvocation(t, c, "sshkey")
	rsaInv := approvedInvocation(t, c, "rsakey")
	otherPub, _, _ := ed25519.GenerateKey(rand.Reader)
	otherKey, _ := ssh.NewPublicKey(otherPub)
	good := func() userauthT {
		return userauthT{session: "sid", user: "git", service: "ssh-connection", method: "publickey", flag: 1, alg: "ssh-ed25519", key: edPub.Marshal()}
	}
	before := h.appr.count("")
	cases := map[string]func(*userauthT){
		"trailing bytes":             func(u *userauthT) { u.trailing = []byte{0} },
		"empty session id":           func(u *userauthT) { u.session = "" },
		"other service":              func(u *userauthT) { u.service = "ssh-userauth" },
		"password method":            func(u *userauthT) { u.method = "password" },
		"flag false":                 func(u *userauthT) { u.flag = 0 },
		"not the selected key":       func(u *userauthT) { u.key = otherKey.Marshal() },
		"alg of another key type":    func(u *userauthT) { u.alg = "rsa-sha2-256" },
		"hostbound without host key": func(u *userauthT) { u.method = "publickey-hostbound-v00@openssh.com" },
		"hostbound empty host key alg": func(u *userauthT) {
			u.method = "publickey-hostbound-v00@openssh.com"
			u.host = append([]byte{0, 0, 0, 0}, 0, 0, 0, 1, 9)
		},
		"host key on plain publickey": func(u *userauthT) { u.host = otherKey.Marshal() },
		"truncated":                   func(u *userauthT) { u.key = nil; u.alg = "" },
	}
	for name, mut := range cases {
		t.Run(name, func(t *testing.T) {
			u := good()
			mut(&u)
			res := c.call("SshAuthenticate", signFields(edInv, "sshkey", u.bytes()))
			if res["result"] != "DENIED" || res["reason"] != "INVALID_REQUEST" {
				t.Fatalf("%v", res)
			}
		})
	}
	t.Run("ssh-rsa algorithm", func(t *testing.T) {
		u := good()
		u.alg, u.key = "ssh-rsa", rsaPub.Marshal()
		res := c.call("SshAuthenticate", signFields(rsaInv, "rsakey", u.bytes()))
		if res["result"] != "DENIED" || res["reason"] != "INVALID_REQUEST" || !strings.Contains(res["message"].(string), "ssh-rsa") {
			t.Fatalf("%v", res)
		}
	})
	t.Run("wrong message type byte", func(t *testing.T) {
		b := good().bytes()
		b[4+3] = 51 // the byte after the 3-byte session id
		res := c.call("SshAuthenticate", signFields(edInv, "sshkey", b))
		if res["result"] != "DENIED" || res["reason"] != "INVALID_REQUEST" {
			t.Fatalf("%v", res)
		}
	})
	if n := h.appr.count(""); n != before {
		t.Fatalf("invalid user-auth messages reached the approver %d times", n-before)
	}
	// The unmodified message is accepted, so each case above failed for
	// its own reason.
	if res := c.call("SshAuthenticate", signFields(edInv, "sshkey", good().bytes())); res["result"] != "APPROVED" {
		t.Fatalf("good message: %v", res)
	}
	// A denial by the person is reported as such and signs nothing.
	h.appr.set(func(context.Context, *Approval) Decision { return Decision{Reason: "USER_DENIED", Message: "no"} })
	if res := c.call("SshAuthenticate", signFields(edInv, "sshkey", good().bytes())); res["result"] != "DENIED" || res["reason"] != "USER_DENIED" || res["signature"] != nil {
		t.Fatalf("denied: %v", res)
	}
}
