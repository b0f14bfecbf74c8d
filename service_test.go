// The invocation service's directory base (command-execution.md,
// "Invocation service"): XDG_RUNTIME_DIR only when it is private and safely
// placed.

package main

import (
	"os"
	"path/filepath"
	"testing"
)

func TestRuntimeDirValidation(t *testing.T) {
	base := t.TempDir()
	os.Chmod(base, 0o755)
	good := filepath.Join(base, "good")
	os.Mkdir(good, 0o700)
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o755)
	shared := filepath.Join(base, "shared")
	os.Mkdir(shared, 0o777)
	os.Chmod(shared, 0o777)
	underShared := filepath.Join(shared, "mine")
	os.Mkdir(underShared, 0o700)
	sticky := filepath.Join(base, "sticky")
	os.Mkdir(sticky, 0o777)
	os.Chmod(sticky, os.ModeSticky|0o777)
	underSticky := filepath.Join(sticky, "mine")
	os.Mkdir(underSticky, 0o700)
	link := filepath.Join(base, "link")
	os.Symlink(good, link)

	for dir, want := range map[string]string{
		good:                      good,
		link:                      good, // canonicalized
		open:                      os.TempDir(),
		underShared:               os.TempDir(), // a writable ancestor without the sticky bit
		underSticky:               underSticky,
		filepath.Join(base, "no"): os.TempDir(),
		"relative/dir":            os.TempDir(),
	} {
		t.Setenv("XDG_RUNTIME_DIR", dir)
		if got := runtimeDirBase(); got != want {
			t.Errorf("XDG_RUNTIME_DIR=%s: got %s, want %s", dir, got, want)
		}
	}
}
