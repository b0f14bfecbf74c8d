// Escaping of client-supplied text before it reaches a terminal: every field
// of an approval is chosen by the client, so control characters, escape
// sequences, bidirectional overrides and invalid UTF-8 are shown as visible
// escapes instead of acting on the terminal that asks a person to decide.
package main

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	commandmodel "agentknock.dev/agentknock/devkit/commands"
)

// clean renders one line of untrusted text. Backslashes are doubled so that
// an escape written by the client cannot pass for one written by us.
func clean(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			commandmodel.EscapeRune(&b, r)
		}
		i += size
	}
	return b.String()
}

// cleanBlock renders multi-line untrusted text (a script, a commit message)
// as lines, each prefixed; tabs stay as they are because they only move the
// cursor forward and are common in both.
func cleanBlock(s, prefix string) string {
	s = strings.TrimSuffix(s, "\n")
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		b.WriteString(prefix)
		parts := strings.Split(line, "\t")
		for i, p := range parts {
			if i > 0 {
				b.WriteByte('\t')
			}
			b.WriteString(clean(p))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// shellJoin renders argv as one line a person can read and paste into a
// POSIX shell: plain words stay bare, others are single-quoted, and words
// with non-printable characters use $'...' so the whole command stays on
// one visible line.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

func shellQuote(w string) string {
	if w == "" {
		return "''"
	}
	if isShellSafe(w) {
		return w
	}
	if utf8.ValidString(w) && allPrintable(w) {
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(w); {
		r, size := utf8.DecodeRuneInString(w[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, w[i])
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r >= 0x80 && !unicode.IsPrint(r):
			// bash's $'...' spells a code point as \uXXXX or \UXXXXXXXX.
			if r <= 0xffff {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				fmt.Fprintf(&b, `\U%08x`, r)
			}
		default:
			commandmodel.EscapeRune(&b, r)
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}

func isShellSafe(w string) bool {
	for _, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_@%+=:,./-", r):
		default:
			return false
		}
	}
	return true
}

func allPrintable(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}
