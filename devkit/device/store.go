// State-directory storage: a private directory (0700) of 0600 files, the
// JSON ones (identity, secrets) replaced atomically (temp file in the same
// directory, fsync, rename, directory fsync) so a crash leaves the old or
// the new contents, and an exclusive lock file that serializes every
// read-modify-write, state.db's included, between the command-line tools
// and a running `serve`.
package device

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	identityFile = "identity.json"
	secretsFile  = "secrets.json"
	lockFile     = "lock"
)

// checkDir refuses a state directory that other users could read: it holds
// private keys, PSKs and secret values.
func checkDir(dir string) error {
	if dir == "" {
		return errors.New("no state directory given")
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("state directory %s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("state directory %s belongs to another user", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("state directory %s is accessible by other users (mode %04o); run chmod 700 on it", dir, fi.Mode().Perm())
	}
	return nil
}

// makeDir creates the state directory, tightening an existing one of ours.
func makeDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.IsDir() && fi.Mode().Perm() != 0o700 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Geteuid() {
			if err := os.Chmod(dir, 0o700); err != nil {
				return err
			}
		}
	}
	return checkDir(dir)
}

// lockDir takes the directory's exclusive lock; the returned function
// releases it. flock locks belong to the open file description, so two
// goroutines of one process exclude each other as two processes do.
func lockDir(dir string) (func(), error) {
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock state directory: %w", err)
	}
	return func() { f.Close() }, nil // closing the descriptor releases the lock
}

// readJSON loads a state file; a missing file leaves v untouched.
func readJSON(dir, name string, v any) (bool, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("%s: %w", name, err)
	}
	return true, nil
}

// writeJSON replaces a state file atomically with mode 0600.
func writeJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(dir, name, append(b, '\n'))
}

// WriteFileAtomic replaces dir/name with data, mode 0600: a temporary file
// in the same directory, fsync, rename, fsync of the directory, so a crash
// leaves the old or the new file. The agentknock-device program uses it for
// its own state files too.
func WriteFileAtomic(dir, name string, data []byte) (err error) {
	tmp, err := os.CreateTemp(dir, "."+name+".tmp-*") // created 0600
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
