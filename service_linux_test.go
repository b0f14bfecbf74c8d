// Standard-input delivery through the invocation service
// (command-execution.md, "Invocation service, standard input, and SSH
// operations"), with real processes and pipes.

package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A value larger than any pipe buffer arrives on standard input exactly,
// without a newline, and is not in the environment.
func TestStdinDeliveryOfALargeValue(t *testing.T) {
	value := strings.Repeat("0123456789abcdef", 128<<10/16) // 128 KiB
	l, status := runApproved(t, t.TempDir(), nil, map[string]map[string]string{"x": {"PIN": value, "OTHER": "o"}},
		"-s", "x", "--stdin", "x", "PIN", "--", "sh", "-c", `sha256sum | cut -c1-64; echo "${PIN-unset} $OTHER $$"`)
	if status != 0 {
		t.Fatalf("status %d stderr %q", status, l.stderr.String())
	}
	want := fmt.Sprintf("%x\nunset o %d\n", sha256.Sum256([]byte(value)), l.cmd.Process.Pid)
	if l.stdout.String() != want {
		t.Fatalf("stdout %q, want %q", l.stdout.String(), want)
	}
	if strings.Contains(l.stderr.String(), value[:32]) {
		t.Fatal("the value appears in agentknock's stderr")
	}
}

// A command that never reads standard input does not keep the service
// alive: it exits with its owner.
func TestServiceExitsWithTheCommand(t *testing.T) {
	value := strings.Repeat("v", 256<<10) // more than the pipe holds
	l := startLaunch(t, t.TempDir(), nil, "-s", "x", "--stdin", "x", "PIN", "--", "sleep", "0.5")
	l.approval.waitRequest(t)
	l.approval.approve(t, map[string]map[string]string{"x": {"PIN": value}})
	waitServices(t, func(n int) bool { return n > 0 }, "the service to start")
	if status := l.wait(t); status != 0 {
		t.Fatalf("status %d stderr %q", status, l.stderr.String())
	}
	waitServices(t, func(n int) bool { return n == 0 }, "the service to exit with its owner")
}

func waitServices(t *testing.T, done func(int) bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done(len(runningServices(t))) {
		if time.Now().After(deadline) {
			t.Fatalf("waited in vain for %s: %v", what, runningServices(t))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// runningServices lists processes of this test's client running as the
// invocation service.
func runningServices(t *testing.T) []string {
	t.Helper()
	var found []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if exe == testBinary && strings.Contains(string(cmdline), serviceRole) {
			found = append(found, e.Name())
		}
	}
	return found
}
