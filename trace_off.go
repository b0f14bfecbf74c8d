//go:build !agentknock_trace

// Step marks for the launch-cost breakdown in README "Measurements"
// (scripts/bench --trace builds with -tags agentknock_trace, trace_on.go).
// In every other build they are empty and compile away.

package main

func traceStep(string) {}

func traceFlush() {}
