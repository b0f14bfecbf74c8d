// What no single table says, because it concerns every program alike:
// hosts that are not the host they look like, files that hold credentials
// (sensitive paths: reading one is never read-only), bash's /dev/tcp, and
// environment variables that make programs run code or connect elsewhere.
package commands

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// host records a destination and marks one that is not the host it looks
// like: any character but ASCII letters, digits, dots and hyphens (a Latin
// ɡ U+0261, a dotless ı U+0131, a Cyrillic і), a punycode label (xn--), or
// a well-known name followed by more labels (api.github.com.evil.example).
func (w *walker) host(h, by string, line int) {
	shown := w.display(h)
	key := shown + " (" + by + ")"
	if !w.hostSeen[key] {
		w.hostSeen[key] = true
		if len(w.a.Destinations) < maxListed {
			w.a.Destinations = append(w.a.Destinations, fmt.Sprintf("%s (%s, line %d)", shown, w.display(by), line))
		}
	}
	w.hostMarks(h, line)
}

// hostMarks marks a host (a destination, or one a command records for
// later, such as a git remote) that is not the host it looks like.
func (w *walker) hostMarks(h string, line int) {
	shown := w.display(h)
	if strings.HasPrefix(h, "(") {
		return // "(a destination decided at run time)"
	}
	secret := len(w.envSecrets)+len(w.stdinSecrets) > 0
	lower := strings.ToLower(h)
	if strings.HasPrefix(lower, "xn--") || strings.Contains(lower, ".xn--") {
		w.mark(SeveritySecret, line, secret, "the host %s is written in punycode (xn--): an international name, not the host it looks like", shown)
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '[' || r == ']' || r == ':') {
			w.mark(SeveritySecret, line, secret, "the host %s is not the host it looks like: it contains %U (%s), not a plain ASCII letter, digit, dot or hyphen", shown, r, Literal(string(r)))
			break
		}
	}
	for _, known := range wellKnownDomains {
		if i := strings.Index(lower, known+"."); i >= 0 && (i == 0 || lower[i-1] == '.') {
			w.mark(SeverityExposes, line, secret, "the host %s is not %s: it is a name under %s", shown, known, w.display(h[i+len(known)+1:]))
			break
		}
	}
}

// wellKnownDomains are hosts secrets are often for; one followed by more
// labels is not that host.
var wellKnownDomains = []string{"github.com", "githubusercontent.com", "gitlab.com", "bitbucket.org", "amazonaws.com",
	"googleapis.com", "azure.com", "microsoft.com", "npmjs.org", "pypi.org", "docker.io", "docker.com", "slack.com", "google.com"}

// hostOfURL returns the host of a URL (or of a bare host[:port][/path]),
// and the text before an @ in its authority, if any.
func hostOfURL(u string) (host, userinfo string) {
	rest := u
	if i := strings.Index(u, "://"); i >= 0 {
		rest = u[i+3:]
	}
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	if at := strings.LastIndexByte(rest, '@'); at >= 0 {
		userinfo, rest = rest[:at], rest[at+1:]
	}
	return stripPort(rest), userinfo
}

// hostOfHost returns the host of a host operand: user@host, host:path
// (scp, rsync, git), [v6]:port.
func hostOfHost(h string) string {
	if strings.Contains(h, "://") {
		host, _ := hostOfURL(h)
		return host
	}
	if at := strings.LastIndexByte(h, '@'); at >= 0 {
		h = h[at+1:]
	}
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[:i+1]
		}
	}
	if i := strings.IndexByte(h, ':'); i >= 0 {
		h = h[:i]
	}
	return h
}

func stripPort(h string) string {
	if strings.HasPrefix(h, "[") {
		if i := strings.IndexByte(h, ']'); i > 0 {
			return h[:i+1]
		}
	}
	if i := strings.LastIndexByte(h, ':'); i >= 0 {
		return h[:i]
	}
	return h
}

// netPath: bash's /dev/tcp/HOST/PORT and /dev/udp/HOST/PORT connect.
func (w *walker) netPathValue(v string, fixed bool, shown string, line int) {
	if !fixed {
		if strings.Contains(shown, "/dev/tcp/") || strings.Contains(shown, "/dev/udp/") {
			w.host("(a destination decided at run time)", "/dev/tcp", line)
			w.mark(SeveritySecret, line, true, "a redirection connects to the network at a destination decided at run time: %s", shown)
		}
		return
	}
	for _, p := range []string{"/dev/tcp/", "/dev/udp/"} {
		if rest, ok := strings.CutPrefix(v, p); ok {
			h, _, _ := strings.Cut(rest, "/")
			w.host(h, "a "+strings.Trim(p, "/")+" redirection", line)
			w.mark(SeverityNetwork, line, len(w.envSecrets)+len(w.stdinSecrets) > 0, "a redirection connects to %s through %s", w.display(h), w.display(p))
		}
	}
}

// readsFile checks a file a command reads and returns the secret data it
// holds, if any.
func (w *walker) readsFile(f string, line int) string {
	switch {
	case procEnviron(f):
		return "the whole environment" // marked by text()
	case credentialFile(f):
		w.mark(SeverityExposes, line, true, "reads the credential file %s", w.display(f))
		return "the credential file " + f
	case len(w.tainted) > 0 && w.tainted[w.resolve(f)] != "":
		return w.tainted[w.resolve(f)]
	}
	return ""
}

// fileData says what sending the file f sends.
func (w *walker) fileData(f string) (string, bool) {
	switch {
	case procEnviron(f):
		return "secret data (a process's whole environment, " + w.display(f) + ")", true
	case credentialFile(f):
		return "secret data (the credential file " + w.display(f) + ")", true
	case len(w.tainted) > 0 && w.tainted[w.resolve(f)] != "":
		return "secret data (the file " + w.display(f) + ", written with secret data earlier in the script, from " + w.dataLabel(w.tainted[w.resolve(f)]) + ")", true
	}
	return "the file " + w.display(f), false
}

// credentialFile: files that hold credentials of other tools (the
// sensitive paths of the read-only rule).
func credentialFile(f string) bool {
	if strings.IndexByte(f, '.') < 0 && !strings.Contains(f, "/etc/shadow") && !strings.Contains(f, "Keychains") {
		return false
	}
	// A public key and the known hosts are meant to be shown (ssh-keygen
	// -lf ~/.ssh/id_ed25519.pub).
	if base := path.Base(f); strings.HasSuffix(base, ".pub") && strings.Contains(f, ".ssh/") || base == "known_hosts" {
		return false
	}
	for _, s := range []string{".netrc", ".git-credentials", ".aws/", ".config/gh", ".docker/config.json",
		".ssh/", ".npmrc", ".pypirc", ".kube/config", ".config/gcloud", ".gnupg", ".agentknock", "/etc/shadow", ".vault-token",
		".password-store", ".cargo/credentials", ".gem/credentials", ".terraform.d/credentials", "Library/Keychains", ".keychain",
		".bash_history", ".zsh_history"} {
		if strings.Contains(f, s) {
			return true
		}
	}
	if base := path.Base(f); base == ".env" || strings.HasPrefix(base, ".env.") && !strings.HasSuffix(base, ".example") && !strings.HasSuffix(base, ".sample") && !strings.HasSuffix(base, ".template") {
		return true
	}
	for _, dir := range []string{".ssh", ".aws", ".gnupg", ".kube", ".docker"} {
		// f is ~/DIR or ends in /DIR (no string built for either)
		if strings.HasSuffix(f, dir) && strings.HasSuffix(f[:len(f)-len(dir)], "/") {
			return true
		}
	}
	return false
}

// codeVariable says why setting an environment variable to value (""
// when decided at run time, fixed false) makes a program run code or read
// a configuration the device does not see; "" if it does not.
func codeVariable(name, value string, fixed bool) string {
	up := strings.ToUpper(name)
	if up == "CDPATH" && fixed && value == "" {
		return "" // CDPATH= turns the search off
	}
	if why, ok := codeVariables[up]; ok {
		return why
	}
	if why := goUncheckedModules(up, value, fixed); why != "" {
		return why
	}
	switch {
	case modulePathVariables[up]:
		// Modules from the working directory are its files, like a
		// Makefile; anywhere else they are code the script brings in.
		if fixed && !strings.HasPrefix(value, "/") && !strings.HasPrefix(value, "~") && !strings.Contains(value, "..") {
			return ""
		}
		return "where the program loads modules from, outside the working directory or decided at run time"
	case strings.HasSuffix(up, "_OPTIONS") || strings.HasSuffix(up, "OPTS") || strings.HasSuffix(up, "OPT") || up == "GOFLAGS" || up == "MAKEFLAGS" || strings.HasSuffix(up, "FLAGS"):
		if fixed && !loadsCode(value) {
			return ""
		}
		return "options that can make the program load or run code (" + Literal(clipValue(value)) + ")"
	}
	for _, suffix := range []string{"_COMMAND", "_EDITOR", "_PAGER", "_ASKPASS", "_WRAPPER", "_RUNNER", "_LINKER", "_SHELL"} {
		if strings.HasSuffix(up, suffix) {
			return "which programs take as a command to run"
		}
	}
	if key, ok := strings.CutPrefix(up, "NPM_CONFIG_"); ok && fixed && inertNpmKey(strings.ToLower(strings.ReplaceAll(key, "_", "-")), value) {
		// npm_config_loglevel=silent: a key .npmrc may set inertly
		// (inert_config.go), given as npm reads any key (npm-config(7))
		return ""
	}
	for _, prefix := range []string{"GIT_CONFIG", "LD_", "DYLD_", "BASH_FUNC_", "NPM_CONFIG_", "GIT_TRACE", "CARGO_TARGET_", "CARGO_BUILD_"} {
		if strings.HasPrefix(up, prefix) {
			return "which makes programs load code or configuration the device does not see"
		}
	}
	return ""
}

// goUncheckedModules: the go command checks every module it downloads
// against go.sum and the checksum database (go help module-auth); GOSUMDB=off,
// GONOSUMDB or GOPRIVATE with a pattern that matches every module path, or
// GOINSECURE (fetch over plain HTTP or without verifying the server's
// certificate), let the module proxy or a network in between serve code
// that nobody checked, which later go build and go test compile and run.
// A list of the project's own private paths (GOPRIVATE=github.com/acme/*)
// is the ordinary use.
func goUncheckedModules(up, value string, fixed bool) string {
	const why = "so go uses modules it downloads without checking them against the checksum database, and builds and runs their code"
	switch up {
	case "GOSUMDB":
		if !fixed || value == "off" {
			return why
		}
	case "GOINSECURE":
		if !fixed || value != "" {
			return why
		}
	case "GONOSUMDB", "GOPRIVATE":
		if !fixed && up == "GONOSUMDB" {
			return why
		}
		for _, p := range strings.Split(value, ",") {
			if p != "" && strings.Trim(p, "*/") == "" {
				return why
			}
		}
	case "GOFLAGS":
		if slices.Contains(strings.Fields(value), "-insecure") {
			return why
		}
	}
	return ""
}

var modulePathVariables = map[string]bool{"PYTHONPATH": true, "NODE_PATH": true, "PERL5LIB": true, "PERLLIB": true, "RUBYLIB": true}

// loadsCode: an option value that loads code or runs a program.
func loadsCode(v string) bool {
	for _, s := range []string{"require", "import", "loader", "javaagent", "agentpath", "agentlib", "preload", "toolexec",
		"-exec", "SHELL", "-r ", "-r=", "--eval", "-e ", "linker", "link-arg", "plugin", "-fplugin", "-wrapper", "-B"} {
		if strings.Contains(v, s) {
			return true
		}
	}
	return strings.HasPrefix(v, "-r")
}

func clipValue(v string) string {
	if len(v) > 60 {
		return v[:60] + "..."
	}
	return v
}

var codeVariables = map[string]string{
	"BASH_ENV":                  "a file bash runs before any script",
	"PERL5DB":                   "the code perl's debugger runs when it starts (-d)",
	"ENV":                       "a file sh runs at startup",
	"PROMPT_COMMAND":            "code bash runs before each prompt",
	"PS0":                       "a prompt bash expands, running command substitutions",
	"PS1":                       "a prompt the shell expands, running command substitutions",
	"PS4":                       "the trace prompt, expanded (command substitutions run) for every traced command",
	"GIT_SSH":                   "the program git runs for SSH",
	"GIT_SSH_COMMAND":           "the command git runs (through a shell) for SSH",
	"GIT_PROXY_COMMAND":         "the command git runs to connect",
	"GIT_EXTERNAL_DIFF":         "the program git runs for diffs",
	"GIT_PAGER":                 "the program git runs as its pager",
	"GIT_EDITOR":                "the program git runs as its editor",
	"GIT_ASKPASS":               "the program git runs for credentials",
	"SSH_ASKPASS":               "the program ssh runs for a password",
	"SUDO_ASKPASS":              "the program sudo runs for a password",
	"GIT_EXEC_PATH":             "where git finds the programs it runs",
	"GIT_TEMPLATE_DIR":          "hooks git installs into new repositories",
	"GIT_DIR":                   "the repository (its configuration and hooks) git uses",
	"PAGER":                     "the program many commands run as a pager",
	"MANPAGER":                  "the program man runs as its pager",
	"EDITOR":                    "the program many commands run as an editor",
	"VISUAL":                    "the program many commands run as an editor",
	"BROWSER":                   "the program many commands run to open a URL",
	"LESSOPEN":                  "a command less runs on each file",
	"LESSCLOSE":                 "a command less runs on each file",
	"PYTHONSTARTUP":             "a file python runs",
	"PYTHONHOME":                "where python loads its library from",
	"PYTHONUSERBASE":            "where python finds usercustomize and .pth files it runs",
	"CURL_HOME":                 "where curl reads its configuration (which can send files)",
	"WGETRC":                    "the configuration file wget reads",
	"HOME":                      "the home directory, where programs read their configuration (git aliases, .curlrc)",
	"XDG_CONFIG_HOME":           "where programs read their configuration",
	"ZDOTDIR":                   "where zsh reads its startup files",
	"SHELLOPTS":                 "shell options every bash child starts with",
	"BASHOPTS":                  "shell options every bash child starts with",
	"RUSTC_WRAPPER":             "a program cargo runs around the compiler",
	"RUSTC":                     "the compiler cargo runs",
	"SHELL":                     "the shell some programs run commands with",
	"CC":                        "the C compiler make and build tools run",
	"CXX":                       "the C++ compiler make and build tools run",
	"LD":                        "the linker build tools run",
	"AR":                        "the archiver build tools run",
	"CPP":                       "the preprocessor build tools run",
	"MAKE":                      "the make program recursive makes run",
	"MAKEFILES":                 "makefiles make reads before any other",
	"NODE_REPL_EXTERNAL_MODULE": "a module node loads",
	"PERL5OPT":                  "options perl takes, which can load modules",
	"RUBYOPT":                   "options ruby takes, which can load code",
	"GCONV_PATH":                "where the C library loads conversion modules from",
	"CARGO_HOME":                "where cargo reads its configuration",
	"GOFLAGS_TOOLEXEC":          "a program go runs around its tools",
	"CDPATH":                    "the directories cd looks in first, so cd NAME can leave the working directory and ./x there is no file of the project",
}

// configFileVariables are the variables that move a configuration file a
// table reads as code (reads-code) to the path they hold, each from the
// program's manual: KUBECONFIG (kubectl, helm: a kubeconfig's users can
// name an exec credential plugin), AWS_CONFIG_FILE and
// AWS_SHARED_CREDENTIALS_FILE (the AWS CLI's credential_process),
// DOCKER_CONFIG (a directory: its config.json's credsStore and
// credHelpers name programs docker runs), CLOUDSDK_CONFIG (gcloud's
// configuration directory), TF_CLI_CONFIG_FILE (terraform's CLI
// configuration), GOENV (go's env file), PSQLRC, GEMRC. A directory's
// variable ends in "/" and names the file under it.
var configFileVariables = map[string][2]string{
	"KUBECONFIG":                  {"~/.kube/config", ""},
	"AWS_CONFIG_FILE":             {"~/.aws/config", ""},
	"AWS_SHARED_CREDENTIALS_FILE": {"~/.aws/credentials", ""},
	"DOCKER_CONFIG":               {"~/.docker/config.json", "config.json"},
	"CLOUDSDK_CONFIG":             {"~/.config/gcloud/properties", "properties"},
	"TF_CLI_CONFIG_FILE":          {"~/.terraformrc", ""},
	"GOENV":                       {"~/.config/go/env", ""},
	"PSQLRC":                      {"~/.psqlrc", ""},
	"GEMRC":                       {"~/.gemrc", ""},
	"PIP_CONFIG_FILE":             {"~/.config/pip/pip.conf", ""},
	"GRADLE_USER_HOME":            {"~/.gradle/init.d", "init.d"},
}

// relocatedConfig: the files the script's configuration variables put in
// place of the reads-code files of a command (KUBECONFIG=./kc.yaml
// kubectl: kubectl runs what ./kc.yaml says, as it would ~/.kube/config).
func (w *walker) relocatedConfig(readsCode []string) []string {
	var out []string
	for name, v := range w.confVars {
		def := configFileVariables[name]
		if !slices.Contains(readsCode, def[0]) {
			continue
		}
		// KUBECONFIG is a list, like PATH.
		for _, f := range strings.Split(v, ":") {
			if f == "" {
				continue
			}
			if def[1] != "" {
				f = path.Join(f, def[1])
			}
			out = append(out, f)
		}
	}
	slices.Sort(out) // the map's order is not the script's
	return out
}

// packageIndexVariable: a variable that names the Python package index
// pip and uv install from (pip's PIP_<OPTION> for --index-url,
// --extra-index-url and --find-links; uv's UV_INDEX_URL, UV_EXTRA_INDEX_URL,
// UV_DEFAULT_INDEX, UV_INDEX, UV_FIND_LINKS): packages installed later
// come from it, and their build code runs. PyPI itself is the default.
func packageIndexVariable(name, value string, fixed bool) (string, bool) {
	switch strings.ToUpper(name) {
	case "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "UV_FIND_LINKS":
	default:
		return "", false
	}
	if !fixed {
		return "", true
	}
	h, _ := hostOfURL(value)
	if strings.HasPrefix(value, "https://") && (strings.EqualFold(h, "pypi.org") || strings.EqualFold(h, "files.pythonhosted.org")) {
		return "", false
	}
	return cmpOr(h, value), true
}

// redirectVariable says why setting a variable sends programs' requests,
// and the credentials in them, somewhere else or to an unverified host.
func redirectVariable(name string) string {
	up := strings.ToUpper(name)
	switch up {
	case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY":
		return "so programs send their requests through that proxy"
	case "SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE", "REQUESTS_CA_BUNDLE", "NODE_EXTRA_CA_CERTS", "GIT_SSL_CAINFO":
		return "so programs trust the certificates it names (another host can pose as the real one)"
	case "GIT_SSL_NO_VERIFY", "NODE_TLS_REJECT_UNAUTHORIZED", "PYTHONHTTPSVERIFY", "CURL_INSECURE":
		return "so programs stop verifying the hosts they send credentials to"
	case "GH_HOST", "GITHUB_API_URL", "GITHUB_SERVER_URL", "DOCKER_HOST", "KUBECONFIG", "GOPROXY", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL":
		return "so programs connect to the host it names"
	}
	if strings.Contains(up, "ENDPOINT") || strings.HasSuffix(up, "_API_URL") || strings.HasSuffix(up, "_BASE_URL") {
		return "so programs connect to the host it names, with their credentials"
	}
	return ""
}

// netPath checks a redirection target for /dev/tcp and /dev/udp.
func (w *walker) netPath(wd *syntax.Word, line int) {
	if wd == nil {
		return
	}
	v, ok := w.value(wd)
	w.netPathValue(v, ok, w.show(wd), line)
}
