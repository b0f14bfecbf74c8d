// Tests of the SSH-key source (secret_sshkey.go), against keys that the
// real ssh-keygen writes: every supported type, passphrases, legacy PEM.

package main

import (
	"bytes"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func sshKeygen(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	path := filepath.Join(dir, name)
	cmd := exec.Command("ssh-keygen", append([]string{"-q", "-f", path}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %q: %v\n%s", args, err, out)
	}
	return path
}

// checkConverted verifies an upload key: unencrypted OpenSSH PEM that
// checkUploadPrivateKey accepts, the same public key as the source's .pub
// file, and the source's comment.
func checkConverted(t *testing.T, text, pubPath, comment string) {
	t.Helper()
	if err := checkUploadPrivateKey(text); err != nil {
		t.Fatalf("checkUploadPrivateKey: %v", err)
	}
	if block, rest := pem.Decode([]byte(text)); block == nil || block.Type != "OPENSSH PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("not one OpenSSH PEM block:\n%s", text)
	}
	signer, err := ssh.ParsePrivateKey([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	pubText, err := os.ReadFile(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _, _, err := ssh.ParseAuthorizedKey(pubText)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(signer.PublicKey().Marshal(), want.Marshal()) {
		t.Error("the converted key has another public key")
	}
	block, _ := pem.Decode([]byte(text))
	info, err := inspectOpenSSHKey(block.Bytes)
	if err != nil || info.Encrypted || info.Comment != comment {
		t.Errorf("converted key: %+v, %v; want unencrypted with comment %q", info, err, comment)
	}
}

func convertFile(t *testing.T, path string, passphrase func() ([]byte, error)) (string, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return convertSSHPrivateKey(sshKeyInput{Data: data, Label: sourceLabel(path), Path: path, Passphrase: passphrase})
}

func fixedPassphrase(p string) func() ([]byte, error) {
	return func() ([]byte, error) { return []byte(p), nil }
}

func TestSSHKeyConversion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("unencrypted ed25519", func(t *testing.T) {
		path := sshKeygen(t, dir, "ed", "-t", "ed25519", "-N", "", "-C", "dev@laptop")
		text, err := convertFile(t, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkConverted(t, text, path+".pub", "dev@laptop")
	})
	t.Run("encrypted ed25519 with a passphrase", func(t *testing.T) {
		path := sshKeygen(t, dir, "ed-enc", "-t", "ed25519", "-N", "correct horse", "-C", "enc@laptop")
		if _, err := convertFile(t, path, nil); err == nil || !strings.Contains(err.Error(), "--passphrase-prompt") {
			t.Errorf("without a passphrase: %v", err)
		}
		if _, err := convertFile(t, path, fixedPassphrase("wrong")); err == nil || !strings.Contains(err.Error(), "incorrect") {
			t.Errorf("wrong passphrase: %v", err)
		}
		text, err := convertFile(t, path, fixedPassphrase("correct horse"))
		if err != nil {
			t.Fatal(err)
		}
		// The comment of an encrypted key comes from its .pub file.
		checkConverted(t, text, path+".pub", "enc@laptop")
		if strings.Contains(text, "correct horse") {
			t.Error("the passphrase is in the output")
		}
	})
	t.Run("RSA", func(t *testing.T) {
		path := sshKeygen(t, dir, "rsa", "-t", "rsa", "-b", "2048", "-N", "", "-C", "rsa key")
		text, err := convertFile(t, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkConverted(t, text, path+".pub", "rsa key")
	})
	t.Run("no passphrase asked for an unencrypted key", func(t *testing.T) {
		path := sshKeygen(t, dir, "plain", "-t", "ed25519", "-N", "", "-C", "")
		asked := false
		text, err := convertFile(t, path, func() ([]byte, error) { asked = true; return nil, errors.New("asked") })
		if err != nil || asked {
			t.Fatalf("err %v, asked %v", err, asked)
		}
		checkConverted(t, text, path+".pub", "")
	})
	t.Run("legacy PEM refused with the hint", func(t *testing.T) {
		path := sshKeygen(t, dir, "legacy", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "")
		data, _ := os.ReadFile(path)
		if !bytes.HasPrefix(data, []byte("-----BEGIN RSA PRIVATE KEY-----")) {
			t.Fatalf("ssh-keygen -m PEM wrote:\n%.40s", data)
		}
		_, err := convertFile(t, path, nil)
		if err == nil || !strings.Contains(err.Error(), "uses legacy PEM format") || !strings.Contains(err.Error(), "ssh-keygen -p -f "+path) {
			t.Fatalf("error %v", err)
		}
		// The hinted command does turn it into a key that converts.
		if out, err := exec.Command("ssh-keygen", "-q", "-p", "-f", path, "-N", "", "-P", "").CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen -p: %v\n%s", err, out)
		}
		text, err := convertFile(t, path, nil)
		if err != nil {
			t.Fatalf("after ssh-keygen -p: %v", err)
		}
		checkConverted(t, text, path+".pub", "")
	})
	t.Run("PKCS#8 refused", func(t *testing.T) {
		path := sshKeygen(t, dir, "pkcs8", "-t", "rsa", "-b", "2048", "-m", "PKCS8", "-N", "")
		if data, _ := os.ReadFile(path); !bytes.HasPrefix(data, []byte("-----BEGIN PRIVATE KEY-----")) {
			t.Fatalf("ssh-keygen -m PKCS8 wrote:\n%.40s", data)
		}
		if _, err := convertFile(t, path, nil); err == nil || !strings.Contains(err.Error(), "ssh-keygen -p -f") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("ECDSA refused", func(t *testing.T) {
		path := sshKeygen(t, dir, "ecdsa", "-t", "ecdsa", "-N", "")
		if _, err := convertFile(t, path, nil); err == nil || !strings.Contains(err.Error(), "only Ed25519 and RSA") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("public key given", func(t *testing.T) {
		path := sshKeygen(t, dir, "pub", "-t", "ed25519", "-N", "")
		if _, err := convertFile(t, path+".pub", nil); err == nil || !strings.Contains(err.Error(), "public key") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("from standard input", func(t *testing.T) {
		path := sshKeygen(t, dir, "stdin", "-t", "ed25519", "-N", "", "-C", "piped")
		data, _ := os.ReadFile(path)
		o := mustUploadArgs(t, "k", "--from-ssh-key", "-")
		s, err := readUploadSecret(o, testInput(nil, string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Type != secretTypeSSH || len(s.Variables) != 0 {
			t.Fatalf("secret %+v", s.Type)
		}
		checkConverted(t, string(s.PrivateKey), path+".pub", "piped")
		if _, err := newSecretUploadRequest(o.Mode, s); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("passphrase from the environment", func(t *testing.T) {
		path := sshKeygen(t, dir, "envpw", "-t", "ed25519", "-N", "pw from env", "-C", "c")
		o := mustUploadArgs(t, "k", "--from-ssh-key", path, "--passphrase-env", "KEY_PW")
		if _, err := readUploadSecret(o, testInput(nil, "")); err == nil || !strings.Contains(err.Error(), "KEY_PW (--passphrase-env) is not set") {
			t.Errorf("unset variable: %v", err)
		}
		s, err := readUploadSecret(o, testInput(map[string]string{"KEY_PW": "pw from env"}, ""))
		if err != nil {
			t.Fatal(err)
		}
		checkConverted(t, string(s.PrivateKey), path+".pub", "c")
	})
}

// ---- secret list ----
