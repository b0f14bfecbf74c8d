// The agentknock-device(1) man page, written at release time by the hidden
// command `agentknock-device __man VERSION` (scripts/release-docs) from the
// same text as `agentknock-device --help`, so the two cannot drift apart.
// The page is dated by SOURCE_DATE_EPOCH, as reproducible builds define it
// (https://reproducible-builds.org/specs/source-date-epoch/), and has no
// date without it; the roff follows man(7).

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

const manCommand = "__man"

func cmdMan(c *cli, args []string) error {
	if len(args) != 1 {
		return usagef("usage: %s %s VERSION", progName, manCommand)
	}
	return writeManPage(c.stdout, args[0], manDate(c.getenv("SOURCE_DATE_EPOCH")))
}

func manDate(epoch string) string {
	if n, err := strconv.ParseInt(epoch, 10, 64); err == nil {
		return time.Unix(n, 0).UTC().Format("2006-01-02")
	}
	return ""
}

// writeManPage sets the overview's first line as NAME, its usage lines as
// SYNOPSIS, and the rest of the help, block by block, as DESCRIPTION (the
// prose above the usage lines first): prose is filled, indented blocks
// (option lists, examples) stay as typed.
func writeManPage(w io.Writer, version, date string) error {
	var head, b strings.Builder
	out := &b // the overview's prose, then everything after the usage lines
	fmt.Fprintf(&head, ".TH AGENTKNOCK-DEVICE 1 %q %q \"User Commands\"\n.nh\n.ad l\n", date, progName+" "+version)
	lines := strings.Split(strings.TrimRight(fullHelp(), "\n"), "\n")
	name, summary, _ := strings.Cut(lines[0], ": ")
	fmt.Fprintf(&head, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(summary))
	lines = lines[1:]
	synopsis := false
	for len(lines) > 0 {
		for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
			lines = lines[1:]
		}
		n := 0
		for n < len(lines) && strings.TrimSpace(lines[n]) != "" {
			n++
		}
		block := lines[:n]
		lines = lines[n:]
		if len(block) == 0 {
			continue
		}
		if !synopsis && block[0] == "Usage:" {
			head.WriteString(".SH SYNOPSIS\n")
			verbatim(&head, block[1:])
			head.WriteString(".SH DESCRIPTION\n")
			synopsis = true
			continue
		}
		prose := 0
		for prose < len(block) && !strings.HasPrefix(block[prose], " ") {
			prose++
		}
		if prose > 0 {
			out.WriteString(".PP\n")
			for _, l := range block[:prose] {
				out.WriteString(roffEscape(l) + "\n")
			}
		}
		if prose < len(block) {
			verbatim(out, block[prose:])
		}
	}
	_, err := io.WriteString(w, head.String()+b.String())
	return err
}

// verbatim keeps indented lines as they are, relative to the first one.
func verbatim(b *strings.Builder, lines []string) {
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	b.WriteString(".PP\n.RS 4\n.nf\n")
	for _, l := range lines {
		if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
			l = l[indent:]
		}
		b.WriteString(roffEscape(l) + "\n")
	}
	b.WriteString(".fi\n.RE\n")
}

// roffEscape makes a line literal roff text: backslashes and hyphens
// escaped (options stay ASCII hyphen-minus when copied), and a leading dot
// or apostrophe kept from being read as a request.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
