// Agentknock's own messages, all on standard error, with the reference
// client's rules: a `run` prefixes every line with "AGENTKNOCK: " because
// the lines can interleave with the command's output; the pairing and
// secret commands print plain lines. While a request waits for the device,
// nothing is printed until 30 seconds have passed, then one progress line
// every 30 seconds with the total elapsed time; --verbose also prints each
// stage as it is reached, --quiet prints neither. Values of secrets never
// reach these functions; callers pass names only.

package main

import (
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
