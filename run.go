// The run sequence of command-execution.md, "Common execution semantics",
// steps 1-9, as one function to read from top to bottom.

package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	"golang.org/x/crypto/ssh"
)

// runCommand returns only when the command was not started; its result is
// agentknock's exit status.
func runCommand(o *runOptions, cs callerState) int {
	out := newOutput(o.Quiet, o.Verbose)
	// Before the request, a failure of each step has the class given here
	// unless its error carries one (output.go).
	notContacted := func(err error, class failureClass) int {
		out.stopped(runStopped(true), err, class)
		return 1
	}
	home, err := stateHome(o.Home)
	if err != nil {
		return notContacted(err, failHomeNotSet)
	}

	if err := checkStartDescriptors(); err != nil {
		return notContacted(err, failHostUnsupported)
	}

	// Steps 1-2: capture the directory and search path, then select, open,
	// inspect and retain the executable.
	wd, err := retainWorkdir()
	if err != nil {
		return notContacted(err, failWorkdir)
	}
	searchPath, ok := os.LookupEnv("PATH")
	if !ok {
		searchPath = defaultSearchPath
	}
	exe, err := selectExecutable(wd, o.Command[0], searchPath)
	if err != nil {
		return notContacted(err, failOther)
	}
	if err := exe.inspect(); err != nil {
		return notContacted(err, failOther)
	}
	if err := checkInterpreter(wd, exe, searchPath); err != nil {
		return notContacted(err, failOther)
	}

	// The host must provide what this path uses before the device is asked
	// (command-execution.md, "Platform implementations"). A service may
	// start for --stdin and for an SSH secret, which only the response
	// reveals; its executable is identified now.
	needs := runNeeds{script: exe.script, service: o.stdinRequested() || !(o.NoSSHAgent && o.NoGitSign), probe: exe.executeOnly, caller: cs}
	var self selfImage
	if needs.service {
		if self, err = retainSelfImage(); err != nil {
			return notContacted(err, failHostUnsupported)
		}
	}
	if err := checkHostFacilities(needs); err != nil {
		return notContacted(err, failHostUnsupported)
	}
	// An execute-only file is probed only now, once the process limit
	// has counted the probe's child, and before the relay connection
	// starts threads of its own.
	if exe.executeOnly {
		note, err := checkExecuteOnly(exe)
		if err != nil {
			return notContacted(err, failOther)
		}
		out.detail("%s", note)
	}
	warnGitConfigCount(o, out)
	// The command can run here: read the pairing and connect to the relay
	// while the rest of the request is prepared (the descriptors this takes
	// are within those just checked). Only the request, later, reaches the
	// device.
	ahead := readPairingAhead(home)
	defer ahead.close()
	traceStep("selection and hashing")
	op := execOperation{
		Type:             "exec",
		Command:          o.Command[0],
		Arguments:        o.Command[1:],
		WorkingDirectory: wd.path,
		ExecutablePath:   exe.path,
		ExecutableHash:   exe.hash,
		ExecutableMode:   modeName(exe.script),
		ScriptContents:   exe.contents,
		Stdin:            cs.reportedStream(0),
		Stdout:           cs.reportedStream(1),
		Stderr:           cs.reportedStream(2),
	}
	requested := make(map[string]secretDelivery, len(o.Secrets))
	stdinSource := [2]string{}
	for _, name := range o.Secrets {
		requested[name] = secretDelivery{Environment: o.Routing[name]}
		if rt := o.Routing[name]; rt != nil && rt.Stdin != "" {
			stdinSource = [2]string{name, rt.Stdin}
			// The command reads the value from the service's pipe, so
			// that is its standard input, as the reference reports it.
			op.Stdin = streamPipe
		}
	}
	token := make([]byte, invocationTokenSize)
	if _, err := rand.Read(token); err != nil {
		return notContacted(err, failOther)
	}
	chain := launcherChain()
	traceStep("launcher chain")
	inv, err := newInvocationRequest(requested, o.Reason, op, chain, token)
	if err != nil {
		return notContacted(err, failOther)
	}
	out.detail("executable: %s (%s, sha256 %s)", printable(exe.path), modeName(exe.script), hashText(exe.hash))
	traceStep("request built")

	// Steps 3-4: the device exchange. SIGINT and SIGTERM cancel it.
	watch := watchTermination(cs)
	traceStep("signal watch")
	approval, invocationID, err := requestApproval(home, ahead, inv, watch, out)
	if err != nil {
		out.stopped(runStopped(false), err, failOther)
		return exitStatusOf(err)
	}

	// Step 5: the invocation service delivers a value on standard input
	// and provides the temporary SSH agent for an SSH secret.
	svc, err := startServiceFor(approval, invocationID, token, home, self, o, out)
	if err != nil {
		out.stopped(runStopped(false), err, failServiceStart)
		return 1
	}

	// Step 7: the environment.
	env, err := buildEnvironment(envPlan{
		Inherited: os.Environ(),
		Secrets:   approval.Secrets,
		Git:       svc.gitSettings(),
		AgentSock: svc.agentSocket(),
		NoAgent:   o.NoSSHAgent,
	})
	if err != nil {
		out.stopped(runStopped(false), err, failOther)
		return 1
	}

	// Steps 8, 6 and 9: pending signals; the same object, and the same
	// bytes, as approved, checked last so that nothing waits between the
	// check and the exec (execCommand); then process replacement.
	if out.verbose {
		reportDelivery(out, approval, stdinSource)
		out.print("Running command %s.", quoted(o.Command[0]))
	}
	traceStep("environment built")
	err = execCommand(wd, exe, o.Command, env, svc.stdinPipe(), cs, watch)
	var intr *interrupted
	var changed *revalidationError
	switch {
	case errors.As(err, &intr):
		out.stopped(runStopped(false), fmt.Errorf("%w before the command started", err), failInterrupted)
		return exitStatusFor(intr.sig)
	case errors.As(err, &changed):
		out.stopped(runStopped(false), err, failCommandChanged)
		return 1
	}
	out.stopped(runStopped(false), fmt.Errorf("the device approved the request, but %s could not be started: %w", quoted(o.Command[0]), err), failExecFailed)
	return 1
}

// reportDelivery lists, for --verbose, what the command receives: the
// names of the variables added to its environment, the variable on its
// standard input and the SSH secret (never a value), in the reference
// client's words.
func reportDelivery(out *output, approval *invocationResponse, stdinSource [2]string) {
	var names []string
	for _, s := range approval.Secrets {
		names = append(names, protoSortedKeys(s.Environment)...)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		out.print("No variables will be added to the command environment.")
	} else {
		out.print("These variables will be added to the command environment:")
		for _, n := range names {
			out.print("- %s", n)
		}
	}
	if stdinSource[0] != "" {
		out.print("Environment variable %s from secret %s is available on standard input.", quoted(stdinSource[1]), quoted(stdinSource[0]))
	}
	if approval.SSH != nil {
		out.print("SSH secret %s is available for Git signing and supported SSH authentication.", quoted(approval.SSH.Secret))
	}
}

func modeName(script bool) string {
	if script {
		return executableScript
	}
	return executableBinary
}

// hashText is the executable's hash as the device shows it (hexadecimal),
// so that a person can compare the two by eye.
func hashText(h []byte) string {
	if h == nil {
		return "unavailable: not readable"
	}
	return hex.EncodeToString(h)
}

// startServiceFor starts the invocation service when the approval needs
// one: a value for standard input, or an SSH secret for the temporary agent
// and Git signing.
func startServiceFor(approval *invocationResponse, invocationID ULID, token []byte, home string, self selfImage, o *runOptions, out *output) (*serviceHandle, error) {
	start := serviceStartup{OwnerPID: os.Getpid(), Self: self}
	if approval.Stdin != nil {
		out.detail("secret %s: variable %s goes to standard input", approval.Stdin.Secret, approval.Stdin.Variable)
		value := string(approval.Stdin.Value)
		start.Stdin = &value
	}
	if approval.SSH != nil && !(o.NoSSHAgent && o.NoGitSign) {
		upstream := ""
		if !o.NoSSHPassthrough {
			upstream = os.Getenv("SSH_AUTH_SOCK")
		}
		out.detail("secret %s: SSH key %s through a temporary agent and Git signing", approval.SSH.Secret, ssh.FingerprintSHA256(approval.SSH.PublicKey))
		start.SSH = &serviceSSH{Home: home, InvocationID: invocationID, Token: token, Secret: approval.SSH.Secret,
			PublicKey: approval.SSH.AuthorizedKey, Upstream: upstream, Passthrough: !o.NoSSHPassthrough, GitSign: !o.NoGitSign}
	}
	if start.Stdin == nil && start.SSH == nil {
		return nil, nil
	}
	return startInvocationService(start)
}

// checkStartDescriptors stops a run whose open-file limit cannot hold even
// a plain run's descriptors before step 1 opens any, so that a limit of 5
// to 8 gets the limit to raise instead of "too many open files" from
// whichever open came first; checkHostFacilities checks the run's full
// need later, when it is known.
func checkStartDescriptors() error {
	return checkDescriptors(runDescriptors, false)
}

// warnGitConfigCount is step 7's one check that can fail on the inherited
// environment alone, made before the request: Git settings continue an
// existing GIT_CONFIG_COUNT (environment rule 6), so a count Git refuses
// stops a run that adds them. Only an SSH secret in the response adds
// them, and only the response says whether a requested secret is one: a
// run is not refused for a count it may never extend (buildEnvironment
// refuses it then), but told now how to avoid that.
func warnGitConfigCount(o *runOptions, out *output) {
	if o.NoGitSign || o.Quiet {
		return
	}
	if err := checkGitConfigCount(os.Environ()); err != nil {
		out.print("Warning: %v. If the device returns an SSH secret, agentknock adds Git settings after it and will stop there; unset GIT_CONFIG_COUNT, or pass --no-git-sign, to avoid that.", err)
	}
}

// runNeeds is what the chosen run path will use.
type runNeeds struct {
	script  bool        // execve of the candidate path, else execveat of the descriptor
	service bool        // an invocation service may start
	probe   bool        // an execute-only file is probed (checkExecuteOnly; a process on Linux)
	caller  callerState // the limits and descriptors the command will have
}

func (o *runOptions) stdinRequested() bool {
	for _, r := range o.Routing {
		if r != nil && r.Stdin != "" {
			return true
		}
	}
	return false
}
