// Tests of the bounds of state.go: FIFOs and other non-regular files, lock
// waits, the temporary files of interrupted writes, size limits on the
// file and on unknown members, and the ownership and mode checks of the
// home and the file (issue findings 4, 5 and 7), and the local checks
// pairing start makes before it contacts the device (finding 3).

package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// withinGuard runs f and fails the test if it has not returned after a
// generous guard: what it checks is that f does not hang.
func withinGuard[T any](t *testing.T, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("%s did not return (it blocks)", what)
		panic("unreachable")
	}
}

func TestPairingFileThatIsAFIFODoesNotBlock(t *testing.T) {
	home := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(home, pairingFileName), 0o600); err != nil {
		t.Fatal(err)
	}
	err := withinGuard(t, "reading a FIFO pairing.json", func() error { _, err := readPairingFile(home); return err })
	if err == nil || !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), "FIFO") {
		t.Fatalf("FIFO pairing.json: %v", err)
	}
	// Commands that write refuse it too, without blocking.
	err = withinGuard(t, "pairing start over a FIFO", func() error {
		return pairingStart(home, "calm-river-lantern", "", &signalWatch{}, newOutput(true, false))
	})
	if err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("pairing start: %v", err)
	}
}

func TestStateLockWaitGivesUp(t *testing.T) {
	home := t.TempDir()
	holder, err := os.Open(home)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := unix.Flock(int(holder.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	// The wait is announced as the command's other lines are: prefixed
	// "AGENTKNOCK: " in a run only (the reference's rule), plain in
	// `pairing start` and the other commands, not at all with --quiet.
	for _, c := range []struct {
		out  *output
		want string
	}{
		{&output{}, messagePrefix + "Waiting for the lock on " + home},
		{&output{plain: true}, "Waiting for the lock on " + home},
		{&output{quiet: true}, ""},
	} {
		var b strings.Builder
		c.out.w = &b
		s := withinGuard(t, "a lock wait", func() *stateDir {
			s, lerr := lockStateDirWithin(home, 50*time.Millisecond, 300*time.Millisecond, c.out.announce)
			err = lerr
			return s
		})
		if err == nil {
			s.unlock()
			t.Fatal("took a lock another process holds")
		}
		if !strings.Contains(err.Error(), "gave up after 300ms waiting for the lock on "+home) {
			t.Fatalf("lock wait: %v", err)
		}
		if got := b.String(); (c.want == "" && got != "") || !strings.HasPrefix(got, c.want) {
			t.Fatalf("the wait was announced as %q, want %q", got, c.want)
		}
	}
	// Released, the lock is taken at once.
	holder.Close()
	s, err := lockStateDirWithin(home, 50*time.Millisecond, 300*time.Millisecond, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	s.unlock()
}

func TestStaleTemporariesAreRemovedAtTheNextWrite(t *testing.T) {
	home := t.TempDir()
	writeTestPairing(t, home, referencePairing, 0o600)
	// What a kill -9 during writeFileAtomic leaves: full copies.
	for i := range 3 {
		writeTestPairing(t, home, referencePairing, 0o600)
		if err := os.WriteFile(filepath.Join(home, fmt.Sprintf(".pairing.json.%d", 1000+i)), []byte(referencePairing), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	other := filepath.Join(home, "notes.txt")
	os.WriteFile(other, []byte("kept"), 0o600)
	s, err := lockStateDir(home)
	if err != nil {
		t.Fatal(err)
	}
	p, err := readPairingFile(home)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.writePairing(p); err != nil {
		t.Fatal(err)
	}
	s.unlock()
	entries, _ := os.ReadDir(home)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "notes.txt pairing.json" {
		t.Fatalf("after a write the home holds %v", names)
	}
}

func TestPairingFileSizeLimits(t *testing.T) {
	home := t.TempDir()
	path := filepath.Join(home, pairingFileName)
	// 100 MB, sparse: refused from its size, without reading it.
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(100 << 20)
	f.Close()
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "at most 64 KiB") {
		t.Fatalf("100 MB pairing.json: %v", err)
	}
	// A valid pairing with a 100 KB member this client does not know.
	big := strings.Replace(referencePairing, `"future_member": {"kept": true}`, `"future_member": "`+strings.Repeat("x", 100<<10)+`"`, 1)
	os.Remove(path)
	writeTestPairing(t, home, big, 0o600)
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "at most 64 KiB") {
		t.Fatalf("100 KB member: %v", err)
	}
	// Under the file limit but over the limit for unknown members.
	mid := strings.Replace(referencePairing, `"future_member": {"kept": true}`, `"future_member": "`+strings.Repeat("x", 20<<10)+`"`, 1)
	writeTestPairing(t, home, mid, 0o600)
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "at most 16 KiB of them are kept") {
		t.Fatalf("20 KB unknown member: %v", err)
	}
}

func TestStateHomeAndFileOwnershipAndMode(t *testing.T) {
	home := t.TempDir()
	writeTestPairing(t, home, referencePairing, 0o600)
	for _, mode := range []os.FileMode{0o777, 0o720, 0o702} {
		os.Chmod(home, mode)
		if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "bad permissions of "+home) {
			t.Errorf("home mode %04o, read: %v", mode, err)
		}
		if s, err := lockStateDir(home); err == nil || !strings.Contains(err.Error(), "bad permissions of "+home) {
			if s != nil {
				s.unlock()
			}
			t.Errorf("home mode %04o, lock: %v", mode, err)
		}
	}
	os.Chmod(home, 0o755)
	if _, err := readPairingFile(home); err != nil {
		t.Fatalf("home mode 0755: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Log("not root: the ownership cases need chown")
		return
	}
	if err := os.Chown(filepath.Join(home, pairingFileName), 65534, 65534); err != nil {
		t.Fatal(err)
	}
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "bad ownership of pairing file") {
		t.Errorf("pairing.json of another user: %v", err)
	}
	os.Chown(filepath.Join(home, pairingFileName), 0, 0)
	os.Chown(home, 65534, 65534)
	if _, err := readPairingFile(home); err == nil || !strings.Contains(err.Error(), "bad ownership of "+home) {
		t.Errorf("home of another user: %v", err)
	}
}

// countingRelay accepts TCP connections and counts them; it never speaks
// HTTP, so a client that contacts it fails.
func countingRelay(t *testing.T) (url string, count func() int) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	n := make(chan struct{}, 100)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n <- struct{}{}
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	return "ws://" + ln.Addr().String(), func() int { return len(n) }
}

func TestPairingStartChecksTheHomeBeforeContactingTheDevice(t *testing.T) {
	relayURL, contacts := countingRelay(t)
	t.Setenv("AGENTKNOCK_RELAY_URL", "")
	unwritable := map[string]func(t *testing.T) string{
		"home with a FIFO pairing.json": func(t *testing.T) string {
			home := t.TempDir()
			syscall.Mkfifo(filepath.Join(home, pairingFileName), 0o600)
			return home
		},
		"home writable by others": func(t *testing.T) string {
			home := t.TempDir()
			os.Chmod(home, 0o777)
			return home
		},
	}
	if st, err := os.Stat("/proc/self/fdinfo"); err == nil && st.IsDir() {
		// A directory this process owns in which nobody, not even root,
		// can create a file.
		unwritable["home in which no file can be created"] = func(t *testing.T) string { return "/proc/self/fdinfo" }
	}
	for name, mk := range unwritable {
		t.Run(name, func(t *testing.T) {
			before := contacts()
			err := withinGuard(t, "pairing start", func() error {
				return pairingStart(mk(t), "calm-river-lantern", relayURL, &signalWatch{}, newOutput(true, false))
			})
			if err == nil {
				t.Fatal("pairing start succeeded")
			}
			if errors.Is(err, errRelayUnavailable) || contacts() != before {
				t.Fatalf("the relay was contacted (%d times) before the home was checked: %v", contacts()-before, err)
			}
		})
	}
}
