// The secret store (client-device protocol "Secret representation"):
// environment secrets with several variables and SSH keys (Ed25519, RSA)
// kept as unencrypted OpenSSH private keys in secrets.json, plus the
// state-directory operations the device program uses without a running
// device. Values never leave this package except inside sealed responses.
package device

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"agentknock.dev/agentknock/devkit/relay"

	"golang.org/x/crypto/ssh"
)

const (
	typeEnvironment = "environment"
	typeSSH         = "ssh"
)

// validSecretName keeps names usable on a command line and in listings.
func validSecretName(name string) error {
	if name == "" || len(name) > 64 {
		return errors.New("secret name must be 1 to 64 characters")
	}
	if name[0] == '-' || name[0] == '.' {
		return fmt.Errorf("secret name %q must not start with '-' or '.'", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return fmt.Errorf("secret name %q may contain only letters, digits, '-', '_' and '.'", name)
		}
	}
	return nil
}

// validVarName accepts any name an environment can carry and a terminal can
// show: nonempty, no '=', no NUL or other control characters.
func validVarName(name string) error {
	if name == "" || len(name) > 256 {
		return errors.New("variable name must be 1 to 256 bytes")
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("variable name %q is not UTF-8", name)
	}
	for _, c := range name {
		if c == '=' || c < 0x20 || c == 0x7f {
			return fmt.Errorf("variable name %q must not contain '=' or control characters", name)
		}
	}
	return nil
}

func validVarValue(name, value string) error {
	if !utf8.ValidString(value) {
		return fmt.Errorf("value of %s is not UTF-8", name)
	}
	if strings.IndexByte(value, 0) >= 0 {
		return fmt.Errorf("value of %s contains a NUL byte", name)
	}
	return nil
}

func validVars(vars map[string]string) error {
	if len(vars) == 0 {
		return errors.New("an environment secret needs at least one variable")
	}
	for k, v := range vars {
		if err := validVarName(k); err != nil {
			return err
		}
		if err := validVarValue(k, v); err != nil {
			return err
		}
	}
	return nil
}

// sshKey is a parsed SSH secret.
type sshKey struct {
	signer    ssh.Signer
	publicKey string // authorized_keys form without comment or newline
	pem       string // normalized OpenSSH private key
}

// parseOpenSSHKey accepts only an unencrypted OpenSSH-format Ed25519 or RSA
// (>= 2048 bit) private key.
func parseOpenSSHKey(data []byte) (*sshKey, error) {
	block, _ := pem.Decode(data)
	if block == nil || block.Type != "OPENSSH PRIVATE KEY" {
		return nil, errors.New("not an OpenSSH private key (-----BEGIN OPENSSH PRIVATE KEY-----)")
	}
	raw, err := ssh.ParseRawPrivateKey(pem.EncodeToMemory(block))
	if err != nil {
		var pm *ssh.PassphraseMissingError
		if errors.As(err, &pm) {
			return nil, errors.New("the private key is encrypted with a passphrase; remove it first (ssh-keygen -p -N '' -f FILE on a copy)")
		}
		return nil, fmt.Errorf("cannot parse the private key: %v", err)
	}
	var key any
	switch k := raw.(type) {
	case *ed25519.PrivateKey:
		key = *k
	case ed25519.PrivateKey:
		key = k
	case *rsa.PrivateKey:
		if k.N.BitLen() < 2048 {
			return nil, fmt.Errorf("RSA key has %d bits; at least 2048 are required", k.N.BitLen())
		}
		key = k
	default:
		return nil, fmt.Errorf("unsupported key type %T: use Ed25519 or RSA", raw)
	}
	return newSSHKey(key)
}

func newSSHKey(key any) (*sshKey, error) {
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		return nil, err
	}
	blk, err := ssh.MarshalPrivateKey(key, "")
	if err != nil {
		return nil, err
	}
	return &sshKey{
		signer:    signer,
		publicKey: strings.TrimSpace(string(ssh.MarshalAuthorizedKey(signer.PublicKey()))),
		pem:       string(pem.EncodeToMemory(blk)),
	}, nil
}

func (s *storedSecret) sshKey() (*sshKey, error) {
	if s.Type != typeSSH {
		return nil, errors.New("not an SSH secret")
	}
	return parseOpenSSHKey([]byte(s.PrivateKey))
}

func (s *storedSecret) info(name string) SecretInfo {
	si := SecretInfo{Name: name, Type: s.Type, Description: s.Description}
	if s.Type == typeEnvironment {
		si.Variables = sortedKeys(s.Variables)
	} else {
		si.PublicKey = s.PublicKey
	}
	return si
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func putSecret(stateDir, name string, s *storedSecret) error {
	return transact(stateDir, func(t *txn) error {
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		ss.Secrets[name] = s
		t.ssDirty = true
		return nil
	})
}

// checkDeliverable refuses a secret whose approval could never reach a
// client: the approved Invocation response for it alone must fit in one
// relay frame (relay.MaxFrameSize, 256 KiB). Values are JSON-escaped,
// sealed and Base64-encoded on the way, so plain text of about 190 KiB is
// the most that fits.
func checkDeliverable(name string, s *storedSecret) error {
	out := secretOut{Description: s.Description, Type: s.Type, PublicKey: s.PublicKey}
	if s.Type == typeEnvironment {
		out.Variables = map[string]map[string]string{}
		for k, v := range s.Variables {
			out.Variables[k] = map[string]string{"value": v}
		}
	}
	pt, err := json.Marshal(map[string]any{"result": "APPROVED", "secrets": map[string]secretOut{name: out}})
	if err != nil {
		return err
	}
	env, err := json.Marshal(pairedResponseEnv{Nonce: make([]byte, 32), Ciphertext: make([]byte, len(pt)+16)})
	if err != nil {
		return err
	}
	const id = "01K2ENXDTW1P3XAR4J7V7C9D0H" // every id has 26 characters
	if n := relay.ResponseFrameSize(id, id, env); n > relay.MaxFrameSize {
		return fmt.Errorf("secret %q is too large to deliver: an approved request for it takes a %d-byte relay frame, but a frame holds at most %d KiB (about %d KiB of values)", name, n, relay.MaxFrameSize>>10, (relay.MaxFrameSize-512)*3/4>>10)
	}
	return nil
}

// SetEnvSecret creates or replaces an environment secret.
func SetEnvSecret(stateDir, name, description string, vars map[string]string) error {
	if err := validSecretName(name); err != nil {
		return err
	}
	if err := validVars(vars); err != nil {
		return err
	}
	if err := checkDeliverable(name, &storedSecret{Type: typeEnvironment, Description: description, Variables: vars}); err != nil {
		return err
	}
	v := make(map[string]string, len(vars))
	for k, val := range vars {
		v[k] = val
	}
	return putSecret(stateDir, name, &storedSecret{Type: typeEnvironment, Description: description, Variables: v, UpdatedAt: nowUTC()})
}

// ImportSSHSecret stores an unencrypted OpenSSH private key and returns its
// public key.
func ImportSSHSecret(stateDir, name, description string, privateKeyFile []byte) (publicKey string, err error) {
	if err := validSecretName(name); err != nil {
		return "", err
	}
	k, err := parseOpenSSHKey(privateKeyFile)
	if err != nil {
		return "", err
	}
	err = putSecret(stateDir, name, &storedSecret{Type: typeSSH, Description: description, PrivateKey: k.pem, PublicKey: k.publicKey, UpdatedAt: nowUTC()})
	return k.publicKey, err
}

// GenerateSSHSecret makes a new "ed25519" or "rsa" (3072-bit) key.
func GenerateSSHSecret(stateDir, name, description, keyType string) (publicKey string, err error) {
	if err := validSecretName(name); err != nil {
		return "", err
	}
	var key any
	switch keyType {
	case "ed25519":
		_, priv, err := ed25519.GenerateKey(rand.Reader)
		if err != nil {
			return "", err
		}
		key = priv
	case "rsa":
		priv, err := rsa.GenerateKey(rand.Reader, 3072)
		if err != nil {
			return "", err
		}
		key = priv
	default:
		return "", fmt.Errorf("unknown key type %q: use ed25519 or rsa", keyType)
	}
	k, err := newSSHKey(key)
	if err != nil {
		return "", err
	}
	err = putSecret(stateDir, name, &storedSecret{Type: typeSSH, Description: description, PrivateKey: k.pem, PublicKey: k.publicKey, UpdatedAt: nowUTC()})
	return k.publicKey, err
}

// ListSecrets returns metadata only, sorted by name.
func ListSecrets(stateDir string) ([]SecretInfo, error) {
	var out []SecretInfo
	err := transact(stateDir, func(t *txn) error {
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		for _, name := range sortedKeys(ss.Secrets) {
			out = append(out, ss.Secrets[name].info(name))
		}
		return nil
	})
	return out, err
}

// RemoveSecret deletes a secret; approved invocations that selected it can
// no longer use it because every use re-reads the store.
func RemoveSecret(stateDir, name string) error {
	return transact(stateDir, func(t *txn) error {
		ss, err := t.secrets()
		if err != nil {
			return err
		}
		if _, ok := ss.Secrets[name]; !ok {
			return fmt.Errorf("no secret named %q", name)
		}
		delete(ss.Secrets, name)
		t.ssDirty = true
		return nil
	})
}
