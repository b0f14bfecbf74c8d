// Tests of the state-directory commands run through the built binary: init,
// secrets, listings, usage errors, help.
package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
)

func mustInit(t *testing.T, dir string) string {
	t.Helper()
	r := runCLI(t, "", nil, "--state", dir, "init")
	if r.code != 0 {
		t.Fatalf("init: %s", r)
	}
	return strings.TrimSpace(r.stdout)
}

func TestInitPrintsAddressAndIsIdempotent(t *testing.T) {
	dir := stateDir(t)
	r := runCLI(t, "", nil, "--state", dir, "init")
	if r.code != 0 {
		t.Fatal(r)
	}
	if !regexp.MustCompile(`^[a-z]+-[a-z]+-[a-z]+\n$`).MatchString(r.stdout) {
		t.Fatalf("stdout is not one address of three lowercase words: %q", r.stdout)
	}
	address := strings.TrimSpace(r.stdout)
	if !strings.Contains(r.stderr, "agentknock pairing start "+address) {
		t.Errorf("stderr lacks the pairing instructions:\n%s", r.stderr)
	}
	// --state after the command, second run: same address.
	r2 := runCLI(t, "", nil, "init", "--state", dir)
	if r2.code != 0 || strings.TrimSpace(r2.stdout) != address {
		t.Fatalf("second init gave %q, want %q\n%s", r2.stdout, address, r2)
	}
	checkModes(t, dir)
}

// checkModes asserts the state directory is 0700 and every file in it 0600.
func checkModes(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %04o, want 0700", fi.Mode().Perm())
	}
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			if info.Mode().Perm() != 0o700 {
				t.Errorf("%s: mode %04o, want 0700", path, info.Mode().Perm())
			}
			return nil
		}
		n++
		if info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o, want 0600", path, info.Mode().Perm())
		}
		return nil
	})
	if n == 0 {
		t.Errorf("no files in the state directory")
	}
}

func TestStateDirResolution(t *testing.T) {
	cases := []struct {
		name string
		flag string
		env  map[string]string
		want string
	}{
		{"flag wins", "/x/flag", map[string]string{"AGENTKNOCK_DEVICE_STATE": "/x/env", "XDG_DATA_HOME": "/x/xdg", "HOME": "/x/home"}, "/x/flag"},
		{"env", "", map[string]string{"AGENTKNOCK_DEVICE_STATE": "/x/env", "XDG_DATA_HOME": "/x/xdg", "HOME": "/x/home"}, "/x/env"},
		{"xdg", "", map[string]string{"XDG_DATA_HOME": "/x/xdg", "HOME": "/x/home"}, "/x/xdg/agentknock-device"},
		{"relative xdg ignored", "", map[string]string{"XDG_DATA_HOME": "rel", "HOME": "/x/home"}, "/x/home/.local/share/agentknock-device"},
		{"home", "", map[string]string{"HOME": "/x/home"}, "/x/home/.local/share/agentknock-device"},
	}
	for _, tc := range cases {
		c := &cli{stateFlag: tc.flag, getenv: func(k string) string { return tc.env[k] }}
		got, err := c.stateDir()
		if err != nil || got != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestStateFromEnvironment(t *testing.T) {
	dir := stateDir(t)
	r := runCLI(t, "", []string{"AGENTKNOCK_DEVICE_STATE=" + dir}, "init")
	if r.code != 0 {
		t.Fatal(r)
	}
	if _, err := os.Stat(filepath.Join(dir, "identity.json")); err != nil {
		t.Fatalf("init did not use $AGENTKNOCK_DEVICE_STATE: %v", err)
	}
}

func TestSecretSetListRemove(t *testing.T) {
	dir := stateDir(t)
	mustInit(t, dir)
	const fileValue = "file-value-7f3a9c"
	const stdinValue = "stdin-value-51d2e8"
	valueFile := filepath.Join(t.TempDir(), "v")
	if err := os.WriteFile(valueFile, []byte(fileValue+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, stdinValue+"\n", nil, "--state", dir, "secret", "set", "demo",
		"API_KEY=@"+valueFile, "TOKEN=-", "--description", "demo secret")
	if r.code != 0 {
		t.Fatal(r)
	}
	noValues := func(r result) {
		t.Helper()
		for _, v := range []string{fileValue, stdinValue} {
			if strings.Contains(r.stdout+r.stderr, v) {
				t.Errorf("a secret value appears in the output:\n%s", r)
			}
		}
	}
	noValues(r)

	r = runCLI(t, "", nil, "--state", dir, "secret", "list", "--json")
	if r.code != 0 {
		t.Fatal(r)
	}
	noValues(r)
	var list []struct {
		Name        string   `json:"name"`
		Type        string   `json:"type"`
		Description string   `json:"description"`
		Variables   []string `json:"variables"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatalf("secret list --json: %v\n%s", err, r)
	}
	if len(list) != 1 || list[0].Name != "demo" || list[0].Type != "environment" ||
		list[0].Description != "demo secret" || strings.Join(list[0].Variables, ",") != "API_KEY,TOKEN" {
		t.Fatalf("unexpected list: %+v", list)
	}
	r = runCLI(t, "", nil, "--state", dir, "secret", "list")
	if r.code != 0 || !strings.Contains(r.stdout, "demo") || !strings.Contains(r.stdout, "API_KEY,TOKEN") {
		t.Fatalf("secret list: %s", r)
	}
	noValues(r)
	// The store (devkit/device keeps values as JSON strings in
	// secrets.json) holds each value with exactly one newline removed.
	secretsFile, err := os.ReadFile(filepath.Join(dir, "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{fileValue, stdinValue} {
		if !strings.Contains(string(secretsFile), `"`+v+`"`) {
			t.Errorf("stored value %q not found verbatim (without its newline)", v)
		}
	}

	r = runCLI(t, "", nil, "--state", dir, "secret", "remove", "demo")
	if r.code != 0 {
		t.Fatal(r)
	}
	r = runCLI(t, "", nil, "--state", dir, "secret", "list", "--json")
	if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
		t.Fatalf("after remove: %s", r)
	}
	checkModes(t, dir)
}

func TestSecretValueRules(t *testing.T) {
	for in, want := range map[string]string{
		"a\n": "a", "a\n\n": "a\n", "a\r\n": "a\r", "a": "a", "\n": "", " a \n": " a ",
	} {
		got, err := secretValue([]byte(in))
		if err != nil || got != want {
			t.Errorf("secretValue(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"a\x00b", "\xff\xfe"} {
		if _, err := secretValue([]byte(bad)); err == nil {
			t.Errorf("secretValue(%q) accepted", bad)
		}
	}
	// Through the binary: a NUL byte from stdin is refused, exit 1.
	dir := stateDir(t)
	mustInit(t, dir)
	r := runCLI(t, "x\x00y", nil, "--state", dir, "secret", "set", "s", "V=-")
	if r.code != 1 || !strings.Contains(r.stderr, "NUL") {
		t.Fatalf("NUL value: %s", r)
	}
}

func TestSecretSSHGenerate(t *testing.T) {
	dir := stateDir(t)
	mustInit(t, dir)
	for _, tc := range []struct{ keyType, prefix string }{{"ed25519", "ssh-ed25519 "}, {"rsa", "ssh-rsa "}} {
		r := runCLI(t, "", nil, "--state", dir, "secret", "ssh", "k-"+tc.keyType, "--generate", tc.keyType)
		if r.code != 0 {
			t.Fatal(r)
		}
		if !strings.HasPrefix(r.stdout, tc.prefix) || strings.Count(r.stdout, "\n") != 1 {
			t.Fatalf("--generate %s printed %q", tc.keyType, r.stdout)
		}
		if _, _, _, _, err := ssh.ParseAuthorizedKey([]byte(r.stdout)); err != nil {
			t.Fatalf("printed public key does not parse: %v", err)
		}
		if strings.Contains(r.stdout+r.stderr, "PRIVATE KEY") {
			t.Fatalf("private key printed:\n%s", r)
		}
	}
	r := runCLI(t, "", nil, "--state", dir, "secret", "list", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"ssh-ed25519 `) || !strings.Contains(r.stdout, `"ssh-rsa `) {
		t.Fatalf("secret list after generate: %s", r)
	}
}

func TestSecretSSHImport(t *testing.T) {
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen not installed")
	}
	dir := stateDir(t)
	mustInit(t, dir)
	keys := t.TempDir()
	plain := filepath.Join(keys, "plain")
	locked := filepath.Join(keys, "locked")
	for _, k := range []struct{ path, pass string }{{plain, ""}, {locked, "correct horse"}} {
		out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", k.pass, "-C", "test", "-f", k.path).CombinedOutput()
		if err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	pub, err := os.ReadFile(plain + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	wantFields := strings.Fields(string(pub))[:2]
	private, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}

	r := runCLI(t, "", nil, "--state", dir, "secret", "ssh", "imported", "--import", plain, "--description", "test key")
	if r.code != 0 {
		t.Fatal(r)
	}
	got := strings.Fields(r.stdout)
	if len(got) < 2 || got[0] != wantFields[0] || got[1] != wantFields[1] {
		t.Fatalf("imported key prints %q, want %q", r.stdout, strings.Join(wantFields, " "))
	}
	// No line of the private key's body appears anywhere.
	for _, line := range strings.Split(string(private), "\n") {
		if len(line) > 20 && !strings.HasPrefix(line, "-----") && strings.Contains(r.stdout+r.stderr, line) {
			t.Fatalf("private key material printed:\n%s", r)
		}
	}
	// Standard input works too.
	r = runCLI(t, string(private), nil, "--state", dir, "secret", "ssh", "from-stdin", "--import", "-")
	if r.code != 0 || !strings.HasPrefix(r.stdout, wantFields[0]+" "+wantFields[1]) {
		t.Fatalf("--import -: %s", r)
	}

	r = runCLI(t, "", nil, "--state", dir, "secret", "ssh", "locked", "--import", locked)
	if r.code != 1 || !strings.Contains(r.stderr, "passphrase") || !strings.HasPrefix(r.stderr, "agentknock-device: error: ") {
		t.Fatalf("encrypted key: %s", r)
	}
	r = runCLI(t, "", nil, "--state", dir, "secret", "list", "--json")
	if strings.Contains(r.stdout, `"locked"`) {
		t.Fatalf("the encrypted key was stored: %s", r)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	dir := stateDir(t)
	mustInit(t, dir)
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"--bogus", "init"},
		{"init", "extra"},
		{"secret"},
		{"secret", "bogus"},
		{"secret", "set"},
		{"secret", "set", "name"},
		{"secret", "set", "name", "VAR=literal-value"},
		{"secret", "set", "name", "A=-", "B=-"},
		{"secret", "ssh", "name"},
		{"secret", "ssh", "name", "--generate", "dsa"},
		{"secret", "ssh", "name", "--generate", "ed25519", "--import", "f"},
		{"secret", "list", "extra"},
		{"serve", "extra"},
		{"serve", "--listen", "0.0.0.0:0"},
		{"serve", "--listen", "nonsense"},
		{"serve", "--faults", "no-such-fault"},
		{"approve"},
		{"approve", "ID", "--for", "-5m"},
		{"approve", "ID", "--for", "soon"},
		{"deny"},
		{"pairing"},
		{"pairing", "confirm"},
		{"pairing", "confirm", "1234"},
		{"pairing", "confirm", "1234 5678 abcd"},
		{"pairing", "frob"},
		{"revoke"},
		{"upload", "accept"},
		{"upload", "maybe", "X"},
		{"help", "frobnicate"},
	} {
		r := runCLI(t, "", nil, append([]string{"--state", dir}, args...)...)
		if r.code != 2 {
			t.Errorf("%q: want exit 2, got %s", args, r)
			continue
		}
		if !strings.HasPrefix(r.stderr, "agentknock-device: error: ") {
			t.Errorf("%q: stderr %q lacks the error prefix", args, r.stderr)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	r := runCLI(t, "", nil, "--help")
	if r.code != 0 {
		t.Fatal(r)
	}
	for name := range commands {
		if strings.HasPrefix(name, "__") {
			continue // hidden: the release's own tools (__man)
		}
		if !strings.Contains(r.stdout, name) {
			t.Errorf("--help does not mention %s", name)
		}
	}
	for _, want := range []string{"AGENTKNOCK_RELAY_URL=", "--faults", "TEST ONLY", "--allow-remote", "Examples:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
	r = runCLI(t, "", nil, "serve", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "--listen") {
		t.Fatalf("serve --help: %s", r)
	}
	r = runCLI(t, "", nil, "--version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "agentknock-device ") {
		t.Fatalf("--version: %s", r)
	}
}

func TestListingsOnFreshState(t *testing.T) {
	dir := stateDir(t)
	r := runCLI(t, "", nil, "--state", dir, "clients")
	if r.code != 1 || !strings.Contains(r.stderr, "init") {
		t.Fatalf("clients without state: %s", r)
	}
	mustInit(t, dir)
	for _, cmd := range []string{"clients", "uploads"} {
		r := runCLI(t, "", nil, "--state", dir, cmd, "--json")
		if r.code != 0 || strings.TrimSpace(r.stdout) != "[]" {
			t.Errorf("%s --json on fresh state: %s", cmd, r)
		}
	}
	r = runCLI(t, "", nil, "--state", dir, "upload", "accept", "NOSUCH")
	if r.code != 1 {
		t.Errorf("accepting an unknown upload: %s", r)
	}
	r = runCLI(t, "", nil, "--state", dir, "revoke", "01K2ENXDTW1P3XAR4J7V7C9D0H")
	if r.code != 1 {
		t.Errorf("revoking an unknown client without serve: %s", r)
	}
	r = runCLI(t, "", nil, "--state", dir, "pending")
	if r.code != 1 || !strings.Contains(r.stderr, "no agentknock-device serve is running") {
		t.Errorf("pending without serve: %s", r)
	}
}
