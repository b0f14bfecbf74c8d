// Environment construction: command-execution.md, "Environment construction",
// rules 1-8, as one function over plain data so every rule has a table test.
package main

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// deliveredSecret is one environment secret's variables as the device
// returned them, before routing.
type deliveredSecret struct {
	Name string
	Vars map[string]string
}

// gitSetting is one configuration entry passed to Git through
// GIT_CONFIG_COUNT/GIT_CONFIG_KEY_n/GIT_CONFIG_VALUE_n.
type gitSetting struct{ Key, Value string }

// envPlan is everything the command environment is built from.
type envPlan struct {
	Inherited []string // os.Environ(), byte-preserving
	Secrets   []deliveredSecret
	Routing   map[string]*routing
	Git       []gitSetting // rule 6, empty with --no-git-sign or without SSH
	AgentSock string       // rule 6: replaces SSH_AUTH_SOCK when not empty
	NoAgent   bool         // rule 7: remove SSH_AUTH_SOCK last
}

// envError is a response the environment cannot be built from. Its text
// names variables and secrets, never values.
type envError struct{ msg string }

func (e *envError) Error() string { return e.msg }

func envErrorf(format string, args ...any) error { return &envError{fmt.Sprintf(format, args...)} }

// routeSecret applies rules 2 and 3 to one secret: it checks the response
// against the requested selection and omission, takes out the value routed
// to standard input and renames the rest. It returns final name -> value.
func routeSecret(s deliveredSecret, rt *routing) (vars map[string]string, stdin *string, err error) {
	if rt == nil {
		rt = &routing{}
	}
	if len(rt.Only) > 0 {
		for _, v := range rt.Only {
			if _, ok := s.Vars[v]; !ok {
				return nil, nil, envErrorf("secret %q: the response lacks selected variable %s", s.Name, v)
			}
		}
		for v := range s.Vars {
			if !slices.Contains(rt.Only, v) {
				return nil, nil, envErrorf("secret %q: the response has unselected variable %s", s.Name, v)
			}
		}
	}
	for _, v := range rt.Omit {
		if _, ok := s.Vars[v]; ok {
			return nil, nil, envErrorf("secret %q: the response has omitted variable %s", s.Name, v)
		}
	}
	for src := range rt.Rename {
		if _, ok := s.Vars[src]; !ok {
			return nil, nil, envErrorf("secret %q: the response lacks renamed variable %s", s.Name, src)
		}
	}
	vars = map[string]string{}
	for name, value := range s.Vars {
		if rt.Stdin != "" && name == rt.Stdin {
			v := value
			stdin = &v
			continue
		}
		if to, ok := rt.Rename[name]; ok {
			name = to
		}
		if prev, dup := vars[name]; dup && prev != value {
			return nil, nil, envErrorf("secret %q delivers two different values for %s", s.Name, name)
		}
		vars[name] = value
	}
	if rt.Stdin != "" && stdin == nil {
		return nil, nil, envErrorf("secret %q: the response lacks variable %s for standard input", s.Name, rt.Stdin)
	}
	return vars, stdin, nil
}

// envName returns the name part of an environment entry.
func envName(entry string) string {
	if i := strings.IndexByte(entry, '='); i >= 0 {
		return entry[:i]
	}
	return entry
}

// buildEnvironment returns the command's environment and the value routed to
// standard input, if any.
func buildEnvironment(p envPlan) (env []string, stdin *string, err error) {
	// Rules 1 and 8: the inherited environment, one entry per name. The first
	// entry wins, as getenv(3) would have seen it.
	index := map[string]int{}
	for _, entry := range p.Inherited {
		name := envName(entry)
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
			v, _ := strings.CutPrefix(env[i], name+"=")
			return v, strings.Contains(env[i], "=")
		}
		return "", false
	}

	// Rules 2-5: route each secret, then overlay; equal values for one final
	// name merge, different ones are refused.
	returned := map[string]string{}
	from := map[string]string{}
	for _, s := range p.Secrets {
		vars, in, err := routeSecret(s, p.Routing[s.Name])
		if err != nil {
			return nil, nil, err
		}
		if in != nil {
			if stdin != nil {
				return nil, nil, envErrorf("more than one value is routed to standard input")
			}
			stdin = in
		}
		for name, value := range vars {
			if name == "" || strings.ContainsAny(name, "=\x00") {
				return nil, nil, envErrorf("secret %q returns an invalid variable name %q", s.Name, name)
			}
			if strings.ContainsRune(value, 0) {
				return nil, nil, envErrorf("secret %q returns a value with a NUL byte for %s", s.Name, name)
			}
			if prev, dup := returned[name]; dup && prev != value {
				return nil, nil, envErrorf("secrets %q and %q return different values for %s", from[name], s.Name, name)
			}
			returned[name] = value
			from[name] = s.Name
		}
	}
	names := make([]string, 0, len(returned))
	for name := range returned {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		set(name, returned[name])
	}

	// Rule 6: Git settings continue an existing GIT_CONFIG_COUNT.
	if len(p.Git) > 0 {
		count := 0
		if v, ok := lookup("GIT_CONFIG_COUNT"); ok && v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return nil, nil, envErrorf("GIT_CONFIG_COUNT is %q, not a count; Git would refuse it", v)
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
	return env, stdin, nil
}
