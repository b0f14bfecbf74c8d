// The checks behind the explanation's "!" lines: secret variable names in
// words and text, substitutions, downloads run by a shell or interpreter,
// the working directory as cd changes it, and writes outside it.

package main

import (
	"path"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
