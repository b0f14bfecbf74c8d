// Git SSH signing through the device (command-execution.md, "Invocation
// service": gpg.ssh.program and gpg.ssh.defaultKeyCommand; client-device
// protocol "Git signing"), with git and ssh-keygen -Y verify as real peers.
package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo makes a repository in the world's working directory that
// verifies SSH signatures against allowed signers.
func gitRepo(t *testing.T, w *world, signers ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(w.work, "repo")
	allowed := filepath.Join(w.root, "allowed_signers")
	var lines []string
	for _, s := range signers {
		lines = append(lines, "tester@example.com "+s)
	}
	os.WriteFile(allowed, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	for _, args := range [][]string{
		{"init", "-q", repo},
		{"-C", repo, "config", "user.name", "Tester"},
		{"-C", repo, "config", "user.email", "tester@example.com"},
		{"-C", repo, "config", "gpg.format", "ssh"},
		{"-C", repo, "config", "gpg.ssh.allowedSignersFile", allowed},
	} {
		w.git(t, args...)
	}
	return repo
}

func (w *world) git(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = w.baseEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestGitCommitSignedByTheDevice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := deviceSSHKey(t, w, "signing", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"signing":"approve"}}`, "")
	w.pair()
	repo := gitRepo(t, w, key)
	os.WriteFile(filepath.Join(repo, "hello.txt"), []byte("hello\n"), 0o644)
	w.git(t, "-C", repo, "add", "hello.txt")

	// No user.signingKey: the helper's default key is the device's.
	r := w.agentknock("-s", "signing", "--", "git", "-C", repo, "commit", "-q", "-S", "-m", "signed by the device")
	if r.code != 0 {
		t.Fatalf("git commit -S through agentknock: %s\nserve log:\n%s", r, clip(w.log()))
	}
	verify := exec.Command("git", "-C", repo, "verify-commit", "HEAD")
	verify.Env = w.baseEnv()
	if out, err := verify.CombinedOutput(); err != nil || !strings.Contains(string(out), `Good "git" signature`) {
		t.Fatalf("verify-commit: %v\n%s", err, out)
	}
	w.waitLog(`completion .*: GitSign APPROVED$`)
	// The device was shown what the commit changes.
	w.waitLog(`hello\.txt`)

	// A signed tag, named key this time.
	r = w.agentknock("-s", "signing", "--", "git", "-C", repo, "-c", "user.signingKey=key::"+key, "tag", "-s", "-m", "v1", "v1")
	if r.code != 0 {
		t.Fatalf("git tag -s through agentknock: %s", r)
	}
	verifyTag := exec.Command("git", "-C", repo, "verify-tag", "v1")
	verifyTag.Env = w.baseEnv()
	if out, err := verifyTag.CombinedOutput(); err != nil || !strings.Contains(string(out), `Good "git" signature`) {
		t.Fatalf("verify-tag: %v\n%s", err, out)
	}

	// --no-git-sign leaves Git's configuration alone.
	r = w.agentknock("-s", "signing", "--no-git-sign", "--", "git", "-C", repo, "config", "--get", "gpg.ssh.program")
	if r.code == 0 {
		t.Fatalf("--no-git-sign still configured a program: %s", r)
	}
}

// Another key goes to the system ssh-keygen, unless passthrough is off.
func TestGitSignWithAnotherKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	deviceSSHKey(t, w, "signing", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"signing":"approve"}}`, "")
	w.pair()
	own := filepath.Join(w.root, "own")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", own).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	ownPub, _ := os.ReadFile(own + ".pub")
	repo := gitRepo(t, w, strings.TrimSpace(string(ownPub)))
	w.git(t, "-C", repo, "config", "user.signingKey", own)

	r := w.agentknock("-s", "signing", "--", "git", "-C", repo, "commit", "-q", "--allow-empty", "-S", "-m", "own key")
	if r.code != 0 {
		t.Fatalf("commit with another key: %s", r)
	}
	verify := exec.Command("git", "-C", repo, "verify-commit", "HEAD")
	verify.Env = w.baseEnv()
	if out, err := verify.CombinedOutput(); err != nil {
		t.Fatalf("verify-commit: %v\n%s", err, out)
	}
	if n := len(w.logLines(`GitSign`)); n != 0 {
		t.Fatalf("the device was asked to sign for another key (%d lines)", n)
	}

	// A key that only the previous agent holds, with --no-ssh-agent: the
	// helper's ssh-keygen reaches it through the service's agent.sock.
	upstream := startUpstreamAgent(t, w)
	add := exec.Command("ssh-add", own)
	add.Env = append(w.baseEnv(), "SSH_AUTH_SOCK="+upstream)
	if out, err := add.CombinedOutput(); err != nil {
		t.Fatalf("ssh-add: %v %s", err, out)
	}
	os.Remove(own) // only the agent has the private key now
	w.git(t, "-C", repo, "config", "user.signingKey", own+".pub")
	r = w.agentknockWith(runOpts{env: []string{"SSH_AUTH_SOCK=" + upstream}}, "-s", "signing", "--no-ssh-agent", "--",
		"git", "-C", repo, "commit", "-q", "--allow-empty", "-S", "-m", "agent key")
	if r.code != 0 {
		t.Fatalf("commit with a key of the previous agent: %s", r)
	}
	verify = exec.Command("git", "-C", repo, "verify-commit", "HEAD")
	verify.Env = w.baseEnv()
	if out, err := verify.CombinedOutput(); err != nil {
		t.Fatalf("verify-commit (agent key): %v\n%s", err, out)
	}

	r = w.agentknock("-s", "signing", "--no-ssh-passthrough", "--", "git", "-C", repo, "commit", "-q", "--allow-empty", "-S", "-m", "refused")
	if r.code == 0 || !strings.Contains(r.stderr, "passthrough is disabled") {
		t.Fatalf("--no-ssh-passthrough signed with another key: %s", r)
	}
}
