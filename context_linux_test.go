// The pairing metadata of a Linux host comes from the files the reference
// client reads; parentPID reads /proc/PID/stat past a command name that
// holds spaces and parentheses.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestHostInfoFromEtc(t *testing.T) {
	etc := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(etc, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := hostInfoFrom(etc); got != (hostInfo{}) {
		t.Fatalf("no files gave %+v", got)
	}
	write("hostname", "build-box\n")
	write("machine-id", "0123456789abcdef0123456789abcdef\n")
	write("os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nVERSION_ID=\"13\"\nPRETTY_NAME=\"second\"\n")
	want := hostInfo{Hostname: "build-box", MachineID: "0123456789abcdef0123456789abcdef", OSVersion: "Debian GNU/Linux 13 (trixie)"}
	if got := hostInfoFrom(etc); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	write("os-release", "ID=alpine\nPRETTY_NAME=Alpine\n")
	write("hostname", "  \n")
	if got := hostInfoFrom(etc); got.OSVersion != "Alpine" || got.Hostname != "" {
		t.Fatalf("unquoted PRETTY_NAME or blank hostname: %+v", got)
	}
}

func TestParentPIDPastAnAwkwardCommandName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	code, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "x) 1 2 (y")
	if err := os.WriteFile(odd, code, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	ppid, err := parentPID(cmd.Process.Pid)
	if err != nil || ppid != os.Getpid() {
		t.Fatalf("parentPID(%d) = %d, %v; want %d", cmd.Process.Pid, ppid, err, os.Getpid())
	}
	if _, err := parentPID(1 << 30); err == nil {
		t.Fatal("parentPID of a process that does not exist succeeded")
	}
}
