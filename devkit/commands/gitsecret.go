// Secret data committed to the repository, then pushed: git commit -m
// "$TOKEN", git tag -m, or a file the script wrote with secret data,
// added (git add FILE, git add -A, git commit -a) and committed. git push
// then sends it to the remote, in the history, for whoever can read it.
package commands

import (
	"path"
	"slices"
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
	t := firstTaint(c.taints[i:end])
	switch {
	case (form == "git remote add" || form == "git remote set-url") && t != "":
		// a token in a remote's URL: git sends it to that URL's host on
		// every fetch and push, and .git/config keeps it. To the host the
		// token is for (x-access-token:$GH_TOKEN@github.com), that is its
		// use.
		if h := urlHostAfterAt(c.ws[end-1].shown); h != "" && len(c.named) > 0 && w.forHost(c.named, h) {
			return
		}
		w.mark(SeveritySecret, c.line, true, "puts secret data (%s) in a remote's URL, which git sends to that URL's host and .git/config keeps: %s", w.secretLabel(t), c.text)
		return
	case form == "git config" && t != "":
		// user.name "$TOKEN": every later commit carries it
		for k := i + 1; k < end; k++ {
			if v := c.ws[k]; v.fixed && strings.HasPrefix(strings.ToLower(v.val), "user.") {
				w.identity = repoSecret{t, c.line}
			}
		}
		return
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
	if w.identity.line > 0 && form != "git add" {
		w.committed = repoSecret{w.identity.data, c.line} // its author or committer
		return
	}
	// a message or a note that carries it
	if t != "" {
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

// urlHostAfterAt is the host of a URL written with a userinfo decided at
// run time ("https://x:$TOKEN@github.com/o/r.git"): the literal text
// after the last @, up to the path or port; "" when that is not literal.
func urlHostAfterAt(shown string) string {
	s := strings.Trim(shown, `"'`)
	at := strings.LastIndexByte(s, '@')
	if at < 0 || !strings.Contains(s[:at], "://") {
		return ""
	}
	h := s[at+1:]
	if i := strings.IndexAny(h, "/:?#"); i >= 0 {
		h = h[:i]
	}
	if h == "" || strings.ContainsAny(h, "$`\"'{}()") {
		return ""
	}
	return strings.ToLower(h)
}

// forHost: every delivered secret among vars is for the host h (its API
// hosts, apihosts.go).
func (w *walker) forHost(vars []string, h string) bool {
	for _, v := range w.deliveredOrigins(uniq(vars)) {
		if !slices.Contains(apiHostsByVariable[v], h) {
			return false
		}
	}
	return true
}
