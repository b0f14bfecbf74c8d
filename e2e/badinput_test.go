// Bad input, table-driven, through the real binary: command lines and
// state files (issue findings 4 and 7). Every case must end on its own (a
// hang is caught by the deadlock guard), with a clear message and a
// non-zero status, never run the command and never show the secret. A held
// state lock is reported after a second and released waits go on.
package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestBadCommandLines(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	marker := w.markerPath("ran")
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"run", "--", "touch", marker}, 2, "at least one secret is required"},
		{[]string{"-s", "demo"}, 2, "the command is missing"},
		{[]string{"-s", "demo", "--bogus", "--", "touch", marker}, 2, "unknown option --bogus"},
		{[]string{"-s", "demo", "--stdin", "other", "X", "--", "touch", marker}, 2, `names secret "other", which is not selected`},
		{[]string{"-s", "demo", "-s", "demo", "--", "touch", marker}, 2, "more than once"},
		{[]string{"-s", "demo", "--quiet", "--verbose", "--", "touch", marker}, 2, "cannot be used together"},
		{[]string{"-s", "demo", "--", ""}, 2, "cannot be empty"},
		{[]string{"-s", "demo\xff", "--", "touch", marker}, 2, ""},
		{[]string{"pairing", "start", "BAD_ADDRESS"}, 2, "is not a pairing address"},
		{[]string{"pairing", "start", "calm-river", "--relay", "http://relay.example"}, 2, "the scheme must be wss://"},
		{[]string{"pairing", "start", "calm-river", "--relay", "ws://relay.example"}, 2, "only for a loopback host"},
		{[]string{"pairing", "frobnicate"}, 2, "unknown pairing command"},
		{[]string{"secret", "upload", "name"}, 2, "a source is required"},
		{[]string{"secret", "upload", "name", "--from-file", "V=/nonexistent/file"}, 1, "Nothing was uploaded"},
	} {
		r := w.agentknock(c.args...)
		if r.code != c.code || exists(marker) || !strings.Contains(r.stderr, c.says) || strings.TrimSpace(r.stderr) == "" {
			t.Errorf("agentknock %q: want exit %d saying %q, got %s", c.args, c.code, c.says, r)
		}
	}
}

func TestBadStateFiles(t *testing.T) {
	t.Parallel()
	w, value := pairThenFault(t, "")
	good, err := os.ReadFile(filepath.Join(w.home, "pairing.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(w.home, "pairing.json")
	restore := func() {
		os.Chmod(w.home, 0o700)
		os.RemoveAll(path)
		if err := os.WriteFile(path, good, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name  string
		setup func()
		says  string
	}{
		{"pairing.json is a FIFO", func() { os.Remove(path); syscall.Mkfifo(path, 0o600) }, "not a regular file (a FIFO)"},
		{"pairing.json is a directory", func() { os.Remove(path); os.Mkdir(path, 0o700) }, "not a regular file (a directory)"},
		{"pairing.json is readable by others", func() { os.Chmod(path, 0o644) }, "has permissions 0644, but 0600 is required"},
		{"pairing.json is 100 MB", func() { os.Truncate(path, 100<<20) }, "a pairing file is at most 64 KiB"},
		{"pairing.json is not JSON", func() { os.WriteFile(path, []byte("{not json"), 0o600) }, "is not valid"},
		{"pairing.json lacks the PSK", func() {
			os.WriteFile(path, []byte(strings.Replace(string(good), `"client_psk"`, `"client_psk_gone"`, 1)), 0o600)
		}, "client_psk must be 32 bytes"},
		{"an unknown member of 20 KB", func() {
			os.WriteFile(path, []byte(strings.Replace(string(good), "{", `{"future":"`+strings.Repeat("x", 20<<10)+`",`, 1)), 0o600)
		}, "at most 16 KiB of them are kept"},
		{"the home is writable by others", func() { os.Chmod(w.home, 0o777) }, "bad permissions of " + w.home},
	}
	if os.Geteuid() == 0 {
		cases = append(cases, struct {
			name  string
			setup func()
			says  string
		}{"pairing.json belongs to another user", func() { os.Chown(path, 65534, 65534) }, "bad ownership of pairing file"})
	}
	marker := w.markerPath("ran")
	for _, c := range cases {
		restore()
		c.setup()
		for _, args := range [][]string{{"-s", "demo", "--", "touch", marker}, {"pairing", "status"}} {
			r := w.agentknock(args...)
			if r.code != 1 || exists(marker) || !strings.Contains(r.stderr, c.says) {
				t.Errorf("%s: agentknock %q: want exit 1 saying %q, got %s", c.name, args, c.says, r)
			}
		}
	}
	restore()
	if r := w.agentknock("-s", "demo", "--", "touch", marker); r.code != 0 || !exists(marker) {
		t.Fatalf("run with the good pairing restored: %s", r)
	}
	w.leakCheck(value)
}

func TestHeldStateLockIsReported(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startServe(approvePairingPolicy, "")
	if r := w.agentknock("pairing", "start", w.address); r.code != 0 {
		t.Fatalf("pairing start: %s", r)
	}
	dir, err := os.Open(w.home)
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	if err := unix.Flock(int(dir.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	p := w.startAgentknock(runOpts{}, "pairing", "abort")
	p.waitOutput("Waiting for the lock on " + w.home)
	t.Logf("the lock wait was reported after %v", time.Since(start).Round(10*time.Millisecond))
	dir.Close() // releases the lock: the command goes on
	r := p.wait()
	if r.code != 0 || !strings.Contains(r.stdout, "Pending pairing discarded.") {
		t.Fatalf("pairing abort after the lock was released: %s", r)
	}
	// Only a run prefixes its lines with "AGENTKNOCK: " (the reference's
	// rule); a pairing command's lines are plain.
	if strings.Contains(r.stderr, messagePrefixE2E) {
		t.Fatalf("the pairing command's lock-wait line is prefixed: %s", r)
	}
}

const messagePrefixE2E = "AGENTKNOCK: "
