// The walk over a parsed script that explain.go starts: one explainer per
// script, which prints each command in the order it runs with its
// connector, redirections, assignments and nesting, and adds a "!" line for
// each thing a reviewer must not miss.

package main

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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

// words renders a list of words.
func (e *explainer) words(ws []*syntax.Word) string {
	var out []string
	for _, w := range ws {
		out = append(out, e.src(w))
	}
	return strings.Join(out, " ")
}
