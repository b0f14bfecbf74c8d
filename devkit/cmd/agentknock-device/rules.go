// Pinned rules: "approve this again for N minutes, for this exact
// command". Unlike a grant (grants.go), which covers any command with the
// same secrets, a rule is bound to every field that decides what runs and
// with what: the client, the secret set and its routing, the executable
// path and SHA-256 hash, the argument vector (exactly, or the parsed form
// of the shell script it runs), the working directory, and an expiry. A
// person pins one when approving (rules.json in the state directory); a
// policy file can state the same rules. A request that differs in any bound
// field is asked again, and the prompt names the fields.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"agentknock.dev/agentknock/devkit/device"
)

const rulesFile = "rules.json"

// expiredRuleKept is how long an expired pinned rule stays in rules.json,
// so that a request arriving after it lapsed is told so.
const expiredRuleKept = 24 * time.Hour

// Argument matching.
const (
	matchExact  = "exact"  // the argument vector, word for word
	matchScript = "script" // a shell -c script: its parsed form, the other words exactly
)

type rule struct {
	ID      string   `json:"id"`
	Name    string   `json:"name,omitempty"` // policy rules: how the audit log names it
	Client  string   `json:"client"`
	Secrets []string `json:"secrets"` // sorted
	// Routing per secret; a secret absent here must be requested with
	// all its variables in the environment.
	Routing    map[string]routingView `json:"routing,omitempty"`
	Executable string                 `json:"executable"`
	SHA256     string                 `json:"sha256,omitempty"` // hex, as sha256sum prints it
	// ExecuteOnly: the binary could not be read, so the client sent no
	// hash; the rule binds the path only and matches only hashless
	// requests.
	ExecuteOnly bool      `json:"execute_only,omitempty"`
	Argv        []string  `json:"argv"`
	Match       string    `json:"match"`
	Directory   string    `json:"directory"`
	Created     time.Time `json:"created,omitzero"`
	Expires     time.Time `json:"expires,omitzero"` // zero: no expiry (policy rules only)
	PinnedBy    string    `json:"pinned_by,omitempty"`

	fromPolicy bool
}

// label names the rule for prompts and the audit log.
func (r *rule) label() string {
	if r.fromPolicy {
		return "policy rule " + r.ID
	}
	return "pinned rule " + r.ID
}

// ruleFromRequest pins the invocation a person is approving.
func ruleFromRequest(a *device.Approval, d time.Duration, now time.Time, by string) (*rule, error) {
	inv := a.Invocation
	if a.Kind != kindInvocation || inv == nil {
		return nil, errors.New("only invocations can be pinned as a rule (a Git signature or SSH login is asked each time, or use --for)")
	}
	r := &rule{
		ID:         newRuleID(),
		Client:     a.ClientID,
		Secrets:    sortedCopy(a.Secrets),
		Routing:    routingOf(inv.Routing),
		Executable: inv.ExecutablePath,
		Argv:       append([]string{inv.Command}, inv.Arguments...),
		Match:      matchExact,
		Directory:  inv.WorkingDirectory,
		Created:    now.UTC(),
		Expires:    now.Add(d).UTC(),
		PinnedBy:   by,
	}
	if inv.ExecutableHash == "" {
		r.ExecuteOnly = true
	} else {
		raw, err := base64.StdEncoding.DecodeString(inv.ExecutableHash)
		if err != nil {
			return nil, err
		}
		r.SHA256 = hex.EncodeToString(raw)
	}
	if _, ok := canonicalScriptArgv(r.Argv, inv.ExecutablePath); ok {
		r.Match = matchScript
	}
	return r, nil
}

func routingOf(m map[string]device.Routing) map[string]routingView {
	out := map[string]routingView{}
	for name, rt := range m {
		v := normalRouting(routingView{Only: rt.Only, Omit: rt.Omit, Rename: rt.Rename, Stdin: rt.Stdin})
		if !v.empty() {
			out[name] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func normalRouting(v routingView) routingView {
	v.Only, v.Omit = sortedOrNil(v.Only), sortedOrNil(v.Omit)
	if len(v.Rename) == 0 {
		v.Rename = nil
	}
	return v
}

func sortedOrNil(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return sortedCopy(s)
}

func (v routingView) empty() bool {
	return len(v.Only) == 0 && len(v.Omit) == 0 && len(v.Rename) == 0 && v.Stdin == ""
}

func routingEqual(a, b map[string]routingView) bool {
	names := map[string]bool{}
	for n := range a {
		names[n] = true
	}
	for n := range b {
		names[n] = true
	}
	for n := range names {
		x, y := normalRouting(a[n]), normalRouting(b[n])
		if !slices.Equal(x.Only, y.Only) || !slices.Equal(x.Omit, y.Omit) || x.Stdin != y.Stdin || len(x.Rename) != len(y.Rename) {
			return false
		}
		for k, v := range x.Rename {
			if w, ok := y.Rename[k]; !ok || w != v {
				return false
			}
		}
	}
	return true
}

// canonicalScriptArgv replaces the script of a shell -c argument vector by
// its parsed form, printed canonically (comments, spacing and line breaks
// do not count). ok is false if argv runs no -c script or it does not parse.
func canonicalScriptArgv(argv []string, exe string) ([]string, bool) {
	if len(argv) == 0 {
		return nil, false
	}
	sh := shellOf(argv[0], exe)
	if sh == "" {
		return nil, false
	}
	s, _ := shellArgs(sh, argv[1:])
	if s == nil {
		return nil, false
	}
	f, err := syntax.NewParser(syntax.Variant(s.lang)).Parse(strings.NewReader(s.text), "")
	if err != nil {
		return nil, false
	}
	var b bytes.Buffer
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return nil, false
	}
	out := slices.Clone(argv)
	// The script is the word before the parameters.
	out[len(argv)-len(s.params)-1] = b.String()
	return out, true
}

// differences lists the bound fields in which a request differs from the
// rule, as the prompt names them; empty means the rule covers it.
func (r *rule) differences(a *device.Approval, now time.Time) []string {
	inv := a.Invocation
	if a.Kind != kindInvocation || inv == nil {
		return []string{"operation (rules cover invocations only)"}
	}
	var diff []string
	if a.ClientID != r.Client {
		diff = append(diff, "client (the rule is for "+clean(r.Client)+")")
	}
	if !slices.Equal(sortedCopy(a.Secrets), r.Secrets) {
		diff = append(diff, "secrets (the rule is for "+cleanList(r.Secrets, ", ")+")")
	}
	if !routingEqual(routingOf(inv.Routing), r.Routing) {
		diff = append(diff, "routing (which variables go where)")
	}
	if inv.ExecutablePath != r.Executable {
		diff = append(diff, "executable path (the rule is for "+clean(r.Executable)+")")
	}
	switch {
	case r.ExecuteOnly && inv.ExecutableHash != "":
		diff = append(diff, "sha-256 (the rule is for an execute-only binary with no hash; this request has one)")
	case !r.ExecuteOnly && inv.ExecutableHash == "":
		diff = append(diff, "sha-256 (the executable sent no hash: execute-only binaries match only rules that say so)")
	case !r.ExecuteOnly && hashHex(inv.ExecutableHash) != r.SHA256:
		diff = append(diff, "sha-256 (the executable changed: the rule has "+shortHash(r.SHA256)+", this request "+shortHash(hashHex(inv.ExecutableHash))+")")
	}
	argv := append([]string{inv.Command}, inv.Arguments...)
	if r.Match == matchScript {
		want, ok1 := canonicalScriptArgv(r.Argv, r.Executable)
		got, ok2 := canonicalScriptArgv(argv, inv.ExecutablePath)
		if !ok1 || !ok2 || !slices.Equal(want, got) {
			diff = append(diff, "script (its parsed form differs from the rule's: "+clean(shellJoin(r.Argv))+")")
		}
	} else if !slices.Equal(argv, r.Argv) {
		diff = append(diff, "arguments (the rule is for "+shellJoin(r.Argv)+")")
	}
	if inv.WorkingDirectory != r.Directory {
		diff = append(diff, "directory (the rule is for "+clean(r.Directory)+")")
	}
	if !r.Expires.IsZero() && !now.Before(r.Expires) {
		diff = append(diff, "expiry (the rule expired at "+r.Expires.Local().Format(time.RFC3339)+")")
	}
	return diff
}

func hashHex(b64 string) string {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return ""
	}
	return hex.EncodeToString(raw)
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12] + "..."
	}
	if h == "" {
		return "none"
	}
	return h
}

// describe is the rule as the person who pinned it is told.
func (r *rule) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s in %s, %s", r.label(), shellJoin(r.Argv), clean(r.Directory), clean(r.Executable))
	if r.ExecuteOnly {
		b.WriteString(" (execute-only binary: bound to its path only, no hash)")
	} else {
		b.WriteString(" sha-256 " + shortHash(r.SHA256))
	}
	if r.Match == matchScript {
		b.WriteString("; the script matches by its parsed form")
	}
	fmt.Fprintf(&b, "; secrets %s for client %s", cleanList(r.Secrets, ", "), clean(r.Client))
	if !r.Expires.IsZero() {
		b.WriteString("; until " + r.Expires.Local().Format(time.RFC3339))
	}
	return b.String()
}

// ruleVerdict is what the rules say about one request.
type ruleVerdict struct {
	match *rule    // covers the request
	near  *rule    // the closest rule that does not
	diff  []string // how the request differs from near
}

// maxReportedDifferences: a rule farther from the request than this is
// another command altogether, not worth naming in the prompt.
const maxReportedDifferences = 3

// On a tie the later rule (the newer pin) is named.
func checkRules(rules []*rule, a *device.Approval, now time.Time) ruleVerdict {
	var v ruleVerdict
	for _, r := range rules {
		d := r.differences(a, now)
		if len(d) == 0 {
			return ruleVerdict{match: r}
		}
		if len(d) <= maxReportedDifferences && (v.near == nil || len(d) < len(v.diff) ||
			(len(d) == len(v.diff) && !r.Created.Before(v.near.Created))) {
			v.near, v.diff = r, d
		}
	}
	return v
}

// ruleStore keeps the pinned rules; like grantStore it has one writer.
type ruleStore struct {
	path string
	now  func() time.Time
	mu   sync.Mutex
}

type rulesDoc struct {
	Rules []*rule `json:"rules"`
}

func newRuleStore(stateDir string, now func() time.Time) *ruleStore {
	return &ruleStore{path: filepath.Join(stateDir, rulesFile), now: now}
}

func (s *ruleStore) load() ([]*rule, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc rulesDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", s.path, err)
	}
	return doc.Rules, nil
}

func (s *ruleStore) list() ([]*rule, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.load()
}

// add records r and drops rules expired long ago.
func (s *ruleStore) add(r *rule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	rules, err := s.load()
	if err != nil {
		return err
	}
	now := s.now()
	kept := rules[:0]
	for _, old := range rules {
		if old.Expires.IsZero() || now.Before(old.Expires.Add(expiredRuleKept)) {
			kept = append(kept, old)
		}
	}
	return s.write(append(kept, r))
}

// remove deletes the pinned rule id; false if there is none.
func (s *ruleStore) remove(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rules, err := s.load()
	if err != nil {
		return false, err
	}
	i := slices.IndexFunc(rules, func(r *rule) bool { return r.ID == id })
	if i < 0 {
		return false, nil
	}
	return true, s.write(slices.Delete(rules, i, i+1))
}

func (s *ruleStore) write(rules []*rule) error {
	data, err := json.MarshalIndent(rulesDoc{Rules: rules}, "", "  ")
	if err != nil {
		return err
	}
	return device.WriteFileAtomic(filepath.Dir(s.path), filepath.Base(s.path), append(data, '\n'))
}

func newRuleID() string {
	const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"
	b := make([]byte, 6)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return "r-" + string(b)
}

// checkPolicyRule validates a rule stated in a policy file.
func checkPolicyRule(i int, r *rule) error {
	where := fmt.Sprintf("rules[%d]", i)
	if r.Name != "" {
		where = fmt.Sprintf("rules[%d] (%q)", i, r.Name)
	}
	switch {
	case r.Client == "":
		return fmt.Errorf("%s: client is required", where)
	case len(r.Secrets) == 0:
		return fmt.Errorf("%s: secrets must name at least one secret", where)
	case !filepath.IsAbs(r.Executable):
		return fmt.Errorf("%s: executable must be an absolute path", where)
	case len(r.Argv) == 0:
		return fmt.Errorf("%s: argv must not be empty", where)
	case !filepath.IsAbs(r.Directory):
		return fmt.Errorf("%s: directory must be an absolute path", where)
	case r.ExecuteOnly && r.SHA256 != "":
		return fmt.Errorf("%s: an execute_only rule has no sha256", where)
	case !r.ExecuteOnly && r.SHA256 == "":
		return fmt.Errorf("%s: sha256 is required (or \"execute_only\": true for a binary the client cannot hash)", where)
	case r.ID != "" || !r.Created.IsZero() || r.PinnedBy != "":
		return fmt.Errorf("%s: id, created and pinned_by are for pinned rules; use name", where)
	}
	if !r.ExecuteOnly {
		raw, err := hex.DecodeString(r.SHA256)
		if err != nil || len(raw) != 32 {
			return fmt.Errorf("%s: sha256 must be 64 hexadecimal digits", where)
		}
		r.SHA256 = strings.ToLower(r.SHA256)
	}
	switch r.Match {
	case "":
		r.Match = matchExact
	case matchExact:
	case matchScript:
		if _, ok := canonicalScriptArgv(r.Argv, r.Executable); !ok {
			return fmt.Errorf("%s: \"match\": \"script\" needs an argv that runs a shell -c script that parses", where)
		}
	default:
		return fmt.Errorf("%s: match is %q, want exact or script", where, r.Match)
	}
	r.Secrets = sortedCopy(r.Secrets)
	for name, rt := range r.Routing {
		if !slices.Contains(r.Secrets, name) {
			return fmt.Errorf("%s: routing names %q, which is not among the secrets", where, name)
		}
		r.Routing[name] = normalRouting(rt)
	}
	r.fromPolicy = true
	r.ID = fmt.Sprint(i + 1)
	if r.Name != "" {
		r.ID = r.Name
	}
	return nil
}

// cmdRules is `rules [--json]` and `rules remove ID`: the pinned rules in
// rules.json (a policy file's rules live in the policy file). A running
// serve reads the file for every request, so a removal applies at once.
func cmdRules(c *cli, args []string) error {
	fs := c.flags("rules")
	asJSON := fs.Bool("json", false, "")
	operands, err := c.parse(fs, helpRules, args)
	if err != nil {
		return err
	}
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	store := newRuleStore(dir, time.Now)
	if len(operands) > 0 {
		if operands[0] != "remove" || len(operands) != 2 {
			return usagef("usage: %s rules [--json] | rules remove ID", progName)
		}
		ok, err := store.remove(operands[1])
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("no pinned rule %q", operands[1])
		}
		fmt.Fprintf(c.stderr, "removed pinned rule %s\n", clean(operands[1]))
		return nil
	}
	rules, err := store.list()
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(c.stdout, nonNil(rules))
	}
	if len(rules) == 0 {
		fmt.Fprintln(c.stderr, "no pinned rules")
		return nil
	}
	now := time.Now()
	for _, r := range rules {
		state := ""
		if !r.Expires.IsZero() && !now.Before(r.Expires) {
			state = " [expired]"
		}
		fmt.Fprintf(c.stdout, "%s%s\n", r.describe(), state)
	}
	return nil
}
