// Secret data committed to the repository, then pushed: git commit -m
// "$TOKEN", git tag -m, or a file the script wrote with secret data,
// added (git add FILE, git add -A, git commit -a) and committed. git push
// then sends it to the remote, in the history, for whoever can read it.
package commands

import (
	"path"
	"strings"
)

// repoSecret is secret data the script committed: what, and the line.
type repoSecret struct {
	data string
	line int
}

// gitCommitsSecret records secret data a git command puts in the
// repository, and marks a push that sends it.
func (w *walker) gitCommitsSecret(c *simpleCmd, m *match, i, end int) {
	form := m.form
	switch {
	case strings.HasPrefix(form, "git push"):
		if w.committed.line > 0 {
			w.mark(SeveritySecret, c.line, true, "git push sends commits that hold secret data (%s, committed at line %d) to the remote: %s", w.secretLabel(w.committed.data), w.committed.line, c.text)
		}
		return
	case form != "git commit" && form != "git tag" && form != "git add" && !strings.HasPrefix(form, "git notes"):
		return
	}
	if w.committed.line > 0 {
		return
	}
	// a message or a note that carries it
	if t := firstTaint(c.taints[i:end]); t != "" {
		w.committed = repoSecret{t, c.line}
		return
	}
	all := false
	for _, v := range m.values {
		if v.k.name == "file" && v.w.fixed {
			if t := w.tainted[w.resolve(v.w.val)]; t != "" {
				w.committed = repoSecret{t, c.line}
				return
			}
			if p := w.resolve(v.w.val); p == w.resolve(".") {
				all = true // git add .
			}
		}
	}
	for k := i + 1; k < end; k++ {
		if wd := c.ws[k]; wd.fixed && (wd.val == "-A" || wd.val == "--all" || wd.val == "-a" || wd.val == "-u" || wd.val == "--update" ||
			len(wd.val) > 2 && wd.val[0] == '-' && wd.val[1] != '-' && strings.ContainsRune(wd.val, 'a') && form == "git commit") {
			all = true
		}
	}
	if !all {
		return
	}
	// every changed file of the working tree: one the script wrote with
	// secret data among them
	wd := strings.TrimSuffix(path.Clean(w.wd), "/") + "/"
	for p, t := range w.tainted {
		if w.wd != "" && strings.HasPrefix(p, wd) && t != "" {
			w.committed = repoSecret{t, c.line}
			return
		}
	}
}
