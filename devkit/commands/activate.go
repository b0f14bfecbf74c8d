// A virtual environment's activate script (python3 -m venv, virtualenv:
// https://docs.python.org/3/library/venv.html): sourcing DIR/bin/activate
// is what every Python project's instructions say, and the file is the
// project's own, like a Makefile: understood, with a line naming whose
// code runs. Written, downloaded or unpacked by the script itself it is
// write, then run (the caller checks that first).
package commands

import (
	"path"
	"strings"
)

// projectActivate: file is DIR/bin/activate inside the working directory.
func (w *walker) projectActivate(file string) bool {
	if path.Base(file) != "activate" || path.Base(path.Dir(file)) != "bin" {
		return false
	}
	if w.extracted > 0 || w.wd == "" || w.cwd == "" && !path.IsAbs(file) || strings.HasPrefix(file, "~") {
		return false
	}
	return strings.HasPrefix(w.resolve(file), strings.TrimSuffix(path.Clean(w.wd), "/")+"/")
}
