// The repository context of a Git signing request, by the reference
// client's rules (its git_repository.rs tests), with a real repository.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Follows removes_credentials_and_transport_details_from_remote_urls, and
// the 0.6.2 fix that keeps scp-style remotes with "@" in the path.
func TestSanitizeRemote(t *testing.T) {
	cases := map[string]string{
		"https://user:token@example.com/owner/project.git?ignored=yes": "example.com/owner/project",
		"ssh://git@example.com:2222/owner/project.git":                 "example.com:2222/owner/project",
		"git@example.com:owner/project.git":                            "example.com/owner/project",
		"git@example.com:owner/project@v2.git":                         "example.com/owner/project@v2",
		"example.com:team/@scope/pkg":                                  "example.com/team/@scope/pkg",
		"git@[2001:db8::1]:owner/p.git":                                "[2001:db8::1]/owner/p",
		"git://example.com/p/":                                         "example.com/p",
		"../project":                                                   "",
		"/srv/git/project.git":                                         "",
		"file:///home/example/project":                                 "",
		"ext::command with a secret":                                   "",
		"https://example.com/owner/\x1b[2Jp":                           "",
		"https://example.com":                                          "",
	}
	for in, want := range cases {
		if got := sanitizeRemote(in); got != want {
			t.Errorf("sanitizeRemote(%q) = %q, want %q", in, got, want)
		}
	}
}

// Follows sends_only_complete_changed_path_lists.
func TestParseChangedPaths(t *testing.T) {
	n, paths := parseChangedPaths([]byte("A\x00added\x00M\x00modified\x00T\x00type-changed\x00D\x00deleted\x00"))
	if n == nil || *n != 4 || len(paths) != 4 || paths[0] != (gitChangedPath{"ADDED", "added"}) || paths[3] != (gitChangedPath{"DELETED", "deleted"}) {
		t.Fatalf("four paths: %v %+v", n, paths)
	}
	var many []byte
	for i := 0; i <= maxListedChangedPaths; i++ {
		many = append(many, []byte("M\x00path-"+strings.Repeat("x", i)+"\x00")...)
	}
	if n, paths := parseChangedPaths(many); n == nil || *n != maxListedChangedPaths+1 || paths != nil {
		t.Fatalf("too many: %v %d paths", n, len(paths))
	}
	if n, paths := parseChangedPaths([]byte("M\x00ok\x00A\x00tab\there\x00")); n == nil || *n != 2 || paths != nil {
		t.Fatalf("an unsafe path: %v %+v", n, paths)
	}
	if n, paths := parseChangedPaths([]byte("M\x00ok\x00R100\x00x\x00")); n == nil || *n != 2 || paths != nil {
		t.Fatalf("an unknown status: %v %+v", n, paths)
	}
	if n, _ := parseChangedPaths([]byte("M\x00trunc")); n != nil {
		t.Fatal("truncated output gave a count")
	}
	if n, paths := parseChangedPaths(nil); n == nil || *n != 0 || paths == nil {
		t.Fatalf("no changes: %v %+v", n, paths)
	}
}

// A real repository: -z keeps a non-ASCII path as it is (without -z Git
// would C-quote it), a path with a tab leaves the list out, and the remote
// is sent as host/path.
func TestRepositoryContextWithGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %q: %v", args, err)
		}
		return string(out)
	}
	git("init", "-q", "-b", "main")
	git("remote", "add", "origin", "https://user:secret-token@example.com/owner/project.git")
	write := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("café.txt")
	write("plain.txt")
	git("add", ".")
	git("commit", "-q", "-m", "first")
	t.Chdir(dir)

	ctx := repositoryContext([]byte(git("cat-file", "commit", "HEAD")))
	want := []gitChangedPath{{"ADDED", "café.txt"}, {"ADDED", "plain.txt"}}
	if ctx == nil || ctx.Remote != "example.com/owner/project" || ctx.Head == nil || ctx.Head.Name != "main" ||
		ctx.ChangedPathCount == nil || *ctx.ChangedPathCount != 2 || !slices.Equal(ctx.ChangedPaths, want) {
		t.Fatalf("context %+v", ctx)
	}
	if real, _ := filepath.EvalSymlinks(dir); ctx.Worktree != real && ctx.Worktree != dir {
		t.Errorf("worktree %q, want %q", ctx.Worktree, dir)
	}

	write("tab\tname")
	git("add", ".")
	git("commit", "-q", "-m", "second")
	ctx = repositoryContext([]byte(git("cat-file", "commit", "HEAD")))
	if ctx == nil || ctx.ChangedPathCount == nil || *ctx.ChangedPathCount != 1 || ctx.ChangedPaths != nil {
		t.Fatalf("a path with a tab: %+v", ctx)
	}
}
