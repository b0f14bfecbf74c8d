// Agentknock's own messages, all on standard error, with the reference
// client's rules: a `run` prefixes every line with "AGENTKNOCK: " because
// the lines can interleave with the command's output; the pairing and
// secret commands print plain lines. While a request waits for the device,
// nothing is printed until 30 seconds have passed, then one progress line
// every 30 seconds with the total elapsed time; --verbose also prints each
// stage as it is reached, --quiet prints neither. Values of secrets never
// reach these functions; callers pass names only.
//
// The second half is the diagnosis of a command that stops before doing
// its work: the failure class, the "didn't run" line and the suggested
// action the reference client gives for each class.

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

const messagePrefix = "AGENTKNOCK: "

type output struct {
	w       io.Writer
	quiet   bool
	verbose bool
	plain   bool // no prefix: pairing and secret commands

	mu       sync.Mutex // stage is set from the relay goroutine
	messages *stageMessages
	stage    requestStage
	started  time.Time
}

// newOutput is the output of `run` (prefixed lines).
func newOutput(quiet, verbose bool) *output {
	return &output{w: os.Stderr, quiet: quiet, verbose: verbose, messages: &runStageMessages}
}

// newPlainOutput is the output of the pairing and secret commands.
func newPlainOutput(quiet, verbose bool, messages *stageMessages) *output {
	return &output{w: os.Stderr, quiet: quiet, verbose: verbose, plain: true, messages: messages}
}

func (o *output) print(format string, args ...any) {
	for line := range strings.SplitSeq(fmt.Sprintf(format, args...), "\n") {
		if o.plain {
			fmt.Fprintln(o.w, line)
		} else {
			fmt.Fprintln(o.w, messagePrefix+line)
		}
	}
}

// detail is shown only with --verbose.
func (o *output) detail(format string, args ...any) {
	if o.verbose {
		o.print(format, args...)
	}
}

// failure is always shown, except errors of a `run` with --quiet: the
// reference client keeps a quiet run entirely silent, exit status only.
func (o *output) failure(format string, args ...any) {
	if o.quiet && !o.plain {
		return
	}
	o.print(format, args...)
}

// requestStage is where a request to the device stands, the stages the
// reference client reports.
type requestStage int

const (
	stageNone requestStage = iota
	stagePreparing
	stageWaitingForDelivery
	stageWaitingForResponse
	stageCompleting
	stageCompleted
)

// stageMessages words each stage for one kind of request.
type stageMessages [stageCompleted + 1]string

var (
	runStageMessages = stageMessages{
		stagePreparing:          "Preparing the request for the selected secrets.",
		stageWaitingForDelivery: "Waiting for the device to receive the request.",
		stageWaitingForResponse: "The device received the request. Waiting for its response.",
		stageCompleting:         "Device response received. Confirming receipt.",
		stageCompleted:          "Request complete.",
	}
	pairingStartStageMessages = stageMessages{
		stagePreparing:          "Preparing the pairing request.",
		stageWaitingForDelivery: "Waiting for the device to receive the pairing request.",
		stageWaitingForResponse: "The device received the pairing request. Waiting for its response.",
		stageCompleting:         "Pairing response received. Saving the pending pairing.",
		stageCompleted:          "Pairing request complete.",
	}
	pairingFinishStageMessages = stageMessages{
		stagePreparing:          "Preparing the pairing confirmation.",
		stageWaitingForDelivery: "Waiting for the device to receive the pairing confirmation.",
		stageWaitingForResponse: "The device received the pairing confirmation. Waiting for its response.",
		stageCompleting:         "Device response received. Processing the pairing confirmation.",
		stageCompleted:          "Pairing activated.",
	}
	pairingRemoveStageMessages = stageMessages{
		stagePreparing:          "Preparing the pairing removal request.",
		stageWaitingForDelivery: "Waiting for the device to receive the pairing removal request.",
		stageWaitingForResponse: "The device received the pairing removal request. Waiting for its response.",
		stageCompleting:         "Device response received. Processing the pairing removal.",
		stageCompleted:          "Pairing removal complete.",
	}
	secretListStageMessages = stageMessages{
		stagePreparing:          "Preparing the secret list request.",
		stageWaitingForDelivery: "Waiting for the device to receive the secret list request.",
		stageWaitingForResponse: "The device received the secret list request. Waiting for its response.",
		stageCompleting:         "Secret list received. Confirming receipt with the device.",
		stageCompleted:          "Secret list request complete.",
	}
	secretUploadStageMessages = stageMessages{
		stagePreparing:          "Preparing the secret upload.",
		stageWaitingForDelivery: "Waiting for the device to receive the secret upload.",
		stageWaitingForResponse: "The device received the secret upload. Waiting for confirmation that it saved the upload.",
		stageCompleting:         "Device response received. Confirming receipt.",
		stageCompleted:          "Secret upload complete.",
	}
)

// setStage records a stage; --verbose prints it when it changes. The
// first stage starts the elapsed time. A request's stages only advance:
// an event that would take it back (a reconnection once the device has
// the request) changes nothing.
func (o *output) setStage(s requestStage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started.IsZero() {
		o.started = time.Now()
	}
	if s <= o.stage {
		return
	}
	o.stage = s
	if o.verbose && o.messages != nil && o.messages[s] != "" {
		o.print("%s", o.messages[s])
	}
}

// heartbeat is the progress line printed every progressInterval.
func (o *output) heartbeat() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.quiet || o.messages == nil || o.messages[o.stage] == "" {
		return
	}
	o.print("%s Elapsed time: %s.", o.messages[o.stage], formatElapsed(time.Since(o.started)))
}

// formatElapsed writes a duration as the reference client does: "1 hour 1
// minute 1 second", zero units left out, "0 seconds" for less than one.
func formatElapsed(d time.Duration) string {
	total := int64(d / time.Second)
	units := []struct {
		name  string
		value int64
	}{
		{"day", total / 86400}, {"hour", total % 86400 / 3600},
		{"minute", total % 3600 / 60}, {"second", total % 60},
	}
	var parts []string
	for _, u := range units {
		if u.value == 0 {
			continue
		}
		suffix := "s"
		if u.value == 1 {
			suffix = ""
		}
		parts = append(parts, fmt.Sprintf("%d %s%s", u.value, u.name, suffix))
	}
	if len(parts) == 0 {
		return "0 seconds"
	}
	return strings.Join(parts, " ")
}

// quoted writes s between double quotes with escapes, the way the
// reference client shows names in its messages (Rust's Debug format for
// strings), so that a name cannot break or rewrite the line.
func quoted(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == 0:
			b.WriteString(`\0`)
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			fmt.Fprintf(&b, `\u{%x}`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// printable escapes text that came from the device or the relay so that it
// cannot rewrite the terminal or reorder what is shown: control characters,
// and invisible format characters such as bidirectional overrides.
func printable(s string) string {
	var b []byte
	for _, r := range s {
		switch {
		case r == '\t':
			b = append(b, '\t')
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			b = fmt.Appendf(b, "\\x%02x", r)
		case unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp):
			b = fmt.Appendf(b, "\\u%04x", r)
		default:
			b = utf8.AppendRune(b, r)
		}
	}
	return string(b)
}

// What agentknock tells its caller when a command stops before doing its
// work: one line saying what happened, one saying what did not happen
// ("The command didn't run."), then `Suggested action:` and, on lines of
// their own, the command to run next. The reference client gives this
// information for each failure class it distinguishes (its main.rs,
// print_command_error and the functions it calls); an agent decides its
// next step from exactly these lines. The words are ours; the markers
// (`AGENTKNOCK: ` before a run's lines, `Suggested action:`) and the
// stream (standard error) are the reference's.

// failureClass is what the caller's next step depends on.
type failureClass int

const (
	failOther failureClass = iota
	// Local state.
	failNotPaired
	failPairingPending
	failPairingFileMode // a fix command is attached
	failPairingInvalid
	failHomeUnsafe // a fix command may be attached
	failHomeNotSet
	failStateLocked
	// The device's answer.
	failDeniedByPerson
	failDeniedByPolicy
	failInvalidRequest
	failDenied
	failDeviceError
	failResponseInvalid
	failKeyRefused // AUTHENTICATION_FAILED: the device no longer takes this client's key
	failProtocolVersion
	failUnauthenticated
	// The relay.
	failRelayUnavailable
	failRelayRefused
	failRelayAddress
	failRelayBusy // CAPACITY_EXCEEDED until the budget ran out: this client's other exchanges fill the relay's share
	failClientInactive
	failExpired
	failRequestTooLarge // over the relay's frame limit: the same request fails the same way
	// This host and the command.
	failInterrupted
	failCommandNotFound
	failCommandNotExecutable
	failCommandFormat      // no #! and no format the kernel runs
	failCommandInterpreter // the #! line's interpreter cannot be run
	failCommandUnreadable  // an execute-only script, which its interpreter cannot read; a fix command when it is this user's
	failCommandChanged
	failWorkdir
	failHostUnsupported
	failProcessLimit
	failServiceStart
	failGitConfigCount // a GIT_CONFIG_COUNT Git refuses; a fix command when it is inherited, none when a secret returned it
	failExecFailed
)

// classifiedError marks err with its failure class and, for some classes,
// the exact command that fixes it.
type classifiedError struct {
	class failureClass
	fix   string
	err   error
}

func (e *classifiedError) Error() string { return e.err.Error() }
func (e *classifiedError) Unwrap() error { return e.err }

func classify(class failureClass, err error) error {
	if err == nil {
		return nil
	}
	return &classifiedError{class: class, err: err}
}

func classifyWithFix(class failureClass, fix string, err error) error {
	return &classifiedError{class: class, fix: fix, err: err}
}

// uncontactedError is a failure before anything was sent to the relay.
type uncontactedError struct{ err error }

func (e *uncontactedError) Error() string { return e.err.Error() }
func (e *uncontactedError) Unwrap() error { return e.err }

// beforeContact marks err as a failure before the device was asked.
func beforeContact(err error) error { return &uncontactedError{err} }

// classOf finds err's class: the outermost classification, else what the
// transport's sentinel errors say, else fallback.
func classOf(err error, fallback failureClass) (failureClass, string) {
	var c *classifiedError
	if errors.As(err, &c) {
		return c.class, c.fix
	}
	var intr *interrupted
	var refusal *relayRefusal
	switch {
	case errors.As(err, &intr):
		return failInterrupted, ""
	case errors.Is(err, errClientInactive):
		return failClientInactive, ""
	case errors.Is(err, errRelayUnavailable):
		return failRelayUnavailable, ""
	case errors.Is(err, errExchangeInactive):
		return failExpired, ""
	case errors.As(err, &refusal):
		return failRelayRefused, ""
	case errors.Is(err, errNoPairing):
		return failNotPaired, ""
	}
	return fallback, ""
}

// pairAgain is the way back for a home whose pairing the device no longer
// takes.
var pairAgain = suggest("Pair this client again. Get a pairing address from the device, then run:",
	"agentknock pairing remove --force",
	"agentknock pairing start <PAIRING_ADDRESS>")

// suggestedActions is the next step for each class; rerun names what to
// run again ("the command", "this command").
func suggestedActions(class failureClass, fix, rerun string) []string {
	switch class {
	case failNotPaired:
		return suggest("Get a pairing address from the device, then run:", "agentknock pairing start <PAIRING_ADDRESS>")
	case failPairingPending:
		return suggest("Compare the verification code and approve the pairing on the device, then run:", "agentknock pairing finish")
	case failPairingFileMode:
		return suggest("Make the pairing file private, then run "+rerun+" again:", fix)
	case failPairingInvalid, failKeyRefused, failClientInactive:
		return pairAgain
	case failHomeUnsafe:
		if fix != "" {
			return suggest("Make the Agentknock home private, then run "+rerun+" again:", fix)
		}
		return suggest("Use a directory of your own with --agentknock-home DIR, then run " + rerun + " again.")
	case failHomeNotSet:
		return suggest("Set HOME to your home directory, or use --agentknock-home DIR, then run " + rerun + " again.")
	case failStateLocked:
		return suggest("Let the other agentknock command finish (or end the stuck one), then run " + rerun + " again.")
	case failDeniedByPerson:
		return suggest("Don't repeat the request unchanged. Ask the person at the device, and run " + rerun + " again only if they will approve it.")
	case failDeniedByPolicy:
		return suggest("The device's policy refuses these secrets for this request. Ask the device's owner to change it, then run " + rerun + " again.")
	case failInvalidRequest:
		return suggest("Check the secret names and variables against the device's list, which this prints:", "agentknock secret list")
	case failDenied:
		return suggest("Read the device's reason above, and run " + rerun + " again only once it no longer applies.")
	case failDeviceError:
		return suggest("Read the device's error above and resolve it on the device, then run " + rerun + " again.")
	case failResponseInvalid:
		return suggest("Run " + rerun + " again. If it fails the same way, check the device software and the relay.")
	case failProtocolVersion:
		return suggest("Use Agentknock and device software that support the same protocol version.")
	case failUnauthenticated:
		return suggest("Run " + rerun + " again. If the report repeats, check the device; this client changed nothing because of it.")
	case failRelayUnavailable:
		return suggest("Check the network connection, the relay (AGENTKNOCK_RELAY_URL or the pairing's relay) and any proxy, then run " + rerun + " again.")
	case failRelayRefused:
		return suggest("Check the relay's message above and the pairing, which this shows:", "agentknock pairing status --verbose")
	case failRelayAddress:
		return suggest("Set AGENTKNOCK_RELAY_URL to wss://HOST (ws:// only for a loopback address), or unset it, then run " + rerun + " again.")
	case failRelayBusy:
		return suggest("Wait for this client's other requests to the device to finish (the relay limits how many one client has open), then run " + rerun + " again.")
	case failRequestTooLarge:
		return suggest("Running it again sends the same bytes: make the request smaller (shorter arguments or --reason, a smaller script or signing payload), then run " + rerun + " again.")
	case failExpired:
		return suggest("Run " + rerun + " again, and answer the request on the device while Agentknock waits.")
	case failInterrupted:
		return suggest("Run " + rerun + " again if it should still run.")
	case failCommandNotFound:
		return suggest("Check the command name, or add its directory to PATH, then run the command again.")
	case failCommandNotExecutable:
		return suggest("Check the command's execute permission (chmod +x PATH), then run the command again.")
	case failCommandFormat:
		return suggest("Start the file with a #! line naming its interpreter (for example #!/bin/sh), or run it through its interpreter (sh FILE), then run the command again.")
	case failCommandInterpreter:
		return suggest("Install the interpreter the file's #! line names, or correct that line (for example #!/usr/bin/env python3), then run the command again.")
	case failCommandUnreadable:
		if fix != "" {
			return suggest("Give yourself read permission on the file (its interpreter reads it as you), then run the command again:", fix)
		}
		return suggest("Ask the file's owner to give this user read permission on it (its interpreter reads it as this user), then run the command again.")
	case failCommandChanged:
		return suggest("Check why the file changed, then run the command again so that the device sees the file as it is now.")
	case failWorkdir:
		return suggest("Change to an existing directory, then run the command again.")
	case failHostUnsupported:
		return suggest("Run the command on a host that provides what the message above names (README, \"Platform requirements\").")
	case failProcessLimit:
		return suggest("Raise the process limit in the shell that runs agentknock, then run the command again:", fix)
	case failServiceStart:
		return suggest("Check that the temporary directory (TMPDIR, else /tmp) is writable and has room, then run the command again.")
	case failGitConfigCount:
		if fix != "" {
			return suggest("Unset GIT_CONFIG_COUNT, or set it to the number of GIT_CONFIG_KEY_n settings it counts (a count Git accepts), or pass --no-git-sign; then run the command again:", fix)
		}
		return suggest("A secret returned GIT_CONFIG_COUNT: leave it out (--omit-env SECRET GIT_CONFIG_COUNT) or rename it (--rename-env), or pass --no-git-sign; then run the command again.")
	case failExecFailed:
		return suggest("Check that the command and its interpreter still exist and are executable, then run the command again.")
	}
	return suggest("Run " + rerun + " again with --verbose to see each stage.")
}

// suggest is a suggested action: its first line carries the label the
// report gives every next step; more lines are shown as they are (a
// command to run).
func suggest(first string, more ...string) []string {
	return append([]string{"Suggested action: " + first}, more...)
}

// sentence makes an error text a line of its own, with a final period.
// The text keeps the case its producer gave it (Go error strings start in
// lower case; the client's own report lines in upper case).
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}

// stopReport is what a stopped command prints: what happened, what did
// not happen, and the suggested action.
type stopReport struct {
	// consequence is the line that says what did not happen, such as
	// "The command didn't run."
	consequence string
	// notContacted adds that the device was not asked.
	notContacted bool
	// rerun names the command in the suggested action.
	rerun string
}

// lines words err for the report; fallback is the class of an error that
// carries none.
func (r stopReport) lines(err error, fallback failureClass) []string {
	class, fix := classOf(err, fallback)
	// Each producer escapes the names it puts in a message; escaping the
	// whole text again here changes nothing they escaped and keeps any
	// name one of them missed (or a system error quoting one) from
	// reaching the terminal raw.
	out := []string{sentence(printable(err.Error()))}
	if r.notContacted || errors.As(err, new(*uncontactedError)) {
		out = append(out, "Agentknock did not contact the device.")
	}
	if r.consequence != "" {
		out = append(out, r.consequence)
	}
	return append(out, suggestedActions(class, fix, r.rerun)...)
}

// runStopped is a run's report: the command did not run.
func runStopped(notContacted bool) stopReport {
	return stopReport{consequence: "The command didn't run.", notContacted: notContacted, rerun: "the command"}
}

// stopped prints the report (a run's --quiet prints nothing, as the
// reference's does: the exit status says it).
func (o *output) stopped(r stopReport, err error, fallback failureClass) {
	for _, line := range r.lines(err, fallback) {
		o.failure("%s", line)
	}
}

// exitStatusOf is the status of a command stopped by err: 128+N for
// signal N, else 1.
func exitStatusOf(err error) int {
	var intr *interrupted
	if errors.As(err, &intr) {
		return exitStatusFor(intr.sig)
	}
	return 1
}
