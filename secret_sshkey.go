// The SSH-key source of `secret upload --from-ssh-key` (client-device
// protocol, "Secret upload": private_key is a passphrase-free OpenSSH key
// inside the encrypted request): read the key, decrypt it when it has a
// passphrase, and re-encode it without one, keeping its comment. Only
// Ed25519 and RSA keys are accepted, the two kinds a v1 device signs with.

package main

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"

	"golang.org/x/crypto/ssh"
)

const opensshKeyMagic = "openssh-key-v1\x00"

// sshKeyInput is a private key as read, with what the conversion needs to
// word its errors and to find a passphrase.
type sshKeyInput struct {
	Data  []byte
	Label string // the source in messages: "\"/path\"" or "standard input"
	Path  string // the file, for the ssh-keygen hint and FILE.pub; "" for standard input
	// Passphrase is nil without --passphrase-prompt or --passphrase-env; it
	// is asked only for an encrypted key.
	Passphrase func() ([]byte, error)
}

func readSSHKeySource(o *secretUploadOptions, in uploadInput) (string, error) {
	data, err := readSourceData(o.SSHKey, in)
	if err != nil {
		return "", err
	}
	k := sshKeyInput{Data: data, Label: sourceLabel(o.SSHKey)}
	if o.SSHKey != "-" {
		k.Path = o.SSHKey
	}
	switch {
	case o.PassphraseEnv != "":
		k.Passphrase = func() ([]byte, error) {
			v, ok := in.lookupEnv(o.PassphraseEnv)
			if !ok {
				return nil, fmt.Errorf("environment variable %s (--passphrase-env) is not set", o.PassphraseEnv)
			}
			return []byte(v), nil
		}
	case o.PassphrasePrompt:
		k.Passphrase = func() ([]byte, error) {
			v, err := in.prompt("Passphrase for " + k.Label + ": ")
			if err != nil {
				return nil, promptError("the passphrase", err)
			}
			return []byte(v), nil
		}
	}
	return convertSSHPrivateKey(k)
}

// convertSSHPrivateKey returns the key as unencrypted OpenSSH PEM text.
// The x/crypto parsers' messages are not passed on: they are generic at
// best, and nothing about the key material belongs in an error.
func convertSSHPrivateKey(k sshKeyInput) (string, error) {
	block, _ := pem.Decode(k.Data)
	if block == nil {
		if _, _, _, _, err := ssh.ParseAuthorizedKey(k.Data); err == nil {
			return "", fmt.Errorf("%s holds a public key; give the private key (the file without .pub)", k.Label)
		}
		return "", fmt.Errorf("%s does not hold a private key in OpenSSH format (-----BEGIN OPENSSH PRIVATE KEY-----)", k.Label)
	}
	switch block.Type {
	case "OPENSSH PRIVATE KEY":
	case "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY":
		hint := k.Path
		if hint == "" {
			hint = "FILE"
		}
		return "", fmt.Errorf("%s uses legacy PEM format (%s), which Agentknock doesn't support. Suggested action: Convert the key in place with ssh-keygen -p -f <PATH> (here: ssh-keygen -p -f %s), then try again", k.Label, block.Type, hint)
	default:
		return "", fmt.Errorf("%s holds a %q PEM block, not an OpenSSH private key", k.Label, block.Type)
	}
	info, err := inspectOpenSSHKey(block.Bytes)
	if err != nil {
		return "", fmt.Errorf("%s is not a valid OpenSSH private key", k.Label)
	}
	// The device rejects other kinds and sizes (the Android app's rules
	// for a SecretUpload); a usage error says so before anything is sent.
	if info.KeyType != ssh.KeyAlgoED25519 && info.KeyType != ssh.KeyAlgoRSA {
		return "", usagef("%s holds a %s key; only Ed25519 and RSA keys can be uploaded", k.Label, printable(info.KeyType))
	}
	if info.KeyType == ssh.KeyAlgoRSA {
		bits := rsaPublicKeyBits(info.PublicKey)
		if bits < minRSABits || bits > maxRSABits {
			return "", usagef("%s holds a %d-bit RSA key; the device accepts RSA keys of %d to %d bits", k.Label, bits, minRSABits, maxRSABits)
		}
	}

	var key any
	if info.Encrypted {
		if k.Passphrase == nil {
			return "", fmt.Errorf("%s is encrypted. Suggested action: Use --passphrase-prompt or --passphrase-env <NAME> so that Agentknock can decrypt it for the upload", k.Label)
		}
		passphrase, err := k.Passphrase()
		if err != nil {
			return "", err
		}
		key, err = ssh.ParseRawPrivateKeyWithPassphrase(pem.EncodeToMemory(block), passphrase)
		clear(passphrase)
		if errors.Is(err, x509.IncorrectPasswordError) {
			return "", fmt.Errorf("the passphrase for %s is incorrect", k.Label)
		}
	} else {
		key, err = ssh.ParseRawPrivateKey(pem.EncodeToMemory(block))
	}
	if err != nil {
		return "", fmt.Errorf("%s is not a valid OpenSSH private key", k.Label)
	}
	var public ssh.PublicKey
	switch priv := key.(type) {
	case *ed25519.PrivateKey:
		public, err = ssh.NewPublicKey(priv.Public())
	case *rsa.PrivateKey:
		public, err = ssh.NewPublicKey(priv.Public())
	default:
		return "", fmt.Errorf("%s holds an unsupported key; only Ed25519 and RSA keys can be uploaded", k.Label)
	}
	if err != nil || !bytes.Equal(public.Marshal(), info.PublicKey) {
		return "", fmt.Errorf("%s is not a valid OpenSSH private key (its public and private parts differ)", k.Label)
	}

	comment := info.Comment
	if info.Encrypted && k.Path != "" {
		// The comment of an encrypted key is encrypted with it and the
		// parser does not return it; the usual companion file has it.
		comment = companionComment(k.Path+".pub", public)
	}
	out, err := ssh.MarshalPrivateKey(key, comment)
	if err != nil {
		return "", fmt.Errorf("cannot re-encode %s", k.Label)
	}
	text := string(pem.EncodeToMemory(out))
	if err := checkUploadPrivateKey(text); err != nil {
		return "", fmt.Errorf("cannot re-encode %s: %v", k.Label, err)
	}
	return text, nil
}

// openSSHKeyInfo is what the clear part of an OpenSSH key file tells.
type openSSHKeyInfo struct {
	Encrypted bool
	KeyType   string
	PublicKey []byte // wire form
	Comment   string // unencrypted keys only
}

// inspectOpenSSHKey reads the envelope of PROTOCOL.key: the cipher, the
// public key and, for an unencrypted key, the comment at the end of the
// private section.
func inspectOpenSSHKey(der []byte) (openSSHKeyInfo, error) {
	rest, ok := bytes.CutPrefix(der, []byte(opensshKeyMagic))
	if !ok {
		return openSSHKeyInfo{}, errors.New("no openssh-key-v1 header")
	}
	var envelope struct {
		CipherName   string
		KdfName      string
		KdfOpts      string
		NumKeys      uint32
		PubKey       []byte
		PrivKeyBlock []byte
		Rest         []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(rest, &envelope); err != nil {
		return openSSHKeyInfo{}, err
	}
	if envelope.NumKeys != 1 {
		return openSSHKeyInfo{}, errors.New("not exactly one key")
	}
	pub, err := ssh.ParsePublicKey(envelope.PubKey)
	if err != nil {
		return openSSHKeyInfo{}, err
	}
	info := openSSHKeyInfo{Encrypted: envelope.CipherName != "none", KeyType: pub.Type(), PublicKey: envelope.PubKey}
	if info.Encrypted {
		return info, nil
	}
	var private struct {
		Check1  uint32
		Check2  uint32
		KeyType string
		Rest    []byte `ssh:"rest"`
	}
	if err := ssh.Unmarshal(envelope.PrivKeyBlock, &private); err != nil {
		return openSSHKeyInfo{}, err
	}
	switch private.KeyType {
	case ssh.KeyAlgoED25519:
		var k struct {
			Pub, Priv []byte
			Comment   string
			Pad       []byte `ssh:"rest"`
		}
		if ssh.Unmarshal(private.Rest, &k) == nil {
			info.Comment = k.Comment
		}
	case ssh.KeyAlgoRSA:
		var k struct {
			N, E, D, Iqmp, P, Q *big.Int
			Comment             string
			Pad                 []byte `ssh:"rest"`
		}
		if ssh.Unmarshal(private.Rest, &k) == nil {
			info.Comment = k.Comment
		}
	}
	return info, nil
}

// companionComment is the comment of path when it holds the same public key.
func companionComment(path string, public ssh.PublicKey) string {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > 64<<10 {
		return ""
	}
	key, comment, _, _, err := ssh.ParseAuthorizedKey(data)
	if err != nil || !bytes.Equal(key.Marshal(), public.Marshal()) {
		return ""
	}
	return comment
}

// The RSA key sizes a device accepts in a SecretUpload.
const (
	minRSABits = 2048
	maxRSABits = 16384
)

// rsaPublicKeyBits is the modulus size of an SSH wire-format RSA public key
// (0 when it cannot be read).
func rsaPublicKeyBits(wire []byte) int {
	pub, err := ssh.ParsePublicKey(wire)
	if err != nil {
		return 0
	}
	cpk, ok := pub.(ssh.CryptoPublicKey)
	if !ok {
		return 0
	}
	if rk, ok := cpk.CryptoPublicKey().(*rsa.PublicKey); ok {
		return rk.N.BitLen()
	}
	return 0
}
