// The analysis entry point (design: "What the device tells the person"):
// an Analyzer holds the loaded tables and the executable hash cache; one
// Analyze reads the request, finds the script it runs (trusting the
// executable, never argv[0]), walks it or the argv, and assembles the
// verdict, the findings most severe first, the secrets' readers, what a
// pin cannot bind, and the class.
package commands

import (
	"cmp"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Analyzer is the command model with its caches. It is safe for
// concurrent use. Create one with New and keep it (serve does): it
// remembers the hashes of executables it compared with this host's files.
type Analyzer struct {
	cat    *catalog
	errs   []error
	hashes *hashCache
}

// New returns an Analyzer over the embedded tables.
func New() *Analyzer {
	c, errs := defaultCatalog()
	return &Analyzer{cat: c, errs: errs, hashes: &hashCache{}}
}

// Analyze returns the command model's account of one invocation, with a
// fresh Analyzer (no hash remembered from an earlier call).
func Analyze(r Request) *Analysis {
	return New().Analyze(r)
}

// Analyze returns the command model's account of one invocation.
func (z *Analyzer) Analyze(r Request) (a *Analysis) {
	a = &Analysis{Readers: map[string][]string{}}
	// It runs inside serve on what a client sent: a parser bug must not
	// take the device down (the fuzz test has found none).
	defer func() {
		if p := recover(); p != nil {
			a = &Analysis{Readers: map[string][]string{}, Class: ClassOther, Why: "possibly irreversible: not understood",
				Reasons: []Finding{{Severity: SeverityRunsUnseen, Text: "the parser failed on this script (" + Literal(fmt.Sprint(p)) + ")"}}}
		}
	}()
	if len(z.errs) > 0 || z.cat == nil {
		msg := "the device's command tables do not load"
		if len(z.errs) > 0 {
			msg += ": " + z.errs[0].Error()
		}
		a.Reasons = []Finding{{Severity: SeverityRunsUnseen, Text: msg}}
		a.Class, a.Why = ClassOther, "possibly irreversible: not understood"
		return a
	}
	deadline := newDeadline()
	src, shell := z.findScript(&r)
	var w *walker
	switch {
	case src.script != nil:
		s := src.script
		a.Heading, a.Trust = scriptHeading(s), src.trust
		text, standIn, ok := crStandIn(s.Text)
		w = newWalker(z, z.cat, a, s.Lang, r.Dir, r.Secrets, deadline, standIn, len(text))
		w.dash = s.Shell == "dash" || s.Shell == "ash"
		w.positionalNumbers(s.Params, s.From == "-c")
		if !ok {
			w.reason(SeverityRunsUnseen, 0, false, "the script contains carriage returns and every other control byte, so the device cannot follow its words")
			break
		}
		if r.ScriptMode {
			z.shebangUnbound(w, s)
		}
		for i, o := range s.Options {
			if o == "-x" || (strings.HasPrefix(o, "-") && !strings.HasPrefix(o, "--") && strings.ContainsRune(o, 'x')) ||
				(o == "xtrace" && i > 0 && strings.ContainsRune(s.Options[i-1], 'o')) {
				w.mark(SeverityExposes, 0, true, "shell option -x traces every command with its expanded words to stderr, secret values included")
			}
		}
		w.unit(text, 0, 0, flow{stdin: true})
		// What the shell reads before the script, listed after what the
		// script runs.
		w.shellStartup(s.Shell, s.Options, 0)
	case src.note != "":
		w = newWalker(z, z.cat, a, 0, r.Dir, r.Secrets, deadline, 0, 0)
		if shell != "" {
			// The executable is a shell with no -c script: its arguments
			// say what it reads (a script file, standard input).
			w.shell(z.directCmd(w, &r, shell), shell, 0, len(r.Argv))
		} else {
			w.reason(SeverityRunsUnseen, 0, false, "%s", src.note)
			if r.ScriptMode && r.Script != nil && len(r.Argv) > 0 {
				z.scriptProgramUnbound(w, &r, deadline)
			}
		}
	default:
		w = newWalker(z, z.cat, a, 0, r.Dir, r.Secrets, deadline, 0, 0)
		if len(r.Argv) == 0 {
			w.reason(SeverityRunsUnseen, 0, false, "the request has no argument vector")
			break
		}
		c := z.directCmd(w, &r, z.programName(&r))
		w.runAt(c, 0, len(c.ws))
	}
	w.finish()
	a.Understood = len(a.Reasons) == 0
	z.classify(a, &r, w)
	a.UnboundItems = w.unbound.finish(r.Dir)
	for _, u := range a.UnboundItems {
		a.Unbound = append(a.Unbound, u.Name+": "+u.Why)
	}
	return a
}

// programName is the program an argv run directly is: the executable's
// name (busybox runs the applet argv[0] names, and rustup the proxy it
// names: cargo, rustc and the others installed as links to rustup, the
// rustup book's "Proxies").
func (z *Analyzer) programName(r *Request) string {
	name := path.Base(r.Argv[0])
	if r.Executable != "" {
		name = path.Base(r.Executable)
	}
	if name == "busybox" && len(r.Argv) > 0 {
		name = path.Base(r.Argv[0])
	}
	if name == "rustup" && len(r.Argv) > 0 && rustupProxies[path.Base(r.Argv[0])] {
		name = path.Base(r.Argv[0])
	}
	return name
}

// rustupProxies are the tools rustup runs when started by their name.
var rustupProxies = setOf("cargo", "rustc", "rustdoc", "rustfmt", "cargo-fmt", "cargo-clippy", "clippy-driver", "cargo-miri", "rust-analyzer", "rust-gdb", "rust-lldb")

// scriptProgramUnbound: a script file run directly in a language the device
// does not explain (npm's npm-cli.js, a pip or pytest that pip installed,
// aws) is not understood, but a pin of it still lists what that program
// reads, as its table says for a program of the file's name, and the
// interpreter its #! line names (the file itself is bound by its hash).
func (z *Analyzer) scriptProgramUnbound(w *walker, r *Request, d deadline) {
	first, _, _ := strings.Cut(*r.Script, "\n")
	first = strings.TrimSuffix(first, "\r")
	if fields := strings.Fields(strings.TrimPrefix(first, "#!")); len(fields) > 0 {
		switch {
		case path.Base(fields[0]) != "env":
			w.unbound.add(fields[0], "the interpreter the #! line names: bound by its path, not by its contents", "")
		case len(fields) > 1 && !strings.HasPrefix(fields[1], "-"):
			w.unbound.viaPath = true
			w.unbound.add(path.Base(fields[1])+" via PATH", "the script's "+shellQuote(first)+" line lets PATH choose the interpreter when it runs", "")
		}
	}
	name := z.programName(r)
	if z.cat.byName[name] == nil {
		return
	}
	sub := newWalker(z, z.cat, &Analysis{Readers: map[string][]string{}}, 0, r.Dir, r.Secrets, d, 0, 0)
	c := z.directCmd(sub, r, name)
	sub.runAt(c, 0, len(c.ws))
	for _, u := range sub.unbound.items {
		w.unbound.add(u.Name, u.Why, u.Safer)
	}
	w.unbound.viaPath = w.unbound.viaPath || sub.unbound.viaPath
}

// directCmd is the request's own argv as one command, its first word the
// program name; every word is fixed (no shell expands it).
func (z *Analyzer) directCmd(w *walker, r *Request, name string) *simpleCmd {
	n := len(r.Argv)
	c := &simpleCmd{line: 0, direct: true, text: shellJoin(r.Argv), ws: make([]word, n), taints: make([]string, n), in: flow{stdin: true}}
	for i, v := range r.Argv {
		if i == 0 {
			v = name
		}
		c.ws[i] = word{val: v, fixed: true, prefix: v, shown: w.display(v)}
		if i > 0 {
			c.taints[i] = w.text(v, 0)
		}
	}
	return c
}

// findScript recognises the shell script an invocation runs, trusting the
// executable and never argv[0]: a -c argument is explained as shell code
// only when the executable is that shell. shell names the shell when the
// executable is one without a -c script.
func (z *Analyzer) findScript(r *Request) (src scriptSource, shell string) {
	if r.ScriptMode {
		if r.Script == nil {
			return scriptSource{note: "the script file's text was not sent by the client, so the device cannot tell what it runs"}, ""
		}
		return shebangScript(*r.Script, r.Executable, r.Argv[min(1, len(r.Argv)):]), ""
	}
	sh, trust, problem := z.shellOfExecutable(r)
	if problem != "" {
		return scriptSource{note: problem}, ""
	}
	if sh == "" || len(r.Argv) == 0 {
		return scriptSource{}, ""
	}
	s, note, stdin := shellArgs(sh, r.Argv[1:])
	if s == nil {
		return scriptSource{note: note, stdin: stdin}, sh
	}
	return scriptSource{script: s, trust: trust}, ""
}

// shebangUnbound: a script run directly is bound by its hash; its
// interpreter is not, and with #!/usr/bin/env PATH chooses it.
func (z *Analyzer) shebangUnbound(w *walker, s *Script) {
	first, _, _ := strings.Cut(s.Text, "\n")
	fields := strings.Fields(strings.TrimSuffix(strings.TrimPrefix(first, "#!"), "\r"))
	if len(fields) == 0 {
		return
	}
	interp := fields[0]
	if path.Base(interp) == "env" {
		w.unbound.viaPath = true
		w.unbound.add(s.Shell+" via PATH", "the script's "+shellQuote(first)+" line lets PATH choose the interpreter when it runs",
			"an absolute interpreter in the #! line, such as #!/bin/"+s.Shell)
		return
	}
	w.unbound.add(interp, "the interpreter the #! line names: bound by its path, not by its contents", "")
}

// scriptHeading names the script: "bash -c, options -e, with $0=x" or
// "script file run by #!/bin/sh".
func scriptHeading(s *Script) string {
	var h string
	if s.From == "-c" {
		h = s.Shell + " -c"
		var opts []string
		for _, o := range s.Options {
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
	} else {
		h = "script file run by " + Literal(s.From)
	}
	if len(s.Params) > 0 {
		first := 1
		if s.From == "-c" || strings.HasSuffix(s.From, "is only $0)") {
			first = 0
		}
		var ps []string
		for i, p := range s.Params {
			if i == 8 {
				ps = append(ps, fmt.Sprintf("and %d more", len(s.Params)-i))
				break
			}
			ps = append(ps, fmt.Sprintf("$%d=%s", first+i, clip(shellQuote(p))))
		}
		h += ", with " + strings.Join(ps, " ")
	}
	return h
}

// finish turns what the walk collected into the analysis's lists, and
// sorts the findings most severe first.
func (w *walker) finish() {
	a := w.a
	if len(w.commandChunks) > 0 {
		n := len(a.Commands)
		for _, c := range w.commandChunks {
			n += len(c)
		}
		all := make([]Command, 0, n)
		for _, c := range w.commandChunks {
			all = append(all, c...)
		}
		a.Commands, w.commandChunks = append(all, a.Commands...), nil
	}
	for _, j := range w.jobs {
		w.mark(SeverityExposes, j.line, true, "a background job can keep running after the script ends, with the secrets in its environment: %s", j.text)
	}
	if w.controls {
		w.mark(SeverityNote, 0, false, "the script contains control or invisible characters, shown as escapes such as \\r and \\x1b (a backslash written in the script is shown as itself)")
	}
	var envNames []string
	for n := range w.envSecrets {
		envNames = append(envNames, n)
	}
	slices.Sort(envNames)
	progs := refList(w.programs, false)
	if progs == "" {
		progs = "(no program)"
	}
	for _, n := range envNames {
		l := "secret " + w.display(n) + " (environment): every program the script runs inherits it: " + progs
		if refs := w.named[n]; len(refs) > 0 {
			l += "; named by " + refList(refs, true)
		}
		a.SecretLines = append(a.SecretLines, l)
		a.Readers[w.envSecrets[n]] = refNames(w.programs)
	}
	for _, n := range w.stdinSecrets {
		readers := refList(w.stdinRead, true)
		if readers == "" {
			readers = "no command (nothing reads the script's standard input)"
		}
		a.SecretLines = append(a.SecretLines, "secret "+w.display(n)+" (standard input): can be read by "+readers)
		a.Readers[n] = refNames(w.stdinRead)
	}
	for u := range w.unseen {
		a.Unseen = append(a.Unseen, u)
	}
	slices.Sort(a.Unseen)
	if w.stopped != "" && a.Truncated == "" {
		a.Truncated = "(" + w.stopped + ")"
	}
	for _, list := range []*[]Finding{&a.Reasons, &a.Marks, &a.Runs} {
		slices.SortStableFunc(*list, func(x, y Finding) int {
			if x.Severity != y.Severity {
				return int(y.Severity - x.Severity)
			}
			if x.Secret != y.Secret {
				if x.Secret {
					return -1
				}
				return 1
			}
			return x.Line - y.Line
		})
	}
}

func refNames(refs []progRef) []string {
	var out []string
	for _, r := range refs {
		if !slices.Contains(out, r.name) {
			out = append(out, r.name)
		}
	}
	return out
}

// refList shows programs, at most maxListed, with their lines.
func refList(refs []progRef, withLines bool) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range refs {
		key := r.name
		if withLines {
			key = fmt.Sprint(r.name, r.line)
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		if len(parts) == maxListed {
			parts = append(parts, "and more")
			break
		}
		if withLines && r.line > 0 {
			parts = append(parts, fmt.Sprintf("%s (line %d)", Literal(r.name), r.line))
		} else {
			parts = append(parts, Literal(r.name))
		}
	}
	return strings.Join(parts, ", ")
}

// classify decides the invocation's class (Step 21): irreversible when any
// command's form is; read-only only when everything is understood and
// read-only by the rules of the agent gate; otherwise other.
func (z *Analyzer) classify(a *Analysis, r *Request, w *walker) {
	for _, c := range a.Commands {
		if c.Class == ClassIrreversible {
			a.Class, a.Why = ClassIrreversible, "irreversible: "+c.Form
			return
		}
	}
	if !a.Understood {
		a.Class, a.Why = ClassOther, "possibly irreversible: not understood"
		return
	}
	a.Class = ClassOther
	var forms []string
	for _, c := range a.Commands {
		if c.Class != ClassReadOnly {
			a.Why = "other: " + cmp.Or(c.Form, c.Text) + " is not a read-only form"
			return
		}
		if !slices.Contains(forms, c.Form) {
			forms = append(forms, c.Form)
		}
	}
	if len(forms) == 0 {
		a.Why = "other: no command"
		return
	}
	if len(a.Marks) > 0 {
		a.Why = "other: marked: " + a.Marks[0].Text
		return
	}
	if len(a.Runs) > 0 {
		a.Why = "other: " + a.Runs[0].Text
		return
	}
	if w.computes != "" {
		a.Why = "other: the script computes a value at run time (" + w.computes + ")"
		return
	}
	// A redirection writes as surely as cp does (: > main.go empties it).
	if f, l := firstWrite(w.written); l > 0 {
		a.Why = fmt.Sprintf("other: the script writes %s (line %d)", Literal(f), l)
		return
	}
	dir := path.Dir(r.Executable)
	if !readOnlyDirs[dir] {
		a.Why = "other: the executable " + Literal(r.Executable) + " is not in /usr/bin, /bin, /usr/local/bin or /opt/homebrew/bin"
		return
	}
	if ok, _ := z.executableMatchesHost(r); !ok {
		a.Why = "other: the executable's sha-256 differs from this host's " + Literal(r.Executable)
		return
	}
	for _, arg := range r.Argv {
		if credentialFile(arg) {
			a.Why = "other: an argument names a sensitive path (" + Literal(arg) + ")"
			return
		}
	}
	// A network client sending a secret is not read-only, except the
	// program whose own API the secret is for.
	for _, n := range w.netUses {
		for _, s := range r.Secrets {
			if s.Stdin || s.Env == "" {
				if n.readsStdin {
					a.Why = "other: " + n.form + " can send the secret " + s.Name + " (standard input) over the network"
					return
				}
				continue
			}
			if !slices.Contains(n.forSecret, s.Env) {
				a.Why = "other: " + n.form + " opens the network with the secret " + s.Env + " in its environment, and its table does not say the secret is for it"
				return
			}
		}
	}
	a.Class = ClassReadOnly
	a.Why = "read-only: " + strings.Join(forms, ", ") + ", executable " + Literal(r.Executable)
}

// firstWrite is the file the script wrote first (by line, then name).
func firstWrite(written map[string]int) (string, int) {
	file, line := "", 0
	for f, l := range written {
		if line == 0 || l < line || l == line && f < file {
			file, line = f, l
		}
	}
	return file, line
}

// readOnlyDirs are the system directories a read-only executable lives in.
var readOnlyDirs = map[string]bool{"/usr/bin": true, "/bin": true, "/usr/local/bin": true, "/opt/homebrew/bin": true}
