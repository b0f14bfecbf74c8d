// The bound of each hostile-relay mode, computed from the client's own
// relay constants, is the one README's table states (README, "Limits and
// bounds"); e2e/hostile_test.go checks that each mode ends on the limit
// the table names.

package main

import (
	"os"
	"regexp"
	"testing"
	"time"
)

// failureBudget is the backoff a run spends between its MaxFailures
// attempts when each attempt fails at once.
func failureBudget(o relayOptions) time.Duration {
	var total time.Duration
	delay := o.BackoffInitial
	for i := 1; i < o.MaxFailures; i++ {
		total += delay
		delay = min(2*delay, o.BackoffMax)
	}
	return total
}

// hostileModeBounds is each mode's bound, by the limit that ends it.
func hostileModeBounds(o relayOptions) map[string]time.Duration {
	budget := failureBudget(o)
	answerStall := o.MaxStall + o.AnswerWithin + o.BackoffMax
	return map[string]time.Duration{
		"ack then close":                 budget,
		"close in the middle of a frame": budget,
		"garbage frames":                 budget,
		"frames of another exchange":     budget,
		"oversized frame":                budget,
		"forged response":                o.CompletionBound,
		"reads and never writes":         answerStall,
		"ping flood":                     answerStall,
		"never answers pings":            o.MaxStall + o.PingAfter + o.PongWithin + o.BackoffMax,
		"retry after a year":             o.MaxStall,
	}
}

func TestREADMEStatesEachHostileRelayBound(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^  \\| ([a-z ]+) \\| [^|]+ \\| `([0-9a-z.]+)`")
	stated := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(readme), -1) {
		stated[m[1]] = m[2]
	}
	for mode, bound := range hostileModeBounds(relayOptions{}.withDefaults()) {
		if stated[mode] != bound.String() {
			t.Errorf("README states %q for %q; the constants give %s", stated[mode], mode, bound)
		}
	}
	if len(stated) != len(hostileModeBounds(relayOptions{}.withDefaults())) {
		t.Errorf("README's table has %d modes: %v", len(stated), stated)
	}
	// Every bound is below the longest any mode can take: the stall limit,
	// one last attempt and one backoff.
	o := relayOptions{}.withDefaults()
	for mode, bound := range hostileModeBounds(o) {
		if bound > hostileBound(o) {
			t.Errorf("%s: %s is over the overall bound %s", mode, bound, hostileBound(o))
		}
	}
}
