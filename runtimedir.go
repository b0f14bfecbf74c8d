// Where the invocation service makes its private directory
// (command-execution.md, "Invocation service"): XDG_RUNTIME_DIR when it is
// a private directory of this user on a safe path, else the system
// temporary directory.
package main

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

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
