// secret upload through a fake device on a real relay connection: values,
// SSH keys, refusals, and failures that never show a value.

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSecretUploadThroughRelay(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	dir := t.TempDir()
	envFile := filepath.Join(dir, "app.env")
	os.WriteFile(envFile, []byte("# app\nexport DB_URL=\"postgres://u:p@h/db\"\n"), 0o600)
	cmd := d.cmd("upload", "--from-env", "API_TOKEN", "app", "--update", "--description", "", "--from-env-file", envFile, "--from-file", "CERT=-")
	cmd.Env = secretEnv("API_TOKEN=tok-123")
	cmd.Stdin = strings.NewReader("-----CERT-----\n\n")
	r := runSecret(t, cmd)
	// The reference client's three lines on standard output, and nothing
	// on standard error for a quick exchange.
	wantOut := "Secret upload \"app\" delivered to the device.\n" +
		"The secret isn't available until you approve the upload on the device.\n" +
		"Suggested action: Review the secret upload on the device.\n"
	if r.code != 0 || r.stdout != wantOut || r.stderr != "" {
		t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
	}
	var up secretTestUpload
	var done secretTestCompletion
	d.received(&up, &done)
	want := map[string]string{"API_TOKEN": "tok-123", "DB_URL": "postgres://u:p@h/db", "CERT": "-----CERT-----\n\n"}
	if up.Method != "SecretUpload" || up.Mode != "UPDATE" || up.Secret.Name != "app" || up.Secret.Type != "environment" ||
		up.Secret.Description == nil || *up.Secret.Description != "" || len(up.Secret.Variables) != len(want) {
		t.Fatalf("request %+v", up)
	}
	for k, v := range want {
		if got := up.Secret.Variables[k]["value"]; got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if done.Result != resultReceived || done.Message != nil || done.AppInfo == nil {
		t.Errorf("completion %+v, want RECEIVED", done)
	}
	for _, v := range want {
		if strings.Contains(r.stderr, v) {
			t.Errorf("stderr contains a value: %q", r.stderr)
		}
	}
}

func TestSecretUploadSSHKeyThroughRelay(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, func([]byte) string { return `{"result":"RECEIVED"}` })
	path := sshKeygen(t, t.TempDir(), "id", "-t", "ed25519", "-N", "pass phrase", "-C", "me@host")
	cmd := d.cmd("upload", "deploy", "--from-ssh-key", path, "--passphrase-env", "KEY_PASS", "--replace", "--description", "Deploy key")
	cmd.Env = secretEnv("KEY_PASS=pass phrase")
	r := runSecret(t, cmd)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	var up secretTestUpload
	d.received(&up, nil)
	if up.Mode != "REPLACE" || up.Secret.Type != "ssh" || *up.Secret.Description != "Deploy key" || up.Secret.Variables != nil {
		t.Fatalf("request %+v", up)
	}
	checkConverted(t, up.Secret.PrivateKey, path+".pub", "me@host")
}

func TestSecretUploadRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, response, stderr, result, reason string
		message                                string // the completion's, when not ""
	}{
		{"rejected", `{"result":"REJECTED","message":"name taken \u001b]0;x\u0007"}`, `The device rejected the secret upload: name taken \x1b]0;x\x07`, resultRejected, "", "name taken \x1b]0;x\x07"},
		{"device error", `{"error":"INVALID_REQUEST","message":"bad"}`, "the device reported an error: INVALID_REQUEST: bad.\nAgentknock didn't receive confirmation that the device saved the upload", resultAborted, abortClientError, ""},
		{"invalid", `{"result":"STORED"}`, "the device's response is invalid (invalid device response: unexpected result \"STORED\").\nAgentknock didn't receive confirmation", resultAborted, abortInvalidResponse, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := newSecretTestDevice(t, func([]byte) string { return c.response })
			cmd := d.cmd("upload", "x", "--from-env", "V")
			cmd.Env = secretEnv("V=value-that-stays-secret")
			r := runSecret(t, cmd)
			if r.code != 1 || !strings.Contains(r.stderr, c.stderr) || strings.Contains(r.stderr, "value-that-stays-secret") {
				t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
			}
			var done secretTestCompletion
			d.received(&map[string]any{}, &done)
			if done.Result != c.result || done.Reason != c.reason || (c.message != "" && (done.Message == nil || *done.Message != c.message)) {
				t.Errorf("completion %+v, want %s/%s", done, c.result, c.reason)
			}
		})
	}
}

// TestSecretUploadFailuresHideValues: failures after the sources were read
// (by the relay, by the client's own checks) never print a value.
func TestSecretUploadFailuresHideValues(t *testing.T) {
	t.Parallel()
	const value = "v4lue-n0t-for-0utput"
	d := newSecretTestDevice(t, nil)
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	cases := []struct {
		args  []string
		stdin string
		want  string
	}{
		{[]string{"--from-env", "V"}, "", "not active"},
		{[]string{"--from-file", "V=" + write("v", value)}, "", "not active"},
		{[]string{"--from-env-file", "-"}, "A=" + value + "\n" + value + "\n", "environment file standard input isn't valid: line 2: expected NAME=VALUE"},
		{[]string{"--from-env-file", write("q.env", "A=\""+value+"\\x\"\n")}, "", "line 1: unsupported escape"},
		{[]string{"--from-file", "V=" + write("nul", value+"\x00")}, "", "value of V contains a NUL byte"},
		{[]string{"--from-env", "W"}, "", "environment variable W (--from-env) is not set"},
	}
	for _, c := range cases {
		cmd := d.cmd(append([]string{"upload", "x"}, c.args...)...)
		cmd.Env = secretEnv("V=" + value)
		cmd.Stdin = strings.NewReader(c.stdin)
		r := runSecret(t, cmd)
		if r.code != 1 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", c.args, r.code, r.stderr, c.want)
		}
		if strings.Contains(r.stderr+r.stdout, value) {
			t.Errorf("%q: the value is in the output: %q", c.args, r.stderr)
		}
	}
}

// TestSecretPromptWithoutTerminal: --from-prompt refuses when the process
// has no controlling terminal.
func TestSecretPromptWithoutTerminal(t *testing.T) {
	t.Parallel()
	d := newSecretTestDevice(t, nil)
	cmd := d.cmd("upload", "x", "--from-prompt", "TOKEN")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	r := runSecret(t, cmd)
	if r.code != 1 || !strings.Contains(r.stderr, "there is no terminal to prompt on") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestSecretStdinTerminalRefused is in secret_prompt_linux_test.go, which
// has the pseudo-terminal.
