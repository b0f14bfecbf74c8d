// Named checks for what a program does beyond its arguments' own words:
// ssh's port forwarding and tunnels (which ports open, on which host, to
// where), and the files a patch writes (named inside the patch, which the
// device does not read).
package commands

import (
	"strings"
)

// sshValueOptions are the ssh options that take a value (ssh(1) SYNOPSIS,
// https://man.openbsd.org/ssh): the destination is the first word after
// the options and their values.
const sshValueOptions = "BbcDEeFIiJLlmOopQRSWw"

// sshDestination is the host ssh connects to, as its argv names it, or
// "the ssh host" when the words do not say.
func sshDestination(argv []string) string {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			if i+1 < len(argv) {
				return Literal(argv[i+1])
			}
			break
		}
		if len(a) < 2 || a[0] != '-' {
			return Literal(a)
		}
		// a cluster: a value-taking letter takes the rest of the word, or
		// the next word when it ends the cluster
		for j := 1; j < len(a); j++ {
			if strings.IndexByte(sshValueOptions, a[j]) >= 0 {
				if j == len(a)-1 {
					i++
				}
				break
			}
		}
	}
	return "the ssh host"
}

// splitForward splits a forwarding spec at its colons, keeping a
// bracketed IPv6 address ([::1]) whole.
func splitForward(spec string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(spec); i++ {
		switch spec[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ':':
			if depth == 0 {
				parts = append(parts, spec[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, spec[start:])
}

// bindShown names where a forwarded port listens: a bind address the
// spec gives, or the loopback address ssh binds by default (ssh(1):
// "By default, the listening socket on the local machine will be bound
// to the loopback interface only"; for -R the server's GatewayPorts
// decides).
func bindShown(bind string) string {
	switch bind {
	case "":
		return ""
	case "*", "0.0.0.0", "::", "[::]":
		return ", on every network interface (" + bind + ")"
	}
	return " (bound to " + bind + ")"
}

// checkSSHForward: -L, -R, -D and -w open ports or a network link that
// outlive the words of the command (ssh(1), https://man.openbsd.org/ssh):
// the mark names the port, the host it opens on, and where connections go.
// One check per option (opt is -L, -R, -D or -w); the value is Words[0].
func checkSSHForward(opt string) func(checkInput) checkResult {
	return func(in checkInput) checkResult {
		if len(in.Words) == 0 {
			return checkResult{}
		}
		return sshForwardMark(opt, in.Words[0], sshDestination(in.Argv))
	}
}

func sshForwardMark(opt, spec, host string) checkResult {
	parts := splitForward(spec)
	bind := ""
	if (opt == "-L" || opt == "-R" || opt == "-D") && len(parts) == 4 || (opt == "-D" || opt == "-R") && len(parts) == 2 {
		bind, parts = parts[0], parts[1:]
	}
	switch {
	case opt == "-L" && len(parts) == 3:
		return checkResult{Network: true, Mark: "-L " + Literal(spec) + " opens port " + parts[0] + " on this machine" + bindShown(bind) + ", whose connections go through " + host + " to " + parts[1] + ":" + parts[2]}
	case opt == "-L" && len(parts) == 2:
		return checkResult{Network: true, Mark: "-L " + Literal(spec) + " opens " + parts[0] + " on this machine" + bindShown(bind) + ", whose connections go through " + host + " to " + parts[1]}
	case opt == "-R" && len(parts) == 3:
		return checkResult{Network: true, Mark: "-R " + Literal(spec) + " opens port " + parts[0] + " on " + host + bindShown(bind) + ", whose connections come back through this machine to " + parts[1] + ":" + parts[2]}
	case opt == "-R" && len(parts) == 2:
		return checkResult{Network: true, Mark: "-R " + Literal(spec) + " opens " + parts[0] + " on " + host + bindShown(bind) + ", whose connections come back through this machine to " + parts[1]}
	case opt == "-R" && len(parts) == 1:
		return checkResult{Network: true, Mark: "-R " + Literal(spec) + " opens port " + parts[0] + " on " + host + bindShown(bind) + " as a SOCKS proxy through this machine to any host it reaches"}
	case opt == "-D" && len(parts) == 1:
		return checkResult{Network: true, Mark: "-D " + Literal(spec) + " opens port " + parts[0] + " on this machine" + bindShown(bind) + " as a SOCKS proxy through " + host + " to any host it reaches"}
	case opt == "-w":
		return checkResult{Network: true, Mark: "-w " + Literal(spec) + " joins a tunnel device on this machine to one on " + host + ": a network link between the two"}
	}
	return checkResult{NotUnderstood: "the forwarding " + Literal(spec) + " is not a form ssh's manual gives"}
}

// checkPatchFiles: patch, git apply and git am write the files named
// inside the patch (patch(1): it "applies those differences to one or more
// original files"), and the device does not read the patch: as far as it
// knows, any file may be written, .git/hooks included.
// git apply's --check, --stat, --numstat and --summary, and patch's
// --dry-run, only report,
// unless --apply is given too (git-apply(1)).
func checkPatchFiles(in checkInput) checkResult {
	reports, applies := false, false
	for _, a := range in.Argv[1:] {
		switch a {
		case "--check", "--stat", "--numstat", "--summary", "--dry-run":
			reports = true
		case "--apply":
			applies = true
		}
	}
	if reports && !applies {
		return checkResult{}
	}
	return checkResult{Mark: "writes the files the patch names, which the device does not read", WritesUnnamed: true}
}
