// The named check for sed's -i as BSD and macOS sed read it: there -i
// takes the next word as its backup suffix (sed(1) of FreeBSD,
// https://man.freebsd.org/cgi/man.cgi?query=sed: "-i extension ... If a
// zero-length extension is given, no backup will be saved"), so in
// `sed -i ” 's/a/b/' f` the script is the word after ”, where GNU sed
// (whose suffix is attached, -i.bak) reads ” as the script and the rest
// as files. The device does not know which sed runs, so it reads both.
package commands

import (
	"slices"
	"strings"
)

// checkSedBSDSuffix: a bare -i or --in-place followed by an empty word or
// one starting with "." (a backup suffix), with no -e or -f: the word after
// that is BSD sed's script, read for what it runs and writes.
func checkSedBSDSuffix(in checkInput) checkResult {
	if len(in.Words) > 0 {
		return checkResult{} // an attached suffix: both seds agree
	}
	suffix := -1
	for i, a := range in.Argv {
		switch a {
		case "-e", "--expression", "-f", "--file":
			return checkResult{}
		case "-i", "--in-place":
			if suffix < 0 {
				suffix = i + 1
			}
		}
	}
	if suffix < 0 || suffix+1 >= len(in.Argv) {
		return checkResult{}
	}
	if s := in.Argv[suffix]; s != "" && s[0] != '.' {
		return checkResult{}
	}
	script := in.Argv[suffix+1]
	shown := Literal(in.Argv[suffix])
	if shown == "" {
		shown = "''"
	}
	bsd := "if this sed takes -i's next word (" + shown + ") as its backup suffix, as BSD and macOS sed do, its script is " + Literal(script)
	f, ok := scanSed(script)
	switch {
	case !ok:
		return checkResult{}
	case f.runs != "":
		return checkResult{NotUnderstood: bsd + ": " + f.runs}
	case len(f.writes) > 0 || f.dynWrite || len(f.reads) > 0:
		return checkResult{Mark: bsd + ", which writes or reads the files it names", WritesAway: f.dynWrite || slices.ContainsFunc(f.writes, pathMayLeave)}
	}
	return checkResult{}
}

// pathMayLeave reports whether a path a program's own script names may be
// outside the working directory: absolute, in a home directory, or through
// a parent.
func pathMayLeave(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/../")
}
