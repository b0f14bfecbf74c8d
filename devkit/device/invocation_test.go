// Invocation on the device side (client-device protocol "Invocation"):
// every request validation rule, routing of returned variables, denials.
package device

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"encoding/pem"
	"reflect"
	"slices"
	"sync"
	"testing"

	"golang.org/x/crypto/ssh"
)

var (
	rsaOnce sync.Once
	rsaPEM  []byte
)

// testRSAKey is generated once per test binary (RSA generation is slow).
func testRSAKey(t testing.TB) []byte {
	rsaOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		b, err := ssh.MarshalPrivateKey(k, "")
		if err != nil {
			panic(err)
		}
		rsaPEM = pem.EncodeToMemory(b)
	})
	return rsaPEM
}

// secrets installs the store every invocation test uses and returns the
// SSH public keys by name.
func (h *harness) secrets() map[string]string {
	t := h.t
	t.Helper()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(SetEnvSecret(h.dir, "github", "GitHub API access", map[string]string{"GH_HOST": "github.com", "GH_TOKEN": "tok-123"}))
	must(SetEnvSecret(h.dir, "cloud", "", map[string]string{"A": "1", "B": "2", "C": "3"}))
	must(SetEnvSecret(h.dir, "samehost", "", map[string]string{"GH_HOST": "github.com"}))
	must(SetEnvSecret(h.dir, "otherhost", "", map[string]string{"GH_HOST": "example.com"}))
	_, edPriv, _ := ed25519.GenerateKey(rand.Reader)
	blk, err := ssh.MarshalPrivateKey(edPriv, "")
	must(err)
	keys := map[string]string{}
	keys["sshkey"], err = ImportSSHSecret(h.dir, "sshkey", "deploy key", pem.EncodeToMemory(blk))
	must(err)
	keys["rsakey"], err = ImportSSHSecret(h.dir, "rsakey", "", testRSAKey(t))
	must(err)
	return keys
}

var testToken = make([]byte, 32)

func init() { rand.Read(testToken) }

// invocationFields is a valid Invocation request for the given secrets.
func invocationFields(secrets map[string]any) map[string]any {
	return map[string]any{
		"secrets": secrets,
		"reason":  "list pull requests",
		"operation": map[string]any{
			"type": "exec", "command": "gh", "arguments": []string{"pr", "list"},
			"working_directory": "/work/project", "executable_path": "/usr/bin/gh",
			"executable_hash": b64(make([]byte, 32)), "executable_mode": "BINARY",
			"stdin": "TERMINAL", "stdout": "PIPE", "stderr": "TERMINAL",
		},
		"launcher_chain":   []string{"/usr/bin/bash"},
		"invocation_token": b64(testToken),
	}
}

func env(opts map[string]any) map[string]any { return map[string]any{"environment": opts} }

func TestInvocationValidation(t *testing.T) {
	h := newHarness(t)
	h.secrets()
	c := h.pair()
	base := h.appr.count("")

	type tc struct {
		name string
		mut  func(f map[string]any)
		want string // "error" (authenticated INVALID_REQUEST) or "denied" (DENIED INVALID_REQUEST)
	}
	op := func(f map[string]any) map[string]any { return f["operation"].(map[string]any) }
	sec := func(s map[string]any) func(f map[string]any) { return func(f map[string]any) { f["secrets"] = s } }
	cases := []tc{
		{"missing secrets", func(f map[string]any) { delete(f, "secrets") }, "error"},
		{"secrets not an object", func(f map[string]any) { f["secrets"] = []string{"github"} }, "error"},
		{"empty secrets", sec(map[string]any{}), "denied"},
		{"empty secret name", sec(map[string]any{"": map[string]any{}}), "denied"},
		{"null secret options", sec(map[string]any{"github": nil}), "error"},
		{"unknown secret", sec(map[string]any{"nope": map[string]any{}}), "denied"},
		{"only and omit", sec(map[string]any{"github": env(map[string]any{"only": []string{"GH_TOKEN"}, "omit": []string{"GH_HOST"}})}), "denied"},
		{"empty only", sec(map[string]any{"github": env(map[string]any{"only": []string{}})}), "denied"},
		{"empty omit", sec(map[string]any{"github": env(map[string]any{"omit": []string{}})}), "denied"},
		{"duplicate only", sec(map[string]any{"github": env(map[string]any{"only": []string{"GH_TOKEN", "GH_TOKEN"}})}), "denied"},
		{"duplicate omit", sec(map[string]any{"github": env(map[string]any{"omit": []string{"GH_HOST", "GH_HOST"}})}), "denied"},
		{"only names unknown variable", sec(map[string]any{"github": env(map[string]any{"only": []string{"NOPE"}})}), "denied"},
		{"omit names unknown variable", sec(map[string]any{"github": env(map[string]any{"omit": []string{"NOPE"}})}), "denied"},
		{"rename source outside only", sec(map[string]any{"github": env(map[string]any{"only": []string{"GH_TOKEN"}, "rename": map[string]string{"GH_HOST": "H"}})}), "denied"},
		{"rename source omitted", sec(map[string]any{"github": env(map[string]any{"omit": []string{"GH_HOST"}, "rename": map[string]string{"GH_HOST": "H"}})}), "denied"},
		{"rename unknown source", sec(map[string]any{"github": env(map[string]any{"rename": map[string]string{"NOPE": "H"}})}), "denied"},
		{"empty rename", sec(map[string]any{"github": env(map[string]any{"rename": map[string]string{}})}), "denied"},
		{"rename to invalid name", sec(map[string]any{"github": env(map[string]any{"rename": map[string]string{"GH_HOST": "A=B"}})}), "denied"},
		{"stdin outside only", sec(map[string]any{"github": env(map[string]any{"only": []string{"GH_HOST"}, "stdin": "GH_TOKEN"})}), "denied"},
		{"stdin omitted", sec(map[string]any{"github": env(map[string]any{"omit": []string{"GH_TOKEN"}, "stdin": "GH_TOKEN"})}), "denied"},
		{"stdin unknown", sec(map[string]any{"github": env(map[string]any{"stdin": "NOPE"})}), "denied"},
		{"stdin and rename of one source", sec(map[string]any{"github": env(map[string]any{"rename": map[string]string{"GH_TOKEN": "T"}, "stdin": "GH_TOKEN"})}), "denied"},
		{"two stdin", sec(map[string]any{"github": env(map[string]any{"stdin": "GH_TOKEN"}), "cloud": env(map[string]any{"stdin": "A"})}), "denied"},
		{"environment options on ssh", sec(map[string]any{"sshkey": env(map[string]any{})}), "denied"},
		{"two ssh secrets", sec(map[string]any{"sshkey": map[string]any{}, "rsakey": map[string]any{}}), "denied"},
		{"conflicting final names", sec(map[string]any{"github": map[string]any{}, "otherhost": map[string]any{}}), "denied"},
		{"conflict through rename", sec(map[string]any{"cloud": env(map[string]any{"rename": map[string]string{"A": "GH_HOST"}}), "samehost": map[string]any{}}), "denied"},
		{"missing operation", func(f map[string]any) { delete(f, "operation") }, "error"},
		{"operation type", func(f map[string]any) { op(f)["type"] = "shell" }, "error"},
		{"missing command", func(f map[string]any) { delete(op(f), "command") }, "error"},
		{"missing arguments", func(f map[string]any) { delete(op(f), "arguments") }, "error"},
		{"arguments not array", func(f map[string]any) { op(f)["arguments"] = "pr list" }, "error"},
		{"missing working_directory", func(f map[string]any) { delete(op(f), "working_directory") }, "error"},
		{"missing executable_path", func(f map[string]any) { delete(op(f), "executable_path") }, "error"},
		{"missing executable_mode", func(f map[string]any) { delete(op(f), "executable_mode") }, "error"},
		{"bad executable_mode", func(f map[string]any) { op(f)["executable_mode"] = "LIBRARY" }, "error"},
		{"short executable_hash", func(f map[string]any) { op(f)["executable_hash"] = b64(make([]byte, 31)) }, "error"},
		{"executable_hash not base64", func(f map[string]any) { op(f)["executable_hash"] = "!!" }, "error"},
		{"missing stdin", func(f map[string]any) { delete(op(f), "stdin") }, "error"},
		{"missing stdout", func(f map[string]any) { delete(op(f), "stdout") }, "error"},
		{"missing stderr", func(f map[string]any) { delete(op(f), "stderr") }, "error"},
		{"bad stream kind", func(f map[string]any) { op(f)["stdout"] = "TTY" }, "error"},
		{"script_contents for a binary", func(f map[string]any) { op(f)["script_contents"] = "echo hi" }, "error"},
		{"missing launcher_chain", func(f map[string]any) { delete(f, "launcher_chain") }, "error"},
		{"launcher_chain of 5", func(f map[string]any) { f["launcher_chain"] = []string{"/a", "/b", "/c", "/d", "/e"} }, "error"},
		{"empty launcher path", func(f map[string]any) { f["launcher_chain"] = []string{""} }, "error"},
		{"missing invocation_token", func(f map[string]any) { delete(f, "invocation_token") }, "error"},
		{"short invocation_token", func(f map[string]any) { f["invocation_token"] = b64(make([]byte, 31)) }, "error"},
		{"reason not a string", func(f map[string]any) { f["reason"] = 7 }, "error"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := invocationFields(map[string]any{"github": map[string]any{}})
			tc.mut(f)
			res := c.call("Invocation", f)
			switch tc.want {
			case "error":
				if res["error"] != "INVALID_REQUEST" {
					t.Fatalf("got %v, want authenticated error INVALID_REQUEST", res)
				}
			case "denied":
				if res["result"] != "DENIED" || res["reason"] != "INVALID_REQUEST" || res["message"] == "" {
					t.Fatalf("got %v, want DENIED INVALID_REQUEST", res)
				}
			}
		})
	}
	if n := h.appr.count(""); n != base {
		t.Fatalf("invalid requests reached the approver %d times", n-base)
	}

	// The unchanged base request is valid: the table above tests one rule
	// at a time.
	if res := c.call("Invocation", invocationFields(map[string]any{"github": map[string]any{}})); res["result"] != "APPROVED" {
		t.Fatalf("valid request: %v", res)
	}
	// app_info and lib_info are required in every protected request.
	pt := mustJSON(t, map[string]any{"method": "Invocation", "lib_info": appInfo})
	if m, _, _ := c.callRaw(pt); m["error"] != "INVALID_REQUEST" {
		t.Fatalf("request without app_info: %v", m)
	}
}

func TestInvocationRouting(t *testing.T) {
	h := newHarness(t)
	keys := h.secrets()
	c := h.pair()
	vals := func(pairs ...string) map[string]any {
		m := map[string]any{}
		for i := 0; i < len(pairs); i += 2 {
			m[pairs[i]] = map[string]any{"value": pairs[i+1]}
		}
		return m
	}
	cases := []struct {
		name     string
		secrets  map[string]any
		want     map[string]any
		delivery map[string][]string
	}{
		{"all variables", map[string]any{"github": map[string]any{}},
			map[string]any{"github": map[string]any{"description": "GitHub API access", "type": "environment", "variables": vals("GH_HOST", "github.com", "GH_TOKEN", "tok-123")}},
			map[string][]string{"github": {"GH_HOST -> env GH_HOST", "GH_TOKEN -> env GH_TOKEN"}}},
		{"only", map[string]any{"github": env(map[string]any{"only": []string{"GH_TOKEN"}})},
			map[string]any{"github": map[string]any{"description": "GitHub API access", "type": "environment", "variables": vals("GH_TOKEN", "tok-123")}},
			map[string][]string{"github": {"GH_TOKEN -> env GH_TOKEN"}}},
		{"omit", map[string]any{"cloud": env(map[string]any{"omit": []string{"A"}})},
			map[string]any{"cloud": map[string]any{"type": "environment", "variables": vals("B", "2", "C", "3")}},
			map[string][]string{"cloud": {"B -> env B", "C -> env C"}}},
		{"rename and stdin", map[string]any{"github": env(map[string]any{"only": []string{"GH_HOST", "GH_TOKEN"}, "rename": map[string]string{"GH_HOST": "GITHUB_HOST"}, "stdin": "GH_TOKEN"})},
			map[string]any{"github": map[string]any{"description": "GitHub API access", "type": "environment", "variables": vals("GH_HOST", "github.com", "GH_TOKEN", "tok-123")}},
			map[string][]string{"github": {"GH_HOST -> env GITHUB_HOST", "GH_TOKEN -> stdin"}}},
		{"same final name, same value", map[string]any{"github": map[string]any{}, "samehost": map[string]any{}},
			map[string]any{
				"github":   map[string]any{"description": "GitHub API access", "type": "environment", "variables": vals("GH_HOST", "github.com", "GH_TOKEN", "tok-123")},
				"samehost": map[string]any{"type": "environment", "variables": vals("GH_HOST", "github.com")}},
			nil},
		{"ssh key", map[string]any{"sshkey": map[string]any{}, "cloud": env(map[string]any{"only": []string{"C"}})},
			map[string]any{
				"sshkey": map[string]any{"description": "deploy key", "type": "ssh", "public_key": keys["sshkey"]},
				"cloud":  map[string]any{"type": "environment", "variables": vals("C", "3")}},
			map[string][]string{"sshkey": {"ssh key " + keys["sshkey"] + " (agent + git signing)"}, "cloud": {"C -> env C"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := c.call("Invocation", invocationFields(tc.secrets))
			if res["result"] != "APPROVED" {
				t.Fatalf("response %v", res)
			}
			got := mustJSON(t, res["secrets"])
			want := mustJSON(t, tc.want)
			var g, w any
			json.Unmarshal(got, &g)
			json.Unmarshal(want, &w)
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("secrets\n got %s\nwant %s", got, want)
			}
			a := h.appr.last()
			names := make([]string, 0, len(tc.secrets))
			for n := range tc.secrets {
				names = append(names, n)
			}
			slices.Sort(names)
			if a.Kind != "invocation" || !slices.Equal(a.Secrets, names) || a.Client == nil || a.Client.ClientID != c.clientID.String() {
				t.Fatalf("approval %+v", a)
			}
			for n, lines := range tc.delivery {
				if !slices.Equal(a.Invocation.Delivery[n], lines) {
					t.Errorf("delivery of %s = %q, want %q", n, a.Invocation.Delivery[n], lines)
				}
			}
		})
	}
	a := h.appr.last()
	inv := a.Invocation
	if inv.Command != "gh" || !slices.Equal(inv.Arguments, []string{"pr", "list"}) || inv.WorkingDirectory != "/work/project" ||
		inv.ExecutablePath != "/usr/bin/gh" || inv.ExecutableHash != b64(make([]byte, 32)) || inv.ExecutableMode != "BINARY" ||
		inv.Stdin != "TERMINAL" || inv.Stdout != "PIPE" || inv.Stderr != "TERMINAL" || inv.Reason != "list pull requests" ||
		!slices.Equal(inv.LauncherChain, []string{"/usr/bin/bash"}) || inv.HasScriptContents {
		t.Fatalf("invocation details %+v", inv)
	}

	// A script shows its contents.
	f := invocationFields(map[string]any{"cloud": map[string]any{}})
	f["operation"].(map[string]any)["executable_mode"] = "SCRIPT"
	f["operation"].(map[string]any)["script_contents"] = "#!/bin/sh\necho hi\n"
	if res := c.call("Invocation", f); res["result"] != "APPROVED" {
		t.Fatalf("script: %v", res)
	}
	if d := h.appr.last().Invocation; !d.HasScriptContents || d.ScriptContents != "#!/bin/sh\necho hi\n" {
		t.Fatalf("script details %+v", d)
	}
	if r := h.appr.last().Invocation.Routing; len(r) != 0 {
		t.Fatalf("routing for a request without options: %+v", r)
	}
}

func TestInvocationDenial(t *testing.T) {
	h := newHarness(t)
	h.secrets()
	c := h.pair()
	h.appr.set(func(ctx context.Context, a *Approval) Decision {
		return Decision{Reason: "POLICY_DENIED", Message: "prod is off limits"}
	})
	res := c.call("Invocation", invocationFields(map[string]any{"github": map[string]any{}}))
	if res["result"] != "DENIED" || res["reason"] != "POLICY_DENIED" || res["message"] != "prod is off limits" || res["secrets"] != nil {
		t.Fatalf("denial %v", res)
	}
	h.appr.set(func(ctx context.Context, a *Approval) Decision { return Decision{Reason: "BOGUS"} })
	res = c.call("Invocation", invocationFields(map[string]any{"github": map[string]any{}}))
	if res["result"] != "DENIED" || res["reason"] != "USER_DENIED" || res["message"] == "" {
		t.Fatalf("denial with unknown reason %v", res)
	}
	if n := len(readState(t, h.dir).Invocations); n != 0 {
		t.Fatalf("%d invocations recorded after denials", n)
	}
}
