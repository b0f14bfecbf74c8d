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

	// 1. Launch overhead, fresh and with retained history, interleaved with
	// /bin/true and with the floor program exec'ing it.
	floor, err := buildFloor(root)
	if err != nil {
		return err
	}
	var direct, floored, onFresh, onBusy, maxRSS []time.Duration
	for range c.runs {
		d, err := timed(exec.Command(trueBin))
		if err != nil {
			return err
		}
		direct = append(direct, d.wall)
		if d, err = timed(exec.Command(floor, trueBin)); err != nil {
			return err
		}
		floored = append(floored, d.wall)
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
	fmt.Printf("  a Go program exec'ing it   median %s  added %s  (the floor: Go runtime start, exec, teardown; floor.go)\n", ms(median(floored)), ms(median(floored)-mt))
	fmt.Printf("  run, fresh device          median %s  added %s  (p95 %s)\n", ms(mf), ms(mf-mt), ms(percentile(onFresh, 95)))
	fmt.Printf("  run, %d retained        median %s  added %s  (p95 %s)\n", c.retained, ms(mb), ms(mb-mt), ms(percentile(onBusy, 95)))
	fmt.Printf("  retained / fresh (added)   %.2fx\n", float64(mb-mt)/float64(mf-mt))
	fmt.Printf("  fresh, beyond the floor    %s\n", ms(mf-median(floored)))
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
