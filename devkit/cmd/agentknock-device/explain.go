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
	"fmt"
	"path"
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
