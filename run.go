// The run sequence of command-execution.md, "Common execution semantics",
// steps 1-9, as one function to read from top to bottom.
package main

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"strings"
)

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
	op := execOperation{
		Type:             "exec",
		Command:          o.Command[0],
		Arguments:        o.Command[1:],
		WorkingDirectory: wd.path,
		ExecutablePath:   exe.path,
		ExecutableHash:   exe.hash,
		ExecutableMode:   modeName(exe.script),
		ScriptContents:   exe.contents,
		Stdin:            streamKind(0),
		Stdout:           streamKind(1),
		Stderr:           streamKind(2),
	}
	requested := make(map[string]secretDelivery, len(o.Secrets))
	for _, name := range o.Secrets {
		requested[name] = secretDelivery{Environment: o.Routing[name]}
	}
	token := make([]byte, invocationTokenSize)
	if _, err := rand.Read(token); err != nil {
		return notContacted("%v", err)
	}
	inv, err := newInvocationRequest(requested, o.Reason, op, launcherChain(), token)
	if err != nil {
		return notContacted("%v", err)
	}
	out.detail("executable: %s (%s, sha256 %s)", exe.path, modeName(exe.script), hashText(exe.hash))
	out.detail("signal state: %s", cs.describe())

	// Steps 3-4: the device exchange. SIGINT and SIGTERM cancel it.
	watch := watchTermination(cs)
	approval, err := requestApproval(home, inv, watch, out)
	if err != nil {
		var intr *interrupted
		if errors.As(err, &intr) {
			out.failure("%v; the command did not run.", err)
			return exitStatusFor(intr.sig)
		}
		out.failure("%v", err)
		return 1
	}

	// Step 5: the invocation service delivers a value on standard input.
	// SSH operations are not available yet: refuse rather than run without.
	if approval.SSH != nil {
		out.failure("secret %s is an SSH key, which needs the invocation service's SSH agent; this build does not have it yet. The command did not run.", approval.SSH.Secret)
		return 1
	}
	var stdin *os.File
	if approval.Stdin != nil {
		out.detail("secret %s: variable %s goes to standard input", approval.Stdin.Secret, approval.Stdin.Variable)
		stdin, err = startInvocationService(serviceStartup{OwnerPID: os.Getpid(), Stdin: string(approval.Stdin.Value)})
		if err != nil {
			out.failure("%v; the command did not run.", err)
			return 1
		}
	}

	// Step 6: the same object, and the same bytes, as approved.
	if err := exe.revalidate(wd); err != nil {
		out.failure("%v", err)
		return 1
	}

	// Step 7: the environment.
	for _, s := range approval.Secrets {
		out.detail("secret %s: variables %s", s.Name, strings.Join(protoSortedKeys(s.Environment), ", "))
	}
	env, err := buildEnvironment(envPlan{
		Inherited: os.Environ(),
		Secrets:   approval.Secrets,
		NoAgent:   o.NoSSHAgent,
	})
	if err != nil {
		out.failure("%v; the command did not run.", err)
		return 1
	}

	// Steps 8-9: pending signals, then process replacement.
	out.status("Running %s", o.Command[0])
	err = execCommand(wd, exe, o.Command, env, stdin, cs, watch)
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
		return executableScript
	}
	return executableBinary
}

func hashText(h []byte) string {
	if h == nil {
		return "unavailable: not readable"
	}
	return base64.StdEncoding.EncodeToString(h)
}
