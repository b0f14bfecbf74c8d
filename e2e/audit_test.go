// The device's audit log after a scripted session with the real programs:
// a pairing confirmed by a person, runs approved and denied by a person,
// approved by policy, pinned as a rule and then approved by it, an SSH
// login, a Git signature and a request the device refuses by itself; one
// entry per request, across a restart of serve, and not one byte of any
// secret in the file.
package e2e

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type auditEntry struct {
	ID        string              `json:"id"`
	Kind      string              `json:"kind"`
	RequestID string              `json:"request_id"`
	Secrets   []string            `json:"secrets"`
	Command   string              `json:"command"`
	SHA256    string              `json:"sha256"`
	Decision  string              `json:"decision"`
	DecidedBy string              `json:"decided_by"`
	Rule      string              `json:"rule"`
	Verdict   string              `json:"verdict"`
	Delivery  map[string][]string `json:"delivery"`
	Unbound   []string            `json:"unbound"`
	Seq       uint64              `json:"seq"`
	Prev      string              `json:"prev"`
}

func (w *world) auditLog() []auditEntry {
	w.t.Helper()
	r := w.deviceOK("log", "--json")
	var entries []auditEntry
	if err := json.Unmarshal([]byte(r.stdout), &entries); err != nil {
		w.t.Fatalf("log --json: %v\n%s", err, r)
	}
	return entries
}

func TestAuditLogOfASession(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	other := secretValue(t, "other")
	demo := secretValue(t, "demo")
	w.setSecret("other", map[string]string{"OTHER_TOKEN": other})
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": demo})
	loginKey := deviceSSHKey(t, w, "login", "ed25519")
	signingKey := deviceSSHKey(t, w, "signing", "ed25519")
	srv := startSSHServer(t, w, loginKey)
	w.startServe(`{"default":"ask","pairing":"ask","secrets":{"demo":"approve","login":"approve","signing":"approve"}}`, "")

	// Pairing, confirmed by a person.
	code := w.startPairing()
	finish := w.startAgentknock(runOpts{}, "pairing", "finish")
	if items := w.waitPending(); len(items) != 1 || items[0].Kind != "pairing" {
		t.Fatalf("pending: %+v", items)
	}
	w.deviceOK("pairing", "confirm", code)
	if r := finish.wait(); r.code != 0 {
		t.Fatalf("pairing finish: %s", r)
	}

	// Approved, then denied, by a person.
	p := w.startAgentknock(runOpts{}, "-s", "other", "--", "sh", "-c", envReport("OTHER_TOKEN"))
	w.deviceOK("approve", w.waitPending()[0].ID)
	if r := p.wait(); r.code != 0 || strings.TrimSpace(r.stdout) != reportLine("OTHER_TOKEN", other) {
		t.Fatalf("approved run: %s", r)
	}
	marker := w.markerPath("ran")
	p = w.startAgentknock(runOpts{}, "-s", "other", "--", "touch", marker)
	w.deviceOK("deny", w.waitPending()[0].ID)
	if r := p.wait(); r.code != 1 || exists(marker) {
		t.Fatalf("denied run: %s", r)
	}

	// By policy.
	if r := w.agentknock("-s", "demo", "--", "sh", "-c", `test -n "$DEMO_TOKEN"`); r.code != 0 {
		t.Fatalf("policy run: %s", r)
	}

	// Pinned by a person, then approved by the rule without asking.
	script := `printf '%s' "${#OTHER_TOKEN}"`
	p = w.startAgentknock(runOpts{}, "-s", "other", "--", "sh", "-c", script)
	id := w.waitPending()[0].ID
	refused := w.device("approve", id, "--pin", "30")
	m := acceptCode.FindStringSubmatch(refused.stderr)
	if refused.code != 1 || m == nil {
		t.Fatalf("a pin without confirming what it does not bind: %s", refused)
	}
	w.deviceOK("approve", id, "--pin", "30", "--accept-unbound", m[1])
	if r := p.wait(); r.code != 0 || r.stdout != fmt.Sprint(len(other)) {
		t.Fatalf("pinned run: %s", r)
	}
	if r := w.agentknock("-s", "other", "--", "sh", "-c", script); r.code != 0 || r.stdout != fmt.Sprint(len(other)) {
		t.Fatalf("run approved by the rule: %s", r)
	}

	// SSH login and Git signature (their invocations approved by policy).
	if r := w.agentknock(append([]string{"-s", "login", "--"}, srv.sshArgs("true")...)...); r.code != 0 {
		t.Fatalf("ssh: %s", r)
	}
	repo := gitRepo(t, w, signingKey)
	os.WriteFile(filepath.Join(repo, "a.txt"), []byte("a\n"), 0o644)
	w.git(t, "-C", repo, "add", "a.txt")
	if r := w.agentknock("-s", "signing", "--", "git", "-C", repo, "commit", "-q", "-S", "-m", "signed"); r.code != 0 {
		t.Fatalf("git commit -S: %s", r)
	}

	// Refused by the device itself: no such secret.
	if r := w.agentknock("-s", "nosuch", "--", "true"); r.code != 1 {
		t.Fatalf("run with an unknown secret: %s", r)
	}

	// The log survives a restart of serve, which appends to it.
	w.stopServe()
	before := w.auditLog()
	w.startServe(`{"default":"ask","pairing":"ask","secrets":{"demo":"approve"}}`, "")
	if r := w.agentknock("-s", "demo", "--", "true"); r.code != 0 {
		t.Fatalf("run after the restart: %s", r)
	}
	w.stopServe()
	entries := w.auditLog()
	if len(entries) != len(before)+1 {
		t.Fatalf("after the restart %d entries, before %d", len(entries), len(before))
	}

	// One entry per request, in order, with who decided.
	type step struct{ kind, decision, by string }
	want := []step{
		{"pairing", "approved", "person"},
		{"invocation", "approved", "person"},
		{"invocation", "denied", "person"},
		{"invocation", "approved", "policy"},
		{"invocation", "approved", "person"}, // pinned the rule
		{"invocation", "approved", "rule"},
		{"invocation", "approved", "policy"}, // ssh's invocation
		{"ssh-authenticate", "approved", "policy"},
		{"invocation", "approved", "policy"}, // git's invocation
		{"git-sign", "approved", "policy"},
		{"invocation", "denied", "device"},   // no such secret
		{"invocation", "approved", "policy"}, // after the restart
	}
	var got []step
	seen := map[string]int{}
	for _, e := range entries {
		got = append(got, step{e.Kind, e.Decision, e.DecidedBy})
		seen[e.RequestID]++
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("audit log:\n%v\nwant:\n%v", got, want)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("request %s has %d entries", id, n)
		}
	}
	if len(entries) == len(want) {
		if entries[4].Rule == "" || entries[4].Rule != entries[5].Rule {
			t.Errorf("the rule pinned (%q) is not the one that approved (%q)", entries[4].Rule, entries[5].Rule)
		}
		if entries[5].SHA256 == "" || !strings.Contains(entries[5].Command, "OTHER_TOKEN") {
			t.Errorf("rule entry: %+v", entries[5])
		}
		if !strings.Contains(entries[7].Command, "ssh login as") || !strings.Contains(entries[9].Command, "git signature with signing") {
			t.Errorf("ssh and git entries: %+v %+v", entries[7], entries[9])
		}
		// The explanation's verdict, the delivery and, for the pin, what
		// the person confirmed it does not bind.
		if entries[1].Verdict == "" || !strings.Contains(strings.Join(entries[1].Delivery["other"], ","), "OTHER_TOKEN") {
			t.Errorf("explanation and delivery not recorded: %+v", entries[1])
		}
		if !strings.Contains(strings.Join(entries[4].Unbound, ","), "directory "+realPath(t, w.work)) {
			t.Errorf("the pin's entry does not record what it does not bind: %+v", entries[4])
		}
		for i, e := range entries {
			if e.Seq != uint64(i+1) || (i > 0) != (e.Prev != "") {
				t.Errorf("entry %d is not chained: seq %d prev %q", i, e.Seq, e.Prev)
			}
		}
	}
	if r := w.deviceOK("log", "--verify"); !strings.Contains(r.stdout, fmt.Sprintf("audit log verified: %d entries", len(want))) {
		t.Errorf("log --verify: %s", r)
	}
	r := w.deviceOK("log")
	if !strings.Contains(r.stdout, "approved  by rule pinned rule r-") || !strings.Contains(r.stdout, "denied (USER_DENIED) by person") {
		t.Errorf("log:\n%s", r.stdout)
	}

	// Not one secret byte: every value and private key the device holds.
	logPath := filepath.Join(w.state, "audit.jsonl")
	checkMode(t, logPath, 0o600)
	data, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range deviceSecretMaterial(t, w) {
		for _, needle := range []string{s, base64.StdEncoding.EncodeToString([]byte(s)), base64.RawStdEncoding.EncodeToString([]byte(s))} {
			if strings.Contains(string(data), needle) {
				t.Errorf("audit.jsonl holds secret material (%d bytes)", len(s))
			}
		}
	}
	w.leakCheck(other)
	w.leakCheck(demo)

	// The denial edited into an approval by a person: named by --verify.
	edited := strings.Replace(string(data), `"decision":"denied","reason":"USER_DENIED","decided_by":"person"`, `"decision":"approved","decided_by":"person"`, 1)
	if edited == string(data) {
		t.Fatal("the denial's entry was not found to edit")
	}
	os.WriteFile(logPath, []byte(edited), 0o600)
	if r := w.device("log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "entry 3 at audit.jsonl line 3 was edited") {
		t.Errorf("log --verify after an edit: %s", r)
	}
}

// deviceSecretMaterial reads every secret value and private key from the
// device's secret store, and for keys each line of their Base64 body.
func deviceSecretMaterial(t *testing.T, w *world) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(w.state, "secrets.json"))
	if err != nil {
		t.Fatal(err)
	}
	var store struct {
		Secrets map[string]struct {
			Variables  map[string]string `json:"variables"`
			PrivateKey string            `json:"private_key"`
		} `json:"secrets"`
	}
	if err := json.Unmarshal(data, &store); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range store.Secrets {
		for _, v := range s.Variables {
			out = append(out, v)
		}
		if s.PrivateKey != "" {
			out = append(out, s.PrivateKey)
			for _, l := range strings.Split(s.PrivateKey, "\n") {
				if len(l) >= 16 && !strings.HasPrefix(l, "-----") {
					out = append(out, l)
				}
			}
		}
	}
	if len(out) < 4 {
		t.Fatalf("found only %d secret values in the device store", len(out))
	}
	return out
}

// A symbolic link at audit.jsonl stops serve before it answers anything,
// and the link's target is left alone.
func TestAuditLogSymlinkStopsServe(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	target := filepath.Join(w.root, "elsewhere")
	os.WriteFile(target, []byte("keep\n"), 0o600)
	if err := os.Symlink(target, filepath.Join(w.state, "audit.jsonl")); err != nil {
		t.Fatal(err)
	}
	r := w.device("serve", "--listen", "127.0.0.1:0")
	if r.code != 1 || !strings.Contains(r.stderr, "audit.jsonl is a symbolic link; the device refuses to follow it") {
		t.Fatalf("serve with a symlinked audit log: %s", r)
	}
	if data, _ := os.ReadFile(target); string(data) != "keep\n" {
		t.Errorf("the link's target was written: %q", data)
	}
}
