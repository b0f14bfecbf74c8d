// Script explanation (design: "What the device tells the person"): AI
// coding agents run most commands as `sh -c '...'`, which would otherwise
// reach the person approving as one long argument. The device explains a
// script the way an agent's command gate judges one: it is understood only
// when every inner command is a plain name the device knows and nothing
// computes a command or runs code it cannot see. The explanation opens with
// that verdict ("understood", or "not understood, because" and each
// construct with its line), then the commands in the order they run, who
// can read each delivered secret, where the network goes, and "!" marks.
// The script is parsed with mvdan.cc/sh/v3/syntax
// (https://pkg.go.dev/mvdan.cc/sh/v3/syntax), a device-side dependency
// only. Rendering is bounded: a time budget, a depth limit, capped lines
// and marks, and work linear in the script.
package main

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// Bounds of one explanation. The full script is shown elsewhere (the
// command or script field), so what is cut here is never hidden.
const (
	maxExplainLines = 400                   // command lines
	maxLineBytes    = 240                   // one displayed command
	maxFindings     = 24                    // verdict reasons, and "!" marks, each
	maxListed       = 12                    // programs listed per secret
	maxDepth        = 48                    // nesting the walk follows
	explainBudget   = 80 * time.Millisecond // parsing and walking together
)

// shellScript is a shell script an invocation runs.
type shellScript struct {
	shell   string // sh, bash, dash, zsh or ash
	lang    syntax.LangVariant
	from    string   // "-c" or the shebang line
	options []string // shell options as given, before the script
	text    string
	params  []string // -c: $0 $1 ...; a script file: $1 ...
}

var shellLangs = map[string]syntax.LangVariant{
	"sh": syntax.LangPOSIX, "dash": syntax.LangPOSIX, "ash": syntax.LangPOSIX,
	"bash": syntax.LangBash, "zsh": syntax.LangZsh,
}

// shellOf returns the shell the first non-empty name (an argv[0] or a
// path) names, or "". The explanation itself trusts only the executable
// (shellOfExecutable); rules use this to canonicalise a script argv.
func shellOf(names ...string) string {
	for _, n := range names {
		if _, ok := shellLangs[path.Base(n)]; ok && n != "" {
			return path.Base(n)
		}
	}
	return ""
}

// Options that take the next word as their value, and the single-letter
// options each shell accepts (set's flags plus the invocation-only ones).
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

// scriptSource is what findScript learns about an invocation: the script
// to explain, or why there is none (a note: the device cannot explain
// what runs), or nothing at all (no shell runs).
type scriptSource struct {
	script *shellScript
	note   string // not explained: why (verdict: not understood)
	trust  string // how the device knows which shell runs the script
}

// findScript recognises the shell script an invocation runs, trusting the
// executable and never argv[0]: a -c argument is explained as shell code
// only when the executable is that shell.
func findScript(d *invocationView) scriptSource {
	if d.ExecutableMode == "SCRIPT" {
		if d.ScriptContents == nil {
			return scriptSource{}
		}
		return shebangScript(*d.ScriptContents, d.ExecutablePath, d.Arguments)
	}
	sh, trust, problem := shellOfExecutable(d)
	if problem != "" {
		return scriptSource{note: problem}
	}
	if sh == "" {
		return scriptSource{}
	}
	s, note := shellArgs(sh, d.Arguments)
	if s == nil {
		return scriptSource{note: note}
	}
	return scriptSource{script: s, trust: trust}
}

// shellOfExecutable names the shell the executable is. The path is the one
// the client resolved (symbolic links followed); busybox is sh when argv[0]
// says so, since busybox picks its applet by argv[0]. When the request
// carries a hash and this host has a file at that path or a shell with
// that hash, the hash decides. problem: argv[0] names a shell but the
// executable is another program, or the hash contradicts the path.
func shellOfExecutable(d *invocationView) (sh, trust, problem string) {
	exe := d.ExecutablePath
	base := path.Base(exe)
	if exe == "" {
		base = ""
	}
	if base == "busybox" && slices.Contains([]string{"sh", "ash"}, path.Base(d.Command)) {
		base = "ash"
	}
	_, isShell := shellLangs[base]
	if !isShell {
		if claimed := shellOf(d.Command); claimed != "" {
			return "", "", fmt.Sprintf("argv[0] is %s, but the executable is %s: the script argument is code for that program, which the device does not explain",
				literal(d.Command), orUnknown(exe))
		}
		return "", "", ""
	}
	trust = "executable " + literal(exe)
	if d.ExecutableHash == "" {
		return base, trust + ", no hash sent", ""
	}
	want, err := base64.StdEncoding.DecodeString(d.ExecutableHash)
	if err != nil || len(want) != sha256.Size {
		return "", "", "the executable's hash is not a SHA-256 in base64, so the device cannot tell what program runs the script"
	}
	if got, ok := hashFile(exe); ok {
		if string(got) == string(want) {
			return base, trust + ", its sha-256 matches this host's " + literal(exe), ""
		}
		return "", "", fmt.Sprintf("the executable is named %s, but its sha-256 differs from this host's %s: the device cannot tell what program runs the script",
			literal(exe), literal(exe))
	}
	for _, p := range hostShells {
		if got, ok := hashFile(p); ok && string(got) == string(want) {
			if real := path.Base(p); shellLangs[real] != shellLangs[base] {
				return "", "", fmt.Sprintf("the executable is named %s, but its sha-256 is this host's %s", literal(exe), p)
			}
			return base, trust + ", its sha-256 matches this host's " + p, ""
		}
	}
	return base, trust + ", no shell on this host has its sha-256 to compare", ""
}

func hasCOption(args []string) bool {
	for _, a := range args {
		if len(a) > 1 && a[0] == '-' && a[1] != '-' && strings.ContainsRune(a, 'c') {
			return true
		}
	}
	return false
}

// hostShells are where this host's shells live; the device hashes them to
// recognise a shell the client reports under another path.
var hostShells = []string{"/bin/sh", "/bin/bash", "/bin/dash", "/bin/zsh", "/usr/bin/sh", "/usr/bin/bash",
	"/usr/bin/dash", "/usr/bin/zsh", "/usr/local/bin/bash", "/usr/local/bin/zsh", "/opt/homebrew/bin/bash"}

// hashFile hashes a regular file of at most 64 MiB.
func hashFile(p string) ([]byte, bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > 64<<20 {
		return nil, false
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, false
	}
	return h.Sum(nil), true
}

// shellArgs reads a shell's arguments (after argv[0]) the way the shell
// does: options, then with -c the script and its $0, $1, ...
func shellArgs(sh string, args []string) (*shellScript, string) {
	s := &shellScript{shell: sh, lang: shellLangs[sh], from: "-c"}
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
				return nil, fmt.Sprintf("%s option %s is not understood here, so the script is not explained", sh, shellQuote(a))
			}
			s.options = append(s.options, a)
			i++
			if takesValue {
				if i >= len(args) {
					return nil, fmt.Sprintf("%s option %s lacks its value", sh, a)
				}
				s.options = append(s.options, args[i])
				i++
			}
		case strings.HasPrefix(a, "--") && sh == "zsh":
			// zsh takes any option by name: --no-rcs, --emulate sh.
			s.options = append(s.options, a)
			i++
			if a == "--emulate" && i < len(args) {
				s.options = append(s.options, args[i])
				i++
			}
		case len(a) > 1 && (a[0] == '-' || a[0] == '+') && a[1] != '-':
			s.options = append(s.options, a)
			i++
			for _, c := range a[1:] {
				switch {
				case c == 'c' && a[0] == '-':
					hasC = true
				case c == 'o' || (c == 'O' && sh == "bash"):
					// -o NAME, also inside a cluster: -euo pipefail.
					if i >= len(args) {
						return nil, fmt.Sprintf("%s option -%c lacks its value", sh, c)
					}
					s.options = append(s.options, args[i])
					i++
				case c == 's':
					readsStdin = true
				case strings.ContainsRune(shellFlagLetters[sh], c):
				default:
					return nil, fmt.Sprintf("%s option %s is not understood here, so the script is not explained", sh, shellQuote(a))
				}
			}
		default:
			break options
		}
	}
	rest := args[i:]
	switch {
	case hasC && len(rest) == 0:
		return nil, sh + " -c without a script"
	case hasC:
		s.text, s.params = rest[0], rest[1:]
		return s, ""
	case readsStdin || len(rest) == 0:
		return nil, sh + " reads its commands from standard input, which the device does not see"
	}
	return nil, fmt.Sprintf("%s runs the script file %s, whose text the device does not see", sh, shellQuote(rest[0]))
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
			return scriptSource{note: "the #! line " + literal(first) + " uses env -S with an expansion or an escape the device does not follow"}
		}
		if len(words) == 0 {
			return scriptSource{note: "the #! line " + literal(first) + " names no program"}
		}
		interp, words = words[0], words[1:]
	}
	sh := shellOf(interp)
	if sh == "" {
		return scriptSource{note: "the script file is run by " + literal(first) + ", whose language the device does not explain"}
	}
	trust := "the #! line"
	if len(words) > 0 && hasCOption(words) {
		// The interpreter line carries its own -c script; the kernel then
		// appends the file's path and the arguments as $0, $1, ...
		s, note := shellArgs(sh, append(append(words, scriptPath), args...))
		if s == nil {
			return scriptSource{note: note}
		}
		s.from = first + " (its -c text is what runs; the file's body is only $0)"
		return scriptSource{script: s, trust: trust}
	}
	return scriptSource{script: &shellScript{shell: sh, lang: shellLangs[sh], from: first, options: words, text: text, params: args}, trust: trust}
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

// finding is one thing the person must know: a construct the device
// cannot see through (it makes the verdict "not understood") or a mark.
type finding struct {
	line   int // in the script, from 1; 0 for the invocation as a whole
	text   string
	secret bool // concerns a delivered secret: listed first
	more   int  // the same finding on this many other lines
}

// explanation is the structured result; render turns it into lines.
type explanation struct {
	heading   string
	trust     string
	reasons   []finding // why the script is not understood; none: understood
	marks     []finding // "!" lines
	lines     []string  // the commands, indented two spaces per level
	secrets   []string  // who can read each delivered secret
	network   []string  // destinations by host
	unseen    []string  // programs and files whose content the device does not see
	truncated string    // the walk stopped early: why
}

func (x *explanation) understood() bool { return len(x.reasons) == 0 }

// explainInvocation returns what the person approving is shown about the
// script an invocation runs, the verdict line first; nil when no shell
// script runs. Every client-chosen character is escaped.
func explainInvocation(d *invocationView) (lines []string) {
	x := explainRequest(d)
	if x == nil {
		return nil
	}
	return x.render()
}

// explainRequest explains an invocation; nil when no shell runs.
func explainRequest(d *invocationView) (x *explanation) {
	// It runs inside serve on what a client sent: a parser bug must not
	// take the device down (the fuzz test has found none).
	defer func() {
		if p := recover(); p != nil {
			x = &explanation{reasons: []finding{{text: "the parser failed on this script (" + literal(fmt.Sprint(p)) + ")"}}}
		}
	}()
	src := findScript(d)
	if src.script == nil {
		if src.note == "" {
			return nil
		}
		return &explanation{reasons: []finding{{text: src.note}}}
	}
	return explainScript(src.script, src.trust, d.WorkingDirectory, deliveredSecrets(d), time.Now().Add(explainBudget))
}

// deliveredSecret is one variable a secret delivers.
type deliveredSecret struct {
	name  string // the variable, as delivered
	stdin bool   // delivered on standard input, not in the environment
}

// deliveredSecrets reads the device's delivery lines ("VAR -> env NAME",
// "VAR -> stdin").
func deliveredSecrets(d *invocationView) []deliveredSecret {
	var out []deliveredSecret
	for _, lines := range d.Delivery {
		for _, l := range lines {
			if v, name, ok := strings.Cut(l, " -> env "); ok && v != "" {
				out = append(out, deliveredSecret{name: name})
			} else if v, ok := strings.CutSuffix(l, " -> stdin"); ok {
				out = append(out, deliveredSecret{name: v, stdin: true})
			}
		}
	}
	slices.SortFunc(out, func(a, b deliveredSecret) int { return strings.Compare(a.name, b.name) })
	return slices.Compact(out)
}

// errBudget stops the parser when the explanation's time is up; errDeep
// when the script nests deeper than the parser is given.
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
	deadline time.Time
	depth    int
	word     []byte // the letters of the word being read
	err      error
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if time.Now().After(b.deadline) {
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
		switch string(b.word) {
		case "if", "while", "until", "for", "case", "select":
			b.depth++
		case "fi", "done", "esac":
			b.depth = max(b.depth-1, 0)
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

// parseBounded parses a whole script under the explanation's bounds (its
// time budget and nesting limit), for callers that need the syntax tree
// while other requests may be waiting, such as matching a rule by the
// script's parsed form: a script past the bounds is an error, never a
// stall.
func parseBounded(text string, lang syntax.LangVariant) (*syntax.File, error) {
	r := &budgetReader{r: strings.NewReader(text), deadline: time.Now().Add(explainBudget)}
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

// explainScript parses and walks s. wd is the invocation's working
// directory; secrets are the delivered variables.
func explainScript(s *shellScript, trust, wd string, secrets []deliveredSecret, deadline time.Time) *explanation {
	x := &explanation{heading: scriptHeading(s), trust: trust}
	text, standIn, ok := crStandIn(s.text)
	if !ok {
		x.reasons = append(x.reasons, finding{text: "the script contains carriage returns and every other control byte, so the device cannot follow its words"})
		return x
	}
	w := newWalker(s.lang, wd, secrets, deadline, standIn, len(text))
	w.x = x
	for i, o := range s.options {
		if o == "-x" || (strings.HasPrefix(o, "-") && !strings.HasPrefix(o, "--") && strings.ContainsRune(o, 'x')) ||
			(o == "xtrace" && i > 0 && strings.ContainsRune(s.options[i-1], 'o')) {
			w.mark(0, true, "shell option -x traces every command with its expanded words to stderr, secret values included")
		}
	}
	w.unit(text, 0, 0, true)
	w.finish()
	return x
}

func scriptHeading(s *shellScript) string {
	var h string
	if s.from == "-c" {
		h = s.shell + " -c"
	} else {
		h = "script file run by " + literal(s.from)
	}
	if s.from == "-c" {
		// The -c itself is in the heading already.
		var opts []string
		for _, o := range s.options {
			if len(o) > 1 && o[0] == '-' && o[1] != '-' && strings.ContainsRune(o, 'c') {
				o = strings.Replace(o, "c", "", 1)
				if o == "-" {
					continue
				}
			}
			opts = append(opts, o)
		}
		if len(opts) > 0 {
			h += ", options " + shellJoin(opts)
		}
	}
	if len(s.params) > 0 {
		first := 1
		if s.from == "-c" || strings.HasSuffix(s.from, "is only $0)") {
			first = 0
		}
		var ps []string
		for i, p := range s.params {
			if i == 8 {
				ps = append(ps, fmt.Sprintf("and %d more", len(s.params)-i))
				break
			}
			ps = append(ps, fmt.Sprintf("$%d=%s", first+i, clip(shellQuote(p))))
		}
		h += ", with " + strings.Join(ps, " ")
	}
	return h
}

// render lays the explanation out: the verdict line, its reasons, the
// heading and commands, the secrets, the network, what is unseen, and the
// marks, secret-related ones first, each list capped.
func (x *explanation) render() []string {
	var out []string
	if x.understood() {
		out = append(out, "understood: every command is a plain name the device knows, nothing computes a command or runs code it cannot see, and the secrets reach only the programs listed")
	} else {
		out = append(out, fmt.Sprintf("not understood, because of %d thing(s) the device cannot see through:", len(x.reasons)))
		out = append(out, capped(x.reasons, "  - ")...)
	}
	if x.heading == "" {
		for i, l := range out {
			out[i] = literal(l)
		}
		return out
	}
	head := x.heading + ":"
	if x.trust != "" {
		head = x.heading + " (" + x.trust + "):"
	}
	out = append(out, head)
	out = append(out, x.lines...)
	if x.truncated != "" {
		out = append(out, "... "+x.truncated)
	}
	out = append(out, x.secrets...)
	out = append(out, x.network...)
	out = append(out, x.unseen...)
	out = append(out, capped(x.marks, "! ")...)
	// Every part was escaped where it was taken from the client; this is
	// the one place that guarantees no line carries a control character.
	for i, l := range out {
		out[i] = literal(l)
	}
	return out
}

// capped lists findings secret-related first, then in script order, at
// most maxFindings, with "and N more".
func capped(fs []finding, prefix string) []string {
	sorted := slices.Clone(fs)
	slices.SortStableFunc(sorted, func(a, b finding) int {
		if a.secret != b.secret {
			if a.secret {
				return -1
			}
			return 1
		}
		return a.line - b.line
	})
	var out []string
	for i, f := range sorted {
		if i == maxFindings {
			out = append(out, fmt.Sprintf("%sand %d more", prefix, len(sorted)-i))
			break
		}
		t := f.text
		if f.line > 0 {
			t = fmt.Sprintf("line %d: %s", f.line, t)
		}
		if f.more > 0 {
			t += fmt.Sprintf(" (and on %d more lines)", f.more)
		}
		out = append(out, prefix+t)
	}
	return out
}

// literal shows client text as sent, on one line: backslashes stay as
// written; line breaks, CR, other control characters, invalid UTF-8 and
// invisible code points become visible escapes (\n, \r, \x1b, \u{202e}),
// and a mark says when the script contains any, so a written "\r" and a
// real CR are told apart.
func literal(s string) string {
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
		r, size := utf8DecodeRune(s[i:])
		if r == -1 {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		} else {
			writeRune(&b, r)
		}
		i += size
	}
	return b.String()
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
