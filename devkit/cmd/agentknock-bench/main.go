// agentknock-bench prints the figures of README "Measurements", each
// measured side by side with its reference in one run: the wall time
// `agentknock run` adds to /bin/true with a local device approving by
// policy, on a fresh device and on one retaining 10,000 exchanges; 100
// concurrent runs against one device; 50 concurrent `ssh-add -L` through one
// temporary agent and signing with an upstream ssh-agent key, against
// ssh-agent directly; peak RSS of `run` and of an idle invocation service;
// hashing of a 256 MiB executable against sha256sum. It builds the release
// client and agentknock-device itself (scripts/bench runs it) and leaves
// nothing behind. Figures only: no threshold makes it fail.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

type config struct {
	runs, concurrent, retained, agentClients, agentRounds, signatures, hashMiB, hashRuns int
	bin                                                                                  string
	trace, keep                                                                          bool
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == probeRole {
		os.Exit(probeMain(os.Args[2:]))
	}
	var c config
	quick := flag.Bool("quick", false, "a smoke run with small counts (figures not meaningful)")
	flag.IntVar(&c.runs, "runs", 60, "sequential runs per measured series")
	flag.IntVar(&c.concurrent, "concurrent", 100, "concurrent runs against one device")
	flag.IntVar(&c.retained, "retained", 10000, "exchanges the second device retains")
	flag.IntVar(&c.agentClients, "agent-clients", 50, "concurrent ssh-add -L clients")
	flag.IntVar(&c.agentRounds, "agent-rounds", 7, "rounds of concurrent ssh-add -L per agent")
	flag.IntVar(&c.signatures, "signatures", 30, "signatures per agent")
	flag.IntVar(&c.hashMiB, "hash-mib", 256, "size of the hashed executable")
	flag.IntVar(&c.hashRuns, "hash-runs", 5, "runs per hashing series")
	flag.StringVar(&c.bin, "bin", "", "directory with prebuilt agentknock and agentknock-device (default: build them)")
	flag.BoolVar(&c.trace, "trace", false, "only the per-step breakdown of a run (builds the trace client)")
	flag.BoolVar(&c.keep, "keep", false, "keep the temporary directory (trace profiles) and print its name")
	flag.Parse()
	if *quick {
		c = config{runs: 8, concurrent: 10, retained: 100, agentClients: 10, agentRounds: 2, signatures: 3, hashMiB: 16, hashRuns: 2,
			bin: c.bin, trace: c.trace, keep: c.keep}
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "agentknock-bench:", err)
		os.Exit(1)
	}
}

func run(c config) error {
	if runtime.GOOS != "linux" {
		return errors.New("the benchmark runs on Linux (peak RSS and /proc are read the Linux way)")
	}
	root, err := os.MkdirTemp("", "akbench-")
	if err != nil {
		return err
	}
	if c.keep {
		fmt.Printf("temporary directory kept: %s\n", root)
	} else {
		defer os.RemoveAll(root)
	}
	bin := c.bin
	if bin == "" {
		bin = filepath.Join(root, "bin")
		if err := build(bin); err != nil {
			return err
		}
	}
	trueBin, err := exec.LookPath("true")
	if err != nil {
		return err
	}
	trueBin, _ = filepath.EvalSymlinks(trueBin)
	self, err := os.Executable()
	if err != nil {
		return err
	}

	fmt.Printf("agentknock-bench: %s/%s, %d CPUs, %s\n\n", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().UTC().Format(time.RFC3339))
	fresh, err := newWorld(root, "fresh", bin)
	if err != nil {
		return err
	}
	defer fresh.close()
	if c.trace {
		return traceBench(c, root, fresh, trueBin)
	}
	busy, err := newWorld(root, "busy", bin)
	if err != nil {
		return err
	}
	defer busy.close()

	runTrue := []string{"run", "--quiet", "-s", "demo", "--", trueBin}
	// Warm both (page cache, first pruning) before anything is measured.
	for range 3 {
		if _, err := fresh.agentknock(runTrue...); err != nil {
			return err
		}
		if _, err := busy.agentknock(runTrue...); err != nil {
			return err
		}
	}

	fmt.Printf("\nseeding the second device with %d exchanges through real runs ...\n", c.retained)
	start := time.Now()
	if err := busy.seed(c.retained, runTrue); err != nil {
		return err
	}
	fmt.Printf("  %d runs in %s; state.db %s\n", c.retained, time.Since(start).Round(time.Millisecond), fileSize(filepath.Join(busy.state, "state.db")))

	// 1. Launch overhead, fresh and with retained history, interleaved.
	var direct, onFresh, onBusy, maxRSS []time.Duration
	for range c.runs {
		d, err := timed(exec.Command(trueBin))
		if err != nil {
			return err
		}
		direct = append(direct, d.wall)
		r, err := fresh.agentknock(runTrue...)
		if err != nil {
			return err
		}
		onFresh = append(onFresh, r.wall)
		maxRSS = append(maxRSS, time.Duration(r.maxRSS))
		r, err = busy.agentknock(runTrue...)
		if err != nil {
			return err
		}
		onBusy = append(onBusy, r.wall)
	}
	mt, mf, mb := median(direct), median(onFresh), median(onBusy)
	fmt.Printf("\nlaunch overhead (%d runs each, interleaved; agentknock run --quiet -s demo -- %s, policy approves):\n", c.runs, trueBin)
	fmt.Printf("  /bin/true alone            median %s\n", ms(mt))
	fmt.Printf("  run, fresh device          median %s  added %s  (p95 %s)\n", ms(mf), ms(mf-mt), ms(percentile(onFresh, 95)))
	fmt.Printf("  run, %d retained        median %s  added %s  (p95 %s)\n", c.retained, ms(mb), ms(mb-mt), ms(percentile(onBusy, 95)))
	fmt.Printf("  retained / fresh (added)   %.2fx\n", float64(mb-mt)/float64(mf-mt))
	fmt.Printf("  peak RSS of run            %.1f MiB (largest of %d runs)\n", float64(slices.Max(maxRSS))/1024, c.runs)

	// 2. Concurrent runs against one device.
	single := mf
	walls, failures, runsCPU, serveCPU := fresh.concurrent(c.concurrent, runTrue)
	fmt.Printf("\n%d concurrent runs against one device:\n", c.concurrent)
	fmt.Printf("  succeeded %d of %d\n", c.concurrent-failures, c.concurrent)
	if len(walls) > 0 {
		fmt.Printf("  p50 %s = %.2fx single, p95 %s = %.2fx single (single-run median %s)\n",
			ms(percentile(walls, 50)), ratio(percentile(walls, 50), single),
			ms(percentile(walls, 95)), ratio(percentile(walls, 95), single), ms(single))
		// All runs start at once, so the last can finish no sooner than the
		// CPU they all need, spread over every CPU.
		floor := (runsCPU + serveCPU) / time.Duration(runtime.NumCPU())
		fmt.Printf("  CPU used: %s by the runs (%s each), %s by the relay and device; spread over %d CPUs that is %s = %.2fx single, the soonest the last run can end\n",
			ms(runsCPU), ms(runsCPU/time.Duration(max(len(walls), 1))), ms(serveCPU), runtime.NumCPU(), ms(floor), ratio(floor, single))
	}

	// 3. The temporary agent, from inside a command that agentknock runs.
	if err := agentBench(c, root, fresh, self); err != nil {
		return err
	}

	// 4. Hashing a large executable.
	return hashBench(c, root, fresh, trueBin)
}

// build compiles the client exactly as released and the device program.
func build(bin string) error {
	modRoot, err := moduleRoot()
	if err != nil {
		return err
	}
	for _, args := range [][]string{
		{"build", "-trimpath", "-ldflags=-E=agentknock_rt0", "-o", filepath.Join(bin, "agentknock"), "."},
		{"build", "-o", filepath.Join(bin, "agentknock-device"), "./devkit/cmd/agentknock-device"},
	} {
		cmd := exec.Command("go", args...)
		cmd.Dir = modRoot
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("run from inside the agentknock module")
	}
	return filepath.Dir(mod), nil
}

// world is one client home paired with one running agentknock-device serve.
type world struct {
	root, home, state string
	env               []string
	serve             *exec.Cmd
}

func newWorld(root, name, bin string) (*world, error) {
	w := &world{root: filepath.Join(root, name)}
	w.home = filepath.Join(w.root, "home")
	w.state = filepath.Join(w.root, "dev")
	user, tmp := filepath.Join(w.root, "user"), filepath.Join(w.root, "tmp")
	for _, d := range []string{w.root, user, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, err
		}
	}
	w.env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + user, "TMPDIR=" + tmp, "LANG=C.UTF-8",
		"AGENTKNOCK_HOME=" + w.home, "AGENTKNOCK_DEVICE_STATE=" + w.state}
	address, err := w.output("", "agentknock-device", "init")
	if err != nil {
		return nil, err
	}
	if _, err := w.output("bench-value\n", "agentknock-device", "secret", "set", "demo", "DEMO_TOKEN=-"); err != nil {
		return nil, err
	}
	if _, err := w.output("", "agentknock-device", "secret", "ssh", "signer", "--generate", "ed25519"); err != nil {
		return nil, err
	}
	policy := filepath.Join(w.root, "policy.json")
	os.WriteFile(policy, []byte(`{"default":"deny","pairing":"approve","secrets":{"demo":"approve","signer":"approve"}}`+"\n"), 0o600)
	w.serve = w.command("agentknock-device", "serve", "--listen", "127.0.0.1:0", "--policy", policy)
	logf, err := os.Create(filepath.Join(w.root, "serve.log"))
	if err != nil {
		return nil, err
	}
	w.serve.Stderr = logf
	stdout, err := w.serve.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := w.serve.Start(); err != nil {
		return nil, err
	}
	relayURL := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "AGENTKNOCK_RELAY_URL="); ok {
			relayURL = v
			break
		}
	}
	go io.Copy(io.Discard, stdout)
	if relayURL == "" {
		return nil, fmt.Errorf("%s: serve did not announce its relay (log: %s)", name, filepath.Join(w.root, "serve.log"))
	}
	w.env = append(w.env, "AGENTKNOCK_RELAY_URL="+relayURL)
	if _, err := w.output("", "agentknock", "pairing", "start", strings.TrimSpace(address)); err != nil {
		return nil, err
	}
	if _, err := w.output("", "agentknock", "pairing", "finish"); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *world) close() {
	if w.serve != nil && w.serve.Process != nil {
		w.serve.Process.Signal(syscall.SIGTERM)
		w.serve.Wait()
	}
}

func lookPath(env []string, name string) (string, error) {
	for _, e := range env {
		if p, ok := strings.CutPrefix(e, "PATH="); ok {
			for _, d := range filepath.SplitList(p) {
				if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Mode().IsRegular() {
					return filepath.Join(d, name), nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// command runs name from the world's PATH (the built binaries first).
func (w *world) command(name string, args ...string) *exec.Cmd {
	path, err := lookPath(w.env, name)
	if err != nil {
		path = name
	}
	cmd := exec.Command(path, args...)
	cmd.Args[0] = name
	cmd.Env = w.env
	return cmd
}

func (w *world) output(stdin, name string, args ...string) (string, error) {
	cmd := w.command(name, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

// result is one finished process: wall time and peak RSS in KiB (which
// Linux carries across exec, so it covers agentknock before it replaced
// itself).
type result struct {
	wall   time.Duration
	maxRSS int64
	cpu    time.Duration // user + system, of the run and the command it became
}

func timed(cmd *exec.Cmd) (result, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return result{}, fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	r := result{wall: wall}
	if ru != nil {
		r.maxRSS = ru.Maxrss
		r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	return r, nil
}

func (w *world) agentknock(args ...string) (result, error) {
	return timed(w.command("agentknock", args...))
}

// seed makes the device retain n more exchanges, four runs at a time.
func (w *world) seed(n int, args []string) error {
	var (
		mu    sync.Mutex
		first error
		wg    sync.WaitGroup
	)
	next := make(chan struct{})
	for range 4 {
		wg.Go(func() {
			for range next {
				if _, err := w.agentknock(args...); err != nil {
					mu.Lock()
					first = cmp(first, err)
					mu.Unlock()
				}
			}
		})
	}
	for range n {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	return first
}

func cmp(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// concurrent starts n runs at once and returns the wall times of those
// that succeeded, the number that failed and the CPU time the runs and the
// serving process used.
func (w *world) concurrent(n int, args []string) ([]time.Duration, int, time.Duration, time.Duration) {
	var (
		mu       sync.Mutex
		walls    []time.Duration
		failures int
		wg       sync.WaitGroup
		runsCPU  time.Duration
	)
	serveBefore := processCPU(w.serve.Process.Pid)
	gate := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-gate
			r, err := w.agentknock(args...)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failures++
				if failures == 1 {
					fmt.Fprintf(os.Stderr, "  first failure: %v\n", err)
				}
				return
			}
			walls = append(walls, r.wall)
			runsCPU += r.cpu
		})
	}
	close(gate)
	wg.Wait()
	return walls, failures, runsCPU, processCPU(w.serve.Process.Pid) - serveBefore
}

// processCPU is the user and system time a running process has used
// (/proc/PID/stat, fields 14 and 15, in clock ticks of 1/100 s).
func processCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name in field 2 may hold spaces; the fields after it do not.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// agentBench runs the probe as the command of `agentknock run -s signer`,
// so that it sees the temporary agent, with a plain ssh-agent holding one
// key as the upstream agent.
func agentBench(c config, root string, w *world, self string) error {
	dir := filepath.Join(root, "agent")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	key := filepath.Join(dir, "upstream")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "upstream", "-f", key).CombinedOutput(); err != nil {
		return fmt.Errorf("ssh-keygen: %v\n%s", err, out)
	}
	sock := filepath.Join(dir, "upstream.sock")
	agent := exec.Command("ssh-agent", "-D", "-a", sock)
	if err := agent.Start(); err != nil {
		return err
	}
	defer func() { agent.Process.Kill(); agent.Wait() }()
	for i := 0; ; i++ {
		probe := exec.Command("ssh-add", "-l")
		probe.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
		if out, err := probe.CombinedOutput(); err == nil || bytes.Contains(out, []byte("no identities")) {
			break
		}
		if i == 500 {
			return errors.New("ssh-agent did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	add := exec.Command("ssh-add", key)
	add.Env = append(os.Environ(), "SSH_AUTH_SOCK="+sock)
	if out, err := add.CombinedOutput(); err != nil {
		return fmt.Errorf("ssh-add: %v\n%s", err, out)
	}
	cmd := w.command("agentknock", "run", "--quiet", "-s", "signer", "--", self, probeRole,
		"-upstream", sock, "-pub", key+".pub", "-clients", fmt.Sprint(c.agentClients),
		"-rounds", fmt.Sprint(c.agentRounds), "-signatures", fmt.Sprint(c.signatures))
	cmd.Env = append(cmd.Env, "SSH_AUTH_SOCK="+sock)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("agent probe: %v\n%s", err, stderr.String())
	}
	var p probeReport
	if err := json.Unmarshal(out, &p); err != nil {
		return fmt.Errorf("agent probe printed %q: %v", out, err)
	}
	fmt.Printf("\ntemporary SSH agent (upstream: ssh-agent with one Ed25519 key):\n")
	fmt.Printf("  %d concurrent ssh-add -L, median of %d rounds: %s through the agent, %s on ssh-agent: %.2fx\n",
		c.agentClients, c.agentRounds, ms(p.ListTemp), ms(p.ListDirect), ratio(p.ListTemp, p.ListDirect))
	fmt.Printf("  signing with the upstream key (ssh-keygen -Y sign), median of %d: %s through the agent, %s on ssh-agent: %.2fx\n",
		c.signatures, ms(p.SignTemp), ms(p.SignDirect), ratio(p.SignTemp, p.SignDirect))
	fmt.Printf("  peak RSS of the invocation service: %.1f MiB idle, %.1f MiB after the load\n", float64(p.IdleHWM)/1024, float64(p.LoadHWM)/1024)
	return nil
}

// hashBench runs a 256 MiB executable (a copy of true(1) with data appended,
// which the loader ignores) and a plain copy, and sha256sum on the big one.
func hashBench(c config, root string, w *world, trueBin string) error {
	small, big := filepath.Join(root, "small-true"), filepath.Join(root, "big-true")
	code, err := os.ReadFile(trueBin)
	if err != nil {
		return err
	}
	if err := os.WriteFile(small, code, 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(big, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	f.Write(code)
	pad := bytes.Repeat([]byte("agentknock-bench"), 1<<16)
	for written := int64(len(code)); written < int64(c.hashMiB)<<20; written += int64(len(pad)) {
		if _, err := f.Write(pad[:min(int64(len(pad)), int64(c.hashMiB)<<20-written)]); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	var runBig, runSmall, sum []time.Duration
	for range c.hashRuns + 1 { // the first round only warms the page cache
		rb, err := w.agentknock("run", "--quiet", "-s", "demo", "--", big)
		if err != nil {
			return err
		}
		rs, err := w.agentknock("run", "--quiet", "-s", "demo", "--", small)
		if err != nil {
			return err
		}
		cmd := exec.Command("sha256sum", big)
		cmd.Stdout = io.Discard
		s, err := timed(cmd)
		if err != nil {
			return err
		}
		runBig, runSmall, sum = append(runBig, rb.wall), append(runSmall, rs.wall), append(sum, s.wall)
	}
	runBig, runSmall, sum = runBig[1:], runSmall[1:], sum[1:]
	added := median(runBig) - median(runSmall)
	fmt.Printf("\nexecutable hashing, %d MiB (median of %d):\n", c.hashMiB, c.hashRuns)
	fmt.Printf("  run adds %s over a small executable: two passes (before the request and before exec)\n", ms(added))
	fmt.Printf("  sha256sum %s; per pass %.2fx sha256sum\n", ms(median(sum)), ratio(added/2, median(sum)))
	return nil
}

func fileSize(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MiB", float64(fi.Size())/(1<<20))
}

func median(d []time.Duration) time.Duration { return percentile(d, 50) }

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(min(i, len(s))-1, 0)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// traceBench runs the diagnostic client (-tags agentknock_trace, marks in
// trace_on.go) and prints the median time of each step, and where its CPU
// profiles went.
func traceBench(c config, root string, w *world, trueBin string) error {
	modRoot, err := moduleRoot()
	if err != nil {
		return err
	}
	bin := filepath.Join(root, "trace", "agentknock")
	cmd := exec.Command("go", "build", "-tags", "agentknock_trace", "-trimpath", "-ldflags=-E=agentknock_rt0", "-o", bin, ".")
	cmd.Dir = modRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building the trace client: %v\n%s", err, out)
	}
	profiles := filepath.Join(root, "trace", "cpu")
	os.MkdirAll(profiles, 0o700)
	marks := filepath.Join(root, "trace", "marks.jsonl")
	// The marks first, then as many runs again with a CPU profile each
	// (profiling has a start-up cost of its own). /bin/true alone runs
	// between the marked runs, for the exec's share.
	var walls, direct []time.Duration
	for i := range 2 * c.runs {
		if i < c.runs {
			d, err := timed(exec.Command(trueBin))
			if err != nil {
				return err
			}
			direct = append(direct, d.wall)
		}
		cmd := exec.Command(bin, "run", "--quiet", "-s", "demo", "--", trueBin)
		cmd.Env = slices.Clone(w.env)
		if i < c.runs {
			cmd.Env = append(cmd.Env, "AGENTKNOCK_TRACE="+marks, fmt.Sprintf("AGENTKNOCK_TRACE_T0=%d", time.Now().UnixNano()))
		} else {
			cmd.Env = append(cmd.Env, fmt.Sprintf("AGENTKNOCK_TRACE_CPU=%s/%d.pprof", profiles, i))
		}
		r, err := timed(cmd)
		if err != nil {
			return err
		}
		if i < c.runs {
			walls = append(walls, r.wall)
		}
	}
	data, err := os.ReadFile(marks)
	if err != nil {
		return err
	}
	type mark struct {
		Step string `json:"step"`
		At   int64  `json:"at"`
	}
	var order []string
	steps := map[string][]time.Duration{}
	var totals []time.Duration
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var ms []mark
		if err := json.Unmarshal([]byte(line), &ms); err != nil || len(ms) < 2 {
			return fmt.Errorf("trace line %q: %v", line, err)
		}
		for i := 1; i < len(ms); i++ {
			if _, seen := steps[ms[i].Step]; !seen {
				order = append(order, ms[i].Step)
			}
			steps[ms[i].Step] = append(steps[ms[i].Step], time.Duration(ms[i].At-ms[i-1].At))
		}
		totals = append(totals, time.Duration(ms[len(ms)-1].At-ms[0].At))
	}
	fmt.Printf("\nwhere a run's time goes (trace build, %d runs, median per step; each step ends at its mark):\n", c.runs)
	for _, s := range order {
		fmt.Printf("  %8s  %s\n", ms(median(steps[s])), s)
	}
	var sum time.Duration
	for _, s := range order {
		sum += median(steps[s])
	}
	fmt.Printf("  %8s  launch to execveat: sum of the medians (median of the per-run sums %s)\n", ms(sum), ms(median(totals)))
	if len(walls) == len(totals) {
		var tails []time.Duration
		for i := range walls {
			tails = append(tails, walls[i]-totals[i])
		}
		fmt.Printf("  %8s  execveat, the command and its exit, seen by the caller (wall time less the marks; /bin/true run directly: %s)\n", ms(median(tails)), ms(median(direct)))
		fmt.Printf("  %8s  whole run, median wall time (%s added to /bin/true)\n", ms(median(walls)), ms(median(walls)-median(direct)))
	}
	files, _ := filepath.Glob(filepath.Join(profiles, "*.pprof"))
	top := exec.Command("go", append([]string{"tool", "pprof", "-top", "-cum", "-nodecount=40", bin}, files...)...)
	out, err := top.Output()
	if err != nil {
		return fmt.Errorf("go tool pprof: %v", err)
	}
	fmt.Printf("\nCPU profile of %d runs (the client, from package init to exec; go tool pprof -top -cum):\n", c.runs)
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "%") {
			fmt.Println("  " + line)
		}
	}
	return nil
}
