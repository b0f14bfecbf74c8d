// The sealed audit log against whoever later reads the state directory,
// with the real programs: a copy rolled back shows as sealed through an
// earlier entry; a cut with a recomputed head, a cut before a restart, both
// files removed, and the rotated file moved into place are each refused by
// serve or named by `log --verify --key`; a rules.json or grants.json copied
// back revives nothing; a flood of refusals cannot push a decision out; a
// long command is bound by its hash; a full disk denies with an answer.
package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const autoPolicy = `{"default":"ask","pairing":"approve","secrets":{"demo":"approve"}}`

// sealedWorld is a paired client, secrets demo (approved by policy) and gh
// (asked), and n policy-approved runs already in the log.
func sealedWorld(t *testing.T, n int) *world {
	t.Helper()
	w := newWorld(t)
	if w.auditKey == "" {
		t.Fatal("init printed no verification key")
	}
	w.setSecret("demo", map[string]string{"DEMO_TOKEN": secretValue(t, "demo")})
	w.setSecret("gh", map[string]string{"GH_TOKEN": secretValue(t, "gh")})
	w.startServe(autoPolicy, "")
	w.pair()
	for i := range n {
		if r := w.agentknock("-s", "demo", "--", "echo", fmt.Sprint(i)); r.code != 0 {
			t.Fatalf("run %d: %s", i, r)
		}
	}
	return w
}

func (w *world) stateFile(name string) string { return filepath.Join(w.state, name) }

func (w *world) readState(name string) []byte {
	data, err := os.ReadFile(w.stateFile(name))
	if err != nil {
		w.t.Fatal(err)
	}
	return data
}

func (w *world) verifyWithKey() result {
	w.t.Helper()
	return w.device("log", "--verify", "--key", w.auditKey)
}

// refusedByCut starts serve on a log it must not continue, and checks that
// a request policy would approve is denied with an answer, and that the
// console says why.
func (w *world) refusedByCut(console string) {
	w.t.Helper()
	w.startServe(autoPolicy, "")
	w.waitLog("THE AUDIT LOG CANNOT BE CONTINUED.*" + console)
	r := w.agentknock("-s", "demo", "--", "echo", "after the cut")
	if r.code != 1 || strings.Contains(r.stdout, "after the cut") || !strings.Contains(r.stderr, "audit log") {
		w.t.Errorf("a request on a cut log: %s", r)
	}
	w.stopServe()
}

func TestAuditRollbackShowsAsEarlierSeal(t *testing.T) {
	t.Parallel()
	w := sealedWorld(t, 1)
	w.stopServe()
	copyLog, copyHead := w.readState("audit.jsonl"), w.readState("audit.head")
	early := w.verifyWithKey()
	w.startServe(autoPolicy, "")
	w.agentknock("-s", "demo", "--", "true")
	w.agentknock("-s", "demo", "--", "true")
	w.stopServe()
	late := w.verifyWithKey()
	os.WriteFile(w.stateFile("audit.jsonl"), copyLog, 0o600)
	os.WriteFile(w.stateFile("audit.head"), copyHead, 0o600)
	back := w.verifyWithKey()
	// Entries: the pairing, the run; then two more.
	if !strings.Contains(early.stdout, "sealed through entry 2 at ") || !strings.Contains(late.stdout, "sealed through entry 4 at ") ||
		back.code != 0 || !strings.Contains(back.stdout, "sealed through entry 2 at ") {
		t.Errorf("rollback not shown as an earlier seal:\nearly %s\nlate %s\nback %s", early, late, back)
	}
}

func TestAuditCutWithRecomputedHead(t *testing.T) {
	t.Parallel()
	w := sealedWorld(t, 3)
	w.stopServe()
	lines := strings.SplitAfter(string(w.readState("audit.jsonl")), "\n")
	kept := strings.Join(lines[:2], "")
	os.WriteFile(w.stateFile("audit.jsonl"), []byte(kept), 0o600)
	var head map[string]any
	json.Unmarshal(w.readState("audit.head"), &head)
	head["seq"], head["sha256"] = 2, sha256hex(strings.TrimSuffix(lines[1], "\n"))
	data, _ := json.Marshal(head)
	os.WriteFile(w.stateFile("audit.head"), data, 0o600)
	if r := w.verifyWithKey(); r.code != 1 || !strings.Contains(r.stderr, "entries 3 to 4 were cut and the head rewritten") {
		t.Errorf("log --verify --key after a cut with a recomputed head: %s", r)
	}
	if r := w.device("log", "--verify"); !strings.Contains(r.stderr, "without the verification key") {
		t.Errorf("log --verify without the key does not say what it cannot promise: %s", r)
	}
}

func TestAuditCutThenRestarted(t *testing.T) {
	t.Parallel()
	w := sealedWorld(t, 3)
	w.stopServe()
	lines := strings.SplitAfter(string(w.readState("audit.jsonl")), "\n")
	cut := []byte(strings.Join(lines[:2], ""))
	os.WriteFile(w.stateFile("audit.jsonl"), cut, 0o600)
	w.refusedByCut("entries 3 to 4, the last ones written, are missing")
	if got := w.readState("audit.jsonl"); string(got) != string(cut) {
		t.Errorf("serve wrote on over the cut:\n%s", got)
	}
	for _, r := range []result{w.device("log", "--verify"), w.verifyWithKey()} {
		if r.code != 1 || !strings.Contains(r.stderr, "entries 3 to 4, the last ones written, are missing") {
			t.Errorf("log --verify after the cut and a restart: %s", r)
		}
	}
}

func TestAuditBothFilesRemoved(t *testing.T) {
	t.Parallel()
	w := sealedWorld(t, 1)
	w.stopServe()
	os.Remove(w.stateFile("audit.jsonl"))
	os.Remove(w.stateFile("audit.head"))
	w.refusedByCut("both missing, while the device state exists")
	if r := w.device("log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "both missing, while the device state exists") {
		t.Errorf("log --verify with both files removed: %s", r)
	}
	// A person who looked starts a new sealed record.
	r := w.deviceOK("log", "--new-key")
	if !strings.HasPrefix(r.stdout, "ak1-") {
		t.Fatalf("log --new-key: %s", r)
	}
	w.startServe(autoPolicy, "")
	if r := w.agentknock("-s", "demo", "--", "true"); r.code != 0 {
		t.Errorf("after log --new-key: %s", r)
	}
	w.stopServe()
	if r := w.device("log", "--verify", "--key", strings.TrimSpace(r.stdout)); r.code != 0 {
		t.Errorf("the new record: %s", r)
	}
}

func TestAuditRotatedFileMovedIntoPlace(t *testing.T) {
	t.Parallel()
	w := sealedWorld(t, 0)
	big := strings.Repeat("x", 50<<10)
	for i := 0; ; i++ {
		if _, err := os.Stat(w.stateFile("audit.jsonl.1")); err == nil {
			break
		}
		if i > 100 {
			t.Fatal("no rotation after 100 large entries")
		}
		w.agentknock("-s", "demo", "--", "true", big)
	}
	w.agentknock("-s", "demo", "--", "true")
	w.stopServe()
	rotated := strings.Split(strings.TrimSuffix(string(w.readState("audit.jsonl.1")), "\n"), "\n")
	os.Rename(w.stateFile("audit.jsonl.1"), w.stateFile("audit.jsonl"))
	var last struct {
		Seq uint64 `json:"seq"`
	}
	json.Unmarshal([]byte(rotated[len(rotated)-1]), &last)
	var head map[string]any
	json.Unmarshal(w.readState("audit.head"), &head)
	head["seq"], head["sha256"] = last.Seq, sha256hex(rotated[len(rotated)-1])
	data, _ := json.Marshal(head)
	os.WriteFile(w.stateFile("audit.head"), data, 0o600)
	if r := w.verifyWithKey(); r.code != 1 || !strings.Contains(r.stderr, "were cut and the head rewritten") {
		t.Errorf("log --verify --key with the rotated file moved into place: %s", r)
	}
}

// pinGH pins `sh -c 'echo pinned'` with secret gh and returns the rule id.
func (w *world) pinGH() string {
	w.t.Helper()
	if r := w.pin(runOpts{}, []string{"-s", "gh", "--", "sh", "-c", "echo pinned"}); r.stdout != "pinned\n" {
		w.t.Fatalf("pinned run: %s", r)
	}
	var doc struct {
		Rules []struct {
			ID string `json:"id"`
		} `json:"rules"`
	}
	json.Unmarshal(w.readState("rules.json"), &doc)
	return doc.Rules[0].ID
}

// asked runs args and requires that a person is asked (then denies).
func (w *world) asked(console string, args ...string) {
	w.t.Helper()
	p := w.startAgentknock(runOpts{}, args...)
	id := w.waitPending()[0].ID
	w.waitLog(console)
	w.deviceOK("deny", id)
	if r := p.wait(); r.code != 1 {
		w.t.Errorf("%q after the removal: %s", args, r)
	}
}

func TestAuditRulesAndGrantsCopiedBackRefused(t *testing.T) {
	t.Parallel()
	w := sealedWorld(t, 0)
	id := w.pinGH()
	w.unasked(runOpts{}, "-s", "gh", "--", "sh", "-c", "echo pinned")
	old := w.readState("rules.json")
	w.deviceOK("rules", "remove", id)
	os.WriteFile(w.stateFile("rules.json"), old, 0o600)
	w.asked("pinned rule "+id+" refused .*removed at audit entry", "-s", "gh", "--", "sh", "-c", "echo pinned")

	// A grant, dropped the documented way (grants.json deleted), then
	// copied back.
	p := w.startAgentknock(runOpts{}, "-s", "gh", "--", "true")
	w.deviceOK("approve", w.waitPending()[0].ID, "--for", "10m")
	if r := p.wait(); r.code != 0 {
		t.Fatalf("granted run: %s", r)
	}
	if r := w.agentknock("-s", "gh", "--", "echo", "by the grant"); r.code != 0 {
		t.Fatalf("run by the grant: %s", r)
	}
	grants := w.readState("grants.json")
	os.Remove(w.stateFile("grants.json"))
	w.waitLog("grant dropped: grants.json no longer holds it, recorded")
	os.WriteFile(w.stateFile("grants.json"), grants, 0o600)
	w.asked("a grant for .* refused: it was removed at audit entry", "-s", "gh", "--", "echo", "arbitrary")
	w.stopServe()
	if r := w.verifyWithKey(); r.code != 0 {
		t.Errorf("log --verify --key: %s", r)
	}
}

// 1,800 requests the device refuses by itself (unknown secret, 120 KiB of
// arguments) do not rotate the rule's decision out: past a few per epoch
// they are counted into a sealed summary.
func TestAuditFloodDoesNotRotateOutADecision(t *testing.T) {
	if testing.Short() {
		t.Skip("1,800 client runs take about two minutes on two cores; run without -short")
	}
	t.Parallel()
	w := sealedWorld(t, 0)
	id := w.pinGH()
	w.unasked(runOpts{}, "-s", "gh", "--", "sh", "-c", "echo pinned")
	big := strings.Repeat("y", 120<<10)
	const flood = 1800
	var wg sync.WaitGroup
	jobs := make(chan int)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				cmd := exec.Command(agentknockBin, "-s", "nosuch", "--", "true", big)
				cmd.Env, cmd.Dir = w.clientEnv(runOpts{}), w.work
				cmd.Run()
			}
		}()
	}
	for i := range flood {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	w.stopServe()
	entries := w.auditLog()
	found := false
	for _, e := range entries {
		found = found || (e.DecidedBy == "rule" && e.Rule == id)
	}
	r := w.verifyWithKey()
	if !found || r.code != 0 || !strings.Contains(r.stdout, "refusal(s) that needed nobody are counted") {
		t.Errorf("after %d refusals: rule decision kept %v, %d entries; verify: %s", flood, found, len(entries), r)
	}
}

func TestAuditLongCommandBoundByItsHash(t *testing.T) {
	t.Parallel()
	w := sealedWorld(t, 0)
	leak := filepath.Join(w.root, "x")
	os.Mkdir(leak, 0o700)
	writeScript(t, filepath.Join(leak, "leak.sh"), "#!/bin/sh\necho leaked\n")
	script := strings.Repeat(": ", 2100) + "; " + filepath.Join(leak, "leak.sh")
	if r := w.agentknock("-s", "demo", "--", "sh", "-c", script); r.stdout != "leaked\n" {
		t.Fatalf("run: %s", r)
	}
	w.stopServe()
	var entries []struct {
		Seq     uint64 `json:"seq"`
		Command string `json:"command"`
		Hash    string `json:"request_sha256"`
	}
	json.Unmarshal([]byte(w.deviceOK("log", "--json").stdout), &entries)
	e := entries[len(entries)-1]
	if strings.Contains(e.Command, "leak.sh") || len(e.Hash) != 64 {
		t.Fatalf("the capped summary and the hash: %+v", e)
	}
	show := w.deviceOK("log", "--show", fmt.Sprint(e.Seq))
	if !strings.Contains(show.stdout, "leak.sh") || !strings.Contains(show.stdout, "full command (matches the request hash)") || !strings.Contains(show.stdout, e.Hash) {
		t.Errorf("log --show %d: %s", e.Seq, show)
	}
	// The kept command edited: the hash no longer matches.
	data := w.readState("audit.jsonl")
	os.WriteFile(w.stateFile("audit.jsonl"), []byte(strings.ReplaceAll(string(data), "leak.sh", "leek.sh")), 0o600) // every copy: the explanation names it too
	if r := w.device("log", "--verify"); r.code != 1 || !strings.Contains(r.stderr, "does not hash to its request_sha256") {
		t.Errorf("log --verify with the kept command edited: %s", r)
	}
}

// init prints the verification key once, on standard error (standard
// output stays the address alone); a second init does not print it again.
func TestAuditVerificationKeyPrintedOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	if !strings.HasPrefix(w.auditKey, "ak1-0-") {
		t.Fatalf("init printed no verification key")
	}
	r := w.deviceOK("init")
	if strings.TrimSpace(r.stdout) != w.address || strings.Contains(r.stdout+r.stderr, "ak1-") {
		t.Errorf("a second init: %s", r)
	}
	if strings.Contains(string(w.readState("audit.head")), strings.TrimPrefix(w.auditKey, "ak1-0-")) {
		// The head holds the current key; before the first entry that is
		// the first key, which the first entry then replaces.
		w.startServe(autoPolicy, "")
		w.pair()
		w.stopServe()
		if strings.Contains(string(w.readState("audit.head")), strings.TrimPrefix(w.auditKey, "ak1-0-")) {
			t.Error("the first key is still in audit.head after an entry")
		}
	}
}

// While serve runs it seals each epoch (--seal-every, 15 minutes unless
// told), so the record says through when it is sealed even when nothing
// was decided.
func TestAuditEpochSeals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.newServe(autoPolicy, "")
	s.cmd.Args = append(s.cmd.Args, "--seal-every", "1s")
	s.cmd.Stderr = &s.stderr
	w.runServe(s, s.stderr.String)
	deadline := time.Now().Add(waitGuard)
	for {
		seals := 0
		for _, e := range w.auditLog() {
			if e.Kind == "seal" {
				seals++
			}
		}
		if seals >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no two epoch seals (deadlock guard); serve:\n%s", clip(w.log()))
		}
		time.Sleep(200 * time.Millisecond)
	}
	w.stopServe()
	if r := w.verifyWithKey(); r.code != 0 || !strings.Contains(r.stdout, "(last epoch seal ") {
		t.Errorf("log --verify --key: %s", r)
	}
}
