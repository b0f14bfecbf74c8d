// Commits fetched from a URL the script names (not one of the project's
// remotes) and put in the working tree: git pull URL, or git fetch URL
// then git checkout FETCH_HEAD (or merge, reset, rebase, cherry-pick,
// switch, restore). The tree then holds files the device has not read,
// as after a patch it did not read (patch_writes.go): a later command
// that runs the project's code runs what they hold.
package commands

import (
	"strconv"
	"strings"
)

// gitFetchedURL records a git fetch of a URL, and a change of the working
// tree from it.
func (w *walker) gitFetchedURL(m *match, line int) {
	url := ""
	for _, v := range m.values {
		if v.k.name == "url" && v.opt == "" && v.w.fixed && (strings.Contains(v.w.val, "://") || strings.Contains(v.w.val, "@") && strings.Contains(v.w.val, ":")) {
			url = v.w.val
			break
		}
	}
	switch verb := strings.TrimPrefix(m.form, "git "); {
	case strings.HasPrefix(verb, "pull") && url != "":
		w.treeFromURL("pulled commits from "+url+" into the working tree", line)
	case strings.HasPrefix(verb, "fetch") && url != "" && w.fetched.line == 0:
		w.fetched = intoDir{line, url}
	case w.fetched.line > 0 && (strings.HasPrefix(verb, "checkout") || strings.HasPrefix(verb, "switch") || strings.HasPrefix(verb, "merge") ||
		strings.HasPrefix(verb, "reset") || strings.HasPrefix(verb, "rebase") || strings.HasPrefix(verb, "cherry-pick") || strings.HasPrefix(verb, "restore")):
		w.treeFromURL("put commits it fetched from "+w.fetched.how+" at line "+strconv.Itoa(w.fetched.line)+" in the working tree", line)
	}
}

func (w *walker) treeFromURL(how string, line int) {
	if w.patched.line == 0 {
		w.patched = intoDir{line, how}
	}
}
