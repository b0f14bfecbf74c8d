// One simple command (the agent gate's rule: matched on the program plus
// its arguments): its name, then its table's match (match.go), then what
// the matched lines say it does, applied to the walk: code it runs
// (followed when it is shell), inner commands (followed), files it writes
// and reads, the network and what is sent there, whose code runs, and the
// shell's own builtins where the shell's semantics decide (cd, read, set).
package commands

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// simpleCmd is one simple command being analysed.
type simpleCmd struct {
	words  []*syntax.Word // nil for a command given as argv
	ws     []word
	taints []string // secret data each word carries
	named  []string // secret variables the words name
	line   int
	depth  int
	in     flow
	text   string
	direct bool // the invocation's own argv: the executable is bound by its hash
	// module: the command is a module its interpreter (this program)
	// imports by name (python -m), not a program PATH chooses.
	module string
	// replaced is the string a wrapper replaces in every word of the
	// command it runs (xargs -I R, find -exec's {}): code that holds it is
	// built at run time from what the wrapper reads.
	replaced string
	// passed: the command's own assignments NAME="$SECRET" (NAME ->
	// SECRET); wordNamed: the secret variables its words (not those
	// assignments) name.
	passed    map[string]string
	wordNamed []string
}

// systemDirs are where an absolute command name is the program of that
// name (as far as a table can tell).
var systemDirs = map[string]bool{"/bin": true, "/usr/bin": true, "/usr/local/bin": true, "/opt/homebrew/bin": true,
	"/sbin": true, "/usr/sbin": true, "/usr/local/sbin": true}

// builtins run inside the shell, not as programs of their own: PATH does
// not choose them and they inherit nothing.
var builtins = setOf(":", ".", "[", "alias", "break", "builtin", "cd", "command", "continue", "echo", "eval", "exec", "exit",
	"export", "false", "getopts", "hash", "jobs", "let", "local", "printf", "pwd", "read", "readonly", "return", "set", "shift",
	"source", "test", "times", "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "wait", "declare", "typeset",
	"mapfile", "readarray", "pushd", "popd", "dirs", "shopt", "compgen", "enable", "fc", "bind", "caller", "kill", "[[")

func setOf(names ...string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names {
		m[n] = true
	}
	return m
}

// call explains a simple command; it returns the secret data its output
// can carry.
func (w *walker) call(c *syntax.CallExpr, depth int, prefix, tail string, in flow) string {
	line := w.lineOf(c.Pos())
	if len(c.Args) == 0 {
		var as []string
		for _, a := range c.Assigns {
			as = append(as, w.show(a))
		}
		w.emit(depth, prefix+"set shell variable "+clip(strings.Join(as, " "))+tail)
		w.computed(line, "an assignment")
		for _, a := range c.Assigns {
			w.assign(a, depth, line, false)
		}
		return ""
	}
	args, spliced := w.spliceAt(c.Args)
	if !spliced && !w.atSet && w.fwdDef > 0 && hasQuotedAt(c.Args) {
		// in a function that runs its arguments: judged at each call
		w.emit(depth, prefix+w.show(c)+tail+"  (\"$@\" is the words of each call: followed there)")
		return ""
	}
	if len(args) == 0 {
		return "" // "$@" of a call with no words: nothing runs
	}
	text := w.show(c)
	if spliced {
		text = w.showWords(c, args)
	}
	w.emit(depth, w.lineText(prefix, text, tail))
	saved := w.callNamed
	w.callNamed = nil
	var passed map[string]string
	for _, a := range c.Assigns {
		w.computed(line, "an assignment")
		w.assign(a, depth, line, true)
		// NAME="$SECRET" cmd: the secret is in cmd's environment as NAME
		if a.Name != nil && a.Value != nil && a.Index == nil && a.Array == nil && !a.Append {
			if v := wholeVar(w.show(a.Value)); v != "" && w.secretVars[v] {
				if passed == nil {
					passed = map[string]string{}
				}
				passed[a.Name.Value] = v
			}
		}
	}
	assignNamed := len(w.callNamed)
	n := len(args)
	cmd := &simpleCmd{words: args, line: line, depth: depth, in: in, text: text, ws: make([]word, n), taints: make([]string, n), passed: passed}
	for k, wd := range args {
		w.zshGlob(wd, line)
		v, fixed := w.value(wd)
		p := v
		if !fixed {
			p = literalPrefix(wd)
		}
		cmd.ws[k] = word{val: v, fixed: fixed, prefix: p, shown: w.show(wd)}
		if !fixed {
			cmd.ws[k].atDir = w.atWorkDir(wd)
		}
		cmd.taints[k] = cmp.Or(w.word(wd, depth, line), w.skeletonChecks(wd, line))
	}
	cmd.named = w.callNamed
	cmd.wordNamed = w.callNamed[assignNamed:]
	w.callNamed = saved
	for _, nm := range cmd.named {
		w.named[nm] = append(w.named[nm], progRef{firstWord(cmd), line})
	}
	if _, why := w.plainName(args[0]); why != "" && w.how[strings.Trim(w.show(args[0]), `"`)] != "built" {
		w.reason(SeverityRunsUnseen, line, false, "%s", why)
		w.program("(a command decided at run time)", line, in.stdin)
		w.unbound.add("a command computed when the script runs", "its name is an expansion, so no rule can say which program it is", "")
		w.command(line, depth, text, "", "", ClassOther)
		return cmp.Or(firstTaint(cmd.taints), in.taint)
	}
	return w.runAt(cmd, 0, n)
}

// zshGlob checks a word zsh expands as a glob (a command's, a for
// loop's, an array's): a qualifier in it may run code.
func (w *walker) zshGlob(wd *syntax.Word, line int) {
	if wd != nil && w.lang == syntax.LangZsh && zshQualifierRuns(w.show(wd)) {
		w.reason(SeverityRunsUnseen, line, false, "the zsh glob qualifier in %s runs code for each file it matches", w.show(wd))
	}
}

// zshQualifierRuns: a zsh glob qualifier (e:...:) or (+cmd) evaluates
// shell code for each file. The string of e may be delimited by any
// character, or a bracket pair (zshexpn(1), Glob Qualifiers: e{...},
// e,...,); a group with | is an alternation, not qualifiers.
func zshQualifierRuns(s string) bool {
	for i := strings.IndexByte(s, '('); i >= 0 && i+1 < len(s); {
		q := s[i+1:]
		end := strings.IndexByte(q, ')')
		if end < 0 {
			end = len(q)
		}
		if strings.ContainsAny(q[:end], "+") || qualifierE(q[:end]) {
			return true
		}
		next := strings.IndexByte(q, '(')
		if next < 0 {
			return false
		}
		i += next + 1
	}
	return false
}

// qualifierE: a qualifier list with e followed by a delimiter (not a
// letter or a digit), the start of code e runs.
func qualifierE(q string) bool {
	if strings.Contains(unquoted(q), "|") {
		return false // (a|b): an alternation of patterns
	}
	for j := 0; j+1 < len(q); j++ {
		if c := q[j+1]; q[j] == 'e' && !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return true
		}
	}
	return false
}

// unquoted is s without its '...' and "..." parts.
func unquoted(s string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
		case c == '\'' || c == '"':
			quote = c
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func firstWord(c *simpleCmd) string {
	if len(c.ws) > 0 && c.ws[0].fixed {
		return c.ws[0].val
	}
	return "(a command decided at run time)"
}

func firstTaint(ts []string) string {
	for _, t := range ts {
		if t != "" {
			return t
		}
	}
	return ""
}

// stdinTaint is the secret data a command reading its input gets.
func (w *walker) stdinTaint(in flow) string {
	if in.taint != "" {
		return in.taint
	}
	if in.stdin && len(w.stdinSecrets) > 0 {
		if w.stdinLabel == "" { // built once: most commands read standard input
			w.stdinLabel = "secret " + strings.Join(w.stdinSecrets, ", ") + " (standard input)"
		}
		return w.stdinLabel
	}
	return ""
}

// command records one command for Analysis.Commands (finish joins the
// full chunks and the last).
func (w *walker) command(line, depth int, text, program, form string, class Class) {
	if w.silent > 0 {
		return
	}
	if n := len(w.a.Commands); n == cap(w.a.Commands) && n >= 256 {
		// A long script's commands go in chunks, joined once: growing
		// one list copied its thousands of commands over and over.
		w.commandChunks = append(w.commandChunks, w.a.Commands)
		w.a.Commands = make([]Command, 0, 256)
	}
	w.a.Commands = append(w.a.Commands, Command{Line: line, Depth: depth, Text: text, Program: program, Form: form, Class: class})
}

// runAt explains the command whose name is word i (words i..end-1): the
// command itself, or one a wrapper (env, sudo, xargs, find -exec ...)
// runs.
func (w *walker) runAt(c *simpleCmd, i, end int) string {
	line := c.line
	if i >= end {
		return ""
	}
	out := cmp.Or(firstTaint(c.taints[i:end]), w.stdinTaint(c.in))
	nw := c.ws[i]
	if p := strings.Trim(nw.shown, `"`); !nw.fixed && w.how[p] == "built" {
		// "$tmp/app" that go build -o "$tmp/app" wrote earlier
		w.program(p, line, c.in.stdin)
		w.command(line, c.depth, c.text, "", "", ClassOther)
		w.runsLine(line, "%s, built at line %d from the project's code, runs: the device does not see what it does", w.display(p), w.written[p])
		return out
	}
	if !nw.fixed {
		w.reason(SeverityRunsUnseen, line, false, "runs a command whose name is decided at run time: %s", nw.shown)
		w.program("(a command decided at run time)", line, c.in.stdin)
		w.unbound.add("a command computed when the script runs", "its name is an expansion, so no rule can say which program it is", "")
		w.command(line, c.depth, c.text, "", "", ClassOther)
		return out
	}
	raw := nw.val
	if i > 0 && (!plainChars(raw) || raw == "") {
		w.reason(SeverityRunsUnseen, line, false, "runs a command whose name %s is not a plain name", w.display(raw))
		w.command(line, c.depth, c.text, "", "", ClassOther)
		return out
	}
	name := raw
	if strings.Contains(raw, "/") && strings.ContainsAny(raw, ":@") && !c.direct {
		w.reason(SeverityRunsUnseen, line, false, "runs %s, which is not a plain path (a package or a URL, fetched at run time)", w.display(raw))
		w.command(line, c.depth, c.text, "", "", ClassOther)
		return out
	}
	if strings.Contains(raw, "/") {
		if !c.direct {
			safer := ""
			if !strings.HasPrefix(raw, "/") {
				safer = "run " + raw + " as the command itself: the request then carries its hash"
			}
			w.unbound.add(raw, "run by its path: its contents are not bound", safer)
		}
		if systemDirs[path.Dir(raw)] {
			name = path.Base(raw)
		} else {
			return w.projectProgram(c, raw, out, i, end)
		}
	} else if c.module != "" {
		w.unbound.add("module "+name, c.module+" imports it by name from sys.path, the working directory first unless -P or -I (its "+name+".py or "+name+"/ there comes before the installed one): which file that is, and its contents, are not bound", "")
	} else if !builtins[name] && (w.funcs[name] == nil || i > 0) && !c.direct && !w.viaPathSeen[name] {
		w.viaPathSeen[name] = true
		w.unbound.viaPath = true
		w.unbound.add(name+" via PATH", "run by its name, and PATH (inherited, not sent) chooses which program that is",
			"write its absolute path instead (as 'command -v "+name+"' prints it)")
	}
	// A wrapper (env, xargs, timeout, find -exec, exec) runs a program:
	// only the shell itself calls its functions.
	if body := w.funcs[name]; body != nil && i == 0 {
		w.program(name+" (a function of the script)", line, c.in.stdin)
		w.command(line, c.depth, c.text, "", "function "+name, ClassOther)
		w.functionCall(c, name, body, i, end)
		return out
	}
	w.program(name, line, c.in.stdin)
	if _, isShell := shellLangs[name]; isShell {
		w.command(line, c.depth, c.text, name, name, ClassOther)
		w.shell(c, name, i, end)
		return out
	}
	p := w.cat.lookup(name)
	if zp := w.cat.byName["zsh-"+name]; zp != nil && w.lang == syntax.LangZsh && raw == name {
		p = zp // zsh's own builtin (print, setopt), not a program of that name
	}
	if p == nil {
		w.reason(SeverityRunsUnseen, line, false, "%s is not a command the device knows, so it cannot say what it does with the secrets or the network", w.display(name))
		w.command(line, c.depth, c.text, "", "", ClassOther)
		return out
	}
	m := w.matchCached(p, c.ws[i+1:end])
	// apply adds standard input's secret data when the command reads it
	return cmp.Or(w.apply(c, i, end, name, p, m), firstTaint(c.taints[i:end]))
}

// matchCached matches a command, remembering the match of the same words
// for the rest of the analysis (a match is not changed once made): long
// scripts repeat their commands. Words are compared whole (value, whether
// fixed, literal prefix, and the text shown), so a remembered match is the
// one matchCommand would make.
func (w *walker) matchCached(p *program, words []word) *match {
	if len(words) > 16 {
		return matchCommand(p, words)
	}
	var h maphash.Hash
	h.SetSeed(w.seed)
	h.WriteString(p.names[0])
	for _, wd := range words {
		h.WriteByte(0)
		h.WriteString(wd.val)
		if !wd.fixed {
			h.WriteByte(1)
			h.WriteString(wd.prefix)
			h.WriteString(wd.shown)
		}
	}
	key := h.Sum64()
	c, ok := w.matches[key]
	if ok && c.prog == p && slices.Equal(c.words, words) {
		return c.m
	}
	m := matchCommand(p, words)
	if !ok && len(w.matches) < 4096 { // the first words of a hash stay
		// The command's own words, not a copy: nothing changes a word
		// once call (or directCmd) has read it.
		w.matches[key] = cachedMatch{prog: p, words: words[:len(words):len(words)], m: m}
	}
	return m
}

// cachedMatch is one remembered match.
type cachedMatch struct {
	prog  *program
	words []word
	m     *match
}

// lookup finds a program's table by its name, and a versioned name by its
// stem (python3.12 by python3, then python).
func (c *catalog) lookup(name string) *program {
	if p := c.byName[name]; p != nil {
		return p
	}
	stem := strings.TrimRight(name, "0123456789.")
	if stem != name && stem != "" {
		if p := c.byName[stem]; p != nil {
			return p
		}
		if strings.HasSuffix(name, "3") || strings.Contains(name, "3.") {
			if p := c.byName[stem+"3"]; p != nil {
				return p
			}
		}
	}
	if v := strings.TrimRight(name, "0123456789"); v != name && strings.HasSuffix(v, ".") {
		return c.byName[strings.TrimSuffix(v, ".")]
	}
	return nil
}

// projectProgram: a program run by its path outside the system
// directories is the project's own code (./bin/app) or a file the script
// wrote (not understood).
func (w *walker) projectProgram(c *simpleCmd, raw, out string, i, end int) string {
	line := c.line
	w.program(raw, line, c.in.stdin)
	w.command(line, c.depth, c.text, "", "", ClassOther)
	if w.followWritten(raw, "", c) {
		return out
	}
	if how, l := w.wroteAt(raw); how == "built" {
		w.runsLine(line, "%s, built at line %d from the project's code, runs: the device does not see what it does", w.display(raw), l)
		return out
	} else if how != "" {
		w.reason(SeverityRunsUnseen, line, true, "runs %s, a file the script %s at line %d, whose content the device does not see (write, then run)", w.display(raw), how, l)
		return out
	}
	if w.extracted > 0 {
		w.reason(SeverityRunsUnseen, line, false, "runs %s after the script unpacked a download at line %d (it may come from it)", w.display(raw), w.extracted)
		return out
	}
	if w.afterPatch(w.display(raw), nil, true, line) {
		return out
	}
	if path.IsAbs(raw) && w.wd != "" && !strings.HasPrefix(path.Clean(raw), strings.TrimSuffix(path.Clean(w.wd), "/")+"/") ||
		!path.IsAbs(raw) && w.outsideWorkDir(raw) {
		// ../../tmp/x, or ./x after cd /tmp: the path leaves the
		// working directory, wherever it is written.
		w.reason(SeverityRunsUnseen, line, false, "runs %s, a program outside the working directory that no table describes", w.display(raw))
		return out
	}
	if inGitDir(w.resolve(raw)) {
		// No checkout writes there: a file in .git is no commit's, so
		// not the project's code (git's own hooks are run by git).
		w.reason(SeverityRunsUnseen, line, false, "runs %s, a file inside the repository's .git directory, which no commit holds: not the project's code", w.display(raw))
		return out
	}
	w.likeKnownProgram(c, raw, i, end)
	w.runsLine(line, "runs the project's code: %s (a program of the project, run by its path: the device does not see what it does)", w.display(raw))
	return out
}

// homeWord: a word naming the home directory or a path under it.
func homeWord(shown string) bool {
	s := strings.TrimPrefix(shown, `"`)
	for _, h := range []string{"~", "$HOME", "${HOME}"} {
		if s == h || strings.HasPrefix(s, h+"/") || strings.HasPrefix(s, h+`"`) {
			return true
		}
	}
	return false
}

// inGitDir: a path inside a repository's .git directory.
func inGitDir(p string) bool {
	return p == ".git" || strings.HasPrefix(p, ".git/") || strings.Contains(p, "/.git/")
}

// likeKnownProgram: a program of the project named as a program a table
// describes (.venv/bin/python, node_modules/.bin/jest, ./gradlew) is most
// likely that program, installed in the project: it reads the files that
// program reads as code, so one the script wrote earlier is write, then
// run, as it would be for the program by its name. The table's files for
// the form these words match, else the program's own.
func (w *walker) likeKnownProgram(c *simpleCmd, raw string, i, end int) {
	p := w.cat.lookup(path.Base(raw))
	if p == nil {
		return
	}
	files := p.eff.readsCode
	if m := w.matchCached(p, c.ws[i+1:end]); m.problem == "" {
		files = m.eff.readsCode
	}
	for _, f := range files {
		if wl, wf := w.writtenMatch(f); wl > 0 {
			w.reason(SeverityRunsUnseen, c.line, false, "%s, a program of the project named as %s, runs code from %s, which the script wrote at line %d (write, then run)", w.display(raw), p.names[0], w.display(wf), wl)
			return
		}
	}
}

// functionCall: a function of the script runs its body with the call's
// words as $1, $2, ...: when they carry secret data, the body is walked
// again, silently, with those parameters secret.
func (w *walker) functionCall(c *simpleCmd, name string, body *syntax.Stmt, i, end int) {
	if _, fwd := w.forwarding[name]; fwd && !w.inFunc[name] && w.silent <= 2 {
		w.forwardCall(c, name, body, i, end)
		return
	}
	taint := firstTaint(c.taints[i+1 : end])
	if taint == "" && len(c.named) == 0 || w.inFunc[name] || w.silent > 2 {
		return
	}
	savedSet := w.atSet
	w.atSet = false
	defer func() { w.atSet = savedSet }()
	defer w.callArguments(c, i, end)()
	w.inFunc[name] = true
	w.silent++
	savedLine := w.lineHere
	w.lineHere = c.line
	w.stmt(body, c.depth+1, "", c.in)
	w.lineHere = savedLine
	w.silent--
	delete(w.inFunc, name)
}

// callArguments makes a function call's words its positional parameters
// for the walk of its body: a word carrying secret data makes $N, $* and
// $@ carry it. The returned function puts the caller's back.
func (w *walker) callArguments(c *simpleCmd, i, end int) (restore func()) {
	saved := map[string]bool{}
	for _, p := range []string{"*", "@", "1", "2", "3", "4", "5", "6", "7", "8", "9"} {
		saved[p] = w.secretVars[p]
	}
	for k := i + 1; k < end; k++ {
		if c.taints[k] != "" {
			w.taintVar(fmt.Sprint(k-i), c.taints[k])
			w.taintVar("*", c.taints[k])
			w.taintVar("@", c.taints[k])
		}
	}
	return func() {
		for p, v := range saved {
			w.secretVars[p] = v
		}
	}
}

// shell explains a shell run by the script: its -c text is followed; a
// script file, or code read from a pipe, is not seen (a here-document is,
// whole).
func (w *walker) shell(c *simpleCmd, name string, i, end int) {
	sh := ShellOf(name)
	vals := fixedVals(c.ws[i+1 : end])
	for k := i + 1; k < end; k++ {
		if !c.ws[k].fixed && strings.HasPrefix(c.ws[k].prefix, "-") {
			w.reason(SeverityRunsUnseen, c.line, false, "%s: an option decided at run time (%s)", name, c.ws[k].shown)
			return
		}
	}
	if ok, why := noExec(sh, c.ws[i+1:end]); ok {
		// bash -n script.sh: a syntax check, nothing runs
		return
	} else if why != "" {
		w.reason(SeverityRunsUnseen, c.line, false, "%s", why)
		return
	}
	s, note, stdin := shellArgs(sh, vals)
	defer w.shellStartup(sh, vals, c.line) // listed after what the shell runs
	if s != nil {
		k := i + 1 + len(s.Options)
		for k < end && !(c.ws[k].fixed && c.ws[k].val == s.Text) {
			k++
		}
		if k < end && !c.ws[k].fixed || k >= end {
			w.reason(SeverityRunsUnseen, c.line, false, "%s -c runs code built at run time: %s", name, c.text)
			return
		}
		if c.replaced != "" && strings.Contains(s.Text, c.replaced) {
			w.reason(SeverityRunsUnseen, c.line, false, "%s -c runs code built at run time: each %s in its script is replaced by what the command before it reads (a file name or an input line), which then runs as code", name, c.replaced)
			return
		}
		w.nested(s.Text, c.depth, c.line, "whose script ("+sh+" -c) runs:", s.Lang, flow{stdin: c.in.stdin, taint: c.in.taint, piped: c.in.piped, outAway: c.in.outAway})
		return
	}
	if stdin {
		w.stdinProgram(c, name, "sh")
		return
	}
	for _, v := range vals {
		if !strings.HasPrefix(v, "-") {
			if w.followWritten(v, sh, c) {
				return
			}
			if how, l := w.wroteAt(v); how != "" {
				w.reason(SeverityRunsUnseen, c.line, true, "%s runs the script file %s, which the script %s at line %d (write, then run)", name, w.display(v), how, l)
				return
			}
			if w.extracted > 0 {
				w.reason(SeverityRunsUnseen, c.line, false, "%s runs %s after the script unpacked a download at line %d (it may come from it)", name, w.display(v), w.extracted)
				return
			}
			if w.afterPatch(name, []string{v}, true, c.line) {
				return
			}
			w.unbound.add(v, "the script file "+sh+" reads: the request carries its name, not its contents",
				"run "+scriptCommand(v)+" itself (executable, with a #! line): the request then carries its hash")
			break
		}
	}
	w.reason(SeverityRunsUnseen, c.line, false, "%s", note)
}

// scriptCommand is how a script file is run as a command.
func scriptCommand(file string) string {
	if strings.Contains(file, "/") {
		return file
	}
	return "./" + file
}

// stdinProgram: a program that reads its own program (in lang) from
// standard input. A fixed here-document is shown whole and followed when
// it is shell; anything else is code the device does not see.
func (w *walker) stdinProgram(c *simpleCmd, name, lang string) {
	w.unbound.add("the program it reads on standard input", name+" reads its program from standard input, which the request does not carry", "")
	if c.in.hdoc != nil {
		body, fixed := hdocText(c.in.hdoc)
		if !fixed {
			w.reason(SeverityRunsUnseen, c.line, c.in.taint != "", "%s runs a here-document with expansions as %s code", name, lang)
			return
		}
		if l, ok := shellLangs[lang]; ok {
			// Followed command by command: the walk shows every one, and
			// if the line cap cuts it the script is not understood.
			w.seen[fmt.Sprintf("hdoc%p", c.in.hdoc)] = -1
			before := w.a.Truncated
			w.nested(body, c.depth, c.line, "whose script (the here-document) runs:", l, flow{})
			if before == "" && w.a.Truncated != "" && w.silent == 0 {
				w.reason(SeverityRunsUnseen, c.line, false, "the here-document %s runs as code is longer than the device shows", name)
			}
			return
		}
		w.emit(c.depth+1, name+" runs this "+lang+" code (the here-document):")
		w.heredocWhole(c.in.hdoc, c.depth+1, c.line, name)
		if scan, ok := langScanners[lang]; ok {
			w.scanned(c, name, nil, scan, body, c.line)
			return
		}
		w.mark(SeverityRunsUnseen, c.line, false, "%s runs %s code from a here-document (shown above), which the device does not follow", name, lang)
		w.codeLoads(name, lang, body, c.line)
		return
	}
	switch {
	case c.in.piped == "here-string":
		w.reason(SeverityRunsUnseen, c.line, c.in.taint != "", "%s runs the %s code of a here-string, which the device does not follow", name, lang)
	case c.in.piped != "":
		w.reason(SeverityRunsUnseen, c.line, c.in.taint != "", "%s runs the code piped into it (from %s)", name, c.in.piped)
	case c.in.stdin:
		w.reason(SeverityRunsUnseen, c.line, false, "%s reads its commands from standard input, which the device does not see", name)
	default:
		w.reason(SeverityRunsUnseen, c.line, false, "%s reads its program from a redirected input, which the device does not see", name)
	}
}

// shellStartup names the files a shell reads before its script, as the
// inherited environment and the options pick them.
func (w *walker) shellStartup(sh string, opts []string, line int) {
	interactive, login := false, false
	// bash --norc and --noprofile skip ~/.bashrc and the profile files
	// (bash(1) INVOCATION); zsh -f (--no-rcs) reads /etc/zshenv alone
	// (zsh(1) STARTUP/SHUTDOWN FILES, NO_RCS).
	noRC, noProfile, noRCS, command := false, false, false, false
options:
	for i, o := range opts {
		switch {
		case o == "--login":
			login = true
		case o == "--norc":
			noRC = true
		case o == "--noprofile":
			noProfile = true
		case o == "--no-rcs":
			noRCS = true
		case o == "--rcfile" || o == "--init-file":
			if i+1 < len(opts) {
				w.unbound.add(opts[i+1], sh+" reads it first ("+o+"); its contents are not bound", "")
				if interactive || slices.Contains(opts, "-i") {
					w.reason(SeverityRunsUnseen, 0, false, "%s %s %s runs that file first, which the device does not see", sh, o, w.display(opts[i+1]))
				}
			}
		case len(o) > 1 && o[0] == '-' && o[1] != '-':
			interactive = interactive || strings.ContainsRune(o, 'i')
			login = login || strings.ContainsRune(o, 'l')
			noRCS = noRCS || sh == "zsh" && strings.ContainsRune(o, 'f')
			command = command || strings.ContainsRune(o, 'c')
			if strings.ContainsAny(o, "oO") {
				continue options // its value is the next word, not the script
			}
		case i > 0 && (opts[i-1] == "-o" || opts[i-1] == "-O" || opts[i-1] == "--rcfile" || opts[i-1] == "--init-file"):
		case !strings.HasPrefix(o, "-") && !strings.HasPrefix(o, "+"):
			break options
		}
	}
	w.startupWritten(sh, interactive, login, line)
	switch sh {
	case "bash":
		// bash's run_startup_files: a non-interactive, non-login bash
		// with -c reads ~/.bashrc when it finds itself started by sshd
		// (SSH_CLIENT set, SHLVL below 2, on systems that build bash with
		// SSH_SOURCE_BASHRC, Debian's among them); a script file never.
		switch {
		case interactive && !login && !noRC:
			w.unbound.add("~/.bashrc", "an interactive bash reads it first", "")
		case login && !noProfile:
			w.unbound.add("~/.bashrc", "a login bash runs it when a profile file sources it (Debian's ~/.profile does)", "")
		case !interactive && !login && !noRC && command:
			w.unbound.add("~/.bashrc", "bash reads it first when sshd is its parent (Debian and others build bash so), which the request does not say", "")
		}
		if !interactive {
			w.unbound.add("BASH_ENV", "inherited, not sent: a non-interactive bash first runs the file it names", "")
		}
		if login && !noProfile {
			w.unbound.add("/etc/profile", "a login bash reads it first", "")
			w.unbound.add("~/.bash_profile", "a login bash reads the first of ~/.bash_profile, ~/.bash_login and ~/.profile", "")
			w.unbound.add("~/.bash_login", "a login bash reads it when ~/.bash_profile is absent", "")
			w.unbound.add("~/.profile", "a login bash reads it when neither ~/.bash_profile nor ~/.bash_login exists", "")
		}
	case "zsh":
		w.unbound.add("/etc/zshenv", "zsh reads it first, whatever its options (/etc/zsh/zshenv on Debian)", "")
		if noRCS {
			break
		}
		w.unbound.add("~/.zshenv", "zsh reads it next (ZDOTDIR, inherited, may move it)", "")
		if login {
			w.unbound.add("/etc/zprofile and /etc/zlogin", "a login zsh reads them (/etc/zsh/ on Debian)", "")
			w.unbound.add("~/.zprofile and ~/.zlogin", "a login zsh reads them", "")
		}
		if interactive {
			w.unbound.add("/etc/zshrc", "an interactive zsh reads it (/etc/zsh/zshrc on Debian)", "")
			w.unbound.add("~/.zshrc", "an interactive zsh reads it (ZDOTDIR, inherited, may move it)", "")
		}
	default:
		if interactive {
			w.unbound.add("ENV", "inherited, not sent: an interactive "+sh+" first runs the file it names", "")
		}
		if login {
			w.unbound.add("/etc/profile and ~/.profile", "a login shell reads them first", "")
		}
	}
}

// apply turns a table match into the walk's findings. It returns the
// secret data the command's output can carry.
func (w *walker) apply(c *simpleCmd, i, end int, name string, p *program, m *match) string {
	line := c.line
	out := ""
	form, class := m.form, m.class
	var argv []string
	if len(m.checks) > 0 {
		argv = fixedVals(c.ws[i:end])
	}
	var patch intoDir      // the patch it applies, when the script wrote, downloaded or piped it
	var checkCode []string // files a check found the form runs as code
	var runsFiles []string // files a check found it runs, by its words (bun run FILE)
	noConfig := false      // a check found the program's files and variables do not apply
	for _, ch := range m.checks {
		r := checks[ch.name](checkInput{Program: name, Argv: argv, Words: ch.words, SecretEnv: w.envSecrets, OutAway: c.in.outAway})
		noConfig = noConfig || r.NoConfig
		if r.Code != nil {
			for _, f := range r.Code.files {
				checkCode = append(checkCode, f)
				w.unbound.add(f, name+" "+r.Code.why+"; its contents are not bound", "")
			}
		}
		if r.NotUnderstood != "" {
			w.reason(SeverityRunsUnseen, line, false, "%s: %s", name, r.NotUnderstood)
		}
		if r.Irreversible != "" && class != ClassIrreversible {
			class, form = ClassIrreversible, name+" "+r.Irreversible
		}
		if r.Mark != "" {
			sev := SeverityNote
			switch {
			case r.Runs:
				sev = SeverityRunsUnseen
			case r.Network:
				sev = SeverityNetwork
			case r.SecretMark:
				sev = SeverityExposes
			case r.WritesAway:
				sev = SeverityWrites
			}
			w.mark(sev, line, r.SecretMark && len(w.envSecrets) > 0, "%s: %s", c.text, r.Mark)
		}
		if r.Output != "" && len(w.envSecrets) > 0 {
			out = r.Output
		}
		if r.WritesUnnamed {
			patch = w.patchSource(c, m, line, "applied a patch")
		}
		if r.Writes != "" {
			w.checkWritePath("writes", r.Writes, true, w.display(r.Writes), line)
		}
		if r.RunsFile != "" {
			runsFiles = append(runsFiles, r.RunsFile)
		}
	}
	if m.problem != "" {
		w.reason(SeverityRunsUnseen, line, false, "%s", m.problem)
	}
	// An archive it may unpack in place, as a patch (extract.go), read
	// before its own writes are recorded.
	archive := w.patchSource(c, m, line, "unpacked an archive")
	w.command(line, c.depth, c.text, p.names[0], form, class)
	if modeOnly[p.names[0]] {
		defer w.keepScripts()()
	}
	net := m.eff.net
	if len(c.named) > 0 && !net {
		w.mark(SeverityExposes, line, true, "uses secret %s: %s", w.secretLabels(c.named), c.text)
	}
	if len(c.named) > 0 && m.eff.traces {
		w.mark(SeverityExposes, line, true, "%s prints what it sends, secret %s included, to standard error or its trace file, where a terminal, a log or a CI job's output shows it: %s", name, w.secretLabels(c.named), c.text)
	}
	readsCode, includes, readsEnv := m.eff.readsCode, m.eff.includes, m.eff.readsEnv
	if noConfig {
		readsCode, includes, readsEnv = nil, nil, nil
	}
	codeFiles := append(slices.Clone(readsCode), checkCode...)
	var codeArgs []string // the files its words name as code
	codeFiles = append(codeFiles, runsFiles...)
	codeArgs = append(codeArgs, runsFiles...)
	for _, f := range runsFiles {
		w.unbound.add(f, "the file "+name+" runs as code: the request carries its name, not its contents",
			"run "+scriptCommand(f)+" itself (executable, with a #! line): the request then carries its hash")
	}
	optCodeFile := false
	var hosts []string
	var connSecrets []connWord
	var sends []string
	sendsSecret := false
	readsStdin := m.eff.readsStdin || m.eff.sendsStdin
	readTaint := "" // secret data in the files it reads: what it writes carries it
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if v.k.name == "file" && v.w.fixed {
			readTaint = cmp.Or(readTaint, w.heldData(v.w.val))
		}
	}
	out = cmp.Or(out, w.inputTaint(c, name, m))
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		wi := i + 1 + v.idx
		switch v.k.name {
		case "code":
			out = cmp.Or(w.code(c, name, *v, m, wi), out)
		case "program":
			if !v.w.fixed {
				w.reason(SeverityRunsUnseen, line, false, "%s runs a program decided at run time (%s)", name, v.w.shown)
			} else {
				w.mark(SeverityRunsUnseen, line, false, "%s runs the program %s (%s)", name, w.display(v.w.val), cmpOr(v.opt, "an operand"))
				if how, l := w.wroteAt(v.w.val); how != "" {
					w.reason(SeverityRunsUnseen, line, true, "%s runs %s, which the script %s at line %d (write, then run)", name, w.display(v.w.val), how, l)
				}
			}
		case "dir":
			// find DIR -delete: what it deletes is under the directories
			// its operands name.
			if m.eff.deletes && v.opt == "" {
				w.checkWritePath("deletes", v.w.val, v.w.fixed, v.w.shown, line)
			}
		case "lib":
			w.mark(SeverityRunsUnseen, line, false, "%s loads the library or plugin %s (%s)", name, v.w.shown, cmpOr(v.opt, "an operand"))
		case "host":
			if !v.w.fixed {
				hosts = append(hosts, "(a destination decided at run time)")
			} else if h := hostOfHost(v.w.val); h != "" {
				hosts = append(hosts, h)
			}
		case "conninfo":
			// An attached value (--dbname="$URL") is shown with its option.
			shown := strings.TrimPrefix(strings.TrimPrefix(v.w.shown, cmpOr(v.opt, "\x00")), "=")
			if secret := wholeVar(shown); secret != "" && w.envSecrets[secret] != "" {
				connSecrets = append(connSecrets, connWord{secret, wi})
			} else if h := conninfoHost(v.w); h != "" {
				hosts = append(hosts, h)
			}
		case "url":
			if !v.w.fixed {
				if h, _ := hostOfURL(v.w.prefix); strings.Contains(v.w.prefix, "://") && h != "" && strings.ContainsAny(v.w.prefix[strings.Index(v.w.prefix, "://")+3:], "/?#") {
					hosts = append(hosts, h)
				} else {
					hosts = append(hosts, "(a destination decided at run time)")
				}
				break
			}
			if !strings.Contains(v.w.val, "://") {
				// A remote's name (git push origin) or user@host:path.
				if strings.Contains(v.w.val, ":") {
					hosts = append(hosts, hostOfHost(v.w.val))
				}
				break
			}
			h, userinfo := hostOfURL(v.w.val)
			if h != "" {
				hosts = append(hosts, h)
			}
			if strings.Contains(userinfo, ".") {
				w.mark(SeveritySecret, line, true, "the URL %s puts %s before an @: it connects to %s", w.display(v.w.val), w.display(userinfo), w.display(h))
			}
		case "out":
			switch {
			case !v.w.fixed:
				// go build -o "$tmp/app": run later by the same words
				if p := strings.Trim(v.w.shown, `"`); w.written[p] == 0 && (net || m.eff.runs || len(m.eff.readsCode) > 0) {
					how := "built"
					if net {
						how = "downloaded"
					}
					w.written[p], w.how[p] = line, how
				}
			case net:
				w.recordWrite(v.w.val, line, "downloaded")
				w.downloads[w.resolve(v.w.val)] = line
				w.downloadedInto(v.w.val, line)
			case m.eff.runs || len(m.eff.readsCode) > 0:
				w.recordWrite(v.w.val, line, "built")
			}
			if m.eff.meta {
				// chmod, chown, touch -d: the file's mode or times, not
				// its content (no write, then run).
				w.checkWritePath("changes the mode or times of", v.w.val, v.w.fixed, v.w.shown, line)
				break
			}
			if m.eff.deletes && !m.eff.writes && v.w.fixed {
				w.checkWritePath("deletes", v.w.val, true, v.w.shown, line) // rm, rmdir: no content written
				break
			}
			w.checkWritePath("writes", v.w.val, v.w.fixed, v.w.shown, line)
			if src := cmp.Or(readTaint, out); v.w.fixed && src != "" {
				w.taintFile(v.w.val, src)
			}
		case "file":
			if v.w.fixed {
				if t := w.readsFile(v.w.val, line); t != "" {
					out = cmp.Or(out, t)
				}
				if _, ok := w.downloads[w.resolve(v.w.val)]; ok && m.eff.writes && !net && !m.appliesPatch() {
					w.extracted = line // an archive from a download, unpacked
				}
				if m.eff.deletes {
					w.checkWritePath("deletes", v.w.val, true, v.w.shown, line)
				} else if m.eff.meta && v.opt == "" {
					w.checkWritePath("changes the mode or times of", v.w.val, true, v.w.shown, line)
				} else if m.optWrites && v.opt == "" && m.eff.reformats {
					// a formatter's rewrite changes no code: not write,
					// then run (still a write where it lands)
					w.checkWritePath("reformats", v.w.val, true, v.w.shown, line)
				} else if m.optWrites && v.opt == "" {
					w.checkWritePath("changes", v.w.val, true, v.w.shown, line)
				} else if m.eff.writes && v.opt == "" && !m.eff.reformats {
					w.recordChange(v.w.val, line)
				}
				if v.w.val == "-" || v.w.val == "/dev/stdin" {
					readsStdin = true
					if v.codeFile {
						w.stdinProgram(c, name, cmpOr(m.stdinLang, progLang(p)))
					}
				} else if how, l := w.wroteAt(v.w.val); v.codeFile && how == "downloaded" {
					w.reason(SeverityRunsUnseen, line, true, "%s runs %s, which the script downloaded at line %d (write, then run)", name, w.display(v.w.val), l)
				} else if v.codeFile && w.extracted > 0 && v.opt == "" {
					w.reason(SeverityRunsUnseen, line, false, "%s runs %s after the script unpacked a download at line %d (it may come from it)", name, w.display(v.w.val), w.extracted)
				} else if v.codeFile {
					codeFiles = append(codeFiles, v.w.val)
					codeArgs = append(codeArgs, v.w.val)
					optCodeFile = optCodeFile || v.opt != ""
					if v.opt == "" {
						w.unbound.add(v.w.val, "the file "+name+" runs as code: the request carries its name, not its contents",
							"run "+scriptCommand(v.w.val)+" itself (executable, with a #! line): the request then carries its hash")
					} else {
						w.unbound.add(v.w.val, name+" reads it as code ("+v.opt+"); its contents are not bound", "")
					}
				}
				if readTaint != "" && v.opt != "" && m.class != ClassReadOnly && !net && w.heldData(v.w.val) == "" {
					// tar -cf x.tgz ~/.ssh: the file an option names, of
					// a command that writes, may be written from it
					w.taintFile(v.w.val, readTaint)
				}
				if net {
					if what, secret := w.fileData(v.w.val); secret || v.eff != nil && v.eff.sendsFile && v.w.val != "-" && v.w.val != "/dev/stdin" {
						sends, sendsSecret = append(sends, what), sendsSecret || secret
					}
				}
			} else if m.eff.deletes {
				w.checkWritePath("deletes", "", false, v.w.shown, line)
			}
		case "assign":
			if v.w.fixed {
				k, val, _ := strings.Cut(v.w.val, "=")
				w.envAssign(k, val, true, line)
			} else {
				k, _, _ := strings.Cut(v.w.prefix, "=")
				w.envAssign(k, "", false, line)
			}
		}
		if net && v.w.fixed && (v.k.name == "word" || v.k.name == "any") {
			// curl -d @file, -F name=@file, -H @file, httpie's name=@file:
			// a file's content sent. A bare @word operand is a name (npm's
			// @scope/package), not a file.
			if at := strings.Index(v.w.val, "@"); at >= 0 && (at == 0 && v.opt != "" || at > 0 && v.w.val[at-1] == '=') && !strings.Contains(v.w.val[:at], "://") {
				f, _, _ := strings.Cut(v.w.val[at+1:], ";")
				if f == "-" || f == "/dev/stdin" {
					readsStdin = true
				} else if f != "" {
					what, secret := w.fileData(f)
					sends = append(sends, what)
					sendsSecret = sendsSecret || secret
				}
			}
		}
	}
	// A copier to a host (scp a.txt host:x, rsync -a dir/ host:x): the
	// local operands before the remote destination are what it sends.
	if net && m.eff.writes {
		var ops []valueUse
		for _, v := range m.values {
			if v.k.name == "url" && v.opt == "" {
				ops = append(ops, v)
			}
		}
		if n := len(ops); n >= 2 && ops[n-1].w.fixed && strings.Contains(ops[n-1].w.val, ":") {
			for _, v := range ops[:n-1] {
				if v.w.fixed && !strings.Contains(v.w.val, ":") {
					what, secret := w.fileData(v.w.val)
					sends, sendsSecret = append(sends, what), sendsSecret || secret
				}
			}
		}
	}
	// Files that run code: named in "whose code runs" and in the pin's
	// list; written earlier in the same script, the command is not
	// understood (write, then run).
	relocated := w.relocatedConfig(m.eff.readsCode)
	codeFiles = append(codeFiles, relocated...)
	// A configuration file the script put elsewhere than the home
	// directory and the working directory (DOCKER_CONFIG=/tmp/d,
	// KUBECONFIG=/tmp/kc) is not the user's nor the project's: what it
	// names (credential helpers, exec plugins, mirrors) runs unseen.
	for _, f := range relocated {
		if !strings.HasPrefix(f, "~") && w.outsideWorkDir(f) {
			w.mark(SeverityRunsUnseen, line, false, "%s reads %s in place of its own configuration, a file outside the working directory and the home directory, which can name programs it runs", name, w.display(f))
		}
	}
	files := codeFiles
	if !optCodeFile {
		dir := m.workdir()
		for _, f := range readsCode {
			if dir != "" && !path.IsAbs(f) && !strings.HasPrefix(f, "~") {
				f = path.Join(dir, f)
			}
			if !w.unbound.seen[f] {
				w.unbound.add(f, name+" reads it ("+form+"); what it runs is not bound", "")
			}
		}
	}
	if len(includes) > 0 {
		// The files its files name by a directive (make's include, ssh's
		// Include): read as if written in place, under names no table
		// knows.
		dirs := strings.Join(includes, ", ")
		w.unbound.add("files named by "+dirs, name+" reads the files its own files name by these lines, as part of them; their contents are not bound", "")
	}
	if len(readsEnv) > 0 {
		// One item for the program's variables, so that they do not
		// crowd its files out of the capped list.
		w.unbound.add(strings.Join(readsEnv, ", "), "inherited, not sent: "+name+" reads these variables, and they change what it runs or where it connects", "")
	}
	if (len(files) > 0 || m.eff.runs) && w.extracted > 0 {
		what := "the project's code"
		if len(files) > 0 {
			what = "code from " + strings.Join(uniq(files), ", ")
		}
		w.reason(SeverityRunsUnseen, line, false, "%s runs %s after the script unpacked a download at line %d (it may come from it)", name, what, w.extracted)
	} else {
		w.afterPatch(name, files, m.eff.runs, line)
	}
	if m.form == "git clone" && !slices.ContainsFunc(m.values, func(v valueUse) bool { return v.k.name == "out" }) {
		// git clone URL: the directory is the URL's last part, less .git
		// (git-clone(1): "the humanish part of the source repository")
		for _, v := range m.values {
			if v.k.name == "url" && v.w.fixed {
				if d := cloneDir(v.w.val); d != "" {
					w.downloadedInto(d, line)
				}
			}
		}
	}
	// make in a directory git clone fetched: its Makefile is the
	// download's, not the project's.
	var fetched []string
	fetchedAt := 0
	for _, f := range files {
		if dl := w.fromDownload(f, m.workdir()); dl > 0 {
			fetched, fetchedAt = append(fetched, f), dl
		}
	}
	if len(fetched) > 0 {
		w.reason(SeverityRunsUnseen, line, false, "%s runs code from %s, in a directory the script downloaded at line %d (write, then run)", name, w.display(strings.Join(uniq(fetched), ", ")), fetchedAt)
	}
	for _, f := range files {
		if slices.Contains(fetched, f) {
			continue
		}
		if wl, wf := w.writtenMatch(f); wl > 0 && w.inertConfig(wf) {
			w.mark(SeverityNote, line, false, "%s reads %s, which the script wrote at line %d with keys that run nothing", name, w.display(wf), wl)
			w.configSecrets(wf, name, line)
		} else if wl > 0 && !w.followMakefile(p.names[0], wf, c) {
			w.reason(SeverityRunsUnseen, line, false, "%s runs code from %s, which the script wrote at line %d (write, then run)", name, w.display(wf), wl)
		}
	}
	if p.names[0] == "git" {
		w.gitCommitsSecret(c, m, i, end)
	}
	if patch.line > 0 && w.patched.line == 0 {
		w.patched = patch
	}
	if p.names[0] == "git" {
		w.gitFetchedURL(m, line)
	}
	// A file it runs as code from outside the working directory is not
	// the project's (python3 /tmp/t.py, perl ~/x.pl).
	for _, f := range codeArgs {
		if w.outsideWorkDir(f) {
			w.mark(SeverityRunsUnseen, line, false, "%s runs %s, a file outside the working directory, as code the device does not see", name, w.display(f))
		}
	}
	if m.eff.runs {
		if len(files) > 0 {
			w.runsLine(line, "%s runs the project's code: %s", form, strings.Join(uniq(files), ", "))
		} else {
			w.runsLine(line, "%s runs code the device does not see", form)
		}
	}
	for _, f := range m.eff.writesFiles {
		w.recordChange(f, line)
	}
	w.intoDirectory(c, m, net, line, archive)
	if m.eff.loads {
		w.mark(SeverityRunsUnseen, line, false, "%s loads a library or plugin: %s", name, c.text)
	}
	if m.eff.envDump {
		w.envDump(line, name)
		out = "the whole environment"
	}
	// "-" as the operand of a line that runs code: the program is read
	// on standard input (python3 -, perl -).
	dashCode := slices.ContainsFunc(m.values, func(v valueUse) bool {
		return v.opt == "" && v.w.fixed && v.w.val == "-" && v.eff.runs && !v.codeFile
	})
	if m.stdinCode || dashCode {
		w.stdinProgram(c, name, cmpOr(m.stdinLang, progLang(p)))
		if len(m.eff.stdinEnv) > 0 {
			w.unbound.add(strings.Join(m.eff.stdinEnv, ", "), "inherited, not sent: "+name+" reads its program from standard input, and on a terminal it first runs the file named here", "")
		}
	}
	if net && m.eff.writes {
		hasOut := slices.ContainsFunc(m.values, func(v valueUse) bool { return v.k.name == "out" })
		for _, v := range m.values {
			if v.k.name == "url" && v.w.fixed && !hasOut {
				u := strings.TrimRight(strings.SplitN(strings.SplitN(v.w.val, "?", 2)[0], "#", 2)[0], "/")
				if i := strings.Index(u, "://"); i >= 0 && strings.Contains(u[i+3:], "/") {
					f := path.Base(u)
					w.recordWrite(f, line, "downloaded")
					w.downloads[w.resolve(f)] = line
				}
			}
		}
	}
	w.gitRemoteSet(m)
	hosts = append(hosts, w.gitRemoteHosts(m, line)...)
	if net {
		w.netUses = append(w.netUses, netUse{form: form, forSecret: m.eff.forSecret, readsStdin: readsStdin})
		if len(connSecrets) > 0 && len(hosts) == 0 {
			c = w.toItsServer(c, name, connSecrets)
		}
		out = cmp.Or(w.network(c, name, hosts, sends, sendsSecret, readsStdin, m.eff.sendsStdin, m.eff.forSecret, i, end), out)
	} else {
		for _, h := range hosts {
			w.hostMarks(h, line)
		}
	}
	for _, a := range m.argvs {
		from, to := i+1+a.from, i+1+a.to
		if a.remote != "" {
			w.remote(c, name, a.remote, from, to)
			continue
		}
		if a.opt != "" {
			w.emit(c.depth+1, name+" runs ("+a.opt+"):")
			inner := *c
			inner.depth, inner.in, inner.direct, inner.module = c.depth+1, flow{}, false, ""
			if a.module {
				inner.module = name
			}
			if to >= len(c.ws) || c.ws[to].val != "+" {
				// -exec CMD {} +: {} is replaced only as the last word.
				inner.replaced = replaceString(p.names[0], a.opt, nil)
			}
			if p.names[0] == "find" {
				inner.ws = findFoundWords(m, c.ws, from, to)
			}
			out = cmp.Or(w.runAt(&inner, from, to), out)
			continue
		}
		inner := *c
		inner.direct, inner.module = false, ""
		inner.replaced = replaceString(p.names[0], "", fixedVals(c.ws[i+1:from]))
		if m.eff.readsStdin && !m.eff.sendsStdin {
			// xargs reads the pipe into words: what it runs is not fed
			// the pipe; its secret data reaches it as words, the ones -I's
			// string stands in, or the words added after the last.
			if t := w.stdinTaint(c.in); t != "" && to > from {
				inner.taints = slices.Clone(c.taints)
				added := true
				for k := from; k < to; k++ {
					if inner.replaced != "" && strings.Contains(c.ws[k].shown, inner.replaced) {
						inner.taints[k], added = t, false
					}
				}
				if added && inner.replaced == "" {
					inner.taints[to-1] = t
				}
			}
			inner.in.piped, inner.in.file, inner.in.hdoc = "", "", nil
		}
		out = cmp.Or(w.runAt(&inner, from, to), out)
	}
	return cmp.Or(w.builtin(c, name, i, end), out)
}

// findFoundWords: in the command find -exec runs, a word that is {}
// alone is a file found under find's starting points, so it is read as a
// path there (find / -exec rm {} +: a file under /); a starting point
// decided at run time makes it one too. The starting points are the
// dir operands; with none, find starts at ".".
func findFoundWords(m *match, ws []word, from, to int) []word {
	var starts []word
	for _, v := range m.values {
		if v.k.name == "dir" && v.opt == "" {
			starts = append(starts, v.w)
		}
	}
	var start *word
	for k := range starts {
		if !starts[k].fixed || path.IsAbs(starts[k].val) || strings.HasPrefix(starts[k].val, "~") || strings.HasPrefix(starts[k].val, "..") {
			start = &starts[k]
			break
		}
	}
	if start == nil {
		return ws
	}
	out := slices.Clone(ws)
	for k := from; k < to && k < len(out); k++ {
		if out[k].fixed && out[k].val == "{}" {
			if start.fixed {
				out[k].val, out[k].prefix = path.Join(start.val, "{}"), path.Join(start.val, "{}")
			} else {
				out[k].fixed, out[k].val, out[k].prefix = false, "", ""
			}
			out[k].shown = "{} (a file under " + start.shown + ")"
		}
	}
	return out
}

// replaceString is the string a wrapper puts what it reads into, in every
// word of the command it runs: find's -exec, -execdir, -ok and -okdir
// replace {} wherever it occurs in a word, when ended by ";" (find(1));
// xargs -I R replaces R,
// and -i or --replace without a value {} (xargs(1)). opts are the
// wrapper's words before the command.
func replaceString(program, opt string, opts []string) string {
	switch program {
	case "find":
		if opt != "" {
			return "{}"
		}
	case "xargs":
		r := ""
		for k := 0; k < len(opts); k++ {
			switch o := opts[k]; {
			case o == "--":
				return r
			case o == "-I" && k+1 < len(opts):
				r = opts[k+1]
				k++
			case strings.HasPrefix(o, "-I"):
				r = o[2:]
			case o == "-i" || o == "--replace":
				r = "{}"
			case strings.HasPrefix(o, "--replace="):
				r = cmpOr(o[len("--replace="):], "{}")
			case strings.HasPrefix(o, "-i"):
				r = o[2:]
			}
		}
		return r
	}
	return ""
}

// inputTaint is the secret data on standard input when the command reads
// it: a command given input files does not (cp, cat FILE, base64 FILE,
// awk PROG FILE), unless one of them is "-".
func (w *walker) inputTaint(c *simpleCmd, name string, m *match) string {
	inputFiles, dash := false, false
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if v.k.name == "file" && v.w.fixed {
			dash = dash || v.w.val == "-" || v.w.val == "/dev/stdin"
			inputFiles = inputFiles || v.opt == ""
		}
	}
	if dash || !inputFiles && (m.eff.readsStdin || m.eff.sendsStdin || !noStdin[name]) {
		return w.stdinTaint(c.in)
	}
	return ""
}

// recordChange remembers a file a command changes (for write, then run).
func (w *walker) recordChange(f string, line int) {
	w.recordWrite(f, line, "changed")
}

// writtenMatch finds a file the script wrote that the pattern f (a
// reads-code entry: a name matched in any directory, a path relative to
// the working directory, ~/...) names; it returns its line and path.
func (w *walker) writtenMatch(f string) (int, string) {
	best, bestPath := 0, ""
	pat := f
	if strings.Contains(f, "/") && !strings.HasPrefix(f, "~") && !path.IsAbs(f) {
		pat = w.resolve(f)
	}
	for p, l := range w.written {
		ok := false
		if strings.Contains(f, "/") {
			ok, _ = path.Match(pat, p)
			if !ok && !path.IsAbs(f) && !strings.HasPrefix(f, "~") {
				ok = strings.HasSuffix(p, "/"+f) || p == f
			}
		} else {
			ok, _ = path.Match(f, path.Base(p))
		}
		if ok && (best == 0 || l < best) {
			best, bestPath = l, p
		}
	}
	return best, bestPath
}

// code handles a value of kind code:LANG: shell is followed; a language
// the device reads is scanned; any other is marked as code that runs.
func (w *walker) code(c *simpleCmd, name string, v valueUse, m *match, wi int) string {
	line := c.line
	lang := v.k.lang
	text, fixed := v.w.val, v.w.fixed
	if v.k.rest && v.opt == "" {
		// eval, watch: the operands joined by spaces are one script.
		var parts []string
		for _, u := range m.values {
			if u.k.String() == v.k.String() && u.opt == "" {
				if !u.w.fixed {
					fixed = false
				}
				parts = append(parts, u.w.val)
			}
		}
		if m.values[slices.IndexFunc(m.values, func(u valueUse) bool { return u.k.String() == v.k.String() && u.opt == "" })].idx != v.idx {
			return "" // joined at the first
		}
		text = strings.Join(parts, " ")
	}
	if !fixed || c.replaced != "" && strings.Contains(text, c.replaced) {
		w.reason(SeverityRunsUnseen, line, c.taints[wi] != "", "%s runs %s code built at run time: %s", name, langName(lang), c.text)
		return ""
	}
	if lang == "sh" {
		if name == "trap" && (text == "-" || text == "") {
			return ""
		}
		label := name + " runs, as shell code:"
		if name == "trap" {
			label = "trap runs, on a signal or at exit:"
		}
		w.nested(text, c.depth, line, label, w.lang, flow{stdin: c.in.stdin, taint: c.in.taint})
		return ""
	}
	if scan, ok := langScanners[lang]; ok {
		return w.scanned(c, name, m, scan, text, line)
	}
	secret := strings.Contains(text, "environ") || strings.Contains(text, "ENV") || strings.Contains(text, "getenv")
	w.mark(SeverityRunsUnseen, line, secret, "%s runs %s code given on its command line, which the device does not follow: %s", name, langName(lang), w.display(text))
	w.codeLoads(name, lang, text, line)
	return ""
}

// libraryCalls are how code of a language the device does not read loads
// a shared library or a native module by name (each language's manual:
// Ruby's Fiddle and FFI, Tcl's load, Node's process.dlopen and .node
// addons, PHP's dl and FFI, Lua's package.loadlib, R's dyn.load, Perl's
// DynaLoader).
var libraryCalls = map[string][]string{
	"ruby": {"Fiddle", "dlopen", "ffi_lib", ".so\"", ".so'"},
	"tcl":  {"load "},
	"node": {"process.dlopen", ".node\"", ".node'"},
	"js":   {"process.dlopen", "dlopen(", ".node\"", ".node'"},
	"php":  {"dl(", "FFI::"},
	"lua":  {"package.loadlib"},
	"r":    {"dyn.load"},
	"perl": {"DynaLoader", "dl_load_file"},
}

// codeLoads marks code the device does not read that names a way to load
// a library: the code's mark says it runs unseen; this one names the
// library-loading call, so a person reads it as such.
func (w *walker) codeLoads(name, lang, text string, line int) {
	for _, call := range libraryCalls[lang] {
		if strings.Contains(text, call) {
			w.mark(SeverityRunsUnseen, line, false, "%s's %s code loads a library or native module (%s)", name, langName(lang), strings.Trim(call, "\"'( "))
			return
		}
	}
}

// scanned applies what a scan of a language the device reads found (a
// program given as code or in a here-document): commands run, files
// written and read, hosts, the environment; it returns the secret data the
// program's output carries. m is nil for a here-document.
func (w *walker) scanned(c *simpleCmd, name string, m *match, scan func(string) (langFinding, bool), text string, line int) string {
	f, _ := scan(text)
	if f.runs != "" {
		w.reason(SeverityRunsUnseen, line, false, "%s: %s", f.runs, w.display(text))
	}
	for _, file := range f.writes {
		if file == "" || file == "/dev/stdout" || file == "/dev/stderr" {
			continue
		}
		w.checkWritePath("writes", file, true, w.display(file), line)
		if t := cmp.Or(inputTaintOf(w, c, name, m), firstTaint(c.taints)); t != "" {
			w.taintFile(file, t)
			w.mark(SeverityExposes, line, true, "%s writes its input, which carries secret data, to %s", name, w.display(file))
		}
	}
	if f.dynWrite {
		w.checkWritePath("writes", "", false, "a file the "+name+" program names at run time", line)
	}
	taint := ""
	for _, file := range f.reads {
		taint = cmp.Or(taint, w.heldData(file)) // its text is marked by the word's check
	}
	if len(f.hosts) > 0 {
		// what the program prints there: its input, its files, and the
		// environment when it reads it
		w.mark(SeverityNetwork, line, false, "the %s program connects to %s (a network special file, /inet/...)", name, strings.Join(uniq(f.hosts), ", "))
		w.network(c, name, f.hosts, nil, false, true, true, nil, 0, len(c.ws))
		if f.env {
			w.mark(SeveritySecret, line, true, "the %s program can send the whole environment, secret variables included, to %s", name, strings.Join(uniq(f.hosts), ", "))
		}
	}
	if f.env {
		w.mark(SeverityExposes, line, true, "the %s program reads the whole environment, secret variables included", name)
		return "the whole environment"
	}
	return taint
}

// plainHTTPHosts: the hosts of the command's http:// URLs (not https),
// other than this machine's loopback.
func plainHTTPHosts(ws []word) []string {
	var out []string
	for _, wd := range ws {
		v := wd.prefix
		if wd.fixed {
			v = wd.val
		}
		if len(v) < 7 || !strings.EqualFold(v[:7], "http://") {
			continue
		}
		h, _ := hostOfURL(v)
		h = strings.ToLower(strings.Trim(h, "[]"))
		if h == "" || h == "localhost" || strings.HasSuffix(h, ".localhost") || strings.HasPrefix(h, "127.") || h == "::1" {
			continue
		}
		out = append(out, h)
	}
	return uniq(out)
}

// inputTaintOf is the secret data on the command's input (none known
// without its match).
func inputTaintOf(w *walker, c *simpleCmd, name string, m *match) string {
	if m == nil {
		return ""
	}
	return w.inputTaint(c, name, m)
}

// network records where a command connects and what it sends there.
// sendsStdin: its input is data it sends (gh secret set), not a
// credential it logs in with (gh auth login --with-token).
func (w *walker) network(c *simpleCmd, name string, hosts, sends []string, sendsSecret, readsStdin, sendsStdin bool, forSecret []string, i, end int) string {
	line := c.line
	w.netCommands[c.text] = true
	hosts = uniq(hosts)
	for _, h := range hosts {
		w.host(h, name, line)
	}
	dest := strings.Join(hosts, ", ")
	if dest == "" {
		dest = "(no destination the device can see)"
		w.unseen["where "+name+" connects (from its configuration)"] = true
	}
	if plain := plainHTTPHosts(c.ws[i+1 : end]); len(plain) > 0 && len(c.named) > 0 {
		// curl -u "x:$TOKEN" http://api.github.com/: whatever the host,
		// the secret crosses the network unencrypted first
		w.mark(SeveritySecret, line, true, "sends secret %s over plain http (no TLS) to %s, so anyone on the way can read it: %s", w.secretLabels(c.named), strings.Join(plain, ", "), c.text)
	}
	if len(hosts) == 0 && len(c.named) > 0 && w.passedToItsAPI(c, forSecret) {
		// GH_TOKEN="$GH_TOKEN" gh pr list: the secret is in the variable
		// the program's own API reads, to no host the command line chose
		w.a.Destinations = append(w.a.Destinations, fmt.Sprintf("%s's own API: secret %s, given to it in a variable it reads, which is for it (line %d)", w.display(name), w.secretLabels(c.named), line))
	} else if len(c.named) > 0 && sentToItsAPI(c, name, w.deliveredOrigins(uniq(c.named)), hosts) {
		w.a.Destinations = append(w.a.Destinations, fmt.Sprintf("%s: sends secret %s to the API it is for (%s, line %d)", dest, w.secretLabels(c.named), w.display(name), line))
	} else if len(c.named) > 0 && redirectResendsHeader(c, name) {
		w.mark(SeveritySecret, line, true, "sends secret %s to %s and, following redirects (-L), to any host they lead to, in a header curl sends on: %s", w.secretLabels(c.named), dest, c.text)
	} else if len(c.named) > 0 {
		w.mark(SeveritySecret, line, true, "sends secret %s to %s: %s", w.secretLabels(c.named), dest, c.text)
	} else if t := firstTaint(c.taints[i:end]); t != "" && !sendsSecret {
		w.mark(SeveritySecret, line, true, "sends secret data (%s) to %s: %s", w.secretLabel(t), dest, c.text)
	}
	if readsStdin {
		switch {
		case len(hosts) == 0 && slices.Contains(forSecret, c.in.taint) && !sendsStdin:
			// gh auth login --with-token <<<"$GH_TOKEN": a token of the
			// program's own API, to no host the command line chose
			w.a.Destinations = append(w.a.Destinations, fmt.Sprintf("%s's own API: its input carries secret %s, which is for it (line %d)", w.display(name), c.in.taint, line))
		case c.in.taint != "" && isVarName(c.in.taint) && sentToItsAPI(c, name, w.deliveredOrigins([]string{c.in.taint}), hosts):
			// echo "$GH_TOKEN" | docker login ghcr.io --password-stdin
			w.a.Destinations = append(w.a.Destinations, fmt.Sprintf("%s: its input carries secret %s, sent to the service it is for (%s, line %d)", dest, w.secretLabel(c.in.taint), w.display(name), line))
		case c.in.taint != "":
			w.mark(SeveritySecret, line, true, "sends its input, secret data (from %s), to %s: %s", w.secretLabel(c.in.taint), dest, c.text)
		case c.in.stdin && len(w.stdinSecrets) > 0:
			w.mark(SeveritySecret, line, true, "sends standard input, which carries secret %s, to %s: %s", strings.Join(w.stdinSecrets, ", "), dest, c.text)
		case c.in.piped != "" && c.in.piped != "here-document" && c.in.piped != "here-string":
			w.mark(SeverityNetwork, line, false, "sends the output of %s to %s", c.in.piped, dest)
		case c.in.file != "" && c.in.piped == "" && c.in.file != "/dev/null":
			// nc host port < notes.txt, ssh host 'cat > x' < notes.txt
			what, secret := w.fileData(c.in.file)
			if !secret {
				w.mark(SeverityNetwork, line, false, "sends %s (its standard input) to %s: %s", what, dest, c.text)
			}
		}
	}
	for _, s := range sends {
		secret := strings.HasPrefix(s, "secret data")
		sev := SeverityNetwork
		if secret {
			sev = SeveritySecret
		}
		w.mark(sev, line, secret, "sends %s to %s: %s", s, dest, c.text)
	}
	return ""
}

// remote: the inner command of ssh HOST CMD runs on HOST, through the
// remote user's shell, with the words joined by spaces.
func (w *walker) remote(c *simpleCmd, name, host string, from, to int) {
	words := make([]string, 0, to-from)
	for k := from; k < to; k++ {
		if !c.ws[k].fixed {
			w.reason(SeverityRunsUnseen, c.line, c.taints[k] != "", "%s runs a remote command on %s built at run time: %s", name, host, c.text)
			return
		}
		words = append(words, c.ws[k].val)
	}
	w.unbound.add("the remote shell on "+host, "the remote user's login shell runs the command there (bash started by sshd reads ~/.bashrc first); nothing on that host is bound", "")
	w.remoteStdin(c, host)
	w.onRemote++
	defer func() { w.onRemote-- }()
	w.nested(strings.Join(words, " "), c.depth, c.line, "on "+host+", the remote shell runs:", syntax.LangPOSIX, flow{stdin: c.in.stdin, taint: c.in.taint, piped: c.in.piped})
}

// remoteStdin marks a secret on the standard input of a remote command:
// ssh forwards its input to the command on host.
func (w *walker) remoteStdin(c *simpleCmd, host string) {
	switch {
	case c.in.taint != "":
		w.mark(SeveritySecret, c.line, true, "sends its input, secret data (from %s), to %s: %s", w.secretLabel(c.in.taint), w.display(host), c.text)
	case c.in.stdin && len(w.stdinSecrets) > 0:
		w.mark(SeveritySecret, c.line, true, "sends standard input, which carries secret %s, to %s: %s", strings.Join(w.stdinSecrets, ", "), w.display(host), c.text)
	case c.in.file != "" && c.in.piped == "" && c.in.file != "/dev/null":
		if what, secret := w.fileData(c.in.file); !secret {
			w.mark(SeverityNetwork, c.line, false, "sends %s (its standard input) to %s: %s", what, w.display(host), c.text)
		}
	}
}

// builtin applies the shell's own semantics of its builtins, which a table
// cannot say: where cd goes, what read assigns, what set and printf -v do.
// It returns the secret data the builtin prints (set, declare -p NAME).
func (w *walker) builtin(c *simpleCmd, name string, i, end int) string {
	ops := make([]string, 0, 8) // on the stack for most commands
	for _, wd := range c.ws[i+1 : end] {
		ops = append(ops, wd.val)
	}
	line := c.line
	printed := ""
	switch name {
	case "wait":
		if len(ops) == 0 {
			w.jobs = nil // bash(1): with no operand, wait waits for every background job
		}
	case "unset":
		// the variable, and its attributes, are gone
		for _, o := range ops {
			delete(w.assoc, o)
			delete(w.integer, o)
		}
	case "cd", "pushd":
		w.cd(ops)
		if end-i == 2 && homeWord(c.ws[i+1].shown) {
			// cd ~, cd "$HOME/x": the home directory, outside the working
			// directory wherever it is (./x there is not the project's)
			w.cwd = "~"
		}
	case "test", "[":
		for k := i + 1; k+1 < end; k++ {
			if c.ws[k].fixed && (c.ws[k].val == "-v" || c.ws[k].val == "-R") {
				w.nameOperand(c.ws[k+1].val, c.ws[k+1].fixed, c.ws[k+1].shown, name+" "+c.ws[k].val, line)
			}
		}
	case "read", "mapfile", "readarray":
		if name == "read" {
			w.readNames(c, i, end)
		}
		if t := w.stdinTaint(c.in); t != "" {
			for k, o := range ops {
				if c.ws[i+1+k].fixed && !strings.HasPrefix(o, "-") && isVarName(o) {
					w.taintVar(o, t)
				}
			}
			if name == "read" && !slices.ContainsFunc(ops, func(o string) bool { return !strings.HasPrefix(o, "-") }) {
				w.taintVar("REPLY", t)
			}
			if name != "read" && !slices.ContainsFunc(ops, func(o string) bool { return !strings.HasPrefix(o, "-") }) {
				w.taintVar("MAPFILE", t)
			}
		}
	case "set":
		if len(ops) == 0 {
			w.envDump(line, "set")
			printed = "the whole environment"
		}
		if slices.Contains(ops, "--") || len(ops) > 0 && !strings.HasPrefix(ops[len(ops)-1], "-") && !strings.HasPrefix(ops[len(ops)-1], "+") {
			w.forgetPositional() // new positional parameters
		}
		for k, o := range ops {
			if o == "-x" || (strings.HasPrefix(o, "-") && strings.ContainsRune(o, 'x') && !strings.HasPrefix(o, "--")) ||
				(o == "xtrace" && k > 0 && ops[k-1] == "-o") {
				w.mark(SeverityExposes, line, true, "set -x traces every command with its expanded words to stderr, secret values included")
			}
		}
	case "printf":
		for k, o := range ops {
			if o == "-v" && k+1 < len(ops) {
				w.computed(line, "printf -v")
				if !c.ws[i+2+k].fixed || strings.Contains(ops[k+1], "[") {
					w.reason(SeverityRunsUnseen, line, false, "printf -v %s assigns to a name with a subscript, which bash evaluates as code", w.display(ops[k+1]))
				} else if t := firstTaint(c.taints[i+3+k : end]); t != "" && isVarName(ops[k+1]) {
					// the formatted words, secret data included, are the variable's value
					w.taintVar(ops[k+1], t)
				}
			}
		}
	case "export", "readonly", "local", "declare", "typeset":
		// POSIX sh reads these as plain commands: their NAME=VALUE words
		// are assignments all the same.
		names := 0
		for k, o := range ops {
			wd := c.ws[i+1+k]
			if strings.HasPrefix(wd.prefix, "-") || strings.HasPrefix(wd.prefix, "+") {
				continue
			}
			names++
			w.computed(line, name)
			if key, val, ok := strings.Cut(wd.prefix, "="); ok && isVarName(key) {
				w.envAssign(key, val, wd.fixed, line)
				if c.taints[i+1+k] != "" {
					w.taintVar(key, c.taints[i+1+k])
				}
			}
			_ = o
		}
		if names == 0 && (name == "export" || name == "declare" || name == "typeset") {
			w.envDump(line, name)
			printed = "the whole environment"
		}
		if slices.Contains(ops, "-p") {
			printed = cmp.Or(w.printedVars(ops), printed)
		}
	case "source", ".":
		file := ""
		if len(ops) > 0 {
			file = ops[0]
		}
		if w.followWritten(file, w.currentShell(), c) {
		} else if how, l := w.wroteAt(file); how != "" {
			w.reason(SeverityRunsUnseen, line, true, "%s runs the commands of %s, a file the script %s at line %d (write, then run)", name, w.display(file), how, l)
		} else if w.projectActivate(file) {
			w.runsLine(line, "%s runs the project's code: %s (a virtual environment's activate script)", name, w.display(file))
		} else {
			w.reason(SeverityRunsUnseen, line, false, "%s runs the commands of the file %s in this shell, which the device does not see", name, w.display(file))
		}
		if file != "" {
			w.unbound.add(file, "the script reads and runs it ("+name+"); its contents are not bound", "")
		}
	}
	return printed
}

// printedVars: declare -p NAME... prints each variable named with its
// value: a secret among them is in the output.
func (w *walker) printedVars(names []string) string {
	for _, n := range names {
		if w.secretVars[n] {
			w.callNamed = append(w.callNamed, n)
			return n
		}
	}
	return ""
}

// readNames checks the names read assigns (its operands, and -a's
// value): each is a name bash evaluates with its subscript.
func (w *walker) readNames(c *simpleCmd, i, end int) {
	opts := true
	for k := i + 1; k < end; k++ {
		wd := c.ws[k]
		if opts && wd.fixed && wd.val == "--" {
			opts = false
			continue
		}
		if opts && wd.fixed && len(wd.val) > 1 && wd.val[0] == '-' {
			// -r -s -e, and the options that take a value: -d -i -n -N
			// -p -t -u (skipped) and -a (an array's name, checked)
			for j := 1; j < len(wd.val); j++ {
				ch := wd.val[j]
				if !strings.ContainsRune("adinNptu", rune(ch)) {
					continue
				}
				val, valShown, valFixed := wd.val[j+1:], wd.val[j+1:], true
				if val == "" && k+1 < end {
					k++
					val, valShown, valFixed = c.ws[k].val, c.ws[k].shown, c.ws[k].fixed
				}
				if ch == 'a' {
					w.nameOperand(val, valFixed, valShown, "read -a", c.line)
				}
				break
			}
			continue
		}
		opts = false
		w.nameOperand(wd.val, wd.fixed, wd.shown, "read", c.line)
	}
}

// progLang is the language of a program's own code options (python -c
// is code:python), for naming what it reads on standard input.
func progLang(p *program) string {
	for _, o := range p.opts {
		if o.value != nil && o.value.name == "code" {
			return o.value.lang
		}
	}
	for _, f := range p.operands {
		for _, k := range f.kinds {
			if k.name == "code" {
				return k.lang
			}
		}
	}
	return p.names[0]
}

// langName is how a code kind's language is named in a finding.
func langName(lang string) string {
	if lang == "sh" {
		return "shell"
	}
	return lang
}

func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// program records a program the script runs: every one inherits the
// environment, so every one can read an environment secret.
func (w *walker) program(name string, line int, readsStdin bool) {
	if w.silent > 0 {
		return
	}
	if readsStdin && !noStdin[name] {
		w.stdinRead = append(w.stdinRead, progRef{name, line})
	}
	if builtins[name] {
		return
	}
	if !w.progSeen[name] {
		w.progSeen[name] = true
		w.programs = append(w.programs, progRef{name, line})
	}
}

// noStdin never read standard input (wrappers are counted by the command
// they run).
var noStdin = setOf(":", "[", "alias", "break", "builtin", "cd", "command", "continue", "echo", "eval", "exec", "exit", "export",
	"false", "getopts", "hash", "jobs", "let", "local", "printf", "pwd", "readonly", "return", "set", "shift", "source", ".",
	"test", "times", "trap", "true", "type", "ulimit", "umask", "unalias", "unset", "wait", "declare", "typeset", "pushd",
	"popd", "dirs", "shopt", "compgen", "kill", "sleep", "ls", "mkdir", "rm", "rmdir", "mv", "touch", "chmod", "ln",
	"basename", "dirname", "date", "uname", "whoami", "id", "hostname", "env", "printenv", "nohup", "nice", "timeout", "sudo",
	"doas", "setsid", "time", "stdbuf", "[[", "mktemp", "realpath", "readlink", "nproc", "tty", "seq", "which", "cp", "chown", "chgrp")

// passedToItsAPI: every secret the command names is named only by its own
// assignments, each into a variable its table says the program's API
// reads (forSecret), and is for that API: the same variable, or one whose
// conventional hosts (apiHostsByVariable) share one with it
// (UV_PUBLISH_TOKEN="$PYPI_TOKEN" uv publish).
func (w *walker) passedToItsAPI(c *simpleCmd, forSecret []string) bool {
	if len(c.passed) == 0 || len(c.wordNamed) > 0 || c.in.taint != "" {
		return false
	}
	for _, v := range uniq(c.named) {
		ok := false
		for to, from := range c.passed {
			if from != v || !slices.Contains(forSecret, to) {
				continue
			}
			for _, o := range w.deliveredOrigins([]string{v}) {
				ok = ok || o == to || slices.ContainsFunc(apiHostsByVariable[o], func(h string) bool { return slices.Contains(apiHostsByVariable[to], h) })
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
