// The explanation of a request as the person deciding reads it (design:
// "What the device tells the person"): the command model
// (devkit/commands) analyses the invocation; this file turns its Analysis
// into lines. The verdict comes first ("understood: ..." or "not
// understood, because of N thing(s) ..." and each reason with its line),
// then the script's heading and its commands in the order they run, who
// can read each delivered secret, where the network goes, what the device
// does not see, whose code runs, and the "!" marks. Findings come most
// severe first, so a cap never hides a worse one behind lesser ones.
package main

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	commandmodel "agentknock.dev/agentknock/devkit/commands"
)

// maxFindings caps the reasons and the marks shown, each; the verdict
// line counts them all.
const maxFindings = 24

// understoodLine is the verdict of an understood invocation.
const understoodLine = "understood: every command is one the device's tables describe, in a form they list; nothing computes a command, the code that runs unseen is named, and the secrets reach only the programs listed"

// requestOf is what the command model is told of an invocation.
func requestOf(d *invocationView) commandmodel.Request {
	r := commandmodel.Request{Argv: append([]string{d.Command}, d.Arguments...), Executable: d.ExecutablePath, Dir: d.WorkingDirectory,
		ScriptMode: d.ExecutableMode == "SCRIPT", Script: d.ScriptContents}
	if d.ExecutableHash != "" {
		sum, err := base64.StdEncoding.DecodeString(d.ExecutableHash)
		if err != nil {
			sum = []byte("not base64") // reported as not a SHA-256
		}
		r.ExecutableSHA256 = sum
	}
	r.Secrets = deliveredSecrets(d)
	return r
}

// deliveredSecrets reads the device's delivery lines ("VAR -> env NAME",
// "VAR -> stdin"): an environment secret by its variable, a stdin one by
// the name the delivery gives it.
func deliveredSecrets(d *invocationView) []commandmodel.Secret {
	var out []commandmodel.Secret
	for name, lines := range d.Delivery {
		for _, l := range lines {
			if v, env, ok := strings.Cut(l, " -> env "); ok && v != "" {
				out = append(out, commandmodel.Secret{Name: name, Env: env})
			} else if v, ok := strings.CutSuffix(l, " -> stdin"); ok {
				out = append(out, commandmodel.Secret{Name: v, Stdin: true})
			}
		}
	}
	slices.SortFunc(out, func(a, b commandmodel.Secret) int { return strings.Compare(a.Env+a.Name, b.Env+b.Name) })
	return slices.Compact(out)
}

// explainInvocation returns what the person approving is shown about the
// invocation, the verdict line first; nil when it runs no shell script
// and is understood with nothing to mark. Every client-chosen character
// is escaped.
func explainInvocation(d *invocationView) []string {
	return explainWith(nil, d)
}

// explainWith is explainInvocation with the caller's model (serve keeps
// one, which remembers executable hashes); nil makes a fresh one.
func explainWith(model *commandmodel.Analyzer, d *invocationView) []string {
	if model == nil {
		model = commandmodel.New()
	}
	a := model.Analyze(requestOf(d))
	if a.Heading == "" && a.Understood && len(a.Marks) == 0 && len(a.Runs) == 0 {
		return nil
	}
	return renderAnalysis(a)
}

// renderAnalysis lays an analysis out as lines.
func renderAnalysis(a *commandmodel.Analysis) []string {
	var out []string
	if a.Understood {
		out = append(out, understoodLine)
	} else {
		out = append(out, fmt.Sprintf("not understood, because of %d thing(s) the device cannot see through:", len(a.Reasons)))
		out = append(out, capped(a.Reasons, "  - ")...)
	}
	if a.Heading != "" {
		head := a.Heading + ":"
		if a.Trust != "" {
			head = a.Heading + " (" + a.Trust + "):"
		}
		out = append(out, head)
		out = append(out, a.Shown...)
		if a.Truncated != "" {
			out = append(out, "... "+a.Truncated)
		}
		out = append(out, a.SecretLines...)
	}
	if len(a.Destinations) > 0 {
		out = append(out, "network: "+strings.Join(a.Destinations, ", "))
	}
	if len(a.Unseen) > 0 {
		unseen := a.Unseen
		if len(unseen) > 12 {
			unseen = append(slices.Clone(unseen[:12]), fmt.Sprintf("and %d more", len(a.Unseen)-12))
		}
		out = append(out, "not seen by the device (files a program reads or runs): "+strings.Join(unseen, ", "))
	}
	out = append(out, capped(a.Runs, "whose code runs: ")...)
	out = append(out, capped(a.Marks, "! ")...)
	// Every part was escaped where it was taken from the client; this is
	// the one place that guarantees no line carries a control character.
	for i, l := range out {
		out[i] = commandmodel.Literal(l)
	}
	return out
}

// capped lists findings (already most severe first), at most
// maxFindings, with "and N more".
func capped(fs []commandmodel.Finding, prefix string) []string {
	var out []string
	for i, f := range fs {
		if i == maxFindings {
			out = append(out, fmt.Sprintf("%sand %d more", prefix, len(fs)-i))
			break
		}
		t := f.Text
		if f.Line > 0 {
			t = fmt.Sprintf("line %d: %s", f.Line, t)
		}
		if f.More > 0 {
			t += fmt.Sprintf(" (and on %d more lines)", f.More)
		}
		out = append(out, prefix+t)
	}
	return out
}

// The shell helpers pinned rules use to canonicalise a -c script
// (rules.go), from the command model.

// shellScript is the -c script of a shell argv.
type shellScript struct {
	text   string
	lang   syntax.LangVariant
	params []string
}

func shellOf(names ...string) string { return commandmodel.ShellOf(names...) }

func shellArgs(sh string, args []string) (*shellScript, string) {
	s, note := commandmodel.ShellArgs(sh, args)
	if s == nil {
		return nil, note
	}
	return &shellScript{text: s.Text, lang: s.Lang, params: s.Params}, ""
}

func parseBounded(text string, lang syntax.LangVariant) (*syntax.File, error) {
	return commandmodel.ParseBounded(text, lang)
}
