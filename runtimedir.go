// Where the invocation service makes its private directory
// (command-execution.md, "Invocation service"): XDG_RUNTIME_DIR when it is
// a private directory of this user on a safe path, else the system
// temporary directory, else /tmp: the first under which the service's
// socket paths fit in a Unix socket address (sun_path is 108 bytes on
// Linux and 104 on macOS, whose per-user TMPDIR is already long).

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// serviceDirBase is the first candidate base that leaves room for the
// longest socket path the service creates.
func serviceDirBase() (string, error) {
	return fitSocketBase([]string{runtimeDirBase(), os.TempDir(), "/tmp"}, maxSocketPath)
}

// longestServiceSocket is the longest name the service adds to the base:
// os.MkdirTemp's pattern with its largest random part, then the socket.
const longestServiceSocket = len("/agentknock-4294967295/service.sock")

func fitSocketBase(candidates []string, limit int) (string, error) {
	for _, base := range candidates {
		if base != "" && len(base)+longestServiceSocket <= limit {
			return base, nil
		}
	}
	return "", fmt.Errorf("no directory for the service's sockets has a path short enough for a Unix socket (%d bytes at most here; under %s a socket path would be %d bytes); set TMPDIR to a shorter directory",
		limit, candidates[0], len(candidates[0])+longestServiceSocket)
}

func runtimeDirBase() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		if real, err := filepath.EvalSymlinks(d); err == nil && filepath.IsAbs(real) && safeRuntimeDir(real) {
			return real
		}
	}
	return os.TempDir()
}

// safeRuntimeDir requires a mode-0700 directory owned by the effective
// user, whose ancestors are owned by root or that user and, when others
// may write them, are sticky.
func safeRuntimeDir(dir string) bool {
	euid := uint32(os.Geteuid())
	var st unix.Stat_t
	if unix.Lstat(dir, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Mode&0o777 != 0o700 || st.Uid != euid {
		return false
	}
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return false
		}
		if st.Uid != 0 && st.Uid != euid {
			return false
		}
		if st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}
