// A script file the script wrote itself with `cat > FILE <<'EOF'` and a
// here-document with no expansions: the device has its text, so running
// it (./FILE, sh FILE, . FILE) is followed as a nested script, shown and
// walked like sh -c, instead of "write, then run". Any other write to the
// same file since makes its text unknown again (recordWrite forgets it).
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
}

// rememberScript records `cat > FILE` fed a fixed here-document.
func (w *walker) rememberScript(s *syntax.Stmt, in flow, line int) {
	c, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || in.hdoc == nil || len(c.Args) != 1 || len(c.Assigns) > 0 {
		return
	}
	if name, fixed := w.value(c.Args[0]); !fixed || name != "cat" && name != "/bin/cat" && name != "/usr/bin/cat" {
		return
	}
	text, fixed := fixedWord(in.hdoc.Hdoc)
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
	w.scripts[target] = writtenScript{text: text, line: line}
}

// followWritten walks the text of a script file the script wrote, as the
// shell sh (or the one its #! line names when sh is ""); false when the
// device does not have that text, or it is not a shell script.
func (w *walker) followWritten(file, sh string, c *simpleCmd) bool {
	ws, ok := w.scripts[w.resolve(file)]
	if !ok {
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
