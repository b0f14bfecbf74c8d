// The pairing file, $AGENTKNOCK_HOME/pairing.json, compatible with the
// reference client: the same members (pending, device_id, client_id,
// client_token, client_psk, device_key, rotated_at, rotation_key), mode 0600
// checked on every read, changes made under an exclusive lock on the
// directory and written atomically (a crash leaves the old or the new file).
// Members this client does not know are kept as they were. relay_url is
// ours: the relay chosen with `pairing start --relay`.
package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

const pairingFileName = "pairing.json"

// pskRotationInterval is how old a PSK may get before a run rotates it.
const pskRotationInterval = 24 * time.Hour

// pairingState is one pairing as stored.
type pairingState struct {
	Pending     bool   `json:"pending,omitempty"`
	DeviceID    ULID   `json:"device_id"`
	ClientID    ULID   `json:"client_id"`
	ClientToken string `json:"client_token"`
	ClientPSK   []byte `json:"client_psk"`
	DeviceKey   []byte `json:"device_key"`
	RotatedAt   uint64 `json:"rotated_at"`
	RotationKey string `json:"rotation_key,omitempty"`
	RelayURL    string `json:"relay_url,omitempty"`

	// read is the file as read: the members this client does not know are
	// written back from it, decoded only then (a run only reads).
	read []byte
}

// knownPairingMembers are pairingState's own members.
var knownPairingMembers = []string{"pending", "device_id", "client_id", "client_token", "client_psk", "device_key", "rotated_at", "rotation_key", "relay_url"}

var errNoPairing = errors.New("no pairing")

// stateDir is a locked state home. Every read-modify-write of the pairing
// happens while it is held.
type stateDir struct {
	path string
	dir  *os.File
}

// lockStateDir creates the home (mode 0700) if needed and locks it.
func lockStateDir(home string) (*stateDir, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", home, err)
	}
	dir, err := os.Open(home)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", home, err)
	}
	if err := unix.Flock(int(dir.Fd()), unix.LOCK_EX); err != nil {
		dir.Close()
		return nil, fmt.Errorf("cannot lock %s: %w", home, err)
	}
	return &stateDir{path: home, dir: dir}, nil
}

func (s *stateDir) unlock() { s.dir.Close() }

func (s *stateDir) pairingPath() string { return filepath.Join(s.path, pairingFileName) }

// readPairingFile reads and validates a pairing; errNoPairing when absent.
// It needs no lock: the file is replaced atomically.
func readPairingFile(home string) (*pairingState, error) {
	path := filepath.Join(home, pairingFileName)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoPairing
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if mode := st.Mode().Perm(); mode != 0o600 {
		return nil, fmt.Errorf("pairing file %s has permissions %04o, but 0600 is required", path, mode)
	}
	var data bytes.Buffer
	if _, err := data.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	p, err := decodePairing(data.Bytes())
	if err != nil {
		return nil, fmt.Errorf("pairing file %s is not valid: %v", path, err)
	}
	return p, nil
}

func decodePairing(data []byte) (*pairingState, error) {
	var p pairingState
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	p.read = data
	token, err := base64.RawURLEncoding.DecodeString(p.ClientToken)
	if err != nil || len(token) != 32 || base64.RawURLEncoding.EncodeToString(token) != p.ClientToken {
		return nil, errors.New("client_token must be a canonical unpadded base64url 32-byte token")
	}
	if len(p.ClientPSK) != 32 {
		return nil, fmt.Errorf("client_psk must be 32 bytes, not %d", len(p.ClientPSK))
	}
	if len(p.DeviceKey) != 32 {
		return nil, fmt.Errorf("device_key must be 32 bytes, not %d", len(p.DeviceKey))
	}
	if p.RotationKey != "" {
		key, err := base64.StdEncoding.DecodeString(p.RotationKey)
		if err != nil || len(key) != 32 || base64.StdEncoding.EncodeToString(key) != p.RotationKey {
			return nil, errors.New("rotation_key must be canonical base64 of 32 bytes")
		}
	}
	if p.DeviceID.IsZero() || p.ClientID.IsZero() {
		return nil, errors.New("device_id and client_id are required")
	}
	return &p, nil
}

func encodePairing(p *pairingState) ([]byte, error) {
	// The unexported read field is not marshalled; what it holds beyond
	// the known members is merged below.
	known, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	all := map[string]json.RawMessage{}
	if p.read != nil {
		if err := json.Unmarshal(p.read, &all); err != nil {
			return nil, err
		}
		for _, k := range knownPairingMembers {
			delete(all, k)
		}
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(known, &members); err != nil {
		return nil, err
	}
	for k, v := range members {
		all[k] = v
	}
	out, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// writePairing replaces the pairing atomically: a private temporary file in
// the same directory, fsync, rename, fsync of the directory.
func (s *stateDir) writePairing(p *pairingState) error {
	data, err := encodePairing(p)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.dir, s.pairingPath(), data)
}

func writeFileAtomic(dir *os.File, path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(data)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err == nil {
		err = dir.Sync()
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// removePairing deletes the pairing file.
func (s *stateDir) removePairing() error {
	if err := os.Remove(s.pairingPath()); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errNoPairing
		}
		return fmt.Errorf("cannot remove %s: %w", s.pairingPath(), err)
	}
	return s.dir.Sync()
}
