// Positional parameters in arithmetic: bash evaluates a variable's value
// inside arithmetic, and in [[ ]]'s -eq, -gt and the like, as an expression
// of its own (bash(1), ARITHMETIC EVALUATION: "the value of a variable is
// evaluated as an arithmetic expression"), so a value such as a[$(cmd)]
// runs cmd. The top-level script's $1, $2, ... are the invocation's own
// argv words, which the device sees: when each is a literal number (or
// absent, which is empty and evaluates to 0) arithmetic on them runs
// nothing. A function's parameters, a nested script's, and those after
// `set --` are other words, so they are not known to be numbers.
package commands

import "mvdan.cc/sh/v3/syntax"

// positionalKeys are the names of the positional parameters the walk
// tracks ($1 to $9; ${10} and later are never known).
var positionalKeys = []string{"1", "2", "3", "4", "5", "6", "7", "8", "9"}

// positionalNumbers records that the top-level script's positional
// parameters are numbers, when every one of them the invocation gives is
// a literal number. params are the words after the script text (for -c,
// the first is $0).
func (w *walker) positionalNumbers(params []string, firstIsZero bool) {
	// $# counts them: a number whatever they are.
	w.numeric["#"] = true
	if firstIsZero && len(params) > 0 {
		params = params[1:]
	}
	for _, p := range params {
		if !isNumber(p) {
			return
		}
	}
	for _, k := range positionalKeys {
		w.numeric[k] = true
	}
}

// forgetPositional drops what the walk knows of the positional parameters
// (set -- gives new ones; a nested script has its own), returning what it
// knew so that a nested walk can restore it.
func (w *walker) forgetPositional() map[string]bool {
	saved := map[string]bool{}
	for _, k := range append(positionalKeys, "#") {
		saved[k] = w.numeric[k]
		delete(w.numeric, k)
	}
	return saved
}

// restorePositional puts back what forgetPositional returned.
func (w *walker) restorePositional(saved map[string]bool) {
	for k, v := range saved {
		if v {
			w.numeric[k] = true
		} else {
			delete(w.numeric, k)
		}
	}
}

// numericExpansion says whether wd is only the plain expansion of a
// variable known to hold a number ($n, "$1", ${n}).
func (w *walker) numericExpansion(wd *syntax.Word) bool {
	if wd == nil || len(wd.Parts) != 1 {
		return false
	}
	part := wd.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	p, ok := part.(*syntax.ParamExp)
	return ok && p.Param != nil && !p.Excl && !p.Length && !p.Width && p.Index == nil && p.Exp == nil && p.Repl == nil && p.Slice == nil && p.Names == 0 &&
		w.numeric[p.Param.Value]
}
