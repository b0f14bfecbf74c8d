// The state home ($AGENTKNOCK_HOME, at the end of this file) and its
// pairing file, $AGENTKNOCK_HOME/pairing.json, compatible with the
// reference client: the same members (pending, device_id, client_id,
// client_token, client_psk, device_key, rotated_at, rotation_key), mode 0600
// checked on every read, changes made under an exclusive lock on the
// directory and written atomically (a crash leaves the old or the new file).
// Members this client does not know are kept as they were. relay_url is
// ours: the relay chosen with `pairing start --relay`.
//
// Nothing here can block or grow without bound: files are opened with
// O_NONBLOCK and must be regular, the file and the members kept unread have
// size limits, a lock wait is reported after lockWaitNotice and given up
// after lockWaitLimit. A new file is written and synced while it has no
// name (tmpfile_linux.go), so a crash then leaves no copy of the PSK; the
// link a crash can leave between linkat and rename, or a temporary file
// where no unnamed file can be linked, is removed at the next write. The home and the file must belong to the user
// and not be writable by others, the checks OpenSSH makes of ~/.ssh
// (https://man.openbsd.org/sshd_config#StrictModes).

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const pairingFileName = "pairing.json"

const (
	// maxPairingFile bounds what a read of pairing.json takes in; the
	// file this client writes is well under 2 KiB.
	maxPairingFile = 64 << 10
	// maxUnknownMembers bounds the members this client keeps without
	// knowing them (all together, as JSON text).
	maxUnknownMembers = 16 << 10
	// lockWaitNotice is when a wait for the state lock says what it waits
	// for; lockWaitLimit is when it gives up.
	lockWaitNotice = time.Second
	lockWaitLimit  = 30 * time.Second
)

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
	// KeyRefusedAt is when the device last reported that it could not
	// authenticate this client's requests (AUTHENTICATION_FAILED), in
	// Unix seconds; ours, cleared by the next authenticated response.
	KeyRefusedAt uint64 `json:"key_refused_at,omitempty"`
	// Outstanding is the request a crash may have left unanswered
	// (protocol.go); ours, like relay_url.
	Outstanding *outstandingRequest `json:"outstanding_request,omitempty"`

	// read is the file as read: the members this client does not know are
	// written back from it, decoded only then (a run only reads).
	read []byte
}

// knownPairingMembers are pairingState's own members.
var knownPairingMembers = []string{"pending", "device_id", "client_id", "client_token", "client_psk", "device_key", "rotated_at", "rotation_key", "relay_url", "key_refused_at", "outstanding_request"}

var errNoPairing = errors.New("no pairing")

// stateDir is a locked state home. Every read-modify-write of the pairing
// happens while it is held.
type stateDir struct {
	path string
	dir  *os.File
}

// lockStateDir creates the home (mode 0700) if needed, checks it and locks
// it, waiting at most lockWaitLimit. A wait is announced in a plain line,
// as the pairing and secret commands write theirs.
func lockStateDir(home string) (*stateDir, error) {
	return lockStateDirWithin(home, lockWaitNotice, lockWaitLimit, func(line string) { fmt.Fprintln(os.Stderr, line) })
}

// lockStateDirFor is lockStateDir announcing a wait through out: with the
// "AGENTKNOCK: " prefix in a run, not at all with --quiet.
func lockStateDirFor(home string, out *output) (*stateDir, error) {
	return lockStateDirWithin(home, lockWaitNotice, lockWaitLimit, out.announce)
}

// announce prints a status line (not with --quiet): prefixed in a run,
// plain in the pairing and secret commands.
func (o *output) announce(line string) {
	if !o.quiet {
		o.print("%s", line)
	}
}

func lockStateDirWithin(home string, notice, limit time.Duration, announce func(line string)) (*stateDir, error) {
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create %s: %w", home, err)
	}
	fd, err := unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open %s: %w", home, err)
	}
	dir := os.NewFile(uintptr(fd), home)
	if err := checkHomeDir(dir, home); err != nil {
		dir.Close()
		return nil, err
	}
	start := time.Now()
	noticed := false
	for {
		err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return &stateDir{path: home, dir: dir}, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			dir.Close()
			return nil, fmt.Errorf("cannot lock %s: %w", home, err)
		}
		waited := time.Since(start)
		if waited >= limit {
			dir.Close()
			return nil, classify(failStateLocked, fmt.Errorf("gave up after %s waiting for the lock on %s: another agentknock command is changing the pairing (if none is running, a stuck process holds it: see `fuser %s`)", limit, home, home))
		}
		if waited >= notice && !noticed {
			noticed = true
			announce(fmt.Sprintf("Waiting for the lock on %s: another agentknock command is changing the pairing (giving up after %s).", home, limit))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// checkHomeDir refuses a home another user could change: it must be a
// directory of this user, not writable by group or others.
func checkHomeDir(dir *os.File, home string) error {
	st, err := dir.Stat()
	if err != nil {
		return fmt.Errorf("cannot read %s: %w", home, err)
	}
	return checkHomeInfo(st, home)
}

func checkHomeInfo(st os.FileInfo, home string) error {
	if !st.IsDir() {
		return classify(failHomeUnsafe, fmt.Errorf("%s is not a directory", home))
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return classify(failHomeUnsafe, fmt.Errorf("bad ownership of %s: it belongs to uid %d, not to this user (uid %d)", home, sys.Uid, os.Geteuid()))
	}
	if st.Mode().Perm()&0o022 != 0 {
		return classifyWithFix(failHomeUnsafe, "chmod go-w "+shellWord(home),
			fmt.Errorf("bad permissions of %s: %s lets others replace the pairing", home, octalMode(st)))
	}
	return nil
}

// octalMode is a file's mode as chmod(1) and ls(1) show it, with the
// set-user-ID, set-group-ID and sticky bits: 1777, not 0777, for /tmp.
func octalMode(st os.FileInfo) string {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return fmt.Sprintf("%04o", uint32(sys.Mode)&0o7777)
	}
	return fmt.Sprintf("%04o", uint32(st.Mode().Perm()))
}

// shellWord quotes s for a POSIX shell when it needs quoting, so that a
// suggested command can be pasted as shown.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+=:@%,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func (s *stateDir) unlock() { s.dir.Close() }

func (s *stateDir) pairingFilePath() string { return filepath.Join(s.path, pairingFileName) }

// readPairingFile reads and validates a pairing; errNoPairing when absent.
// It needs no lock: the file is replaced atomically.
func readPairingFile(home string) (*pairingState, error) {
	path := filepath.Join(home, pairingFileName)
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if errors.Is(err, unix.ENOENT) {
		return nil, errNoPairing
	}
	if err == nil {
		if st, serr := os.Stat(home); serr == nil {
			err = checkHomeInfo(st, home)
		}
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return nil, classify(failPairingInvalid, fmt.Errorf("pairing file %s is not a regular file (%s)", path, fileKind(st.Mode())))
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return nil, classify(failHomeUnsafe, fmt.Errorf("bad ownership of pairing file %s: it belongs to uid %d, not to this user (uid %d)", path, sys.Uid, os.Geteuid()))
	}
	if mode := st.Mode().Perm(); mode != 0o600 || st.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
		return nil, classifyWithFix(failPairingFileMode, "chmod 600 "+shellWord(path),
			fmt.Errorf("pairing file %s has permissions %s, but 0600 is required", path, octalMode(st)))
	}
	if st.Size() > maxPairingFile {
		return nil, classify(failPairingInvalid, fmt.Errorf("pairing file %s is %d bytes; a pairing file is at most %d KiB", path, st.Size(), maxPairingFile>>10))
	}
	var data bytes.Buffer
	if _, err := data.ReadFrom(io.LimitReader(f, maxPairingFile+1)); err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if data.Len() > maxPairingFile {
		return nil, classify(failPairingInvalid, fmt.Errorf("pairing file %s is over %d KiB; a pairing file is at most that", path, maxPairingFile>>10))
	}
	p, err := decodePairing(data.Bytes())
	if err != nil {
		return nil, classify(failPairingInvalid, fmt.Errorf("pairing file %s is not valid: %v", path, err))
	}
	return p, nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDir != 0:
		return "a directory"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

func decodePairing(data []byte) (*pairingState, error) {
	var p pairingState
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	p.read = data
	// Only a file larger than the bound can hold more unknown bytes than
	// the bound; a run reads a small file without decoding it twice.
	if len(data) > maxUnknownMembers {
		var other map[string]json.RawMessage
		if err := json.Unmarshal(data, &other); err != nil {
			return nil, err
		}
		for _, known := range knownPairingMembers {
			delete(other, known)
		}
		unknown := 0
		for k, v := range other {
			unknown += len(k) + len(v)
		}
		if unknown > maxUnknownMembers {
			return nil, fmt.Errorf("members this client does not know take %d bytes; at most %d KiB of them are kept", unknown, maxUnknownMembers>>10)
		}
	}
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
	if err := p.Outstanding.check(); err != nil {
		return nil, fmt.Errorf("outstanding_request: %v", err)
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
	// Without HTML escaping, members this client does not know are written
	// back with the characters they had ("&", not "\u0026").
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(all); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writePairing replaces the pairing atomically (writeFileAtomic).
func (s *stateDir) writePairing(p *pairingState) error {
	data, err := encodePairing(p)
	if err != nil {
		return err
	}
	return writeFileAtomic(s.dir, s.pairingFilePath(), data)
}

// errUnnamedUnsupported: this system cannot write through an unnamed file
// (tmpfile_linux.go); the named temporary file is used instead.
var errUnnamedUnsupported = errors.New("unnamed temporary files are not supported here")

// writeFileAtomic replaces path (in dir) with data, mode 0600: readers see
// the old or the new file, never a part. The new content is written and
// synced in a file without a name where the system allows it (so a crash
// while it is written leaves no copy of a key behind), else in a private
// temporary file in the same directory; then it is renamed over path and
// the directory synced.
func writeFileAtomic(dir *os.File, path string, data []byte) error {
	removeStaleTemporaries(path)
	name := filepath.Base(path)
	err := writeUnnamed(dir, name, "."+name+"."+randomSuffix(), data)
	if errors.Is(err, errUnnamedUnsupported) {
		err = writeNamedTemporary(path, data)
	}
	if err == nil {
		err = dir.Sync()
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %w", path, err)
	}
	return nil
}

// writeNamedTemporary is writeFileAtomic where no unnamed file can be
// linked: the temporary file has a name from creation to rename.
func writeNamedTemporary(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
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
	return err
}

// randomSuffix names the moment's link of an unnamed file, in the pattern
// removeStaleTemporaries knows.
func randomSuffix() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// removeStaleTemporaries deletes the temporary files of writes a crash
// interrupted (each may be a full copy of the pairing). The caller holds
// the lock, so no other write is in progress.
func removeStaleTemporaries(path string) {
	prefix := "." + filepath.Base(path) + "."
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		return
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), prefix) && e.Type().IsRegular() {
			os.Remove(filepath.Join(filepath.Dir(path), e.Name()))
		}
	}
}

// removePairing deletes the pairing file.
func (s *stateDir) removePairing() error {
	removeStaleTemporaries(s.pairingFilePath())
	if err := os.Remove(s.pairingFilePath()); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return errNoPairing
		}
		return fmt.Errorf("cannot remove %s: %w", s.pairingFilePath(), err)
	}
	return s.dir.Sync()
}

// The state home: --agentknock-home, else AGENTKNOCK_HOME, else
// $HOME/.agentknock, as the reference client resolves it. Resolving it never
// changes the environment the command receives.
func stateHome(flagValue string) (string, error) {
	if flagValue != "" {
		abs, err := filepath.Abs(flagValue)
		if err != nil {
			return "", fmt.Errorf("--agentknock-home %q: %v", flagValue, err)
		}
		return abs, nil
	}
	if v, ok := os.LookupEnv("AGENTKNOCK_HOME"); ok {
		if v == "" || !filepath.IsAbs(v) {
			return "", classify(failHomeNotSet, fmt.Errorf("AGENTKNOCK_HOME must be a non-empty absolute path, not %q", v))
		}
		return filepath.Clean(v), nil
	}
	home := os.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", classify(failHomeNotSet, fmt.Errorf("HOME is not set to an absolute path, so Agentknock cannot find its pairing"))
	}
	return filepath.Join(home, ".agentknock"), nil
}
