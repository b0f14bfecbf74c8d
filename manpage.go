// The agentknock(1) man page, rendered from the help texts themselves so
// that the two cannot drift apart (manpage_test.go compares them word for
// word). Written by the hidden command `agentknock __man VERSION` at release
// time (scripts/release-docs); the roff follows man(7).

package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// manRole is the hidden command that writes the man page.
const manRole = "__man"

// manSection is one help text and the man page section it becomes.
type manSection struct {
	title string // "" for the main help text
	text  string
}

// manSections are every help text that --help prints, in the order the man
// page shows them.
func manSections() []manSection {
	return []manSection{
		{"", usageText},
		{"AGENTKNOCK PAIRING", pairingUsage},
		{"AGENTKNOCK SECRET", secretUsageText},
		{"AGENTKNOCK SECRET LIST", secretListUsageText},
		{"AGENTKNOCK SECRET UPLOAD", secretUploadUsageText},
		{"AGENTKNOCK COMPLETION", completionUsageText},
	}
}

func manMain(args []string) int {
	if len(args) != 1 {
		fmt.Fprintf(os.Stderr, "usage: agentknock %s VERSION\n", manRole)
		return 2
	}
	if err := writeManPage(os.Stdout, args[0], manDate()); err != nil {
		fmt.Fprintf(os.Stderr, "%s%v\n", messagePrefix, err)
		return 1
	}
	return 0
}

// manDate is the page's date: SOURCE_DATE_EPOCH when set, as reproducible
// builds define it (https://reproducible-builds.org/specs/source-date-epoch/),
// else none, so that the same source always gives the same page.
func manDate() string {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC().Format("2006-01-02")
		}
	}
	return ""
}

func writeManPage(w io.Writer, version, date string) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH AGENTKNOCK 1 %q %q \"User Commands\"\n", date, "agentknock "+version)
	// No hyphenation and no justification: option names and paths must read
	// exactly as they are typed.
	b.WriteString(".nh\n.ad l\n")
	for _, s := range manSections() {
		lines := strings.Split(strings.TrimRight(s.text, "\n"), "\n")
		if s.title == "" {
			name, summary, _ := strings.Cut(lines[0], ": ")
			fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", roffEscape(name), roffEscape(strings.TrimSuffix(summary, ".")))
			lines = lines[1:]
		} else {
			fmt.Fprintf(&b, ".SH %q\n", s.title)
		}
		renderHelpBlocks(&b, lines, s.title == "")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// renderHelpBlocks turns help text into roff. A blank line separates blocks;
// lines at column 0 are prose, filled by the formatter; a lone prose line
// ending in ':' directly above indented lines is a heading; indented lines
// aligned in two columns are a tagged list; other indented lines (usage
// lines, examples, JSON) are kept verbatim.
func renderHelpBlocks(b *strings.Builder, lines []string, main bool) {
	described := false
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
		prose := 0
		for prose < len(block) && !strings.HasPrefix(block[prose], " ") {
			prose++
		}
		indented := block[prose:]
		if prose == 1 && len(indented) > 0 && strings.HasSuffix(block[0], ":") {
			heading := strings.TrimSuffix(block[0], ":")
			if main && heading == "Usage" {
				b.WriteString(".SH SYNOPSIS\n")
			} else {
				fmt.Fprintf(b, ".SS %q\n", heading)
			}
		} else if prose > 0 {
			if main && !described {
				b.WriteString(".SH DESCRIPTION\n")
				described = true
			}
			b.WriteString(".PP\n")
			for _, l := range block[:prose] {
				b.WriteString(roffEscape(l) + "\n")
			}
		}
		if len(indented) > 0 {
			renderIndented(b, indented)
		}
	}
}

func renderIndented(b *strings.Builder, lines []string) {
	if items, ok := helpTable(lines); ok {
		for _, it := range items {
			fmt.Fprintf(b, ".TP\n%s\n", roffTerm(it.term))
			for _, d := range it.desc {
				b.WriteString(roffEscape(d) + "\n")
			}
		}
		return
	}
	indent := len(lines[0]) - len(strings.TrimLeft(lines[0], " "))
	b.WriteString(".PP\n.RS 4\n.nf\n")
	for _, l := range lines {
		if len(l) >= indent {
			l = l[indent:]
		}
		b.WriteString(roffEscape(l) + "\n")
	}
	b.WriteString(".fi\n.RE\n")
}

type helpItem struct {
	term string
	desc []string
}

// helpTable recognises a two-column list: every line is either a term, two
// or more spaces and a description starting at one common column, or a
// continuation indented to that column.
func helpTable(lines []string) ([]helpItem, bool) {
	col := -1
	var items []helpItem
	for _, l := range lines {
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if col >= 0 && indent == col && len(items) > 0 {
			items[len(items)-1].desc = append(items[len(items)-1].desc, strings.TrimSpace(l))
			continue
		}
		gap := strings.Index(l[indent:], "  ")
		if gap < 0 {
			return nil, false
		}
		term := l[indent : indent+gap]
		rest := l[indent+gap:]
		c := len(l) - len(strings.TrimLeft(rest, " "))
		if col >= 0 && c != col {
			return nil, false
		}
		col = c
		items = append(items, helpItem{term: term, desc: []string{strings.TrimSpace(rest)}})
	}
	return items, len(items) > 0
}

// roffTerm sets a list term: placeholders (SECRET, NAME=PATH) in italics,
// the words to type in bold.
func roffTerm(term string) string {
	words := strings.Split(term, " ")
	for i, w := range words {
		font := `\fB`
		if isPlaceholder(strings.Trim(w, "[],.|")) {
			font = `\fI`
		}
		words[i] = font + roffEscape(w) + `\fR`
	}
	return strings.Join(words, " ")
}

func isPlaceholder(w string) bool {
	if w == "" || w[0] < 'A' || w[0] > 'Z' {
		return false
	}
	for _, c := range w {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '=' || c == '-') {
			return false
		}
	}
	return true
}

// roffEscape makes a line of help text literal roff text: backslashes and
// hyphens escaped (so options stay ASCII hyphen-minus when copied), and a
// leading dot or apostrophe kept from being read as a request.
func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
