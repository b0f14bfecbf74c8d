// Variables that hold secret data, and which delivered secret each one
// came from: a mark names the secret as the person gave it (its name and
// the variable it was delivered in), not a variable the script made up.
package commands

import "strings"

// taintVar records that the script put secret data (from: a taint, which
// is a variable's name or a description of the data) into the variable
// name.
func (w *walker) taintVar(name, from string) {
	w.secretVars[name] = true
	if _, delivered := w.envSecrets[name]; delivered {
		return
	}
	if o, ok := w.secretFrom[from]; ok {
		from = o
	}
	if from != "" && from != name {
		w.secretFrom[name] = from
	}
}

// secretLabel names the secret a variable holds: a delivered variable by
// itself (as the secret lines name it), a variable of the script by the
// delivered secret it came from. Anything else is returned as it is.
func (w *walker) secretLabel(v string) string {
	if _, delivered := w.envSecrets[v]; delivered {
		return w.display(v)
	}
	o, ok := w.secretFrom[v]
	if !ok {
		return w.display(v)
	}
	if n, delivered := w.envSecrets[o]; delivered {
		if n != o {
			return w.display(n) + " (" + w.display(o) + ", copied into $" + w.display(v) + ")"
		}
		return w.display(o) + " (copied into $" + w.display(v) + ")"
	}
	o = strings.TrimPrefix(o, "secret ")
	if base, ok := strings.CutSuffix(o, ")"); ok {
		return w.display(base) + ", copied into $" + w.display(v) + ")"
	}
	return w.display(o) + " (copied into $" + w.display(v) + ")"
}

// secretLabels names each of the variables (uniq'd).
func (w *walker) secretLabels(vars []string) string {
	var out []string
	for _, v := range uniq(vars) {
		out = append(out, w.secretLabel(v))
	}
	return strings.Join(uniq(out), ", ")
}
