// Variables and files that hold secret data, and where that data came
// from: a mark names the secret as the person gave it (its name and the
// variable it was delivered in) or the credential file, not a variable or
// a copy the script made.
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

// deliveredOrigins maps each variable to the delivered variable its data
// was copied from (printf -v auth 'Bearer %s' "$GH_TOKEN" makes auth
// GH_TOKEN's), so a copy is judged by what the secret is for.
func (w *walker) deliveredOrigins(vars []string) []string {
	out := make([]string, 0, len(vars))
	for _, v := range vars {
		if o, ok := w.secretFrom[v]; ok {
			if _, delivered := w.envSecrets[o]; delivered {
				v = o
			}
		}
		out = append(out, v)
	}
	return uniq(out)
}

// secretLabels names each of the variables (uniq'd).
func (w *walker) secretLabels(vars []string) string {
	var out []string
	for _, v := range uniq(vars) {
		out = append(out, w.secretLabel(v))
	}
	return strings.Join(uniq(out), ", ")
}

// taintFile records that the script wrote secret data (from: a taint) into
// the file p; a copy of a copy keeps the first origin.
func (w *walker) taintFile(p, from string) {
	if from == "" {
		return
	}
	if o, ok := w.secretFrom[from]; ok {
		from = o
	}
	w.tainted[w.resolve(p)] = from
}

// heldData is the secret data the file f holds, without a mark: a
// credential file, a process's environment, or a file the script wrote
// with secret data ("" for none).
func (w *walker) heldData(f string) string {
	switch {
	case procEnviron(f):
		return "the whole environment"
	case credentialFile(f):
		return "the credential file " + f
	}
	if len(w.tainted) == 0 {
		return "" // resolving f finds nothing
	}
	return w.tainted[w.resolve(f)]
}

// dataLabel names secret data for a mark: a variable by its secret.
func (w *walker) dataLabel(t string) string {
	if w.secretVars[t] {
		return "secret " + w.secretLabel(t)
	}
	return w.display(t)
}
