// What the explanation knows about commands: the programs it recognises,
// the ones that run another command (followed when it is written out), the
// ones that run code the device does not explain, environment variables
// that make a program run code, and where network programs connect. A
// command the device does not know makes the script "not understood": the
// device cannot say what it does with a secret.
package main

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"mvdan.cc/sh/v3/syntax"
)

// simpleCmd is one simple command being explained: its words, their fixed
// values, and what its input carries.
type simpleCmd struct {
	words  []*syntax.Word
	vals   []string
	fixed  []bool
	taints []string // secret data each word carries
	named  []string // secret variables the words name
	line   int
	depth  int
	in     flow
	hdocs  []*syntax.Redirect
	text   string
}

// call explains a simple command; it returns the secret data its output
// can carry.
func (w *walker) call(c *syntax.CallExpr, s *syntax.Stmt, depth int, prefix, tail string, in flow, heredocs []*syntax.Redirect) string {
	line := w.lineOf(c.Pos())
	if len(c.Args) == 0 {
		var as []string
		for _, a := range c.Assigns {
			as = append(as, w.show(a))
		}
		w.emit(depth, prefix+"set shell variable "+clip(strings.Join(as, " "))+tail)
		for _, a := range c.Assigns {
			w.assign(a, depth, line, false)
		}
		return ""
	}
	text := w.show(c)
	w.emit(depth, prefix+text+tail)
	saved := w.callNamed
	w.callNamed = nil
	for _, a := range c.Assigns {
		w.assign(a, depth, line, true)
	}
	n := len(c.Args)
	cmd := &simpleCmd{words: c.Args, line: line, depth: depth, in: in, hdocs: heredocs, text: text,
		vals: make([]string, n), fixed: make([]bool, n), taints: make([]string, n)}
	for k, word := range c.Args {
		cmd.vals[k], cmd.fixed[k] = w.value(word)
		cmd.taints[k] = cmp.Or(w.word(word, depth, line, "argument"), w.skeletonChecks(word, line))
	}
	cmd.named = w.callNamed
	w.callNamed = saved
	for _, n := range cmd.named {
		w.named[n] = append(w.named[n], progRef{firstWord(cmd), line})
	}
	name, why := w.plainName(c.Args[0])
	if why != "" {
		w.reason(line, false, "%s", why)
		w.program("(a command decided at run time)", line, in.stdin)
		return cmp.Or(firstTaint(cmd.taints), in.taint)
	}
	_ = name
	return w.runAt(cmd, 0, len(c.Args))
}

func firstWord(c *simpleCmd) string {
	if len(c.vals) > 0 && c.fixed[0] {
		return c.vals[0]
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

// runAt explains the command whose name is word i (words i..end-1): the
// command itself, or one a wrapper (env, sudo, xargs, find -exec ...)
// runs.
func (w *walker) runAt(c *simpleCmd, i, end int) string {
	line := c.line
	if i >= end {
		return ""
	}
	if !c.fixed[i] {
		w.reason(line, false, "runs a command whose name is decided at run time: %s", w.show(c.words[i]))
		w.program("(a command decided at run time)", line, c.in.stdin)
		return cmp.Or(firstTaint(c.taints[i:end]), c.in.taint)
	}
	raw := c.vals[i]
	if i > 0 && (!plainChars(raw) || raw == "") {
		w.reason(line, false, "runs a command whose name %s is not a plain name", w.display(raw))
		return ""
	}
	name := raw
	if strings.Contains(raw, "/") {
		dir := path.Dir(raw)
		if systemDirs[dir] {
			name = path.Base(raw)
		} else {
			w.program(raw, line, c.in.stdin)
			if how := w.written[w.resolve(raw)]; how != "" {
				w.reason(line, true, "runs %s, a file %s earlier in the script, whose content the device does not see", w.display(raw), how)
			} else if w.extracted {
				w.reason(line, false, "runs %s after the script unpacked a download (it may come from it)", w.display(raw))
			} else {
				w.unseen[w.display(raw)] = true
			}
			return cmp.Or(firstTaint(c.taints[i:end]), c.in.taint)
		}
	}
	ops := c.vals[i+1 : end]
	opsFixed := c.fixed[i+1 : end]
	out := cmp.Or(firstTaint(c.taints[i:end]), c.in.taint)
	if w.funcs[name] {
		w.program(name+" (a function of the script)", line, c.in.stdin)
		return out
	}
	w.program(name, line, c.in.stdin)
	kind, known := commandKinds[name]
	if !known {
		switch {
		case strings.HasPrefix(name, "python") && pythonVersion(name):
			kind, known = kindInterp, true
		case strings.HasPrefix(name, "docker-credential-"):
			kind, known = kindCredential, true
		}
	}
	if !known {
		w.reason(line, false, "%s is not a command the device knows, so it cannot say what it does with the secrets or the network", w.display(name))
		return out
	}
	if len(c.named) > 0 && kind != kindNet {
		w.mark(line, true, "uses secret %s: %s", strings.Join(uniq(c.named), ", "), c.text)
	}
	switch kind {
	case kindPlain:
		w.plainChecks(c, name, i, end)
		if (name == "gpg" || name == "gpg2") && slices.ContainsFunc(ops, func(o string) bool { return strings.HasPrefix(o, "--export-secret") || o == "--decrypt" || o == "-d" }) {
			out = cmp.Or(out, name+" "+strings.Join(ops, " "))
		}
	case kindCd:
		w.cd(ops)
	case kindSet:
		w.setChecks(c, ops, line)
		if len(ops) == 0 {
			out = "the whole environment"
		}
	case kindPrintenv:
		if countOperands(ops) == 0 {
			w.envDump(line, name)
			out = "the whole environment"
		}
	case kindCompgen:
		for _, o := range ops {
			if o == "-v" || o == "-e" || o == "variable" || o == "export" || strings.HasPrefix(o, "-") && strings.ContainsAny(o, "ve") {
				w.mark(line, len(w.envSecrets) > 0, "compgen lists the names of every variable, secret ones included")
				break
			}
		}
	case kindRead:
		readsSecret := c.in.taint != "" || c.in.stdin && len(w.stdinSecrets) > 0
		if readsSecret {
			for j, o := range ops {
				if opsFixed[j] && !strings.HasPrefix(o, "-") && isName(o) {
					w.secretVars[o] = true
				}
			}
		}
	case kindEval:
		text, ok := joinFixed(ops, opsFixed)
		if !ok {
			w.reason(line, false, "eval runs code built at run time: %s", c.text)
			break
		}
		w.nested(text, c.depth, line, "eval runs:", w.lang, c.in.stdin)
	case kindSource:
		file := ""
		if len(ops) > 0 {
			file = w.display(ops[0])
		}
		if len(ops) > 0 && w.written[w.resolve(ops[0])] != "" {
			w.reason(line, true, "%s runs the commands of %s, a file %s earlier in the script", name, file, w.written[w.resolve(ops[0])])
		} else {
			w.reason(line, false, "%s runs the commands of the file %s in this shell, which the device does not see", name, file)
		}
	case kindTrap:
		w.trap(c, ops, opsFixed)
	case kindAlias:
		for _, o := range ops {
			if strings.Contains(o, "=") {
				w.reason(line, false, "alias %s changes what a later command name runs", w.display(o))
			}
		}
	case kindCodeBuiltin:
		w.reason(line, false, "%s can make the shell run code the device does not see: %s", name, c.text)
	case kindShell:
		w.shell(c, name, i, end)
	case kindInterp:
		w.interp(c, name, ops, opsFixed)
	case kindWrapper, kindDetach:
		if kind == kindDetach {
			w.mark(line, len(w.envSecrets) > 0, "%s lets a program keep running after the invocation ends, with the secrets in its environment: %s", name, c.text)
		}
		return cmp.Or(w.wrapper(c, name, i, end), out)
	case kindSudo:
		w.mark(line, false, "runs as another user (root unless -u says otherwise): %s", c.text)
		if slices.Contains(ops, "-E") || slices.Contains(ops, "--preserve-env") {
			w.mark(line, true, "%s -E keeps the environment, the secrets included, for the other user", name)
		}
		if j := w.skipOptions(c, name, i+1, end); j >= end {
			if slices.ContainsFunc(ops, func(o string) bool { return o == "-s" || o == "-i" || o == "--shell" || o == "--login" }) {
				w.reason(line, false, "%s opens a shell that reads its commands from standard input", name)
			}
			break
		}
		return cmp.Or(w.wrapper(c, name, i, end), out)
	case kindStringRunner:
		w.stringRunner(c, name, ops, opsFixed)
	case kindXargs:
		if j := w.skipOptions(c, name, i+1, end); j < end {
			w.emit(c.depth+1, "xargs runs, with words read from its input:")
			w.runAt(&simpleCmd{words: c.words, vals: c.vals, fixed: c.fixed, taints: c.taints, line: line, depth: c.depth + 1, in: flow{}, text: c.text}, j, end)
			if sh := shellOf(c.vals[j]); sh != "" && !hasCOption(c.vals[j+1:end]) {
				w.reason(line, false, "xargs gives %s words read from its input, which it runs as script files", w.display(c.vals[j]))
			}
		}
	case kindFind:
		w.findExec(c, i, end)
	case kindParallel:
		w.reason(line, false, "%s runs its arguments and input as shell commands, which the device does not follow", name)
	case kindNet:
		out = cmp.Or(w.network(c, name, i, end), out)
	case kindGit:
		out = cmp.Or(w.git(c, i, end), out)
	case kindGh:
		out = cmp.Or(w.gh(c, ops), out)
	case kindAwk:
		out = cmp.Or(w.awk(c, name, ops, opsFixed), out)
	case kindSed:
		w.sed(c, ops, opsFixed)
	case kindPS:
		for _, o := range ops {
			if o != "" && o[0] != '-' && strings.ContainsRune(o, 'e') {
				w.mark(line, true, "ps %s shows the environment of processes, secret variables included", w.display(o))
				out = "the whole environment"
			}
		}
	case kindCredential:
		w.mark(line, true, "%s prints a credential, so its output is secret data", c.text)
		out = c.text
	case kindCommand:
		if len(ops) > 0 && (ops[0] == "-v" || ops[0] == "-V") {
			break
		}
		return cmp.Or(w.wrapper(c, name, i, end), out)
	case kindJq:
		for k, o := range ops {
			if opsFixed[k] && !strings.HasPrefix(o, "-") {
				if strings.Contains(o, "env") || strings.Contains(o, "$ENV") {
					w.mark(line, true, "the %s program reads the whole environment (env, $ENV), secret variables included", name)
					out = "the whole environment"
				}
				break
			}
		}
	case kindPrintf:
		for k, o := range ops {
			if o == "-v" && k+1 < len(ops) && (!opsFixed[k+1] || strings.Contains(ops[k+1], "[")) {
				w.reason(line, false, "printf -v %s assigns to a name with a subscript, which bash evaluates as code", w.display(ops[k+1]))
			}
		}
	case kindSchedule:
		w.reason(line, false, "%s schedules commands that run later, which the device does not follow", name)
	}
	return out
}

func uniq(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

func isName(s string) bool {
	return s != "" && len(namesIn(s)) == 1 && namesIn(s)[0] == s && !(s[0] >= '0' && s[0] <= '9')
}

func pythonVersion(name string) bool {
	v := strings.TrimPrefix(name, "python")
	for _, c := range v {
		if c != '.' && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

func countOperands(ops []string) int {
	n := 0
	for _, o := range ops {
		if !strings.HasPrefix(o, "-") {
			n++
		}
	}
	return n
}

func joinFixed(ops []string, fixed []bool) (string, bool) {
	for _, f := range fixed {
		if !f {
			return "", false
		}
	}
	return strings.Join(ops, " "), true
}

// setChecks: set without operands prints every variable; -x traces.
func (w *walker) setChecks(c *simpleCmd, ops []string, line int) {
	if len(ops) == 0 {
		w.envDump(line, "set")
		return
	}
	for i, o := range ops {
		if o == "-x" || (strings.HasPrefix(o, "-") && strings.ContainsRune(o, 'x') && !strings.HasPrefix(o, "--")) ||
			(o == "xtrace" && i > 0 && ops[i-1] == "-o") {
			w.mark(line, true, "set -x traces every command with its expanded words to stderr, secret values included")
		}
	}
}

// plainChecks: writers' targets, the download-then-run bookkeeping.
func (w *walker) plainChecks(c *simpleCmd, name string, i, end int) {
	ops := c.vals[i+1 : end]
	switch name {
	case "go":
		if len(ops) > 1 && (ops[0] == "run" || ops[0] == "install") {
			for _, o := range ops[1:] {
				if strings.Contains(o, "@") && strings.Contains(o, "/") && !strings.HasPrefix(o, "-") {
					w.reason(c.line, false, "go %s %s fetches that module from the network and runs its code", ops[0], w.display(o))
				}
			}
		}
	case "npx", "bunx", "pnpx", "uvx", "pipx", "pnpm", "yarn":
		for _, o := range ops {
			if strings.Contains(o, "://") || strings.HasPrefix(o, "github:") || strings.HasPrefix(o, "git+") {
				w.reason(c.line, false, "%s %s fetches code from the network and runs it", name, w.display(o))
			}
		}
	case "tar", "bsdtar", "unzip", "7z", "7za", "cpio", "gunzip", "bunzip2", "unxz", "unzstd", "xz", "zstd":
		if w.downloaded && (name != "tar" && name != "bsdtar" || slices.ContainsFunc(ops, func(o string) bool {
			return o == "x" || strings.HasPrefix(o, "-") && strings.ContainsRune(o, 'x') && !strings.HasPrefix(o, "--") || o == "--extract" || !strings.HasPrefix(o, "-") && strings.ContainsRune(o, 'x') && len(o) <= 6
		})) {
			w.extracted = true
		}
	case "gpg", "gpg2":
		for _, o := range ops {
			if strings.HasPrefix(o, "--export-secret") || o == "--decrypt" || o == "-d" {
				w.mark(c.line, true, "%s %s prints secret key material or decrypted data, so its output is secret data", name, w.display(o))
			}
		}
	}
	if name == "envsubst" && len(w.envSecrets) > 0 {
		w.mark(c.line, true, "envsubst replaces each $VARIABLE its input names with the value, secret ones included")
	}
	verb, ok := writers[name]
	if !ok {
		return
	}
	files := c.words[i+1 : end]
	vals := c.vals[i+1 : end]
	if name == "cp" || name == "mv" || name == "ln" || name == "install" {
		if len(files) > 0 {
			files, vals = files[len(files)-1:], vals[len(vals)-1:]
		}
	}
	for k, f := range files {
		if strings.HasPrefix(vals[k], "-") {
			continue
		}
		w.checkWrite(verb, f, c.line)
	}
}

// trap's action is shell code run later (on EXIT or a signal).
func (w *walker) trap(c *simpleCmd, ops []string, fixed []bool) {
	if len(ops) == 0 || fixed[0] && (ops[0] == "-l" || ops[0] == "-p") {
		return
	}
	k := 0
	if fixed[0] && ops[0] == "--" {
		k = 1
	}
	if k >= len(ops) {
		return
	}
	if !fixed[k] {
		w.reason(c.line, false, "trap runs code decided at run time: %s", c.text)
		return
	}
	if ops[k] == "-" || ops[k] == "" {
		return
	}
	w.nested(ops[k], c.depth, c.line, "trap runs, on "+w.display(strings.Join(ops[k+1:], " "))+":", w.lang, false)
}

// shell explains a shell run by the script: its -c text is followed; a
// script file, or code read from a pipe, is not seen.
func (w *walker) shell(c *simpleCmd, name string, i, end int) {
	sh := shellOf(name)
	if sh == "" {
		sh = "sh"
	}
	ops := c.vals[i+1 : end]
	s, note := shellArgs(sh, ops)
	if s != nil {
		k := i + 1 + len(s.options)
		for k < end && c.vals[k] != s.text {
			k++
		}
		if k < end && !c.fixed[k] {
			w.reason(c.line, false, "%s -c runs code built at run time: %s", name, c.text)
			return
		}
		w.nested(s.text, c.depth, c.line, "whose script ("+sh+" -c) runs:", s.lang, c.in.stdin)
		return
	}
	if strings.Contains(note, "standard input") {
		switch {
		case c.in.piped == "here-document" && len(c.hdocs) > 0:
			if body, ok := fixedWord(c.hdocs[0].Hdoc); ok {
				w.nested(body, c.depth, c.line, "whose script (the here-document) runs:", shellLangs[sh], false)
				return
			}
			w.reason(c.line, false, "%s runs a here-document with expansions as code", name)
		case c.in.piped != "":
			w.reason(c.line, c.in.taint != "", "%s runs the code piped into it (from %s)", name, c.in.piped)
		default:
			w.reason(c.line, false, "%s reads its commands from standard input, which the device does not see", name)
		}
		return
	}
	if len(ops) > 0 {
		if how := w.written[w.resolve(lastOperand(ops))]; how != "" {
			w.reason(c.line, true, "%s runs a script file %s earlier in the script", name, how)
			return
		}
	}
	w.reason(c.line, false, "%s", note)
}

func onlyVersionOptions(ops []string) bool {
	for _, o := range ops {
		switch o {
		case "--version", "-V", "-v", "--help", "-h", "-VV", "-version":
		default:
			return false
		}
	}
	return len(ops) > 0
}

func lastOperand(ops []string) string {
	for _, o := range ops {
		if !strings.HasPrefix(o, "-") {
			return o
		}
	}
	return ""
}

// interp explains python, perl, node and the like: code given on the
// command line or read from standard input is not explained; a file is
// listed as unseen.
func (w *walker) interp(c *simpleCmd, name string, ops []string, fixed []bool) {
	codeOpts := interpCodeOptions[strings.TrimRight(name, "0123456789.")]
	for k, o := range ops {
		if codeOpts[o] || (len(o) > 2 && codeOpts[o[:2]] && o[0] == '-' && o[1] != '-') {
			code := ""
			if k+1 < len(ops) && fixed[k+1] {
				code = ops[k+1]
			}
			secret := strings.Contains(code, "environ") || strings.Contains(code, "ENV") || strings.Contains(code, "getenv")
			w.reason(c.line, secret, "%s runs code given on its command line, which the device does not explain: %s", name, c.text)
			return
		}
		if o == "-m" && k+1 < len(ops) {
			w.unseen[w.display(name)+" module "+w.display(ops[k+1])] = true
			return
		}
		if (name == "deno" || name == "bun") && !strings.HasPrefix(o, "-") {
			if o == "run" || o == "x" {
				continue
			}
			if !strings.ContainsAny(o, "./:") {
				return // a subcommand: deno test, bun install
			}
		}
		if o == "-" || !strings.HasPrefix(o, "-") {
			if o != "-" {
				if how := w.written[w.resolve(o)]; how != "" {
					w.reason(c.line, true, "%s runs %s, a file %s earlier in the script", name, w.display(o), how)
				} else if strings.Contains(o, "://") {
					w.reason(c.line, false, "%s runs code fetched from %s", name, w.display(o))
				} else if w.extracted {
					w.reason(c.line, false, "%s runs %s after the script unpacked a download (it may come from it)", name, w.display(o))
				} else {
					w.unseen[w.display(o)+" (run by "+w.display(name)+")"] = true
				}
				return
			}
			break
		}
	}
	if c.in.piped == "" && !slices.Contains(ops, "-") && (!c.in.stdin || onlyVersionOptions(ops)) {
		// Options only: python3 --version reads no code; with standard
		// input redirected from a file (listed) there is no code to see.
		return
	}
	from := "standard input"
	if c.in.piped != "" {
		from = c.in.piped
	}
	w.reason(c.line, c.in.taint != "", "%s runs code it reads from %s, which the device does not explain", name, w.display(from))
}

// wrapper follows the command a wrapper runs.
func (w *walker) wrapper(c *simpleCmd, name string, i, end int) string {
	if name == "env" {
		for k := i + 1; k < end; k++ {
			v := c.vals[k]
			if !c.fixed[k] {
				break
			}
			if v == "-S" || strings.HasPrefix(v, "-S") || strings.HasPrefix(v, "--split-string") {
				text := strings.TrimPrefix(strings.TrimPrefix(v, "--split-string="), "-S")
				if text == "" && k+1 < end {
					if !c.fixed[k+1] {
						w.reason(c.line, false, "env -S runs a command line built at run time")
						return ""
					}
					text = c.vals[k+1]
				}
				w.nested(text, c.depth, c.line, "env -S splits and runs:", syntax.LangPOSIX, c.in.stdin)
				return ""
			}
			if k2, val, ok := strings.Cut(v, "="); ok && !strings.HasPrefix(v, "-") {
				w.envAssign(k2, val, true, c.line)
			}
		}
	}
	j := w.skipOptions(c, name, i+1, end)
	if j >= end {
		if name == "env" {
			w.envDump(c.line, "env")
			return "the whole environment"
		}
		return ""
	}
	return w.runAt(c, j, end)
}

// skipOptions returns the index of the command a wrapper runs.
func (w *walker) skipOptions(c *simpleCmd, name string, k, end int) int {
	valued := wrapperValueOptions[name]
	positional := wrapperPositionals[name]
	for k < end {
		v := c.vals[k]
		if !c.fixed[k] {
			return k
		}
		switch {
		case v == "--":
			return k + 1
		case valued[v]:
			k += 2
		case strings.HasPrefix(v, "-") && len(v) > 1:
			k++
		case name == "env" && strings.Contains(v, "="):
			k++
		case positional > 0:
			positional--
			k++
		default:
			return k
		}
	}
	return k
}

// stringRunner: su -c, watch, flock -c, script -c, runuser -c and sg run
// a string as shell code.
func (w *walker) stringRunner(c *simpleCmd, name string, ops []string, fixed []bool) {
	for k, o := range ops {
		if (o == "-c" || o == "--command") && k+1 < len(ops) {
			if !fixed[k+1] {
				w.reason(c.line, false, "%s -c runs code built at run time", name)
				return
			}
			w.nested(ops[k+1], c.depth, c.line, name+" -c runs:", syntax.LangPOSIX, false)
			return
		}
	}
	if name == "watch" {
		var words []string
		for k, o := range ops {
			if strings.HasPrefix(o, "-") && len(words) == 0 {
				continue
			}
			if !fixed[k] {
				w.reason(c.line, false, "watch runs a command built at run time")
				return
			}
			words = append(words, o)
		}
		w.nested(strings.Join(words, " "), c.depth, c.line, "watch runs, again and again, through sh -c:", syntax.LangPOSIX, false)
		return
	}
	if name == "flock" || name == "runuser" {
		// flock FILE CMD..., runuser -u USER -- CMD...
		return
	}
	if len(ops) > 0 {
		w.reason(c.line, false, "%s runs commands the device does not follow: %s", name, c.text)
	}
}

// findExec follows find's -exec, -execdir, -ok and -okdir commands.
func (w *walker) findExec(c *simpleCmd, i, end int) {
	for k := i + 1; k < end; k++ {
		switch c.vals[k] {
		case "-exec", "-execdir", "-ok", "-okdir":
			stop := k + 1
			for stop < end && c.vals[stop] != ";" && c.vals[stop] != "+" {
				stop++
			}
			w.emit(c.depth+1, "find runs, for each file it finds ("+c.vals[k]+"):")
			w.runAt(&simpleCmd{words: c.words, vals: c.vals, fixed: c.fixed, taints: c.taints, line: c.line, depth: c.depth + 1, in: flow{}, text: c.text}, k+1, stop)
			k = stop
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if k+1 < end {
				w.checkWrite("writes", c.words[k+1], c.line)
			}
		case "-delete":
			w.checkWrite("deletes", c.words[i+1], c.line)
		}
	}
}

// codeVariable says why setting an environment variable to value (""
// when decided at run time, fixed false) makes a program run code or read
// a configuration the device does not see; "" if it does not.
func codeVariable(name, value string, fixed bool) string {
	up := strings.ToUpper(name)
	switch {
	case modulePathVariables[up]:
		// Modules from the working directory are its files, like a
		// Makefile; anywhere else they are code the script brings in.
		if fixed && !strings.HasPrefix(value, "/") && !strings.HasPrefix(value, "~") && !strings.Contains(value, "..") {
			return ""
		}
		return "where the program loads modules from, outside the working directory or decided at run time"
	case strings.HasSuffix(up, "_OPTIONS") || strings.HasSuffix(up, "OPTS") || strings.HasSuffix(up, "OPT") || up == "GOFLAGS" || up == "MAKEFLAGS":
		if fixed && !loadsCode(value) {
			return ""
		}
		return "options that can make the program load or run code (" + literal(clipValue(value)) + ")"
	}
	if why, ok := codeVariables[name]; ok {
		return why
	}
	for _, suffix := range []string{"_COMMAND", "_EDITOR", "_PAGER", "_ASKPASS", "_WRAPPER", "_RUNNER"} {
		if strings.HasSuffix(up, suffix) {
			return "which programs take as a command to run"
		}
	}
	for _, prefix := range []string{"GIT_CONFIG", "LD_", "DYLD_", "BASH_FUNC_", "NPM_CONFIG_", "GIT_TRACE"} {
		if strings.HasPrefix(up, prefix) {
			return "which makes programs load code or configuration the device does not see"
		}
	}
	return ""
}

var modulePathVariables = set("PYTHONPATH", "NODE_PATH", "PERL5LIB", "PERLLIB", "RUBYLIB")

// loadsCode: an option value that loads code or runs a program.
func loadsCode(v string) bool {
	for _, s := range []string{"require", "import", "loader", "javaagent", "agentpath", "agentlib", "preload", "toolexec",
		"-exec", "SHELL", "-r ", "-r=", "--eval", "-e "} {
		if strings.Contains(v, s) {
			return true
		}
	}
	return strings.HasPrefix(v, "-r")
}

func clipValue(v string) string {
	if len(v) > 60 {
		return v[:60] + "..."
	}
	return v
}

var codeVariables = map[string]string{
	"BASH_ENV":          "a file bash runs before any script",
	"ENV":               "a file sh runs at startup",
	"PROMPT_COMMAND":    "code bash runs before each prompt",
	"PS0":               "a prompt bash expands, running command substitutions",
	"PS1":               "a prompt the shell expands, running command substitutions",
	"PS4":               "the trace prompt, expanded (command substitutions run) for every traced command",
	"GIT_SSH":           "the program git runs for SSH",
	"GIT_SSH_COMMAND":   "the command git runs (through a shell) for SSH",
	"GIT_PROXY_COMMAND": "the command git runs to connect",
	"GIT_EXTERNAL_DIFF": "the program git runs for diffs",
	"GIT_PAGER":         "the program git runs as its pager",
	"GIT_EDITOR":        "the program git runs as its editor",
	"GIT_ASKPASS":       "the program git runs for credentials",
	"SSH_ASKPASS":       "the program ssh runs for a password",
	"SUDO_ASKPASS":      "the program sudo runs for a password",
	"GIT_EXEC_PATH":     "where git finds the programs it runs",
	"GIT_TEMPLATE_DIR":  "hooks git installs into new repositories",
	"GIT_DIR":           "the repository (its configuration and hooks) git uses",
	"PAGER":             "the program many commands run as a pager",
	"MANPAGER":          "the program man runs as its pager",
	"EDITOR":            "the program many commands run as an editor",
	"VISUAL":            "the program many commands run as an editor",
	"BROWSER":           "the program many commands run to open a URL",
	"LESSOPEN":          "a command less runs on each file",
	"LESSCLOSE":         "a command less runs on each file",
	"PYTHONSTARTUP":     "a file python runs",
	"PYTHONHOME":        "where python loads its library from",
	"CURL_HOME":         "where curl reads its configuration (which can send files)",
	"WGETRC":            "the configuration file wget reads",
	"HOME":              "the home directory, where programs read their configuration (git aliases, .curlrc)",
	"XDG_CONFIG_HOME":   "where programs read their configuration",
	"ZDOTDIR":           "where zsh reads its startup files",
	"SHELLOPTS":         "shell options every bash child starts with",
	"BASHOPTS":          "shell options every bash child starts with",
	"RUSTC_WRAPPER":     "a program cargo runs around the compiler",
	"SHELL":             "the shell some programs run commands with",
	"IFS":               "how the shell splits unquoted expansions into words",
}

// Command kinds.
type cmdKind int

const (
	kindPlain cmdKind = iota
	kindCd
	kindSet
	kindPrintenv
	kindCompgen
	kindRead
	kindEval
	kindSource
	kindTrap
	kindAlias
	kindCodeBuiltin
	kindShell
	kindInterp
	kindWrapper
	kindDetach
	kindSudo
	kindStringRunner
	kindXargs
	kindFind
	kindParallel
	kindNet
	kindGit
	kindGh
	kindAwk
	kindSed
	kindPS
	kindCredential
	kindCommand
	kindSchedule
	kindJq
	kindPrintf
)

// plainCommands are programs and builtins the device recognises; what
// they do is their ordinary job (they may read files the device does not
// see, which the README says).
const plainCommands = `: [ [[ true false test echo printf cd pwd exit return break continue shift unset wait sleep
local readonly getopts times type hash help jobs fg bg kill umask ulimit shopt let pushd popd dirs mapfile readarray caller
ls cat tac head tail wc sort uniq cut tr tee touch mkdir rm rmdir cp mv ln install chmod chown chgrp truncate stat file
basename dirname realpath readlink mktemp date cal uname whoami id groups hostname nproc arch df du free uptime
diff cmp comm patch grep egrep fgrep rg ag ack fd locate tree less more column paste join fold fmt nl od hexdump xxd
strings rev seq yes expr bc dc factor numfmt shuf split csplit iconv dos2unix unix2dos base64 base32 sha1sum sha256sum
sha512sum md5sum shasum cksum b2sum tar gzip gunzip zcat bzip2 bunzip2 xz unxz zstd unzstd zip unzip 7z lz4 cpio ar
jq yq xmllint which whereis command_not_found clear tput stty tty reset printenv_ locale
make cmake ninja meson bazel bazelisk gradle gradlew mvn mvnw ant sbt lein go gofmt goimports golangci-lint staticcheck
govulncheck cargo rustc rustup rustfmt clippy-driver npm npx pnpm yarn corepack nvm tsc eslint prettier jest vitest
mocha webpack vite esbuild rollup turbo nx lerna pip pip3 pipx pytest tox nox poetry uv pdm black ruff flake8 mypy
pylint isort pre-commit bundle bundler gem rake rspec rubocop composer phpunit dotnet msbuild nuget swift swiftc
xcodebuild xcrun gcc g++ cc c++ clang clang++ ld lld gold as nm objdump readelf strip ranlib pkg-config autoconf
automake autoreconf libtool configure javac java jar kotlinc kotlin scalac mix elixir erl rebar3 ghc cabal stack
dune opam zig nim crystal dart flutter julia protoc buf sqlc swag mockgen stringer wire gotestsum ginkgo
docker podman docker-compose buildah skopeo kubectl helm kustomize kind minikube k9s terraform tofu terragrunt
packer vagrant ansible ansible-playbook pulumi aws gcloud az doctl flyctl heroku vercel netlify wrangler firebase
systemctl journalctl service launchctl brew apt apt-get apt-cache dpkg rpm dnf yum apk pacman zypper snap flatpak
port nix nix-shell nix-build openssl gpg gpg2 ssh-keygen ssh-add ssh-agent ssh-keyscan age sops cosign
hugo jekyll mkdocs sphinx-build pandoc asciidoctor shellcheck shfmt hadolint actionlint yamllint markdownlint
codespell typos cspell sqlite3 psql mysql redis-cli mongosh lsof ps pgrep pkill killall top htop vmstat iostat
free sync dmesg lscpu lsblk mount umount ip ifconfig ss netstat nslookup_ env_ tput true_ cloc tokei scc
wasm-pack trunk tauri expo react-native ionic cordova gatsby next nuxt astro remix svelte-kit ng vue
gh_ git_ hub glab tea jj hg svn fossil git-lfs delta difft meld vimdiff
coverage codecov bats tap nyc c8 istanbul pipenv hatch virtualenv conda mamba pyenv rbenv asdf mise rustc cargo-nextest
gunicorn uvicorn flask django-admin rails playwright cypress storybook lighthouse k6 ab wrk hey vegeta
xmlstarlet csvtool miller mlr sqlfluff alembic prisma drizzle-kit knex sequelize flyway liquibase
bq gsutil eksctl sam cdk serverless amplify supabase fly railway render doppler
ctest gcov lcov valgrind_ gdb_ lldb_ perf_ clang-format clang-tidy cppcheck iwyu include-what-you-use
swiftlint swiftformat ktlint detekt spotless checkstyle pmd scalafmt gofumpt revive errcheck ineffassign gosec
trivy grype syft snyk semgrep bandit safety pip-audit npm-audit cargo-audit osv-scanner gitleaks trufflehog
watchexec entr_ nodemon air reflex modd hyperfine time_ tree_ bat exa eza fzf htop_ ncdu duf dust procs zoxide
wget2_ aria2_ grpcurl_ ghz protoc-gen-go buf_ openapi-generator swagger-codegen redoc-cli spectral
envsubst`

var commandKinds = func() map[string]cmdKind {
	m := map[string]cmdKind{}
	for _, n := range strings.Fields(plainCommands) {
		if !strings.HasSuffix(n, "_") {
			m[n] = kindPlain
		}
	}
	add := func(k cmdKind, names string) {
		for _, n := range strings.Fields(names) {
			m[n] = k
		}
	}
	add(kindCd, "cd")
	add(kindSet, "set")
	add(kindPrintenv, "printenv")
	add(kindCompgen, "compgen")
	add(kindRead, "read mapfile readarray")
	add(kindEval, "eval")
	add(kindSource, "source .")
	add(kindTrap, "trap")
	add(kindAlias, "alias")
	add(kindCodeBuiltin, "enable fc bind complete compopt autoload zmodload emulate functions unfunction direnv")
	add(kindShell, "sh bash dash zsh ksh mksh ash fish tcsh csh yash")
	add(kindInterp, "python python2 python3 perl ruby node nodejs deno bun php lua luajit Rscript R tclsh wish expect osascript pwsh powershell jshell groovy irb gawk_")
	add(kindWrapper, "env nice ionice timeout stdbuf unbuffer time exec builtin taskset chrt chroot unshare nsenter strace ltrace valgrind torsocks proxychains proxychains4 sshpass dbus-run-session xvfb-run caffeinate firejail catchsegv chronic busybox doas_ npx_ flock runuser")
	add(kindDetach, "setsid nohup disown daemonize start-stop-daemon systemd-run")
	add(kindSudo, "sudo doas")
	add(kindStringRunner, "su watch script sg tmux screen")
	add(kindXargs, "xargs")
	add(kindFind, "find")
	add(kindParallel, "parallel")
	add(kindNet, "curl wget http https xh aria2c fetch nc ncat netcat socat telnet ftp sftp scp rsync ssh dig nslookup host ping whois sendmail mail openssl")
	add(kindJq, "jq gojq jaq")
	add(kindPrintf, "printf")
	add(kindGit, "git")
	add(kindGh, "gh")
	add(kindAwk, "awk gawk mawk nawk")
	add(kindSed, "sed gsed")
	add(kindPS, "ps")
	add(kindCredential, "op pass secret-tool keyring vault")
	add(kindCommand, "command")
	add(kindSchedule, "at batch crontab")
	delete(m, "gawk_")
	delete(m, "doas_")
	delete(m, "npx_")
	return m
}()

// systemDirs hold the system's programs: /usr/bin/curl is curl.
var systemDirs = set("/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin")

// writers write or delete their file operands.
var writers = map[string]string{"tee": "writes", "touch": "writes", "mkdir": "writes", "rm": "deletes",
	"rmdir": "deletes", "cp": "writes", "mv": "writes", "ln": "writes", "install": "writes", "truncate": "writes"}

// wrapperValueOptions are the options of wrappers that take a value.
var wrapperValueOptions = map[string]map[string]bool{
	"sudo":        set("-u", "-g", "-C", "-D", "-h", "-p", "-R", "-T", "-U", "--user", "--group", "--chdir", "--prompt"),
	"doas":        set("-u", "-C"),
	"env":         set("-u", "-C", "--unset", "--chdir"),
	"nice":        set("-n", "--adjustment"),
	"ionice":      set("-c", "-n", "-p", "--class", "--classdata"),
	"timeout":     set("-s", "-k", "--signal", "--kill-after"),
	"stdbuf":      set("-i", "-o", "-e"),
	"xargs":       set("-I", "-n", "-P", "-L", "-d", "-E", "-s", "-a", "--arg-file", "--delimiter", "--max-args", "--max-procs", "--replace", "--max-lines", "--eof"),
	"exec":        set("-a"),
	"time":        set("-f", "-o", "--format", "--output"),
	"strace":      set("-o", "-e", "-p", "-s", "-u", "-E", "-a", "-b", "-I", "-O", "-S", "-X", "-P"),
	"ltrace":      set("-o", "-e", "-p", "-s", "-u", "-n", "-a"),
	"sshpass":     set("-p", "-f", "-d", "-P"),
	"systemd-run": set("-p", "--property", "-u", "--unit", "--description", "--slice", "-E", "--setenv", "-M", "--machine", "-H", "--host"),
	"runuser":     set("-u", "-g", "-G", "--user", "--group"),
	"flock":       set("-w", "--timeout", "-E", "--conflict-exit-code"),
	"unshare":     set("-S", "-G", "--setuid", "--setgid", "-R", "-w", "--root", "--wd"),
	"nsenter":     set("-t", "--target", "-S", "-G", "--setuid", "--setgid"),
	"xvfb-run":    set("-n", "-s", "-f", "-e", "-p", "--server-num", "--server-args"),
	"firejail":    set(),
	"caffeinate":  set("-t", "-w"),
	"chrt":        set(),
	"setsid":      set(),
}

// wrapperPositionals: operands a wrapper takes before the command
// (timeout's duration, chroot's directory, flock's file).
var wrapperPositionals = map[string]int{"timeout": 1, "chroot": 1, "taskset": 1, "chrt": 1, "flock": 1}

// interpCodeOptions are the options that give an interpreter its code.
var interpCodeOptions = map[string]map[string]bool{
	"python": set("-c"), "perl": set("-e", "-E"), "ruby": set("-e"), "node": set("-e", "--eval", "-p", "--print"),
	"nodejs": set("-e", "--eval", "-p", "--print"), "deno": set("eval"), "bun": set("-e", "--eval", "-p", "--print"),
	"php": set("-r", "-B", "-R", "-E"), "lua": set("-e"), "luajit": set("-e"), "Rscript": set("-e"), "R": set("-e"),
	"tclsh": set(), "osascript": set("-e"), "pwsh": set("-c", "-Command", "-EncodedCommand", "-e"),
	"powershell": set("-c", "-Command", "-EncodedCommand", "-e"), "expect": set("-c"), "irb": set(),
	"jshell": set(), "groovy": set("-e"), "wish": set(),
}

// network explains a program that connects somewhere: its destinations by
// host, and marks secret data it sends.
func (w *walker) network(c *simpleCmd, name string, i, end int) string {
	// A download that saves a file: what the script runs after it may be
	// that file or come from it.
	switch name {
	case "curl":
		for k, o := range c.vals[i+1 : end] {
			if c.fixed[i+1+k] && (o == "-O" || o == "--remote-name" || o == "--remote-name-all" || len(o) > 2 && o[0] == '-' && o[1] != '-' && strings.HasSuffix(o, "O")) {
				w.downloaded = true
			}
		}
	case "wget":
		w.downloaded = !slices.ContainsFunc(c.vals[i+1:end], func(o string) bool {
			return o == "-O-" || o == "-qO-" || o == "-O" || o == "--output-document=-" || strings.HasSuffix(o, "O-")
		}) || w.downloaded
	case "aria2c", "fetch":
		w.downloaded = true
	}
	ops, fixed := c.vals[i+1:end], c.fixed[i+1:end]
	var hosts []string
	dynamic := false
	var sends []string // what the command sends besides its words
	readsStdin := false
	positional := 0
	valued := netValueOptions[name]
	for k := 0; k < len(ops); k++ {
		o := ops[k]
		if !fixed[k] {
			if sh := w.show(c.words[i+1+k]); strings.Contains(sh, "://") || positional == 0 && !strings.HasPrefix(strings.TrimLeft(sh, `"'`), "-") {
				dynamic = true
			}
			continue
		}
		if strings.HasPrefix(o, "-") && len(o) > 1 {
			opt, val, hasVal := strings.Cut(o, "=")
			if !hasVal && valued[opt] && k+1 < len(ops) {
				val, hasVal = ops[k+1], fixed[k+1]
				if !fixed[k+1] && (opt == "--url" || opt == "-x" || opt == "--proxy" || opt == "--connect-to" || opt == "--resolve") {
					dynamic = true
				}
				k++
			}
			if !hasVal && len(opt) > 2 && opt[1] != '-' && valued[opt[:2]] {
				opt, val, hasVal = opt[:2], opt[2:], true
			}
			if hasVal {
				w.netOption(c, name, opt, val, &hosts, &sends, &readsStdin)
			} else if valued[opt] && k < len(ops) && !fixed[k] && strings.HasPrefix(strings.TrimLeft(w.show(c.words[i+1+k]), `"'`), "@") {
				sends = append(sends, "a file decided at run time ("+w.show(c.words[i+1+k])+")")
			}
			continue
		}
		positional++
		if h := hostOf(name, o, positional); h != "" {
			hosts = append(hosts, h)
			if i := strings.Index(o, "://"); i >= 0 {
				auth, _, _ := strings.Cut(o[i+3:], "/")
				if at := strings.LastIndexByte(auth, '@'); at >= 0 && strings.Contains(auth[:at], ".") {
					w.mark(c.line, true, "the URL %s puts %s before an @: it connects to %s", w.display(o), w.display(auth[:at]), w.display(h))
				}
			}
		}
		if name == "socat" {
			if u := strings.ToUpper(o); strings.HasPrefix(u, "EXEC:") || strings.HasPrefix(u, "SYSTEM:") || strings.Contains(u, ",EXEC") {
				w.reason(c.line, true, "socat %s runs a program connected to the network", w.display(o))
			}
		}
		if (name == "scp" || name == "rsync") && !strings.Contains(o, ":") {
			sends = append(sends, w.fileData(o))
		}
		if name == "ssh" && positional > 1 {
			break
		}
	}
	switch name {
	case "nc", "ncat", "netcat", "socat", "telnet", "ssh", "openssl", "sendmail", "mail", "ftp", "sftp":
		readsStdin = true
	}
	if name == "ssh" {
		w.sshOptions(c, ops, hosts)
	}
	for k, o := range ops {
		if fixed[k] && (o == "-k" || o == "--insecure" || o == "--no-check-certificate" || name == "curl" && len(o) > 2 && o[0] == '-' && o[1] != '-' && strings.ContainsRune(o, 'k') && !strings.ContainsAny(o, "oOdHFTuxXAeKbcwmCrzyYE")) {
			w.mark(c.line, len(c.named) > 0, "%s %s does not verify the host's certificate, so another host can pose as it", name, w.display(o))
		}
	}
	if dynamic {
		hosts = append(hosts, "(a destination decided at run time)")
	}
	hosts = uniq(hosts)
	for _, h := range hosts {
		w.host(h, name, c.line)
	}
	dest := strings.Join(hosts, ", ")
	if dest == "" {
		dest = "(no destination the device can see)"
	}
	if len(c.named) > 0 {
		w.mark(c.line, true, "sends secret %s to %s: %s", strings.Join(uniq(c.named), ", "), dest, c.text)
	} else if t := firstTaint(c.taints[i:end]); t != "" {
		w.mark(c.line, true, "sends secret data (%s) to %s: %s", w.display(t), dest, c.text)
	}
	if readsStdin {
		switch {
		case c.in.taint != "":
			w.mark(c.line, true, "sends its input, secret data (from %s), to %s: %s", w.display(c.in.taint), dest, c.text)
		case c.in.stdin && len(w.stdinSecrets) > 0:
			w.mark(c.line, true, "sends standard input, which carries secret %s, to %s: %s", strings.Join(w.stdinSecrets, ", "), dest, c.text)
		case c.in.piped != "" && c.in.piped != "here-document" && c.in.piped != "here-string":
			w.mark(c.line, false, "sends the output of %s to %s", c.in.piped, dest)
		}
	}
	for _, s := range sends {
		if s == "" {
			continue
		}
		secret := strings.HasPrefix(s, "secret data")
		w.mark(c.line, secret, "sends %s to %s: %s", s, dest, c.text)
	}
	return ""
}

// netOption reads one option of a network program: a destination, data
// sent from a file or standard input, a configuration file.
func (w *walker) netOption(c *simpleCmd, name, opt, val string, hosts, sends *[]string, readsStdin *bool) {
	switch name {
	case "curl":
		switch opt {
		case "-o", "--output":
			if val != "-" {
				w.written[w.resolve(val)] = "downloaded"
				w.downloaded = true
			}
		case "--url":
			if h := hostOf(name, val, 1); h != "" {
				*hosts = append(*hosts, h)
			}
		case "-x", "--proxy", "--preproxy":
			if h := hostOf(name, val, 1); h != "" {
				*hosts = append(*hosts, h+" (proxy)")
			}
		case "--connect-to", "--resolve":
			*hosts = append(*hosts, w.display(val)+" ("+opt+" redirects the connection)")
		case "-d", "--data", "--data-binary", "--data-urlencode", "--json", "--data-ascii":
			if i := strings.IndexByte(val, '@'); i >= 0 && (i == 0 || opt == "--data-urlencode") {
				w.dataFile(val[i+1:], sends, readsStdin)
			}
		case "-F", "--form":
			if _, v, ok := strings.Cut(val, "="); ok && (strings.HasPrefix(v, "@") || strings.HasPrefix(v, "<")) {
				f, _, _ := strings.Cut(v[1:], ";")
				w.dataFile(f, sends, readsStdin)
			}
		case "-T", "--upload-file":
			w.dataFile(val, sends, readsStdin)
		case "-K", "--config":
			w.reason(c.line, false, "curl reads options from the file %s, which the device does not see (it can send any file)", w.display(val))
		case "-H", "--header":
			if strings.HasPrefix(val, "@") {
				w.dataFile(val[1:], sends, readsStdin)
			}
		}
	case "nc", "ncat", "netcat":
		if opt == "-e" || opt == "-c" || opt == "--exec" || opt == "--sh-exec" || opt == "--lua-exec" {
			w.reason(c.line, true, "%s %s runs %s with its input and output on the network", name, opt, w.display(val))
		}
	case "openssl":
		if opt == "-connect" {
			*hosts = append(*hosts, stripPort(val))
		}
	case "wget":
		switch opt {
		case "-O", "--output-document":
			if val != "-" {
				w.written[w.resolve(val)] = "downloaded"
			}
		case "--post-file", "--body-file":
			w.dataFile(val, sends, readsStdin)
		case "-e", "--execute":
			w.reason(c.line, false, "wget -e runs a configuration command: %s", w.display(val))
		case "-i", "--input-file":
			if val == "-" {
				*readsStdin = true
			}
		}
	case "ssh", "scp", "sftp", "rsync":
		if opt == "-o" {
			w.sshOption(c, val)
		}
		if opt == "-e" && name == "rsync" {
			w.reason(c.line, false, "rsync -e runs %s as its remote shell", w.display(val))
		}
		if opt == "-J" {
			*hosts = append(*hosts, hostOf("ssh", val, 1)+" (jump host)")
		}
	}
}

// dataFile notes a file (or standard input, "-") a network program sends.
func (w *walker) dataFile(f string, sends *[]string, readsStdin *bool) {
	if f == "-" || f == "/dev/stdin" {
		*readsStdin = true
		return
	}
	*sends = append(*sends, w.fileData(f))
}

func (w *walker) fileData(f string) string {
	switch {
	case procEnviron(f):
		return "secret data (a process's whole environment, " + w.display(f) + ")"
	case credentialFile(f):
		return "secret data (the credential file " + w.display(f) + ")"
	case w.tainted[w.resolve(f)]:
		return "secret data (the file " + w.display(f) + ", written with secret data earlier in the script)"
	}
	return "the file " + w.display(f)
}

var netValueOptions = map[string]map[string]bool{
	"curl": set("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode", "--data-ascii", "--json", "-F", "--form",
		"-H", "--header", "-o", "--output", "-X", "--request", "-u", "--user", "-A", "--user-agent", "-e", "--referer",
		"-T", "--upload-file", "-K", "--config", "--url", "-x", "--proxy", "--preproxy", "--resolve", "--connect-to",
		"--cacert", "--capath", "-E", "--cert", "--key", "-b", "--cookie", "-c", "--cookie-jar", "-w", "--write-out",
		"-m", "--max-time", "--connect-timeout", "--retry", "--retry-delay", "--retry-max-time", "-C", "--continue-at",
		"-r", "--range", "-z", "--time-cond", "--limit-rate", "-y", "--speed-time", "-Y", "--speed-limit",
		"--max-filesize", "--interface", "--dns-servers", "--oauth2-bearer", "--proto", "--proto-redir", "-D", "--dump-header",
		"--stderr", "--trace", "--trace-ascii", "--output-dir", "--variable", "--expand-url", "--create-dirs-mode"),
	"wget": set("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P", "--directory-prefix",
		"--header", "--post-data", "--post-file", "--body-data", "--body-file", "--method", "-U", "--user-agent",
		"--user", "--password", "-e", "--execute", "-i", "--input-file", "-t", "--tries", "-T", "--timeout", "-w", "--wait",
		"--referer", "--load-cookies", "--save-cookies", "-l", "--level", "-A", "-R", "-D", "--domains"),
	"ssh":  set("-b", "-c", "-D", "-E", "-e", "-F", "-I", "-i", "-J", "-L", "-l", "-m", "-O", "-o", "-p", "-Q", "-R", "-S", "-W", "-w", "-B"),
	"scp":  set("-c", "-F", "-i", "-J", "-l", "-o", "-P", "-S", "-D", "-X"),
	"sftp": set("-B", "-b", "-c", "-D", "-F", "-i", "-J", "-l", "-o", "-P", "-R", "-S", "-s", "-X"),
	"rsync": set("-e", "--rsh", "--exclude", "--include", "--filter", "-f", "--rsync-path", "--port", "--password-file",
		"--log-file", "--chmod", "--chown", "--timeout", "--bwlimit", "--backup-dir", "--suffix", "-T", "--temp-dir", "--files-from"),
	"nc":      set("-p", "-s", "-w", "-i", "-x", "-X", "-e", "-c", "-q"),
	"ncat":    set("-p", "-s", "-w", "-i", "-x", "-e", "-c", "--exec", "--sh-exec", "--proxy", "-d", "--delay"),
	"netcat":  set("-p", "-s", "-w", "-i", "-x", "-X", "-e", "-c", "-q"),
	"http":    set("-a", "--auth", "-A", "--auth-type", "--session", "-o", "--output", "--verify", "--cert", "--cert-key", "--proxy", "--timeout"),
	"https":   set("-a", "--auth", "-A", "--auth-type", "--session", "-o", "--output", "--verify", "--cert", "--cert-key", "--proxy", "--timeout"),
	"xh":      set("-a", "--auth", "-A", "--auth-type", "--session", "-o", "--output", "--verify", "--cert", "--cert-key", "--proxy", "--timeout"),
	"dig":     set("-b", "-c", "-f", "-k", "-p", "-q", "-t", "-x", "-y"),
	"openssl": set("-connect", "-servername", "-proxy", "-cert", "-key", "-CAfile", "-in", "-out"),
	"ping":    set("-c", "-i", "-I", "-s", "-t", "-W", "-w", "-p", "-Q"),
}

// sshOptions: SendEnv sends environment variables; ProxyCommand,
// LocalCommand and friends run local commands; a remote command runs on
// the host.
func (w *walker) sshOptions(c *simpleCmd, ops []string, hosts []string) {
	for k := 0; k < len(ops); k++ {
		if strings.HasPrefix(ops[k], "-o") && len(ops[k]) > 2 {
			w.sshOption(c, ops[k][2:])
		}
	}
}

func (w *walker) sshOption(c *simpleCmd, val string) {
	key, v, _ := strings.Cut(strings.TrimSpace(val), "=")
	if !strings.Contains(val, "=") {
		key, v, _ = strings.Cut(strings.TrimSpace(val), " ")
	}
	switch strings.ToLower(strings.TrimSpace(key)) {
	case "sendenv", "setenv":
		w.mark(c.line, true, "ssh -o %s sends environment variables (%s) to the remote host, secret ones included if they match", w.display(key), w.display(v))
	case "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "proxyusefdpass", "remotecommand", "match":
		w.reason(c.line, false, "ssh -o %s runs a command the device does not follow: %s", w.display(key), w.display(v))
	}
}

// netPath: bash's /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT connect.
func (w *walker) netPath(word *syntax.Word, line int, what string) {
	v, ok := w.value(word)
	if !ok {
		s := w.show(word)
		if strings.Contains(s, "/dev/tcp/") || strings.Contains(s, "/dev/udp/") {
			w.host("(a destination decided at run time)", "/dev/tcp", line)
			w.mark(line, true, "a redirection connects to the network at a destination decided at run time: %s", s)
		}
		return
	}
	for _, p := range []string{"/dev/tcp/", "/dev/udp/"} {
		if rest, ok := strings.CutPrefix(v, p); ok {
			h, _, _ := strings.Cut(rest, "/")
			w.host(h, "a "+strings.Trim(p, "/")+" redirection", line)
			w.mark(line, len(w.envSecrets)+len(w.stdinSecrets) > 0, "a redirection connects to %s through %s", w.display(h), w.display(p))
		}
	}
}

// hostOf returns the host a network program's operand names, "" if none.
func hostOf(name, o string, positional int) string {
	if i := strings.Index(o, "://"); i >= 0 {
		rest := o[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end >= 0 {
			rest = rest[:end]
		}
		if at := strings.LastIndexByte(rest, '@'); at >= 0 {
			rest = rest[at+1:]
		}
		return stripPort(rest)
	}
	switch name {
	case "ssh", "scp", "sftp", "rsync", "git":
		if name == "ssh" && positional != 1 {
			return ""
		}
		h := o
		if name != "ssh" {
			colon := strings.IndexByte(o, ':')
			slash := strings.IndexByte(o, '/')
			if colon < 0 || slash >= 0 && slash < colon {
				return ""
			}
			h = o[:colon]
		}
		if at := strings.LastIndexByte(h, '@'); at >= 0 {
			h = h[at+1:]
		}
		return h
	case "nc", "ncat", "netcat", "telnet", "dig", "nslookup", "host", "ping", "whois", "ftp":
		if positional == 1 {
			return strings.TrimPrefix(o, "@")
		}
	case "curl", "wget", "http", "https", "xh", "aria2c", "fetch":
		if positional >= 1 && (strings.Contains(o, ".") || strings.HasPrefix(o, "localhost")) && !strings.Contains(o, "=") {
			h, _, _ := strings.Cut(o, "/")
			return stripPort(h)
		}
	case "socat":
		for _, p := range []string{"TCP:", "TCP4:", "TCP6:", "OPENSSL:", "UDP:", "SSL:", "tcp:", "openssl:", "udp:"} {
			if rest, ok := strings.CutPrefix(o, p); ok {
				h, _, _ := strings.Cut(rest, ":")
				return h
			}
		}
	}
	return ""
}

func stripPort(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[:i+1]
		}
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i]
	}
	return h
}

// host records a destination and marks one that imitates another: a
// name in punycode, or one mixing letters of several scripts (a Cyrillic
// і in api.gіthub.com).
func (w *walker) host(h, by string, line int) {
	shown := w.display(h)
	key := shown + " (" + by + ")"
	if !w.hostSeen[key] {
		w.hostSeen[key] = true
		if len(w.hosts) < maxListed {
			w.hosts = append(w.hosts, fmt.Sprintf("%s (%s, line %d)", shown, w.display(by), line))
		}
	}
	lower := strings.ToLower(h)
	if strings.HasPrefix(lower, "xn--") || strings.Contains(lower, ".xn--") {
		w.mark(line, true, "the host %s is written in punycode (xn--): an international name that can imitate another host", shown)
	}
	for _, known := range wellKnownDomains {
		if i := strings.Index(lower, known+"."); i >= 0 && (i == 0 || lower[i-1] == '.') {
			w.mark(line, true, "the host %s is not %s: it is a name under %s", shown, known, w.display(h[i+len(known)+1:]))
			break
		}
	}
	if scripts := letterScripts(h); len(scripts) > 1 {
		w.mark(line, true, "the host %s mixes %s letters: it is not the host it looks like", shown, strings.Join(scripts, " and "))
	} else if len(scripts) == 1 && scripts[0] != "Latin" {
		w.mark(line, true, "the host %s is written in %s letters", shown, scripts[0])
	}
	for _, r := range h {
		if r > unicode.MaxASCII && !unicode.IsLetter(r) {
			w.mark(line, true, "the host %s contains the non-ASCII character %U", shown, r)
			break
		}
	}
}

// wellKnownDomains are hosts secrets are often for; one followed by more
// labels (api.github.com.evil.example) is not that host.
var wellKnownDomains = []string{"github.com", "githubusercontent.com", "gitlab.com", "bitbucket.org", "amazonaws.com",
	"googleapis.com", "azure.com", "microsoft.com", "npmjs.org", "pypi.org", "docker.io", "docker.com", "slack.com", "google.com"}

var hostScripts = []struct {
	name  string
	table *unicode.RangeTable
}{
	{"Latin", unicode.Latin}, {"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Armenian", unicode.Armenian},
	{"Hebrew", unicode.Hebrew}, {"Arabic", unicode.Arabic}, {"Han", unicode.Han}, {"Cherokee", unicode.Cherokee},
}

// letterScripts lists the scripts of a host's letters, in a fixed order.
func letterScripts(h string) []string {
	var out []string
	for _, s := range hostScripts {
		for _, r := range h {
			if unicode.IsLetter(r) && unicode.Is(s.table, r) {
				out = append(out, s.name)
				break
			}
		}
	}
	for _, r := range h {
		if unicode.IsLetter(r) && !slices.ContainsFunc(hostScripts, func(s struct {
			name  string
			table *unicode.RangeTable
		}) bool {
			return unicode.Is(s.table, r)
		}) {
			out = append(out, "other")
			break
		}
	}
	return out
}

// readsFile checks a file a command reads through a redirection and
// returns the secret data it holds, if any.
func (w *walker) readsFile(f string, line int, how string) string {
	switch {
	case procEnviron(f):
		return "the whole environment" // marked by text()
	case credentialFile(f):
		w.mark(line, true, "reads the credential file %s", w.display(f))
		return "the credential file " + f
	case w.tainted[w.resolve(f)]:
		return "the file " + f
	}
	return ""
}

// credentialFile: files that hold credentials of other tools.
func credentialFile(f string) bool {
	if !strings.Contains(f, ".") && !strings.Contains(f, "/etc/shadow") {
		return false
	}
	for _, s := range []string{".netrc", ".git-credentials", ".aws/credentials", ".config/gh", ".docker/config.json",
		".ssh/", ".npmrc", ".pypirc", ".kube/config", ".config/gcloud", ".gnupg", ".agentknock", "/etc/shadow", ".vault-token",
		".password-store", ".cargo/credentials", ".gem/credentials", ".terraform.d/credentials"} {
		if strings.Contains(f, s) {
			return true
		}
	}
	if base := path.Base(f); base == ".env" || strings.HasPrefix(base, ".env.") && !strings.HasSuffix(base, ".example") && !strings.HasSuffix(base, ".sample") && !strings.HasSuffix(base, ".template") {
		return true
	}
	for _, dir := range []string{".ssh", ".aws", ".gnupg", ".kube", ".docker"} {
		if f == "~/"+dir || strings.HasSuffix(f, "/"+dir) {
			return true
		}
	}
	return false
}

// git checks the options and subcommands that make git run a program, and
// the remotes it connects to.
func (w *walker) git(c *simpleCmd, i, end int) string {
	w.unseen["the repository's git configuration and hooks"] = true
	k := i + 1
	for k < end {
		v := c.vals[k]
		if !c.fixed[k] {
			w.reason(c.line, false, "git option or subcommand decided at run time: %s", w.show(c.words[k]))
			return ""
		}
		switch {
		case v == "-c" && k+1 < end:
			if !c.fixed[k+1] {
				w.reason(c.line, false, "git -c sets configuration decided at run time")
			} else {
				w.gitConfig(c, c.vals[k+1])
			}
			k += 2
			continue
		case strings.HasPrefix(v, "--config-env"):
			w.reason(c.line, false, "git --config-env sets configuration from an environment variable")
		case strings.HasPrefix(v, "--exec-path="):
			w.reason(c.line, false, "git %s changes where git finds the programs it runs", w.display(v))
		case v == "-C" || v == "--git-dir" || v == "--work-tree" || v == "--namespace":
			k += 2
			continue
		case strings.HasPrefix(v, "-"):
		default:
			return w.gitSub(c, v, k+1, end)
		}
		k++
	}
	return ""
}

// safeGitConfig are configuration keys (prefixes) that run no program.
var safeGitConfig = []string{"user.", "color.", "advice.", "init.defaultbranch", "core.quotepath", "core.autocrlf",
	"core.filemode", "core.longpaths", "safe.directory", "commit.gpgsign", "tag.gpgsign", "pull.rebase", "pull.ff",
	"gc.auto", "log.", "format.", "merge.conflictstyle", "diff.renames", "protocol.version", "http.version",
	"fetch.prune", "push.default", "push.autosetupremote", "rebase.autostash", "maintenance.auto", "feature.manyfiles",
	"credential.helper=", "column.ui"}

func (w *walker) gitConfig(c *simpleCmd, kv string) {
	key, val, _ := strings.Cut(kv, "=")
	lk := strings.ToLower(key)
	if strings.HasPrefix(lk, "alias.") && strings.HasPrefix(strings.TrimSpace(val), "!") {
		w.reason(c.line, false, "git -c %s defines an alias that runs a shell command", w.display(kv))
		return
	}
	for _, s := range safeGitConfig {
		if strings.HasSuffix(s, "=") {
			if lk+"=" == s && val == "" {
				return
			}
			continue
		}
		if strings.HasPrefix(lk, s) {
			return
		}
	}
	w.reason(c.line, false, "git -c %s sets configuration that can make git run a program; the device vouches only for keys that run none", w.display(kv))
}

func (w *walker) gitSub(c *simpleCmd, sub string, k, end int) string {
	ops, fixed := c.vals[k:end], c.fixed[k:end]
	for j, o := range ops {
		if !fixed[j] {
			continue
		}
		switch {
		case o == "--upload-pack" || o == "-u" && (sub == "clone" || sub == "fetch" || sub == "ls-remote" || sub == "pull") ||
			o == "--receive-pack" || o == "--exec" || strings.HasPrefix(o, "--upload-pack=") || strings.HasPrefix(o, "--receive-pack=") || strings.HasPrefix(o, "--exec="):
			w.reason(c.line, false, "git %s %s runs the program it names", sub, w.display(o))
		case strings.HasPrefix(o, "ext::") || strings.HasPrefix(o, "fd::"):
			w.reason(c.line, false, "git remote %s runs a command as its transport", w.display(o))
		case o == "-c" && j+1 < len(ops) && fixed[j+1] && sub == "clone":
			w.gitConfig(c, ops[j+1])
		}
		if !gitRemoteSubcommands[sub] || strings.HasPrefix(o, "-") || strings.ContainsAny(o, " \t") {
			continue
		}
		if h := hostOf("git", o, 1); h != "" && (strings.Contains(o, "://") || strings.Contains(h, ".") || strings.Contains(o, "@")) {
			w.host(h, "git", c.line)
		}
	}
	switch sub {
	case "config":
		var pos []string
		for j, o := range ops {
			if fixed[j] && !strings.HasPrefix(o, "-") {
				pos = append(pos, o)
			}
		}
		if len(pos) >= 2 {
			w.gitConfig(c, pos[0]+"="+pos[1])
		}
	case "submodule":
		if len(ops) > 0 && ops[0] == "foreach" {
			text, ok := joinFixed(ops[1:], fixed[1:])
			if !ok {
				w.reason(c.line, false, "git submodule foreach runs code built at run time")
				break
			}
			w.nested(strings.TrimPrefix(text, "--recursive "), c.depth, c.line, "git submodule foreach runs, in each submodule:", syntax.LangPOSIX, false)
		}
	case "rebase":
		for j, o := range ops {
			if (o == "-x" || o == "--exec") && j+1 < len(ops) {
				if !fixed[j+1] {
					w.reason(c.line, false, "git rebase --exec runs code built at run time")
					continue
				}
				w.nested(ops[j+1], c.depth, c.line, "git rebase runs, after each commit:", syntax.LangPOSIX, false)
			}
		}
	case "bisect":
		if len(ops) > 1 && ops[0] == "run" {
			w.emit(c.depth+1, "git bisect runs, for each commit:")
			w.runAt(&simpleCmd{words: c.words, vals: c.vals, fixed: c.fixed, taints: c.taints, line: c.line, depth: c.depth + 1, text: c.text}, k+1, end)
		}
	case "filter-branch", "difftool", "mergetool":
		w.reason(c.line, false, "git %s runs programs or code the device does not follow", sub)
	case "credential":
		w.mark(c.line, true, "git credential prints stored credentials, so its output is secret data")
		return "git credential"
	case "push", "pull", "fetch", "clone", "ls-remote", "remote":
		if !slices.ContainsFunc(ops, func(o string) bool { return strings.Contains(o, "://") || strings.Contains(o, "@") }) {
			w.unseen["the git remote's address (from the repository's configuration)"] = true
		}
	}
	return ""
}

var gitRemoteSubcommands = set("clone", "fetch", "pull", "push", "ls-remote", "remote", "submodule", "archive")

// gh: `gh auth token` prints the token; aliases and extensions run code.
func (w *walker) gh(c *simpleCmd, ops []string) string {
	host := "github.com"
	for k, o := range ops {
		if o == "--hostname" && k+1 < len(ops) {
			host = ops[k+1]
		}
	}
	if len(ops) > 0 && ops[0] == "api" {
		host = "api." + host
	}
	w.host(host, "gh", c.line)
	if h := strings.TrimPrefix(host, "api."); h != "github.com" {
		w.mark(c.line, len(w.envSecrets) > 0, "gh talks to %s, not github.com, with the GitHub credentials it has", w.display(h))
	}
	if len(ops) >= 2 && ops[0] == "auth" && (ops[1] == "token" || slices.Contains(ops, "-t") || slices.Contains(ops, "--show-token")) {
		w.mark(c.line, true, "%s prints a GitHub token, so its output is secret data", c.text)
		return "gh auth token"
	}
	if len(ops) > 0 && (ops[0] == "alias" || ops[0] == "extension" || ops[0] == "ext") {
		w.reason(c.line, false, "gh %s runs commands the device does not follow", w.display(ops[0]))
	}
	if len(c.named) > 0 {
		w.mark(c.line, true, "sends secret %s to %s: %s", strings.Join(uniq(c.named), ", "), w.display(host), c.text)
	}
	return ""
}

// awk: a program that runs commands (system, pipes) is not understood; one
// that reads ENVIRON reads the whole environment.
func (w *walker) awk(c *simpleCmd, name string, ops []string, fixed []bool) string {
	for k := 0; k < len(ops); k++ {
		o := ops[k]
		switch {
		case o == "-f" || strings.HasPrefix(o, "--file"):
			w.reason(c.line, false, "%s runs a program from a file the device does not see", name)
			return ""
		case o == "-v" || o == "-F":
			k++
			continue
		case strings.HasPrefix(o, "-"):
			continue
		}
		if !fixed[k] {
			w.reason(c.line, false, "%s runs a program built at run time", name)
			return ""
		}
		prog := o
		if strings.Contains(prog, "system") || strings.Contains(prog, "getline") || pipeInAwk(prog) {
			w.reason(c.line, false, "the %s program runs commands (system, getline or a pipe): %s", name, w.display(prog))
		}
		if strings.Contains(prog, "ENVIRON") || strings.Contains(prog, "PROCINFO") {
			w.mark(c.line, true, "the %s program reads the whole environment (ENVIRON), secret variables included", name)
			return "the whole environment"
		}
		return ""
	}
	return ""
}

func pipeInAwk(prog string) bool {
	inStr := false
	for i := 0; i < len(prog); i++ {
		switch prog[i] {
		case '\\':
			i++
		case '"':
			inStr = !inStr
		case '|':
			if !inStr && (i+1 >= len(prog) || prog[i+1] != '|') && (i == 0 || prog[i-1] != '|') {
				return true
			}
		}
	}
	return false
}

// sed: GNU sed's e command and s///e flag run commands; w writes files.
func (w *walker) sed(c *simpleCmd, ops []string, fixed []bool) {
	var scripts []string
	for k := 0; k < len(ops); k++ {
		o := ops[k]
		switch {
		case o == "-f" || strings.HasPrefix(o, "--file"):
			w.reason(c.line, false, "sed runs a script from a file the device does not see")
			return
		case o == "-e" || o == "--expression":
			if k+1 < len(ops) {
				if !fixed[k+1] {
					w.reason(c.line, false, "sed runs a script built at run time")
					return
				}
				scripts = append(scripts, ops[k+1])
				k++
			}
		case strings.HasPrefix(o, "-"):
		default:
			if len(scripts) == 0 {
				if !fixed[k] {
					w.reason(c.line, false, "sed runs a script built at run time")
					return
				}
				scripts = append(scripts, o)
			}
		}
	}
	for _, s := range scripts {
		if sedRuns(s) {
			w.reason(c.line, false, "the sed script runs commands (the e command or flag): %s", w.display(s))
		}
	}
}

// sedRuns reports GNU sed's e command or the e flag of s.
func sedRuns(s string) bool {
	i := 0
	for i < len(s) {
		for i < len(s) && strings.IndexByte(" \t\n;{}!", s[i]) >= 0 {
			i++
		}
		// an address: digits, $, /re/, ranges
		for i < len(s) {
			switch {
			case s[i] >= '0' && s[i] <= '9' || s[i] == '$' || s[i] == ',' || s[i] == '~' || s[i] == '+' || s[i] == ' ' || s[i] == '!':
				i++
				continue
			case s[i] == '/':
				j := i + 1
				for j < len(s) && s[j] != '/' {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				i = j + 1
				continue
			}
			break
		}
		if i >= len(s) {
			return false
		}
		switch s[i] {
		case 'e':
			return true
		case 's', 'y':
			if i+1 >= len(s) {
				return false
			}
			d := s[i+1]
			j, parts := i+2, 0
			for j < len(s) && parts < 2 {
				if s[j] == '\\' {
					j += 2
					continue
				}
				if s[j] == d {
					parts++
				}
				j++
			}
			for j < len(s) && strings.IndexByte("gpiImMwe0123456789", s[j]) >= 0 {
				if s[j] == 'e' {
					return true
				}
				if s[j] == 'w' {
					break
				}
				j++
			}
			i = j
		case 'a', 'i', 'c', 'r', 'R', 'w', 'W', 'b', 't', 'T', ':':
			for i < len(s) && s[i] != '\n' && s[i] != ';' {
				i++
			}
		default:
			i++
		}
	}
	return false
}
