// Tests of `agentknock secret` without a device: the command line, the
// reading of sources and the JSON of `secret list` (the dotenv format and
// the SSH-key conversion have files of their own).

package main

import (
	"bytes"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/crypto/ssh"
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

// Tests of the dotenv reader (secret_dotenv.go): the values dotenvy would
// give for the same file, malformed files and line numbers in errors.

// noEnv is an empty environment for substitution.
func noEnv(string) (string, bool) { return "", false }

// TestParseDotenv is the table of dotenvy 0.15.7's behaviour (the crate the
// reference client reads --from-env-file with): each expected value follows
// dotenvy's documentation and its own tests (tests/test-variable-
// substitution.rs, the parse.rs unit tests), so a file uploads the same
// values from either client.
func TestParseDotenv(t *testing.T) {
	type kv = [2]string
	env := func(name string) (string, bool) {
		v, ok := map[string]string{"KEY": "value", "KEY1": "value1", "HOME": "/home/me"}[name]
		return v, ok
	}
	cases := []struct {
		name string
		in   string
		want []kv
	}{
		{"plain", "A=1\nB=two\n", []kv{{"A", "1"}, {"B", "two"}}},
		{"blank lines and comments", "\n# comment\n   # indented comment\n\nA=1\n\n", []kv{{"A", "1"}}},
		{"export prefix", "export A=1\nexport   SHELL_LOVER=1\n", []kv{{"A", "1"}, {"SHELL_LOVER", "1"}}},
		{"a variable named export", "export=3\n", []kv{{"export", "3"}}},
		{"spaces around the equals sign", "A = x\nB= y\nC =z\n", []kv{{"A", "x"}, {"B", "y"}, {"C", "z"}}},
		{"trailing spaces are dropped", "A=x  \t\n", []kv{{"A", "x"}}},
		{"inline comment after a space", "A=value # note\nB=x\t#note\n", []kv{{"A", "value"}, {"B", "x"}}},
		{"hash inside a value, a value starting with hash is a comment", "A=a#b\nB=#start\n", []kv{{"A", "a#b"}, {"B", ""}}},
		{"empty values", "A=\nB=''\nC=\"\"\nD=     \nE=   # foo\n", []kv{{"A", ""}, {"B", ""}, {"C", ""}, {"D", ""}, {"E", ""}}},
		{"single quotes are literal", `A='x\ny $KEY ${KEY} "q" # not a comment'`, []kv{{"A", `x\ny $KEY ${KEY} "q" # not a comment`}}},
		{"quoted spaces", "A='fo ur'\nB=\"fi ve\"\n", []kv{{"A", "fo ur"}, {"B", "fi ve"}}},
		{"escaped space unquoted", `A=s\ ix` + "\n" + `B=my\ cool\ value`, []kv{{"A", "s ix"}, {"B", "my cool value"}}},
		{"double-quote escapes", `A="awesome stuff \"mang\""` + "\n" + `B="l1\nl2 \\ \$KEY \' end"`, []kv{{"A", `awesome stuff "mang"`}, {"B", "l1\nl2 \\ $KEY ' end"}}},
		{"pieces join", `A='sweet $\fgs'\''fds'` + "\n" + `B="'\"yay\\"\ "stuff"`, []kv{{"A", `sweet $\fgs'fds`}, {"B", `'"yay\ stuff`}}},
		{"comment after the closing quote", `A="lol" #well you see` + "\nB='w'  \n", []kv{{"A", "lol"}, {"B", "w"}}},
		{"quoted value over lines", "A=\"first\nsecond\"\nB='x\ny'\nC=3\n", []kv{{"A", "first\nsecond"}, {"B", "x\ny"}, {"C", "3"}}},
		{"comment containing a quote", "# don't\nA=1\n", []kv{{"A", "1"}}},
		{"CRLF line ends", "A=1\r\nB=\"2\"\r\n", []kv{{"A", "1"}, {"B", "2"}}},
		{"no final newline", "A=1", []kv{{"A", "1"}}},
		{"equals in value", "A=b=c\n", []kv{{"A", "b=c"}}},
		{"unicode value", "A=été✓\n", []kv{{"A", "été✓"}}},
		// Substitution (tests/test-variable-substitution.rs): the environment
		// first, then earlier lines; a bare name is letters and digits only.
		{"substitution table", "KEY1=new_value1\nKEY_U=$KEY+valueU\n" +
			"STRONG='$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY'\n" +
			"WEAK=\"$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY\"\n" +
			"NONE=$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY\n",
			[]kv{{"KEY1", "new_value1"}, {"KEY_U", "value+valueU"},
				{"STRONG", "$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY"},
				{"WEAK", ">>value>>value1>>value1>>value_U>>value+valueU>>$KEY"},
				{"NONE", ">>value>>value1>>value1>>value_U>>value+valueU>>$KEY"}}},
		{"braces in double quotes", "B=test\nC=\"${B}\"\n", []kv{{"B", "test"}, {"C", "test"}}},
		{"undefined is empty", `A=">$NOPE<>${NOPE2}<"`, []kv{{"A", "><><"}}},
		{"escaped dollar", `A=>\$KEY1<>\${KEY2}<` + "\n" + `B=">\$KEY1<>\${KEY2}<"`, []kv{{"A", ">$KEY1<>${KEY2}<"}, {"B", ">$KEY1<>${KEY2}<"}}},
		{"same variable twice", "V=VALUE\nW=$V$V\n", []kv{{"V", "VALUE"}, {"W", "VALUEVALUE"}}},
		{"only earlier lines", "X=${Y}+X_VALUE\nY=${X}+Y_VALUE\n", []kv{{"X", "+X_VALUE"}, {"Y", "+X_VALUE+Y_VALUE"}}},
		{"bare name ends at separators", "U=test_user\nU_1=test_user_with_separator\nA=\">$U_1<>$U}<>$U{<\"\n",
			[]kv{{"U", "test_user"}, {"U_1", "test_user_with_separator"}, {"A", ">test_user_1<>test_user}<>test_user{<"}}},
		{"environment overrides the file", "KEY=file\nA=\">${KEY}<\"\nHOMEDIR=$HOME/x\n", []kv{{"KEY", "file"}, {"A", ">value<"}, {"HOMEDIR", "/home/me/x"}}},
		{"a lone dollar disappears", "A=pa$$word\nB=cost$-5\n", []kv{{"A", "pa"}, {"B", "cost-5"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, err := parseDotenv(`".env"`, []byte(c.in), env)
			if err != nil {
				t.Fatal(err)
			}
			var got []kv
			for _, e := range entries {
				got = append(got, kv{e.Name, e.Value})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseDotenvLineNumbers(t *testing.T) {
	entries, err := parseDotenv("f", []byte("# c\n\nA=1\nB=\"x\ny\"\nC=3\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, e := range entries {
		lines = append(lines, e.Line)
	}
	if !slices.Equal(lines, []int{3, 4, 6}) {
		t.Errorf("lines %v, want [3 4 6]", lines)
	}
}

// TestParseDotenvMalformed: what dotenvy rejects is rejected, with the line
// number in the error and neither the value nor the text of the line: the
// secret "hunter2" is on every malformed line.
func TestParseDotenvMalformed(t *testing.T) {
	const secret = "hunter2"
	cases := []struct {
		name string
		in   string
		line int
	}{
		{"no equals sign", "A=1\nhunter2\n", 2},
		{"bad name", "A=1\n\n9hunter2=x\n", 3},
		{"name with a space", "MY hunter2=x\n", 1},
		{"name with a dot", "A.hunter2=x\n", 1},
		{"empty name", "=hunter2\n", 1},
		{"unquoted space", "A=my hunter2 value\n", 1},
		{"unterminated double quote", "A=1\nB=\"hunter2\nC=2\n", 2},
		{"unterminated single quote", "B='hunter2\n", 1},
		{"unterminated braces", "A=>${hunter2{<\n", 1},
		{"a bare name before the closing quote", "A=\"$hunter2\"\n", 1},
		{"unknown escape", `A="hunter2\q"`, 1},
		{"tab escape", `A="hunter2\t"`, 1},
		{"backslash at line end", "A=\"hunter2\\\n\"", 1},
		{"invalid UTF-8", "A=1\nB=hunter2\xff\n", 2},
		{"invalid UTF-8 inside quotes", "A=\"hunter2\n\xff\"\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseDotenv(`"secrets.env"`, []byte(c.in), noEnv)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, `environment file "secrets.env" isn't valid: line `+strconv.Itoa(c.line)+": ") {
				t.Errorf("error %q does not name the file and line %d", msg, c.line)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "hunter") {
				t.Errorf("error %q contains the secret", msg)
			}
		})
	}
}

// ---- command line ----

// Tests of the SSH-key source (secret_sshkey.go), against keys that the
// real ssh-keygen writes: every supported type, passphrases, legacy PEM.

func sshKeygen(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("ssh-keygen"); err != nil {
		t.Skip("ssh-keygen is not installed")
	}
	path := filepath.Join(dir, name)
	cmd := exec.Command("ssh-keygen", append([]string{"-q", "-f", path}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen %q: %v\n%s", args, err, out)
	}
	return path
}

// checkConverted verifies an upload key: unencrypted OpenSSH PEM that
// checkUploadPrivateKey accepts, the same public key as the source's .pub
// file, and the source's comment.
func checkConverted(t *testing.T, text, pubPath, comment string) {
	t.Helper()
	if err := checkUploadPrivateKey(text); err != nil {
		t.Fatalf("checkUploadPrivateKey: %v", err)
	}
	if block, rest := pem.Decode([]byte(text)); block == nil || block.Type != "OPENSSH PRIVATE KEY" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("not one OpenSSH PEM block:\n%s", text)
	}
	signer, err := ssh.ParsePrivateKey([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	pubText, err := os.ReadFile(pubPath)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _, _, err := ssh.ParseAuthorizedKey(pubText)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(signer.PublicKey().Marshal(), want.Marshal()) {
		t.Error("the converted key has another public key")
	}
	block, _ := pem.Decode([]byte(text))
	info, err := inspectOpenSSHKey(block.Bytes)
	if err != nil || info.Encrypted || info.Comment != comment {
		t.Errorf("converted key: %+v, %v; want unencrypted with comment %q", info, err, comment)
	}
}

func convertFile(t *testing.T, path string, passphrase func() ([]byte, error)) (string, error) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return convertSSHPrivateKey(sshKeyInput{Data: data, Label: sourceLabel(path), Path: path, Passphrase: passphrase})
}

func fixedPassphrase(p string) func() ([]byte, error) {
	return func() ([]byte, error) { return []byte(p), nil }
}

func TestSSHKeyConversion(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	t.Run("unencrypted ed25519", func(t *testing.T) {
		path := sshKeygen(t, dir, "ed", "-t", "ed25519", "-N", "", "-C", "dev@laptop")
		text, err := convertFile(t, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkConverted(t, text, path+".pub", "dev@laptop")
	})
	t.Run("encrypted ed25519 with a passphrase", func(t *testing.T) {
		path := sshKeygen(t, dir, "ed-enc", "-t", "ed25519", "-N", "correct horse", "-C", "enc@laptop")
		if _, err := convertFile(t, path, nil); err == nil || !strings.Contains(err.Error(), "--passphrase-prompt") {
			t.Errorf("without a passphrase: %v", err)
		}
		if _, err := convertFile(t, path, fixedPassphrase("wrong")); err == nil || !strings.Contains(err.Error(), "incorrect") {
			t.Errorf("wrong passphrase: %v", err)
		}
		text, err := convertFile(t, path, fixedPassphrase("correct horse"))
		if err != nil {
			t.Fatal(err)
		}
		// The comment of an encrypted key comes from its .pub file.
		checkConverted(t, text, path+".pub", "enc@laptop")
		if strings.Contains(text, "correct horse") {
			t.Error("the passphrase is in the output")
		}
	})
	t.Run("RSA", func(t *testing.T) {
		path := sshKeygen(t, dir, "rsa", "-t", "rsa", "-b", "2048", "-N", "", "-C", "rsa key")
		text, err := convertFile(t, path, nil)
		if err != nil {
			t.Fatal(err)
		}
		checkConverted(t, text, path+".pub", "rsa key")
	})
	t.Run("no passphrase asked for an unencrypted key", func(t *testing.T) {
		path := sshKeygen(t, dir, "plain", "-t", "ed25519", "-N", "", "-C", "")
		asked := false
		text, err := convertFile(t, path, func() ([]byte, error) { asked = true; return nil, errors.New("asked") })
		if err != nil || asked {
			t.Fatalf("err %v, asked %v", err, asked)
		}
		checkConverted(t, text, path+".pub", "")
	})
	t.Run("legacy PEM refused with the hint", func(t *testing.T) {
		path := sshKeygen(t, dir, "legacy", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "")
		data, _ := os.ReadFile(path)
		if !bytes.HasPrefix(data, []byte("-----BEGIN RSA PRIVATE KEY-----")) {
			t.Fatalf("ssh-keygen -m PEM wrote:\n%.40s", data)
		}
		_, err := convertFile(t, path, nil)
		if err == nil || !strings.Contains(err.Error(), "uses legacy PEM format") || !strings.Contains(err.Error(), "ssh-keygen -p -f "+path) {
			t.Fatalf("error %v", err)
		}
		// The hinted command does turn it into a key that converts.
		if out, err := exec.Command("ssh-keygen", "-q", "-p", "-f", path, "-N", "", "-P", "").CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen -p: %v\n%s", err, out)
		}
		text, err := convertFile(t, path, nil)
		if err != nil {
			t.Fatalf("after ssh-keygen -p: %v", err)
		}
		checkConverted(t, text, path+".pub", "")
	})
	t.Run("PKCS#8 refused", func(t *testing.T) {
		path := sshKeygen(t, dir, "pkcs8", "-t", "rsa", "-b", "2048", "-m", "PKCS8", "-N", "")
		if data, _ := os.ReadFile(path); !bytes.HasPrefix(data, []byte("-----BEGIN PRIVATE KEY-----")) {
			t.Fatalf("ssh-keygen -m PKCS8 wrote:\n%.40s", data)
		}
		if _, err := convertFile(t, path, nil); err == nil || !strings.Contains(err.Error(), "ssh-keygen -p -f") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("ECDSA refused", func(t *testing.T) {
		path := sshKeygen(t, dir, "ecdsa", "-t", "ecdsa", "-N", "")
		if _, err := convertFile(t, path, nil); err == nil || !strings.Contains(err.Error(), "only Ed25519 and RSA") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("public key given", func(t *testing.T) {
		path := sshKeygen(t, dir, "pub", "-t", "ed25519", "-N", "")
		if _, err := convertFile(t, path+".pub", nil); err == nil || !strings.Contains(err.Error(), "public key") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("from standard input", func(t *testing.T) {
		path := sshKeygen(t, dir, "stdin", "-t", "ed25519", "-N", "", "-C", "piped")
		data, _ := os.ReadFile(path)
		o := mustUploadArgs(t, "k", "--from-ssh-key", "-")
		s, err := readUploadSecret(o, testInput(nil, string(data)))
		if err != nil {
			t.Fatal(err)
		}
		if s.Type != secretTypeSSH || len(s.Variables) != 0 {
			t.Fatalf("secret %+v", s.Type)
		}
		checkConverted(t, string(s.PrivateKey), path+".pub", "piped")
		if _, err := newSecretUploadRequest(o.Mode, s); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("passphrase from the environment", func(t *testing.T) {
		path := sshKeygen(t, dir, "envpw", "-t", "ed25519", "-N", "pw from env", "-C", "c")
		o := mustUploadArgs(t, "k", "--from-ssh-key", path, "--passphrase-env", "KEY_PW")
		if _, err := readUploadSecret(o, testInput(nil, "")); err == nil || !strings.Contains(err.Error(), "KEY_PW (--passphrase-env) is not set") {
			t.Errorf("unset variable: %v", err)
		}
		s, err := readUploadSecret(o, testInput(map[string]string{"KEY_PW": "pw from env"}, ""))
		if err != nil {
			t.Fatal(err)
		}
		checkConverted(t, string(s.PrivateKey), path+".pub", "c")
	})
}

// ---- secret list ----
