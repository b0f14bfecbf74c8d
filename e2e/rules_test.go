// Pinned rules tried as a malicious or confused agent would try them, with
// the real client and device on loopback: for each way around a rule that
// the device cannot see (a script passed as an argument, a script run from
// a -c script, a directory replaced at the same path, a command PATH finds,
// BASH_ENV, a #!/usr/bin/env interpreter), the pin names it before the
// person confirms it and `rules` lists it; where a safer rule exists (the
// script run itself) the device binds the change and asks again. A rule
// edited or added by hand in rules.json is refused and reported.
package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// rulesWorld is a paired client with secret gh and a serve that asks.
func rulesWorld(t *testing.T) (*world, string) {
	t.Helper()
	w := newWorld(t)
	token := secretValue(t, "gh")
	w.setSecret("gh", map[string]string{"GH_TOKEN": token})
	w.startServe(`{"default":"ask","pairing":"approve"}`, "")
	w.pair()
	return w, token
}

var acceptCode = regexp.MustCompile(`--accept-unbound ([0-9a-f]{10})`)

// pin runs agentknock with args, and pins the request for 30 minutes: the
// first `approve --pin` must refuse, naming each of names as not bound;
// the second, with the code it printed, pins. It returns the run.
func (w *world) pin(o runOpts, args []string, names ...string) result {
	w.t.Helper()
	p := w.startAgentknock(o, args...)
	id := w.waitPending()[0].ID
	r := w.device("approve", id, "--pin", "30")
	m := acceptCode.FindStringSubmatch(r.stderr)
	if r.code != 1 || m == nil || !strings.Contains(r.stderr, "nothing answered yet") {
		w.t.Fatalf("approve --pin without confirming what it does not bind: %s", r)
	}
	for _, n := range names {
		if !strings.Contains(r.stderr, "\n    - "+n+": ") {
			w.t.Errorf("the pin does not name %q as not bound:\n%s", n, r.stderr)
		}
	}
	if len(w.pending()) != 1 {
		w.t.Fatal("the request was answered before the confirmation")
	}
	w.deviceOK("approve", id, "--pin", "30", "--accept-unbound", m[1])
	return p.wait()
}

// listedByRules checks that `rules` names each of names as not bound.
func (w *world) listedByRules(names ...string) {
	w.t.Helper()
	r := w.deviceOK("rules")
	for _, n := range names {
		if !strings.Contains(r.stdout, "\n      - "+n+": ") {
			w.t.Errorf("rules does not list %q as not bound:\n%s", n, r.stdout)
		}
	}
}

// unasked runs agentknock and requires that the device answered by a rule,
// without a person.
func (w *world) unasked(o runOpts, args ...string) result {
	w.t.Helper()
	before := len(w.logLines("approved by pinned rule r-"))
	r := w.agentknockWith(o, args...)
	if len(w.logLines("approved by pinned rule r-")) != before+1 {
		w.t.Fatalf("not approved by the rule: %s\nserve log:\n%s", r, clip(w.log()))
	}
	return r
}

func realPath(t *testing.T, path string) string {
	t.Helper()
	p, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func writeScript(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o700); err != nil {
		t.Fatal(err)
	}
}

// fakeBin makes a directory holding an executable name that prints what.
func fakeBin(t *testing.T, w *world, name, what string) string {
	t.Helper()
	dir := filepath.Join(w.root, "fake")
	os.Mkdir(dir, 0o700)
	writeScript(t, filepath.Join(dir, name), "#!/bin/sh\necho "+what+"\n")
	return dir
}

func TestRuleBashScriptArgumentDisclosed(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	if !strings.Contains(w.log(), `decides without asking anyone:`) || !strings.Contains(w.log(), `"pairing": "approve"`) {
		t.Errorf("serve did not say its policy approves by itself:\n%s", w.log())
	}
	script := filepath.Join(w.work, "build.sh")
	writeScript(t, script, "echo original\n")
	if r := w.pin(runOpts{}, []string{"-s", "gh", "--", "bash", "build.sh"}, "build.sh", "BASH_ENV"); r.code != 0 || r.stdout != "original\n" {
		t.Fatalf("pinned run: %s", r)
	}
	w.listedByRules("build.sh")
	// Rewritten: the device cannot see it, and said so.
	writeScript(t, script, "echo changed\n")
	if r := w.unasked(runOpts{}, "-s", "gh", "--", "bash", "build.sh"); r.stdout != "changed\n" {
		t.Fatalf("after the rewrite: %s", r)
	}

	// The safer rule the device offered: run the script itself. Its hash
	// is in the request, so a rewrite is asked again.
	writeScript(t, script, "#!/bin/sh\necho direct\n")
	if r := w.pin(runOpts{}, []string{"-s", "gh", "--", "./build.sh"}, "/bin/sh"); r.code != 0 || r.stdout != "direct\n" {
		t.Fatalf("pinned direct run: %s", r)
	}
	writeScript(t, script, "#!/bin/sh\necho rewritten\n")
	p := w.startAgentknock(runOpts{}, "-s", "gh", "--", "./build.sh")
	w.waitPending()
	w.waitLog("sha-256 \\(the executable changed")
	w.deviceOK("deny", w.pending()[0].ID)
	if r := p.wait(); r.code != 1 || strings.Contains(r.stdout, "rewritten") {
		t.Fatalf("a rewritten script ran: %s", r)
	}
	w.leakCheck(token)
}

func TestRuleScriptRunFromCScriptDisclosed(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	b2 := filepath.Join(w.work, "b2.sh")
	writeScript(t, b2, "#!/bin/sh\necho original\n")
	args := []string{"-s", "gh", "--", "sh", "-c", "./b2.sh"}
	if r := w.pin(runOpts{}, args, "./b2.sh"); r.code != 0 || r.stdout != "original\n" {
		t.Fatalf("pinned run: %s", r)
	}
	w.listedByRules("./b2.sh")
	writeScript(t, b2, "#!/bin/sh\necho edited\n")
	if r := w.unasked(runOpts{}, args...); r.stdout != "edited\n" {
		t.Fatalf("after the edit: %s", r)
	}
	w.leakCheck(token)
}

func TestRuleDirectoryReplacedDisclosed(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	os.WriteFile(filepath.Join(w.work, "data.txt"), []byte("original\n"), 0o600)
	args := []string{"-s", "gh", "--", "sh", "-c", "cat data.txt"}
	dir := realPath(t, w.work) // as the client reports it (macOS: /private/var/...)
	if r := w.pin(runOpts{}, args, "directory "+dir); r.code != 0 || r.stdout != "original\n" {
		t.Fatalf("pinned run: %s", r)
	}
	w.listedByRules("directory " + dir)
	// Another directory at the same path.
	if err := os.Rename(w.work, w.work+".old"); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(w.work, 0o700)
	os.WriteFile(filepath.Join(w.work, "data.txt"), []byte("replaced\n"), 0o600)
	if r := w.unasked(runOpts{}, args...); r.stdout != "replaced\n" {
		t.Fatalf("in the replaced directory: %s", r)
	}
	w.leakCheck(token)
}

func TestRuleCommandFoundThroughPathDisclosed(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	args := []string{"-s", "gh", "--", "sh", "-c", "make -v"}
	w.pin(runOpts{}, args, "make via PATH", "PATH", "Makefile") // make itself may be absent: its exit does not matter
	w.listedByRules("make via PATH", "PATH")
	fake := fakeBin(t, w, "make", "fake make")
	o := runOpts{env: []string{"PATH=" + fake + ":" + os.Getenv("PATH")}}
	if r := w.unasked(o, args...); r.code != 0 || r.stdout != "fake make\n" {
		t.Fatalf("with a fake make first in PATH: %s", r)
	}
	w.leakCheck(token)
}

func TestRuleBashEnvDisclosed(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	args := []string{"-s", "gh", "--", "bash", "-c", "echo hello"}
	if r := w.pin(runOpts{}, args, "BASH_ENV", "the inherited environment"); r.code != 0 || r.stdout != "hello\n" {
		t.Fatalf("pinned run: %s", r)
	}
	w.listedByRules("BASH_ENV")
	attacker := filepath.Join(w.root, "attacker.sh")
	os.WriteFile(attacker, []byte("echo from BASH_ENV\n"), 0o600)
	if r := w.unasked(runOpts{env: []string{"BASH_ENV=" + attacker}}, args...); r.stdout != "from BASH_ENV\nhello\n" {
		t.Fatalf("with BASH_ENV: %s", r)
	}
	w.leakCheck(token)
}

func TestRuleEnvShebangDisclosed(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	writeScript(t, filepath.Join(w.work, "run.sh"), "#!/usr/bin/env bash\necho original\n")
	args := []string{"-s", "gh", "--", "./run.sh"}
	if r := w.pin(runOpts{}, args, "bash via PATH", "BASH_ENV", "PATH"); r.code != 0 || r.stdout != "original\n" {
		t.Fatalf("pinned run: %s", r)
	}
	w.listedByRules("bash via PATH")
	fake := fakeBin(t, w, "bash", "fake bash")
	if r := w.unasked(runOpts{env: []string{"PATH=" + fake + ":" + os.Getenv("PATH")}}, args...); r.stdout != "fake bash\n" {
		t.Fatalf("with a fake bash first in PATH: %s", r)
	}
	w.leakCheck(token)
}

func TestRuleEditedByHandRefused(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	if r := w.pin(runOpts{}, []string{"-s", "gh", "--", "sh", "-c", "echo one"}); r.stdout != "one\n" {
		t.Fatalf("pinned run: %s", r)
	}
	path := filepath.Join(w.state, "rules.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Edited: the argv changed. Added: a copy with no MAC and no expiry.
	var doc struct {
		Rules []map[string]any `json:"rules"`
	}
	json.Unmarshal(data, &doc)
	edited := doc.Rules[0]
	edited["argv"] = []string{"sh", "-c", "echo two"}
	added := map[string]any{}
	for k, v := range edited {
		added[k] = v
	}
	added["id"], added["argv"] = "r-byhand", []string{"sh", "-c", "echo three"}
	delete(added, "mac")
	delete(added, "expires")
	doc.Rules = append(doc.Rules, added)
	data, _ = json.Marshal(doc)
	os.WriteFile(path, data, 0o600)

	for _, word := range []string{"two", "three"} {
		p := w.startAgentknock(runOpts{}, "-s", "gh", "--", "sh", "-c", "echo "+word)
		w.waitPending()
		w.waitLog("pinned rule r-[a-z0-9]+ refused for .*: it")
		w.deviceOK("deny", w.pending()[0].ID)
		if r := p.wait(); r.code != 1 || r.stdout != "" {
			t.Fatalf("a hand-made rule was applied to echo %s: %s", word, r)
		}
	}
	if !strings.Contains(w.log(), "its MAC does not verify: edited by hand") || !strings.Contains(w.log(), "it carries no MAC: added by hand") {
		t.Errorf("serve did not report the refused rules:\n%s", clip(w.log()))
	}
	r := w.device("rules")
	if r.code != 1 || strings.Count(r.stdout, "[REFUSED, never applied: ") != 2 || !strings.Contains(r.stderr, "2 pinned rule(s) refused") {
		t.Errorf("rules: %s", r)
	}
	w.leakCheck(token)
}

// A pin matches the bytes the person approved, not the parser's reading of
// them: dash and bash keep a carriage return inside a word where the
// device's shell parser reads a blank, so `cat<CR>./notes` is another
// program (./cat<CR>./notes, planted here) than the pinned `cat ./notes`,
// and `echo<CR>ok` is a program PATH finds, not the builtin echo. Both are
// asked again, and a pin of either is refused, saying why.
func TestRulePinMatchesExactBytes(t *testing.T) {
	t.Parallel()
	w, token := rulesWorld(t)
	os.WriteFile(filepath.Join(w.work, "notes"), []byte("the notes\n"), 0o600)
	planted := filepath.Join(w.work, "cat\r.")
	os.Mkdir(planted, 0o700)
	writeScript(t, filepath.Join(planted, "notes"), "#!/bin/sh\necho planted \"${#GH_TOKEN}\"\n")
	fake := fakeBin(t, w, "echo\rok", "planted echo")
	path := runOpts{env: []string{"PATH=" + fake + ":" + os.Getenv("PATH")}}

	cases := []struct {
		o             runOpts
		pinned, other []string
		want          string
	}{
		{runOpts{}, []string{"sh", "-c", "cat ./notes"}, []string{"sh", "-c", "cat\r./notes"}, "the notes\n"},
		{path, []string{"bash", "-c", "echo ok"}, []string{"bash", "-c", "echo\rok"}, "ok\n"},
	}
	for _, c := range cases {
		if r := w.pin(c.o, append([]string{"-s", "gh", "--"}, c.pinned...)); r.code != 0 || r.stdout != c.want {
			t.Fatalf("pinned run %q: %s", c.pinned, r)
		}
		w.unasked(c.o, append([]string{"-s", "gh", "--"}, c.pinned...)...)
		p := w.startAgentknock(c.o, append([]string{"-s", "gh", "--"}, c.other...)...)
		id := w.waitPending()[0].ID
		w.waitLog("though they parse alike")
		r := w.device("approve", id, "--pin", "30")
		if r.code == 0 || !strings.Contains(r.stderr, "control character") || len(w.pending()) != 1 {
			t.Errorf("a pin of %q: %s", c.other, r)
		}
		w.deviceOK("deny", id)
		if r := p.wait(); r.code != 1 || strings.Contains(r.stdout, "planted") {
			t.Fatalf("%q ran on the rule for %q: %s", c.other, c.pinned, r)
		}
	}
	w.leakCheck(token)
}
