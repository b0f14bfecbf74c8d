// SSH through the temporary agent of the invocation service
// (command-execution.md, "Invocation service, standard input, and SSH
// operations"; client-device protocol "SSH authentication"), with OpenSSH
// as the real peer: sshd on loopback, ssh, ssh-agent and ssh-add.
package e2e

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// sshServer is an sshd on a loopback port that accepts one key for the
// current user.
type sshServer struct {
	port int
	cmd  *exec.Cmd
}

func startSSHServer(t *testing.T, w *world, authorizedKey string) *sshServer {
	t.Helper()
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		sshd = "/usr/sbin/sshd"
	}
	if _, err := os.Stat(sshd); err != nil {
		t.Skip("sshd is not installed (apt-get install openssh-server)")
	}
	// On Linux CI the privilege separation directory needs root; macOS's
	// sshd serves its own user's logins without it.
	if os.Geteuid() != 0 && runtime.GOOS == "linux" {
		t.Skip("sshd on loopback needs root here")
	}
	os.MkdirAll("/run/sshd", 0o755) // privilege separation directory
	dir := filepath.Join(w.root, "sshd")
	os.Mkdir(dir, 0o700)
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, "host")).CombinedOutput(); err != nil {
		t.Fatalf("host key: %v %s", err, out)
	}
	os.WriteFile(filepath.Join(dir, "authorized_keys"), []byte(authorizedKey+"\n"), 0o600)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	config := fmt.Sprintf(`Port %d
ListenAddress 127.0.0.1
HostKey %s/host
PidFile %s/sshd.pid
AuthorizedKeysFile %s/authorized_keys
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin yes
`, port, dir, dir, dir)
	os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600)
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	var log lockedBuffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sshd did not start: %s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return &sshServer{port: port, cmd: cmd}
}

// sshArgs log in to the test sshd and run a command, using only the agent.
func (s *sshServer) sshArgs(remote ...string) []string {
	return append([]string{"ssh", "-F", "/dev/null", "-p", fmt.Sprint(s.port),
		"-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
		"-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "127.0.0.1"}, remote...)
}

// deviceSSHKey makes an SSH secret on the device and returns its public key.
func deviceSSHKey(t *testing.T, w *world, name, keyType string) string {
	t.Helper()
	r := w.deviceOK("secret", "ssh", name, "--generate", keyType)
	key := strings.TrimSpace(r.stdout)
	if !strings.HasPrefix(key, "ssh-") {
		t.Fatalf("secret ssh printed %q", key)
	}
	return key
}

func TestSSHLoginThroughTheDevice(t *testing.T) {
	t.Parallel()
	for _, keyType := range []string{"ed25519", "rsa"} {
		t.Run(keyType, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			key := deviceSSHKey(t, w, "login", keyType)
			srv := startSSHServer(t, w, key)
			w.startServe(`{"default":"deny","pairing":"approve","secrets":{"login":"approve"}}`, "")
			w.pair()

			r := w.agentknock(append([]string{"-s", "login", "--"}, srv.sshArgs("echo", "logged-in")...)...)
			if r.code != 0 || strings.TrimSpace(r.stdout) != "logged-in" {
				t.Fatalf("ssh through agentknock: %s", r)
			}
			// One Invocation and at least one SshAuthenticate, each its own
			// decision with its own completion.
			w.waitLog(`completion .*: Invocation APPROVED$`)
			w.waitLog(`completion .*: SshAuthenticate APPROVED$`)

			// With a previous agent (ssh binds the session through it and
			// may use the host-bound method) and with a broken one, the
			// device's key still logs in.
			upstream := startUpstreamAgent(t, w)
			for _, sock := range []string{upstream, filepath.Join(w.root, "no-such-agent.sock")} {
				r = w.agentknockWith(runOpts{env: []string{"SSH_AUTH_SOCK=" + sock}}, append([]string{"-s", "login", "--"}, srv.sshArgs("echo", "logged-in")...)...)
				if r.code != 0 || strings.TrimSpace(r.stdout) != "logged-in" {
					t.Fatalf("ssh with SSH_AUTH_SOCK=%s: %s", sock, r)
				}
			}
			// The session binding reached the previous agent, so ssh
			// used OpenSSH's host-bound user-authentication form.
			w.waitLog(`publickey-hostbound-v00@openssh\.com`)

			// Without agentknock the key is nowhere: the login fails.
			plain := exec.Command(srv.sshArgs("true")[0], srv.sshArgs("true")[1:]...)
			plain.Env = append(w.baseEnv(), "SSH_AUTH_SOCK=")
			if err := plain.Run(); err == nil {
				t.Fatal("ssh logged in without the device")
			}
		})
	}
}

func TestSSHLoginDeniedOnTheDevice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := deviceSSHKey(t, w, "login", "ed25519")
	srv := startSSHServer(t, w, key)
	// The invocation is approved, every SSH signature is denied.
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"login":"approve"},"operations":{"ssh-authenticate":"deny"}}`, "")
	w.pair()
	r := w.agentknock(append([]string{"-s", "login", "--"}, srv.sshArgs("echo", "logged-in")...)...)
	if r.code == 0 || strings.Contains(r.stdout, "logged-in") {
		t.Fatalf("ssh logged in although the device denied the signature: %s", r)
	}
	w.waitLog(`completion .*: SshAuthenticate DENIED/POLICY_DENIED$`)
}

// The temporary agent lists the device's key first, then the previous
// agent's keys; with --no-ssh-passthrough only the device's; it refuses key
// management; and it disappears with the command.
func TestTemporaryAgentPassthrough(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	deviceKey := deviceSSHKey(t, w, "login", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"login":"approve"}}`, "")
	w.pair()

	// The previous agent, with a key of its own.
	upstream := startUpstreamAgent(t, w)
	ownKey := filepath.Join(w.root, "own")
	exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "own-key", "-f", ownKey).Run()
	add := exec.Command("ssh-add", ownKey)
	add.Env = append(w.baseEnv(), "SSH_AUTH_SOCK="+upstream)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v %s", err, out)
	}
	ownPub, _ := os.ReadFile(ownKey + ".pub")
	field := func(line string) string { f := strings.Fields(line); return f[0] + " " + f[1] }

	opts := runOpts{env: []string{"SSH_AUTH_SOCK=" + upstream}}
	r := w.agentknockWith(opts, "-s", "login", "--", "sh", "-c", `echo "$SSH_AUTH_SOCK"; ssh-add -L`)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	// The device's key first, named by the secret (the reference's
	// exposes_the_selected_key_through_ssh_auth_sock), then the others.
	if r.code != 0 || len(lines) != 3 || lines[0] == upstream || lines[1] != field(deviceKey)+" login" || field(lines[2]) != field(string(ownPub)) {
		t.Fatalf("agent listing with passthrough: %s", r)
	}
	sock := lines[0]

	r = w.agentknockWith(opts, "-s", "login", "--no-ssh-passthrough", "--", "ssh-add", "-L")
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); r.code != 0 || len(lines) != 1 || field(lines[0]) != field(deviceKey) {
		t.Fatalf("agent listing without passthrough: %s", r)
	}

	r = w.agentknockWith(opts, "-s", "login", "--", "ssh-add", "-D")
	if r.code == 0 {
		t.Fatalf("the temporary agent removed keys: %s", r)
	}

	r = w.agentknockWith(opts, "-s", "login", "--no-ssh-agent", "--", "sh", "-c", `echo "${SSH_AUTH_SOCK-unset}"`)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "unset" {
		t.Fatalf("--no-ssh-agent: %s", r)
	}

	// A process that does not descend from the command cannot use the
	// agent while the command runs.
	bg := w.startAgentknock(opts, "-s", "login", "--", "sh", "-c", `echo "$SSH_AUTH_SOCK"; sleep 2`)
	var running string
	for deadline := time.Now().Add(20 * time.Second); running == ""; {
		if time.Now().After(deadline) {
			t.Fatal("the command never printed its agent socket")
		}
		running = strings.TrimSpace(bg.stdout.String())
		time.Sleep(10 * time.Millisecond)
	}
	outsider := exec.Command("ssh-add", "-L")
	outsider.Env = append(w.baseEnv(), "SSH_AUTH_SOCK="+running)
	if out, err := outsider.CombinedOutput(); err == nil || strings.Contains(string(out), "ssh-") {
		t.Fatalf("an unrelated process used the temporary agent: %v %s", err, out)
	}
	bg.wait()

	// The first run's agent directory went away with its command.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Dir(sock)); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent directory %s outlived its command", filepath.Dir(sock))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// startUpstreamAgent runs an ssh-agent for the test (the "previous agent").
func startUpstreamAgent(t *testing.T, w *world) string {
	t.Helper()
	sock := filepath.Join(w.root, "upstream.sock")
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		return sock // already started by this test
	}
	cmd := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := cmd.Start(); err != nil {
		t.Skipf("ssh-agent: %v", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	// The socket file exists from bind(2) on; wait until it accepts.
	for i := 0; i < 500; i++ {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return sock
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("ssh-agent did not start")
	return ""
}

// When the command exits while the device is still deciding on a
// signature, the service withdraws the request with an aborted completion.
func TestSSHSignatureCancelledWhenTheCommandExits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := deviceSSHKey(t, w, "login", "ed25519")
	srv := startSSHServer(t, w, key)
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"login":"approve"},"operations":{"ssh-authenticate":"ask"}}`, "")
	w.pair()
	bg := w.startAgentknock(runOpts{}, append([]string{"-s", "login", "--"}, srv.sshArgs("true")...)...)
	items := w.waitPending()
	if items[0].Kind != "ssh-authenticate" {
		t.Fatalf("pending %+v, want an ssh-authenticate request", items)
	}
	bg.cmd.Process.Kill() // the command (ssh, same PID as agentknock) ends
	bg.wait()
	w.waitLog(`completion ` + items[0].RequestID + ` .*: SshAuthenticate ABORTED/CANCELLED$`)
	deadline := time.Now().Add(waitGuard)
	for len(w.pending()) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the withdrawn request is still pending: %+v", w.pending())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
