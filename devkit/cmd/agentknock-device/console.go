// serve's terminal output (stderr): request displays, prompts and one log
// line per relay/device event, serialised so that concurrent requests never
// interleave mid-display. Log text is escaped like every other
// client-influenced text.
package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

type console struct {
	mu sync.Mutex
	w  io.Writer
}

func newConsole(w io.Writer) *console { return &console{w: w} }

// print writes text that the program composed (already escaped where it
// holds client text) as one unit.
func (c *console) print(text string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	io.WriteString(c.w, text)
}

func (c *console) printf(format string, args ...any) {
	c.print(fmt.Sprintf(format, args...))
}

// logger returns a Logf for the relay or the device. Their messages never
// contain secrets (their contract), but may carry client-chosen text.
func (c *console) logger(component string) func(format string, args ...any) {
	return func(format string, args ...any) {
		msg := strings.TrimRight(fmt.Sprintf(format, args...), "\n")
		msg = strings.TrimPrefix(msg, component+": ") // some already name themselves
		c.printf("%s %s: %s\n", time.Now().Format("15:04:05"), component, clean(msg))
	}
}
