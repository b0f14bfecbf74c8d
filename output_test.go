// Text from the device or relay is shown escaped.

package main

import (
	"errors"
	"fmt"
	"slices"
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

// The failure report of diagnose.go: every class has a suggested action,
// the report's lines come in the reference's order, and the denial and
// hash texts a person reads are right.

func TestEveryFailureClassHasItsOwnSuggestedAction(t *testing.T) {
	seen := map[string]failureClass{}
	for c := failOther; c <= failExecFailed; c++ {
		lines := suggestedActions(c, "fix-command", "the command")
		if len(lines) == 0 || !strings.HasPrefix(lines[0], "Suggested action: ") {
			t.Fatalf("class %d: %q", c, lines)
		}
		// Classes that share the way back (pair again) share the text;
		// every other class has its own.
		if prev, ok := seen[lines[0]]; ok && !(slices.Contains([]failureClass{failPairingInvalid, failKeyRefused, failClientInactive}, c) &&
			slices.Contains([]failureClass{failPairingInvalid, failKeyRefused, failClientInactive}, prev)) {
			t.Errorf("classes %d and %d suggest the same: %q", prev, c, lines[0])
		}
		seen[lines[0]] = c
	}
	if got := suggestedActions(failPairingFileMode, "chmod 600 /h/pairing.json", "the command"); got[len(got)-1] != "chmod 600 /h/pairing.json" {
		t.Errorf("the fix is not on a line of its own: %q", got)
	}
}

func TestStopReportLines(t *testing.T) {
	cases := []struct {
		err   error
		class failureClass
		want  []string
	}{
		{beforeContact(classify(failNotPaired, errors.New("Agentknock isn't paired with a device"))), failOther, []string{
			"Agentknock isn't paired with a device.",
			"Agentknock did not contact the device.",
			"The command didn't run.",
			"Suggested action: Get a pairing address from the device, then run:",
			"agentknock pairing start <PAIRING_ADDRESS>",
		}},
		// The transport's sentinel errors carry their class.
		{fmt.Errorf("the relay exchange failed: %w (request)", errExchangeInactive), failOther, []string{
			"the relay exchange failed: the relay reports the exchange is no longer active (request).",
			"The command didn't run.",
			"Suggested action: Run the command again, and answer the request on the device while Agentknock waits.",
		}},
		{fmt.Errorf("the relay could not be reached: %w after 8 consecutive failures", errRelayUnavailable), failOther, nil},
		{fmt.Errorf("x: %w", errClientInactive), failOther, nil},
		{&interrupted{sig: 2}, failOther, nil},
		{unauthenticatedReport("UNSUPPORTED_PROTOCOL_VERSION", "old", ""), failOther, nil},
		{errors.New("something else"), failServiceStart, nil},
	}
	for _, c := range cases {
		got := runStopped(false).lines(c.err, c.class)
		if c.want != nil && !slices.Equal(got, c.want) {
			t.Errorf("%v:\n got %q\nwant %q", c.err, got, c.want)
		}
		class, _ := classOf(c.err, c.class)
		if want := suggestedActions(class, "", "the command"); !slices.Equal(got[len(got)-len(want):], want) {
			t.Errorf("%v: ends %q, want the class's action %q", c.err, got, want)
		}
	}
	for err, want := range map[error]failureClass{
		fmt.Errorf("w: %w", errRelayUnavailable):                      failRelayUnavailable,
		fmt.Errorf("w: %w", errClientInactive):                        failClientInactive,
		fmt.Errorf("w: %w", errExchangeInactive):                      failExpired,
		&relayRefusal{Code: "X"}:                                      failRelayRefused,
		unauthenticatedReport(reportAuthenticationFailed, "", ""):     failKeyRefused,
		unauthenticatedReport("UNSUPPORTED_PROTOCOL_VERSION", "", ""): failProtocolVersion,
		unauthenticatedReport("OTHER", "", ""):                        failUnauthenticated,
		&interrupted{sig: 15}:                                         failInterrupted,
	} {
		if got, _ := classOf(err, failOther); got != want {
			t.Errorf("classOf(%v) = %d, want %d", err, got, want)
		}
	}
}

// issue 20: the device's default message repeated the client's own words
// ("The request was denied on the device: The request was denied on the
// device.. The command did not run.").
func TestDenialShowsTheDevicesMessageOnce(t *testing.T) {
	for _, c := range []struct {
		denial deviceDenial
		want   string
		class  failureClass
	}{
		{deviceDenial{denialUserDenied, "The request was denied on the device."}, "The request was denied on the device.", failDeniedByPerson},
		{deviceDenial{denialUserDenied, "the request was denied on the device"}, "The request was denied on the device.", failDeniedByPerson},
		{deviceDenial{denialUserDenied, "Not on a Friday."}, "The request was denied on the device: Not on a Friday.", failDeniedByPerson},
		{deviceDenial{denialUserDenied, "not now"}, "The request was denied on the device: not now.", failDeniedByPerson},
		{deviceDenial{denialPolicyDenied, ""}, "The device's policy denied the request.", failDeniedByPolicy},
		{deviceDenial{denialInvalidRequest, "unknown secret"}, "The device refused the request as invalid: unknown secret.", failInvalidRequest},
		{deviceDenial{"OTHER", "\x1b[2J"}, "The device denied the request: \\x1b[2J.", failDenied},
	} {
		err := denialError(c.denial)
		if err.Error() != c.want || strings.Contains(err.Error(), "..") {
			t.Errorf("%+v: %q, want %q", c.denial, err, c.want)
		}
		if class, _ := classOf(err, failOther); class != c.class {
			t.Errorf("%+v: class %d, want %d", c.denial, class, c.class)
		}
	}
}

// issue 20: --verbose showed the hash in Base64 while the device shows it
// in hexadecimal; both are hexadecimal now, to compare by eye.
func TestExecutableHashIsShownInHex(t *testing.T) {
	h := []byte{0x00, 0xab, 0xff, 0x10}
	if got := hashText(h); got != "00abff10" {
		t.Fatalf("hashText = %q, want 00abff10", got)
	}
}

func TestSentence(t *testing.T) {
	for in, want := range map[string]string{
		"command \"x\" wasn't found": "command \"x\" wasn't found.",
		"Done.":                      "Done.",
		" why? ":                     "why?",
		"":                           "",
	} {
		if got := sentence(in); got != want {
			t.Errorf("sentence(%q) = %q, want %q", in, got, want)
		}
	}
}
