// Fuzz targets for what the device's answers and the command's SSH client
// can make this client do: every response check (Invocation, SecretList,
// the result methods, GitSign, SshAuthenticate), the SSH user-authentication
// message parser, and the temporary SSH agent's request handling. Seeds are
// the responses the devkit device writes, signatures made with a real key,
// and the agent requests OpenSSH's ssh sends.

package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha512"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/agent"
)

// fuzzSSHKey is a fixed Ed25519 key: its signatures are deterministic, so
// a check that approves anything else than the genuine signature fails.
func fuzzSSHKey(f *testing.F) ssh.Signer {
	s, err := ssh.NewSignerFromKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{0x11}, 32)))
	if err != nil {
		f.Fatal(err)
	}
	return s
}

func fuzzSSHSIG(f *testing.F, signer ssh.Signer, namespace string, message []byte) (armored string, sig *ssh.Signature) {
	digest := sha512.Sum512(message)
	signed := []byte("SSHSIG")
	signed = sshWireString(signed, []byte(namespace))
	signed = sshWireString(signed, nil)
	signed = sshWireString(signed, []byte("sha512"))
	signed = sshWireString(signed, digest[:])
	sig, err := signer.Sign(nil, signed)
	if err != nil {
		f.Fatal(err)
	}
	blob := []byte("SSHSIG")
	blob = binary.BigEndian.AppendUint32(blob, 1)
	blob = sshWireString(blob, signer.PublicKey().Marshal())
	blob = sshWireString(blob, []byte(namespace))
	blob = sshWireString(blob, nil)
	blob = sshWireString(blob, []byte("sha512"))
	blob = sshWireString(blob, ssh.Marshal(sig))
	return armorSSHSIG(blob), sig
}

func FuzzResponseChecks(f *testing.F) {
	signer := fuzzSSHKey(f)
	key := signer.PublicKey()
	commit := []byte(realCommit)
	armored, gitSig := fuzzSSHSIG(f, signer, "git", commit)
	auth := userAuthMessage(bytes.Repeat([]byte{0x5a}, 32), sshUserAuthPublicKey, ssh.KeyAlgoED25519, key.Marshal(), nil)
	authSig, err := signer.Sign(nil, auth)
	if err != nil {
		f.Fatal(err)
	}
	approved := func(sig string) []byte {
		b, _ := json.Marshal(map[string]string{"result": "APPROVED", "signature": sig})
		return b
	}
	if r, err := checkGitSignResponse(approved(armored), key, commit); err != nil || r.Outcome != outcomeApproved {
		f.Fatalf("the genuine GitSign seed fails: %v", err)
	}
	if r, err := checkSSHAuthenticateResponse(approved(base64.StdEncoding.EncodeToString(ssh.Marshal(authSig))), key, auth); err != nil || r.Outcome != outcomeApproved {
		f.Fatalf("the genuine SshAuthenticate seed fails: %v", err)
	}
	for _, s := range [][]byte{
		[]byte(`{"result":"APPROVED","secrets":{"cloudflare":{"type":"environment","variables":{"CLOUDFLARE_API_TOKEN":{"value":"sv-leak-cf"}}},"github":{"description":"GitHub API access","type":"environment","variables":{"GH_HOST":{"value":"github.com"},"GH_TOKEN":{"value":"sv-leak-gh"}}},"plain":{"type":"environment","variables":{"PLAIN_TOKEN":{"value":"sv-leak-plain"}}}}}`),
		[]byte(`{"result":"DENIED","reason":"USER_DENIED","message":"The request was denied on the device."}`),
		[]byte(`{"error":"INVALID_REQUEST","message":"secret \"nope\" does not exist"}`),
		[]byte(`{"secrets":{"release-signing":{"description":"Release signing key","type":"ssh","public_key":"ssh-ed25519 AAAAC3 x"},"github":{"type":"environment","variables":["GH_TOKEN","GH_HOST"]}}}`),
		[]byte(`{"result":"ACCEPTED"}`),
		[]byte(`{"result":"REJECTED","message":"The upload cannot be accepted."}`),
		[]byte(`{"result":"RECEIVED"}`),
		[]byte(`{}`),
		approved(armored),
		approved(base64.StdEncoding.EncodeToString(ssh.Marshal(authSig))),
	} {
		f.Add(s)
	}
	requested := baseInvocationRequest()
	f.Fuzz(func(t *testing.T, pt []byte) {
		leak := func(what string, err error) {
			t.Helper()
			if err != nil && !errors.Is(err, errInvalidResponse) {
				t.Fatalf("%s: unclassified failure %v", what, err)
			}
			if err != nil && bytes.Contains(pt, []byte("sv-leak")) && strings.Contains(err.Error(), "sv-leak") {
				t.Fatalf("%s: the error shows a value: %v", what, err)
			}
		}
		inv, err := checkInvocationResponse(requested, pt)
		leak("Invocation", err)
		if err == nil && inv.Outcome == outcomeApproved {
			for _, s := range inv.Secrets {
				if _, ok := requested[s.Name]; !ok {
					t.Fatalf("approved an unrequested secret %q", s.Name)
				}
			}
			if len(inv.Secrets) != len(requested) {
				t.Fatalf("approved %d of %d requested secrets", len(inv.Secrets), len(requested))
			}
		}
		_, err = checkSecretListResponse(pt)
		leak("SecretList", err)
		for name, check := range map[string]func([]byte) (*resultResponse, error){
			"PairingFinish": checkPairingFinishResponse, "SecretUpload": checkSecretUploadResponse, "PairingRemove": checkPairingRemoveResponse,
		} {
			_, err := check(pt)
			leak(name, err)
		}
		r, err := checkGitSignResponse(pt, key, commit)
		leak("GitSign", err)
		if err == nil && r.Outcome == outcomeApproved && !bytes.Equal(ssh.Marshal(r.Signature), ssh.Marshal(gitSig)) {
			t.Fatal("GitSign approved a signature the key did not make")
		}
		r, err = checkSSHAuthenticateResponse(pt, key, auth)
		leak("SshAuthenticate", err)
		if err == nil && r.Outcome == outcomeApproved && !bytes.Equal(ssh.Marshal(r.Signature), ssh.Marshal(authSig)) {
			t.Fatal("SshAuthenticate approved a signature the key did not make")
		}
	})
}

// encodeUserAuth is the SSH wire form of a parsed message.
func encodeUserAuth(m *sshUserAuthMessage) []byte {
	b := sshWireString(nil, m.SessionID)
	b = append(b, sshMsgUserAuthRequest)
	b = sshWireString(b, []byte(m.User))
	b = sshWireString(b, []byte(sshUserAuthServiceName))
	b = sshWireString(b, []byte(m.Method))
	b = append(b, 1)
	b = sshWireString(b, []byte(m.Algorithm))
	b = sshWireString(b, m.PublicKey)
	if m.Method == sshUserAuthHostBound {
		b = sshWireString(b, m.HostKey)
	}
	return b
}

func FuzzSSHUserAuthMessage(f *testing.F) {
	key := fuzzSSHKey(f).PublicKey().Marshal()
	session := bytes.Repeat([]byte{0x5a}, 32)
	f.Add(userAuthMessage(session, sshUserAuthPublicKey, ssh.KeyAlgoED25519, key, nil))
	f.Add(userAuthMessage(session, sshUserAuthHostBound, ssh.KeyAlgoED25519, key, key))
	f.Add(userAuthMessage(session, sshUserAuthPublicKey, ssh.KeyAlgoRSASHA512, key, nil))
	f.Add(userAuthMessage(session, sshUserAuthPublicKey, ssh.KeyAlgoRSA, key, nil))
	f.Add(append(userAuthMessage(session, sshUserAuthPublicKey, ssh.KeyAlgoED25519, key, nil), 0))
	f.Fuzz(func(t *testing.T, msg []byte) {
		m, err := parseSSHUserAuthMessage(msg)
		if err != nil {
			return
		}
		// Only the exact canonical encoding of one of the two forms passes.
		if !bytes.Equal(encodeUserAuth(m), msg) {
			t.Fatalf("accepted a non-canonical message %x", msg)
		}
		switch m.Algorithm {
		case ssh.KeyAlgoED25519, ssh.KeyAlgoRSASHA256, ssh.KeyAlgoRSASHA512:
		default:
			t.Fatalf("accepted algorithm %q", m.Algorithm)
		}
	})
}

// agentFrame is one SSH agent protocol message with its length prefix.
func agentFrame(body ...[]byte) []byte {
	msg := bytes.Join(body, nil)
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(msg))), msg...)
}

func FuzzAgentRequests(f *testing.F) {
	signer := fuzzSSHKey(f)
	key := signer.PublicKey()
	blob := key.Marshal()
	auth := userAuthMessage(bytes.Repeat([]byte{0x5a}, 32), sshUserAuthPublicKey, ssh.KeyAlgoED25519, blob, nil)
	sign := func(data []byte, flags uint32) []byte {
		return agentFrame([]byte{13}, sshWireString(nil, blob), sshWireString(nil, data), binary.BigEndian.AppendUint32(nil, flags))
	}
	list := agentFrame([]byte{11})
	f.Add(list)
	f.Add(append(bytes.Clone(list), sign(auth, 0)...))
	f.Add(sign(auth, 2))
	f.Add(sign([]byte("not a user-auth request"), 0))
	f.Add(agentFrame([]byte{27}, sshWireString(nil, []byte("session-bind@openssh.com")), sshWireString(nil, blob)))
	f.Add(agentFrame([]byte{19}))
	f.Add(agentFrame([]byte{22}, sshWireString(nil, []byte("passphrase"))))
	f.Add(agentFrame([]byte{17}, sshWireString(nil, []byte(ssh.KeyAlgoED25519))))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 11})
	home := f.TempDir() // no pairing: a request that reaches the device step fails there
	f.Fuzz(func(t *testing.T, requests []byte) {
		a := &connAgent{ctx: context.Background(), key: key, cfg: &serviceSSH{Home: home, Secret: "deploy", GitSign: true}}
		var replies bytes.Buffer
		serveAgentStream(a, bytes.NewReader(requests), &replies)
		// Without a pairing no signature can come back, and every reply is
		// a well-formed agent message.
		b := replies.Bytes()
		for len(b) > 0 {
			if len(b) < 5 {
				t.Fatalf("truncated reply %x", b)
			}
			n := binary.BigEndian.Uint32(b)
			if n == 0 || int(n) > len(b)-4 {
				t.Fatalf("bad reply length %d", n)
			}
			if b[4] == 14 {
				t.Fatal("the agent returned a signature without the device")
			}
			b = b[4+n:]
		}
	})
}

// serveAgentStream serves requests from r, replies to w.
func serveAgentStream(a *connAgent, r io.Reader, w io.Writer) {
	defer a.closeUpstream()
	_ = agent.ServeAgent(a, struct {
		io.Reader
		io.Writer
	}{r, w})
}
