// Git SSH signing through the device: command-execution.md, "Invocation
// service, standard input, and SSH operations" (gpg.ssh.program and
// gpg.ssh.defaultKeyCommand). Git runs the helper in the service's private
// directory as if it were ssh-keygen. For an SSHSIG in the git namespace
// with the selected key, the helper hands Git's exact payload (and advisory
// repository context) to the service over service.sock, which asks the
// device in a GitSign exchange and returns the armored signature; the
// helper writes it where Git expects it. Everything else goes to the
// system ssh-keygen with the original arguments (signing with another key
// only with SSH passthrough).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/crypto/ssh"
)

// gitSignHelperName is the helper's file name in the service directory;
// agentknock started under this name is the helper.
const gitSignHelperName = "agentknock-git-sign"

// gitSignRequest / gitSignReply are the lines of service.sock.
type serviceRequest struct {
	Op         string                `json:"op"` // "key" or "sign"
	Message    []byte                `json:"message,omitempty"`
	Repository *gitRepositoryContext `json:"repository,omitempty"`
}

type serviceReply struct {
	PublicKey   string `json:"public_key,omitempty"`
	Passthrough bool   `json:"passthrough,omitempty"`
	Signature   string `json:"signature,omitempty"`
	Error       string `json:"error,omitempty"`
}

// askService sends one request to service.sock beside the helper.
func askService(dir string, req serviceRequest) (*serviceReply, error) {
	conn, err := net.Dial("unix", filepath.Join(dir, "service.sock"))
	if err != nil {
		return nil, fmt.Errorf("the agentknock invocation service is gone (the command that started it has ended?): %v", err)
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, err
	}
	var reply serviceReply
	if err := json.NewDecoder(bufio.NewReader(conn)).Decode(&reply); err != nil {
		return nil, err
	}
	if reply.Error != "" {
		return nil, errors.New(reply.Error)
	}
	return &reply, nil
}

// gitSignMain is the helper. Git calls it as
// `PROGRAM -Y sign -n git -f KEYFILE [-U] FILE` to sign, and with
// "default-key" as gpg.ssh.defaultKeyCommand.
func gitSignMain(args []string) int {
	dir := filepath.Dir(os.Args[0])
	fail := func(format string, a ...any) int {
		fmt.Fprintf(os.Stderr, messagePrefix+format+"\n", a...)
		return 1
	}
	if len(args) == 1 && args[0] == "default-key" {
		reply, err := askService(dir, serviceRequest{Op: "key"})
		if err != nil {
			return fail("%v", err)
		}
		fmt.Printf("key::%s\n", reply.PublicKey)
		return 0
	}
	sign, err := parseSignArgs(args)
	if err != nil || sign.namespace != "git" {
		// Verification, other namespaces and unknown forms: ssh-keygen.
		return execSSHKeygen(dir, args)
	}
	reply, err := askService(dir, serviceRequest{Op: "key"})
	if err != nil {
		return fail("%v", err)
	}
	selected, err := parseOpenSSHPublicKey(reply.PublicKey)
	if err != nil {
		return fail("%v", err)
	}
	requested, err := readSigningKey(sign.keyFile)
	if err != nil || string(requested.Marshal()) != string(selected.Marshal()) {
		if !reply.Passthrough {
			return fail("Git asked to sign with a key other than the agentknock secret, and SSH passthrough is disabled (--no-ssh-passthrough)")
		}
		return execSSHKeygen(dir, args)
	}
	payload, err := os.ReadFile(sign.file)
	if err != nil {
		return fail("%v", err)
	}
	out, err := askService(dir, serviceRequest{Op: "sign", Message: payload, Repository: repositoryContext(payload)})
	if err != nil {
		return fail("%v", err)
	}
	if err := os.WriteFile(sign.file+".sig", []byte(out.Signature), 0o644); err != nil {
		return fail("%v", err)
	}
	return 0
}

// signArgs is an `ssh-keygen -Y sign` command line.
type signArgs struct {
	namespace, keyFile, file string
}

func parseSignArgs(args []string) (*signArgs, error) {
	s := &signArgs{}
	op := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-Y", "-n", "-f", "-O":
			if i+1 >= len(args) {
				return nil, errors.New("missing operand")
			}
			i++
			switch a {
			case "-Y":
				op = args[i]
			case "-n":
				s.namespace = args[i]
			case "-f":
				s.keyFile = args[i]
			}
		case "-U", "-q":
		default:
			if strings.HasPrefix(a, "-") || s.file != "" {
				return nil, fmt.Errorf("unexpected argument %q", a)
			}
			s.file = a
		}
	}
	if op != "sign" || s.keyFile == "" || s.file == "" {
		return nil, errors.New("not a signing request")
	}
	return s, nil
}

// readSigningKey reads the public key Git names: the file itself (a public
// key, as Git writes for "key::" literals) or, for a private key file, the
// .pub beside it.
func readSigningKey(path string) (ssh.PublicKey, error) {
	for _, p := range []string{path, path + ".pub"} {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if key, _, _, _, err := ssh.ParseAuthorizedKey(data); err == nil {
			return key, nil
		}
	}
	return nil, errors.New("no public key")
}

// execSSHKeygen replaces the helper with the system ssh-keygen and the
// original arguments; the service's agent.sock serves other agent keys.
func execSSHKeygen(dir string, args []string) int {
	path, err := exec.LookPath("ssh-keygen")
	if err != nil {
		fmt.Fprintf(os.Stderr, messagePrefix+"ssh-keygen is not in PATH: %v\n", err)
		return 1
	}
	env := os.Environ()
	if _, err := os.Stat(filepath.Join(dir, "agent.sock")); err == nil {
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, "SSH_AUTH_SOCK=") })
		env = append(env, "SSH_AUTH_SOCK="+filepath.Join(dir, "agent.sock"))
	}
	err = syscall.Exec(path, append([]string{"ssh-keygen"}, args...), env)
	fmt.Fprintf(os.Stderr, messagePrefix+"cannot run %s: %v\n", path, err)
	return 1
}

// repositoryContext collects advisory context with the Git that invoked the
// helper: worktree, branch, and the paths the signed commit changes against
// its first parent (from the tree and parent the payload names, never the
// index or worktree). Failures leave parts out; they never stop signing.
func repositoryContext(payload []byte) *gitRepositoryContext {
	git := func(args ...string) (string, bool) {
		out, err := exec.Command("git", args...).Output()
		return strings.TrimSpace(string(out)), err == nil
	}
	ctx := &gitRepositoryContext{}
	if top, ok := git("rev-parse", "--show-toplevel"); ok {
		ctx.Worktree = top
	} else {
		return nil
	}
	if branch, ok := git("symbolic-ref", "--short", "-q", "HEAD"); ok && branch != "" {
		ctx.Head = &gitHeadContext{Type: "BRANCH", Name: branch}
		if up, ok := git("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}"); ok && up != "" {
			ctx.Head.Upstream = up
		}
	} else {
		ctx.Head = &gitHeadContext{Type: "DETACHED"}
	}
	tree, parent := commitTreeAndParent(payload)
	if tree == "" {
		return ctx
	}
	if parent == "" {
		// A root commit: compare with the empty tree of this repository's
		// hash algorithm.
		empty, ok := git("hash-object", "-t", "tree", "/dev/null")
		if !ok {
			return ctx
		}
		parent = empty
	}
	out, ok := git("diff-tree", "-r", "--no-renames", "--name-status", parent, tree)
	if !ok {
		return ctx
	}
	paths := []gitChangedPath{}
	for _, line := range strings.Split(out, "\n") {
		status, path, found := strings.Cut(line, "\t")
		if !found {
			continue
		}
		kind := map[string]string{"A": "ADDED", "D": "DELETED", "M": "MODIFIED", "T": "TYPE_CHANGED"}[status]
		if kind != "" {
			paths = append(paths, gitChangedPath{Status: kind, Path: path})
		}
	}
	n := len(paths)
	ctx.ChangedPathCount = &n
	if n <= maxListedChangedPaths {
		ctx.ChangedPaths = paths
	}
	return ctx
}

// commitTreeAndParent reads the header of a commit payload. Only object
// names (hexadecimal SHA-1 or SHA-256) come back: the payload is the
// caller's, and anything else would reach `git diff-tree` as an option.
func commitTreeAndParent(payload []byte) (tree, parent string) {
	defer func() {
		if !gitObjectName(tree) || (parent != "" && !gitObjectName(parent)) {
			tree, parent = "", ""
		}
	}()
	for _, line := range strings.Split(string(payload), "\n") {
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "tree "); ok {
			tree = v
		} else if v, ok := strings.CutPrefix(line, "parent "); ok && parent == "" {
			parent = v
		}
	}
	return tree, parent
}

func gitObjectName(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for _, c := range []byte(s) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
