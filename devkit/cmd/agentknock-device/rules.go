// Pinned rules: "approve this again for N minutes, for this exact
// command". Unlike a grant (grants.go), which covers any command with the
// same secrets, a rule is bound to every field of the request that decides
// what runs and with what: the client, the secret set and its routing, the
// executable path and SHA-256 hash, the argument vector (exactly, or the
// parsed form of the shell script it runs), the working directory's path,
// and an expiry. A
// person pins one when approving (rules.json in the state directory); a
// policy file can state the same rules. A request that differs in any bound
// field is asked again, and the prompt names the fields.
//
// What a rule cannot bind (the files a program reads, the programs PATH
// finds inside a script, the directory behind its path, the inherited
// environment) is computed from the request by unboundOf (the command
// model's list, devkit/commands), shown as one list before a pin
// is made, confirmed by the person, stored with the rule and listed by
// `rules`.
//
// Pinned rules are authenticated by the device: rules.key in the state
// directory (32 random bytes, 0600, created atomically) keys an HMAC-SHA256
// over each rule's canonical content, so a rule edited or added by hand is
// refused and reported. A rule is also refused when it was created in the
// future by the current clock, and none lives longer than ruleLifetimeCap
// after its creation, so setting the clock back revives nothing beyond the
// cap.
package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/syntax"

	commandmodel "agentknock.dev/agentknock/devkit/commands"
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
	// Unbound is what the rule cannot bind, as the person confirmed it.
	Unbound []unboundItem `json:"unbound,omitempty"`
	// MAC authenticates a pinned rule: HMAC-SHA256 with rules.key over
	// canonical(), hex.
	MAC string `json:"mac,omitempty"`

	fromPolicy bool
}

const (
	rulesKeyFile = "rules.key"
	// ruleLifetimeCap: no pinned rule outlives its creation by more than
	// this (the longest --pin), whatever its expiry says and whatever the
	// clock did since.
	ruleLifetimeCap = 7 * 24 * time.Hour
	// ruleClockSlack: how far in the future a rule's creation may lie
	// before it is refused (clocks stepped by NTP, a second process).
	ruleClockSlack = time.Minute
)

// canonical is the content a rule's MAC covers: every member but the MAC,
// as encoding/json writes them (fixed member order, sorted map keys), after
// a label that keeps the MAC from meaning anything else.
func (r *rule) canonical() []byte {
	c := *r
	c.MAC = ""
	data, err := json.Marshal(&c)
	if err != nil {
		panic(err) // plain strings, slices, maps and times always marshal
	}
	return append([]byte("agentknock-device pinned rule v1\n"), data...)
}

func ruleMAC(key []byte, r *rule) string {
	m := hmac.New(sha256.New, key)
	m.Write(r.canonical())
	return hex.EncodeToString(m.Sum(nil))
}

// refusal says why a stored pinned rule is not used; "" means it stands.
// key is nil when rules.key does not exist.
func (r *rule) refusal(key []byte, now time.Time) string {
	switch {
	case r.MAC == "":
		return "it carries no MAC: added by hand, or pinned by a version that did not authenticate rules"
	case key == nil:
		return "the device's rules.key is missing, so no rule can be authenticated"
	case !hmac.Equal([]byte(r.MAC), []byte(ruleMAC(key, r))):
		return "its MAC does not verify: edited by hand, or made with another key"
	case r.Created.IsZero() || r.Expires.IsZero():
		return "it has no creation or expiry time"
	case r.Created.After(now.Add(ruleClockSlack)):
		return "it was created in the future (" + r.Created.Local().Format(time.RFC3339) + "): the clock was set back"
	case r.Expires.After(r.Created.Add(ruleLifetimeCap)):
		return "its expiry lies beyond the lifetime cap of " + ruleLifetimeCap.String() + " after its creation"
	}
	return ""
}

// expired: past its expiry, or older than the lifetime cap by the current
// clock.
func (r *rule) expired(now time.Time) bool {
	if r.Expires.IsZero() {
		return false // policy rules state their own
	}
	return !now.Before(r.Expires) || (!r.fromPolicy && !now.Before(r.Created.Add(ruleLifetimeCap)))
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
	var script *string
	if inv.HasScriptContents {
		script = &inv.ScriptContents
	}
	r.Unbound = unboundOf(r.Argv, r.Executable, r.Directory, script)
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
	f, err := parseBounded(s.text, s.lang)
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
	if r.expired(now) {
		diff = append(diff, "expiry (the rule expired at "+r.end().Local().Format(time.RFC3339)+")")
	}
	return diff
}

// end is when the rule stops applying: its expiry, or the lifetime cap.
func (r *rule) end() time.Time {
	if !r.fromPolicy && !r.Created.IsZero() && r.Created.Add(ruleLifetimeCap).Before(r.Expires) {
		return r.Created.Add(ruleLifetimeCap)
	}
	return r.Expires
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
	dir  string
	path string
	now  func() time.Time
	mu   sync.Mutex
}

type rulesDoc struct {
	Rules []*rule `json:"rules"`
}

// refusedRule is a stored rule the device does not apply, and why.
type refusedRule struct {
	rule *rule
	why  string
}

func newRuleStore(stateDir string, now func() time.Time) *ruleStore {
	return &ruleStore{dir: stateDir, path: filepath.Join(stateDir, rulesFile), now: now}
}

// loadAll reads every stored rule, authenticated or not.
func (s *ruleStore) loadAll() ([]*rule, error) {
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
	return slices.DeleteFunc(doc.Rules, func(r *rule) bool { return r == nil }), nil
}

// list returns the rules the device applies (expired ones included, so a
// request is told it lapsed) and those it refuses.
func (s *ruleStore) list() (valid []*rule, refused []refusedRule, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rules, err := s.loadAll()
	if err != nil || len(rules) == 0 {
		return nil, nil, err
	}
	key, err := readRulesKey(s.dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	now := s.now()
	for _, r := range rules {
		if why := r.refusal(key, now); why != "" {
			refused = append(refused, refusedRule{r, why})
		} else {
			valid = append(valid, r)
		}
	}
	return valid, refused, nil
}

// add authenticates and records r, and drops authenticated rules expired
// long ago; refused rules stay until removed, so that they keep being
// reported.
func (s *ruleStore) add(r *rule) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key, err := rulesKey(s.dir)
	if err != nil {
		return err
	}
	rules, err := s.loadAll()
	if err != nil {
		return err
	}
	now := s.now()
	kept := rules[:0]
	for _, old := range rules {
		if old.refusal(key, now) != "" || now.Before(old.end().Add(expiredRuleKept)) {
			kept = append(kept, old)
		}
	}
	r.MAC = ruleMAC(key, r)
	return s.write(append(kept, r))
}

// remove deletes the pinned rule id, refused or not; false if there is
// none.
func (s *ruleStore) remove(id string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rules, err := s.loadAll()
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

// readRulesKey reads rules.key without following a symbolic link; a key
// file readable by others is made 0600 (it was never meant to be).
func readRulesKey(dir string) ([]byte, error) {
	path := filepath.Join(dir, rulesKeyFile)
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symbolic link; refusing to use it", path)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() || fi.Size() != 32 {
		return nil, fmt.Errorf("%s is not a 32-byte key file; remove it (every pinned rule is then refused until pinned again)", path)
	}
	if fi.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			return nil, err
		}
	}
	key := make([]byte, 32)
	if _, err := io.ReadFull(f, key); err != nil {
		return nil, err
	}
	return key, nil
}

// rulesKey reads rules.key, creating it first if it does not exist: the
// key is written to a temporary file, synced, and linked into place, which
// fails if another process created one meanwhile (then that one is used),
// so the name never holds a partial key.
func rulesKey(dir string) ([]byte, error) {
	key, err := readRulesKey(dir)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	tmp, err := os.CreateTemp(dir, "."+rulesKeyFile+".tmp-*") // 0600
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	fresh := make([]byte, 32)
	rand.Read(fresh)
	_, err = tmp.Write(fresh)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Link(tmp.Name(), filepath.Join(dir, rulesKeyFile)); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, err
	}
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
	return readRulesKey(dir)
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
	case r.ID != "" || !r.Created.IsZero() || r.PinnedBy != "" || r.MAC != "" || r.Unbound != nil:
		return fmt.Errorf("%s: id, created, pinned_by, unbound and mac are for pinned rules; use name", where)
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
	r.Unbound = unboundOf(r.Argv, r.Executable, r.Directory, nil)
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
	rules, refused, err := store.list()
	if err != nil {
		return err
	}
	now := time.Now()
	type listed struct {
		*rule
		State   string `json:"state"`             // active | expired | refused
		Refused string `json:"refused,omitempty"` // why
	}
	var all []listed
	for _, r := range rules {
		state := "active"
		if r.expired(now) {
			state = "expired"
		}
		all = append(all, listed{rule: r, State: state})
	}
	for _, rr := range refused {
		all = append(all, listed{rule: rr.rule, State: "refused", Refused: rr.why})
	}
	if *asJSON {
		if err := printJSON(c.stdout, nonNil(all)); err != nil {
			return err
		}
	} else if len(all) == 0 {
		fmt.Fprintln(c.stderr, "no pinned rules")
	}
	for _, l := range all {
		if *asJSON {
			break
		}
		state := ""
		switch l.State {
		case "expired":
			state = " [expired]"
		case "refused":
			state = " [REFUSED, never applied: " + l.Refused + "]"
		}
		fmt.Fprintf(c.stdout, "%s%s\n", l.describe(), state)
		io.WriteString(c.stdout, unboundText(l.Unbound, "    "))
	}
	if len(refused) > 0 {
		return fmt.Errorf("%d pinned rule(s) refused: not made by this device as they stand (remove them with 'rules remove ID')", len(refused))
	}
	return nil
}

// unboundItem is one thing a rule made from a request cannot bind: Name
// as the person is told it ("build.sh", "make via PATH", "BASH_ENV"), why,
// and the safer form when there is one.
type unboundItem struct {
	Name  string `json:"name"`
	Why   string `json:"why"`
	Safer string `json:"safer,omitempty"`
}

// maxUnboundItems bounds the list; a script naming more is summed up.
const maxUnboundItems = 24

// unboundOf lists what a rule for argv, run as exe in dir, does not bind:
// the command model's list for exactly that request (devkit/commands:
// per program, the files its table says it reads as code, the script and
// startup files a shell reads, the names PATH resolves, and what no
// request carries). A device sees only the request: the executable's path
// and hash, the argv (so a -c script's text), the directory's path and,
// for a script run directly, its text.
func unboundOf(argv []string, exe, dir string, script *string) []unboundItem {
	a := commandmodel.Analyze(commandmodel.Request{Argv: argv, Executable: exe, Dir: dir, ScriptMode: script != nil, Script: script})
	items := make([]unboundItem, 0, len(a.UnboundItems))
	for _, u := range a.UnboundItems {
		items = append(items, unboundItem{Name: u.Name, Why: u.Why, Safer: u.Safer})
	}
	return items
}

// unboundText is the list as a person reads it, each line under indent.
func unboundText(items []unboundItem, indent string) string {
	if len(items) == 0 {
		return indent + "not bound: (this rule was stored without the list; remove it and pin again)\n"
	}
	var b strings.Builder
	b.WriteString(indent + "not bound (what the rule cannot see):\n")
	for _, it := range items {
		fmt.Fprintf(&b, "%s  - %s: %s\n", indent, clean(it.Name), clean(it.Why))
		if it.Safer != "" {
			fmt.Fprintf(&b, "%s      safer: %s\n", indent, clean(it.Safer))
		}
	}
	return b.String()
}

// pinCode is the confirmation a person gives for pinning approval id with
// exactly this list: a different list needs a new confirmation.
func pinCode(id string, items []unboundItem) string {
	data, _ := json.Marshal(items)
	sum := sha256.Sum256(append([]byte(id+"\x00"), data...))
	return hex.EncodeToString(sum[:5])
}
