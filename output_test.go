// Text from the device or relay is shown escaped.

package main

import (
	"strings"
	"testing"
	"time"
)

func TestPrintableEscapesControlAndFormatCharacters(t *testing.T) {
	cases := map[string]string{
		"plain text, é ü":            "plain text, é ü",
		"tab\tkept":                  "tab\tkept",
		"clear \x1b[2J screen":       `clear \x1b[2J screen`,
		"bell\a and \x7f and \u0085": `bell\x07 and \x7f and \x85`,
		"ok \u202egnp.exe":           `ok \u202egnp.exe`,
		"zero\u200bwidth \u2066x":    `zero\u200bwidth \u2066x`,
		"line\u2028separator":        `line\u2028separator`,
		"new\nline":                  `new\x0aline`,
	}
	for in, want := range cases {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// The elapsed time in the reference client's progress lines.
func TestFormatElapsed(t *testing.T) {
	cases := map[time.Duration]string{
		0:                       "0 seconds",
		900 * time.Millisecond:  "0 seconds",
		30 * time.Second:        "30 seconds",
		60 * time.Second:        "1 minute",
		90 * time.Second:        "1 minute 30 seconds",
		3661 * time.Second:      "1 hour 1 minute 1 second",
		90061 * time.Second:     "1 day 1 hour 1 minute 1 second",
		2 * 86400 * time.Second: "2 days",
	}
	for d, want := range cases {
		if got := formatElapsed(d); got != want {
			t.Errorf("formatElapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

// Progress: nothing for a stage change unless --verbose; the heartbeat
// line names the stage and the elapsed time; --quiet prints neither; a
// run's lines carry the prefix, the other commands' do not.
func TestProgressLines(t *testing.T) {
	var b strings.Builder
	o := &output{w: &b, messages: &runStageMessages}
	o.setStage(stagePreparing)
	o.setStage(stageWaitingForResponse)
	// A reconnection reports "connected" again; the device still has the
	// request, so the line does not go back to waiting for delivery.
	relayProgress(o).Progress("connected")
	if b.Len() != 0 {
		t.Fatalf("stage changes printed %q without --verbose", b.String())
	}
	o.started = time.Now().Add(-61 * time.Second)
	o.heartbeat()
	if want := "AGENTKNOCK: The device received the request. Waiting for its response. Elapsed time: 1 minute 1 second.\n"; b.String() != want {
		t.Fatalf("heartbeat %q, want %q", b.String(), want)
	}
	b.Reset()
	v := &output{w: &b, verbose: true, plain: true, messages: &secretListStageMessages}
	v.setStage(stagePreparing)
	v.setStage(stagePreparing)
	v.setStage(stageCompleting)
	if want := "Preparing the secret list request.\nSecret list received. Confirming receipt with the device.\n"; b.String() != want {
		t.Fatalf("verbose stages %q, want %q", b.String(), want)
	}
	b.Reset()
	q := &output{w: &b, quiet: true, messages: &runStageMessages}
	q.setStage(stagePreparing)
	q.heartbeat()
	q.failure("denied")
	if b.Len() != 0 {
		t.Fatalf("--quiet run printed %q", b.String())
	}
}

// Names in messages are quoted the way the reference client quotes them.
func TestQuoted(t *testing.T) {
	cases := map[string]string{
		"gh":             `"gh"`,
		`a "b" \ c`:      `"a \"b\" \\ c"`,
		"new\nline\ttab": `"new\nline\ttab"`,
		"esc\x1b[2J":     `"esc\u{1b}[2J"`,
		"rtl\u202e":      `"rtl\u{202e}"`,
		"café":           `"café"`,
	}
	for in, want := range cases {
		if got := quoted(in); got != want {
			t.Errorf("quoted(%q) = %s, want %s", in, got, want)
		}
	}
}
