// Process replacement on macOS: command-execution.md, "Process
// replacement". execve of the captured absolute path for binaries and
// scripts alike, after the identity and hash checks (revalidate). The path
// can still be replaced between the last check and execve; macOS offers no
// descriptor execution to close that race.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

type interrupted struct{ sig syscall.Signal }

func (e *interrupted) Error() string { return "interrupted by " + signalName(e.sig) }

// execCommand returns only on failure. x/sys offers no per-thread mask or
// raw sigaction on macOS, so the hand-off uses the signal package: SIGINT and
// SIGTERM go back to the caller's disposition (a signal now ends the launcher
// as it would end the command), Stop reports what was already caught, and
// syscall.Exec takes the runtime's exec lock and restores the file limit.
func execCommand(wd workdir, x *executable, argv, env []string, stdin *os.File, cs callerState, watch *signalWatch) error {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		if cs.ignored[sig] {
			signal.Ignore(sig)
		} else {
			signal.Reset(sig)
		}
	}
	if sig := watch.stop(); sig != 0 {
		return &interrupted{sig}
	}
	signal.Reset(syscall.SIGPIPE)
	if err := becomeStdin(stdin); err != nil {
		return err
	}
	return syscall.Exec(x.path, argv, env)
}
