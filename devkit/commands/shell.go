// Shell scripts an invocation runs, and how they are parsed (design: "What
// the device tells the person"): which shell a -c argument or a #! line
// names, the shell's options read the way the shell reads them, and a
// parse of the text by mvdan.cc/sh/v3/syntax
// (https://pkg.go.dev/mvdan.cc/sh/v3/syntax) under bounds (a time budget,
// a nesting cut), so a hostile script costs bounded time.
package commands

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds of one analysis. The full script is shown elsewhere (the command
// or script field), so what is cut here is never hidden.
const (
	maxShownLines = 400 // command lines
	maxLineBytes  = 240 // one displayed command
	maxListed     = 12  // programs listed per secret
	maxDepth      = 48  // nesting the walk follows
	// budget bounds parsing and walking together, counted in this
	// process's CPU time where the system tells it (every thread: the
	// collector's too, about half again the walk's own), so that a host
	// busy with other work does not turn an ordinary script "not
	// understood"; wallCap bounds the wall clock all the same. A 256 KiB
	// script takes about 40 ms on an idle core (45 ms when every line
	// differs: BenchmarkRender).
	budget       = 250 * time.Millisecond
	wallCap      = 2 * time.Second
	heredocShown = 20 // lines of a here-document that is data
)

// Script is a shell script an invocation runs.
type Script struct {
	Shell   string // sh, bash, dash, zsh or ash
	Lang    syntax.LangVariant
	From    string   // "-c" or the shebang line
	Options []string // shell options as given, before the script
	Text    string
	Params  []string // -c: $0 $1 ...; a script file: $1 ...
}

var shellLangs = map[string]syntax.LangVariant{
	"sh": syntax.LangPOSIX, "dash": syntax.LangPOSIX, "ash": syntax.LangPOSIX,
	"bash": syntax.LangBash, "zsh": syntax.LangZsh,
}

// ShellOf returns the shell the first non-empty name (an argv[0] or a
// path) names, or "". The analysis itself trusts only the executable;
// rules use this to canonicalise a script argv.
func ShellOf(names ...string) string {
	for _, n := range names {
		if _, ok := shellLangs[path.Base(n)]; ok && n != "" {
			return path.Base(n)
		}
	}
	return ""
}

// The single-letter options each shell accepts (set's flags plus the
// invocation-only ones), and bash's long options (true: takes a value).
var (
	shellFlagLetters = map[string]string{
		"sh":   "abCefhimnuvxEIlpqsV",
		"dash": "abCefhimnuvxEIlpqsV",
		"ash":  "abCefhimnuvxEIlpqsV",
		"bash": "abBCDefhHiklmnpPrstuvxTE",
		"zsh":  "abcdefghiklmnprstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	}
	bashLongOptions = map[string]bool{
		"--norc": false, "--noprofile": false, "--posix": false, "--login": false,
		"--noediting": false, "--restricted": false, "--verbose": false, "--debugger": false,
		"--protected": false, "--rcfile": true, "--init-file": true,
	}
)

// ShellArgs reads a shell's arguments (after argv[0]) the way the shell
// does: options, then with -c the script and its $0, $1, ... When there is
// no -c script it returns nil and why; stdin reports that the shell reads
// its commands from standard input.
func ShellArgs(sh string, args []string) (*Script, string) {
	s, note, _ := shellArgs(sh, args)
	return s, note
}

func shellArgs(sh string, args []string) (s *Script, note string, stdin bool) {
	s = &Script{Shell: sh, Lang: shellLangs[sh], From: "-c"}
	hasC, readsStdin := false, false
	i := 0
options:
	for i < len(args) {
		a := args[i]
		switch {
		case a == "--" || a == "-":
			i++
			break options
		case strings.HasPrefix(a, "--") && sh == "bash":
			takesValue, ok := bashLongOptions[a]
			if !ok {
				return nil, fmt.Sprintf("%s: the option %s is not one the device knows, so the script is not explained", sh, shellQuote(a)), false
			}
			s.Options = append(s.Options, a)
			i++
			if takesValue {
				if i >= len(args) {
					return nil, fmt.Sprintf("%s option %s lacks its value", sh, a), false
				}
				s.Options = append(s.Options, args[i])
				i++
			}
		case strings.HasPrefix(a, "--") && sh == "zsh":
			// zsh takes any option by name: --no-rcs, --emulate sh.
			s.Options = append(s.Options, a)
			i++
			if a == "--emulate" && i < len(args) {
				s.Options = append(s.Options, args[i])
				i++
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+') && a[1] != '-':
			s.Options = append(s.Options, a)
			i++
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					hasC = true
				case c == 'o' || (c == 'O' && sh == "bash"):
					// -o NAME, also inside a cluster: -euo pipefail.
					if i >= len(args) {
						return nil, fmt.Sprintf("%s option -%c lacks its value", sh, c), false
					}
					s.Options = append(s.Options, args[i])
					i++
				case c == 's':
					readsStdin = true
				case strings.ContainsRune(shellFlagLetters[sh], c):
				default:
					return nil, fmt.Sprintf("%s: the option %s is not one the device knows, so the script is not explained", sh, shellQuote(a)), false
				}
			}
		default:
			break options
		}
	}
	rest := args[i:]
	switch {
	case hasC && len(rest) == 0:
		return nil, sh + " -c without a script", false
	case hasC:
		s.Text, s.Params = rest[0], rest[1:]
		return s, "", false
	case readsStdin || len(rest) == 0:
		return nil, sh + " reads its commands from standard input, which the device does not see", true
	}
	return nil, fmt.Sprintf("%s runs the script file %s, whose text the device does not see", sh, shellQuote(rest[0])), false
}

// hasCOption reports a -c among a shebang's words.
func hasCOption(args []string) bool {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'c') {
			return true
		}
	}
	return false
}

// scriptSource is what the request says about the script it runs: the
// script, or why there is none (a note: not understood), or neither (no
// shell runs).
type scriptSource struct {
	script *Script
	note   string
	trust  string // how the device knows which shell runs the script
	stdin  bool   // the shell reads its commands from standard input
}

// shebangScript reads the interpreter line of a script file the way the
// kernel does (the interpreter, then the rest of the line as one argument)
// and follows env, including env -S, which splits that argument: a line
// "#!/usr/bin/env -S sh -c '...'" runs the -c text, not the file's body.
func shebangScript(text, scriptPath string, args []string) scriptSource {
	if !strings.HasPrefix(text, "#!") {
		return scriptSource{note: "the script file has no #! line, so the device cannot tell what runs it"}
	}
	first, _, _ := strings.Cut(text, "\n")
	first = strings.TrimSuffix(first, "\r")
	line := strings.TrimLeft(first[2:], " \t")
	interp, arg, _ := strings.Cut(line, " ")
	if i := strings.IndexByte(interp, '\t'); i >= 0 {
		interp, arg = interp[:i], interp[i+1:]+" "+arg
	}
	arg = strings.Trim(arg, " \t")
	var words []string
	if arg != "" {
		words = []string{arg}
	}
	if path.Base(interp) == "env" {
		var ok bool
		if words, ok = envShebang(arg); !ok {
			return scriptSource{note: "the #! line " + Literal(first) + " uses env -S with an expansion or an escape the device does not follow"}
		}
		if len(words) == 0 {
			return scriptSource{note: "the #! line " + Literal(first) + " names no program"}
		}
		interp, words = words[0], words[1:]
	}
	sh := ShellOf(interp)
	if sh == "" {
		return scriptSource{note: "the script file is run by " + Literal(first) + ", whose language the device does not explain"}
	}
	trust := "the #! line"
	if len(words) > 0 && hasCOption(words) {
		// The interpreter line carries its own -c script; the kernel then
		// appends the file's path and the arguments as $0, $1, ...
		s, note, _ := shellArgs(sh, append(append(words, scriptPath), args...))
		if s == nil {
			return scriptSource{note: note}
		}
		s.From = first + " (its -c text is what runs; the file's body is only $0)"
		return scriptSource{script: s, trust: trust}
	}
	return scriptSource{script: &Script{Shell: sh, Lang: shellLangs[sh], From: first, Options: words, Text: text, Params: args}, trust: trust}
}

// envShebang splits env's argument as env does: without -S it is one word
// (Linux passes the rest of the line as one argument); with -S, words
// split at blanks with '...' and "..." quoting and backslash escapes. ok
// is false for ${VAR}, which env -S expands at run time, and escapes the
// device does not follow.
func envShebang(arg string) ([]string, bool) {
	if !strings.HasPrefix(arg, "-S") && !strings.HasPrefix(arg, "--split-string") {
		if arg == "" {
			return nil, true
		}
		if strings.HasPrefix(arg, "-") {
			return nil, false // other env options in one word: env would read them as one
		}
		return []string{arg}, true
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(arg, "--split-string"), "-S")
	rest = strings.TrimPrefix(rest, "=")
	var words []string
	var cur strings.Builder
	inWord := false
	quote := byte(0)
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\\' && i+1 < len(rest):
			i++
			switch rest[i] {
			case '_':
				cur.WriteByte(' ')
			case 't':
				cur.WriteByte('\t')
			case 'n':
				cur.WriteByte('\n')
			case '\\', '"', '\'', '$', '#', ' ':
				cur.WriteByte(rest[i])
			case 'c':
				i = len(rest)
			default:
				return nil, false
			}
			inWord = true
		case c == '$':
			return nil, false
		case quote == '"':
			if c == '"' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			quote, inWord = c, true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(rest)
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}

// deadline is the end of one analysis's budget.
type deadline struct {
	wall      time.Time     // the wall clock's cap (budget alone without CPU time)
	cpuStart  time.Duration // the process's CPU time at the start
	cpuCounts bool
}

func newDeadline() deadline {
	cpu, ok := processCPU()
	if !ok {
		return deadline{wall: time.Now().Add(budget)}
	}
	return deadline{wall: time.Now().Add(wallCap), cpuStart: cpu, cpuCounts: true}
}

// passed reports whether the budget is spent.
func (d deadline) passed() bool {
	if time.Now().After(d.wall) {
		return true
	}
	if !d.cpuCounts {
		return false
	}
	cpu, _ := processCPU()
	return cpu-d.cpuStart > budget
}

// errBudget stops the parser when the analysis's time is up; errDeep when
// the script nests deeper than the parser is given.
var (
	errBudget = errors.New("time budget spent")
	errDeep   = errors.New("nested too deeply")
)

// maxParseNesting bounds how deep the parser is let go: the parser's time
// grows faster than the script on deep nesting, so the text stops there.
const maxParseNesting = 4 * maxDepth

// budgetReader hands the parser the script a chunk at a time, stops it
// once the deadline has passed, and cuts the text where its brackets and
// compound commands nest deeper than maxParseNesting (counted on the raw
// text, quotes ignored, which can only cut a script early).
type budgetReader struct {
	r        *strings.Reader
	deadline deadline
	depth    int
	word     []byte // the letters of the word being read
	err      error
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.deadline.passed() {
		return 0, errBudget
	}
	n, err := b.r.Read(p)
	for i := 0; i < n; i++ {
		c := p[i]
		if c >= 'a' && c <= 'z' {
			if len(b.word) < 8 {
				b.word = append(b.word, c)
			}
			continue
		}
		if n := len(b.word); n >= 2 && n <= 6 { // the keywords' lengths
			switch string(b.word) {
			case "if", "while", "until", "for", "case", "select":
				b.depth++
			case "fi", "done", "esac":
				b.depth = max(b.depth-1, 0)
			}
		}
		b.word = b.word[:0]
		switch c {
		case '(', '{':
			b.depth++
		case ')', '}':
			b.depth = max(b.depth-1, 0)
		}
		if b.depth > maxParseNesting {
			b.err = errDeep
			return i, nil
		}
	}
	return n, err
}

// ParseBounded parses a whole script under the analysis's bounds (its
// time budget and nesting limit), for callers that need the syntax tree
// while other requests may be waiting, such as matching a rule by the
// script's parsed form: a script past the bounds is an error, never a
// stall.
func ParseBounded(text string, lang syntax.LangVariant) (*syntax.File, error) {
	r := &budgetReader{r: strings.NewReader(text), deadline: newDeadline()}
	return syntax.NewParser(syntax.Variant(lang)).Parse(r, "")
}

// crStandIn replaces CR before parsing: the shells keep CR inside a word
// (`echo a\rb` prints a, CR, b), but the parser would take it for a blank.
// The stand-in is a control byte the script does not contain, shown as \r.
func crStandIn(text string) (string, byte, bool) {
	if !strings.ContainsRune(text, '\r') {
		return text, 0, true
	}
	for c := byte(1); c < 0x20; c++ {
		if c == '\t' || c == '\n' || c == '\r' {
			continue
		}
		if strings.IndexByte(text, c) < 0 {
			return strings.ReplaceAll(text, "\r", string(c)), c, true
		}
	}
	return text, 0, false
}

// Literal shows client text as sent, on one line: backslashes stay as
// written; line breaks, CR, tabs, other control characters, invalid UTF-8
// and invisible code points become visible escapes (\n, \r, \t, \x1b,
// \u{202e}).
func Literal(s string) string {
	plain := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			EscapeRune(&b, r)
		}
		i += size
	}
	return b.String()
}

// EscapeRune writes r as the device displays it: newline, CR and tab as
// \n, \r, \t, other control characters as \xNN, and invisible or format
// code points (U+202E, which would reorder what follows) as \u{N}. The
// device's console escaping uses the same rule.
func EscapeRune(b *strings.Builder, r rune) {
	switch {
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r == '\t':
		b.WriteString(`\t`)
	case r < 0x80 && !unicode.IsPrint(r):
		fmt.Fprintf(b, `\x%02x`, r)
	case !unicode.IsPrint(r):
		fmt.Fprintf(b, `\u{%x}`, r)
	default:
		b.WriteRune(r)
	}
}

// clip cuts a displayed text to maxLineBytes at a rune boundary.
func clip(s string) string {
	if len(s) <= maxLineBytes {
		return s
	}
	cut := maxLineBytes
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + fmt.Sprintf("... (%d more bytes)", len(s)-cut)
}

// shellQuote renders a word as a POSIX shell would read it back.
func shellQuote(w string) string {
	if w == "" {
		return "''"
	}
	plain := true
	for _, r := range w {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_@%+=:,./-", r)) {
			plain = false
			break
		}
	}
	if plain {
		return w
	}
	return Literal("'" + strings.ReplaceAll(w, "'", `'\''`) + "'")
}

// shellJoin renders words as one line.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}

// noExec: sh -n / bash -n with a script (-c TEXT or a file) reads the
// commands and runs none of them, a syntax check (POSIX sh, "-n: The
// shell shall read commands but does not execute them"; bash(1): "This
// is ignored by interactive shells"). Only for the POSIX shells and bash,
// with no -i or -s and a script given, so the shell cannot be
// interactive; zsh is left out. A word decided at run time before the
// script could be an option (-i), so with one, why says so.
func noExec(sh string, ws []word) (ok bool, why string) {
	if shellLangs[sh] == syntax.LangZsh {
		return false, ""
	}
	n, script := false, false
	for i := 0; i < len(ws); i++ {
		a := ws[i].val
		switch {
		case !ws[i].fixed:
			if n && ws[i].prefix != "" && !strings.HasPrefix(ws[i].prefix, "-") {
				return true, "" // ./"$f": a path, whatever follows
			}
			if n {
				return false, fmt.Sprintf("%s -n: the word %s is decided at run time and could be an option (-i makes the shell interactive, which ignores -n and runs what it reads)", sh, ws[i].shown)
			}
			return false, ""
		case a == "--":
			// the script file follows, whatever its name
			return n && i+1 < len(ws) && !(ws[i+1].fixed && ws[i+1].val == "-"), ""
		case a == "-":
			return false, "" // from standard input
		case strings.HasPrefix(a, "--"):
			if bashLongOptions[a] {
				i++ // --rcfile FILE
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			for _, c := range a[1:] {
				switch {
				case c == 'i' || c == 's':
					return false, ""
				case c == 'n' && a[0] == '-':
					n = true
				case c == 'c' && a[0] == '-':
					script = true
				case c == 'o' || c == 'O':
					i++
				}
			}
		default:
			return n, "" // the script file, or -c's text
		}
	}
	return n && script, ""
}
