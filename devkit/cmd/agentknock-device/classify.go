// The class of what a request runs (Step 21, "policy by what the command
// does"): what the policy keeps of the command model's analysis
// (devkit/commands owns the tables and the rules of read-only and
// irreversible; analysis.go's requestOf is what it is told of a request),
// and `explain -- ARGV...`, which shows a person what the policy would do
// with a command before trusting it.
package main

import (
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	commandmodel "agentknock.dev/agentknock/devkit/commands"
	"agentknock.dev/agentknock/devkit/device"
)

// requestInvocation is the command an approval runs, whatever its kind:
// the invocation itself, or the command a Git signature or an SSH login is
// made for (a `git push --force` over SSH is irreversible too). nil when
// the approval carries none.
func requestInvocation(a *device.Approval) *device.InvocationDetails {
	switch {
	case a.Invocation != nil:
		return a.Invocation
	case a.GitSign != nil:
		return a.GitSign.Invocation
	case a.SSH != nil:
		return a.SSH.Invocation
	}
	return nil
}

// classifyApproval is the class of the command an approval runs, by the
// command model (the request as analysis.go's requestOf tells it); nil
// when it runs none.
func classifyApproval(model *commandmodel.Analyzer, a *device.Approval) *commandClass {
	inv := requestInvocation(a)
	if inv == nil {
		return nil
	}
	if model == nil {
		model = commandmodel.New()
	}
	return classOf(model.Analyze(requestOf(invocationViewOf(inv))))
}

// classOf keeps what the policy needs of an analysis.
func classOf(an *commandmodel.Analysis) *commandClass {
	if an == nil {
		return &commandClass{Class: commandmodel.ClassOther, Why: "the command model gave no analysis"}
	}
	c := &commandClass{Class: an.Class, Why: an.Why, Understood: an.Understood}
	if len(an.Reasons) > 0 {
		c.NotUnderstood = an.Reasons[0].Text
	}
	if c.Class == "" {
		c.Class = commandmodel.ClassOther
	}
	if c.Why == "" {
		c.Why = string(c.Class)
	}
	return c
}

// classLine is the class as the prompt, `pending` and `explain` show it.
func (c *commandClass) classLine() string {
	if c == nil {
		return ""
	}
	line := clean(c.Why)
	if !strings.HasPrefix(c.Why, string(c.Class)) {
		line = string(c.Class) + ": " + line
	}
	switch {
	case c.irreversible():
		line += " (always asked of a person)"
	case !c.Understood:
		line += " (not understood: possibly irreversible, never approved as read-only)"
	}
	return line
}

const helpExplainArgv = `explain [--dir DIR] [--secret NAME=VAR]... [--policy FILE] [--json] -- ARGV...
explain --read-only-forms
  Prints what the device would make of an invocation of ARGV, without a
  client: the verdict the policy gives it (approve, ask or deny, and which
  entry decides; pinned rules and grants are not consulted), the class
  (read-only, irreversible or other) and why, whether the device
  understands it and the reason if not, and each command it runs with the
  table entry that matched. The executable is ARGV[0] found in PATH as the
  client would, hashed when readable. --dir is the working directory
  (default: the current one); --secret says that secret NAME is delivered
  in the variable VAR (repeatable), as a request with that secret would;
  --policy reads a policy file (default: ask everything). --json prints
  the command model's whole analysis. --read-only-forms lists the
  read-only forms the tables describe (what a "read_only" policy can
  approve by itself), one a line, and their count.
    agentknock-device explain --secret gh-token=GH_TOKEN \
      --policy policy.json -- gh pr view 12
    agentknock-device explain -- sh -c 'git status && git log -1'
`

// secretFlags collects --secret NAME=VAR.
type secretFlags []commandmodel.Secret

func (s *secretFlags) String() string { return "" }

func (s *secretFlags) Set(v string) error {
	name, env, ok := strings.Cut(v, "=")
	if !ok || name == "" || env == "" {
		return fmt.Errorf("--secret wants NAME=VAR, not %q", v)
	}
	*s = append(*s, commandmodel.Secret{Name: name, Env: env})
	return nil
}

func cmdExplainArgv(c *cli, args []string) error {
	fs := c.flags("explain")
	dir := fs.String("dir", "", "")
	policyPath := fs.String("policy", "", "")
	asJSON := fs.Bool("json", false, "")
	listForms := fs.Bool("read-only-forms", false, "")
	var secrets secretFlags
	fs.Var(&secrets, "secret", "")
	// Options stop at "--" or the first operand: the argv's own options
	// are not ours.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			io.WriteString(c.stdout, helpExplainArgv)
			return errHelpShown
		}
		return usageError{err.Error()}
	}
	argv := fs.Args()
	if *listForms {
		if len(argv) > 0 {
			return usagef("explain --read-only-forms takes no command")
		}
		entries := commandmodel.ReadOnlyEntries()
		for _, e := range entries {
			fmt.Fprintln(c.stdout, e)
		}
		fmt.Fprintf(c.stderr, "%d read-only forms\n", len(entries))
		return nil
	}
	if len(argv) == 0 {
		return usagef("usage: %s explain [--dir DIR] [--secret NAME=VAR]... [--policy FILE] -- ARGV...", progName)
	}
	pol := defaultPolicy()
	if *policyPath != "" {
		var err error
		if pol, err = loadPolicy(*policyPath); err != nil {
			return err
		}
	}
	wd := *dir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return err
		}
	}
	wd, err := filepath.Abs(wd)
	if err != nil {
		return err
	}
	req := commandmodel.Request{Argv: argv, Dir: wd, Secrets: secrets}
	req.Executable, req.ExecutableSHA256 = locateExecutable(argv[0], wd, c.getenv("PATH"))
	an := commandmodel.New().Analyze(req)
	if *asJSON {
		return printJSON(c.stdout, an)
	}
	io.WriteString(c.stdout, explainArgvText(pol, req, an))
	return nil
}

// locateExecutable finds the program the client would run (a name with a
// slash is a path, relative to the directory; otherwise PATH) and its
// SHA-256 when the file can be read; "" when it is not found.
func locateExecutable(name, dir, path string) (string, []byte) {
	var exe string
	if strings.Contains(name, "/") {
		exe = name
		if !filepath.IsAbs(exe) {
			exe = filepath.Join(dir, exe)
		}
	} else {
		for _, d := range filepath.SplitList(path) {
			if d == "" || !filepath.IsAbs(d) {
				continue // the client resolves only absolute PATH entries
			}
			p := filepath.Join(d, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				exe = p
				break
			}
		}
		if exe == "" {
			if p, err := exec.LookPath(name); err == nil && filepath.IsAbs(p) {
				exe = p
			}
		}
	}
	if exe == "" {
		return "", nil
	}
	f, err := os.Open(exe)
	if err != nil {
		return exe, nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return exe, nil
	}
	return exe, h.Sum(nil)
}

// explainArgvText is explain's report: verdict, class, understanding, and
// each command with the table entry it matched.
func explainArgvText(pol *policy, req commandmodel.Request, an *commandmodel.Analysis) string {
	var b strings.Builder
	c := classOf(an)
	names := make([]string, 0, len(req.Secrets))
	for _, s := range req.Secrets {
		names = append(names, s.Name)
	}
	names = sortedCopy(names)
	o := pol.decideClassed(kindInvocation, dedup(names), c)
	verdictText := string(o.v)
	switch {
	case o.v == verdictAsk && o.alwaysAsk:
		verdictText += ": " + clean(o.why) + " (always asked of a person, whatever a policy, pinned rule or grant says)"
	case o.v == verdictAsk:
		verdictText += " (unless a pinned rule or a grant covers it)"
	case o.note != "":
		verdictText += ": " + clean(o.note)
	}
	if caution := c.caution(); caution != "" && o.v == verdictApprove {
		verdictText += "; " + clean(caution)
	}
	fmt.Fprintf(&b, "verdict:    %s\n", verdictText)
	fmt.Fprintf(&b, "class:      %s\n", c.Class)
	fmt.Fprintf(&b, "why:        %s\n", clean(c.Why))
	exe := req.Executable
	if exe == "" {
		exe = "(not found in PATH)"
	}
	fmt.Fprintf(&b, "executable: %s\n", clean(exe))
	if an.Understood {
		b.WriteString("understood: yes\n")
	} else {
		b.WriteString("understood: no, because\n")
		for _, r := range an.Reasons {
			fmt.Fprintf(&b, "  - %s\n", findingText(r))
		}
	}
	if len(an.Commands) > 0 {
		b.WriteString("commands:\n")
		for _, cmd := range an.Commands {
			form := cmd.Form
			if form == "" {
				form = "no table entry"
			}
			fmt.Fprintf(&b, "  %s%s  [%s: %s]\n", strings.Repeat("  ", cmd.Depth), clean(cmd.Text), cmd.Class, clean(form))
		}
	}
	for _, m := range an.Marks {
		fmt.Fprintf(&b, "  ! %s\n", findingText(m))
	}
	return b.String()
}

func findingText(f commandmodel.Finding) string {
	if f.Line > 0 {
		return fmt.Sprintf("line %d: %s", f.Line, clean(f.Text))
	}
	return clean(f.Text)
}

func dedup(sorted []string) []string {
	out := sorted[:0:0]
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}
