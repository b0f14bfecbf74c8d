// How a request is shown to the person deciding (serve's terminal and
// `pending`): everything the approval carries, client-supplied text escaped
// (escape.go) and marked as reported by the client where the device cannot
// check it.
package main

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	commandmodel "agentknock.dev/agentknock/devkit/commands"
)

const labelWidth = 13

type renderer struct {
	b     strings.Builder
	model *commandmodel.Analyzer // the command model; nil: a fresh one
}

// field writes "label value" with continuation lines aligned; value must
// already be escaped.
func (r *renderer) field(indent, label, value string) {
	fmt.Fprintf(&r.b, "%s%-*s %s\n", indent, labelWidth, label, value)
}

func (r *renderer) line(format string, args ...any) {
	fmt.Fprintf(&r.b, format+"\n", args...)
}

func renderApproval(v *approvalView) string {
	return renderApprovalWith(nil, v)
}

// renderApprovalWith renders with the caller's command model (serve's,
// which remembers executable hashes).
func renderApprovalWith(model *commandmodel.Analyzer, v *approvalView) string {
	r := renderer{model: model}
	title := map[string]string{
		kindPairing:    "pairing request",
		kindInvocation: "invocation request",
		kindGitSign:    "Git signature request",
		kindSSH:        "SSH login request",
	}[v.Kind]
	if title == "" {
		title = "request of kind " + clean(v.Kind)
	}
	r.line("=== %s %s ===", title, clean(v.ID))
	r.field("  ", "received", v.Received.Local().Format(time.RFC3339))
	r.field("  ", "request id", clean(v.RequestID))
	r.field("  ", "client", clientLine(v))
	if len(v.Secrets) > 0 {
		r.field("  ", "secrets", cleanList(v.Secrets, ", "))
	}
	if v.ClassLine != "" {
		r.field("  ", "class", clean(v.ClassLine)) // classify.go
	}
	label := "asked again"
	for _, l := range v.AskedAgain {
		r.field("  ", label, l) // composed by the device, client text escaped
		label = ""
	}
	switch {
	case v.Pairing != nil:
		r.pairing(v.Pairing)
	case v.GitSign != nil:
		r.gitSign(v.GitSign)
	case v.SSH != nil:
		r.ssh(v.SSH)
	case v.Invocation != nil:
		r.invocation("  ", v.Invocation)
	}
	return r.b.String()
}

func clientLine(v *approvalView) string {
	s := clean(v.ClientID)
	if c := v.Client; c != nil {
		var extra []string
		if c.Hostname != "" {
			extra = append(extra, "host "+clean(c.Hostname))
		}
		if c.Platform != "" {
			extra = append(extra, clean(c.Platform))
		}
		if c.State != "" && c.State != "active" {
			extra = append(extra, "state "+clean(c.State))
		}
		if len(extra) > 0 {
			s += " (" + strings.Join(extra, ", ") + ")"
		}
	}
	return s
}

func (r *renderer) pairing(p *pairingView) {
	r.field("  ", "hostname", orUnknown(p.Hostname)+" (reported by the client, unverified)")
	platform := strings.TrimSpace(clean(p.Platform) + " " + clean(p.Architecture))
	r.field("  ", "platform", orUnknown(platform))
	if p.OSVersion != "" {
		r.field("  ", "os version", clean(p.OSVersion))
	}
	if p.AppName != "" || p.AppVersion != "" {
		r.field("  ", "client app", strings.TrimSpace(clean(p.AppName)+" "+clean(p.AppVersion)))
	}
	r.line("  To accept, type the 12 digits that the client you are pairing shows")
	r.line("  (`agentknock pairing start` prints them). If you did not start this")
	r.line("  pairing, or the client shows no code, reject it.")
}

func (r *renderer) invocation(indent string, d *invocationView) {
	argv := append([]string{d.Command}, d.Arguments...)
	r.field(indent, "command", shellJoin(argv))
	r.field(indent, "directory", clean(d.WorkingDirectory))
	r.field(indent, "executable", clean(d.ExecutablePath))
	r.field(indent, "sha-256", hashText(d.ExecutableHash))
	r.field(indent, "mode", clean(d.ExecutableMode))
	r.interpreter(indent, d)
	r.field(indent, "streams", fmt.Sprintf("stdin %s, stdout %s, stderr %s",
		clean(d.Stdin), clean(d.Stdout), clean(d.Stderr)))
	if len(d.LauncherChain) == 0 {
		r.field(indent, "launched by", "(none reported)")
	} else {
		r.field(indent, "launched by", cleanList(d.LauncherChain, " -> ")+" (oldest first)")
	}
	if d.Reason == "" {
		r.field(indent, "reason", "(none given)")
	} else {
		r.field(indent, "reason", `"`+clean(d.Reason)+`" (reported by the client)`)
	}
	r.delivery(indent, d)
	if d.ScriptContents != nil {
		r.field(indent, "script", fmt.Sprintf("%d bytes, as read by the client:", len(*d.ScriptContents)))
		r.b.WriteString(cleanBlock(*d.ScriptContents, indent+"  | "))
	} else if d.ExecutableMode == "SCRIPT" {
		r.field(indent, "script", "(text not sent by the client)")
	}
	r.explanation(indent, d)
}

// interpreter names the program a script's #! line asks the kernel for
// (interpreterOf), which approval does not pin: the client hashes the
// script, not its interpreter.
func (r *renderer) interpreter(indent string, d *invocationView) {
	if d.ScriptContents == nil {
		return
	}
	if text := interpreterOf(*d.ScriptContents); text != "" {
		r.field(indent, "interpreter", text)
	}
}

// interpreterOf reads a script's #! line as Linux and macOS do: the
// program up to the first space or tab, then at most one argument, the
// rest of the line trimmed. For env (#!/usr/bin/env NAME) the program that
// runs is the first NAME in the command's PATH when it starts. "" when the
// text has no #! line.
func interpreterOf(script string) string {
	line, _, _ := strings.Cut(script, "\n")
	rest, ok := strings.CutPrefix(line, "#!")
	if !ok {
		return ""
	}
	rest = strings.Trim(rest, " \t\r")
	if rest == "" {
		return "(none: the #! line is empty, so the script cannot run)"
	}
	program, argument := rest, ""
	if i := strings.IndexAny(rest, " \t"); i >= 0 {
		program, argument = rest[:i], strings.TrimLeft(rest[i:], " \t")
	}
	text := clean(program)
	if argument != "" {
		text += ` with the argument "` + clean(argument) + `"`
	}
	if path.Base(program) == "env" {
		if name := envProgram(argument); name != "" {
			text += `; env runs the first "` + clean(name) + `" in the command's PATH when it starts`
		}
	}
	return text + " (not pinned: a program replaced there while this waits is what runs)"
}

// envProgram is the program env runs for a #! argument: the first word
// that is not an option; with -S the argument is split at spaces.
func envProgram(argument string) string {
	words := []string{argument}
	if strings.HasPrefix(argument, "-S") {
		words = strings.Fields(strings.TrimPrefix(argument, "-S"))
	}
	for _, w := range words {
		if w != "" && !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
			return w
		}
	}
	return ""
}

// explanation shows the parsed form of the shell script the invocation
// runs (analysis.go), aligned under its label.
func (r *renderer) explanation(indent string, d *invocationView) {
	lines := explainWith(r.model, d)
	if len(lines) == 0 {
		return
	}
	r.field(indent, "explained", lines[0])
	pad := indent + strings.Repeat(" ", labelWidth+1)
	for _, l := range lines[1:] {
		r.b.WriteString(pad + l + "\n")
	}
}

func (r *renderer) delivery(indent string, d *invocationView) {
	names := make(map[string]bool)
	for n := range d.Delivery {
		names[n] = true
	}
	for n := range d.Routing {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	label := "delivery"
	for _, name := range sorted {
		lines := d.Delivery[name]
		if len(lines) == 0 {
			lines = []string{routingText(d.Routing[name])}
		}
		for _, l := range lines {
			r.field(indent, label, clean(name)+": "+clean(l))
			label = ""
		}
	}
}

func routingText(rt routingView) string {
	var parts []string
	switch {
	case len(rt.Only) > 0:
		parts = append(parts, "only "+strings.Join(rt.Only, ", "))
	case len(rt.Omit) > 0:
		parts = append(parts, "all variables except "+strings.Join(rt.Omit, ", "))
	default:
		parts = append(parts, "all variables")
	}
	keys := make([]string, 0, len(rt.Rename))
	for k := range rt.Rename {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+" renamed to "+rt.Rename[k])
	}
	if rt.Stdin != "" {
		parts = append(parts, rt.Stdin+" to standard input")
	}
	return strings.Join(parts, "; ")
}

// repositoryContext is the advisory GitSign repository member.
type repositoryContext struct {
	Remote   string `json:"remote"`
	Worktree string `json:"worktree"`
	Head     *struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Upstream string `json:"upstream"`
	} `json:"head"`
	ChangedPathCount *int `json:"changed_path_count"`
	ChangedPaths     []struct {
		Status string `json:"status"`
		Path   string `json:"path"`
	} `json:"changed_paths"`
}

func (r *renderer) gitSign(g *gitSignView) {
	r.field("  ", "signing key", clean(g.Secret)+" "+clean(g.PublicKey))
	r.field("  ", "namespace", "git")
	r.line("  text to sign (the exact bytes Git asked to sign):")
	r.b.WriteString(cleanBlock(g.Message, "    | "))
	if len(g.Repository) > 0 {
		r.repository(g.Repository)
	}
	if g.Invocation != nil {
		r.line("  within the approved invocation:")
		r.invocation("    ", g.Invocation)
	}
}

func (r *renderer) repository(raw json.RawMessage) {
	r.line("  repository (advisory, reported by the client):")
	var rc repositoryContext
	if err := json.Unmarshal(raw, &rc); err != nil {
		r.field("    ", "raw", clean(string(raw)))
		return
	}
	if rc.Remote != "" {
		r.field("    ", "remote", clean(rc.Remote))
	}
	if rc.Worktree != "" {
		r.field("    ", "worktree", clean(rc.Worktree))
	}
	if h := rc.Head; h != nil {
		head := clean(h.Type)
		if h.Type == "BRANCH" {
			head = "branch " + clean(h.Name)
			if h.Upstream != "" {
				head += " (upstream " + clean(h.Upstream) + ")"
			}
		} else if h.Type == "DETACHED" {
			head = "detached HEAD"
		}
		r.field("    ", "head", head)
	}
	if rc.ChangedPathCount != nil {
		r.field("    ", "changed", fmt.Sprintf("%d path(s)", *rc.ChangedPathCount))
	}
	if rc.ChangedPaths == nil && rc.ChangedPathCount != nil && *rc.ChangedPathCount > 0 {
		r.line("      (path list not sent)")
	}
	for _, p := range rc.ChangedPaths {
		r.line("      %-12s %s", clean(p.Status), clean(p.Path))
	}
}

func (r *renderer) ssh(s *sshView) {
	r.field("  ", "ssh key", clean(s.Secret)+" "+clean(s.PublicKey))
	r.field("  ", "remote user", clean(s.User))
	r.field("  ", "method", clean(s.Method))
	r.field("  ", "algorithm", clean(s.Algorithm))
	if s.HostKeyFingerprint != "" {
		r.field("  ", "host key", clean(s.HostKeyFingerprint))
	} else {
		r.field("  ", "host key", "(not bound to a host key: the client used plain publickey)")
	}
	if s.Invocation != nil {
		r.line("  within the approved invocation:")
		r.invocation("    ", s.Invocation)
	}
}

// hashText shows the executable hash in hex, the form sha256sum prints.
func hashText(b64 string) string {
	if b64 == "" {
		return "(not reported)"
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return clean(b64) + " (not valid base64)"
	}
	return hex.EncodeToString(raw) + " (reported by the client)"
}

func cleanList(items []string, sep string) string {
	c := make([]string, len(items))
	for i, s := range items {
		c[i] = clean(s)
	}
	return strings.Join(c, sep)
}

func orUnknown(s string) string {
	if s == "" {
		return "(not reported)"
	}
	return clean(s)
}
