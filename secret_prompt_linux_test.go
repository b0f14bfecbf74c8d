// Tests of the terminal prompts of `secret upload` on a real
// pseudo-terminal that is the controlling terminal of the built binary:
// echo is off while it waits, the terminal is restored afterwards and
// after SIGINT or SIGTERM, and the typed value reaches the device.

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testPTY is a pseudo-terminal whose master side output is collected.
type testPTY struct {
	t             *testing.T
	master, slave *os.File

	mu      sync.Mutex
	output  bytes.Buffer
	changed chan struct{}
}

func openTestPTY(t *testing.T) *testPTY {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var n int
	rc, _ := master.SyscallConn()
	rc.Control(func(fd uintptr) {
		if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
			n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
		}
	})
	if err != nil {
		master.Close()
		t.Fatalf("pseudo-terminal setup: %v", err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		t.Fatal(err)
	}
	p := &testPTY{t: t, master: master, slave: slave, changed: make(chan struct{}, 1)}
	go func() {
		buf := make([]byte, 1024)
		for {
			n, err := master.Read(buf)
			p.mu.Lock()
			p.output.Write(buf[:n])
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default:
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		slave.Close()
		master.Close()
	})
	return p
}

func (p *testPTY) text() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

// waitFor returns once the terminal has shown s; the timeout only breaks
// a deadlock.
func (p *testPTY) waitFor(s string) {
	p.t.Helper()
	guard := time.After(20 * time.Second)
	for !strings.Contains(p.text(), s) {
		select {
		case <-p.changed:
		case <-guard:
			p.t.Fatalf("the terminal never showed %q; it shows %q", s, p.text())
		}
	}
}

func (p *testPTY) lflag() uint32 {
	p.t.Helper()
	var t *unix.Termios
	var err error
	rc, _ := p.slave.SyscallConn()
	rc.Control(func(fd uintptr) { t, err = unix.IoctlGetTermios(int(fd), unix.TCGETS) })
	if err != nil {
		p.t.Fatal(err)
	}
	return uint32(t.Lflag)
}

// start runs cmd in a new session with the terminal as its controlling
// terminal and standard input; output goes to the returned buffers.
func (p *testPTY) start(cmd *exec.Cmd) (stdout, stderr *bytes.Buffer) {
	p.t.Helper()
	if p.lflag()&unix.ECHO == 0 {
		p.t.Fatal("a new terminal should echo; the test proves nothing otherwise")
	}
	stdout, stderr = &bytes.Buffer{}, &bytes.Buffer{}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.slave, stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if cmd.Env == nil {
		cmd.Env = secretEnv()
	}
	if err := cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	return stdout, stderr
}

// hiddenWhileWaiting checks the terminal while the prompt waits.
func (p *testPTY) hiddenWhileWaiting(prompt string) {
	p.t.Helper()
	p.waitFor(prompt)
	if l := p.lflag(); l&unix.ECHO != 0 || l&unix.ICANON == 0 {
		p.t.Errorf("while prompting: lflag %#x, want ECHO off and ICANON on", l)
	}
}

func exitCode(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0
}

func TestSecretPromptHidesTheValue(t *testing.T) {
	t.Parallel()
	const typed = "typed s3cret ✓"
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	p := openTestPTY(t)
	cmd := d.cmd("upload", "app", "--from-prompt", "TOKEN", "--from-env", "HOST")
	cmd.Env = secretEnv("HOST=example.org")
	_, stderr := p.start(cmd)
	p.hiddenWhileWaiting("Value for TOKEN: ")
	fmt.Fprintf(p.master, "%s\n", typed)
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(p.text(), "s3cret") || strings.Contains(stderr.String(), "s3cret") {
		t.Errorf("the value was shown: terminal %q, stderr %q", p.text(), stderr)
	}
	if p.lflag()&unix.ECHO == 0 {
		t.Error("echo is still off after the upload")
	}
	var up secretTestUpload
	d.received(&up, nil)
	if got := up.Secret.Variables["TOKEN"]["value"]; got != typed {
		t.Errorf("the device received %q, want %q", got, typed)
	}
	if got := up.Secret.Variables["HOST"]["value"]; got != "example.org" {
		t.Errorf("HOST %q", got)
	}
}

func TestSecretPassphrasePrompt(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	path := sshKeygen(t, t.TempDir(), "id", "-t", "ed25519", "-N", "open sesame", "-C", "prompted")
	p := openTestPTY(t)
	cmd := d.cmd("upload", "key", "--from-ssh-key", path, "--passphrase-prompt")
	_, stderr := p.start(cmd)
	p.hiddenWhileWaiting(fmt.Sprintf("Passphrase for %q: ", path))
	fmt.Fprintf(p.master, "open sesame\n")
	if code := exitCode(t, cmd); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	if strings.Contains(p.text(), "sesame") || p.lflag()&unix.ECHO == 0 {
		t.Errorf("terminal %q, lflag %#x", p.text(), p.lflag())
	}
	var up secretTestUpload
	d.received(&up, nil)
	checkConverted(t, up.Secret.PrivateKey, path+".pub", "prompted")
}

// TestSecretPromptInterrupted: a termination signal during the prompt ends
// the upload with 128+N and gives the terminal back with echo on.
func TestSecretPromptInterrupted(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(signalName(sig), func(t *testing.T) {
			t.Parallel()
			d := newSecretTestDevice(t, nil)
			p := openTestPTY(t)
			cmd := d.cmd("upload", "app", "--from-prompt", "TOKEN")
			_, stderr := p.start(cmd)
			p.hiddenWhileWaiting("Value for TOKEN: ")
			fmt.Fprintf(p.master, "half-typed")
			p.waitFor("Value for TOKEN: ") // still waiting for the newline
			cmd.Process.Signal(sig)
			if code := exitCode(t, cmd); code != 128+int(sig) {
				t.Errorf("exit %d, want %d; stderr %q", code, 128+int(sig), stderr)
			}
			if !strings.Contains(stderr.String(), "interrupted by "+signalName(sig)+"); nothing was uploaded") {
				t.Errorf("stderr %q", stderr)
			}
			if p.lflag()&unix.ECHO == 0 {
				t.Error("echo is still off after the interruption")
			}
		})
	}
}

func TestSecretStdinTerminalRefused(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, nil)
	p := openTestPTY(t)
	cmd := d.cmd("upload", "app", "--from-file", "V=-")
	_, stderr := p.start(cmd)
	if code := exitCode(t, cmd); code != 1 || !strings.Contains(stderr.String(), "standard input is a terminal") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
