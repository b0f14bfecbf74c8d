// The floor of the launch-overhead series: a Go program that does nothing
// but replace itself with its argument, built the way the client is. What
// it adds to /bin/true (the Go runtime's start, a static binary's exec and
// the teardown of a multi-threaded process) is the part of agentknock's
// added time that no change to agentknock can remove.

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

const floorSource = `package main

import (
	"os"
	"syscall"
)

func main() {
	syscall.Exec(os.Args[1], os.Args[1:], os.Environ())
	os.Exit(127)
}
`

// buildFloor compiles the floor program into dir and returns its path.
func buildFloor(dir string) (string, error) {
	src := filepath.Join(dir, "floor-src")
	if err := os.MkdirAll(src, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(floorSource), 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module floor\n\ngo 1.26\n"), 0o600); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "go-exec-floor")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the floor program: %v\n%s", err, out)
	}
	return bin, nil
}
