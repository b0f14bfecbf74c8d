// Fuzz targets for what this client reads from the person and the local
// system: the command line (run, secret list, secret upload), the Git
// signing helper's ssh-keygen arguments and the commit header it reads, the
// dotenv parser of `secret upload --from-env-file`, and pairing.json. Each
// checks the properties the rest of the client relies on, not only the
// absence of a panic. Seeds are real inputs: the README's command lines,
// what Git passes to gpg.ssh.program, a commit object written by git, and
// the pairing file the reference client writes.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
)

// fuzzArgs splits a fuzz input into arguments at NUL bytes, the one byte
// an argument cannot hold.
func fuzzArgs(data string) []string {
	if data == "" {
		return nil
	}
	return strings.Split(data, "\x00")
}

func joinArgs(args ...string) string { return strings.Join(args, "\x00") }

func FuzzCommandLine(f *testing.F) {
	for _, a := range [][]string{
		{"-s", "gh-token", "--", "gh", "pr", "merge", "12"},
		{"run", "-s", "gh-token", "--", "gh", "pr", "merge", "12"},
		{"-s", "cloudflare", "--only", "cloudflare", "CLOUDFLARE_API_TOKEN", "--", "wrangler", "deploy"},
		{"-s", "github", "--rename", "github", "GH_HOST", "GITHUB_HOST", "--stdin", "github", "GH_TOKEN", "--", "sh", "-c", "cat"},
		{"-s", "deploy-key", "--ssh", "--no-ssh-passthrough", "--reason", "Publish the release", "--", "git", "push"},
		{"--quiet", "-s", "a", "-s", "b", "--omit", "a", "X", "--", "env"},
		{"secret", "list", "--json"},
		{"secret", "upload", "github", "--description", "GitHub API access", "--from-env", "GH_TOKEN"},
		{"secret", "upload", "github", "--update", "--from-env-file", ".env"},
		{"secret", "upload", "deploy", "--from-ssh-key", "/home/u/.ssh/id_ed25519", "--passphrase-prompt"},
		{"-s", "x", "--", ""},
		{"-s", "x", "--verbose", "--quiet", "--", "true"},
	} {
		f.Add(joinArgs(a...))
	}
	f.Fuzz(func(t *testing.T, data string) {
		args := fuzzArgs(data)
		if len(args) > 0 && args[0] == "secret" {
			if len(args) > 1 && args[1] == "list" {
				_, err := parseSecretListArgs(args[2:])
				checkUsageError(t, err)
				return
			}
			if len(args) > 1 && args[1] == "upload" {
				o, err := parseSecretUploadArgs(args[2:])
				checkUsageError(t, err)
				if err == nil && o == nil {
					t.Fatal("no options and no error")
				}
				return
			}
		}
		if len(args) > 0 && args[0] == "run" {
			args = args[1:]
		}
		o, err := parseRunArgs(args)
		checkUsageError(t, err)
		if err != nil {
			return
		}
		if len(o.Command) == 0 || o.Command[0] == "" {
			t.Fatalf("accepted an empty command: %q", args)
		}
		if len(o.Secrets) == 0 {
			t.Fatalf("accepted a run without a secret: %q", args)
		}
		for _, s := range o.Secrets {
			if checkSecretName(s) != nil {
				t.Fatalf("accepted secret name %q", s)
			}
		}
		// The command is exactly what follows the first "--".
		for i, a := range args {
			if a == "--" {
				if strings.Join(args[i+1:], "\x00") != strings.Join(o.Command, "\x00") {
					t.Fatalf("command %q, but after -- came %q", o.Command, args[i+1:])
				}
				break
			}
		}
	})
}

// checkUsageError: a refused command line is a usage error (exit 2 with a
// message) or a help request, never another kind of failure.
func checkUsageError(t *testing.T, err error) {
	t.Helper()
	var usage *usageError
	if err != nil && !errors.As(err, &usage) && err.Error() != "flag: help requested" {
		t.Fatalf("command-line error of type %T: %v", err, err)
	}
	if err != nil && err.Error() == "" {
		t.Fatal("empty error message")
	}
}

// objectID is what `git diff-tree` may receive from a commit header: a
// SHA-1 or SHA-256 object name, never an option.
var objectID = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)

// realCommit is `git cat-file commit HEAD` of a signed-off commit, as Git
// hands it to gpg.ssh.program (without the signature header).
const realCommit = "tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\n" +
	"parent 8352e40e5b1a6ad1c2f0f3a1b3a2d6c3b2b1a0f9\n" +
	"author agentknock <dev@agentknock.dev> 1764579183 +0000\n" +
	"committer agentknock <dev@agentknock.dev> 1764579183 +0000\n" +
	"\n" +
	"Tests: one helper for the directory and credentials of a launcher\n"

func FuzzGitSignArgs(f *testing.F) {
	// What Git runs: gpg.ssh.program -Y sign -n git -f KEY [-U] FILE.
	f.Add(joinArgs("-Y", "sign", "-n", "git", "-f", "/home/u/.ssh/id_ed25519.pub", "/tmp/.git_signing_buffer_tmpXXXX"), []byte(realCommit))
	f.Add(joinArgs("-Y", "sign", "-n", "git", "-f", "/tmp/.git_signing_key_tmpAB12", "-U", "/tmp/.git_signing_buffer_tmpCD34"), []byte(realCommit))
	f.Add(joinArgs("-Y", "find-principals", "-s", "sig", "-f", "allowed"), []byte("tree --output=/tmp/x\nparent -p\n\nmessage\n"))
	f.Add(joinArgs("-Y", "verify", "-n", "git", "-f", "allowed", "-I", "me", "-s", "x.sig"), []byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904c4b825dc642cb6eb9a060e5\n\n"))
	f.Add(joinArgs("-Y", "check-novalidate", "-n", "git", "-s", "x.sig"), []byte("\n"))
	f.Fuzz(func(t *testing.T, data string, payload []byte) {
		args := fuzzArgs(data)
		s, err := parseSignArgs(args)
		if err == nil {
			if s.keyFile == "" || s.file == "" || strings.HasPrefix(s.file, "-") {
				t.Fatalf("accepted %q as %+v", args, s)
			}
			found := false
			for i := 0; i+1 < len(args); i++ {
				if args[i] == "-Y" && args[i+1] == "sign" {
					found = true
				}
			}
			if !found {
				t.Fatalf("accepted %q without -Y sign", args)
			}
		}
		tree, parent := commitTreeAndParent(payload)
		for _, id := range []string{tree, parent} {
			if id != "" && !objectID.MatchString(id) {
				t.Fatalf("commit header gave %q to git diff-tree", id)
			}
		}
	})
}

func FuzzDotenv(f *testing.F) {
	for _, s := range []string{
		"GH_TOKEN=sv-leak-token\nGH_HOST=github.com\n",
		"# comment\nexport AWS_ACCESS_KEY_ID=AKIA\nAWS_SECRET_ACCESS_KEY='sv-leak-aws'\n",
		"A=\"multi\nline value\"\nB=plain # trailing comment\n",
		"\ufeffKEY=value\r\nOTHER=\"with \\\"escape\\\" and \\n\"\r\n",
		"EMPTY=\nSPACED = value with spaces \n",
		"NOT VALID\n",
		"A=\"unterminated\n",
		"1BAD=x\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, err := parseDotenv(`".env"`, data, func(name string) (string, bool) { return "sv-env-" + name, name == "HOME" })
		if err != nil {
			if bytes.Contains(data, []byte("sv-leak")) && strings.Contains(err.Error(), "sv-leak") {
				t.Fatalf("the error shows a value: %v", err)
			}
			return
		}
		for _, e := range entries {
			if e.Name == "" || strings.ContainsAny(e.Name, "=\x00\n") {
				t.Fatalf("entry name %q", e.Name)
			}
			if e.Line < 1 {
				t.Fatalf("entry %q has line %d", e.Name, e.Line)
			}
		}
	})
}

func FuzzPairingFile(f *testing.F) {
	f.Add([]byte(referencePairing))
	f.Add([]byte(strings.Replace(referencePairing, `"rotated_at"`, `"pending": true, "relay_url": "ws://127.0.0.1:8787", "rotated_at"`, 1)))
	f.Add([]byte(strings.Replace(referencePairing, `"rotated_at"`, `"rotation_key": "MzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzMzM=", "rotated_at"`, 1)))
	f.Add([]byte(`{"device_id":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := decodePairing(data)
		if err != nil {
			return
		}
		if len(p.ClientPSK) != 32 || len(p.DeviceKey) != 32 || p.DeviceID.IsZero() || p.ClientID.IsZero() {
			t.Fatalf("accepted an incomplete pairing: %+v", p)
		}
		// What is written back reads back the same.
		out, err := encodePairing(p)
		if err != nil {
			t.Fatalf("cannot write back an accepted pairing: %v", err)
		}
		q, err := decodePairing(out)
		if err != nil {
			t.Fatalf("the written pairing does not read back: %v\n%s", err, out)
		}
		a, _ := json.Marshal(p)
		b, _ := json.Marshal(q)
		if !bytes.Equal(a, b) {
			t.Fatalf("round trip changed the pairing:\n%s\n%s", a, b)
		}
		// Members this client does not know survive a second write as well.
		again, err := encodePairing(q)
		if err != nil || !bytes.Equal(compactJSON(out), compactJSON(again)) {
			t.Fatalf("a second write changed the file (%v):\n%s\n%s", err, out, again)
		}
	})
}

func compactJSON(b []byte) []byte {
	var out bytes.Buffer
	if json.Compact(&out, b) != nil {
		return b
	}
	return out.Bytes()
}
