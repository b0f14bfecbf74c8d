// scripts/bench --trace: the per-step breakdown of a run from the
// diagnostic client (-tags agentknock_trace) and its CPU profile.

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

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
