// The bound of each hostile-relay mode, computed from the client's own
// relay constants, is the one README's table states (README, "Limits and
// bounds"); e2e/hostile_test.go checks that each mode ends on the limit
// the table names.

package main

import (
	"errors"
	"os"
	"regexp"
	"strings"
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

// A give-up because the next wait would pass the stall limit names whose
// wait it is: this client's own backoff, or a delay the relay asked for.
// (The message said "the relay asks to wait 5s" for the client's backoff.)
func TestStallMessageNamesWhoseWaitItIs(t *testing.T) {
	for name, c := range map[string]struct {
		retryAfterMS uint64
		says, not    string
	}{
		"own backoff":   {0, "the next retry, after this client's backoff of 1s", "the relay asks"},
		"relay's delay": {3000, "the relay asks to wait 3s", "backoff of"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newRelayFake(t, false, nil, func(n int, conn *relayFakeConn) {
				conn.next()
				if c.retryAfterMS != 0 {
					conn.send(map[string]any{"type": "error", "error": "RATE_LIMITED", "message": "later", "retryable": true, "retry_after_ms": c.retryAfterMS})
					conn.hold()
					return
				}
				conn.drop()
			})
			opt := hostileOptions()
			opt.BackoffInitial, opt.BackoffMax = time.Second, time.Second
			opt.MaxStall = 800 * time.Millisecond
			_, err := rtRunExchange(t, r.endpoint(), deviceRoute(rtDeviceID, rtClientID), opt)
			if !errors.Is(err, errRelayUnavailable) || !strings.Contains(err.Error(), c.says) || strings.Contains(err.Error(), c.not) {
				t.Fatalf("ended with %v, want %q", err, c.says)
			}
		})
	}
}
