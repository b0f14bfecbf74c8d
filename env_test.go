// Environment construction rules 1-8 (command-execution.md), one table.
package main

import (
	"reflect"
	"strings"
	"testing"
)

func TestBuildEnvironment(t *testing.T) {
	secret := func(name string, kv ...string) deliveredSecret {
		vars := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			vars[kv[i]] = kv[i+1]
		}
		return deliveredSecret{Name: name, Vars: vars}
	}
	cases := []struct {
		name    string
		plan    envPlan
		want    []string
		stdin   string
		wantErr string
	}{
		{name: "inherited bytes and order kept, first duplicate wins",
			plan: envPlan{Inherited: []string{"A=1", "ODD\xff=\xfe", "A=2", "B=3"}},
			want: []string{"A=1", "ODD\xff=\xfe", "B=3"}},
		{name: "overlay replaces in place and appends sorted",
			plan: envPlan{Inherited: []string{"TOKEN=old", "X=1"}, Secrets: []deliveredSecret{secret("s", "TOKEN", "new", "Z", "z", "Y", "y")}},
			want: []string{"TOKEN=new", "X=1", "Y=y", "Z=z"}},
		{name: "stdin value removed from the environment",
			plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "a", "PIN", "1234")}, Routing: map[string]*routing{"s": {Stdin: "PIN"}}},
			want: []string{"A=a"}, stdin: "1234"},
		{name: "rename",
			plan: envPlan{Inherited: []string{"PGPASSWORD=old"}, Secrets: []deliveredSecret{secret("db", "PASSWORD", "pw")}, Routing: map[string]*routing{"db": {Rename: map[string]string{"PASSWORD": "PGPASSWORD"}}}},
			want: []string{"PGPASSWORD=pw"}},
		{name: "only: exact set", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "a", "B", "b")}, Routing: map[string]*routing{"s": {Only: []string{"A"}}}},
			wantErr: "unselected variable B"},
		{name: "only: missing", plan: envPlan{Secrets: []deliveredSecret{secret("s", "B", "b")}, Routing: map[string]*routing{"s": {Only: []string{"A", "B"}}}},
			wantErr: "lacks selected variable A"},
		{name: "omit respected", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "a")}, Routing: map[string]*routing{"s": {Omit: []string{"A"}}}},
			wantErr: "has omitted variable A"},
		{name: "rename source missing", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "a")}, Routing: map[string]*routing{"s": {Rename: map[string]string{"B": "C"}}}},
			wantErr: "lacks renamed variable B"},
		{name: "stdin source missing", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "a")}, Routing: map[string]*routing{"s": {Stdin: "B"}}},
			wantErr: "lacks variable B for standard input"},
		{name: "empty name", plan: envPlan{Secrets: []deliveredSecret{secret("s", "", "a")}}, wantErr: "invalid variable name"},
		{name: "= in name", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A=B", "a")}}, wantErr: "invalid variable name"},
		{name: "NUL in name", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A\x00", "a")}}, wantErr: "invalid variable name"},
		{name: "NUL in value", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "a\x00b")}}, wantErr: "a NUL byte for A"},
		{name: "conflicting values across secrets", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "val-1"), secret("t", "A", "val-2")}},
			wantErr: `secrets "s" and "t" return different values for A`},
		{name: "conflict through a rename", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "val-1", "B", "val-2")}, Routing: map[string]*routing{"s": {Rename: map[string]string{"A": "B"}}}},
			wantErr: "two different values for B"},
		{name: "equal values merge", plan: envPlan{Secrets: []deliveredSecret{secret("s", "A", "same"), secret("t", "A", "same")}},
			want: []string{"A=same"}},
		{name: "git settings continue GIT_CONFIG_COUNT",
			plan: envPlan{Inherited: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me"},
				Git: []gitSetting{{"gpg.ssh.program", "/run/helper"}, {"gpg.ssh.defaultKeyCommand", "/run/helper --default-key"}}},
			want: []string{"GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_0=user.name", "GIT_CONFIG_VALUE_0=me",
				"GIT_CONFIG_KEY_1=gpg.ssh.program", "GIT_CONFIG_VALUE_1=/run/helper",
				"GIT_CONFIG_KEY_2=gpg.ssh.defaultKeyCommand", "GIT_CONFIG_VALUE_2=/run/helper --default-key"}},
		{name: "git count from a returned value", plan: envPlan{Secrets: []deliveredSecret{secret("s", "GIT_CONFIG_COUNT", "x")}, Git: []gitSetting{{"k", "v"}}},
			wantErr: "GIT_CONFIG_COUNT is \"x\""},
		{name: "agent socket replaces SSH_AUTH_SOCK",
			plan: envPlan{Inherited: []string{"SSH_AUTH_SOCK=/old"}, Secrets: []deliveredSecret{secret("s", "SSH_AUTH_SOCK", "/returned")}, AgentSock: "/run/agent.sock"},
			want: []string{"SSH_AUTH_SOCK=/run/agent.sock"}},
		{name: "--no-ssh-agent removes SSH_AUTH_SOCK last, even a returned one",
			plan: envPlan{Inherited: []string{"A=1", "SSH_AUTH_SOCK=/old"}, Secrets: []deliveredSecret{secret("s", "SSH_AUTH_SOCK", "/returned")}, AgentSock: "/run/agent.sock", NoAgent: true},
			want: []string{"A=1"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, stdin, err := buildEnvironment(c.plan)
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
