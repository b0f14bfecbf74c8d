// Git SSH signing through the device: command-execution.md, "Invocation
// service, standard input, and SSH operations" (gpg.ssh.program and
// gpg.ssh.defaultKeyCommand). Git runs the helper in the service's private
// directory as if it were ssh-keygen. For an SSHSIG in the git namespace
// with the selected key, the helper hands Git's exact payload (and advisory
// repository context) to the service over service.sock, which asks the
// device in a GitSign exchange and returns the armored signature; the
// helper writes it where Git expects it. Everything else goes to the
// system ssh-keygen with the original arguments (signing with another key
// only with SSH passthrough). Both halves are here: the helper process
// first, then the service's answer to it.

package main

import (
	"bufio"
	"context"
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
	"unicode"
	"unicode/utf8"

	"golang.org/x/crypto/ssh"
)

// gitSignHelperName is the helper's file name in the service directory;
// agentknock started under this name is the helper.
const gitSignHelperName = "agentknock-git-sign"

// helperRequest and helperReply are the JSON lines the helper and the
// service exchange over service.sock.
type helperRequest struct {
	Op         string                `json:"op"` // "key" or "sign"
	Message    []byte                `json:"message,omitempty"`
	Repository *gitRepositoryContext `json:"repository,omitempty"`
}

type helperReply struct {
	PublicKey   string `json:"public_key,omitempty"`
	Passthrough bool   `json:"passthrough,omitempty"`
	Signature   string `json:"signature,omitempty"`
	Error       string `json:"error,omitempty"`
}

// askService sends one request to service.sock beside the helper.
func askService(dir string, req helperRequest) (*helperReply, error) {
	conn, err := net.Dial("unix", filepath.Join(dir, "service.sock"))
	if err != nil {
		return nil, fmt.Errorf("the agentknock invocation service is gone (the command that started it has ended?): %v", err)
	}
	defer conn.Close()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return nil, err
	}
	var reply helperReply
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
		reply, err := askService(dir, helperRequest{Op: "key"})
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
	reply, err := askService(dir, helperRequest{Op: "key"})
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
	out, err := askService(dir, helperRequest{Op: "sign", Message: payload, Repository: repositoryContext(payload)})
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
// helper, by the reference client's rules: worktree, branch, a sanitized
// remote, and the paths the signed commit changes against its first parent
// (from the tree and parent the payload names, never the index or
// worktree). Text that cannot be shown safely (control characters, not
// UTF-8) is left out; one such changed path leaves the whole list out and
// keeps only the count. Failures never stop signing.
func repositoryContext(payload []byte) *gitRepositoryContext {
	raw := func(args ...string) ([]byte, bool) {
		cmd := exec.Command("git", args...)
		// Reading only: no fetch of missing objects, no replacements, no
		// lock files taken for the index.
		cmd.Env = append(os.Environ(), "GIT_NO_LAZY_FETCH=1", "GIT_NO_REPLACE_OBJECTS=1", "GIT_OPTIONAL_LOCKS=0")
		out, err := cmd.Output()
		return out, err == nil
	}
	text := func(args ...string) string {
		out, ok := raw(args...)
		if !ok {
			return ""
		}
		s := strings.TrimRight(string(out), "\r\n")
		if !safeContextText(s) {
			return ""
		}
		return s
	}
	ctx := &gitRepositoryContext{Worktree: text("rev-parse", "--path-format=absolute", "--show-toplevel")}
	if branch := text("symbolic-ref", "--quiet", "--short", "HEAD"); branch != "" {
		ctx.Head = &gitHeadContext{Type: "BRANCH", Name: branch,
			Upstream: text("rev-parse", "--abbrev-ref", "--symbolic-full-name", "@{upstream}")}
	} else if _, ok := raw("rev-parse", "--verify", "HEAD"); ok {
		ctx.Head = &gitHeadContext{Type: "DETACHED"}
	}
	remote := ""
	if ctx.Head != nil && ctx.Head.Type == "BRANCH" {
		if r := text("for-each-ref", "--format=%(upstream:remotename)", "refs/heads/"+ctx.Head.Name); r != "." {
			remote = r
		}
	}
	if remote == "" {
		remote = text("remote") // one remote only: several are a multi-line text
	}
	if remote != "" {
		ctx.Remote = sanitizeRemote(text("remote", "get-url", "--", remote))
	}
	if tree, parent := commitTreeAndParent(payload); tree != "" {
		if parent == "" {
			// A root commit: compare with the empty tree of this
			// repository's hash algorithm.
			parent = text("hash-object", "-t", "tree", "/dev/null")
		}
		if parent != "" {
			if out, ok := raw("diff-tree", "--no-commit-id", "--name-status", "-r", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", parent, tree); ok {
				ctx.ChangedPathCount, ctx.ChangedPaths = parseChangedPaths(out)
			}
		}
	}
	if ctx.Worktree == "" && ctx.Head == nil && ctx.Remote == "" && ctx.ChangedPathCount == nil {
		return nil
	}
	return ctx
}

// parseChangedPaths reads `git diff-tree -z --name-status` output. The list
// is complete or absent: more than maxListedChangedPaths entries, a status
// other than A, D, M or T, or a path that is not safe text leave it out.
func parseChangedPaths(out []byte) (*int, []gitChangedPath) {
	fields := strings.Split(string(out), "\x00")
	count := 0
	paths := []gitChangedPath{}
	for i := 0; ; i += 2 {
		if i >= len(fields) {
			return nil, nil // truncated output
		}
		if fields[i] == "" {
			if i+1 != len(fields) {
				return nil, nil
			}
			return &count, paths
		}
		if i+1 >= len(fields) {
			return nil, nil
		}
		count++
		kind := map[string]string{"A": "ADDED", "D": "DELETED", "M": "MODIFIED", "T": "TYPE_CHANGED"}[fields[i]]
		path := fields[i+1]
		if count > maxListedChangedPaths || kind == "" || !safeContextText(path) {
			paths = nil
			continue
		}
		if paths != nil {
			paths = append(paths, gitChangedPath{Status: kind, Path: path})
		}
	}
}

// safeContextText is text the device can show on one line as it is.
func safeContextText(s string) bool {
	if s == "" || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// sanitizeRemote reduces a remote URL to host/path: no user, password,
// port-less transport details, query or ".git"; "" for local paths, other
// transports and anything unsafe. An scp-style remote (user@host:path) is
// split at the first colon, so an "@" in its path stays in the path.
func sanitizeRemote(url string) string {
	if !safeContextText(url) {
		return ""
	}
	if scheme, rest, ok := strings.Cut(url, "://"); ok {
		switch scheme {
		case "git", "http", "https", "ssh":
		default:
			return ""
		}
		rest, _, _ = strings.Cut(rest, "?")
		rest, _, _ = strings.Cut(rest, "#")
		authority, path, ok := strings.Cut(rest, "/")
		if !ok {
			return ""
		}
		if at := strings.LastIndex(authority, "@"); at >= 0 {
			authority = authority[at+1:]
		}
		return repositoryIdentity(authority, path)
	}
	var sep int
	if strings.HasPrefix(url, "[") || strings.Contains(url, "@[") {
		sep = strings.Index(url, "]:")
		if sep < 0 {
			return ""
		}
		sep++
	} else if sep = strings.Index(url, ":"); sep < 0 {
		return ""
	}
	if strings.HasPrefix(url[sep+1:], ":") {
		return "" // ext::command and the like
	}
	host := url[:sep]
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	return repositoryIdentity(host, url[sep+1:])
}

func repositoryIdentity(host, path string) string {
	path, _, _ = strings.Cut(path, "?")
	path, _, _ = strings.Cut(path, "#")
	path = strings.Trim(path, "/")
	path = strings.TrimSuffix(path, ".git")
	if !safeContextText(host) || !safeContextText(path) {
		return ""
	}
	return host + "/" + path
}

// commitTreeAndParent reads the header of a commit payload: its tree and
// first parent, each a full object id as Git writes it (40 or 64 lowercase
// hex digits), else "": the payload is the caller's, and anything else
// could reach `git diff-tree` as an option.
func commitTreeAndParent(payload []byte) (tree, parent string) {
	objectID := func(v string) string {
		if len(v) != 40 && len(v) != 64 || strings.Trim(v, "0123456789abcdef") != "" {
			return ""
		}
		return v
	}
	trees := 0
	for _, line := range strings.Split(string(payload), "\n") {
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "tree "); ok {
			trees++
			tree = objectID(v)
		} else if v, ok := strings.CutPrefix(line, "parent "); ok && parent == "" {
			parent = objectID(v)
		}
	}
	if trees != 1 {
		return "", ""
	}
	return tree, parent
}

// ---- The service half: requests from the helper over service.sock ----

// serveHelperConn answers one request of the Git signing helper.
func serveHelperConn(ctx context.Context, conn net.Conn, cfg *serviceSSH, key ssh.PublicKey, owner int) {
	defer conn.Close()
	pid, err := peerPID(conn)
	if err != nil || !descendsFrom(pid, owner) {
		return
	}
	var req helperRequest
	reply := helperReply{}
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
	if repo.validate() != nil {
		repo = nil // advisory only: never a reason to fail
	}
	req, err := newGitSignRequest(cfg.InvocationID, cfg.Token, cfg.Secret, message, repo)
	if err != nil {
		return "", err
	}
	r, err := signWithDevice(ctx, cfg.Home, req, func(plaintext []byte) (*signatureResponse, error) {
		return checkGitSignResponse(plaintext, key, message)
	})
	if err != nil {
		return "", err
	}
	return r.Armored, nil
}
