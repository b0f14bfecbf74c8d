// Tests of `agentknock secret` without a device: the command line, the
// reading of sources and the JSON of `secret list` (the dotenv format and
// the SSH-key conversion have files of their own).

package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestParseSecretUploadArgs(t *testing.T) {
	o, err := parseSecretUploadArgs([]string{"--from-env", "A", "gh", "--description", "", "--from-file", "B=path=x", "--update", "--from-env-file", "-", "--from-prompt", "C"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "gh" || o.Mode != uploadModeUpdate || o.Description == nil || *o.Description != "" {
		t.Errorf("parsed %+v", o)
	}
	want := []uploadSource{
		{Kind: sourceEnv, Name: "A", arg: "A"},
		{Kind: sourceFile, Name: "B", Path: "path=x", arg: "B=path=x"},
		{Kind: sourceEnvFile, Path: "-", arg: "-"},
		{Kind: sourcePrompt, Name: "C", arg: "C"},
	}
	if !slices.Equal(o.Sources, want) {
		t.Errorf("sources %+v, want %+v", o.Sources, want)
	}

	o, err = parseSecretUploadArgs([]string{"key", "--from-ssh-key", "-", "--passphrase-env", "PW", "--replace"})
	if err != nil {
		t.Fatal(err)
	}
	if o.SSHKey != "-" || o.PassphraseEnv != "PW" || o.Mode != uploadModeReplace || o.Description != nil {
		t.Errorf("parsed %+v", o)
	}
	if o, _ := parseSecretUploadArgs([]string{"x", "--from-env", "A"}); o.Mode != uploadModeCreate {
		t.Errorf("default mode %q", o.Mode)
	}
}

func TestParseSecretUploadArgsErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--from-env", "A"}, "NAME is missing"},
		{[]string{"a", "b", "--from-env", "A"}, `unexpected argument "b"`},
		{[]string{"a,b", "--from-env", "A"}, "comma"},
		{[]string{"x"}, "a source is required"},
		{[]string{"x", "--from-env", "A", "--update", "--replace"}, "--update and --replace"},
		{[]string{"x", "--from-file", "A=-", "--from-env-file", "-"}, "only one secret source can read from standard input"},
		{[]string{"x", "--from-ssh-key", "-", "--passphrase-prompt", "--passphrase-env", "P"}, "cannot be used together"},
		{[]string{"x", "--from-ssh-key", "k", "--from-env", "A"}, "cannot be combined"},
		{[]string{"x", "--from-ssh-key", "k", "--from-ssh-key", "j"}, "more than once"},
		{[]string{"x", "--from-env", "A", "--from-prompt", "A"}, "variable A is given by more than one source"},
		{[]string{"x", "--from-env", "A", "--passphrase-prompt"}, "apply only to --from-ssh-key"},
		{[]string{"x", "--from-env", "1A"}, "not a portable"},
		{[]string{"x", "--from-file", "A"}, "NAME=PATH"},
		{[]string{"x", "--from-file", "A="}, "path cannot be empty"},
		{[]string{"x", "--from-env-file", ""}, "path cannot be empty"},
		{[]string{"x", "--from-env", "A", "--description", "a", "--description", "b"}, "--description is given more than once"},
		{[]string{"x", "--from-env", "A", "--quiet", "--verbose"}, "--quiet and --verbose"},
		{[]string{"x", "--from-env", "A", "--bogus"}, "not defined"},
		{[]string{"x", "--from-ssh-key", "k", "--passphrase-env", ""}, "not an environment variable name"},
	}
	for _, c := range cases {
		_, err := parseSecretUploadArgs(c.args)
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want a usage error with %q", c.args, err, c.want)
		}
	}
}

// ---- sources ----

// testInput reads from the given environment and standard input; prompts
// answer from a queue and fail when it is empty.
func testInput(env map[string]string, stdin string, answers ...string) uploadInput {
	return uploadInput{
		lookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		stdin:     strings.NewReader(stdin),
		prompt: func(label string) (string, error) {
			if len(answers) == 0 {
				return "", errors.New("no terminal in this test")
			}
			a := answers[0]
			answers = answers[1:]
			return a, nil
		},
	}
}

func mustUploadArgs(t *testing.T, args ...string) *secretUploadOptions {
	t.Helper()
	o, err := parseSecretUploadArgs(args)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestReadUploadSecretEnvironment(t *testing.T) {
	dir := t.TempDir()
	exact := "line 1\nline 2\n\n"
	os.WriteFile(filepath.Join(dir, "value"), []byte(exact), 0o600)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("export D=from-dotenv\nE='e e'\n"), 0o600)
	o := mustUploadArgs(t, "app", "--description", "App", "--from-env", "A", "--from-file", "B="+filepath.Join(dir, "value"),
		"--from-file", "C=-", "--from-env-file", filepath.Join(dir, ".env"), "--from-prompt", "F")
	s, err := readUploadSecret(o, testInput(map[string]string{"A": "from-env"}, "stdin value\n", "typed"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"A": "from-env", "B": exact, "C": "stdin value\n", "D": "from-dotenv", "E": "e e", "F": "typed"}
	got := map[string]string{}
	for k, v := range s.Variables {
		got[k] = string(v.Value)
	}
	if s.Type != secretTypeEnvironment || s.Name != "app" || *s.Description != "App" || len(got) != len(want) {
		t.Fatalf("secret %s/%s/%q with %d variables", s.Type, s.Name, *s.Description, len(got))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}

	// The request carries exactly these values, as JSON strings.
	req, err := newSecretUploadRequest(o.Mode, s)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(req)
	var wire struct {
		Method string
		Mode   string
		Secret struct {
			Name        string
			Description string
			Type        string
			Variables   map[string]struct{ Value string }
		}
	}
	if err := json.Unmarshal(data, &wire); err != nil {
		t.Fatal(err)
	}
	if wire.Method != "SecretUpload" || wire.Mode != "CREATE" || wire.Secret.Type != "environment" || wire.Secret.Variables["B"].Value != exact {
		t.Errorf("request %s", data)
	}
}

func TestReadUploadSecretErrorsNameNoValue(t *testing.T) {
	const secret = "s3cr3t-value"
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	nul := write("nul", secret+"\x00")
	notUTF8 := write("latin1", secret+"\xe9")
	dup := write("dup.env", "A="+secret+"\nA="+secret+"\n")
	big := write("big", strings.Repeat("x", maxSourceSize+1))
	env := map[string]string{"A": secret, "BAD": secret + "\xff"}
	cases := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"--from-env", "MISSING"}, "", "MISSING (--from-env) is not set"},
		{[]string{"--from-env", "BAD"}, "", "value of BAD is not valid UTF-8"},
		{[]string{"--from-file", "V=" + nul}, "", "value of V contains a NUL byte"},
		{[]string{"--from-file", "V=" + notUTF8}, "", "value of V is not valid UTF-8"},
		{[]string{"--from-file", "V=-"}, secret + "\x00", "value of V contains a NUL byte"},
		{[]string{"--from-file", "V=" + filepath.Join(dir, "absent")}, "", "no such file"},
		{[]string{"--from-file", "V=" + big}, "", "larger than"},
		{[]string{"--from-env-file", dup}, "", "line 2: variable A is given by more than one source"},
		{[]string{"--from-env", "A", "--from-env-file", "-"}, "A=" + secret + "\n", "standard input, line 1: variable A is given by more than one source"},
		{[]string{"--from-env-file", "-", "--from-prompt", "A"}, "A=" + secret + "\n", "variable A is given by more than one source"},
		{[]string{"--from-prompt", "P"}, "", "cannot read the value of P from the terminal"},
	}
	for _, c := range cases {
		o := mustUploadArgs(t, append([]string{"x"}, c.args...)...)
		_, err := readUploadSecret(o, testInput(env, c.stdin))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.args, err, c.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: error %q contains the value", c.args, err)
		}
	}
}

// ---- SSH keys ----

// sshKeygen makes a key with the real ssh-keygen and returns its path.
func TestFormatSecretList(t *testing.T) {
	plaintext := `{"secrets":{
		"zeta":{"type":"environment","variables":["B_VAR","A_VAR"],"description":"Last <one> & \u001b[31m"},
		"alpha":{"type":"ssh","public_key":"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEx","extra":1},
		"mid":{"type":"environment","variables":[]},
		"new":{"type":"hardware-token","description":"d","public_key":"ignored"}
	}}`
	resp, err := checkSecretListResponse([]byte(plaintext))
	if err != nil {
		t.Fatal(err)
	}
	got, err := formatSecretList(resp)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "secrets": {
    "alpha": {
      "description": null,
      "public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEx",
      "type": "ssh"
    },
    "mid": {
      "description": null,
      "type": "environment",
      "variables": []
    },
    "new": {
      "description": "d",
      "type": "hardware-token"
    },
    "zeta": {
      "description": "Last <one> & \u001b[31m",
      "type": "environment",
      "variables": [
        "A_VAR",
        "B_VAR"
      ]
    }
  }
}
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	empty, _ := checkSecretListResponse([]byte(`{"secrets":{}}`))
	if got, _ := formatSecretList(empty); string(got) != "{\n  \"secrets\": {}\n}\n" {
		t.Errorf("empty list: %q", got)
	}
}

// What the device's app rejects in a SecretUpload is refused here first, as
// a usage error (exit status 2): a key that is neither Ed25519 nor RSA of
// 2048 to 16384 bits, and a name with surrounding whitespace.
func TestUploadRejectsWhatTheDeviceRejects(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		ok   bool
	}{
		{"rsa1024", []string{"-t", "rsa", "-b", "1024", "-N", ""}, false},
		{"ecdsa", []string{"-t", "ecdsa", "-N", ""}, false},
		{"rsa2048", []string{"-t", "rsa", "-b", "2048", "-N", ""}, true},
		{"ed25519", []string{"-t", "ed25519", "-N", ""}, true},
	} {
		path := sshKeygen(t, dir, c.name, c.args...)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		_, err = convertSSHPrivateKey(sshKeyInput{Data: data, Label: strconv.Quote(path), Path: path})
		var ue *usageError
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case !c.ok && !errors.As(err, &ue):
			t.Errorf("%s: error %v, want a usage error", c.name, err)
		}
	}
	for _, name := range []string{" github", "github ", "git\thub\t", "\u00a0x"} {
		_, err := parseSecretUploadArgs([]string{name, "--from-env", "A"})
		var ue *usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "whitespace") {
			t.Errorf("name %q: %v", name, err)
		}
	}
	if _, err := parseSecretUploadArgs([]string{"git hub", "--from-env", "A"}); err != nil {
		t.Errorf("a name with an inner space: %v", err)
	}
}
