// Agentknock's own messages: all on standard error, prefixed so they are
// never mistaken for the command's output. Values of secrets never reach
// these functions; callers pass names only.
package main

import (
	"fmt"
	"io"
	"os"
	"unicode"
	"unicode/utf8"
)

const messagePrefix = "AGENTKNOCK: "

type output struct {
	w       io.Writer
	quiet   bool
	verbose bool
}

func newOutput(quiet, verbose bool) *output {
	return &output{w: os.Stderr, quiet: quiet, verbose: verbose}
}

// status is a stage message, hidden by --quiet.
func (o *output) status(format string, args ...any) {
	if !o.quiet {
		fmt.Fprintf(o.w, messagePrefix+format+"\n", args...)
	}
}

// detail is shown only with --verbose.
func (o *output) detail(format string, args ...any) {
	if o.verbose {
		fmt.Fprintf(o.w, messagePrefix+format+"\n", args...)
	}
}

// failure is always shown.
func (o *output) failure(format string, args ...any) {
	fmt.Fprintf(o.w, messagePrefix+format+"\n", args...)
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
