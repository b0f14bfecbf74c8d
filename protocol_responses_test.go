// protocol_responses_test.go: tests of protocol_responses.go, the
// Invocation response checks and routing, and the SecretList, SecretUpload,
// PairingFinish and PairingRemove response checks (client-device-protocol.md
// "Invocation", "Authenticated errors", "Secret list", "Secret upload",
// "Pairing activation", "Pairing removal").

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// ---- Invocation response checks ----

func baseInvocationRequest() map[string]secretDelivery {
	return map[string]secretDelivery{
		"cloudflare": {Environment: &environmentDelivery{Omit: []string{"CLOUDFLARE_ACCOUNT_ID"}}},
		"github": {Environment: &environmentDelivery{
			Only: []string{"GH_HOST", "GH_TOKEN"}, Rename: map[string]string{"GH_HOST": "GITHUB_HOST"}, Stdin: "GH_TOKEN",
		}},
		"plain": {},
	}
}

func TestCheckInvocationResponseRouting(t *testing.T) {
	resp, err := checkInvocationResponse(baseInvocationRequest(), protoTestdata(t, "protocol-invocation-response.json"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Outcome != outcomeApproved {
		t.Fatalf("outcome %v", resp.Outcome)
	}
	want := map[string]string{"CLOUDFLARE_API_TOKEN": "sv-cloudflare-token", "GITHUB_HOST": "github.com", "PLAIN_TOKEN": "sv-plain-token"}
	if got := environmentOf(resp); !reflect.DeepEqual(got, want) {
		t.Errorf("environment %v, want %v", got, want)
	}
	if resp.Stdin == nil || resp.Stdin.Secret != "github" || resp.Stdin.Variable != "GH_TOKEN" || resp.Stdin.Value != "sv-github-token" {
		t.Errorf("stdin %+v", resp.Stdin)
	}
	if resp.SSH != nil {
		t.Error("unexpected SSH selection")
	}
	if len(resp.Secrets) != 3 || resp.Secrets[0].Name != "cloudflare" || resp.Secrets[1].Name != "github" || resp.Secrets[2].Name != "plain" {
		t.Fatalf("secrets %v", resp.Secrets)
	}
	gh := resp.Secrets[1]
	if gh.Description != "GitHub API access" || gh.Type != "environment" || len(gh.Environment) != 1 || gh.Environment["GITHUB_HOST"] != "github.com" {
		t.Errorf("github secret %v", gh.Environment)
	}
	if len(gh.Variables) != 2 || gh.Variables["GH_HOST"] != "github.com" || gh.Variables["GH_TOKEN"] != "sv-github-token" {
		t.Errorf("github stored variables %v", gh.Variables)
	}
	for _, f := range []string{"%v", "%+v", "%#v", "%s"} {
		protoAssertNoSecret(t, fmt.Sprintf(f, resp)+fmt.Sprintf(f, *resp)+fmt.Sprintf(f, resp.Secrets)+fmt.Sprintf(f, resp.Stdin),
			[]string{"sv-cloudflare-token", "sv-github-token", "sv-plain-token"})
	}
}

func TestCheckInvocationResponseNeedsValidRequest(t *testing.T) {
	twoStdin := map[string]secretDelivery{
		"a": {Environment: &environmentDelivery{Stdin: "X"}},
		"b": {Environment: &environmentDelivery{Stdin: "Y"}},
	}
	body := `{"result":"APPROVED","secrets":{"a":{"type":"environment","variables":{"X":{"value":"sv-x"}}},"b":{"type":"environment","variables":{"Y":{"value":"sv-y"}}}}}`
	r, err := checkInvocationResponse(twoStdin, []byte(body))
	if err == nil || errors.Is(err, errInvalidResponse) {
		t.Fatalf("two stdin routes: %v %v", r, err)
	}
	protoAssertNoSecret(t, err.Error(), []string{"sv-x", "sv-y"})
}

func TestCheckInvocationResponseWithSSH(t *testing.T) {
	key := newSSHTestKey(t, "ed25519")
	requested := map[string]secretDelivery{"token": {}, "release-signing": {}}
	body := fmt.Sprintf(`{"result":"APPROVED","secrets":{
		"token":{"type":"environment","variables":{"T":{"value":"sv-t"}}},
		"release-signing":{"description":"Release signing key","type":"ssh","public_key":%q}}}`, key.line)
	resp, err := checkInvocationResponse(requested, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if resp.SSH == nil || resp.SSH.Secret != "release-signing" || !bytes.Equal(resp.SSH.PublicKey.Marshal(), key.pub.Marshal()) || resp.SSH.AuthorizedKey != key.line {
		t.Fatalf("ssh selection %+v", resp.SSH)
	}
	if got := environmentOf(resp); !reflect.DeepEqual(got, map[string]string{"T": "sv-t"}) {
		t.Errorf("environment %v", got)
	}
	// Without a comment is fine too.
	fields := strings.Fields(key.line)
	bare := fields[0] + " " + fields[1]
	body = fmt.Sprintf(`{"result":"APPROVED","secrets":{"token":{"type":"environment","variables":{}},"release-signing":{"type":"ssh","public_key":%q}}}`, bare)
	if _, err := checkInvocationResponse(requested, []byte(body)); err != nil {
		t.Errorf("key without comment: %v", err)
	}
}

func TestCheckInvocationResponseRules(t *testing.T) {
	key := newSSHTestKey(t, "ed25519")
	other := newSSHTestKey(t, "ed25519")
	certPath := filepath.Join(t.TempDir(), "ca")
	if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", certPath).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if out, err := exec.Command("ssh-keygen", "-q", "-s", certPath, "-I", "id", key.path+".pub").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	certLine, _ := os.ReadFile(key.path + "-cert.pub")

	base := protoTestdata(t, "protocol-invocation-response.json")
	type doc = map[string]any
	secret := func(d doc, name string) doc { return d["secrets"].(doc)[name].(doc) }
	vars := func(d doc, name string) doc { return secret(d, name)["variables"].(doc) }
	sshSecret := func(line string) doc { return doc{"type": "ssh", "public_key": line} }

	cases := []struct {
		name    string
		request func(r map[string]secretDelivery)
		mutate  func(d doc)
		raw     string // replaces the document when set
		wantErr string // "" = accepted
		outcome responseOutcome
		check   func(t *testing.T, r *invocationResponse)
	}{
		// The response's secret set is exactly the request's.
		{name: "requested secret missing", mutate: func(d doc) { delete(d["secrets"].(doc), "plain") }, wantErr: `"plain" was requested but not returned`},
		{name: "unrequested secret", mutate: func(d doc) {
			d["secrets"].(doc)["extra"] = doc{"type": "environment", "variables": doc{}}
		}, wantErr: `"extra" was returned but not requested`},
		{name: "secrets missing", mutate: func(d doc) { delete(d, "secrets") }, wantErr: `missing "secrets"`},
		{name: "secrets not an object", mutate: func(d doc) { d["secrets"] = []any{"plain"} }, wantErr: `"secrets" is not an object`},
		{name: "secret not an object", mutate: func(d doc) { d["secrets"].(doc)["plain"] = "sv-x" }, wantErr: `secret "plain" is not an object`},
		// Member forms.
		{name: "type missing", mutate: func(d doc) { delete(secret(d, "plain"), "type") }, wantErr: `missing "type"`},
		{name: "type unsupported", mutate: func(d doc) { secret(d, "plain")["type"] = "password" }, wantErr: `unsupported type "password"`},
		{name: "description not a string", mutate: func(d doc) { secret(d, "plain")["description"] = 5 }, wantErr: `"description" is not a string`},
		{name: "variables missing", mutate: func(d doc) { delete(secret(d, "plain"), "variables") }, wantErr: `missing "variables"`},
		{name: "variables as a list", mutate: func(d doc) { secret(d, "plain")["variables"] = []any{"PLAIN_TOKEN"} }, wantErr: `"variables" is not an object`},
		{name: "variable as a bare string", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = "sv-bare" }, wantErr: `variable "PLAIN_TOKEN" is not an object`},
		{name: "value missing", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{} }, wantErr: `missing "value"`},
		{name: "value null", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{"value": nil} }, wantErr: `"value" is not a string`},
		{name: "value a number", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{"value": 12345} }, wantErr: `"value" is not a string`},
		// Routing: only, omit, rename and stdin sources.
		{name: "only: selected variable missing", request: func(r map[string]secretDelivery) {
			r["github"].Environment.Only = append(r["github"].Environment.Only, "GH_EXTRA")
		}, wantErr: `lacks variable "GH_EXTRA" selected by only`},
		{name: "only: unselected variable returned", mutate: func(d doc) { vars(d, "github")["GH_OTHER"] = doc{"value": "sv-other"} },
			wantErr: `returned variable "GH_OTHER" not selected by only`},
		{name: "omit: omitted variable returned", mutate: func(d doc) { vars(d, "cloudflare")["CLOUDFLARE_ACCOUNT_ID"] = doc{"value": "sv-account"} },
			wantErr: `returned omitted variable "CLOUDFLARE_ACCOUNT_ID"`},
		{name: "rename source missing", request: func(r map[string]secretDelivery) {
			r["cloudflare"].Environment.Rename = map[string]string{"CLOUDFLARE_ZONE": "ZONE"}
		}, wantErr: `lacks variable "CLOUDFLARE_ZONE" named by rename`},
		{name: "stdin source missing", request: func(r map[string]secretDelivery) {
			r["github"].Environment.Stdin = ""
			r["plain"] = secretDelivery{Environment: &environmentDelivery{Stdin: "PLAIN_INPUT"}}
		}, wantErr: `lacks variable "PLAIN_INPUT" named by stdin`},
		// Same final name: identical values merge, different values fail.
		{name: "conflicting final name across secrets", mutate: func(d doc) { vars(d, "plain")["GITHUB_HOST"] = doc{"value": "sv-evil-host"} },
			wantErr: `deliver different values for "GITHUB_HOST"`},
		{name: "identical final name across secrets", mutate: func(d doc) { vars(d, "plain")["GITHUB_HOST"] = doc{"value": "github.com"} },
			check: func(t *testing.T, r *invocationResponse) {
				if environmentOf(r)["GITHUB_HOST"] != "github.com" {
					t.Error("merged value lost")
				}
			}},
		{name: "conflicting final name inside one secret", request: func(r map[string]secretDelivery) {
			r["cloudflare"].Environment.Rename = map[string]string{"CF_A": "CF_B"}
		}, mutate: func(d doc) {
			vars(d, "cloudflare")["CF_A"] = doc{"value": "sv-a"}
			vars(d, "cloudflare")["CF_B"] = doc{"value": "sv-b"}
		}, wantErr: `delivers different values for "CF_B"`},
		{name: "stdin value stays out of the environment", check: func(t *testing.T, r *invocationResponse) {
			if _, ok := environmentOf(r)["GH_TOKEN"]; ok {
				t.Error("stdin variable also in the environment")
			}
		}},
		{name: "stored name unusable in the environment", mutate: func(d doc) { vars(d, "plain")["BAD=NAME"] = doc{"value": "sv-v"} },
			wantErr: `invalid environment variable name "BAD=NAME"`},
		{name: "NUL in an environment value", mutate: func(d doc) { vars(d, "plain")["PLAIN_TOKEN"] = doc{"value": "sv-a\x00b"} },
			wantErr: `contains a NUL byte`},
		// SSH secrets.
		{name: "two SSH secrets", request: func(r map[string]secretDelivery) { r["ssh2"] = secretDelivery{} },
			mutate: func(d doc) {
				d["secrets"].(doc)["plain"] = sshSecret(key.line)
				d["secrets"].(doc)["ssh2"] = sshSecret(other.line)
			}, wantErr: `more than one SSH secret`},
		{name: "one SSH secret", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(key.line) },
			check: func(t *testing.T, r *invocationResponse) {
				if r.SSH == nil || r.SSH.Secret != "plain" {
					t.Error("SSH secret not selected")
				}
			}},
		{name: "SSH secret with environment options", request: func(r map[string]secretDelivery) {
			r["plain"] = secretDelivery{Environment: &environmentDelivery{Omit: []string{"X"}}}
		}, mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(key.line) }, wantErr: `cannot honour environment options`},
		{name: "SSH public key placeholder", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret("ssh-ed25519 AAAA...") },
			wantErr: `not an OpenSSH public key`},
		{name: "SSH public key with options", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(`command="sh" ` + key.line) },
			wantErr: `not an OpenSSH public key`},
		{name: "SSH public key on two lines", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(key.line + "\n" + other.line) },
			wantErr: `not a single line`},
		{name: "SSH certificate", mutate: func(d doc) { d["secrets"].(doc)["plain"] = sshSecret(strings.TrimSpace(string(certLine))) },
			wantErr: `certificate`},
		{name: "SSH public key missing", mutate: func(d doc) { d["secrets"].(doc)["plain"] = doc{"type": "ssh"} },
			wantErr: `missing "public_key"`},
		// Result forms.
		{name: "result missing", mutate: func(d doc) { delete(d, "result") }, wantErr: `missing "result"`},
		{name: "result ABORTED (client-only)", mutate: func(d doc) { d["result"] = "ABORTED" }, wantErr: `unexpected result "ABORTED"`},
		{name: "result lowercase", mutate: func(d doc) { d["result"] = "approved" }, wantErr: `unexpected result`},
		{name: "result not a string", mutate: func(d doc) { d["result"] = true }, wantErr: `"result" is not a string`},
		{name: "denied", raw: `{"result":"DENIED","reason":"USER_DENIED","message":"The request was denied."}`, outcome: outcomeDenied,
			check: func(t *testing.T, r *invocationResponse) {
				if r.Denial != (deviceDenial{Reason: "USER_DENIED", Message: "The request was denied."}) || r.Secrets != nil {
					t.Errorf("denial %+v", r.Denial)
				}
			}},
		{name: "denied by policy", raw: `{"result":"DENIED","reason":"POLICY_DENIED","message":""}`, outcome: outcomeDenied},
		{name: "denied as invalid", raw: `{"result":"DENIED","reason":"INVALID_REQUEST","message":"m"}`, outcome: outcomeDenied},
		{name: "denied other", raw: `{"result":"DENIED","reason":"OTHER","message":"m","secrets":{"plain":{}}}`, outcome: outcomeDenied},
		{name: "denied with unknown reason", raw: `{"result":"DENIED","reason":"BORED","message":"m"}`, wantErr: `unknown denial reason "BORED"`},
		{name: "denied without message", raw: `{"result":"DENIED","reason":"OTHER"}`, wantErr: `missing "message"`},
		{name: "denied without reason", raw: `{"result":"DENIED","message":"m"}`, wantErr: `missing "reason"`},
		{name: "authenticated error", raw: `{"error":"INVALID_STATE","message":"pending"}`, outcome: outcomeDeviceError,
			check: func(t *testing.T, r *invocationResponse) {
				if r.Error != (deviceError{Code: "INVALID_STATE", Message: "pending"}) {
					t.Errorf("error %+v", r.Error)
				}
			}},
		{name: "authenticated error with unknown code", raw: `{"error":"FUTURE_CODE","message":"x","result":"APPROVED"}`, outcome: outcomeDeviceError,
			check: func(t *testing.T, r *invocationResponse) {
				if r.Error.Code != "FUTURE_CODE" || r.Secrets != nil {
					t.Errorf("error %+v", r.Error)
				}
			}},
		{name: "authenticated error without message", raw: `{"error":"INVALID_STATE"}`, wantErr: `missing "message"`},
		{name: "authenticated error code not a string", raw: `{"error":1,"message":"m"}`, wantErr: `"error" is not a string`},
		// Framing.
		{name: "not JSON", raw: `APPROVED sv-raw`, wantErr: `not a JSON object`},
		{name: "JSON array", raw: `[{"result":"APPROVED"}]`, wantErr: `not a JSON object`},
		{name: "trailing data", raw: `{"result":"DENIED","reason":"OTHER","message":"m"} {}`, wantErr: `not a JSON object`},
		{name: "invalid UTF-8", raw: "{\"result\":\"DENIED\",\"reason\":\"OTHER\",\"message\":\"\xff\"}", wantErr: `not valid UTF-8`},
		// Unknown members are ignored at every level.
		{name: "unknown members", mutate: func(d doc) {
			d["future"] = doc{"x": 1}
			secret(d, "plain")["future"] = []any{1}
			vars(d, "plain")["PLAIN_TOKEN"].(doc)["future"] = "f"
		}, check: func(t *testing.T, r *invocationResponse) {
			if environmentOf(r)["PLAIN_TOKEN"] != "sv-plain-token" {
				t.Error("value lost")
			}
		}},
		{name: "insignificant whitespace", raw: "\n { \"result\" : \"APPROVED\" , \"secrets\" : { \"plain\" : { \"type\" : \"environment\" , \"variables\" : { \"PLAIN_TOKEN\" : { \"value\" : \"sv-p\" } } } ," +
			" \"cloudflare\" : { \"type\" : \"environment\" , \"variables\" : { } } , \"github\" : { \"type\" : \"environment\" , \"variables\" : { \"GH_HOST\" : { \"value\" : \"h\" } , \"GH_TOKEN\" : { \"value\" : \"sv-t\" } } } } } \n",
			check: func(t *testing.T, r *invocationResponse) {
				if environmentOf(r)["PLAIN_TOKEN"] != "sv-p" || r.Stdin == nil || r.Stdin.Value != "sv-t" {
					t.Error("whitespace changed the result")
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			requested := baseInvocationRequest()
			if c.request != nil {
				c.request(requested)
			}
			if err := validateSecretDeliveries(requested); err != nil {
				t.Fatalf("test request invalid: %v", err)
			}
			body := []byte(c.raw)
			if c.raw == "" {
				var d doc
				json.Unmarshal(base, &d)
				if c.mutate != nil {
					c.mutate(d)
				}
				body = protoMarshal(t, d)
			}
			var parsed any
			json.Unmarshal(body, &parsed)
			secrets := append(protoSecretValues(parsed), "sv-raw", "sv-bare", "sv-x")

			resp, err := checkInvocationResponse(requested, body)
			if c.wantErr != "" {
				if err == nil {
					t.Fatalf("accepted; want error containing %q", c.wantErr)
				}
				if !errors.Is(err, errInvalidResponse) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %q, want errInvalidResponse containing %q", err, c.wantErr)
				}
				protoAssertNoSecret(t, err.Error(), secrets)
				return
			}
			if err != nil {
				t.Fatalf("rejected: %v", err)
			}
			want := c.outcome
			if want == 0 {
				want = outcomeApproved
			}
			if resp.Outcome != want {
				t.Fatalf("outcome %v, want %v", resp.Outcome, want)
			}
			if c.check != nil {
				c.check(t, resp)
			}
		})
	}
}

// ---- SecretList, SecretUpload, PairingFinish, PairingRemove ----

func TestCheckSecretListResponse(t *testing.T) {
	ok := `{"secrets":{
		"release-signing":{"description":"Release signing key","type":"ssh","public_key":"ssh-ed25519 AAAAC3 x"},
		"github":{"description":"GitHub API access","type":"environment","variables":["GH_TOKEN","GH_HOST"],"future":1},
		"card":{"type":"credit-card","number":"n"}},"future":true}`
	r, err := checkSecretListResponse([]byte(ok))
	if err != nil {
		t.Fatal(err)
	}
	want := []secretMetadata{
		{Name: "card", Type: "credit-card"},
		{Name: "github", Description: "GitHub API access", HasDescription: true, Type: "environment", Variables: []string{"GH_TOKEN", "GH_HOST"}},
		{Name: "release-signing", Description: "Release signing key", HasDescription: true, Type: "ssh", PublicKey: "ssh-ed25519 AAAAC3 x"},
	}
	if r.Outcome != outcomeApproved || !reflect.DeepEqual(r.Secrets, want) {
		t.Errorf("list %+v", r.Secrets)
	}
	if r, err := checkSecretListResponse([]byte(`{"secrets":{}}`)); err != nil || len(r.Secrets) != 0 || r.Secrets == nil {
		t.Errorf("empty list: %v %v", r, err)
	}
	if r, err := checkSecretListResponse([]byte(`{"error":"INVALID_STATE","message":"m"}`)); err != nil || r.Outcome != outcomeDeviceError || r.Error.Code != "INVALID_STATE" {
		t.Errorf("error form: %v %v", r, err)
	}
	bad := map[string]string{
		"secrets missing":          `{}`,
		"secrets a list":           `{"secrets":[]}`,
		"entry not an object":      `{"secrets":{"a":"x"}}`,
		"type missing":             `{"secrets":{"a":{"variables":[]}}}`,
		"description not a string": `{"secrets":{"a":{"type":"environment","variables":[],"description":1}}}`,
		"variables missing":        `{"secrets":{"a":{"type":"environment"}}}`,
		"variables an object":      `{"secrets":{"a":{"type":"environment","variables":{"A":{"value":"sv-leak"}}}}}`,
		"variable not a string":    `{"secrets":{"a":{"type":"environment","variables":[1]}}}`,
		"duplicate variable":       `{"secrets":{"a":{"type":"environment","variables":["A","A"]}}}`,
		"public key missing":       `{"secrets":{"a":{"type":"ssh"}}}`,
		"empty name":               `{"secrets":{"":{"type":"ssh","public_key":"k"}}}`,
	}
	for name, body := range bad {
		_, err := checkSecretListResponse([]byte(body))
		if !errors.Is(err, errInvalidResponse) {
			t.Errorf("%s: %v", name, err)
		} else {
			protoAssertNoSecret(t, err.Error(), []string{"sv-leak"})
		}
	}
}

func TestCheckResultResponses(t *testing.T) {
	cases := []struct {
		name    string
		check   func([]byte) (*resultResponse, error)
		body    string
		outcome responseOutcome
		message string
		wantErr bool
	}{
		{"finish accepted", checkPairingFinishResponse, `{"result":"ACCEPTED"}`, outcomeApproved, "", false},
		{"finish rejected", checkPairingFinishResponse, `{"result":"REJECTED"}`, outcomeDenied, "", false},
		{"finish error", checkPairingFinishResponse, `{"error":"INVALID_STATE","message":"m"}`, outcomeDeviceError, "", false},
		{"finish received is wrong", checkPairingFinishResponse, `{"result":"RECEIVED"}`, 0, "", true},
		{"finish result missing", checkPairingFinishResponse, `{}`, 0, "", true},
		{"upload received", checkSecretUploadResponse, `{"result":"RECEIVED","extra":1}`, outcomeApproved, "", false},
		{"upload rejected", checkSecretUploadResponse, `{"result":"REJECTED","message":"The upload cannot be accepted."}`, outcomeDenied, "The upload cannot be accepted.", false},
		{"upload rejected without message", checkSecretUploadResponse, `{"result":"REJECTED"}`, 0, "", true},
		{"upload accepted is wrong", checkSecretUploadResponse, `{"result":"ACCEPTED"}`, 0, "", true},
		{"upload error", checkSecretUploadResponse, `{"error":"UNSUPPORTED_METHOD","message":"m"}`, outcomeDeviceError, "", false},
		{"remove empty object", checkPairingRemoveResponse, `{}`, outcomeApproved, "", false},
		{"remove with unknown members", checkPairingRemoveResponse, `{"note":"bye"}`, outcomeApproved, "", false},
		{"remove error", checkPairingRemoveResponse, `{"error":"INVALID_STATE","message":"m"}`, outcomeDeviceError, "", false},
		{"remove not an object", checkPairingRemoveResponse, `null`, 0, "", true},
		{"remove malformed error", checkPairingRemoveResponse, `{"error":null}`, 0, "", true},
	}
	for _, c := range cases {
		r, err := c.check([]byte(c.body))
		if c.wantErr {
			if !errors.Is(err, errInvalidResponse) {
				t.Errorf("%s: %v, want invalid response", c.name, err)
			}
			continue
		}
		if err != nil || r.Outcome != c.outcome || r.Message != c.message {
			t.Errorf("%s: %+v %v", c.name, r, err)
		}
	}
}

// environmentOf is what the approved secrets add to an empty environment,
// built the one way the launcher builds it.
func environmentOf(r *invocationResponse) map[string]string {
	env, err := buildEnvironment(envPlan{Secrets: r.Secrets})
	if err != nil {
		panic(err)
	}
	out := map[string]string{}
	for _, entry := range env {
		name, value, _ := strings.Cut(entry, "=")
		out[name] = value
	}
	return out
}
