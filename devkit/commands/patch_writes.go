// Write, then run, through a patch: patch, git apply and git am write the
// files named inside the patch, which the device does not read. A patch
// the script downloaded, wrote or piped in may name any file (a Git hook,
// a Makefile, conftest.py), so a later command that runs the project's
// code is not understood, as for a file written by name. A patch that was
// already in the directory is the project's own, like its Makefile: the
// mark on the patch command says what it writes.
package commands

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// patchSource says where a patch command's patch (or an archive unpacked
// in place, extract.go) came from when the script wrote, downloaded or
// piped it in (line 0 when it did not); did is what the command did with
// it ("applied a patch"). It is read before the command's own writes are
// recorded.
func (w *walker) patchSource(c *simpleCmd, m *match, line int, did string) intoDir {
	var inputs []string
	if c.in.file != "" && c.in.piped == "" && c.in.hdoc == nil {
		inputs = append(inputs, c.in.file)
	}
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if v.k.name == "file" && v.w.fixed {
			inputs = append(inputs, v.w.val)
		}
	}
	for _, f := range inputs {
		if l, ok := w.downloads[w.resolve(f)]; ok {
			return intoDir{line, fmt.Sprintf("%s it downloaded at line %d (%s)", did, l, w.display(f))}
		}
		if how, l := w.wroteAt(f); l > 0 {
			return intoDir{line, fmt.Sprintf("%s it %s at line %d (%s)", did, how, l, w.display(f))}
		}
		if w.outsideWorkDir(f) {
			return intoDir{line, fmt.Sprintf("%s from outside the working directory (%s)", did, w.display(f))}
		}
	}
	if p := c.in.piped; p != "" && p != "here-document" && p != "here-string" {
		return intoDir{line, did + " piped from " + p}
	}
	return intoDir{}
}

// outsideWorkDir: a fixed path that is not under the working directory
// (absolute elsewhere, or in a home directory): not the project's own.
func (w *walker) outsideWorkDir(f string) bool {
	if w.wd == "" || f == "-" || f == "/dev/stdin" {
		return false
	}
	r := w.resolve(f)
	return strings.HasPrefix(r, "~") || path.IsAbs(r) && r != path.Clean(w.wd) && !strings.HasPrefix(r, strings.TrimSuffix(path.Clean(w.wd), "/")+"/")
}

// appliesPatch: the command is a patch program (check patch-files), whose
// input is a patch, not an archive it unpacks (extract.go).
func (m *match) appliesPatch() bool {
	return slices.ContainsFunc(m.checks, func(ch checkUse) bool { return ch.name == "patch-files" })
}

// afterPatch: a command that runs the project's code (its files, or code
// the device does not see) after such a patch runs what the patch may
// have written; it says whether it found one.
func (w *walker) afterPatch(name string, codeFiles []string, runs bool, line int) bool {
	if w.patched.line == 0 || len(codeFiles) == 0 && !runs {
		return false
	}
	what := "the project's code"
	if len(codeFiles) > 0 {
		what = "code from " + strings.Join(uniq(codeFiles), ", ")
	}
	w.reason(SeverityRunsUnseen, line, false, "%s runs %s, which the script may have changed at line %d: it %s, whose files the device does not read (write, then run)", name, what, w.patched.line, w.patched.how)
	return true
}
