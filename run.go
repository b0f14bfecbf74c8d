// The run sequence of command-execution.md, "Common execution semantics",
// steps 1-9, as one function to read from top to bottom.
package main

import (
	"encoding/base64"
	"errors"
	"os"
	"strings"
)

// launchRequest is what the device is asked to approve (client-reported).
type launchRequest struct {
	Secrets          []string
	Routing          map[string]*routing
	Reason           string
	Command          string
	Arguments        []string
	WorkingDirectory string
	ExecutablePath   string
	ExecutableHash   []byte // nil: not readable
	Script           bool
	ScriptContents   *string
	Stdin            string
	Stdout           string
	Stderr           string
	LauncherChain    []string
}

// launchApproval is an authenticated, checked device approval.
type launchApproval struct {
	Secrets []deliveredSecret // environment secrets, in request order
}

// runCommand returns only when the command was not started; its result is
// agentknock's exit status.
func runCommand(o *runOptions, cs callerState) int {
	out := newOutput(o.Quiet, o.Verbose)
	notContacted := func(format string, args ...any) int {
		out.failure(format, args...)
		out.failure("Agentknock did not contact the device.")
		return 1
	}
	home, err := stateHome(o.Home)
	if err != nil {
		return notContacted("%v", err)
	}

	// Steps 1-2: capture the directory and search path, then select, open,
	// inspect and retain the executable.
	wd, err := retainWorkdir()
	if err != nil {
		return notContacted("%v", err)
	}
	searchPath, ok := os.LookupEnv("PATH")
	if !ok {
		searchPath = defaultSearchPath
	}
	exe, err := selectExecutable(wd, o.Command[0], searchPath)
	if err != nil {
		return notContacted("%v", err)
	}
	if err := exe.inspect(); err != nil {
		return notContacted("%v", err)
	}
	req := &launchRequest{
		Secrets:          o.Secrets,
		Routing:          o.Routing,
		Reason:           o.Reason,
		Command:          o.Command[0],
		Arguments:        o.Command[1:],
		WorkingDirectory: wd.path,
		ExecutablePath:   exe.path,
		ExecutableHash:   exe.hash,
		Script:           exe.script,
		ScriptContents:   exe.contents,
		Stdin:            streamKind(0),
		Stdout:           streamKind(1),
		Stderr:           streamKind(2),
		LauncherChain:    launcherChain(),
	}
	out.detail("executable: %s (%s, sha256 %s)", exe.path, modeName(exe.script), hashText(exe.hash))
	out.detail("signal state: %s", cs.describe())

	// Steps 3-4: the device exchange. SIGINT and SIGTERM cancel it.
	watch := watchTermination(cs)
	approval, err := requestApproval(home, req, watch, out)
	if err != nil {
		var intr *interrupted
		if errors.As(err, &intr) {
			out.failure("%v; the command did not run.", err)
			return exitStatusFor(intr.sig)
		}
		out.failure("%v", err)
		return 1
	}

	// Step 6: the same object, and the same bytes, as approved.
	if err := exe.revalidate(wd); err != nil {
		out.failure("%v", err)
		return 1
	}

	// Step 7: the environment.
	env, stdin, err := buildEnvironment(envPlan{
		Inherited: os.Environ(),
		Secrets:   approval.Secrets,
		Routing:   o.Routing,
		NoAgent:   o.NoSSHAgent,
	})
	if err != nil {
		out.failure("%v; the command did not run.", err)
		return 1
	}
	if stdin != nil {
		out.failure("delivering a value on standard input needs the invocation service, which this build does not have yet; the command did not run.")
		return 1
	}
	if o.Verbose {
		for _, s := range approval.Secrets {
			names := make([]string, 0, len(s.Vars))
			for name := range s.Vars {
				names = append(names, name)
			}
			out.detail("secret %s: variables %s", s.Name, strings.Join(names, ", "))
		}
	}

	// Steps 8-9: pending signals, then process replacement.
	out.status("Running %s", o.Command[0])
	err = execCommand(wd, exe, o.Command, env, cs, watch)
	var intr *interrupted
	if errors.As(err, &intr) {
		out.failure("%v before the command started; it did not run.", err)
		return exitStatusFor(intr.sig)
	}
	out.failure("cannot run %s: %v", o.Command[0], err)
	return 1
}

func modeName(script bool) string {
	if script {
		return "SCRIPT"
	}
	return "BINARY"
}

func hashText(h []byte) string {
	if h == nil {
		return "unavailable: not readable"
	}
	return base64.StdEncoding.EncodeToString(h)
}
