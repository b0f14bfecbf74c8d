// The dotenv format of `secret upload --from-env-file`, read by the rules of
// the Rust crate dotenvy 0.15.7 that the reference client uses
// (https://docs.rs/dotenvy/0.15.7), so that one file uploads the same values
// with either client:
//
//   - NAME=VALUE lines, optionally preceded by `export `; spaces around
//     the "=" are allowed; blank lines and lines starting with # are skipped.
//   - Unquoted text ends at a space or tab; only a # comment may follow.
//     A # with no space before it belongs to the value.
//   - 'Single quotes' are literal. "Double quotes" take the escapes \\, \',
//     \", \$, "\ " and \n; a backslash outside quotes takes the same ones.
//     Quoted and unquoted pieces next to each other join into one value,
//     and quoted values may span lines.
//   - $NAME and ${NAME} are substituted outside single quotes: the value of
//     NAME in Agentknock's environment, else its value earlier in the same
//     file, else nothing. Without braces the name is letters and digits
//     only, so "$A_B" is $A followed by "_B"; a $ that starts no name
//     disappears.
//
// A malformed line is reported by number; neither the value nor the text
// of the line is ever quoted, since either may be secret.

package main

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// dotenvEntry is one variable, with the line where it starts.
type dotenvEntry struct {
	Name  string
	Value string
	Line  int
}

// parseDotenv reads data; source names it in errors ("\".env\"",
// "standard input"); lookupEnv is the environment that substitution
// consults first (os.LookupEnv).
func parseDotenv(source string, data []byte, lookupEnv func(string) (string, bool)) ([]dotenvEntry, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	fail := func(line int, err error) error {
		return fmt.Errorf("environment file %s isn't valid: line %d: %v", source, line, err)
	}
	known := map[string]string{} // earlier values, for substitution
	var entries []dotenvEntry
	lineNo := 1
	for text != "" {
		start := lineNo
		logical, rest, lines, err := nextDotenvLine(text)
		if err != nil {
			return nil, fail(start, err)
		}
		text, lineNo = rest, lineNo+lines
		if !utf8.ValidString(logical) {
			return nil, fail(start, errors.New("not valid UTF-8"))
		}
		name, value, ok, err := parseDotenvLine(logical, known, lookupEnv)
		if err != nil {
			return nil, fail(start, err)
		}
		if !ok {
			continue
		}
		if !portableName(name) {
			return nil, fail(start, errors.New("the text before \"=\" is not a portable variable name (letters, digits and _, not starting with a digit)"))
		}
		known[name] = value
		entries = append(entries, dotenvEntry{Name: name, Value: value, Line: start})
	}
	return entries, nil
}

// quoteState is where a physical line leaves the quoting, as dotenvy
// decides whether the next line continues the same entry.
type quoteState int

const (
	qComplete quoteState = iota
	qSpace
	qEscape
	qWeak
	qWeakEscape
	qStrong
)

// nextDotenvLine cuts one entry off text: one line, or several while a
// quote is open. A # after whitespace outside quotes ends it. It returns
// the entry without its line end, the remaining text and how many lines
// it used.
func nextDotenvLine(text string) (logical, rest string, lines int, err error) {
	state := qComplete
	var b strings.Builder
	for {
		line, after, found := strings.Cut(text, "\n")
		if found {
			line += "\n"
		}
		text = after
		lines++
		if b.Len() == 0 && strings.HasPrefix(strings.TrimLeftFunc(line, unicode.IsSpace), "#") {
			return "", text, lines, nil
		}
		cut := -1
		for i, c := range line {
			switch state {
			case qSpace:
				switch c {
				case '#':
					cut = i
				case '\\':
					state = qEscape
				case '"':
					state = qWeak
				case '\'':
					state = qStrong
				default:
					state = qComplete
				}
			case qEscape:
				state = qComplete
			case qComplete:
				switch {
				case unicode.IsSpace(c) && c != '\n' && c != '\r':
					state = qSpace
				case c == '\\':
					state = qEscape
				case c == '"':
					state = qWeak
				case c == '\'':
					state = qStrong
				}
			case qWeak:
				switch c {
				case '\\':
					state = qWeakEscape
				case '"':
					state = qComplete
				}
			case qWeakEscape:
				state = qWeak
			case qStrong:
				if c == '\'' {
					state = qComplete
				}
			}
			if cut >= 0 {
				break
			}
		}
		if cut >= 0 {
			b.WriteString(line[:cut])
			return b.String(), text, lines, nil
		}
		b.WriteString(line)
		if state == qComplete || state == qSpace || state == qEscape || !found {
			if state == qWeak || state == qWeakEscape || state == qStrong {
				return "", "", lines, errors.New("the quoted value is not closed")
			}
			s := strings.TrimSuffix(b.String(), "\n")
			return strings.TrimSuffix(s, "\r"), text, lines, nil
		}
	}
}

// parseDotenvLine reads one entry: ok is false for a blank or comment line.
func parseDotenvLine(line string, known map[string]string, lookupEnv func(string) (string, bool)) (name, value string, ok bool, err error) {
	s := strings.TrimFunc(line, unicode.IsSpace)
	if s == "" || s[0] == '#' {
		return "", "", false, nil
	}
	errSyntax := errors.New("expected NAME=VALUE")
	key := func() (string, error) {
		if s == "" || !(s[0] == '_' || 'A' <= s[0] && s[0] <= 'Z' || 'a' <= s[0] && s[0] <= 'z') {
			return "", errSyntax
		}
		n := strings.IndexFunc(s, func(c rune) bool {
			return !(c == '_' || c == '.' || c < utf8.RuneSelf && (unicode.IsLetter(c) || unicode.IsDigit(c)))
		})
		if n < 0 {
			n = len(s)
		}
		k := s[:n]
		s = strings.TrimLeftFunc(s[n:], unicode.IsSpace)
		return k, nil
	}
	if name, err = key(); err != nil {
		return "", "", false, err
	}
	if name == "export" && !strings.HasPrefix(s, "=") {
		if name, err = key(); err != nil {
			return "", "", false, err
		}
	}
	if !strings.HasPrefix(s, "=") {
		return "", "", false, errSyntax
	}
	s = strings.TrimLeftFunc(s[1:], unicode.IsSpace)
	if s == "" || s[0] == '#' {
		return name, "", true, nil
	}
	value, err = dotenvValue(s, known, lookupEnv)
	return name, value, err == nil, err
}

// dotenvValue applies quoting, escapes and substitution to the text after
// the "=".
func dotenvValue(in string, known map[string]string, lookupEnv func(string) (string, bool)) (string, error) {
	const (
		noSubst = iota
		plainSubst
		bracedSubst
	)
	var out, subName strings.Builder
	strong, weak, escaped, expectEnd := false, false, false, false
	mode := noSubst
	substitute := func() {
		n := subName.String()
		subName.Reset()
		if v, ok := lookupEnv(n); ok {
			out.WriteString(v)
		} else {
			out.WriteString(known[n])
		}
	}
	for _, c := range in {
		switch {
		case expectEnd:
			switch c {
			case ' ', '\t':
				continue
			case '#':
				return finishDotenvValue(&out, mode == bracedSubst || strong || weak, substitute)
			}
			return "", errors.New("unquoted text after a space (quote a value that contains spaces)")
		case escaped:
			switch c {
			case '\\', '\'', '"', '$', ' ':
				out.WriteRune(c)
			case 'n':
				out.WriteByte('\n')
			default:
				return "", errors.New(`unsupported escape sequence (use \\, \', \", \$, "\ " or \n)`)
			}
			escaped = false
		case strong:
			if c == '\'' {
				strong = false
			} else {
				out.WriteRune(c)
			}
		case mode != noSubst:
			if unicode.IsLetter(c) || unicode.IsDigit(c) {
				subName.WriteRune(c)
				continue
			}
			if mode == bracedSubst {
				if c == '}' {
					mode = noSubst
					substitute()
				} else {
					subName.WriteRune(c)
				}
				continue
			}
			if c == '{' && subName.Len() == 0 {
				mode = bracedSubst
				continue
			}
			substitute()
			if c == '$' {
				continue // another substitution starts at once
			}
			// dotenvy ends a bare name at any other character and keeps
			// that character, even a closing double quote.
			mode = noSubst
			out.WriteRune(c)
		case c == '$':
			mode = plainSubst
		case weak:
			switch c {
			case '"':
				weak = false
			case '\\':
				escaped = true
			default:
				out.WriteRune(c)
			}
		case c == '\'':
			strong = true
		case c == '"':
			weak = true
		case c == '\\':
			escaped = true
		case c == ' ' || c == '\t':
			expectEnd = true
		default:
			out.WriteRune(c)
		}
	}
	return finishDotenvValue(&out, mode == bracedSubst || strong || weak, substitute)
}

func finishDotenvValue(out *strings.Builder, open bool, substitute func()) (string, error) {
	if open {
		return "", errors.New("a quote or ${ is not closed")
	}
	substitute()
	return out.String(), nil
}
