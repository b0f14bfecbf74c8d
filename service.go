// The invocation service: command-execution.md, "Invocation service,
// standard input, and SSH operations" (step 5 of the run sequence). A
// separate copy of this executable, started before the launcher replaces
// itself, writes an approved value to the pipe that becomes the command's
// standard input and, for an SSH secret, serves a temporary SSH agent in a
// private directory whose selected key stays on the device. It lives until
// its work is done or the command (the owner PID, which the exec keeps)
// exits. It holds no live HPKE context: each SSH signature is a new paired
// exchange with the stored pairing.
//
// In this file, in order: the launcher's side (the startup data, starting
// the service), the service process itself, its private directory and
// listeners, where that directory lives, agentknock's own executable, and
// the peer check of a socket client. The agent is agent.go and Git
// signing gitsign.go; the platform parts are service_linux.go and
// service_darwin.go.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// serviceRole is the hidden first argument that starts the service.
const serviceRole = "__agentknock-invocation-service"

// serviceStartup is what the launcher sends the service through its private
// startup pipe. It never appears on a command line or in the environment.
type serviceStartup struct {
	OwnerPID int         `json:"owner_pid"`
	Self     selfImage   `json:"self"` // what the Git helper is made from
	Stdin    *string     `json:"stdin,omitempty"`
	SSH      *serviceSSH `json:"ssh,omitempty"`
}

// serviceSSH is what the SSH agent needs: the invocation it belongs to, the
// selected key, where the pairing lives and the agent to pass other keys to.
type serviceSSH struct {
	Home         string `json:"home"`
	InvocationID ULID   `json:"invocation_id"`
	Token        []byte `json:"invocation_token"`
	Secret       string `json:"secret"`
	PublicKey    string `json:"public_key"`
	Upstream     string `json:"upstream,omitempty"` // previous agent; "" with --no-ssh-passthrough
	Passthrough  bool   `json:"passthrough"`        // other keys may sign through the helper
	GitSign      bool   `json:"git_sign"`           // service.sock and the Git helper
}

// Descriptors the service inherits, after stdin, stdout and stderr.
const (
	serviceStartupFD = 3 // startup data, read to EOF
	serviceStdinFD   = 4 // write end of the command's standard input
	serviceReadyFD   = 5 // the service writes "ready DIR" or "error TEXT"
)

// serviceHandle is what the launcher keeps of a started service.
type serviceHandle struct {
	stdin *os.File // read end for descriptor 0, or nil
	dir   string   // private directory with agent.sock, or ""
}

// agentSocket is the temporary agent's socket, or "" without one.
func (h *serviceHandle) agentSocket() string {
	if h == nil || h.dir == "" {
		return ""
	}
	return filepath.Join(h.dir, "agent.sock")
}

// gitSettings make Git sign through the helper: the program itself, and
// the default key for a repository without user.signingKey.
func (h *serviceHandle) gitSettings() []gitSetting {
	if h == nil || h.dir == "" {
		return nil
	}
	helper := filepath.Join(h.dir, gitSignHelperName)
	if _, err := os.Lstat(helper); err != nil {
		return nil
	}
	settings := []gitSetting{{"gpg.ssh.program", helper}}
	// Git splits the default key command at whitespace, so a helper path
	// with spaces (from TMPDIR) can only serve repositories that name
	// user.signingKey.
	if !strings.ContainsAny(helper, " \t\n") {
		settings = append(settings, gitSetting{"gpg.ssh.defaultKeyCommand", helper + " default-key"})
	}
	return settings
}

// stdinPipe is the pipe for descriptor 0, or nil.
func (h *serviceHandle) stdinPipe() *os.File {
	if h == nil {
		return nil
	}
	return h.stdin
}

// startInvocationService starts the service and waits until it is ready.
func startInvocationService(start serviceStartup) (*serviceHandle, error) {
	self, err := serviceExecutable(start.Self)
	if err != nil {
		return nil, err
	}
	startupR, startupW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer startupR.Close()
	defer startupW.Close()
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer stdinW.Close()
	readyR, readyW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		return nil, err
	}
	defer readyR.Close()
	defer readyW.Close()

	// The first copy only starts the real service and exits, so the
	// service is not a child of the command (which could not reap it). It
	// gets the caller's environment (relay URL, proxies), never a secret.
	image, err := json.Marshal(start.Self)
	if err != nil {
		stdinR.Close()
		return nil, err
	}
	cmd := exec.Command(self, serviceRole, "detach", string(image))
	cmd.ExtraFiles = []*os.File{startupR, stdinW, readyW}
	if err := cmd.Run(); err != nil {
		stdinR.Close()
		return nil, fmt.Errorf("cannot start the invocation service: %v", err)
	}
	readyW.Close()
	data, err := json.Marshal(start)
	if err == nil {
		_, err = startupW.Write(data)
	}
	startupW.Close()
	if err != nil {
		stdinR.Close()
		return nil, fmt.Errorf("cannot start the invocation service: %v", err)
	}
	// A read error or EOF leaves a line that is neither "ready" nor
	// "error": the service died, and the switch below says so.
	line, _ := bufio.NewReader(readyR).ReadString('\n')
	line = strings.TrimSuffix(line, "\n")
	h := &serviceHandle{}
	switch {
	case strings.HasPrefix(line, "ready"):
		h.dir = strings.TrimPrefix(strings.TrimPrefix(line, "ready"), " ")
	case strings.HasPrefix(line, "error "):
		stdinR.Close()
		return nil, fmt.Errorf("the invocation service failed: %s", strings.TrimPrefix(line, "error "))
	default:
		stdinR.Close()
		return nil, errors.New("the invocation service did not start")
	}
	if start.Stdin != nil {
		h.stdin = stdinR
	} else {
		stdinR.Close()
	}
	return h, nil
}

// The invocation service process (command-execution.md, "Invocation
// service, standard input, and SSH operations"): started twice through the
// hidden serviceRole argument, first as a short-lived copy that detaches
// the service into its own session, then as the service, which reads its
// startup data, watches the owner, starts the SSH agent when asked, reports
// readiness and writes the standard-input value.

// serviceMain is the service process; with "detach" it is the short-lived
// first copy that starts it.
func serviceMain(args []string) int {
	var st unix.Stat_t
	for _, fd := range []int{serviceStartupFD, serviceStdinFD, serviceReadyFD} {
		if unix.Fstat(fd, &st) != nil {
			fmt.Fprintln(os.Stderr, messagePrefix+"the invocation service is started by agentknock run, not by hand")
			return 2
		}
	}
	startupPipe := os.NewFile(serviceStartupFD, "startup")
	stdinPipe := os.NewFile(serviceStdinFD, "stdin")
	ready := os.NewFile(serviceReadyFD, "ready")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(ready, "error "+format+"\n", a...)
		return 1
	}
	if len(args) == 2 && args[0] == "detach" {
		var image selfImage
		if err := json.Unmarshal([]byte(args[1]), &image); err != nil {
			return fail("unreadable startup data")
		}
		self, err := serviceExecutable(image)
		if err != nil {
			return fail("%v", err)
		}
		cmd := exec.Command(self, serviceRole)
		cmd.ExtraFiles = []*os.File{startupPipe, stdinPipe, ready}
		// Its own session: a terminal's Ctrl-C or hangup for the command's
		// process group does not reach the service.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return fail("cannot start: %v", err)
		}
		return 0
	}

	data, err := io.ReadAll(startupPipe)
	startupPipe.Close()
	var start serviceStartup
	if err == nil {
		err = json.Unmarshal(data, &start)
	}
	// The owner may be PID 1: a container's entrypoint.
	if err != nil || start.OwnerPID < 1 {
		return fail("unreadable startup data")
	}
	ownerGone, err := watchOwner(start.OwnerPID)
	if err != nil {
		return fail("cannot watch the command: %v", err)
	}

	var agent *sshAgentService
	if start.SSH != nil {
		if agent, err = startSSHAgent(start.SSH, start.Self, start.OwnerPID, ownerGone); err != nil {
			return fail("%v", err)
		}
		defer agent.close()
	}
	dir := ""
	if agent != nil {
		dir = agent.dir
	}
	fmt.Fprintf(ready, "ready %s\n", dir)
	ready.Close()

	// A dedicated writer: the value may exceed the pipe buffer, and the
	// command reads it at its own pace (or never).
	written := make(chan error, 1)
	if start.Stdin != nil {
		go func() {
			_, err := io.WriteString(stdinPipe, *start.Stdin)
			stdinPipe.Close()
			written <- err
		}()
	} else {
		stdinPipe.Close()
		written <- nil
	}
	if agent == nil {
		select {
		case <-written:
		case <-ownerGone:
		}
		return 0
	}
	<-ownerGone
	return 0
}

// The invocation service's private directory and its listeners
// (command-execution.md, "Invocation service, standard input, and SSH
// operations"): agent.sock for the temporary SSH agent, service.sock and the
// helper for Git signing, and an orderly close that lets signatures in
// flight send their completions.

// sshAgentService is the agent socket in its private directory.
type sshAgentService struct {
	dir       string
	listeners []net.Listener
	cancel    context.CancelFunc
	conns     sync.WaitGroup // connection handlers, with their device exchanges
}

// closeWait bounds how long an exiting service lets cancelled exchanges send
// their aborted completions (the transport's own bound is 5 s).
const closeWait = 8 * time.Second

func startSSHAgent(cfg *serviceSSH, self selfImage, owner int, ownerGone <-chan struct{}) (*sshAgentService, error) {
	key, err := parseOpenSSHPublicKey(cfg.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("the SSH public key is not usable: %v", err)
	}
	base, err := serviceDirBase()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, "agentknock-")
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", filepath.Join(dir, "agent.sock"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ownerGone
		cancel()
	}()
	s := &sshAgentService{dir: dir, listeners: []net.Listener{ln}, cancel: cancel}
	go s.acceptLoop(ln, func(conn net.Conn) { serveAgentConn(ctx, conn, cfg, key, owner) })
	if cfg.GitSign {
		sln, err := net.Listen("unix", filepath.Join(dir, "service.sock"))
		if err == nil {
			s.listeners = append(s.listeners, sln)
			err = installGitSignHelper(filepath.Join(dir, gitSignHelperName), self)
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("cannot set up Git signing: %v", err)
		}
		go s.acceptLoop(sln, func(conn net.Conn) { serveHelperConn(ctx, conn, cfg, key, owner) })
	}
	return s, nil
}

func (s *sshAgentService) acceptLoop(ln net.Listener, serve func(net.Conn)) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond)
			continue
		}
		s.conns.Add(1)
		go func() {
			defer s.conns.Done()
			serve(conn)
		}()
	}
}

// close cancels what is in flight, lets it send its aborted completions
// (bounded), and removes the directory.
func (s *sshAgentService) close() {
	s.cancel()
	for _, ln := range s.listeners {
		ln.Close()
	}
	done := make(chan struct{})
	go func() {
		s.conns.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(closeWait):
	}
	os.RemoveAll(s.dir)
}

// Where the invocation service makes its private directory
// (command-execution.md, "Invocation service"): XDG_RUNTIME_DIR when it is
// a private directory of this user on a safe path, else the system
// temporary directory, else /tmp: the first under which the service's
// socket paths fit in a Unix socket address (sun_path is 108 bytes on
// Linux and 104 on macOS, whose per-user TMPDIR is already long).

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

// agentknock's own executable, which the invocation service and the Git
// signing helper run after approval (command-execution.md, "Invocation
// service, standard input, and SSH operations"; on macOS "Invocation
// service"). Linux starts them from /proc/self/exe, the running image
// itself. macOS has no such name, so the path is identified (device and
// inode) before the request and checked each time it is used: an upgrade of
// agentknock during the approval wait stops the run instead of starting a
// different program with the approved SSH key.

// selfImage names agentknock's executable and the identity it had before
// the request. The zero value means "the running image" (Linux).
type selfImage struct {
	Path string `json:"path,omitempty"`
	Dev  uint64 `json:"dev,omitempty"`
	Ino  uint64 `json:"ino,omitempty"`
}

// identifySelf records what path names now.
func identifySelf(path string) (selfImage, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return selfImage{}, fmt.Errorf("cannot identify agentknock's own executable %s: %v", path, err)
	}
	return selfImage{Path: path, Dev: uint64(st.Dev), Ino: st.Ino}, nil
}

// openChecked opens the executable for reading and requires the recorded
// identity.
func (img selfImage) openChecked() (*os.File, error) {
	f, err := os.OpenFile(img.Path, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot open agentknock's own executable %s: %v", img.Path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		f.Close()
		return nil, err
	}
	if err := img.check(&st); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// check compares a file's identity with the recorded one.
func (img selfImage) check(st *unix.Stat_t) error {
	if img.Path == "" {
		return fmt.Errorf("agentknock's own executable was not identified before the request")
	}
	if uint64(st.Dev) != img.Dev || st.Ino != img.Ino || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fmt.Errorf("agentknock's executable %s was replaced while waiting for approval (an upgrade?); run the command again", img.Path)
	}
	return nil
}

// The peer of an invocation-service socket: its PID from the kernel and the
// parent chain to require that it descends from the command
// (command-execution.md, "Invocation service"). Best effort, not a same-user
// security boundary.

func peerPID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, errors.New("not a Unix socket")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var pid int
	var pidErr error
	if err := raw.Control(func(fd uintptr) { pid, pidErr = socketPeerPID(int(fd)) }); err != nil {
		return 0, err
	}
	return pid, pidErr
}

// descendsFrom walks parent records from pid up to owner. Every process the
// service can see descends from the init of its PID namespace (a peer
// outside it has PID 0), so an owner that is PID 1 accepts them all. Where
// parent records cannot be read at all (no /proc and a kernel without
// PIDFD_GET_INFO), the weaker same-session check stands in, as in the
// reference client (https://github.com/agentknock/agentknock-cli).
func descendsFrom(pid, owner int) bool {
	if pid <= 0 {
		return false
	}
	if owner == 1 {
		return true
	}
	peer := pid
	for i := 0; i < 256 && pid > 1; i++ {
		if pid == owner {
			return true
		}
		next, err := parentPID(pid)
		if errors.Is(err, errNoParentRecords) {
			return sameSession(peer, owner)
		}
		if err != nil {
			return false
		}
		pid = next
	}
	return false
}

// errNoParentRecords is parentPID's answer when this host has no way to read
// any process's parent.
var errNoParentRecords = errors.New("parent process records cannot be read here")

// sameSession reports whether pid is in the owner's session. The service's
// directory (mode 0700) already limits peers to the same user.
func sameSession(pid, owner int) bool {
	a, err := unix.Getsid(pid)
	if err != nil {
		return false
	}
	b, err := unix.Getsid(owner)
	return err == nil && a == b
}
