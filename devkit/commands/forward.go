// Functions that run the words they are called with: a body command with
// the word "$@" (retry() { until "$@"; do sleep 2; done; }, or
// k() { kubectl --context prod "$@"; }) runs, at each call, the call's
// words in its place (bash(1), Special Parameters: "$@" is each
// positional parameter as a separate word, and a function's positional
// parameters are its call's arguments). Such a command is not judged
// where the function is defined, with words it does not have yet, but at
// each call: the body is walked again with "$@" replaced by the words of
// that call. A body that changes its positional parameters (shift, set
// --) or defines a function is not followed so: its "$@" commands stay
// decided at run time.
package commands

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// forwardingBody reports whether a function body runs its arguments: a
// command in it has a word that is exactly "$@", and nothing in it
// changes the positional parameters.
func forwardingBody(body *syntax.Stmt) bool {
	has, bad := false, false
	syntax.Walk(body, func(n syntax.Node) bool {
		if bad {
			return false
		}
		switch n := n.(type) {
		case *syntax.FuncDecl:
			bad = true
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				switch first, _ := fixedWord(n.Args[0]); first {
				case "shift", "set", "eval", "source", ".":
					// shift and set -- change "$@"; eval and source run
					// text the function's own words may build
					bad = true
				}
			}
			for _, a := range n.Args {
				has = has || quotedAt(a)
			}
		}
		return true
	})
	return has && !bad
}

// quotedAt: the word is "$@" (or "${@}") and nothing else.
func quotedAt(wd *syntax.Word) bool {
	if wd == nil || len(wd.Parts) != 1 {
		return false
	}
	dq, ok := wd.Parts[0].(*syntax.DblQuoted)
	if !ok || len(dq.Parts) != 1 {
		return false
	}
	p, ok := dq.Parts[0].(*syntax.ParamExp)
	return ok && p.Param != nil && p.Param.Value == "@" && !p.Excl && !p.Length && !p.Width && p.Index == nil &&
		p.Exp == nil && p.Repl == nil && p.Slice == nil && p.Names == 0
}

// hasQuotedAt: one of the words is "$@".
func hasQuotedAt(ws []*syntax.Word) bool {
	for _, wd := range ws {
		if quotedAt(wd) {
			return true
		}
	}
	return false
}

// spliceAt replaces each "$@" word of args with the words of the call
// being followed; ok is false when none is there to replace.
func (w *walker) spliceAt(args []*syntax.Word) (out []*syntax.Word, ok bool) {
	if !w.atSet || !hasQuotedAt(args) {
		return args, false
	}
	out = make([]*syntax.Word, 0, len(args)+len(w.atWords))
	for _, a := range args {
		if quotedAt(a) {
			out = append(out, w.atWords...)
		} else {
			out = append(out, a)
		}
	}
	return out, true
}

// showWords is a command's text from its assignments and words, each as
// the client sent it (a spliced command has no one span of text).
func (w *walker) showWords(c *syntax.CallExpr, args []*syntax.Word) string {
	var parts []string
	for _, a := range c.Assigns {
		parts = append(parts, w.show(a))
	}
	for _, a := range args {
		parts = append(parts, w.show(a))
	}
	return strings.Join(parts, " ")
}

// forwardCall walks the body of a function that runs its arguments once
// more, shown under the call, with "$@" replaced by the call's words.
func (w *walker) forwardCall(c *simpleCmd, name string, body *syntax.Stmt, i, end int) {
	if c.words == nil || len(c.words) != len(c.ws) || w.forwarding[name] != w.src {
		w.reason(SeverityRunsUnseen, c.line, false, "the function %s runs the words it is called with (\"$@\"), and the device cannot follow this call's words: %s", w.display(name), c.text)
		return
	}
	defer w.callArguments(c, i, end)()
	savedAt, savedSet, savedDef := w.atWords, w.atSet, w.fwdDef
	w.atWords, w.atSet, w.fwdDef = c.words[i+1:end], true, 0
	w.inFunc[name] = true
	savedLine := w.lineHere
	w.lineHere = c.line
	w.stmt(body, c.depth+1, "the function "+w.display(name)+" runs, with these words: ", c.in)
	w.lineHere = savedLine
	delete(w.inFunc, name)
	w.atWords, w.atSet, w.fwdDef = savedAt, savedSet, savedDef
}
