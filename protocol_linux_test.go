// askDevice's promise (exchange.go): once the device answered, every path
// ends the exchange with exactly one completion, also when the client's own
// work on a good answer fails. One case per method, each with the method's
// real response check and a valid answer from a device on a real relay
// connection; the local work is made to fail and the device must receive
// ABORTED/CLIENT_ERROR.

package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/crypto/ssh"
)

// askWithLocalFailure runs m against a device that answers with answer and
// returns the completion the device received.
func askWithLocalFailure[R checkedResponse](t *testing.T, pending bool, answer string, build func(home string, p *pairingState) pairedMethod[R]) secretTestCompletion {
	t.Helper()
	d := newSecretTestDevice(t, func([]byte) string { return answer })
	p, err := readPairingFile(d.home)
	if err != nil {
		t.Fatal(err)
	}
	if pending {
		s, err := lockStateDir(d.home)
		if err != nil {
			t.Fatal(err)
		}
		p.Pending = true
		err = s.writePairing(p)
		s.unlock()
		if err != nil {
			t.Fatal(err)
		}
	}
	m := build(d.home, p)
	injected := errors.New("injected local failure")
	settled := false
	real := m.settle
	m.settle = func(r R) (any, error) {
		// The real settle must accept the answer: the failure injected
		// after it is the only thing wrong.
		if c, err := real(r); c == nil || err != nil {
			t.Fatalf("the answer itself was not usable: %v", err)
		}
		settled = true
		return nil, injected
	}
	_, _, err = askDevice(d.home, p, m, &signalWatch{}, newOutput(true, false))
	var answered *answeredError
	if !errors.As(err, &answered) || !answered.local || !errors.Is(err, injected) || !settled {
		t.Fatalf("askDevice returned %v (settled %v); want the injected failure after the answer", err, settled)
	}
	var req map[string]any
	var done secretTestCompletion
	d.received(&req, &done)
	return done
}

func TestEveryAnsweredExchangeEndsWithOneCompletion(t *testing.T) {
	key := newSSHTestKey(t, "ed25519")
	session := make([]byte, 32)
	rand.Read(session)
	authMessage := userAuthMessage(session, "publickey", ssh.KeyAlgoED25519, key.pub.Marshal(), nil)
	authSig, err := key.signer.SignWithAlgorithm(rand.Reader, authMessage, ssh.KeyAlgoED25519)
	if err != nil {
		t.Fatal(err)
	}
	commit := []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@example> 0 +0000\n\nsigned\n")
	inv := invocationRequest{Secrets: map[string]secretDelivery{"demo": {}}}

	// Each case uses the method exactly as its command builds it; home is
	// the test device's state home, known only inside the helper, so the
	// pairing methods get it through build.
	cases := map[string]func(t *testing.T) secretTestCompletion{
		"Invocation": func(t *testing.T) secretTestCompletion {
			return askWithLocalFailure(t, false, `{"result":"APPROVED","secrets":{"demo":{"type":"environment","variables":{"DEMO":{"value":"sv-demo"}}}}}`,
				func(string, *pairingState) pairedMethod[*invocationResponse] { return invocationMethod(inv, nil) })
		},
		"PairingFinish": func(t *testing.T) secretTestCompletion {
			return askWithLocalFailure(t, true, `{"result":"ACCEPTED"}`, pairingFinishMethod)
		},
		"PairingRemove": func(t *testing.T) secretTestCompletion {
			return askWithLocalFailure(t, false, `{}`, pairingRemoveMethod)
		},
		"SecretList": func(t *testing.T) secretTestCompletion {
			var listing []byte
			return askWithLocalFailure(t, false, `{"secrets":{}}`,
				func(string, *pairingState) pairedMethod[*secretListResponse] { return secretListMethod(&listing) })
		},
		"SecretUpload": func(t *testing.T) secretTestCompletion {
			return askWithLocalFailure(t, false, `{"result":"RECEIVED"}`,
				func(string, *pairingState) pairedMethod[*resultResponse] {
					return secretUploadMethod(secretUploadRequest{})
				})
		},
		"SshAuthenticate": func(t *testing.T) secretTestCompletion {
			answer := fmt.Sprintf(`{"result":"APPROVED","signature":%q}`, base64.StdEncoding.EncodeToString(ssh.Marshal(authSig)))
			return askWithLocalFailure(t, false, answer, func(string, *pairingState) pairedMethod[*signatureResponse] {
				return signatureMethod(newMethodRequest(methodSSHAuthenticate), func(pt []byte) (*signatureResponse, error) {
					return checkSSHAuthenticateResponse(pt, key.pub, authMessage)
				})
			})
		},
		"GitSign": func(t *testing.T) secretTestCompletion {
			answer := fmt.Sprintf(`{"result":"APPROVED","signature":%q}`, sshkeygenSign(t, key, "git", commit))
			return askWithLocalFailure(t, false, answer, func(string, *pairingState) pairedMethod[*signatureResponse] {
				return signatureMethod(newMethodRequest(methodGitSign), func(pt []byte) (*signatureResponse, error) {
					return checkGitSignResponse(pt, key.pub, commit)
				})
			})
		},
	}
	for name, run := range cases {
		t.Run(name, func(t *testing.T) {
			done := run(t)
			if done.Result != "ABORTED" || done.Reason != abortClientError {
				t.Fatalf("the device received %+v; want ABORTED/%s", done, abortClientError)
			}
		})
	}
}
