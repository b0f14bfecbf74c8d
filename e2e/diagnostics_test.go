// Ported from the reference client's print_command_error and the functions
// it calls (src/bin/agentknock/main.rs of agentknock/agentknock-cli 0.6.2):
// for every failure class it distinguishes, a run that does not start says
// what happened on a line of its own, then that the command didn't run,
// then `Suggested action:` and, on lines of their own, the command to run
// next, all prefixed "AGENTKNOCK: " on standard error; nothing on standard
// output; exit status 1 (128+N for a signal); with --quiet nothing at all.
// The wording is ours; these are the markers and the information.
package e2e

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// stoppedRun checks a run that did not start: exit status code, the
// "didn't run" line, a suggested action, and each of want somewhere in the
// report. It returns the report's lines without the prefix.
func stoppedRun(t *testing.T, what string, r result, code int, want ...string) []string {
	t.Helper()
	if r.code != code || r.stdout != "" {
		t.Fatalf("%s: %s\nwant exit %d and nothing on standard output", what, r, code)
	}
	var lines []string
	for line := range strings.SplitSeq(strings.TrimSuffix(r.stderr, "\n"), "\n") {
		rest, ok := strings.CutPrefix(line, "AGENTKNOCK: ")
		if !ok {
			t.Fatalf("%s: line %q without the AGENTKNOCK: prefix\n%s", what, line, r)
		}
		lines = append(lines, rest)
	}
	didnt := -1
	for i, l := range lines {
		if l == "The command didn't run." {
			didnt = i
		}
	}
	if didnt < 1 || didnt+1 >= len(lines) || !strings.HasPrefix(lines[didnt+1], "Suggested action: ") {
		t.Fatalf("%s: want a line saying what happened, \"The command didn't run.\", then \"Suggested action: ...\"\n%s", what, r)
	}
	for _, s := range want {
		if !strings.Contains(r.stderr, s) {
			t.Fatalf("%s: the report does not say %q\n%s", what, s, r)
		}
	}
	return lines
}

func TestDiagnosticsForEachFailureClass(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": secretValue(t, "diag")})
	w.setSecret("prod", map[string]string{"PROD_TOKEN": secretValue(t, "diag-prod")})
	w.setSecret("asked", map[string]string{"ASKED": "asked-value"})
	w.startServe(askPairingPolicy, "")
	marker := w.markerPath("ran")
	run := func(args ...string) result { return w.agentknock(append(args, "--", "touch", marker)...) }

	// Not paired (print_run_configuration_error, NoPairing).
	stoppedRun(t, "not paired", run("-s", "demo"), 1,
		"AGENTKNOCK: Agentknock isn't paired with a device.\nAGENTKNOCK: Agentknock did not contact the device.\n",
		"\nAGENTKNOCK: agentknock pairing start <PAIRING_ADDRESS>\n")
	// --quiet: nothing at all, as the reference keeps a quiet run silent.
	if r := w.agentknock("--quiet", "-s", "demo", "--", "no-such-command-for-agentknock"); r.code != 1 || r.stdout != "" || r.stderr != "" {
		t.Fatalf("quiet run of a missing command: %s\nwant exit 1 and no output", r)
	}

	// Pairing pending (PairingPending).
	code := w.startPairing()
	stoppedRun(t, "pairing pending", run("-s", "demo"), 1,
		"Pairing is waiting for confirmation on the device.",
		"\nAGENTKNOCK: agentknock pairing finish\n")
	w.waitPending()
	w.deviceOK("pairing", "confirm", code)
	if r := w.agentknock("pairing", "finish"); r.code != 0 {
		t.Fatalf("pairing finish: %s", r)
	}
	clientID := w.pairingFile()["client_id"].(string)

	// --verbose shows the executable's hash in hexadecimal, as the device
	// shows it (issue 20: it was Base64), so that a person can compare.
	script := filepath.Join(w.work, "hello")
	body := "#!/bin/sh\necho hello\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	if r := w.agentknock("--verbose", "-s", "demo", "--", script); r.code != 0 ||
		!strings.Contains(r.stderr, "AGENTKNOCK: executable: "+script+" (SCRIPT, sha256 "+sha256hex(body)+")\n") {
		t.Fatalf("verbose run: %s\nwant the hash %s", r, sha256hex(body))
	}

	// Command not found; not executable (RunSelection: NotFound,
	// PermissionDenied).
	stoppedRun(t, "command not found", w.agentknock("-s", "demo", "--", "no-such-command-for-agentknock"), 1,
		`command "no-such-command-for-agentknock" wasn't found`, "Agentknock did not contact the device.",
		"Suggested action: Check the command name, or add its directory to PATH")
	if err := os.WriteFile(filepath.Join(w.work, "not-executable"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stoppedRun(t, "not executable", w.agentknock("-s", "demo", "--", "./not-executable"), 1,
		"permission denied", "Suggested action: Check the command's execute permission")

	// Denied by the person at the device (Denied, UserDenied): the
	// device's message once, one period.
	bg := w.startAgentknock(runOpts{}, "-s", "asked", "--", "touch", marker)
	w.deviceOK("deny", w.waitPending()[0].ID)
	lines := stoppedRun(t, "denied on the device", bg.wait(), 1, "Suggested action: Don't repeat the request unchanged.")
	if lines[0] != "The request was denied on the device." {
		t.Fatalf("the denial is worded %q, want the device's message once", lines[0])
	}
	// Denied by the device's policy (PolicyDenied).
	stoppedRun(t, "policy denied", run("-s", "prod"), 1, "The device's policy denied the request", "Ask the device's owner to change it")

	// Interrupted while waiting for the device (Interrupted): 128+2.
	bg = w.startAgentknock(runOpts{}, "-s", "asked", "--", "touch", marker)
	w.waitPending()
	bg.cmd.Process.Signal(syscall.SIGINT)
	stoppedRun(t, "interrupted", bg.wait(), 128+int(syscall.SIGINT), "interrupted by SIGINT", "Suggested action: Run the command again if it should still run.")

	// The relay cannot be reached (RelayUnavailable): a port nobody
	// listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "ws://" + ln.Addr().String()
	ln.Close()
	stoppedRun(t, "relay unreachable", w.agentknockWith(runOpts{env: []string{"AGENTKNOCK_RELAY_URL=" + closed}}, "-s", "demo", "--", "touch", marker), 1,
		"the relay could not be reached: relay unavailable after 8 consecutive failures",
		"Suggested action: Check the network connection, the relay")
	// A relay address that is not allowed (an invalid relay URL).
	stoppedRun(t, "relay address", w.agentknockWith(runOpts{env: []string{"AGENTKNOCK_RELAY_URL=ws://relay.example.com"}}, "-s", "demo", "--", "touch", marker), 1,
		"plain ws:// is allowed only for a loopback host", "Suggested action: Set AGENTKNOCK_RELAY_URL")

	// The pairing file's permissions (InsecurePermissions): the chmod to
	// run, on its own line.
	pairingPath := filepath.Join(w.home, "pairing.json")
	os.Chmod(pairingPath, 0o644)
	stoppedRun(t, "pairing file mode", run("-s", "demo"), 1, "has permissions 0644, but 0600 is required", "\nAGENTKNOCK: chmod 600 "+pairingPath+"\n")
	os.Chmod(pairingPath, 0o600)
	// A home others can write, reported with its sticky bit.
	os.Chmod(w.home, 0o777|os.ModeSticky)
	stoppedRun(t, "home mode", run("-s", "demo"), 1, "1777 lets others replace the pairing", "\nAGENTKNOCK: chmod go-w "+w.home+"\n")
	os.Chmod(w.home, 0o700)
	// No usable home (HomeNotSet).
	stoppedRun(t, "no home", w.agentknockWith(runOpts{env: []string{"AGENTKNOCK_HOME="}}, "-s", "demo", "--", "touch", marker), 1,
		"AGENTKNOCK_HOME must be a non-empty absolute path", "Suggested action: Set HOME to your home directory, or use --agentknock-home DIR")
	// An invalid pairing file (Invalid).
	saved, err := os.ReadFile(pairingPath)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pairingPath, []byte(`{"device_id":`), 0o600)
	stoppedRun(t, "invalid pairing file", run("-s", "demo"), 1, "is not valid", "\nAGENTKNOCK: agentknock pairing remove --force\nAGENTKNOCK: agentknock pairing start <PAIRING_ADDRESS>\n")
	os.WriteFile(pairingPath, saved, 0o600)
	if r := w.agentknock("-s", "demo", "--", "true"); r.code != 0 {
		t.Fatalf("run after restoring the pairing: %s", r)
	}

	// The device revoked this client (ClientInactive).
	w.deviceOK("revoke", clientID)
	stoppedRun(t, "client inactive", run("-s", "demo"), 1, "inactive", "\nAGENTKNOCK: agentknock pairing remove --force\n")
	if exists(marker) {
		t.Fatal("a command ran")
	}
}

// Two copies of one home: B rotates the key and the device takes it; A,
// with the old key and its own rotation, is refused (AUTHENTICATION_FAILED,
// unauthenticated). A's home then says so: `pairing status` no longer
// says plainly "active" and tells to pair again, and so does the run.
func TestDiagnosticsKeyRefusedAfterAnotherCopyRotated(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": secretValue(t, "copy")})
	w.startServe(approvePairingPolicy, "")
	w.pair()
	homeA := w.home
	homeB := filepath.Join(w.root, "home-b")
	if err := os.Mkdir(homeB, 0o700); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(homeA, "pairing.json"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(homeB, "pairing.json"), data, 0o600)

	// B rotates, twice, so that the device holds no key A knows.
	w.home = homeB
	for range 2 {
		w.ageRotation()
		if r := w.agentknock("-s", "demo", "--", "true"); r.code != 0 {
			t.Fatalf("run in B: %s", r)
		}
	}
	w.home = homeA
	w.ageRotation()
	lines := stoppedRun(t, "run in A", w.agentknock("-s", "demo", "--", "true"), 1,
		"AUTHENTICATION_FAILED", "it may come from the device or be forged by the relay",
		"another copy of this Agentknock home may have rotated it",
		"\nAGENTKNOCK: agentknock pairing remove --force\nAGENTKNOCK: agentknock pairing start <PAIRING_ADDRESS>\n")
	_ = lines
	if st := w.pairingFile(); st["key_refused_at"] == nil {
		t.Fatalf("A's pairing.json does not record the refusal: %v", st)
	}
	r := w.agentknock("pairing", "status", "--verbose")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "Pairing status: active, but the device refused this client's key.\n") ||
		!strings.Contains(r.stdout, "\nagentknock pairing remove --force\nagentknock pairing start <PAIRING_ADDRESS>\n") ||
		!strings.Contains(r.stdout, "Key rotation: refused by the device\n") || strings.Contains(r.stdout, "waiting for the device to confirm") {
		t.Fatalf("pairing status in A: %s", r)
	}
	// B is unaffected.
	w.home = homeB
	if r := w.agentknock("pairing", "status"); r.code != 0 || r.stdout != "Pairing status: active.\n" {
		t.Fatalf("pairing status in B: %s", r)
	}
}

// The command line's help and version as the reference's clap parser
// gives them (main.rs: disable_help_subcommand, arg_required_else_help,
// propagate_version; its tests does_not_define_help_subcommands,
// shows_help_without_a_pairing_command, shows_help_without_a_secret_command):
// -h a summary and --help the full text on standard output, exit 0; one
// version line; no help subcommands (exit 2); `pairing` or `secret` alone
// print their help on standard error, exit 2; an empty --reason is a usage
// error in our words, not the flag package's.
func TestCompatHelpAndVersion(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	short, long := w.agentknock("-h"), w.agentknock("--help")
	if short.code != 0 || long.code != 0 || short.stderr != "" || long.stderr != "" ||
		len(short.stdout) >= len(long.stdout) || !strings.Contains(short.stdout, "Usage:") || !strings.Contains(long.stdout, "Exit status:") {
		t.Fatalf("-h: %s\n--help: %s\nwant a summary and a longer full text on standard output", short, long)
	}
	for _, args := range [][]string{{"run", "-h"}, {"-s", "x", "-h", "--", "true"}} {
		if r := w.agentknock(args...); r.code != 0 || r.stdout != short.stdout {
			t.Fatalf("%q: %s\nwant the summary", args, r)
		}
	}
	if r := w.agentknock("run", "--help"); r.code != 0 || r.stdout != long.stdout {
		t.Fatalf("run --help: %s", r)
	}
	for _, args := range [][]string{{"--version"}, {"-V"}} {
		r := w.agentknock(args...)
		if r.code != 0 || r.stderr != "" || !regexp.MustCompile(`^agentknock [^\s]+\n$`).MatchString(r.stdout) {
			t.Fatalf("%q: %s\nwant one line, agentknock VERSION", args, r)
		}
	}
	if r := w.agentknock("--version", "--verbose"); r.code != 0 || !strings.Contains(r.stdout, "\nplatform: ") || !strings.Contains(r.stdout, "\nsignal state: ") {
		t.Fatalf("--version --verbose: %s", r)
	}
	for _, args := range [][]string{{"help"}, {"pairing", "help"}, {"secret", "help"}, {"version"}} {
		if r := w.agentknock(args...); r.code != 2 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: ") {
			t.Fatalf("%q: %s\nwant an unknown command, exit 2", args, r)
		}
	}
	for _, sub := range []string{"pairing", "secret"} {
		alone, help := w.agentknock(sub), w.agentknock(sub, "--help")
		if alone.code != 2 || alone.stdout != "" || alone.stderr != help.stdout || help.code != 0 {
			t.Fatalf("%s alone: %s\n%s --help: %s\nwant its help on standard error, exit 2", sub, alone, sub, help)
		}
	}
	r := w.agentknock("-s", "x", "--reason", "", "--", "true")
	if r.code != 2 || !strings.Contains(r.stderr, "error: --reason needs a non-empty TEXT") || strings.Contains(r.stderr, "flag") {
		t.Fatalf("--reason \"\": %s", r)
	}
	if r := w.agentknock("-s", "x", "--reason", "--", "true"); r.code != 2 || !strings.Contains(r.stderr, "--reason needs a value") {
		t.Fatalf("--reason without a value: %s", r)
	}
}

// A `pairing start` that the device's policy confirms, then the client's
// home deleted: the device's one pairing slot is held until the pairing
// expires (5 minutes after the confirmation); `agentknock-device pairing
// reject` ends it at once, and a new pairing works.
func TestAbandonedConfirmedPairingCanBeRejected(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startServe(approvePairingPolicy, "")
	if r := w.agentknock("pairing", "start", w.address); r.code != 0 {
		t.Fatalf("pairing start: %s", r)
	}
	w.waitLog(`confirmed|approved`)
	os.RemoveAll(w.home)
	r := w.agentknock("pairing", "start", w.address)
	if r.code != 1 || !strings.Contains(r.stderr, "PAIRING_UNAVAILABLE") {
		t.Fatalf("a second pairing while the first waits: %s", r)
	}
	os.RemoveAll(w.home)
	rej := w.device("pairing", "reject")
	if rej.code != 0 || !strings.Contains(rej.stdout+rej.stderr, "rejected 1 pairing(s) that no client finished") {
		t.Fatalf("agentknock-device pairing reject: %s", rej)
	}
	w.pair()
}

// A relay that forges the device's pairing response (here a clear error in
// its place) leaves on the device an attempt that awaits a completion the
// client will never send, holding the one pairing slot: `agentknock-device
// pairing reject` ends it at once (README), and a new pairing works.
func TestForgedPairingResponseCanBeRejected(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.startServe(approvePairingPolicy, "forge-error:response:1")
	if r := w.agentknock("pairing", "start", w.address); r.code == 0 {
		t.Fatalf("pairing start through a forged response: %s", r)
	}
	w.waitLog(`accepted; waiting for the completion`)
	os.RemoveAll(w.home)
	if r := w.agentknock("pairing", "start", w.address); r.code != 1 || !strings.Contains(r.stderr, "PAIRING_UNAVAILABLE") {
		t.Fatalf("a second pairing while the first holds the slot: %s", r)
	}
	os.RemoveAll(w.home)
	rej := w.device("pairing", "reject")
	if rej.code != 0 || !strings.Contains(rej.stdout+rej.stderr, "rejected 1 pairing(s) that no client finished") {
		t.Fatalf("agentknock-device pairing reject: %s", rej)
	}
	w.pair()
}
