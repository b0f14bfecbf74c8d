// Where a git push goes when the script names the remote itself: `git
// remote add NAME URL`, `git remote set-url NAME URL` and `git config
// remote.NAME.url URL` (git-remote(1), git-config(1)) tell the device the
// URL of NAME, so a later push, fetch or pull to NAME (or, for origin,
// with no remote named) goes to that URL's host. A remote the script did
// not set is the repository's configuration, which the device does not
// see: its destination stays unknown, and says so.
package commands

import (
	"strings"
)

// gitSub is the subcommand chain a git match took ("remote add").
func gitSub(m *match) string {
	if len(m.chain) < 2 || m.chain[0].names[0] != "git" {
		return ""
	}
	var names []string
	for _, n := range m.chain[1:] {
		names = append(names, n.names[0])
	}
	return strings.Join(names, " ")
}

// operandVals are the fixed operand values of a match, in order ("" for
// one decided at run time).
func operandVals(m *match) []string {
	var out []string
	for _, v := range m.values {
		if v.opt != "" {
			continue
		}
		if v.w.fixed {
			out = append(out, v.w.val)
		} else {
			out = append(out, "")
		}
	}
	return out
}

// gitRemoteSet remembers a remote's URL the script sets.
func (w *walker) gitRemoteSet(m *match) {
	sub := gitSub(m)
	if sub == "" {
		return // not git
	}
	ops := operandVals(m)
	switch sub {
	case "remote add", "remote set-url":
		if len(ops) >= 2 && ops[0] != "" {
			w.remotes[ops[0]] = ops[1]
		}
	case "config":
		for k := 0; k+1 < len(ops); k++ {
			key := strings.ToLower(ops[k])
			for _, suffix := range []string{".pushurl", ".url"} {
				if strings.HasPrefix(key, "remote.") && strings.HasSuffix(key, suffix) && len(key) > len("remote.")+len(suffix) {
					// The name keeps its case: git compares subsection names exactly.
					w.remotes[ops[k][len("remote."):len(ops[k])-len(suffix)]] = ops[k+1]
					return
				}
			}
		}
	}
}

// gitRemoteHosts are the hosts of the remotes a push, fetch or pull names
// that the script set; with no remote named, origin's when the script
// set it.
// A push there is marked: it sends the repository to a host the script
// chose.
func (w *walker) gitRemoteHosts(m *match, line int) []string {
	sub := gitSub(m)
	if sub != "push" && sub != "fetch" && sub != "pull" || len(w.remotes) == 0 {
		return nil
	}
	url, named, remote := "", false, "origin"
	for _, v := range m.values {
		if v.opt == "" && v.k.name == "url" {
			named = true
			if v.w.fixed {
				url, remote = w.remotes[v.w.val], v.w.val
			}
			break
		}
	}
	if !named {
		url = w.remotes["origin"]
	}
	h := ""
	if strings.Contains(url, ":") { // a URL or scp-like host:path; else a local path
		h = hostOfHost(url)
	}
	if h == "" {
		return nil // none set, or a local path
	}
	if sub == "push" {
		w.mark(SeverityNetwork, line, false, "git push sends the repository to %s: the URL the script gave the remote %s (%s)", w.display(h), w.display(remote), w.display(url))
	}
	return []string{h}
}
