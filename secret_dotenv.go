// The dotenv format of `secret upload --from-env-file` (see its --help):
// NAME=VALUE lines, comments, an optional `export ` prefix, literal single
// quotes, double quotes with a few escapes, quoted values spanning lines,
// and no expansion. A malformed line is reported by number; neither the
// value nor the text of the line is ever quoted, since either may be
// secret.
package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// dotenvEntry is one variable, with the line where it starts.
type dotenvEntry struct {
	Name  string
	Value string
	Line  int
}

// parseDotenv reads data; source names it in errors ("\".env\"",
// "standard input").
func parseDotenv(source string, data []byte) ([]dotenvEntry, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	lines := strings.Split(text, "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	fail := func(line int, format string, args ...any) error {
		return fmt.Errorf("%s, line %d: %s", source, line, fmt.Sprintf(format, args...))
	}
	var entries []dotenvEntry
	for i := 0; i < len(lines); i++ {
		lineNo := i + 1
		if !utf8.ValidString(lines[i]) {
			return nil, fail(lineNo, "not valid UTF-8")
		}
		s := strings.TrimLeft(lines[i], " \t")
		if s == "" || s[0] == '#' {
			continue
		}
		if rest, ok := strings.CutPrefix(s, "export"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			s = strings.TrimLeft(rest, " \t")
		}
		name, raw, ok := strings.Cut(s, "=")
		if !ok {
			return nil, fail(lineNo, "expected NAME=VALUE")
		}
		name = strings.TrimRight(name, " \t")
		if !portableName(name) {
			return nil, fail(lineNo, "the text before \"=\" is not a portable variable name (letters, digits and _, not starting with a digit)")
		}
		v := strings.TrimLeft(raw, " \t")
		var value string
		switch {
		case strings.HasPrefix(v, "'") || strings.HasPrefix(v, `"`):
			var after string
			var err error
			value, after, i, err = dotenvQuoted(lines, i, v)
			if err != nil {
				return nil, fail(lineNo, "%v", err)
			}
			if t := strings.TrimLeft(after, " \t"); t != "" && t[0] != '#' {
				return nil, fail(lineNo, "unexpected text after the closing quote")
			}
		default:
			value = dotenvUnquoted(raw)
		}
		entries = append(entries, dotenvEntry{Name: name, Value: value, Line: lineNo})
	}
	return entries, nil
}

// dotenvUnquoted ends the value at a # that follows a space or a tab, and
// trims it: "NAME=a#b" is "a#b", "NAME=a #b" and "NAME= #b" are comments.
func dotenvUnquoted(raw string) string {
	for j := 1; j < len(raw); j++ {
		if raw[j] == '#' && (raw[j-1] == ' ' || raw[j-1] == '\t') {
			raw = raw[:j]
			break
		}
	}
	return strings.Trim(raw, " \t")
}

// dotenvQuoted reads a quoted value that starts at v, a suffix of
// lines[i], and may continue on the following lines. It returns the value,
// the rest of the line after the closing quote, and the index of that line.
func dotenvQuoted(lines []string, i int, v string) (value, after string, end int, err error) {
	quote := v[0]
	var b strings.Builder
	s := v[1:]
	for {
		for j := 0; j < len(s); j++ {
			c := s[j]
			switch {
			case c == quote:
				return b.String(), s[j+1:], i, nil
			case c == '\\' && quote == '"':
				if j+1 == len(s) {
					return "", "", i, fmt.Errorf("a backslash ends a line inside a double-quoted value")
				}
				j++
				switch s[j] {
				case 'n':
					b.WriteByte('\n')
				case 'r':
					b.WriteByte('\r')
				case 't':
					b.WriteByte('\t')
				case '"', '\\', '$':
					b.WriteByte(s[j])
				default:
					return "", "", i, fmt.Errorf("unsupported escape sequence in a double-quoted value (use \\n, \\r, \\t, \\\", \\\\ or \\$)")
				}
			default:
				b.WriteByte(c)
			}
		}
		i++
		if i == len(lines) {
			return "", "", i, fmt.Errorf("the quoted value is not closed")
		}
		if !utf8.ValidString(lines[i]) {
			return "", "", i, fmt.Errorf("the quoted value is not valid UTF-8")
		}
		b.WriteByte('\n')
		s = lines[i]
	}
}
