// Write, then run, through a shell's startup files: a shell reads its
// startup files before its script (bash(1) INVOCATION, dash(1), zsh(1)
// STARTUP/SHUTDOWN FILES), so a startup file the script wrote or changed
// earlier runs code the device did not see, whatever the later script is.
package commands

// startupFiles are the files a shell of this kind reads first, given
// whether it is interactive and a login shell (as its options say).
func startupFiles(sh string, interactive, login bool) []string {
	var files []string
	switch sh {
	case "bash":
		if interactive {
			files = append(files, "~/.bashrc")
		}
		if login {
			files = append(files, "/etc/profile", "~/.bash_profile", "~/.bash_login", "~/.profile")
		}
	case "zsh":
		files = append(files, "~/.zshenv", "/etc/zshenv")
		if login {
			files = append(files, "~/.zprofile", "~/.zlogin", "/etc/zprofile", "/etc/zlogin")
		}
		if interactive {
			files = append(files, "~/.zshrc", "/etc/zshrc")
		}
	default:
		if login {
			files = append(files, "/etc/profile", "~/.profile")
		}
	}
	return files
}

// startupWritten: a startup file the script wrote or changed before the
// shell at line runs makes that shell not understood, naming both lines.
func (w *walker) startupWritten(sh string, interactive, login bool, line int) {
	for _, f := range startupFiles(sh, interactive, login) {
		if how, l := w.wroteAt(f); how != "" {
			w.reason(SeverityRunsUnseen, line, true, "%s reads its startup file %s first, which the script %s at line %d (write, then run)", sh, w.display(f), how, l)
		}
	}
}
