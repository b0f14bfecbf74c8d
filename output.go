// Agentknock's own messages: all on standard error, prefixed so they are
// never mistaken for the command's output. Values of secrets never reach
// these functions; callers pass names only.
package main

import (
	"fmt"
	"io"
	"os"
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
