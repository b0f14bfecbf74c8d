// What a pin of a request cannot bind (design: pinned rules), computed by
// the same walk as the explanation: per program, the files its table says
// it reads as code for exactly that form (git hooks and configuration,
// package.json scripts, ~/.ssh/config, the makefiles, python's site
// files, build.rs ...), the script files and startup files a shell reads,
// the names PATH resolves, and what no request carries at all.
package commands

import "fmt"

// maxUnbound bounds the list; a script naming more is summed up.
const maxUnbound = 24

// unboundList collects items once each, in the order found.
type unboundList struct {
	items   []Unbound
	seen    map[string]bool
	dropped int
	viaPath bool
}

func (u *unboundList) add(name, why, safer string) {
	if u.seen[name] {
		return
	}
	u.seen[name] = true
	// The last four items are always added: keep room for them.
	if len(u.items) >= maxUnbound-4 {
		u.dropped++
		return
	}
	u.items = append(u.items, Unbound{Name: name, Why: why, Safer: safer})
}

// finish adds what no request carries and caps the list.
func (u *unboundList) finish(dir string) []Unbound {
	always := []Unbound{}
	if u.viaPath {
		always = append(always, Unbound{Name: "PATH", Why: "inherited, not sent to the device: it decides which program each name above runs"})
	}
	always = append(always,
		Unbound{Name: "directory " + dir, Why: "bound by its path only: another directory put at the same path (a replaced checkout, a new tree) matches the rule"},
		Unbound{Name: "the inherited environment", Why: "the client does not send it: a variable such as LD_PRELOAD or a program's own settings changes what runs"},
		Unbound{Name: "files the programs read or load", Why: "configuration, libraries and data files are not in the request"})
	out := append(u.items, always...)
	if u.dropped > 0 {
		out = append(out, Unbound{Name: fmt.Sprintf("and %d more", u.dropped), Why: "the request names more than the list shows"})
	}
	return out
}
