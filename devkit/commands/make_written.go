// Write, then run, through a Makefile the script wrote whole (`cat >
// Makefile <<'EOF'`, written_script.go): the device has its text, so make
// run after it is followed instead of "write, then run" when the Makefile
// is plain enough to read without make: rules, recipes, variable
// assignments and references to variables it sets. Its recipe lines are
// walked as the shell lines make runs (each in a shell of its own). What
// GNU make's manual gives beyond that (include, conditionals, define,
// functions such as $(shell), a SHELL of its own, special targets other
// than the listed ones) keeps write, then run: the device would have to be
// make to know what it runs.
// https://www.gnu.org/software/make/manual/make.html
package commands

import (
	"fmt"
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// followMakefile walks the recipes of a Makefile the script wrote whole
// (the resolved path file) for make's command c; it reports whether it
// could.
func (w *walker) followMakefile(program, file string, c *simpleCmd) bool {
	ws, ok := w.scripts[file]
	if !ok || ws.printed || program != "make" && program != "gmake" {
		return false
	}
	recipes, ok := makefileRecipes(ws.text)
	if !ok {
		return false
	}
	w.nested(recipes, c.depth, c.line, fmt.Sprintf("whose Makefile (%s, written at line %d) runs:", w.display(file), ws.line), syntax.LangPOSIX,
		flow{stdin: c.in.stdin, taint: c.in.taint})
	return true
}

// makeSpecialTargets are the special targets that change nothing about
// which commands run.
var makeSpecialTargets = setOf(".PHONY", ".SILENT", ".DELETE_ON_ERROR", ".NOTPARALLEL", ".SUFFIXES", ".DEFAULT_GOAL", ".ONESHELL", ".EXPORT_ALL_VARIABLES")

var (
	makeAssign = regexp.MustCompile(`^(?:(?:export|override)\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*(=|:=|::=|\?=|\+=)\s*(.*)$`)
	makeRule   = regexp.MustCompile(`^([^:=#]+?)\s*::?\s*([^=;]*?)\s*(?:;\s*(.*))?$`)
	makeRef    = regexp.MustCompile(`\$(?:\(([^()]*)\)|\{([^{}]*)\}|(.))`)
	makeName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// makefileRecipes is the recipe lines of a Makefile, each in a subshell
// of its own as make runs them, with make's references replaced: $$ by $,
// a variable the Makefile sets by its value, one it does not set by the
// shell expansion of the same name (make takes it from the environment),
// automatic variables by the rule's target and prerequisites. It reports
// false for anything else the manual gives.
func makefileRecipes(text string) (string, bool) {
	vars := map[string]string{"MAKE": "make"}
	var out strings.Builder
	target, prereqs := "", ""
	inRule := false
	lines := strings.Split(strings.ReplaceAll(text, "\\\n", " "), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "\t") {
			if !inRule {
				return "", false // a recipe line before any rule
			}
			if !makeRecipe(&out, strings.TrimLeft(l[1:], "@-+ \t"), vars, target, prereqs) {
				return "", false
			}
			continue
		}
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if m := makeAssign.FindStringSubmatch(t); m != nil {
			if m[1] == "SHELL" || m[1] == ".SHELLFLAGS" || m[1] == "MAKEFLAGS" || m[1] == "MAKEFILES" {
				return "", false
			}
			v, ok := makeExpand(m[3], vars, "", "")
			if !ok {
				return "", false
			}
			if m[2] == "+=" && vars[m[1]] != "" {
				v = vars[m[1]] + " " + v
			}
			if m[2] != "?=" || vars[m[1]] == "" {
				vars[m[1]] = v
			}
			continue
		}
		m := makeRule.FindStringSubmatch(t)
		if m == nil {
			return "", false // include, ifeq, define, vpath, load, ...
		}
		targets, ok := makeExpand(m[1], vars, "", "")
		if !ok {
			return "", false
		}
		if strings.HasPrefix(targets, ".") && !strings.Contains(targets, "/") {
			for _, s := range strings.Fields(targets) {
				if !makeSpecialTargets[s] {
					return "", false
				}
			}
		}
		if strings.ContainsAny(targets, "%") || strings.ContainsAny(m[2], "%|") {
			return "", false // pattern rules and order-only prerequisites
		}
		if prereqs, ok = makeExpand(m[2], vars, "", ""); !ok {
			return "", false
		}
		target, inRule = strings.Fields(targets)[0], true
		if m[3] != "" && !makeRecipe(&out, m[3], vars, target, prereqs) {
			return "", false
		}
	}
	return out.String(), true
}

// makeRecipe adds one recipe line, expanded, as a subshell.
func makeRecipe(out *strings.Builder, line string, vars map[string]string, target, prereqs string) bool {
	cmd, ok := makeExpand(line, vars, target, prereqs)
	if !ok {
		return false
	}
	if strings.TrimSpace(cmd) != "" {
		fmt.Fprintf(out, "(\n%s\n)\n", cmd)
	}
	return true
}

// makeExpand replaces make's references in s (see makefileRecipes).
func makeExpand(s string, vars map[string]string, target, prereqs string) (string, bool) {
	ok := true
	first, _, _ := strings.Cut(prereqs, " ")
	r := makeRef.ReplaceAllStringFunc(s, func(ref string) string {
		m := makeRef.FindStringSubmatch(ref)
		name := m[1] + m[2] + m[3]
		switch {
		case name == "$":
			return "$"
		case name == "@":
			return target
		case name == "<":
			return first
		case name == "^" || name == "+" || name == "?":
			return prereqs
		case strings.ContainsAny(name, " \t,:=$()"):
			ok = false // a function ($(shell ...)) or a substitution reference
			return ""
		}
		if v, set := vars[name]; set {
			return v
		}
		if !makeName.MatchString(name) {
			ok = false
			return ""
		}
		return "${" + name + "}" // from the environment, as make takes it
	})
	return r, ok
}
