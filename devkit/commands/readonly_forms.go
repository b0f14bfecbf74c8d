// The read-only forms the tables describe (Step 21): the entries a
// "read_only" policy can approve by themselves, counted and listed the way
// the agent gate counts its allowlist (a program, or a program with up to
// two words: "ls", "git status", "gh pr view"), so the README's figure can
// be checked against the tables that ship.
package commands

import "sort"

// ReadOnlyForms is how many read-only entries the tables describe.
func ReadOnlyForms() int { return len(ReadOnlyEntries()) }

// ReadOnlyEntries lists the read-only entries, sorted: each program whose
// default class is read-only, each read-only subcommand and each read-only
// form, spelt with the words it matches ("git log", "terraform fmt
// -check", "gh --version" for a whole form). nil when the tables do not
// load.
func ReadOnlyEntries() []string {
	c, errs := defaultCatalog()
	if len(errs) > 0 || c == nil {
		return nil
	}
	seen := map[string]bool{}
	var walk func(n *node, inherited Class)
	walk = func(n *node, inherited Class) {
		class := inherited
		if n.class != "" {
			class = n.class
		}
		if n.eff.irreversible {
			class = ClassIrreversible
		}
		if n.eff.readOnly || (class == ClassReadOnly && (n.parent == nil || n.class == ClassReadOnly)) {
			seen[n.path()] = true
		}
		for _, f := range n.forms {
			if f.eff.readOnly {
				words := n.path()
				for _, w := range f.words {
					words += " " + w
				}
				seen[words] = true
			}
		}
		for _, s := range n.subs {
			walk(s, class)
		}
	}
	for _, p := range c.programs {
		walk(&p.node, ClassOther)
	}
	out := make([]string, 0, len(seen))
	for e := range seen {
		out = append(out, e)
	}
	sort.Strings(out)
	return out
}
