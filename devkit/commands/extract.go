// Write, then run, through a directory: an archiver told where to unpack
// (tar -C, cpio -D) or a program given a directory to write into writes
// files the device cannot name one by one, so the directory is what the
// script wrote, and a later command run from under it is a file the
// script wrote (the same rule as a file written by name). An archive the
// script downloaded, wrote or piped in and unpacked where it stands (tar
// -xf x.tgz, unzip x.zip, curl ... | tar x) may hold any file of the
// project, as such a patch may (patch_writes.go): a later command that
// runs the project's code runs what it may have written.
package commands

import (
	"cmp"
	"path"
	"slices"
	"strings"
)

// intoDirectory records the directories a command writes files into: a
// directory value on a line that writes (cmake -B), the directory an
// unpacking command (it writes, reads an archive, runs nothing) is told
// to work in (tar -C, cpio -D), and the destination of a command that
// copies files it reads (cp, rsync, install, unzip -d), which may be a
// directory. A directory outside the working directory is marked.
// mkdir is not among them: it reads no file, so its directory is empty.
func (w *walker) intoDirectory(c *simpleCmd, m *match, net bool, line int, archive intoDir) {
	readsFile := slices.ContainsFunc(m.values, func(v valueUse) bool { return v.k.name == "file" })
	// tar x, cpio -i: the archive is the piped input.
	// A network client's input is what it sends (docker login
	// --password-stdin), not an archive.
	readsPipe := !readsFile && !net && !m.eff.sendsStdin && c.in.piped != "" && c.in.piped != "here-document" && c.in.piped != "here-string"
	copies := (readsFile || readsPipe || net) && !m.eff.runs && !m.eff.meta && !m.eff.deletes
	how := "wrote"
	switch {
	case net:
		how = "downloaded"
	case m.eff.runs || len(m.eff.readsCode) > 0:
		how = "built"
	}
	// A form whose table names the files it writes (git add: .git/index)
	// writes those, not the files it reads.
	named, lastURL := len(m.eff.writesFiles) > 0, -1
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if v.k.name == "url" && v.opt == "" {
			lastURL = v.idx
		}
	}
	defer func() {
		if copies && m.eff.writes && !named {
			// Files written where the device cannot name them (tar -x in
			// the current directory): no script text stays known.
			clear(w.scripts)
			if (readsFile || readsPipe) && !net && !m.appliesPatch() {
				w.unpackedInPlace(c, line, archive)
			}
		}
	}()
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if !v.w.fixed {
			continue
		}
		if v.k.name == "out" || v.k.name == "dir" && w.resolve(v.w.val) != w.resolve(".") {
			named = true // tar -C . unpacks where it runs, as tar with no -C
		}
		switch {
		case v.k.name == "dir" && (v.eff.writes || copies && m.eff.writes && !net):
			w.checkWritePath("writes", v.w.val, true, v.w.shown, line)
		case v.k.name == "out" && copies:
		case v.k.name == "url" && copies && net && m.eff.writes && v.idx == lastURL && !strings.Contains(v.w.val, ":"):
			// A copier's destination (rsync, scp) that is a local path:
			// where it writes what it fetched.
			w.checkWritePath("writes", v.w.val, true, v.w.shown, line)
		default:
			continue
		}
		r := w.resolve(v.w.val)
		for f := range w.scripts {
			if strings.HasPrefix(f, strings.TrimSuffix(r, "/")+"/") {
				delete(w.scripts, f) // written over, perhaps
			}
		}
		if w.into[r].line == 0 {
			w.into[r] = intoDir{line, how}
		}
	}
}

// intoDir is a directory the script wrote files into: the line, and how
// ("wrote", "downloaded", "built").
type intoDir struct {
	line int
	how  string
}

// intoDirs are those directories, by resolved path.
type intoDirs map[string]intoDir

// wroteInto finds a directory the script wrote files into that holds the
// resolved path r: the line it did.
func (w *walker) wroteInto(r string) (how string, line int) {
	for d, in := range w.into {
		if strings.HasPrefix(r, strings.TrimSuffix(d, "/")+"/") && (line == 0 || in.line < line) {
			how, line = in.how, in.line
		}
	}
	return how, line
}

// unpackedInPlace: an archive unpacked where it runs may write any file
// of the project. One the script downloaded, wrote or piped in is
// recorded as a change the device cannot read (w.patched, as a patch
// is), or as a download unpacked (w.extracted) when it came from the
// network; one already in the directory is the project's own, like its
// Makefile. archive is where it came from (patchSource).
func (w *walker) unpackedInPlace(c *simpleCmd, line int, archive intoDir) {
	switch {
	case w.extracted == line:
	case c.in.piped != "" && w.netCommands[c.in.piped]:
		w.extracted = cmp.Or(w.extracted, line)
	case archive.line > 0 && w.patched.line == 0:
		w.patched = archive
	}
}

// downloadedInto records a path a download wrote (curl -o x, git clone
// URL dir) as a directory of downloaded files too: a clone is one, and
// a file is no directory, so nothing is found under it.
func (w *walker) downloadedInto(p string, line int) {
	r := w.resolve(p)
	if r == "" || r == w.resolve(".") {
		return
	}
	if w.into[r].line == 0 {
		w.into[r] = intoDir{line, "downloaded"}
	}
}

// fromDownload: the line a reads-code file f of a command (relative to
// where it works: the script's directory, or its -C dir) lies in a
// directory the script downloaded into; 0 if not.
func (w *walker) fromDownload(f, dir string) int {
	if strings.HasPrefix(f, "~") || path.IsAbs(f) || strings.ContainsAny(f, "*?[") {
		return 0
	}
	if f == ".gitattributes" || strings.HasPrefix(f, ".git/") {
		// a clone's .git is written by git itself, not fetched; and its
		// attributes only pick among drivers the configuration defines
		return 0
	}
	if dir != "" {
		f = path.Join(dir, f)
	}
	if how, l := w.wroteInto(w.resolve(f)); how == "downloaded" {
		return l
	}
	return 0
}

// cloneDir is the directory git clone URL makes: the URL's last part,
// without a trailing .git or slash.
func cloneDir(url string) string {
	u := strings.TrimRight(url, "/")
	if i := strings.LastIndexAny(u, "/:"); i >= 0 {
		u = u[i+1:]
	}
	u = strings.TrimSuffix(u, ".git")
	if u == "" || u == "." || u == ".." {
		return ""
	}
	return u
}
