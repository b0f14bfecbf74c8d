//go:build agentknock_trace

// Step marks for the launch-cost breakdown in README "Measurements", in a
// diagnostic build only (-tags agentknock_trace; scripts/bench --trace):
// traceStep notes the wall time of a step's end, and traceFlush, called
// just before the process is replaced, appends the marks as one JSON line to
// $AGENTKNOCK_TRACE and writes the CPU profile started for
// $AGENTKNOCK_TRACE_CPU. $AGENTKNOCK_TRACE_T0 (unix nanoseconds) is when
// the caller started the process, the first mark. The marks are process-wide state, which release
// builds do not have.

package main

import (
	"encoding/json"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"sync"
	"time"
)

type traceMark struct {
	Step string `json:"step"`
	At   int64  `json:"at"` // unix nanoseconds
}

var tracing struct {
	sync.Mutex
	marks []traceMark
	cpu   *os.File
}

func init() {
	if t0, err := strconv.ParseInt(os.Getenv("AGENTKNOCK_TRACE_T0"), 10, 64); err == nil {
		tracing.marks = append(tracing.marks, traceMark{"launch", t0})
	}
	traceStep("package init")
	if path := os.Getenv("AGENTKNOCK_TRACE_CPU"); path != "" {
		if f, err := os.Create(path); err == nil {
			// 100 Hz sees nothing of a run this short; the runtime warns
			// once that the rate was set before the profile started.
			runtime.SetCPUProfileRate(4000)
			if pprof.StartCPUProfile(f) == nil {
				tracing.cpu = f
			}
		}
	}
}

func traceStep(step string) {
	tracing.Lock()
	tracing.marks = append(tracing.marks, traceMark{step, time.Now().UnixNano()})
	tracing.Unlock()
}

func traceFlush() {
	traceStep("revalidated")
	if tracing.cpu != nil {
		pprof.StopCPUProfile()
		tracing.cpu.Close()
	}
	path := os.Getenv("AGENTKNOCK_TRACE")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	tracing.Lock()
	defer tracing.Unlock()
	json.NewEncoder(f).Encode(tracing.marks)
}
