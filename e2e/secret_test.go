// End-to-end `agentknock secret list` and `agentknock secret upload`
// (client-device protocol "SecretList" and "SecretUpload"): the list as
// the device holds it, never a value; every upload source reaches the
// device's review queue and, once accepted there, serves `run`.
package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// listedSecret is one entry of `agentknock secret list`.
type listedSecret struct {
	Description *string  `json:"description"`
	Type        string   `json:"type"`
	Variables   []string `json:"variables"`
	PublicKey   string   `json:"public_key"`
}

func (w *world) secretList() (map[string]listedSecret, string) {
	w.t.Helper()
	r := w.agentknock("secret", "list")
	if r.code != 0 {
		w.t.Fatalf("secret list: %s", r)
	}
	var list struct {
		Secrets map[string]listedSecret `json:"secrets"`
	}
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		w.t.Fatalf("secret list printed no JSON object {\"secrets\":{...}}: %v\n%s", err, r)
	}
	return list.Secrets, r.stdout
}

func TestSecretList(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	demo, user, alpha := secretValue(t, "demo"), secretValue(t, "user"), secretValue(t, "alpha")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": demo, "DEMO_USER": user}, "--description", "Demo access")
	w.setSecret("alpha", map[string]string{"ALPHA": alpha})
	pub := strings.TrimSpace(w.deviceOK("secret", "ssh", "zeta-ssh", "--generate", "ed25519").stdout)
	w.startServe(approvePairingPolicy, "")
	w.pair()

	got, raw := w.secretList()
	descr := "Demo access"
	want := map[string]listedSecret{
		"alpha":    {Type: "environment", Variables: []string{"ALPHA"}},
		"demo":     {Description: &descr, Type: "environment", Variables: []string{"DEMO_TOKEN", "DEMO_USER"}},
		"zeta-ssh": {Type: "ssh", PublicKey: pub},
	}
	for name, g := range got {
		sort.Strings(g.Variables)
		got[name] = g
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) {
		t.Fatalf("secret list:\n%s\nwant (up to variable order and formatting) %s", raw, wj)
	}
	// Sorted names, 2-space indentation, nothing else on standard output.
	if a, d, z := strings.Index(raw, `"alpha"`), strings.Index(raw, `"demo"`), strings.Index(raw, `"zeta-ssh"`); !(a < d && d < z) {
		t.Errorf("secret list is not sorted by name:\n%s", raw)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, []byte(raw), "", "  "); err != nil || strings.TrimSpace(indented.String()) != strings.TrimSpace(raw) {
		t.Errorf("secret list is not JSON indented by 2 spaces:\n%s", raw)
	}
	w.waitLog(`completion .*: SecretList`)
	for _, v := range []string{demo, user, alpha} {
		w.leakCheck(v)
	}
}

// upload is one device review-queue entry (`uploads --json`).
type upload struct {
	ID          string   `json:"id"`
	ClientID    string   `json:"client_id"`
	Mode        string   `json:"mode"`
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Variables   []string `json:"variables"`
	PublicKey   string   `json:"public_key"`
}

func (w *world) uploads() map[string]upload {
	w.t.Helper()
	r := w.deviceOK("uploads", "--json")
	var list []upload
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		w.t.Fatalf("uploads --json: %v\n%s", err, r)
	}
	m := map[string]upload{}
	for _, u := range list {
		sort.Strings(u.Variables)
		if _, dup := m[u.Name]; dup {
			w.t.Fatalf("two uploads named %s: %s", u.Name, r.stdout)
		}
		m[u.Name] = u
	}
	return m
}

// sshKeygen makes an Ed25519 key with the real ssh-keygen and returns the
// private key path and the public key without its comment.
func sshKeygen(t *testing.T, dir, name, passphrase string) (string, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-C", name+"@e2e", "-f", path).CombinedOutput()
	if err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	pub, err := os.ReadFile(path + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(pub))
	return path, f[0] + " " + f[1]
}

func TestSecretUpload(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startServe(`{"default":"approve","pairing":"approve"}`, "")
	clientID := w.pair()

	v := map[string]string{}
	for _, n := range []string{"ENV_A", "ENV_B", "ENV_C", "F1", "F2", "F3", "F4", "S1", "FILE_VAR", "STDIN_VAR", "PROMPT_VAR"} {
		v[n] = secretValue(t, strings.ToLower(n))
	}
	v["F3"] = "two\nlines " + v["F3"]
	v["FILE_VAR"] = v["FILE_VAR"] + "\n" // kept: --from-file takes the file exactly
	envFile := filepath.Join(w.input, "app.env")
	dotenv := "# settings\n\nexport F1=" + v["F1"] + "\nF2='" + v["F2"] + "'\nF3=\"two\\nlines " + strings.TrimPrefix(v["F3"], "two\nlines ") + "\"\nF4=   " + v["F4"] + "   # trailing comment\n"
	if err := os.WriteFile(envFile, []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	valueFile := filepath.Join(w.input, "value.txt")
	if err := os.WriteFile(valueFile, []byte(v["FILE_VAR"]), 0o600); err != nil {
		t.Fatal(err)
	}
	passphrase := secretValue(t, "passphrase")
	keyPath, pub := sshKeygen(t, w.input, "plain", "")
	lockedPath, lockedPub := sshKeygen(t, w.input, "locked", passphrase)

	type job struct {
		opts runOpts
		args []string
	}
	jobs := map[string]job{
		"up-env":       {runOpts{env: []string{"ENV_A=" + v["ENV_A"]}}, []string{"--from-env", "ENV_A", "--description", "from the environment"}},
		"up-envfile":   {runOpts{}, []string{"--from-env-file", envFile}},
		"up-envstdin":  {runOpts{stdin: "S1=" + v["S1"] + "\n"}, []string{"--from-env-file", "-"}},
		"up-file":      {runOpts{}, []string{"--from-file", "FILE_VAR=" + valueFile}},
		"up-filestdin": {runOpts{stdin: v["STDIN_VAR"]}, []string{"--from-file", "STDIN_VAR=-"}},
		"up-ssh":       {runOpts{}, []string{"--from-ssh-key", keyPath}},
		"up-sshlocked": {runOpts{env: []string{"KEY_PASSPHRASE=" + passphrase}}, []string{"--from-ssh-key", lockedPath, "--passphrase-env", "KEY_PASSPHRASE"}},
	}
	for name, j := range jobs {
		r := w.agentknockWith(j.opts, append([]string{"secret", "upload", name}, j.args...)...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "Secret upload \""+name+"\" delivered to the device.\n") {
			t.Fatalf("secret upload %s: %s", name, r)
		}
	}
	prompted := havePty && w.uploadFromPrompt("up-prompt", "PROMPT_VAR", v["PROMPT_VAR"])

	// A malformed dotenv line is reported by number, without its text.
	broken := secretValue(t, "broken")
	r := w.agentknockWith(runOpts{stdin: "OK=1\nnot a dotenv line " + broken + "\n"}, "secret", "upload", "up-broken", "--from-env-file", "-")
	if r.code == 0 || !strings.Contains(r.stderr, "line 2") {
		t.Fatalf("secret upload of a malformed dotenv file: %s", r)
	}

	// Proposals only: nothing is usable before a person accepts them.
	marker := w.markerPath("ran")
	if r := w.agentknock("-s", "up-env", "--", "touch", marker); r.code != 1 || exists(marker) {
		t.Fatalf("run with an upload not yet accepted: %s", r)
	}
	queue := w.uploads()
	want := map[string]upload{
		"up-env":       {Type: "environment", Description: "from the environment", Variables: []string{"ENV_A"}},
		"up-envfile":   {Type: "environment", Variables: []string{"F1", "F2", "F3", "F4"}},
		"up-envstdin":  {Type: "environment", Variables: []string{"S1"}},
		"up-file":      {Type: "environment", Variables: []string{"FILE_VAR"}},
		"up-filestdin": {Type: "environment", Variables: []string{"STDIN_VAR"}},
		"up-ssh":       {Type: "ssh", PublicKey: pub},
		"up-sshlocked": {Type: "ssh", PublicKey: lockedPub},
	}
	if prompted {
		want["up-prompt"] = upload{Type: "environment", Variables: []string{"PROMPT_VAR"}}
	}
	if len(queue) != len(want) {
		t.Fatalf("device review queue has %d uploads, want %d: %+v", len(queue), len(want), queue)
	}
	for name, wu := range want {
		u := queue[name]
		keyOK := wu.PublicKey == "" && u.PublicKey == "" || wu.PublicKey != "" && strings.HasPrefix(u.PublicKey, wu.PublicKey)
		if u.Mode != "CREATE" || u.ClientID != clientID || u.Type != wu.Type || u.Description != wu.Description || !keyOK ||
			strings.Join(u.Variables, ",") != strings.Join(wu.Variables, ",") {
			t.Errorf("upload %s on the device: %+v, want %+v from client %s", name, u, wu, clientID)
		}
		w.deviceOK("upload", "accept", u.ID)
	}
	if left := w.uploads(); len(left) != 0 {
		t.Fatalf("uploads left after accepting all: %+v", left)
	}

	// Accepted: run gets exactly what was uploaded.
	names := []string{"ENV_A", "F1", "F2", "F3", "F4", "S1", "FILE_VAR", "STDIN_VAR"}
	args := []string{"-s", "up-env", "-s", "up-envfile", "-s", "up-envstdin", "-s", "up-file", "-s", "up-filestdin"}
	if prompted {
		names = append(names, "PROMPT_VAR")
		args = append(args, "-s", "up-prompt")
	}
	r = w.agentknock(append(args, "--", "sh", "-c", envReport(names...))...)
	var wantOut strings.Builder
	for _, n := range names {
		wantOut.WriteString(reportLine(n, v[n]) + "\n")
	}
	if r.code != 0 || r.stdout != wantOut.String() {
		t.Fatalf("run with the accepted uploads: %s\nwant stdout:\n%s", r, wantOut.String())
	}
	list, _ := w.secretList()
	if list["up-ssh"].Type != "ssh" || !strings.HasPrefix(list["up-ssh"].PublicKey, pub) ||
		!strings.HasPrefix(list["up-sshlocked"].PublicKey, lockedPub) {
		t.Fatalf("secret list after accepting the SSH keys: %+v", list)
	}

	// --update keeps what it does not name, --replace drops it.
	if r := w.agentknockWith(runOpts{env: []string{"ENV_B=" + v["ENV_B"]}}, "secret", "upload", "up-env", "--update", "--from-env", "ENV_B"); r.code != 0 {
		t.Fatalf("secret upload --update: %s", r)
	}
	u := w.uploads()["up-env"]
	if u.Mode != "UPDATE" {
		t.Fatalf("update upload on the device: %+v", u)
	}
	w.deviceOK("upload", "accept", u.ID)
	r = w.agentknock("-s", "up-env", "--", "sh", "-c", envReport("ENV_A", "ENV_B", "ENV_C"))
	if want := reportLine("ENV_A", v["ENV_A"]) + "\n" + reportLine("ENV_B", v["ENV_B"]) + "\nENV_C=unset\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("run after --update: %s\nwant:\n%s", r, want)
	}
	if r := w.agentknockWith(runOpts{env: []string{"ENV_C=" + v["ENV_C"]}}, "secret", "upload", "up-env", "--replace", "--from-env", "ENV_C"); r.code != 0 {
		t.Fatalf("secret upload --replace: %s", r)
	}
	u = w.uploads()["up-env"]
	if u.Mode != "REPLACE" {
		t.Fatalf("replace upload on the device: %+v", u)
	}
	w.deviceOK("upload", "accept", u.ID)
	r = w.agentknock("-s", "up-env", "--", "sh", "-c", envReport("ENV_A", "ENV_B", "ENV_C"))
	if want := "ENV_A=unset\nENV_B=unset\n" + reportLine("ENV_C", v["ENV_C"]) + "\n"; r.code != 0 || r.stdout != want {
		t.Fatalf("run after --replace: %s\nwant:\n%s", r, want)
	}

	for _, s := range v {
		w.leakCheck(s)
	}
	w.leakCheck(passphrase)
	w.leakCheck(broken)
}

// uploadFromPrompt uploads NAME with --from-prompt VAR on a pseudo-terminal,
// typing value once echo is off. It reports whether it could.
func (w *world) uploadFromPrompt(name, variable, value string) bool {
	w.t.Helper()
	p, err := openPty()
	if err != nil {
		w.t.Logf("no pseudo-terminal (%v): --from-prompt not checked", err)
		return false
	}
	defer p.close()
	var screen lockedBuffer
	drained := make(chan struct{})
	go func() {
		// Ends with EIO once no slave side is open any more.
		defer close(drained)
		buf := make([]byte, 4096)
		for {
			n, err := p.master.Read(buf)
			screen.Write(buf[:n])
			if err != nil {
				return
			}
		}
	}()
	cmd := exec.Command(agentknockBin, "secret", "upload", name, "--from-prompt", variable)
	cmd.Env = w.clientEnv(runOpts{})
	cmd.Dir = w.work
	cmd.Stdin = p.slave
	cmd.SysProcAttr = p.sysProcAttr()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.Now().Add(waitGuard)
	for {
		on, err := p.echoOn()
		if err != nil {
			w.t.Fatal(err)
		}
		if !on {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			<-exited
			w.t.Fatalf("secret upload --from-prompt never turned echo off; stderr:\n%s\nterminal:\n%q", stderr.String(), screen.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := p.master.Write([]byte(value + "\n")); err != nil {
		w.t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(processGuard):
		cmd.Process.Kill()
		<-exited
		w.t.Fatalf("secret upload --from-prompt hung; stderr:\n%s", stderr.String())
	}
	w.record(stdout.String(), stderr.String())
	if on, err := p.echoOn(); err != nil || !on {
		w.t.Errorf("the terminal's echo was not restored (echo %v, %v)", on, err)
	}
	p.slave.Close()
	select {
	case <-drained:
	case <-time.After(waitGuard):
		w.t.Fatal("the terminal's output never ended (deadlock guard)")
	}
	w.record(screen.String()) // the terminal counts as output: no echo
	if code := statusOf(cmd.ProcessState); code != 0 || !strings.HasPrefix(stdout.String(), "Secret upload \""+name+"\" delivered") {
		w.t.Fatalf("secret upload --from-prompt: exit %d\n%s\nterminal:\n%q", code, stderr.String(), screen.String())
	}
	return true
}
