// Environment construction: command-execution.md, "Environment
// construction", rules 1 to 8, all here. Rules 2, 3 and 5 and the rule for
// equal or conflicting values (routeEnvironmentSecret, checkFinalNames) run
// during the response check, because a response that breaks them must be
// completed ABORTED/INVALID_RESPONSE before anything else happens; rules 1,
// 4, 6, 7 and 8 (buildEnvironment) run after approval, just before the
// exec.

package main

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// gitSetting is one configuration entry passed to Git through
// GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n.
type gitSetting struct{ Key, Value string }

// gitSettingsCount is the most settings a run adds (serviceHandle.gitSettings).
const gitSettingsCount = 2

// envPlan is everything the command environment is built from.
type envPlan struct {
	Inherited []string         // os.Environ(), byte-preserving
	Secrets   []approvedSecret // checked and routed by checkInvocationResponse
	Git       []gitSetting     // rule 6, empty with --no-git-sign or without SSH
	AgentSock string           // rule 6: replaces SSH_AUTH_SOCK when not empty
	NoAgent   bool             // rule 7: remove SSH_AUTH_SOCK last
}

// envName returns the name part of an environment entry; ok is false for
// an entry without "=", which names no variable: getenv(3) never matches
// it, so it hides nothing.
func envName(entry string) (name string, ok bool) {
	name, _, ok = strings.Cut(entry, "=")
	return name, ok
}

// buildEnvironment returns the command's environment.
func buildEnvironment(p envPlan) (env []string, err error) {
	// Rules 1 and 8: the complete inherited environment, one entry per
	// name. The first entry wins, as getenv(3) would have seen it. An entry
	// without "=" stays as it was, as a direct exec passes it, and is no
	// variable's entry: a later FOO=bar still defines FOO.
	index := map[string]int{}
	for _, entry := range p.Inherited {
		name, ok := envName(entry)
		if !ok {
			env = append(env, entry)
			continue
		}
		if _, dup := index[name]; dup {
			continue
		}
		index[name] = len(env)
		env = append(env, entry)
	}
	set := func(name, value string) {
		if i, ok := index[name]; ok {
			env[i] = name + "=" + value
			return
		}
		index[name] = len(env)
		env = append(env, name+"="+value)
	}
	lookup := func(name string) (string, bool) {
		if i, ok := index[name]; ok {
			return strings.CutPrefix(env[i], name+"=")
		}
		return "", false
	}

	// Rule 4: overlay the routed values. Rule 5 (names, NUL bytes) and equal
	// or conflicting values for one final name were settled by the response
	// check; the sorted order only makes the result deterministic.
	var names []string
	returned := map[string]string{}
	for _, s := range p.Secrets {
		for name, value := range s.Environment {
			if _, dup := returned[name]; !dup {
				names = append(names, name)
			}
			returned[name] = string(value)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		set(name, returned[name])
	}

	// Rule 6: Git settings continue an existing GIT_CONFIG_COUNT. The
	// inherited one was warned about before the request
	// (warnGitConfigCount); only the response says whether an SSH secret
	// makes the run add settings, and a returned count can only be checked
	// now. The suggested action depends on where the count came from.
	if len(p.Git) > 0 {
		count := 0
		if v, ok := lookup("GIT_CONFIG_COUNT"); ok {
			n, err := continuedGitConfigCount(v, len(p.Git))
			if _, fromSecret := returned["GIT_CONFIG_COUNT"]; err != nil && fromSecret {
				return nil, classify(failGitConfigCount, err)
			} else if err != nil {
				return nil, classifyWithFix(failGitConfigCount, "unset GIT_CONFIG_COUNT", err)
			}
			count = n
		}
		for _, g := range p.Git {
			set(fmt.Sprintf("GIT_CONFIG_KEY_%d", count), g.Key)
			set(fmt.Sprintf("GIT_CONFIG_VALUE_%d", count), g.Value)
			count++
		}
		set("GIT_CONFIG_COUNT", strconv.Itoa(count))
	}
	if p.AgentSock != "" && !p.NoAgent {
		set("SSH_AUTH_SOCK", p.AgentSock)
	}

	// Rule 7: --no-ssh-agent removes SSH_AUTH_SOCK after everything else,
	// including a value a secret returned.
	if p.NoAgent {
		if i, ok := index["SSH_AUTH_SOCK"]; ok {
			env = slices.Delete(env, i, i+1)
		}
	}
	return env, nil
}

// gitConfigCount reads GIT_CONFIG_COUNT as Git does (config.c,
// git_config_from_env: strtoul(value, &end, 10), refused unless end is the
// end of the string, and refused above INT_MAX). strtoul skips leading
// white space and takes one sign, so " 1" and "+1" count 1; without any
// digit it leaves end at the start, so only "" counts 0 and " " is refused;
// it negates "-N", which wraps above INT_MAX for any N but 0.
func gitConfigCount(v string) (int, error) {
	const intMax = 1<<31 - 1
	s := strings.TrimLeft(v, " \t\n\v\f\r")
	negative := strings.HasPrefix(s, "-")
	if negative || strings.HasPrefix(s, "+") {
		s = s[1:]
	}
	digits := strings.TrimLeft(s, "0123456789")
	switch {
	case v == "":
		return 0, nil
	case len(digits) == len(s) || digits != "":
		return 0, fmt.Errorf("GIT_CONFIG_COUNT is %s, not a count; Git refuses it (\"bogus count\")", quoted(v))
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > intMax || (negative && n != 0) {
		return 0, fmt.Errorf("GIT_CONFIG_COUNT is %s; Git refuses a count above %d (\"too many entries\")", quoted(v), intMax)
	}
	return int(n), nil
}

// continuedGitConfigCount is the count that adding more settings continues
// from, refused when Git would refuse the value or the new total.
func continuedGitConfigCount(v string, more int) (int, error) {
	n, err := gitConfigCount(v)
	if err != nil {
		return 0, err
	}
	if n > 1<<31-1-more {
		return 0, fmt.Errorf("GIT_CONFIG_COUNT is %s; with agentknock's %d Git settings it would exceed what Git accepts", quoted(v), more)
	}
	return n, nil
}

// checkGitConfigCount is rule 6's one failure, decided before the request
// from the inherited environment (the first GIT_CONFIG_COUNT entry, as
// getenv sees it), so that no approval is spent on a run that would stop
// there. gitSettingsCount is how many settings a run may add.
func checkGitConfigCount(inherited []string) error {
	for _, entry := range inherited {
		if v, ok := strings.CutPrefix(entry, "GIT_CONFIG_COUNT="); ok {
			_, err := continuedGitConfigCount(v, gitSettingsCount)
			return err
		}
	}
	return nil
}

// routeEnvironmentSecret applies one secret's requested routing to the
// variables the device returned (stored names): rule 2, the response honours
// "only" and "omit"; rule 3, the standard-input variable is taken out and
// renames apply; rule 5, final names are valid and values hold no NUL. It
// returns the final names with their values and the standard-input value,
// if one is routed. Every failure is an invalid response.
func routeEnvironmentSecret(name string, values envValues, routing *environmentDelivery) (envValues, *stdinDelivery, error) {
	if routing == nil {
		routing = &environmentDelivery{}
	}
	if routing.Only != nil {
		for _, v := range routing.Only {
			if _, ok := values[v]; !ok {
				return nil, nil, invalidResponse("secret %q lacks variable %q selected by only", name, v)
			}
		}
		for _, v := range protoSortedKeys(values) {
			if !slices.Contains(routing.Only, v) {
				return nil, nil, invalidResponse("secret %q returned variable %q not selected by only", name, v)
			}
		}
	}
	for _, v := range routing.Omit {
		if _, ok := values[v]; ok {
			return nil, nil, invalidResponse("secret %q returned omitted variable %q", name, v)
		}
	}
	for _, src := range protoSortedKeys(routing.Rename) {
		if _, ok := values[src]; !ok {
			return nil, nil, invalidResponse("secret %q lacks variable %q named by rename", name, src)
		}
	}
	var stdin *stdinDelivery
	if routing.Stdin != "" {
		v, ok := values[routing.Stdin]
		if !ok {
			return nil, nil, invalidResponse("secret %q lacks variable %q named by stdin", name, routing.Stdin)
		}
		stdin = &stdinDelivery{Secret: name, Variable: routing.Stdin, Value: v}
	}
	env := envValues{}
	for _, src := range protoSortedKeys(values) {
		if routing.Stdin != "" && src == routing.Stdin {
			continue
		}
		final := src
		if dst, ok := routing.Rename[src]; ok {
			final = dst
		}
		if !validEnvironmentName(final) {
			return nil, nil, invalidResponse("secret %q: invalid environment variable name %q", name, final)
		}
		value := values[src]
		if strings.ContainsRune(string(value), 0) {
			return nil, nil, invalidResponse("secret %q: value of %q contains a NUL byte", name, src)
		}
		if prev, seen := env[final]; seen && prev != value {
			return nil, nil, invalidResponse("secret %q delivers different values for %q", name, final)
		}
		env[final] = value
	}
	return env, stdin, nil
}

// checkFinalNames requires secrets that deliver the same final name to
// deliver the same value, so the overlay's order cannot matter.
func checkFinalNames(secrets []approvedSecret) error {
	owner := map[string]string{}
	merged := map[string]secretText{}
	for _, s := range secrets {
		for _, final := range slices.Sorted(maps.Keys(s.Environment)) {
			value := s.Environment[final]
			if prev, seen := merged[final]; seen && prev != value {
				return invalidResponse("secrets %q and %q deliver different values for %q", owner[final], s.Name, final)
			}
			merged[final] = value
			owner[final] = s.Name
		}
	}
	return nil
}
