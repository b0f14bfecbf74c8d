// End-to-end harness (design.md "Tests": the built client against the local
// device through the local relay). TestMain builds agentknock with the
// release flags and agentknock-device once; every test then gets its own
// client home, device state and `agentknock-device serve` on port 0, runs
// the real programs, and checks with leakCheck that no secret value reaches
// agentknock's output or any file it may write.
package e2e

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Deadlock guards only: nothing asserts how long anything takes.
const (
	processGuard = 60 * time.Second
	waitGuard    = 30 * time.Second
)

var (
	agentknockBin string
	deviceBin     string
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "ake2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	agentknockBin = filepath.Join(dir, "agentknock")
	deviceBin = filepath.Join(dir, "agentknock-device")
	// The client exactly as released (README "Build"); no test-only tags.
	client := []string{"build", "-trimpath", "-o", agentknockBin}
	if releaseHasEntryHook() {
		client = append(client, "-ldflags=-E=agentknock_rt0")
	}
	client = append(client, ".")
	builds := [][]string{client, {"build", "-o", deviceBin, "./devkit/cmd/agentknock-device"}}
	for _, args := range builds {
		cmd := exec.Command("go", args...)
		cmd.Dir = ".."
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: go %s: %v\n%s", strings.Join(args, " "), err, out)
			return 1
		}
	}
	return m.Run()
}

// releaseHasEntryHook reports the targets built with -E=agentknock_rt0:
// Linux, as released, and darwin/arm64 (entry_darwin_arm64.s), which the
// release is to adopt once scripts/check-mac has passed on a Mac (README
// "macOS"). AGENTKNOCK_E2E_NO_ENTRY_HOOK=1 builds without it, as the
// darwin release is built today; scripts/check-mac runs both.
func releaseHasEntryHook() bool {
	if os.Getenv("AGENTKNOCK_E2E_NO_ENTRY_HOOK") == "1" {
		return false
	}
	return runtime.GOOS == "linux" || runtime.GOOS == "darwin" && runtime.GOARCH == "arm64"
}

// result is one finished process.
type result struct {
	stdout, stderr string
	code           int // exit status, or 128+N when signal N ended it
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout:\n%s\n--- stderr:\n%s", r.code, clip(r.stdout), clip(r.stderr))
}

// clip keeps failure messages readable when a command prints a lot.
func clip(s string) string {
	if len(s) > 4000 {
		return s[:4000] + fmt.Sprintf("... (%d bytes)", len(s))
	}
	return s
}

func statusOf(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// lockedBuffer collects a process's output while it runs.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// world is one test's client, device and relay.
type world struct {
	t        *testing.T
	root     string // everything of this test; short, for the control socket
	home     string // AGENTKNOCK_HOME (created by agentknock itself)
	userHome string // HOME of both programs
	tmp      string // TMPDIR of agentknock
	state    string // the device's state directory
	work     string // working directory of the commands
	input    string // files holding secret values for `secret set`
	address  string // the device's pairing address
	auditKey string // the audit log's verification key, as init printed it

	mu      sync.Mutex
	outputs []string // every stdout and stderr agentknock produced
	serve   *server
	logs    []string // logs of earlier serve processes of this test
}

// newWorld makes the directories and the device state (init).
func newWorld(t *testing.T) *world {
	t.Helper()
	// Not t.TempDir: the control socket path must stay under 104 bytes
	// even for long subtest names.
	root, err := os.MkdirTemp("", "ake2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	w := &world{
		t:        t,
		root:     root,
		home:     filepath.Join(root, "home"),
		userHome: filepath.Join(root, "user"),
		tmp:      filepath.Join(root, "tmp"),
		state:    filepath.Join(root, "dev"),
		work:     filepath.Join(root, "work"),
		input:    filepath.Join(root, "input"),
	}
	for _, d := range []string{w.userHome, w.tmp, w.work, w.input} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	r := w.deviceOK("init")
	w.address = strings.TrimSpace(r.stdout)
	w.auditKey = regexp.MustCompile(`ak1-[0-9]+-[0-9a-f]{64}`).FindString(r.stderr)
	if !regexp.MustCompile(`^[a-z]+(-[a-z]+)*$`).MatchString(w.address) {
		t.Fatalf("init printed %q, not a pairing address", w.address)
	}
	return w
}

func (w *world) baseEnv() []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + w.userHome,
		"LANG=C.UTF-8",
	}
}

// clientEnv is agentknock's environment: no proxy settings of the machine
// running the tests, the relay of the running serve unless storedRelay.
func (w *world) clientEnv(o runOpts) []string {
	env := append(w.baseEnv(), "TMPDIR="+w.tmp, "AGENTKNOCK_HOME="+w.home)
	if w.serve != nil && !o.storedRelay {
		env = append(env, "AGENTKNOCK_RELAY_URL="+w.serve.url)
	}
	return append(env, o.env...)
}

// runOpts adjusts one agentknock invocation.
type runOpts struct {
	env         []string // added last, so they override
	stdin       string
	storedRelay bool     // no AGENTKNOCK_RELAY_URL: the relay stored with the pairing
	wrap        []string // a program (sandbox, namespace, limit) that runs agentknock
}

// command is agentknock with args, run through o.wrap when set.
func (o runOpts) command(args ...string) *exec.Cmd {
	if len(o.wrap) > 0 {
		return exec.Command(o.wrap[0], append(append(o.wrap[1:len(o.wrap):len(o.wrap)], agentknockBin), args...)...)
	}
	return exec.Command(agentknockBin, args...)
}

// agentknock runs the client to completion and records its output for
// leakCheck.
func (w *world) agentknock(args ...string) result {
	w.t.Helper()
	return w.agentknockWith(runOpts{}, args...)
}

func (w *world) agentknockWith(o runOpts, args ...string) result {
	w.t.Helper()
	cmd := o.command(args...)
	cmd.Env = w.clientEnv(o)
	cmd.Dir = w.work
	cmd.Stdin = strings.NewReader(o.stdin)
	r := w.finish(cmd)
	w.record(r.stdout, r.stderr)
	return r
}

func (w *world) record(outputs ...string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outputs = append(w.outputs, outputs...)
}

// finish runs cmd with a deadlock guard and returns what it printed.
func (w *world) finish(cmd *exec.Cmd) result {
	w.t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("%s: %v", cmd.Path, err)
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case <-time.After(processGuard):
			cmd.Process.Kill()
		}
	}()
	cmd.Wait()
	close(done)
	r := result{stdout: stdout.String(), stderr: stderr.String(), code: statusOf(cmd.ProcessState)}
	if r.code == 128+int(syscall.SIGKILL) {
		w.t.Fatalf("%s %q hung (killed by the deadlock guard)\n%s", filepath.Base(cmd.Path), cmd.Args[1:], r)
	}
	return r
}

// device runs agentknock-device on this world's state.
func (w *world) device(args ...string) result {
	w.t.Helper()
	return w.deviceIn("", args...)
}

func (w *world) deviceIn(stdin string, args ...string) result {
	w.t.Helper()
	cmd := exec.Command(deviceBin, args...)
	cmd.Env = append(w.baseEnv(), "AGENTKNOCK_DEVICE_STATE="+w.state)
	cmd.Dir = w.work
	cmd.Stdin = strings.NewReader(stdin)
	return w.finish(cmd)
}

func (w *world) deviceOK(args ...string) result {
	w.t.Helper()
	r := w.device(args...)
	if r.code != 0 {
		w.t.Fatalf("agentknock-device %q: %s", args, r)
	}
	return r
}

// setSecret stores an environment secret on the device; the values go
// through files, never the command line.
func (w *world) setSecret(name string, vars map[string]string, options ...string) {
	w.t.Helper()
	args := append([]string{"secret", "set", name}, options...)
	for v, value := range vars {
		path := filepath.Join(w.input, name+"."+v)
		if err := os.WriteFile(path, []byte(value), 0o600); err != nil {
			w.t.Fatal(err)
		}
		args = append(args, v+"=@"+path)
	}
	w.deviceOK(args...)
}

// server is a running `agentknock-device serve`.
type server struct {
	cmd    *exec.Cmd
	url    string
	stderr lockedBuffer
	stdout lockedBuffer // whatever follows the two announced lines
	done   chan struct{}
}

// startServe runs serve with a policy (JSON text) and optional fault spec,
// and waits for its two announced lines. The previous serve, if any, must
// have been stopped.
func (w *world) startServe(policy, faults string) *server {
	w.t.Helper()
	s := w.newServe(policy, faults)
	s.cmd.Stderr = &s.stderr
	w.runServe(s, s.stderr.String)
	return s
}

// newServe writes the policy and prepares a serve on the world's state; the
// caller attaches its stdin and stderr, then calls runServe.
func (w *world) newServe(policy, faults string) *server {
	w.t.Helper()
	if w.serve != nil {
		w.t.Fatal("startServe: a serve is already running")
	}
	policyPath := filepath.Join(w.root, "policy.json")
	if err := os.WriteFile(policyPath, []byte(policy), 0o600); err != nil {
		w.t.Fatal(err)
	}
	args := []string{"serve", "--listen", "127.0.0.1:0", "--policy", policyPath}
	if faults != "" {
		args = append(args, "--faults", faults)
	}
	s := &server{cmd: exec.Command(deviceBin, args...), done: make(chan struct{})}
	s.cmd.Env = append(w.baseEnv(), "AGENTKNOCK_DEVICE_STATE="+w.state)
	s.cmd.Dir = w.work
	return s
}

// runServe starts s and checks its two announced lines; shown tells a
// failure what serve wrote to its stderr.
func (w *world) runServe(s *server, shown func() string) {
	w.t.Helper()
	pipe, err := s.cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.serve = s
	w.t.Cleanup(func() { w.stopServeQuiet(s) })

	lines := make(chan map[string]string, 1)
	go func() {
		vals := map[string]string{}
		sc := bufio.NewScanner(pipe)
		for len(vals) < 2 && sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				vals[k] = v
			}
		}
		lines <- vals
		io.Copy(&s.stdout, pipe)
		s.cmd.Wait()
		close(s.done)
	}()
	var vals map[string]string
	select {
	case vals = <-lines:
	case <-time.After(waitGuard):
		w.t.Fatalf("serve did not announce its URL (deadlock guard); stderr:\n%s", shown())
	}
	s.url = vals["AGENTKNOCK_RELAY_URL"]
	if !regexp.MustCompile(`^ws://127\.0\.0\.1:[0-9]+$`).MatchString(s.url) {
		w.t.Fatalf("serve announced relay URL %q; stderr:\n%s", s.url, shown())
	}
	if got := vals["AGENTKNOCK_PAIRING_ADDRESS"]; got != w.address {
		w.t.Fatalf("serve announced pairing address %q, init printed %q", got, w.address)
	}
}

// stopServe ends the running serve (SIGTERM, then wait) so that another can
// start on the same state, e.g. with faults.
func (w *world) stopServe() {
	w.t.Helper()
	s := w.serve
	if s == nil {
		return
	}
	w.stopServeQuiet(s)
	if code := statusOf(s.cmd.ProcessState); code != 0 {
		w.t.Errorf("serve exited with status %d after SIGTERM; stderr:\n%s", code, clip(s.stderr.String()))
	}
}

func (w *world) stopServeQuiet(s *server) {
	select {
	case <-s.done:
	default:
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(waitGuard):
			w.t.Errorf("serve ignored SIGTERM (deadlock guard); killing it")
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	if w.serve == s {
		w.mu.Lock()
		w.logs = append(w.logs, s.stderr.String()+s.stdout.String())
		w.mu.Unlock()
		w.serve = nil
	}
}

// log is the running serve's standard error so far.
func (w *world) log() string {
	if w.serve == nil {
		return ""
	}
	return w.serve.stderr.String()
}

// waitLog waits until the running serve has logged a line matching re and
// returns every matching line.
func (w *world) waitLog(re string) []string {
	w.t.Helper()
	rx := regexp.MustCompile("(?m)^.*" + re + ".*$")
	deadline := time.Now().Add(waitGuard)
	for {
		if m := rx.FindAllString(w.log(), -1); len(m) > 0 {
			return m
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("serve never logged %q (deadlock guard); log:\n%s", re, clip(w.log()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// logLines returns the running serve's log lines matching re, now.
func (w *world) logLines(re string) []string {
	return regexp.MustCompile("(?m)^.*"+re+".*$").FindAllString(w.log(), -1)
}

// pendingItem is what `agentknock-device pending --json` lists.
type pendingItem struct {
	ID        string   `json:"id"`
	Kind      string   `json:"kind"`
	ClientID  string   `json:"client_id"`
	RequestID string   `json:"request_id"`
	Secrets   []string `json:"secrets"`
}

func (w *world) pending() []pendingItem {
	w.t.Helper()
	r := w.deviceOK("pending", "--json")
	var items []pendingItem
	if err := json.Unmarshal([]byte(r.stdout), &items); err != nil {
		w.t.Fatalf("pending --json: %v\n%s", err, r)
	}
	return items
}

// waitPending waits until the device waits on at least one request.
func (w *world) waitPending() []pendingItem {
	w.t.Helper()
	deadline := time.Now().Add(waitGuard)
	for {
		if items := w.pending(); len(items) > 0 {
			return items
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("nothing became pending (deadlock guard); serve log:\n%s", clip(w.log()))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clientInfo is what `agentknock-device clients --json` lists.
type clientInfo struct {
	ClientID  string     `json:"client_id"`
	State     string     `json:"state"`
	RotatedAt *time.Time `json:"rotated_at"`
}

func (w *world) clients() map[string]clientInfo {
	w.t.Helper()
	r := w.deviceOK("clients", "--json")
	var list []clientInfo
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		w.t.Fatalf("clients --json: %v\n%s", err, r)
	}
	m := map[string]clientInfo{}
	for _, c := range list {
		m[c.ClientID] = c
	}
	return m
}

// Policies used by most tests: pairing without a person, "demo" approved,
// "prod" denied, everything else asked.
const approvePairingPolicy = `{"default":"ask","pairing":"approve","secrets":{"demo":"approve","prod":"deny"}}`

// pair pairs the client headlessly (the running serve's policy must say
// "pairing": "approve") and returns the pairing file's client_id.
func (w *world) pair() string {
	w.t.Helper()
	r := w.agentknock("pairing", "start", w.address)
	if r.code != 0 || !sasLine.MatchString(r.stdout) {
		w.t.Fatalf("pairing start: %s", r)
	}
	if r := w.agentknock("pairing", "finish"); r.code != 0 {
		w.t.Fatalf("pairing finish: %s", r)
	}
	return w.pairingFile()["client_id"].(string)
}

// sasLine finds the code where the reference client prints it: alone on
// the line after "Verification code:".
var sasLine = regexp.MustCompile(`(?m)^Verification code:\n([0-9]{4} [0-9]{4} [0-9]{4})$`)

// pairingFile reads pairing.json as a generic object.
func (w *world) pairingFile() map[string]any {
	w.t.Helper()
	b, err := os.ReadFile(filepath.Join(w.home, "pairing.json"))
	if err != nil {
		w.t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		w.t.Fatalf("pairing.json: %v", err)
	}
	return m
}

// leakCheck asserts that secret appears (raw or in base64) in no
// output of any agentknock run of this test, in no file under the client
// home, HOME, TMPDIR or dirs, and in no log of the device (which promises
// never to print values either).
func (w *world) leakCheck(secret string, dirs ...string) {
	w.t.Helper()
	if secret == "" {
		w.t.Fatal("leakCheck: empty secret")
	}
	needles := [][]byte{[]byte(secret)}
	// Base64 at each of the three alignments the value may have inside an
	// encoded stream.
	for skip := 0; skip < 3 && len(secret)-skip >= 6; skip++ {
		chunk := secret[skip:]
		chunk = chunk[:len(chunk)/3*3]
		needles = append(needles, []byte(base64.RawStdEncoding.EncodeToString([]byte(chunk))))
	}
	contains := func(b []byte) bool {
		for _, n := range needles {
			if bytes.Contains(b, n) {
				return true
			}
		}
		return false
	}
	w.mu.Lock()
	outputs := append([]string(nil), w.outputs...)
	logs := append([]string(nil), w.logs...)
	w.mu.Unlock()
	if len(outputs) == 0 {
		w.t.Error("leakCheck: no agentknock output was recorded")
	}
	for i, o := range outputs {
		if contains([]byte(o)) {
			w.t.Errorf("a secret value appears in agentknock output #%d:\n%s", i, clip(o))
		}
	}
	logs = append(logs, w.log())
	for i, l := range logs {
		if contains([]byte(l)) {
			w.t.Errorf("a secret value appears in serve's log #%d", i)
		}
	}
	for _, dir := range append([]string{w.home, w.userHome, w.tmp}, dirs...) {
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if contains(b) {
				w.t.Errorf("a secret value appears in file %s", path)
			}
			return nil
		})
		if err != nil {
			w.t.Errorf("leakCheck: %v", err)
		}
	}
}

// envReport is a sh script that prints, for each name, whether it is set
// and the length and SHA-256 of its value (never the value).
func envReport(names ...string) string {
	var b strings.Builder
	// macOS has shasum where Linux has sha256sum.
	b.WriteString(`h() { if command -v sha256sum >/dev/null; then sha256sum; else shasum -a 256; fi; }; `)
	for _, n := range names {
		fmt.Fprintf(&b, `if [ "${%[1]s+set}" = set ]; then printf '%[1]s=%%s:%%s\n' "${#%[1]s}" "$(printf %%s "$%[1]s" | h | cut -d' ' -f1)"; else echo %[1]s=unset; fi; `, n)
	}
	return b.String()
}

// reportLine is envReport's line for a variable set to value.
func reportLine(name, value string) string {
	return fmt.Sprintf("%s=%d:%s", name, len(value), sha256hex(value))
}

// secretValue makes a value no output could contain by accident.
func secretValue(t *testing.T, label string) string {
	t.Helper()
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return label + "-" + hex.EncodeToString(b)
}

// markerPath is a file a command creates only if it runs.
func (w *world) markerPath(name string) string { return filepath.Join(w.work, name) }

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// bgProcess is an agentknock run the test interacts with while it waits.
type bgProcess struct {
	w              *world
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	done           chan struct{}
}

func (w *world) startAgentknock(o runOpts, args ...string) *bgProcess {
	w.t.Helper()
	p := &bgProcess{w: w, cmd: o.command(args...), done: make(chan struct{})}
	p.cmd.Env = w.clientEnv(o)
	p.cmd.Dir = w.work
	p.cmd.Stdin = strings.NewReader(o.stdin)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	if err := p.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	go func() { p.cmd.Wait(); close(p.done) }()
	w.t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait returns the finished run and records its output for leakCheck.
func (p *bgProcess) wait() result {
	p.w.t.Helper()
	select {
	case <-p.done:
	case <-time.After(processGuard):
		p.cmd.Process.Kill()
		<-p.done
		p.w.record(p.stdout.String(), p.stderr.String())
		p.w.t.Fatalf("agentknock %q hung (killed by the deadlock guard)\n--- stderr:\n%s", p.cmd.Args[1:], clip(p.stderr.String()))
	}
	r := result{stdout: p.stdout.String(), stderr: p.stderr.String(), code: statusOf(p.cmd.ProcessState)}
	p.w.record(r.stdout, r.stderr)
	return r
}
