// The darwin glue itself, on a Mac (scripts/check-mac): each libSystem
// wrapper and system-call sequence of the _darwin files called for real,
// against what the same system reports another way. These are the calls
// darwin_decisions_test.go only feeds with recorded values.

package main

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestDarwinDescriptorPath(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir()) // /var is /private/var
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	os.Symlink(path, link)
	f, err := os.Open(link)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := descriptorPath(int(f.Fd())); err != nil || got != path {
		t.Errorf("descriptorPath = %q, %v; want the resolved %q", got, err, path)
	}
	if _, err := descriptorPath(-1); !errors.Is(err, unix.EBADF) {
		t.Errorf("bad descriptor: %v", err)
	}
}

func TestDarwinProcessPath(t *testing.T) {
	self, _ := os.Executable()
	self, _ = filepath.EvalSymlinks(self)
	if got, err := processPath(os.Getpid()); err != nil || got != self {
		t.Errorf("processPath(self) = %q, %v; want %q", got, err, self)
	}
	_, err := processPath(0x7ffffff0)
	if err == nil || strings.Contains(err.Error(), "errno") {
		t.Errorf("no such process: %v", err)
	}
}

func TestDarwinThreadSigmask(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		// The thread ends with the goroutine, taking its mask with it.
		runtime.LockOSThread()
		set := uint32(1 << (unix.SIGUSR2 - 1))
		var old, now uint32
		if err := threadSigmask(darwinSigBlock, &set, &old); err != nil {
			t.Error(err)
			return
		}
		if err := threadSigmask(darwinSigBlock, nil, &now); err != nil || now&set == 0 {
			t.Errorf("after SIG_BLOCK: %#x, %v", now, err)
		}
		if err := threadSigmask(darwinSigSetmask, &old, nil); err != nil {
			t.Error(err)
		}
		if err := threadSigmask(99, &set, nil); !errors.Is(err, unix.EINVAL) {
			t.Errorf("how 99: %v", err)
		}
	}()
	<-done
}

// The hand-off steps of darwinHandOff, short of exec: the block holds on
// this thread; a process-directed SIGTERM sent after it goes to another Go
// thread, is caught and reaches the watch (stopWatching would report it),
// and is not pending on this thread (sigpending is per thread on macOS;
// TestDarwinPendingIsThreadDirected shows the thread-directed case); the
// mask is put back.
func TestDarwinHandOffSteps(t *testing.T) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		cs := loadCallerState()
		watch := watchTermination(cs)
		defer signal.Stop(watch.ch)
		h := &darwinHandOff{cs: cs, watch: watch}
		if err := h.blockTermination(); err != nil {
			t.Error(err)
			return
		}
		var now uint32
		threadSigmask(darwinSigBlock, nil, &now)
		if now&terminationSet() != terminationSet() {
			t.Errorf("mask after blockTermination %#x", now)
		}
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
		select {
		case sig := <-watch.ch:
			if sig != syscall.SIGTERM {
				t.Errorf("caught %v", sig)
			}
		case <-time.After(30 * time.Second): // a deadlock guard only
			t.Error("the process-directed SIGTERM was not caught by another thread")
		}
		if sig := h.pendingTermination(); sig != 0 {
			t.Errorf("pending on the blocking thread: %v", sig)
		}
		if err := h.restoreCallerState(); err != nil {
			t.Error(err)
		}
		threadSigmask(darwinSigBlock, nil, &now)
		if now&terminationSet() != 0 && !cs.blocks(syscall.SIGINT) && !cs.blocks(syscall.SIGTERM) {
			t.Errorf("mask after restoreCallerState %#x", now)
		}
	}()
	<-done
}

// openCandidate and revalidate: a real O_EXEC open, F_GETPATH naming, and
// the last check by the candidate name.
func TestDarwinOpenCandidateAndRevalidate(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	fd, err := unix.Open(dir, workdirFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	wd := workdir{fd: fd, path: dir}
	writeScript(t, filepath.Join(dir, "real"), "#!/bin/sh\n")
	os.Symlink("real", filepath.Join(dir, "link"))
	x, err := openCandidate(wd, "./link")
	if err != nil {
		t.Fatal(err)
	}
	if x.path != filepath.Join(dir, "real") || x.candidate != "./link" {
		t.Errorf("path %q candidate %q", x.path, x.candidate)
	}
	if err := x.inspect(); err != nil || x.hash == nil || !x.script {
		t.Fatalf("inspect: %v (hash %x, script %v)", err, x.hash, x.script)
	}
	if err := x.revalidate(wd); err != nil {
		t.Errorf("unchanged: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "real"), []byte("#!/bin/sh\necho x\n"), 0o755)
	if err := x.revalidate(wd); err == nil {
		t.Error("changed bytes passed")
	}
	// Execute-only: opens with O_EXEC, is not hashed, is a binary.
	writeScript(t, filepath.Join(dir, "xonly"), "\x7fELF")
	os.Chmod(filepath.Join(dir, "xonly"), 0o111)
	if os.Geteuid() != 0 {
		y, err := openCandidate(wd, "./xonly")
		if err != nil {
			t.Fatalf("execute-only: %v", err)
		}
		if err := y.inspect(); err != nil || y.hash != nil {
			t.Errorf("execute-only inspect: %v, hash %x", err, y.hash)
		}
	}
	// Readable, not executable: refused by the O_EXEC open itself.
	os.WriteFile(filepath.Join(dir, "ronly"), []byte("#!/bin/sh\n"), 0o644)
	if _, err := openCandidate(wd, "./ronly"); !missingCandidate(err) {
		t.Errorf("not executable: %v", err)
	}
	if _, err := openCandidate(wd, "."); !errors.Is(err, errNotExecutable) {
		t.Errorf("a directory: %v", err)
	}
}

func TestDarwinWatchOwner(t *testing.T) {
	child := exec.Command("/bin/sleep", "30")
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	gone, err := watchOwner(child.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gone:
		t.Fatal("reported gone while alive")
	default:
	}
	child.Process.Kill()
	child.Wait()
	select {
	case <-gone:
	case <-time.After(30 * time.Second): // a deadlock guard only
		t.Fatal("exit not reported")
	}
	if gone, err := watchOwner(child.Process.Pid); err != nil {
		t.Errorf("exited process: %v", err)
	} else {
		<-gone
	}
}

func TestDarwinSocketPeerPID(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if pid, err := socketPeerPID(fds[0]); err != nil || pid != os.Getpid() {
		t.Errorf("socketpair peer %d, %v", pid, err)
	}
	// Another process connecting, as a helper does.
	nc, err := exec.LookPath("nc")
	if err != nil {
		t.Skip("no nc(1) to connect from another process")
	}
	sock := filepath.Join(t.TempDir(), "s")
	if len(sock) > maxSocketPath {
		sock = filepath.Join("/tmp", "akpeer-test.sock")
		os.Remove(sock)
		defer os.Remove(sock)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	child := exec.Command(nc, "-U", sock)
	child.Stdin = strings.NewReader("") // stays connected until killed
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { child.Process.Kill(); child.Wait() }()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	raw, err := conn.(*net.UnixConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var pid int
	raw.Control(func(fd uintptr) { pid, err = socketPeerPID(int(fd)) })
	if err != nil || pid != child.Process.Pid {
		t.Errorf("peer of nc (PID %d): %d, %v", child.Process.Pid, pid, err)
	}
}

func TestDarwinHostFacilities(t *testing.T) {
	if err := checkHostFacilities(runNeeds{}); err != nil {
		t.Errorf("this Mac: %v", err)
	}
	release, _ := unix.Sysctl("kern.osrelease")
	product, _ := unix.Sysctl("kern.osproductversion")
	t.Logf("kern.osrelease %q, kern.osproductversion %q", release, product)
	// O_EXEC as F_GETFL reports it here (the check the review proposed as
	// the alternative to the version floor), for the report.
	fd, err := unix.Open("/bin/sh", unix.O_EXEC|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	t.Logf("F_GETFL after O_EXEC open: %#x (O_EXEC %#x), %v", fl, unix.O_EXEC, err)
	if _, err := unix.Read(fd, make([]byte, 1)); err == nil {
		t.Error("an O_EXEC descriptor was readable: this macOS ignores O_EXEC")
	}
}
