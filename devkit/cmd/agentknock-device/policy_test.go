// Tests of the policy file and its decision table.
package main

import (
	"strings"
	"testing"
)

func TestPolicyDecisionTable(t *testing.T) {
	p, err := parsePolicy([]byte(`{
		"default": "ask",
		"secrets": {"demo": "approve", "prod": "deny", "ci": "approve", "careful": "ask"},
		"operations": {"ssh-authenticate": "ask", "git-sign": "approve"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		kind    string
		secrets []string
		want    verdict
		msg     string // substring of the denial message
	}{
		{kindInvocation, []string{"demo"}, verdictApprove, ""},
		{kindInvocation, []string{"prod"}, verdictDeny, `secret "prod"`},
		{kindInvocation, []string{"demo", "prod"}, verdictDeny, `secret "prod"`},    // deny wins
		{kindInvocation, []string{"demo", "ci"}, verdictApprove, ""},                // all approve
		{kindInvocation, []string{"demo", "unknown"}, verdictAsk, ""},               // default ask
		{kindInvocation, []string{"demo", "careful"}, verdictAsk, ""},               // mixed
		{kindInvocation, []string{"careful", "prod"}, verdictDeny, `secret "prod"`}, // deny beats ask
		{kindGitSign, []string{"demo"}, verdictApprove, ""},                         // secret approve covers git-sign
		{kindGitSign, []string{"unknown"}, verdictApprove, ""},                      // operation rule beats default
		{kindGitSign, []string{"careful"}, verdictAsk, ""},                          // stricter of secret and operation
		{kindGitSign, []string{"prod"}, verdictDeny, `secret "prod"`},
		{kindSSH, []string{"demo"}, verdictAsk, ""}, // operation asks although the secret approves
		{kindSSH, []string{"prod"}, verdictDeny, `secret "prod"`},
		{kindPairing, nil, verdictAsk, ""},
	}
	for _, tc := range cases {
		got, msg := p.decide(tc.kind, tc.secrets)
		if got != tc.want || !strings.Contains(msg, tc.msg) || (tc.want != verdictDeny && msg != "") {
			t.Errorf("%s %v: got %s %q, want %s %q", tc.kind, tc.secrets, got, msg, tc.want, tc.msg)
		}
	}

	strict, err := parsePolicy([]byte(`{"default": "deny", "pairing": "approve", "secrets": {"ok": "approve"}, "operations": {"invocation": "deny"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if v, msg := strict.decide(kindGitSign, []string{"other"}); v != verdictDeny || !strings.Contains(msg, `"other"`) {
		t.Errorf("default deny: %s %q", v, msg)
	}
	if v, msg := strict.decide(kindInvocation, []string{"ok"}); v != verdictDeny || !strings.Contains(msg, "invocation") {
		t.Errorf("operation deny over secret approve: %s %q", v, msg)
	}
	if v, _ := strict.decide(kindGitSign, []string{"ok"}); v != verdictApprove {
		t.Errorf("secret approve for git-sign: %s", v)
	}
	if v, _ := strict.decide(kindPairing, nil); v != verdictApprove {
		t.Errorf("pairing approve: %s", v)
	}
	if v, _ := defaultPolicy().decide(kindInvocation, []string{"x"}); v != verdictAsk {
		t.Errorf("no policy: %s", v)
	}
}

func TestPolicyParseErrors(t *testing.T) {
	for _, bad := range []string{
		`{"default": "allow"}`,
		`{"secrets": {"x": "yes"}}`,
		`{"operations": {"exec": "ask"}}`,
		`{"operations": {"git-sign": "sometimes"}}`,
		`{"pairing": "maybe"}`,
		`{"defaults": "ask"}`,
		`{"secrets": {"": "ask"}}`,
		`{"default": "ask"} {}`,
		`[]`,
	} {
		if _, err := parsePolicy([]byte(bad)); err == nil {
			t.Errorf("parsePolicy(%s) accepted", bad)
		}
	}
	p, err := parsePolicy([]byte(`{}`))
	if err != nil || p.Default != verdictAsk || p.Pairing != verdictAsk {
		t.Errorf("empty policy: %+v, %v", p, err)
	}
}

func TestPolicyAutoApprovalsAreNamed(t *testing.T) {
	p, err := parsePolicy([]byte(`{"default": "ask", "pairing": "approve",
		"secrets": {"demo": "approve", "prod": "deny"}, "operations": {"git-sign": "approve"},
		"rules": [{"name": "tests", "client": "c", "secrets": ["gh"], "executable": "/bin/sh", "execute_only": true,
		           "argv": ["sh", "-c", "make test"], "match": "script", "directory": "/w"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(p.autoApprovals(), "")
	for _, want := range []string{`"pairing": "approve"`, "secret demo:", "operation git-sign:", "policy rule tests: sh -c 'make test' in /w",
		"- make via PATH:", "- directory /w:"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q not named in:\n%s", want, text)
		}
	}
	if strings.Contains(text, "prod") {
		t.Errorf("a denying secret listed as approving:\n%s", text)
	}
	if got := defaultPolicy().autoApprovals(); len(got) != 0 {
		t.Errorf("the default policy approves: %q", got)
	}
	if _, err := parsePolicy([]byte(`{"rules": [{"client": "c", "secrets": ["s"], "executable": "/bin/x", "execute_only": true,
		"argv": ["x"], "directory": "/w", "mac": "00"}]}`)); err == nil {
		t.Error("a policy rule with a mac accepted")
	}
}
