// Script explanation: AI coding agents run most commands as `sh -c '...'`
// or `bash -c '...'`, which would otherwise reach the person approving as
// one long argument. An invocation of sh, bash, dash or zsh with -c SCRIPT
// (any option order the shells accept), or a SCRIPT-mode executable whose
// text starts with a sh/bash shebang, is parsed with mvdan.cc/sh/v3/syntax
// (https://pkg.go.dev/mvdan.cc/sh/v3/syntax) and described command by
// command, and what a reviewer must not miss is marked with "!". The parser
// is a device-side dependency only; the client never imports it.
package main

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxExplainLines bounds one explanation; the script text is always shown
// in full elsewhere, so a huge script is cut here rather than flooding the
// terminal.
const maxExplainLines = 400

// shellScript is a shell script an invocation runs.
type shellScript struct {
	shell   string // sh, bash, dash or zsh
	lang    syntax.LangVariant
	from    string   // "-c" or the shebang line
	options []string // shell options as given, before the script
	text    string
	params  []string // -c: $0 $1 ...; a script file: $1 ...
}

var shellLangs = map[string]syntax.LangVariant{
	"sh": syntax.LangPOSIX, "dash": syntax.LangPOSIX, "bash": syntax.LangBash, "zsh": syntax.LangZsh,
}

// shellOf returns the shell an argv[0] (or executable path) names.
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
		"bash": "abBCDefhHiklmnpPrstuvxTE",
		"zsh":  "abcdefghiklmnprstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
	}
	bashLongOptions = map[string]bool{
		"--norc": false, "--noprofile": false, "--posix": false, "--login": false,
		"--noediting": false, "--restricted": false, "--verbose": false, "--debugger": false,
		"--protected": false, "--rcfile": true, "--init-file": true,
	}
)

// findScript recognises the shell script an invocation runs. A nil script
// with an empty note means the command is no shell; a note says why a
// shell's script is not explained.
func findScript(d *invocationView) (*shellScript, string) {
	if d.ExecutableMode == "SCRIPT" && d.ScriptContents != nil {
		if s := shebangScript(*d.ScriptContents, d.Arguments); s != nil {
			return s, ""
		}
		return nil, ""
	}
	sh := shellOf(d.Command, d.ExecutablePath)
	if sh == "" {
		return nil, ""
	}
	return shellArgs(sh, d.Arguments)
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

// shebangScript recognises "#!/bin/sh", "#!/bin/bash", "#!/usr/bin/env
// bash" and "#!/usr/bin/env -S bash -e" (sh, bash, dash, zsh).
func shebangScript(text string, args []string) *shellScript {
	if !strings.HasPrefix(text, "#!") {
		return nil
	}
	first, _, _ := strings.Cut(text, "\n")
	fields := strings.Fields(strings.TrimSuffix(first[2:], "\r"))
	if len(fields) == 0 {
		return nil
	}
	interp, opts := fields[0], fields[1:]
	if path.Base(interp) == "env" {
		for len(opts) > 0 && strings.HasPrefix(opts[0], "-") {
			opts = opts[1:]
		}
		if len(opts) == 0 {
			return nil
		}
		interp, opts = opts[0], opts[1:]
	}
	sh := shellOf(interp)
	if sh == "" {
		return nil
	}
	return &shellScript{shell: sh, lang: shellLangs[sh], from: first, options: opts, text: text, params: args}
}

// explanation is what the renderer shows: a heading, the lines (already
// escaped; indented two spaces per level) and the marks.
type explanation struct {
	heading  string
	lines    []string
	marks    []string
	parseErr string // the script does not parse; show it raw
}

// explainScript parses and describes s. wd is the invocation's working
// directory; secretVars are the environment variables the secrets set.
func explainScript(s *shellScript, wd string, secretVars []string) *explanation {
	x := &explanation{heading: scriptHeading(s)}
	f, err := syntax.NewParser(syntax.Variant(s.lang)).Parse(strings.NewReader(s.text), "")
	if err != nil {
		x.parseErr = clean(err.Error())
		return x
	}
	e := &explainer{wd: wd, cwd: wd, lang: s.lang, secrets: map[string]bool{}, seen: map[string]bool{}, downloaded: map[string]bool{}}
	for _, v := range secretVars {
		e.secrets[v] = true
	}
	for i, o := range s.options {
		if o == "-x" || (strings.HasPrefix(o, "-") && !strings.HasPrefix(o, "--") && strings.ContainsRune(o, 'x')) ||
			(o == "xtrace" && i > 0 && strings.ContainsRune(s.options[i-1], 'o')) {
			e.mark("shell option -x traces every command with its expanded words to stderr, secret values included")
		}
	}
	e.stmts(0, f.Stmts)
	if len(e.lines) == 0 {
		e.add(0, "(no commands)")
	}
	if len(e.lines) > maxExplainLines {
		n := len(e.lines) - maxExplainLines
		e.lines = append(e.lines[:maxExplainLines], fmt.Sprintf("... (%d more lines not shown; the full text is above)", n))
	}
	x.lines, x.marks = e.lines, e.marks
	return x
}

func scriptHeading(s *shellScript) string {
	var h string
	if s.from == "-c" {
		h = s.shell + " -c"
	} else {
		h = "script file run by " + clean(s.from)
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
		if s.from == "-c" {
			first = 0
		}
		var ps []string
		for i, p := range s.params {
			ps = append(ps, fmt.Sprintf("$%d=%s", first+i, shellQuote(p)))
		}
		h += ", with " + strings.Join(ps, " ")
	}
	return h
}

type explainer struct {
	lines   []string
	marks   []string
	seen    map[string]bool
	wd      string // the invocation's working directory
	cwd     string // where the script is at this point; "" once unknown
	lang    syntax.LangVariant
	secrets map[string]bool
	// downloaded: files written by a download so far (resolved paths).
	downloaded map[string]bool
	nesting    int // scripts explained inside this one (eval, sh -c)
	printer    *syntax.Printer
	buf        bytes.Buffer
}

func (e *explainer) add(depth int, text string) {
	e.lines = append(e.lines, strings.Repeat("  ", depth)+text)
}

func (e *explainer) mark(format string, args ...any) {
	m := fmt.Sprintf(format, args...)
	if !e.seen[m] {
		e.seen[m] = true
		e.marks = append(e.marks, m)
	}
}

// src prints a node in shell syntax on one line, escaped.
func (e *explainer) src(n syntax.Node) string {
	if e.printer == nil {
		e.printer = syntax.NewPrinter(syntax.SingleLine(true))
	}
	e.buf.Reset()
	if err := e.printer.Print(&e.buf, n); err != nil {
		return "(unprintable)"
	}
	return clean(strings.TrimSpace(e.buf.String()))
}

func (e *explainer) stmts(depth int, list []*syntax.Stmt) {
	for i, s := range list {
		prefix := ""
		if i > 0 {
			prefix = "then: "
		}
		e.stmt(depth, prefix, s, false)
	}
}

var connectors = map[syntax.BinCmdOperator]string{
	syntax.AndStmt: "if that succeeded: ",
	syntax.OrStmt:  "if that failed: ",
	syntax.Pipe:    "piped into: ",
	syntax.PipeAll: "piped (stdout and stderr) into: ",
}

// stmt describes one statement; prefix says how it follows the previous
// one. inPipe: s is a stage of a pipeline already checked as a whole.
func (e *explainer) stmt(depth int, prefix string, s *syntax.Stmt, inPipe bool) {
	var notes []string
	if s.Negated {
		notes = append(notes, "result negated")
	}
	if s.Background {
		notes = append(notes, "in the background")
	}
	redirs, heredocs := e.redirects(s.Redirs)
	notes = append(notes, redirs...)
	tail := ""
	if len(notes) > 0 {
		tail = " [" + strings.Join(notes, "; ") + "]"
	}
	switch c := s.Cmd.(type) {
	case nil:
		e.add(depth, prefix+"(redirections only)"+tail)
	case *syntax.BinaryCmd:
		if (c.Op == syntax.Pipe || c.Op == syntax.PipeAll) && !inPipe {
			e.checkPipeline(c)
		}
		pipe := c.Op == syntax.Pipe || c.Op == syntax.PipeAll
		if tail != "" {
			e.add(depth, prefix+"group"+tail+":")
			e.stmt(depth+1, "", c.X, pipe)
			e.stmt(depth+1, connectors[c.Op], c.Y, pipe)
		} else {
			e.stmt(depth, prefix, c.X, pipe)
			e.stmt(depth, connectors[c.Op], c.Y, pipe)
		}
	case *syntax.CallExpr:
		e.call(depth, prefix, c, s, tail)
	case *syntax.DeclClause:
		e.decl(depth, prefix, c, tail)
	case *syntax.Subshell:
		e.add(depth, prefix+"subshell"+tail+":")
		saved := e.cwd
		e.stmts(depth+1, c.Stmts)
		e.cwd = saved
	case *syntax.Block:
		e.add(depth, prefix+"group"+tail+":")
		e.stmts(depth+1, c.Stmts)
	case *syntax.IfClause:
		label := "if"
		for ic := c; ic != nil; ic = ic.Else {
			if label == "else" || !ic.ThenPos.IsValid() {
				e.add(depth, "else:")
				e.stmts(depth+1, ic.Then)
				break
			}
			e.add(depth, prefix+label+tail+":")
			prefix, tail = "", ""
			e.stmts(depth+1, ic.Cond)
			e.add(depth, "when true:")
			e.stmts(depth+1, ic.Then)
			label = "else if"
		}
	case *syntax.WhileClause:
		kw := "while"
		if c.Until {
			kw = "until"
		}
		e.add(depth, prefix+kw+tail+":")
		e.stmts(depth+1, c.Cond)
		e.add(depth, "repeat:")
		e.stmts(depth+1, c.Do)
	case *syntax.ForClause:
		head := "for"
		if c.Select {
			head = "select"
		}
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			head += " " + clean(l.Name.Value) + " in "
			if !l.InPos.IsValid() {
				head += `"$@"`
			} else {
				head += e.words(l.Items)
			}
		case *syntax.CStyleLoop:
			head += " " + e.src(c.Loop)
		}
		e.add(depth, prefix+head+tail+":")
		e.substitutions(depth, c.Loop)
		e.stmts(depth+1, c.Do)
	case *syntax.CaseClause:
		e.add(depth, prefix+"case "+e.src(c.Word)+tail+":")
		e.wordChecks(c.Word, "case "+e.src(c.Word))
		e.substitutions(depth, c.Word)
		for _, it := range c.Items {
			var pats []string
			for _, p := range it.Patterns {
				pats = append(pats, e.src(p))
			}
			e.add(depth+1, strings.Join(pats, " | ")+"):")
			e.stmts(depth+2, it.Stmts)
		}
	case *syntax.TimeClause:
		if c.Stmt == nil {
			e.add(depth, prefix+"time"+tail)
			break
		}
		e.stmt(depth, prefix+"timed: ", c.Stmt, inPipe)
	case *syntax.FuncDecl:
		name := "(anonymous)"
		if c.Name != nil {
			name = clean(c.Name.Value)
		}
		e.add(depth, prefix+"define function "+name+tail+", which runs:")
		saved := e.cwd
		e.stmt(depth+1, "", c.Body, false)
		e.cwd = saved
	default:
		e.add(depth, prefix+e.src(s.Cmd)+tail)
		e.substitutions(depth, s.Cmd)
	}
	cmdText := "(redirections only)"
	if s.Cmd != nil {
		cmdText = e.src(s.Cmd)
	}
	for _, r := range s.Redirs {
		if r.Word != nil {
			e.wordChecks(r.Word, cmdText+" (in a redirection)")
		}
		if r.Hdoc != nil {
			e.wordChecks(r.Hdoc, cmdText+" (in its here-document)")
		}
		if r.Word != nil {
			e.substitutions(depth, r.Word)
		}
	}
	e.heredocBodies(depth, heredocs, cmdText)
}

// redirects describes a statement's redirections and checks where they
// write; here-documents are returned to be shown after the command.
func (e *explainer) redirects(rs []*syntax.Redirect) (notes []string, heredocs []*syntax.Redirect) {
	for _, r := range rs {
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		stream := func(def string) string {
			if fd == "" {
				return def
			}
			if n, ok := fdNames[fd]; ok {
				return n
			}
			return "fd " + clean(fd)
		}
		target := ""
		if r.Word != nil {
			target = e.src(r.Word)
		}
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob:
			notes = append(notes, stream("stdout")+" to "+target)
			e.checkWrite("writes", r.Word)
		case syntax.AppOut:
			notes = append(notes, stream("stdout")+" appended to "+target)
			e.checkWrite("writes", r.Word)
		case syntax.RdrAll, syntax.RdrAllClob:
			notes = append(notes, "stdout and stderr to "+target)
			e.checkWrite("writes", r.Word)
		case syntax.AppAll, syntax.AppAllClob:
			notes = append(notes, "stdout and stderr appended to "+target)
			e.checkWrite("writes", r.Word)
		case syntax.RdrIn:
			notes = append(notes, stream("stdin")+" from "+target)
		case syntax.RdrInOut:
			notes = append(notes, stream("stdin")+" read and written: "+target)
			e.checkWrite("writes", r.Word)
		case syntax.DplIn, syntax.DplOut:
			def := "stdout"
			if r.Op == syntax.DplIn {
				def = "stdin"
			}
			switch target {
			case "-":
				notes = append(notes, stream(def)+" closed")
			case "0", "1", "2":
				notes = append(notes, stream(def)+" to "+fdNames[target])
			default:
				notes = append(notes, stream(def)+" to fd "+target)
			}
		case syntax.Hdoc, syntax.DashHdoc:
			notes = append(notes, stream("stdin")+" from a here-document")
			heredocs = append(heredocs, r)
		case syntax.WordHdoc:
			notes = append(notes, stream("stdin")+" from the string "+target)
		default:
			notes = append(notes, e.src(r.Word))
		}
	}
	return notes, heredocs
}

func (e *explainer) heredocBodies(depth int, heredocs []*syntax.Redirect, cmdText string) {
	for _, r := range heredocs {
		body := ""
		if r.Hdoc != nil {
			var b bytes.Buffer
			syntax.NewPrinter().Print(&b, r.Hdoc)
			body = strings.TrimSuffix(b.String(), "\n")
		}
		lines := strings.Split(body, "\n")
		e.mark("here-document of %d line(s) is the input of: %s", len(lines), cmdText)
		for _, l := range lines {
			e.add(depth+1, "| "+clean(l))
		}
		if r.Hdoc != nil {
			e.substitutions(depth, r.Hdoc)
		}
	}
}

// fixedWord reports a word whose value cannot change at run time, and that
// value: literals and quoted literals.
func fixedWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// Commands that matter to the checks.
var (
	downloaders  = set("curl", "wget", "fetch", "aria2c", "http", "xh")
	interpreters = set("sh", "bash", "dash", "zsh", "ksh", "fish", "python", "python2", "python3", "perl",
		"ruby", "node", "deno", "bun", "php", "lua", "pwsh", "osascript", "tclsh")
	// wrappers run their first non-option operand as the command.
	wrappers = set("sudo", "doas", "env", "nohup", "nice", "exec", "command", "builtin", "time", "timeout", "xargs", "stdbuf", "setsid")
	writers  = map[string]string{"tee": "writes", "touch": "writes", "mkdir": "writes", "rm": "deletes",
		"rmdir": "deletes", "cp": "writes", "mv": "writes", "ln": "writes", "install": "writes", "truncate": "writes"}
)

func set(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// wrapperValueOptions are the options of wrappers that take a value.
var wrapperValueOptions = map[string]map[string]bool{
	"sudo":    set("-u", "-g", "-C", "-D", "-h", "-p", "-R", "-T", "-U", "--user", "--group"),
	"doas":    set("-u", "-C"),
	"env":     set("-u", "-C", "-S", "--unset", "--chdir"),
	"nice":    set("-n"),
	"timeout": set("-s", "-k", "--signal", "--kill-after"),
	"stdbuf":  set("-i", "-o", "-e"),
	"xargs":   set("-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a"),
}

// effective returns the command a call runs after wrappers such as sudo
// and env, and its operands.
func effective(words []string) (string, []string) {
	for len(words) > 0 {
		if words[0] == "" {
			return "", nil // not fixed: decided at run time
		}
		name := path.Base(words[0])
		if !wrappers[name] {
			return name, words[1:]
		}
		rest := words[1:]
	skip:
		for len(rest) > 0 {
			w := rest[0]
			switch {
			case wrapperValueOptions[name][w] && len(rest) > 1:
				rest = rest[2:]
			case strings.HasPrefix(w, "-"),
				name == "env" && strings.Contains(w, "="),
				name == "timeout" && w != "" && w[0] >= '0' && w[0] <= '9':
				rest = rest[1:]
			default:
				break skip
			}
		}
		if len(rest) == 0 {
			return name, nil
		}
		words = rest
	}
	return "", nil
}

// dumpsEnvironment: env, printenv and set without operands, export -p,
// declare -x.
func dumpsEnvironment(name string, operands []string) bool {
	switch name {
	case "env", "printenv", "set":
		return len(operands) == 0
	case "export", "declare", "typeset":
		return len(operands) == 1 && (operands[0] == "-p" || operands[0] == "-x" || operands[0] == "-px")
	}
	return false
}

// literalArgs returns the fixed values of a call's words; non-fixed words
// are "".
func literalArgs(ws []*syntax.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i], _ = fixedWord(w)
	}
	return out
}

func (e *explainer) call(depth int, prefix string, c *syntax.CallExpr, s *syntax.Stmt, tail string) {
	line := e.src(c)
	if len(c.Args) == 0 {
		var as []string
		for _, a := range c.Assigns {
			as = append(as, e.src(a))
		}
		e.add(depth, prefix+"set shell variable "+strings.Join(as, " ")+tail)
		for _, a := range c.Assigns {
			e.assignChecks(depth, a, line)
		}
		return
	}
	var words []string
	for _, w := range c.Args {
		words = append(words, e.src(w))
	}
	text := strings.Join(words, " ")
	if len(c.Assigns) > 0 {
		var as []string
		for _, a := range c.Assigns {
			as = append(as, e.src(a))
		}
		tail = " [environment " + strings.Join(as, " ") + "]" + tail
	}
	e.add(depth, prefix+text+tail)
	for _, a := range c.Assigns {
		e.assignChecks(depth, a, line)
	}
	if _, fixed := fixedWord(c.Args[0]); !fixed {
		e.mark("the command name comes from an expansion, so what runs is decided at run time: %s", line)
	}
	lits := literalArgs(c.Args)
	name, operands := effective(lits)
	for _, w := range c.Args {
		e.wordChecks(w, line)
	}
	switch name {
	case "eval":
		e.mark("eval runs its arguments as shell code: %s", line)
		e.nested(depth, "which runs:", strings.Join(operands, " "), e.lang, slices.Contains(operands, ""))
	case "source", ".":
		e.mark("%s runs a file's commands in this shell: %s", name, line)
	case "cd":
		e.cd(operands)
	case "set":
		for i, o := range operands {
			if o == "-x" || (strings.HasPrefix(o, "-") && strings.ContainsRune(o, 'x') && !strings.HasPrefix(o, "--")) ||
				(o == "xtrace" && i > 0 && operands[i-1] == "-o") {
				e.mark("set -x traces every command with its expanded words to stderr, secret values included")
			}
		}
	}
	if len(e.secrets) > 0 && dumpsEnvironment(name, operands) {
		e.mark("prints every environment variable, the secret ones included: %s", line)
	}
	if w := path.Base(lits[0]); w == "sudo" || w == "doas" {
		e.mark("runs as another user (root unless -u says otherwise): %s", line)
	}
	if sh := shellOf(name); sh != "" && e.nesting < 3 {
		if sub, note := shellArgs(sh, operands); sub != nil {
			e.mark("runs another shell script: %s", line)
			fixed := true
			for _, w := range c.Args {
				if _, ok := fixedWord(w); !ok {
					fixed = false
				}
			}
			e.nested(depth, "whose script ("+sh+" -c) runs:", sub.text, sub.lang, !fixed)
		} else if len(operands) > 0 && operands[0] != "" && strings.Contains(note, "script file") {
			e.mark("%s", note)
		}
	}
	if verb, ok := writers[name]; ok {
		files := operands
		var fileWords []*syntax.Word
		for i, w := range c.Args {
			if i >= len(c.Args)-len(operands) {
				fileWords = append(fileWords, w)
			}
		}
		if name == "cp" || name == "mv" || name == "ln" || name == "install" {
			if len(fileWords) > 0 {
				fileWords = fileWords[len(fileWords)-1:]
				files = files[len(files)-1:]
			}
		}
		for i, w := range fileWords {
			if strings.HasPrefix(files[i], "-") {
				continue
			}
			e.checkWrite(verb, w)
		}
	}
	if interpreters[name] || name == "eval" || name == "source" || name == "." {
		if e.downloadInside(s) {
			e.mark("runs downloaded code: %s", line)
		}
	}
	if downloaders[name] {
		e.noteDownloads(operands, s.Redirs)
	}
	// A file saved by an earlier download, run as a program or script:
	// curl -o install.sh URL && sh install.sh.
	ran := lits[0]
	if interpreters[name] || name == "source" || name == "." {
		ran = ""
		for _, o := range operands {
			if !strings.HasPrefix(o, "-") {
				ran = o
				break
			}
		}
	}
	if ran != "" && e.downloaded[e.resolve(ran)] {
		e.mark("runs a file downloaded earlier in the script: %s", line)
	}
	e.substitutions(depth, c)
}

// noteDownloads remembers the files a download writes: -o/--output FILE
// (also in a cluster such as -sSLo), wget's -O FILE, or its standard
// output redirected to a file.
func (e *explainer) noteDownloads(operands []string, redirs []*syntax.Redirect) {
	for i, o := range operands {
		short := len(o) > 1 && o[0] == '-' && o[1] != '-' && (strings.HasSuffix(o, "o") || strings.HasSuffix(o, "O")) // -o, -sSLo, -qO
		if (short || o == "--output" || o == "--output-document") && i+1 < len(operands) && operands[i+1] != "-" {
			e.downloaded[e.resolve(operands[i+1])] = true
		}
		for _, long := range []string{"--output=", "--output-document="} {
			if f, ok := strings.CutPrefix(o, long); ok && f != "-" {
				e.downloaded[e.resolve(f)] = true
			}
		}
	}
	for _, r := range redirs {
		if r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrClob {
			if p, ok := fixedWord(r.Word); ok && (r.N == nil || r.N.Value == "1") {
				e.downloaded[e.resolve(p)] = true
			}
		}
	}
}

// resolve names a fixed path relative to where the script is.
func (e *explainer) resolve(p string) string {
	if p == "" || path.IsAbs(p) || e.cwd == "" {
		return path.Clean(p)
	}
	return path.Join(e.cwd, p)
}

func (e *explainer) decl(depth int, prefix string, c *syntax.DeclClause, tail string) {
	line := e.src(c)
	what := map[string]string{
		"export":   "export to the environment of later commands: ",
		"readonly": "set read-only variable: ",
		"local":    "set local variable: ",
	}[c.Variant.Value]
	if what == "" {
		what = clean(c.Variant.Value) + ": "
	}
	var as []string
	for _, a := range c.Args {
		as = append(as, e.src(a))
	}
	e.add(depth, prefix+what+strings.Join(as, " ")+tail)
	dump := len(c.Args) == 0
	for _, a := range c.Args {
		e.assignChecks(depth, a, line)
		if a.Naked && a.Name == nil && a.Value != nil {
			if v, _ := fixedWord(a.Value); v == "-p" || v == "-x" || v == "-px" {
				dump = dump || len(c.Args) == 1
			}
		}
	}
	if dump && len(e.secrets) > 0 && c.Variant.Value != "local" {
		e.mark("prints every environment variable, the secret ones included: %s", line)
	}
	e.substitutions(depth, c)
}

func (e *explainer) assignChecks(depth int, a *syntax.Assign, line string) {
	if a.Name != nil && e.secrets[a.Name.Value] {
		e.mark("sets secret variable %s: %s", clean(a.Name.Value), line)
	}
	if a.Value != nil {
		e.wordChecks(a.Value, line)
	}
	if a.Array != nil {
		for _, el := range a.Array.Elems {
			if el.Value != nil {
				e.wordChecks(el.Value, line)
			}
		}
	}
}

// nested explains a script inside the script (eval, sh -c) when its text
// is fixed.
func (e *explainer) nested(depth int, label, text string, lang syntax.LangVariant, dynamic bool) {
	if dynamic || strings.TrimSpace(text) == "" {
		return
	}
	f, err := syntax.NewParser(syntax.Variant(lang)).Parse(strings.NewReader(text), "")
	if err != nil {
		e.add(depth+1, "which does not parse: "+clean(err.Error()))
		return
	}
	e.add(depth+1, label)
	saved := e.cwd
	e.nesting++
	e.stmts(depth+2, f.Stmts)
	e.nesting--
	e.cwd = saved
}

var namePattern = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// wordChecks marks secret variables named in a word (expanded, or named
// in text such as `printenv GH_TOKEN`), not descending into substitutions,
// which are explained (and checked) on their own.
func (e *explainer) wordChecks(w *syntax.Word, line string) {
	syntax.Walk(w, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst, *syntax.ProcSubst:
			return false
		case *syntax.ParamExp:
			if n.Param != nil && e.secrets[n.Param.Value] {
				e.mark("uses secret variable %s: %s", clean(n.Param.Value), line)
			}
			if n.Exp != nil && n.Exp.Word != nil {
				e.wordChecks(n.Exp.Word, line)
			}
			return false
		case *syntax.Lit:
			e.textChecks(n.Value, line)
		case *syntax.SglQuoted:
			e.textChecks(n.Value, line)
		}
		return true
	})
}

func (e *explainer) textChecks(s, line string) {
	if len(e.secrets) == 0 {
		return
	}
	for _, name := range namePattern.FindAllString(s, -1) {
		if e.secrets[name] {
			e.mark("names secret variable %s: %s", clean(name), line)
		}
	}
}

// substitutions explains the command and process substitutions directly
// inside n: they run before the command they belong to.
func (e *explainer) substitutions(depth int, n syntax.Node) {
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			e.mark("command substitution runs commands to build a word: %s", e.src(n))
			e.add(depth+1, "first, to build a word, "+e.src(n)+" runs:")
			e.stmts(depth+2, n.Stmts)
			return false
		case *syntax.ProcSubst:
			e.mark("process substitution runs commands as a file: %s", e.src(n))
			e.add(depth+1, "alongside, as a file, "+e.src(n)+" runs:")
			e.stmts(depth+2, n.Stmts)
			return false
		case *syntax.Stmt:
			return false // a nested statement is explained by stmt itself
		}
		return true
	})
}

// downloadInside reports a download among the substitutions of a
// statement's words and redirections: sh -c "$(curl ...)", bash <(curl ...).
func (e *explainer) downloadInside(s *syntax.Stmt) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			found = found || hasDownload(n)
			return false
		case *syntax.ProcSubst:
			found = found || hasDownload(n)
			return false
		}
		return !found
	})
	return found
}

func hasDownload(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			if name, _ := effective(literalArgs(c.Args)); downloaders[name] {
				found = true
			}
		}
		return !found
	})
	return found
}

// checkPipeline marks a download piped into a shell or an interpreter.
func (e *explainer) checkPipeline(c *syntax.BinaryCmd) {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(c.X)
	flatten(c.Y)
	download := false
	for _, st := range stages {
		if hasDownload(st) {
			download = true
			continue
		}
		if !download {
			continue
		}
		if call, ok := st.Cmd.(*syntax.CallExpr); ok {
			if name, _ := effective(literalArgs(call.Args)); interpreters[name] {
				e.mark("a download is piped into %s, which runs it: %s", name, e.src(c))
				return
			}
		}
	}
}

// cd follows the script's directory for the write checks.
func (e *explainer) cd(operands []string) {
	var dirs []string
	for _, o := range operands {
		if o != "-P" && o != "-L" && o != "-e" && o != "--" {
			dirs = append(dirs, o)
		}
	}
	if len(dirs) != 1 || dirs[0] == "" || dirs[0] == "-" || strings.HasPrefix(dirs[0], "~") {
		e.cwd = ""
		return
	}
	d := dirs[0]
	switch {
	case path.IsAbs(d):
		e.cwd = path.Clean(d)
	case e.cwd != "":
		e.cwd = path.Join(e.cwd, d)
	}
}

var fdNames = map[string]string{"0": "stdin", "1": "stdout", "2": "stderr"}

var harmlessTargets = set("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/stdin")

// checkWrite marks a file operand or redirection target outside the
// working directory (or not known to be inside it).
func (e *explainer) checkWrite(verb string, w *syntax.Word) {
	if w == nil || e.wd == "" {
		return
	}
	p, fixed := fixedWord(w)
	if !fixed {
		e.mark("%s a path decided at run time, possibly outside the working directory: %s", verb, e.src(w))
		return
	}
	if harmlessTargets[p] || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/") {
		return
	}
	switch {
	case strings.HasPrefix(p, "~"):
		e.mark("%s outside the working directory: %s (in a home directory)", verb, clean(p))
		return
	case !path.IsAbs(p) && e.cwd == "":
		e.mark("%s %s relative to a directory decided at run time (after cd), possibly outside the working directory", verb, clean(p))
		return
	case !path.IsAbs(p):
		p = path.Join(e.cwd, p)
	default:
		p = path.Clean(p)
	}
	wd := path.Clean(e.wd)
	if p != wd && !strings.HasPrefix(p, strings.TrimSuffix(wd, "/")+"/") {
		e.mark("%s outside the working directory: %s", verb, clean(p))
	}
}

// words renders a list of words.
func (e *explainer) words(ws []*syntax.Word) string {
	var out []string
	for _, w := range ws {
		out = append(out, e.src(w))
	}
	return strings.Join(out, " ")
}

// secretVariables lists the environment variables the request's secrets
// set (the names after renaming), from the device's delivery lines
// ("VAR -> env NAME").
func secretVariables(d *invocationView) []string {
	var names []string
	for _, lines := range d.Delivery {
		for _, l := range lines {
			if _, name, ok := strings.Cut(l, " -> env "); ok {
				names = append(names, name)
			}
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// explainInvocation returns what the person approving is shown about the
// script an invocation runs: a heading, the commands (two spaces per level
// of nesting), then one "! " line per mark; for a script that does not
// parse, the parser's error and the raw text. nil when no shell script
// runs. Every client-chosen character is escaped.
func explainInvocation(d *invocationView) (lines []string) {
	// It runs inside serve on what a client sent: a parser bug must not
	// take the device down (the fuzz test has found none).
	defer func() {
		if p := recover(); p != nil {
			lines = []string{"not explained: the parser failed on this script (" + clean(fmt.Sprint(p)) + ")"}
		}
	}()
	s, note := findScript(d)
	if s == nil {
		if note == "" {
			return nil
		}
		return []string{"not explained: " + note}
	}
	x := explainScript(s, d.WorkingDirectory, secretVariables(d))
	if x.parseErr != "" {
		out := []string{x.heading + ": does not parse (" + x.parseErr + "); the script as sent:"}
		for _, l := range strings.Split(strings.TrimSuffix(s.text, "\n"), "\n") {
			out = append(out, "| "+cleanTabs(l))
		}
		return out
	}
	out := append([]string{x.heading + ":"}, x.lines...)
	for _, m := range x.marks {
		out = append(out, "! "+m)
	}
	return out
}

// cleanTabs is clean for one line of a script block, keeping tabs.
func cleanTabs(line string) string {
	parts := strings.Split(line, "\t")
	for i, p := range parts {
		parts[i] = clean(p)
	}
	return strings.Join(parts, "\t")
}
