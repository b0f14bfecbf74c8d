// Environment construction rules 1-8 (command-execution.md), one table:
// each response goes through the client's response check (rules 2-3) and
// then buildEnvironment (rules 1, 4-8), as in a run.

package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// deviceSecret is one secret's variables as a device returns them.
type deviceSecret struct {
	Name string
	Vars map[string]string
}

// testPlan is an envPlan whose secrets are still the device's response.
type testPlan struct {
	Inherited []string
	Secrets   []deviceSecret
	Git       []gitSetting
	AgentSock string
	NoAgent   bool
}

// approveAndBuild runs a device response through the response check and
// the environment construction.
func approveAndBuild(tp testPlan, routing map[string]*environmentDelivery) ([]string, *string, error) {
	plan := envPlan{Inherited: tp.Inherited, Git: tp.Git, AgentSock: tp.AgentSock, NoAgent: tp.NoAgent}
	if len(tp.Secrets) == 0 {
		env, err := buildEnvironment(plan)
		return env, nil, err
	}
	requested := map[string]secretDelivery{}
	returned := map[string]any{}
	for _, s := range tp.Secrets {
		requested[s.Name] = secretDelivery{Environment: routing[s.Name]}
		vars := map[string]map[string]string{}
		for k, v := range s.Vars {
			vars[k] = map[string]string{"value": v}
		}
		returned[s.Name] = map[string]any{"type": "environment", "variables": vars}
	}
	pt, _ := json.Marshal(map[string]any{"result": "APPROVED", "secrets": returned})
	resp, err := checkInvocationResponse(requested, pt)
	if err != nil {
		return nil, nil, err
	}
	plan.Secrets = resp.Secrets
	var stdin *string
	if resp.Stdin != nil {
		v := string(resp.Stdin.Value)
		stdin = &v
	}
	env, err := buildEnvironment(plan)
	return env, stdin, err
}

func TestBuildEnvironment(t *testing.T) {
	secret := func(name string, kv ...string) deviceSecret {
		vars := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			vars[kv[i]] = kv[i+1]
		}
		return deviceSecret{Name: name, Vars: vars}
	}
	cases := []struct {
		name    string
		plan    testPlan
		routing map[string]*environmentDelivery
		want    []string
		stdin   string
		wantErr string
	}{
		{name: "inherited bytes and order kept, first duplicate wins",
			plan: testPlan{Inherited: []string{"A=1", "ODD\xff=\xfe", "A=2", "B=3"}},
			want: []string{"A=1", "ODD\xff=\xfe", "B=3"}},
		{name: "overlay replaces in place and appends sorted",
			plan: testPlan{Inherited: []string{"TOKEN=old", "X=1"}, Secrets: []deviceSecret{secret("s", "TOKEN", "new", "Z", "z", "Y", "y")}},
			want: []string{"TOKEN=new", "X=1", "Y=y", "Z=z"}},
		{name: "stdin value removed from the environment",
			plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "a", "PIN", "1234")}}, routing: map[string]*environmentDelivery{"s": {Stdin: "PIN"}},
			want: []string{"A=a"}, stdin: "1234"},
		{name: "rename",
			plan: testPlan{Inherited: []string{"PGPASSWORD=old"}, Secrets: []deviceSecret{secret("db", "PASSWORD", "pw")}}, routing: map[string]*environmentDelivery{"db": {Rename: map[string]string{"PASSWORD": "PGPASSWORD"}}},
			want: []string{"PGPASSWORD=pw"}},
		{name: "only: exact set", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "a", "B", "b")}}, routing: map[string]*environmentDelivery{"s": {Only: []string{"A"}}},
			wantErr: `returned variable "B" not selected by only`},
		{name: "only: missing", plan: testPlan{Secrets: []deviceSecret{secret("s", "B", "b")}}, routing: map[string]*environmentDelivery{"s": {Only: []string{"A", "B"}}},
			wantErr: `lacks variable "A" selected by only`},
		{name: "omit respected", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "a")}}, routing: map[string]*environmentDelivery{"s": {Omit: []string{"A"}}},
			wantErr: `returned omitted variable "A"`},
		{name: "rename source missing", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "a")}}, routing: map[string]*environmentDelivery{"s": {Rename: map[string]string{"B": "C"}}},
			wantErr: `lacks variable "B" named by rename`},
		{name: "stdin source missing", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "a")}}, routing: map[string]*environmentDelivery{"s": {Stdin: "B"}},
			wantErr: `lacks variable "B" named by stdin`},
		{name: "empty name", plan: testPlan{Secrets: []deviceSecret{secret("s", "", "a")}}, wantErr: `invalid environment variable name ""`},
		{name: "= in name", plan: testPlan{Secrets: []deviceSecret{secret("s", "A=B", "a")}}, wantErr: `invalid environment variable name "A=B"`},
		{name: "NUL in name", plan: testPlan{Secrets: []deviceSecret{secret("s", "A\x00", "a")}}, wantErr: `invalid environment variable name "A\x00"`},
		{name: "NUL in value", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "a\x00b")}}, wantErr: `value of "A" contains a NUL byte`},
		{name: "conflicting values across secrets", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "val-1"), secret("t", "A", "val-2")}},
			wantErr: `secrets "s" and "t" deliver different values for "A"`},
		{name: "conflict through a rename", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "val-1", "B", "val-2")}}, routing: map[string]*environmentDelivery{"s": {Rename: map[string]string{"A": "B"}}},
			wantErr: `delivers different values for "B"`},
		{name: "equal values merge", plan: testPlan{Secrets: []deviceSecret{secret("s", "A", "same"), secret("t", "A", "same")}},
			want: []string{"A=same"}},
		{name: "git settings continue GIT_CONFIG_COUNT",
			plan: testPlan{Inherited: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me"},
				Git: []gitSetting{{"gpg.ssh.program", "/run/helper"}, {"gpg.ssh.defaultKeyCommand", "/run/helper --default-key"}}},
			want: []string{"GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
				"GIT_CONFIG_KEY_1=gpg.ssh.program", "GIT_CONFIG_VALUE_1=/run/helper",
				"GIT_CONFIG_KEY_2=gpg.ssh.defaultKeyCommand", "GIT_CONFIG_VALUE_2=/run/helper --default-key"}},
		{name: "git count from a returned value", plan: testPlan{Secrets: []deviceSecret{secret("s", "GIT_CONFIG_COUNT", "x")}, Git: []gitSetting{{"k", "v"}}},
			wantErr: "GIT_CONFIG_COUNT is \"x\""},
		{name: "agent socket replaces SSH_AUTH_SOCK",
			plan: testPlan{Inherited: []string{"SSH_AUTH_SOCK=/old"}, Secrets: []deviceSecret{secret("s", "SSH_AUTH_SOCK", "/returned")}, AgentSock: "/run/agent.sock"},
			want: []string{"SSH_AUTH_SOCK=/run/agent.sock"}},
		{name: "--no-ssh-agent removes SSH_AUTH_SOCK last, even a returned one",
			plan: testPlan{Inherited: []string{"A=1", "SSH_AUTH_SOCK=/old"}, Secrets: []deviceSecret{secret("s", "SSH_AUTH_SOCK", "/returned")}, AgentSock: "/run/agent.sock", NoAgent: true},
			want: []string{"A=1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, stdin, err := approveAndBuild(c.plan, c.routing)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				for _, s := range c.plan.Secrets {
					for _, v := range s.Vars {
						if len(v) > 2 && strings.Contains(err.Error(), v) {
							t.Fatalf("the error shows a value: %v", err)
						}
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(env, c.want) {
				t.Fatalf("env %q, want %q", env, c.want)
			}
			if (stdin != nil) != (c.stdin != "") || (stdin != nil && *stdin != c.stdin) {
				t.Fatalf("stdin %v, want %q", stdin, c.stdin)
			}
		})
	}
}
