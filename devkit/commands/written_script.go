// A file the script wrote whole from text it gives literally (`cat >
// FILE <<'EOF'` with a here-document with no expansions, printf FORMAT
// with no conversions, echo WORDS): the device has its text, so running
// a here-document's file (./FILE, sh FILE, . FILE) is followed as a
// nested script, shown and walked like sh -c, and a configuration whose
// keys the device can judge (inert_config.go) is judged, instead of
// "write, then run"; a printed file is not followed as a script. Any other
// write to the same file since makes its text unknown again (recordWrite
// forgets it).
package commands

import (
	"fmt"
	"path"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// writtenScript is the text of a file the script wrote whole.
type writtenScript struct {
	text string
	line int
	// printed: written by printf or echo, whose text is judged only as a
	// configuration (inert_config.go), not followed as a script.
	printed bool
}

// rememberScript records a file written whole with a fixed text.
func (w *walker) rememberScript(s *syntax.Stmt, in flow, line int) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 || len(c.Assigns) > 0 {
		return
	}
	text, fixed := w.literalOutput(c, in)
	var target string
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob:
			if target != "" {
				return
			}
			v, ok := w.value(r.Word)
			if !ok {
				return
			}
			target = w.resolve(v)
		case syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
			return
		}
	}
	if target == "" || !fixed {
		return
	}
	w.scripts[target] = writtenScript{text: text, line: line, printed: in.hdoc == nil}
}

// literalOutput is the whole output of a command that prints only text
// it gives literally: cat fed a fixed here-document, printf with one
// format that converts nothing (escapes \n, \t and \\ only), echo with
// words and no backslash (shells differ on echo's escapes).
//
// A printed word may also hold a delivered secret's variable ("…=${NPM_TOKEN}"):
// it is kept as ${VAR}, which only a configuration's judge reads (the
// secret's value comes from the device, and configSecrets says where it
// goes); a printed file is never followed as a script.
func (w *walker) literalOutput(c *syntax.CallExpr, in flow) (string, bool) {
	switch first, _ := w.value(c.Args[0]); first {
	case "cat", "/bin/cat", "/usr/bin/cat", "printf", "echo": // the switch below
	default:
		return "", false // what any other command prints is not known
	}
	words := make([]string, 0, len(c.Args))
	for k, a := range c.Args {
		v, fixed := w.value(a)
		if !fixed && k > 0 && in.hdoc == nil {
			v, fixed = w.secretTemplate(a)
		}
		if !fixed {
			return "", false
		}
		words = append(words, v)
	}
	switch words[0] {
	case "cat", "/bin/cat", "/usr/bin/cat":
		if in.hdoc == nil || len(words) != 1 {
			return "", false
		}
		return hdocText(in.hdoc)
	case "printf":
		if in.hdoc != nil || len(words) != 2 || strings.ContainsRune(strings.ReplaceAll(words[1], "%%", ""), '%') {
			return "", false
		}
		if strings.ContainsRune(strings.NewReplacer(`\\`, "", `\n`, "", `\t`, "").Replace(words[1]), '\\') {
			return "", false // another escape (\c, \0NNN, \x): not read here
		}
		return strings.NewReplacer(`\\`, `\`, `\n`, "\n", `\t`, "\t", "%%", "%").Replace(words[1]), true
	case "echo":
		rest := words[1:]
		if in.hdoc != nil || len(rest) > 0 && strings.HasPrefix(rest[0], "-") || strings.Contains(strings.Join(rest, " "), `\`) {
			return "", false
		}
		return strings.Join(rest, " ") + "\n", true
	}
	return "", false
}

// secretTemplate is a word made of literal text and plain expansions of
// delivered secrets' variables ($VAR, ${VAR}, in double quotes or not),
// each written ${VAR}; false for any other expansion.
func (w *walker) secretTemplate(wd *syntax.Word) (string, bool) {
	var b strings.Builder
	var part func(p syntax.WordPart) bool
	part = func(p syntax.WordPart) bool {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if !part(q) {
					return false
				}
			}
		case *syntax.ParamExp:
			if p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0 || p.Param == nil {
				return false
			}
			if _, delivered := w.envSecrets[p.Param.Value]; !delivered {
				return false
			}
			b.WriteString("${" + p.Param.Value + "}")
		default:
			return false
		}
		return true
	}
	for _, p := range wd.Parts {
		if !part(p) {
			return "", false
		}
	}
	return b.String(), true
}

// followWritten walks the text of a script file the script wrote, as the
// shell sh (or the one its #! line names when sh is ""); false when the
// device does not have that text, or it is not a shell script.
func (w *walker) followWritten(file, sh string, c *simpleCmd) bool {
	ws, ok := w.scripts[w.resolve(file)]
	if !ok || ws.printed {
		return false
	}
	if first, _, _ := strings.Cut(ws.text, "\n"); strings.HasPrefix(first, "#!") {
		fields := strings.Fields(strings.TrimPrefix(first, "#!"))
		if len(fields) == 0 {
			return false
		}
		interp := path.Base(fields[0])
		if interp == "env" && len(fields) == 2 {
			interp = fields[1]
		} else if interp == "env" || len(fields) > 1 && sh == "" {
			return false
		}
		if sh == "" {
			sh = interp
		}
	}
	if sh == "" {
		sh = "sh" // no #! line: the calling shell runs it as sh (execve ENOEXEC)
	}
	lang, ok := shellLangs[sh]
	if !ok {
		return false
	}
	w.nested(ws.text, c.depth, c.line, fmt.Sprintf("whose script (%s, written at line %d) runs:", w.display(file), ws.line), lang, flow{stdin: c.in.stdin, taint: c.in.taint, piped: c.in.piped})
	return true
}

// currentShell names the shell running the walk's unit (for a file it
// sources).
func (w *walker) currentShell() string {
	switch w.lang {
	case syntax.LangBash:
		return "bash"
	case syntax.LangZsh:
		return "zsh"
	}
	return "sh"
}

// modeOnly change a file's mode, owner or times, not its text: a script
// written whole keeps its known text through them (chmod +x x.sh, then
// ./x.sh), though they still count as writes for write, then run.
var modeOnly = setOf("chmod", "chown", "chgrp", "touch")

// keepScripts remembers the known script texts and returns what restores
// them.
func (w *walker) keepScripts() func() {
	saved := make(scriptTexts, len(w.scripts))
	for k, v := range w.scripts {
		saved[k] = v
	}
	return func() { w.scripts = saved }
}

// scriptTexts are the files written whole, by resolved path.
type scriptTexts map[string]writtenScript
