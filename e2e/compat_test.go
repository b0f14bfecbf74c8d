// Compatibility with the reference Rust client (agentknock/agentknock-cli
// 0.6.2): what its integration tests (tests/pairing.rs, tests/run.rs,
// tests/secret_list.rs, tests/secret_upload.rs) and its printing code assert
// about observable behaviour, checked here with the built client, the local
// relay and the software device: the exact lines scripts read, the stream
// each goes to, silence for a quick exchange, the global options, the
// request fields the device receives, the pairing file and the uploaded
// values.
package e2e

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// fullPending is the part of `agentknock-device pending --json` these
// tests read.
type fullPending struct {
	ID       string `json:"id"`
	Kind     string `json:"kind"`
	ClientID string `json:"client_id"`
	Pairing  *struct {
		Hostname     string `json:"hostname"`
		MachineID    string `json:"machine_id"`
		Platform     string `json:"platform"`
		Architecture string `json:"architecture"`
		OSVersion    string `json:"os_version"`
		AppName      string `json:"app_name"`
	} `json:"pairing"`
	Invocation *struct {
		Reason         string   `json:"reason"`
		Command        string   `json:"command"`
		Arguments      []string `json:"arguments"`
		ExecutablePath string   `json:"executable_path"`
		ExecutableHash string   `json:"executable_hash"`
		ExecutableMode string   `json:"executable_mode"`
		Stdin          string   `json:"stdin"`
		Stdout         string   `json:"stdout"`
		Stderr         string   `json:"stderr"`
		LauncherChain  []string `json:"launcher_chain"`
	} `json:"invocation"`
}

func (w *world) fullPending() []fullPending {
	w.t.Helper()
	w.waitPending()
	r := w.deviceOK("pending", "--json")
	var items []fullPending
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
		w.t.Fatalf("pending --json: %v\n%s", err, r)
	}
	return items
}

// trimmedFile is what the reference reads for pairing metadata: the file
// trimmed, "" when it is missing.
func trimmedFile(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// expectedPairingHost is the host metadata the reference sends: on Linux
// from /etc, on macOS kern.hostname, no machine id and "macOS" with the
// product version (what sw_vers prints).
func expectedPairingHost(t *testing.T) (platform, hostname, machineID, osVersion string) {
	if runtime.GOOS != "darwin" {
		return "linux", trimmedFile("/etc/hostname"), trimmedFile("/etc/machine-id"), prettyName()
	}
	host, err := exec.Command("sysctl", "-n", "kern.hostname").Output()
	if err != nil {
		t.Fatalf("sysctl kern.hostname: %v", err)
	}
	version, err := exec.Command("sw_vers", "-productVersion").Output()
	if err != nil {
		t.Fatalf("sw_vers: %v", err)
	}
	return "macos", strings.TrimSpace(string(host)), "", "macOS " + strings.TrimSpace(string(version))
}

func prettyName() string {
	for line := range strings.SplitSeq(trimmedFile("/etc/os-release"), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

const (
	notPairedLines = "Pairing status: not paired.\nSuggested action: Get a pairing address, then run:\nagentknock pairing start <PAIRING_ADDRESS>\n"
	pendingLines   = "Pairing status: waiting for confirmation.\nSuggested action: After you approve the pairing on the device, run:\nagentknock pairing finish\n"
	activeLines    = "Pairing status: active.\n"
)

// Follows tests/pairing.rs starts_and_finishes_pairing_over_websockets
// (the pending file, its members and mode, the metadata the device
// receives, the activation), abort_pairing_removes_only_a_pending_pairing
// and unpairs_after_an_authenticated_device_response, with the lines the
// reference prints for each pairing command (print_start_pairing_success,
// print_pairing_status and the results of finish, abort and remove), all on
// standard output and nothing on standard error.
func TestCompatPairingCommands(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": secretValue(t, "compat")})
	w.startServe(askPairingPolicy, "")

	exact := func(what string, r result, stdout string) {
		t.Helper()
		if r.code != 0 || r.stdout != stdout || r.stderr != "" {
			t.Fatalf("%s: %s\nwant exit 0, stdout %q, empty stderr", what, r, stdout)
		}
	}
	// --agentknock-home is global: before or after the subcommand, over
	// AGENTKNOCK_HOME (agentknock_home_is_global_and_stops_at_the_command_separator).
	other := filepath.Join(w.root, "other home")
	exact("status before pairing", w.agentknock("pairing", "status"), notPairedLines)
	exact("--agentknock-home before the subcommand", w.agentknock("--agentknock-home", other, "pairing", "status"), notPairedLines)

	r := w.agentknock("pairing", "start", w.address)
	m := sasLine.FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("pairing start: %s", r)
	}
	exact("pairing start", r, "Pairing started.\nVerification code:\n"+m[1]+"\n"+
		"Compare the full verification code with the code on the device.\n"+
		"If the codes match, approve the pairing on the device. Then run:\nagentknock pairing finish\n"+
		"If the codes don't match, reject the pairing on the device. Then run:\nagentknock pairing abort\n")

	// The pending file has the reference's members, mode 0600.
	st := w.pairingFile()
	var members []string
	for k := range st {
		members = append(members, k)
	}
	slices.Sort(members)
	if want := []string{"client_id", "client_psk", "client_token", "device_id", "device_key", "pending", "rotated_at"}; !slices.Equal(members, want) || st["pending"] != true {
		t.Fatalf("pending pairing.json members %v (pending %v), want %v", members, st["pending"], want)
	}
	if tok, err := base64.RawURLEncoding.DecodeString(st["client_token"].(string)); err != nil || len(tok) != 32 {
		t.Fatalf("client_token %v", st["client_token"])
	}
	checkMode(t, filepath.Join(w.home, "pairing.json"), 0o600)

	// The metadata the device shows, from the reference's sources.
	items := w.fullPending()
	if len(items) != 1 || items[0].Pairing == nil {
		t.Fatalf("pending = %+v, want one pairing", items)
	}
	p := items[0].Pairing
	platform, hostname, machineID, osVersion := expectedPairingHost(t)
	if p.Platform != platform || p.Hostname != hostname || p.MachineID != machineID ||
		p.OSVersion != osVersion || p.AppName != "agentknock" || p.Architecture == "" {
		t.Fatalf("pairing metadata %+v; want platform %q, hostname %q, machine id %q, os version %q", p, platform, hostname, machineID, osVersion)
	}

	exact("status while pending, option after the subcommand", w.agentknock("pairing", "status", "--agentknock-home", w.home), pendingLines)
	w.deviceOK("pairing", "confirm", m[1])
	exact("pairing finish", w.agentknock("pairing", "finish"), "Pairing complete. Agentknock is ready to run commands with secrets.\n")
	exact("status when active", w.agentknock("pairing", "status"), activeLines)
	if _, ok := w.pairingFile()["pending"]; ok {
		t.Fatal("pending kept after finish")
	}

	exact("pairing remove", w.agentknock("pairing", "remove"), "Pairing removed from this client and the device.\n")
	if exists(filepath.Join(w.home, "pairing.json")) {
		t.Fatal("pairing.json left after remove")
	}

	code := w.startPairing()
	exact("pairing abort", w.agentknock("pairing", "abort"), "Pending pairing discarded.\n")
	if exists(filepath.Join(w.home, "pairing.json")) {
		t.Fatal("pairing.json left after abort")
	}
	w.waitPending()
	w.device("pairing", "confirm", otherCode(code)) // the abandoned attempt ends on the device

	code = w.startPairing()
	w.waitPending()
	w.deviceOK("pairing", "confirm", code)
	if r := w.agentknock("pairing", "finish"); r.code != 0 {
		t.Fatalf("pairing finish: %s", r)
	}
	exact("pairing remove --force", w.agentknock("--agentknock-home", w.home, "pairing", "remove", "--force"), "Local pairing removed. The pairing on the device is unchanged.\n")
}

// Follows tests/run.rs requests_secret_use_and_executes_with_the_returned_
// environment (the request fields, the returned variable, an empty standard
// error), selects_renames_omits_and_pipes_environment_values (stdin is
// PIPE with --stdin) and custom_home_preserves_the_child_environment_with_a_
// read_only_home (--agentknock-home over AGENTKNOCK_HOME, the command's own
// AGENTKNOCK_HOME unchanged), with the --quiet and --verbose output of the
// reference's main.rs.
func TestCompatRunOutputAndRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	token := secretValue(t, "compat-token")
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": token, "DEMO_INPUT": "piped"})
	w.setSecret("asked", map[string]string{"ASKED": "asked-value"})
	w.startServe(approvePairingPolicy, "")
	w.pair()

	// A quick approved run prints nothing of its own.
	r := w.agentknock("-s", "demo", "--", "sh", "-c", envReport("DEMO_TOKEN"))
	if r.code != 0 || r.stdout != reportLine("DEMO_TOKEN", token)+"\n" || r.stderr != "" {
		t.Fatalf("quick approved run: %s\nwant the variable and an empty standard error", r)
	}

	// The request as the device receives it.
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Fatal(err)
	}
	reason := "Asked secret provides the environment variables under test"
	bg := w.startAgentknock(runOpts{}, "-s", "asked", "--reason", reason, "--", "env")
	items := w.fullPending()
	if len(items) != 1 || items[0].Invocation == nil {
		t.Fatalf("pending = %+v, want one invocation", items)
	}
	inv := items[0].Invocation
	data, err := os.ReadFile(inv.ExecutablePath)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	real, _ := filepath.EvalSymlinks(envBin)
	if inv.Reason != reason || inv.Command != "env" || len(inv.Arguments) != 0 || inv.ExecutableMode != "BINARY" ||
		inv.Stdout != "PIPE" || inv.Stderr != "PIPE" || len(inv.LauncherChain) == 0 ||
		inv.ExecutableHash != base64.StdEncoding.EncodeToString(sum[:]) || (inv.ExecutablePath != envBin && inv.ExecutablePath != real) {
		t.Fatalf("invocation as the device received it: %+v", inv)
	}
	w.deviceOK("approve", items[0].ID)
	if r := bg.wait(); r.code != 0 || !slices.Contains(strings.Split(r.stdout, "\n"), "ASKED=asked-value") || r.stderr != "" {
		t.Fatalf("approved env: %s", r)
	}

	// --stdin: the device sees a pipe on standard input.
	bg = w.startAgentknock(runOpts{}, "-s", "asked", "--stdin", "asked", "ASKED", "--", "cat")
	items = w.fullPending()
	if len(items) != 1 || items[0].Invocation == nil || items[0].Invocation.Stdin != "PIPE" {
		t.Fatalf("pending with --stdin = %+v, want stdin PIPE", items)
	}
	w.deviceOK("approve", items[0].ID)
	if r := bg.wait(); r.code != 0 || r.stdout != "asked-value" || r.stderr != "" {
		t.Fatalf("--stdin run: %s", r)
	}

	// --quiet: a denied run says nothing, exit status 1.
	marker := w.markerPath("ran")
	bg = w.startAgentknock(runOpts{}, "--quiet", "-s", "asked", "--", "touch", marker)
	items = w.fullPending()
	w.deviceOK("deny", items[0].ID)
	if r := bg.wait(); r.code != 1 || r.stderr != "" || exists(marker) {
		t.Fatalf("quiet denied run: %s\nwant exit 1 and an empty standard error", r)
	}

	// --verbose: the reference's lines before the command runs.
	r = w.agentknock("-s", "demo", "--verbose", "--", "true")
	for _, line := range []string{
		"AGENTKNOCK: These variables will be added to the command environment:\n",
		"AGENTKNOCK: - DEMO_INPUT\nAGENTKNOCK: - DEMO_TOKEN\n",
		"AGENTKNOCK: Running command \"true\".\n",
	} {
		if r.code != 0 || !strings.Contains(r.stderr, line) {
			t.Fatalf("verbose run: %s\nwant %q", r, line)
		}
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		if !strings.HasPrefix(line, "AGENTKNOCK: ") {
			t.Fatalf("a run's line without the prefix: %q", line)
		}
	}

	// Global options before `run` (the reference rejects them there; we
	// accept them with the same meaning), and --agentknock-home over
	// AGENTKNOCK_HOME without changing the command's own.
	if r := w.agentknock("--quiet", "run", "-s", "demo", "--", "true"); r.code != 0 || r.stderr != "" {
		t.Fatalf("--quiet before run: %s", r)
	}
	wrong := filepath.Join(w.root, "wrong pairing")
	r = w.agentknockWith(runOpts{env: []string{"AGENTKNOCK_HOME=" + wrong}}, "--agentknock-home", w.home, "run", "-s", "demo",
		"--", "sh", "-c", `printf '%s\n' "${AGENTKNOCK_HOME-unset}"`)
	if r.code != 0 || r.stdout != wrong+"\n" || r.stderr != "" {
		t.Fatalf("--agentknock-home over AGENTKNOCK_HOME: %s", r)
	}

	// rejects_a_missing_command_before_sending_an_invocation: with a relay
	// that cannot be reached, nothing about the relay is said.
	r = w.agentknockWith(runOpts{env: []string{"AGENTKNOCK_RELAY_URL=ws://127.0.0.1:1"}}, "run", "-s", "demo", "--", "agentknock-command-that-does-not-exist")
	if r.code != 1 || !strings.Contains(r.stderr, "wasn't found") || !strings.Contains(r.stderr, "Agentknock did not contact the device.") || strings.Contains(r.stderr, "relay") {
		t.Fatalf("missing command: %s", r)
	}
	// rejects_a_duplicate_secret: the reference's exact text, exit 2.
	for _, args := range [][]string{{"run", "-s", "github", "--secret", "github", "--", "true"}, {"-s", "github", "--secret", "github", "--", "true"}} {
		r := w.agentknock(args...)
		want := "error: secret \"github\" was specified more than once\n\n" +
			"Usage: agentknock [run] -s <SECRET> [-s <SECRET> ...] -- <COMMAND> [ARGUMENT]...\n\n" +
			"For more information, run 'agentknock run --help'.\n"
		if r.code != 2 || r.stdout != "" || r.stderr != want {
			t.Errorf("%q: %s\nwant stderr %q", args, r, want)
		}
	}
	w.leakCheck(token)
}

// Follows tests/secret_list.rs (the JSON document on standard output, a
// secret without a description listed with "description": null, as the
// reference's print_secrets writes it) and tests/secret_upload.rs (the
// three result lines on standard output; the values the device receives
// from a dotenv file, read by dotenvy's rules), with the client-side checks
// for what the device's app rejects (exit status 2, the device never
// contacted).
func TestCompatSecretListAndUpload(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setSecret("plain", map[string]string{"PLAIN": secretValue(t, "plain")})
	w.startServe(`{"default":"ask","pairing":"approve","secrets":{"compat":"approve"}}`, "")
	w.pair()

	r := w.agentknock("secret", "list")
	want := "{\n  \"secrets\": {\n    \"plain\": {\n      \"description\": null,\n      \"type\": \"environment\",\n      \"variables\": [\n        \"PLAIN\"\n      ]\n    }\n  }\n}\n"
	if r.code != 0 || r.stdout != want || r.stderr != "" {
		t.Fatalf("secret list: %s\nwant stdout:\n%s", r, want)
	}

	envFile := filepath.Join(w.input, "compat.env")
	dotenv := "BASE=https://example.com\nexport URL=${BASE}/api\nFROM_ENV=${COMPAT_INHERITED}/x\nBARE=$COMPAT_INHERITED\nLITERAL='$BASE'\nESCAPED=\"a\\$BASE\\nb\"\nJOINED='x y'z\n"
	if err := os.WriteFile(envFile, []byte(dotenv), 0o600); err != nil {
		t.Fatal(err)
	}
	r = w.agentknockWith(runOpts{env: []string{"COMPAT_INHERITED=from-env"}}, "secret", "upload", "compat", "--from-env-file", envFile)
	wantOut := "Secret upload \"compat\" delivered to the device.\n" +
		"The secret isn't available until you approve the upload on the device.\n" +
		"Suggested action: Review the secret upload on the device.\n"
	if r.code != 0 || r.stdout != wantOut || r.stderr != "" {
		t.Fatalf("secret upload: %s\nwant stdout %q and an empty standard error", r, wantOut)
	}
	u, ok := w.uploads()["compat"]
	if !ok {
		t.Fatal("the upload did not reach the device")
	}
	w.deviceOK("upload", "accept", u.ID)
	names := []string{"BASE", "URL", "FROM_ENV", "BARE", "LITERAL", "ESCAPED", "JOINED"}
	r = w.agentknock(append([]string{"-s", "compat", "--"}, "sh", "-c", envReport(names...))...)
	values := map[string]string{"BASE": "https://example.com", "URL": "https://example.com/api", "FROM_ENV": "from-env/x",
		"BARE":    "_INHERITED", // a bare name is letters and digits: $COMPAT, unset
		"LITERAL": "$BASE", "ESCAPED": "a$BASE\nb", "JOINED": "x yz"}
	var wantReport strings.Builder
	for _, n := range names {
		wantReport.WriteString(reportLine(n, values[n]) + "\n")
	}
	if r.code != 0 || r.stdout != wantReport.String() {
		t.Fatalf("the uploaded values: %s\nwant:\n%s", r, wantReport.String())
	}

	// Refused before the device is contacted, exit status 2.
	weak := filepath.Join(w.input, "weak")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "rsa", "-b", "1024", "-N", "", "-f", weak).CombinedOutput(); err != nil {
		t.Fatalf("ssh-keygen: %v\n%s", err, out)
	}
	before := len(w.logLines("SecretUpload"))
	for _, args := range [][]string{
		{"secret", "upload", " spaced", "--from-env", "PATH"},
		{"secret", "upload", "weak-key", "--from-ssh-key", weak},
		{"secret", "upload", "bad-name", "--from-env", "NOT-PORTABLE"},
	} {
		r := w.agentknock(args...)
		if r.code != 2 || !strings.HasPrefix(r.stderr, "error: ") || r.stdout != "" {
			t.Errorf("%q: %s\nwant exit 2 with an error", args, r)
		}
	}
	if after := len(w.logLines("SecretUpload")); after != before {
		t.Errorf("refused uploads reached the device (%d log lines, %d before)", after, before)
	}
	if left := w.uploads(); len(left) != 0 {
		t.Errorf("refused uploads on the device: %+v", left)
	}

	// The messages the reference's tests look for (reports_when_no_pairing_
	// exists, rejects_an_encrypted_ssh_private_key_without_a_passphrase_
	// source, explains_how_to_convert_a_legacy_pem_ssh_private_key,
	// rejects_multiple_standard_input_sources_before_connecting,
	// does_not_print_a_secret_from_an_invalid_environment_file).
	locked := filepath.Join(w.input, "locked")
	legacy := filepath.Join(w.input, "legacy")
	for _, args := range [][]string{
		{"-q", "-t", "ed25519", "-N", "test passphrase", "-f", locked},
		{"-q", "-t", "rsa", "-b", "2048", "-m", "PEM", "-N", "test passphrase", "-f", legacy},
	} {
		if out, err := exec.Command("ssh-keygen", args...).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v\n%s", err, out)
		}
	}
	invalid := filepath.Join(w.input, "invalid.env")
	os.WriteFile(invalid, []byte("TOKEN='do-not-print-this\n"), 0o600)
	for _, c := range []struct {
		opts runOpts
		args []string
		want []string
	}{
		{runOpts{}, []string{"--agentknock-home", filepath.Join(w.root, "unpaired"), "secret", "list"}, []string{"Agentknock isn't paired"}},
		{runOpts{}, []string{"secret", "upload", "production-ssh", "--from-ssh-key", locked}, []string{"is encrypted", "Use --passphrase-prompt or --passphrase-env <NAME>"}},
		{runOpts{env: []string{"SSH_KEY_PASSPHRASE=test passphrase"}}, []string{"secret", "upload", "production-ssh", "--from-ssh-key", legacy, "--passphrase-env", "SSH_KEY_PASSPHRASE"},
			[]string{"uses legacy PEM format", "ssh-keygen -p -f <PATH>"}},
		{runOpts{}, []string{"secret", "upload", "invalid", "--from-file", "TOKEN=-", "--from-env-file", "-"}, []string{"only one secret source can read from standard input"}},
		{runOpts{}, []string{"secret", "upload", "invalid", "--from-env-file", invalid}, []string{"environment file", "isn't valid"}},
	} {
		r := w.agentknockWith(c.opts, c.args...)
		for _, want := range c.want {
			if r.code == 0 || !strings.Contains(r.stderr, want) || strings.Contains(r.stderr, "do-not-print-this") || strings.Contains(r.stderr, "test passphrase") {
				t.Errorf("%q: %s\nwant a failure that says %q", c.args, r, want)
			}
		}
	}
}

// Follows tests/run.rs signs_a_git_commit_with_an_ed25519_secret: the
// repository context of the GitSign request (remote without credentials
// as host/path, worktree, branch and upstream, the changed paths against
// the first parent), here with a path that Git would C-quote without -z.
func TestCompatGitSignRepositoryContext(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := deviceSSHKey(t, w, "signing", "ed25519")
	w.startServe(`{"default":"deny","pairing":"approve","secrets":{"signing":"approve"},"operations":{"git-sign":"ask"}}`, "")
	w.pair()
	repo := gitRepo(t, w, key)
	w.git(t, "-C", repo, "remote", "add", "origin", "https://user:token@example.com/agentknock/example.git")
	os.WriteFile(filepath.Join(repo, "example.txt"), []byte("example\n"), 0o644)
	w.git(t, "-C", repo, "add", "example.txt")
	w.git(t, "-C", repo, "-c", "commit.gpgSign=false", "commit", "-q", "-m", "Base commit")
	branch := strings.TrimSpace(w.git(t, "-C", repo, "symbolic-ref", "--short", "HEAD"))
	w.git(t, "-C", repo, "update-ref", "refs/remotes/origin/"+branch, "HEAD")
	w.git(t, "-C", repo, "branch", "--set-upstream-to=origin/"+branch, branch)
	os.WriteFile(filepath.Join(repo, "example.txt"), []byte("changed\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "café.txt"), []byte("new\n"), 0o644)
	w.git(t, "-C", repo, "add", "example.txt", "café.txt")

	bg := w.startAgentknock(runOpts{}, "-s", "signing", "--", "git", "-C", repo, "commit", "-q", "-S", "-m", "Sign this exact change")
	w.waitPending()
	r := w.deviceOK("pending", "--json")
	var items []struct {
		ID      string `json:"id"`
		GitSign *struct {
			Repository json.RawMessage `json:"repository"`
		} `json:"git_sign"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil || len(items) != 1 || items[0].GitSign == nil {
		t.Fatalf("pending = %s (%v), want one git-sign", r.stdout, err)
	}
	var ctx struct {
		Remote   string `json:"remote"`
		Worktree string `json:"worktree"`
		Head     struct {
			Type     string `json:"type"`
			Name     string `json:"name"`
			Upstream string `json:"upstream"`
		} `json:"head"`
		ChangedPathCount int `json:"changed_path_count"`
		ChangedPaths     []struct {
			Status string `json:"status"`
			Path   string `json:"path"`
		} `json:"changed_paths"`
	}
	if err := json.Unmarshal(items[0].GitSign.Repository, &ctx); err != nil {
		t.Fatalf("repository %s: %v", items[0].GitSign.Repository, err)
	}
	realRepo, _ := filepath.EvalSymlinks(repo)
	paths := []string{}
	for _, p := range ctx.ChangedPaths {
		paths = append(paths, p.Status+" "+p.Path)
	}
	if ctx.Remote != "example.com/agentknock/example" || (ctx.Worktree != repo && ctx.Worktree != realRepo) ||
		ctx.Head.Type != "BRANCH" || ctx.Head.Name != branch || ctx.Head.Upstream != "origin/"+branch ||
		ctx.ChangedPathCount != 2 || !slices.Equal(paths, []string{"ADDED café.txt", "MODIFIED example.txt"}) {
		t.Fatalf("repository context %s", items[0].GitSign.Repository)
	}
	w.deviceOK("approve", items[0].ID)
	if r := bg.wait(); r.code != 0 {
		t.Fatalf("signed commit: %s", r)
	}
}

// The progress line of a run that waits for a person: nothing of
// Agentknock's own at first, then every 30 seconds the stage and the total
// elapsed time, prefixed (the reference's output.rs: Progress::monitor,
// progress_report, format_elapsed_time). This test takes 30 seconds.
func TestCompatProgressLine(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setSecret("asked", map[string]string{"ASKED": secretValue(t, "asked")})
	w.startServe(approvePairingPolicy, "")
	w.pair()
	bg := w.startAgentknock(runOpts{}, "-s", "asked", "--", "true")
	items := w.waitPending()
	line := regexp.MustCompile(`^AGENTKNOCK: The device received the request\. Waiting for its response\. Elapsed time: (1 minute )?[0-9]+ seconds\.$`)
	deadline := time.Now().Add(3 * processGuard)
	for !strings.Contains(bg.stderr.String(), "\n") {
		if time.Now().After(deadline) {
			t.Fatalf("no progress line (deadlock guard); stderr %q", bg.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	w.deviceOK("approve", items[0].ID)
	r := bg.wait()
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	if r.code != 0 || len(lines) == 0 {
		t.Fatalf("approved run: %s", r)
	}
	for _, l := range lines {
		if !line.MatchString(l) {
			t.Fatalf("stderr line %q is not the progress line; stderr:\n%s", l, r.stderr)
		}
	}
}
