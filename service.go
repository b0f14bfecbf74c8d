// The invocation service: command-execution.md, "Invocation service,
// standard input, and SSH operations" (step 5 of the run sequence). A
// separate copy of this executable, started before the launcher replaces
// itself, writes an approved value to the pipe that becomes the command's
// standard input and, for an SSH secret, serves a temporary SSH agent in a
// private directory whose selected key stays on the device. It lives until
// its work is done or the command (the owner PID, which the exec keeps)
// exits. It holds no live HPKE context: each SSH signature is a new paired
// exchange with the stored pairing.
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

	"golang.org/x/crypto/ssh"
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

// serveHelperConn answers one request of the Git signing helper.
func serveHelperConn(ctx context.Context, conn net.Conn, cfg *serviceSSH, key ssh.PublicKey, owner int) {
	defer conn.Close()
	pid, err := peerPID(conn)
	if err != nil || !descendsFrom(pid, owner) {
		return
	}
	var req serviceRequest
	reply := serviceReply{}
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&req); err != nil {
		reply.Error = "unreadable request"
	} else {
		switch req.Op {
		case "key":
			reply.PublicKey, reply.Passthrough = cfg.PublicKey, cfg.Passthrough
		case "sign":
			armored, err := gitSignWithDevice(ctx, cfg, key, req.Message, req.Repository)
			if err != nil {
				reply.Error = err.Error()
			}
			reply.Signature = armored
		default:
			reply.Error = "unknown request"
		}
	}
	json.NewEncoder(conn).Encode(reply)
}

// gitSignWithDevice is one GitSign exchange: the exact payload Git asked
// to sign, a separate device decision, an SSHSIG verified before use.
func gitSignWithDevice(ctx context.Context, cfg *serviceSSH, key ssh.PublicKey, message []byte, repo *gitRepositoryContext) (string, error) {
	out := newOutput(true, false)
	p, err := activePairing(cfg.Home, out)
	if err != nil {
		return "", err
	}
	if repo.validate() != nil {
		repo = nil // advisory only: never a reason to fail
	}
	req, err := newGitSignRequest(cfg.InvocationID, cfg.Token, cfg.Secret, message, repo)
	if err != nil {
		return "", err
	}
	watch, stop := contextWatch(ctx)
	defer stop()
	call, plaintext, err := callDevice(cfg.Home, p, req, watch, out)
	if err != nil {
		return "", err
	}
	r, err := checkGitSignResponse(plaintext, key, message)
	if completion, failure := responseFailure(err, r); failure != nil {
		call.finish(completion, out)
		return "", failure
	}
	if r.Outcome == outcomeDenied {
		call.finish(newDeniedCompletion(r.Denial), out)
		return "", errors.New(describeDenial(r.Denial))
	}
	call.finish(newApprovedCompletion(), out)
	return r.Armored, nil
}
