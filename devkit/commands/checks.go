// Named checks of the command tables (`check=NAME`): the few judgements
// that data cannot express, one small function each. The registry is one
// map so that adding a check is a one-line change.
package commands

import (
	"path"
	"regexp"
	"slices"
	"strings"
)

// checkInput is what a check sees: the program, the whole argv of the
// command, and the words the table line carrying the check matched (the
// option's value, or the operands).
type checkInput struct {
	Program   string
	Argv      []string
	Words     []string
	SecretEnv map[string]string // delivered secrets: variable -> secret name
	OutAway   bool              // its standard output is a pipe, a file or a substitution: no terminal
}

// checkResult is what a check concludes. Empty fields mean nothing found.
type checkResult struct {
	NotUnderstood string // the command is not understood, because of this
	Irreversible  string // the form is irreversible, because of this
	Mark          string // a "!" mark to show
	SecretMark    bool   // the mark concerns the delivered secrets
	Runs          bool   // the mark names code that runs unseen (ordered as such)
	Network       bool   // the mark names what the command opens on the network (ordered as such)
	WritesAway    bool   // the mark names a file written by an absolute, home or parent path, or one named at run time (ordered as writes outside the directory)
	WritesUnnamed bool   // it writes files named inside its input (a patch), which the device does not read
	Writes        string // a file it writes, which only the check can tell from its words (docker cp CONTAINER:SRC DEST)
	RunsFile      string // a file it runs as code, which only the check can tell from its words (bun run FILE, not a script's name)
	Output        string // the secret data the command's output carries
	// Code: files the form runs or deploys as code, found in its words
	// (pip install ./pkg: its setup.py), named in "whose code runs" and
	// in the pin's list; written earlier in the script, write, then run.
	// A pointer, so that a result stays comparable.
	Code *codeFiles
	// NoConfig: this form starts nothing the program's files and
	// variables configure (scp and rsync copying between local paths run
	// no ssh): its reads-code, includes and reads-env leave the list.
	NoConfig bool
}

// codeFiles are the files a check found, with why the program reads them
// (for the pin's list: "NAME WHY; its contents are not bound").
type codeFiles struct {
	files []string
	why   string
}

// checks is the registry the table loader validates `check=NAME` against.
var checks = map[string]func(checkInput) checkResult{
	"git-refspec":        checkGitRefspec,
	"git-config":         checkGitConfig,
	"date-operand":       checkDateOperand,
	"no-response-file":   checkNoResponseFile,
	"source":             checkSource,
	"alias":              checkAlias,
	"as-user":            checkAsUser,
	"keeps-env":          checkKeepsEnv,
	"detaches":           checkDetaches,
	"git-url":            checkGitURL,
	"cmake-cache":        checkCMakeCache,
	"go-ldflags":         checkGoLdflags,
	"go-run-source":      checkGoRunSource, // checks_install.go
	"go-install-source":  checkGoInstallSource,
	"cosign-key":         checkCosignKey,
	"hatch-script":       checkHatchScript,
	"cargo-git":          checkCargoGit, // checks_install.go
	"kustomize-local":    checkKustomizeLocal,
	"nix-flake-ref":      checkNixFlakeRef,
	"pip-config-key":     checkPipConfigKey, // inert_config.go
	"yarn-config-key":    checkYarnConfigKey,
	"package-install":    checkPackageInstall,
	"helm-chart":         checkHelmChart, // checks_install.go
	"pip-project":        checkPipProject,
	"pip-requirements":   checkPipRequirements,
	"gpg-verify":         checkGPGVerify,
	"local-copy":         checkLocalCopy,
	"env-names":          checkEnvNames,
	"envsubst-format":    checkEnvsubstFormat,
	"package-file":       checkPackageFile,
	"remote-archive":     checkRemoteArchive,
	"tar-absolute-names": checkTarAbsoluteNames,
	"chroot-dir":         checkChrootDir,
	"port-forward":       checkPortForward,
	"npm-config-key":     checkNpmConfigKey, // inert_config.go
	"bundle-config-key":  checkBundleConfigKey,
	"git-other-repo":     checkGitOtherRepo,
	"git-work-tree":      checkGitWorkTree,
	"docker-volume":      checkDockerVolume,
	"docker-mount":       checkDockerMount, // checks_docker.go
	"docker-cp":          checkDockerCp,
	"bun-entry":          checkBunEntry,
	"docker-env":         checkDockerEnv,
	"docker-build-arg":   checkDockerBuildArg,
	"go-env-write":       checkGoEnvWrite,
	"docker-env-file":    checkDockerEnvFile,
	"docker-network":     checkDockerNetwork,
	"psql-var":           checkPsqlVar, // checks_psql.go
	"ssh-local-forward":  checkSSHForward("-L"),
	"ssh-remote-forward": checkSSHForward("-R"),
	"ssh-socks":          checkSSHForward("-D"),
	"ssh-tunnel":         checkSSHForward("-w"),
	"patch-files":        checkPatchFiles,
	"pager-less":         checkPager("is an interactive pager: at its prompt a person can run shell commands (! and |) and an editor (v), and $LESSOPEN can name a program it runs on each file"),
	"pager-more":         checkPager("is an interactive pager: at its prompt a person can run shell commands (!) and an editor (v)"),
	"pager-man":          checkPager("shows the page through a pager ($MANPAGER, $PAGER, else less), where a person can run shell commands"),
	"pager-bat":          checkBatPager, // checks_editor.go
	"pager-dpkg":         checkOutputPager("shows the list through a pager (less, or $DPKG_PAGER or $PAGER) when the output is a terminal, where a person can run shell commands; --no-pager or a pipe turns it off", "--no-pager"),
	"sed-bsd-suffix":     checkSedBSDSuffix,
	"git-tag-editor":     checkGitEditor(gitTagEditor),
	"git-merge-editor":   checkGitEditor(gitMergeEditor),
	"git-revert-editor":  checkGitEditor(gitRevertEditor),
	"git-commit-editor":  checkGitCommitEditor,

	// Step 21's service and database checks: checks_sql.go, checks_services.go.
	"sql": checkSQL, "sqlite3-sql": checkSQLiteOperands, "mongosh-js": checkMongoJS, "mongosh-operands": checkMongoshOperands,
	"migration-verb": checkMigrationVerb, "gh-api-method": checkGHAPIMethod, "gh-api-header": checkGHAPIHeader, "gh-api-endpoint": checkGHAPIEndpoint, "cloud-verb": checkCloudVerb,
}

// checkGitRefspec: a refspec that starts with "+" forces the update (it
// may discard commits on the remote), and one with an empty source
// (":branch") deletes the remote ref; both are irreversible.
func checkGitRefspec(in checkInput) checkResult {
	for _, w := range in.Words {
		switch {
		case len(w) > 1 && w[0] == '+':
			return checkResult{Irreversible: "the refspec " + w + " forces the update"}
		case len(w) > 1 && w[0] == ':':
			return checkResult{Irreversible: "the refspec " + w + " deletes the remote ref"}
		}
	}
	return checkResult{}
}

// checkDateOperand: date's operand is a format only when it starts with
// "+"; any other operand sets the clock.
func checkDateOperand(in checkInput) checkResult {
	for _, w := range in.Words {
		if !strings.HasPrefix(w, "+") {
			return checkResult{NotUnderstood: "an operand that does not start with + sets the clock (" + Literal(w) + ")"}
		}
	}
	return checkResult{}
}

// checkNoResponseFile: binutils read further options from an operand
// @FILE, which the device does not see.
func checkNoResponseFile(in checkInput) checkResult {
	for _, w := range in.Words {
		if strings.HasPrefix(w, "@") {
			return checkResult{NotUnderstood: "the operand " + Literal(w) + " is a file of further options the device does not see"}
		}
	}
	return checkResult{}
}

// checkSource: . and source run a file's commands in this shell; the walk
// says which file (run.go), this only keeps the table honest.
func checkSource(in checkInput) checkResult { return checkResult{} }

// checkAlias: an alias changes what a later command name runs.
func checkAlias(in checkInput) checkResult {
	for _, w := range in.Words {
		if strings.Contains(w, "=") {
			return checkResult{NotUnderstood: "alias " + Literal(w) + " changes what a later command name runs"}
		}
	}
	return checkResult{}
}

// checkAsUser: sudo and doas run the command as another user.
func checkAsUser(in checkInput) checkResult {
	return checkResult{Mark: "runs as another user (root unless -u says otherwise)"}
}

// checkKeepsEnv: sudo -E keeps the environment, the secrets included.
func checkKeepsEnv(in checkInput) checkResult {
	return checkResult{Mark: "keeps the environment, the secrets included, for the other user", SecretMark: true}
}

// checkDetaches: nohup and setsid let the program outlive the invocation.
func checkDetaches(in checkInput) checkResult {
	return checkResult{Mark: "lets a program keep running after the invocation ends, with the secrets in its environment", SecretMark: true}
}

// gitSafeConfig are configuration keys (prefixes) that run no program and
// send nothing elsewhere; any other key set by -c or git config makes the
// command not understood.
var gitSafeConfig = []string{"user.", "color.", "advice.", "init.defaultbranch", "core.quotepath", "core.autocrlf",
	"core.filemode", "core.longpaths", "core.ignorecase", "core.safecrlf", "core.eol", "safe.directory", "commit.gpgsign",
	"tag.gpgsign", "pull.rebase", "pull.ff", "gc.auto", "log.date", "log.decorate", "log.abbrevcommit", "format.pretty",
	"merge.conflictstyle", "diff.renames", "diff.algorithm", "diff.colormoved", "protocol.version", "http.version",
	"fetch.prune", "push.default", "push.autosetupremote", "rebase.autostash", "rebase.autosquash", "maintenance.auto",
	"feature.manyfiles", "column.ui", "status.short", "status.branch", "branch.sort", "tag.sort", "pager.branch", "init.templatedir="}

// checkGitConfig: the key of `git -c KEY=VALUE` or `git config KEY VALUE`
// must be one that runs no program (alias.*=!..., core.pager,
// core.fsmonitor, core.sshCommand, core.hooksPath, *.textconv,
// diff.external, filter.*, credential.helper, gpg.program ... are not).
func checkGitConfig(in checkInput) checkResult {
	var key, val string
	set := false
	switch {
	case len(in.Words) == 1 && strings.Contains(in.Words[0], "="):
		key, val, _ = strings.Cut(in.Words[0], "=")
		set = true
	case len(in.Words) == 1:
		return checkResult{} // a key read
	case len(in.Words) >= 2:
		key, val, set = in.Words[0], in.Words[1], true
	}
	if !set {
		return checkResult{}
	}
	lk := strings.ToLower(key)
	if strings.HasPrefix(lk, "alias.") {
		if strings.HasPrefix(strings.TrimSpace(val), "!") {
			return checkResult{NotUnderstood: "the configuration " + Literal(key) + " defines an alias that runs a shell command"}
		}
		return checkResult{NotUnderstood: "the configuration " + Literal(key) + " defines an alias, which changes what a later git command runs"}
	}
	for _, s := range gitSafeConfig {
		if strings.HasSuffix(s, "=") {
			continue
		}
		if strings.HasPrefix(lk, s) || lk == strings.TrimSuffix(s, ".") {
			if s == "pager.branch" && val != "false" {
				break
			}
			return checkResult{}
		}
	}
	return checkResult{NotUnderstood: "the configuration " + Literal(key) + " can make git run a program or reach another host; the device vouches only for keys that run none"}
}

// checkGitURL: a remote written TRANSPORT::ADDRESS makes git run the
// program git-remote-TRANSPORT (ext:: runs a shell command outright).
func checkGitURL(in checkInput) checkResult {
	for _, w := range in.Words {
		if i := strings.Index(w, "::"); i > 0 && !strings.Contains(w[:i], "/") {
			return checkResult{NotUnderstood: "the remote " + Literal(w) + " makes git run a transport program (" + Literal(w[:i]) + "::)"}
		}
	}
	return checkResult{}
}

// checkCMakeCache: `cmake -D NAME[:TYPE]=VALUE` sets a cache variable,
// and many of CMake's own name a program it runs (CMAKE_<LANG>_COMPILER,
// CMAKE_<LANG>_COMPILER_LAUNCHER, CMAKE_TOOLCHAIN_FILE, CMAKE_LINKER,
// CMAKE_PROJECT_INCLUDE; https://cmake.org/cmake/help/latest/manual/cmake-variables.7.html).
// Allowlist: CMake's own variables only from a list that runs nothing;
// a project's own variable only with a plain value (a switch, a number or
// a word without a path), because a path there may name a program.
func checkCMakeCache(in checkInput) checkResult {
	for _, w := range in.Words {
		name, value, ok := strings.Cut(w, "=")
		if !ok {
			return checkResult{NotUnderstood: "-D " + Literal(w) + " is not NAME=VALUE"}
		}
		name, _, _ = strings.Cut(name, ":")
		if strings.HasPrefix(name, "CMAKE_") {
			if !cmakeInertVariables[name] {
				return checkResult{NotUnderstood: "the cache variable " + Literal(name) + " is not one the device knows to run nothing (CMake's variables can name a compiler, launcher, linker or script)"}
			}
			continue
		}
		if strings.ContainsAny(value, "/\\$`;|&") {
			return checkResult{NotUnderstood: "the cache variable " + Literal(name) + " is given a path or shell text (" + Literal(value) + "), which may name a program the project runs"}
		}
	}
	return checkResult{}
}

// cmakeInertVariables are CMake variables that select a build, not a program.
var cmakeInertVariables = map[string]bool{
	"CMAKE_BUILD_TYPE": true, "CMAKE_INSTALL_PREFIX": true, "CMAKE_EXPORT_COMPILE_COMMANDS": true,
	"CMAKE_C_STANDARD": true, "CMAKE_CXX_STANDARD": true, "CMAKE_CXX_STANDARD_REQUIRED": true, "CMAKE_CXX_EXTENSIONS": true,
	"CMAKE_POSITION_INDEPENDENT_CODE": true, "CMAKE_VERBOSE_MAKEFILE": true, "CMAKE_COLOR_DIAGNOSTICS": true,
	"CMAKE_INTERPROCEDURAL_OPTIMIZATION": true, "CMAKE_UNITY_BUILD": true, "CMAKE_FIND_DEBUG_MODE": true,
	"CMAKE_MESSAGE_LOG_LEVEL": true, "CMAKE_SKIP_RPATH": true, "CMAKE_BUILD_PARALLEL_LEVEL": true,
}

// checkEnvNames: printenv NAME... prints only the variables named, so it
// exposes a secret only when it names a secret's variable; a name decided
// at run time may be any of them.
func checkEnvNames(in checkInput) checkResult {
	var shown []string
	for _, w := range in.Words {
		if !isShellName(w) {
			return checkResult{Mark: "prints variables named at run time, the secret ones possibly included", SecretMark: true, Output: "the environment"}
		}
		if _, ok := in.SecretEnv[w]; ok {
			shown = append(shown, w)
		}
	}
	if len(shown) == 0 {
		return checkResult{}
	}
	return checkResult{Mark: "prints the secret variable " + strings.Join(shown, ", "), SecretMark: true, Output: "the secret in " + strings.Join(shown, ", ")}
}

// checkEnvsubstFormat: envsubst SHELL-FORMAT replaces only the variables
// the format names ($NAME or ${NAME}; envsubst(1)), so it exposes a secret
// only when the format names a secret's variable.
func checkEnvsubstFormat(in checkInput) checkResult {
	var names []string
	for _, w := range in.Words {
		for _, m := range envsubstRef.FindAllStringSubmatch(w, -1) {
			names = append(names, m[1]+m[2])
		}
	}
	return checkEnvNames(checkInput{Words: names, SecretEnv: in.SecretEnv})
}

var envsubstRef = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// checkPackageFile: dpkg -i, rpm -i and dnf install given a package file
// or a URL install what that file holds, and its maintainer scripts (or
// scriptlets) run, as root, unread by the device; a package named from
// the distribution's repositories is the runs line's "code the device
// does not see".
func checkPackageFile(in checkInput) checkResult {
	words := in.Words
	if len(words) == 0 {
		words = in.Argv[1:]
	}
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			continue
		}
		if strings.Contains(w, "/") || strings.HasSuffix(w, ".deb") || strings.HasSuffix(w, ".rpm") {
			return checkResult{Runs: true, Mark: "installs the package file " + Literal(w) + ": its install scripts run, as root, and the device does not read them"}
		}
	}
	return checkResult{}
}

// checkRemoteArchive: tar and cpio read an archive named HOST:FILE (or
// USER@HOST:FILE) on that host through a remote shell, rsh or the one
// --rsh-command names (GNU tar's manual, "Remote Tape Server"), unless
// --force-local says the colon is part of a local name.
func checkRemoteArchive(in checkInput) checkResult {
	if slices.Contains(in.Argv, "--force-local") {
		return checkResult{}
	}
	for _, w := range in.Words {
		host, _, found := strings.Cut(w, ":")
		if found && host != "" && !strings.Contains(host, "/") {
			return checkResult{Network: true, Mark: "the archive " + Literal(w) + " is on another host, " + Literal(host) + ": " + in.Program + " reaches it through a remote shell (rsh, or the program --rsh-command names), which the device does not see"}
		}
	}
	return checkResult{}
}

// checkTarAbsoluteNames: with -P (--absolute-names) GNU tar keeps a
// member's leading "/" and its ".." on extraction (tar's manual,
// "Absolute File Names"), so the archive, and a --transform of its names,
// can write anywhere, which the device does not see; listing or creating
// with -P writes nothing outside.
func checkTarAbsoluteNames(in checkInput) checkResult {
	for i, a := range in.Argv[1:] {
		extract := a == "-x" || a == "--extract" || a == "--get"
		switch {
		case i == 0 && a != "" && a[0] != '-':
			extract = strings.ContainsRune(a, 'x') // tar Pxf: every letter an option
		case len(a) > 2 && a[0] == '-' && a[1] != '-':
			for _, c := range a[1:] {
				if c == 'x' {
					extract = true
				}
				if strings.ContainsRune(tarValueLetters, c) {
					break // the rest of the word is its value
				}
			}
		}
		if extract {
			return checkResult{NotUnderstood: "-P (--absolute-names) on extraction writes where the archive's member names point, absolute paths and .. included, which the device does not see"}
		}
	}
	return checkResult{}
}

// tarValueLetters are GNU tar's one-letter options that take a value.
const tarValueLetters = "bCfFgHIKLNTVX"

// checkBunEntry: bun [run] takes a package.json script's name or a file
// it runs (bun run's manual: a path, or a name with a JavaScript or
// TypeScript extension, is a file); the file is named as code that runs.
func checkBunEntry(in checkInput) checkResult {
	if len(in.Words) == 0 {
		return checkResult{}
	}
	f := in.Words[0]
	switch path.Ext(f) {
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		return checkResult{RunsFile: f}
	}
	if strings.Contains(f, "/") {
		return checkResult{RunsFile: f}
	}
	return checkResult{}
}

// checkChrootDir: chroot DIR COMMAND runs the COMMAND found inside DIR,
// that tree's program, not this system's; chroot / is this system.
func checkChrootDir(in checkInput) checkResult {
	if len(in.Words) > 0 && in.Words[0] != "/" {
		return checkResult{Runs: true, Mark: "runs its command from inside " + Literal(in.Words[0]) + ": that directory's programs and libraries, not this system's"}
	}
	return checkResult{}
}

// checkPortForward: kubectl port-forward opens ports on this machine that
// reach into the cluster, on 127.0.0.1 unless --address names others
// (0.0.0.0: every interface, so other machines reach the cluster too).
func checkPortForward(in checkInput) checkResult {
	addr := "localhost"
	for i, a := range in.Argv {
		if v, ok := strings.CutPrefix(a, "--address="); ok {
			addr = v
		} else if a == "--address" && i+1 < len(in.Argv) {
			addr = in.Argv[i+1]
		}
	}
	for _, a := range strings.Split(addr, ",") {
		if a != "localhost" && a != "127.0.0.1" && a != "::1" {
			return checkResult{Network: true, Mark: "opens ports on " + Literal(addr) + ", which other machines reach: through them, the cluster"}
		}
	}
	return checkResult{Network: true, Mark: "opens ports on this machine (localhost) that reach into the cluster"}
}

// isShellName reports whether s is a variable name (letters, digits and
// underscores, not starting with a digit).
func isShellName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

// checkGitOtherRepo: git -C DIR and --git-dir DIR use another repository,
// whose configuration and hooks are code the script did not show (its
// core.fsmonitor or core.pager runs even for git status); --work-tree DIR
// is checkGitWorkTree. A relative path that stays inside the working
// directory (git -C sub) is the project's own files, as its .git/config is.
func checkGitOtherRepo(in checkInput) checkResult {
	for _, d := range in.Words {
		if insideWorkDir(d) {
			continue
		}
		shown := Literal(d)
		if d == "" {
			shown = "a directory decided at run time"
		}
		files := strings.TrimSuffix(d, "/") + "/.git/config and " + strings.TrimSuffix(d, "/") + "/.git/hooks"
		if slices.Contains(in.Argv, "--git-dir") || slices.ContainsFunc(in.Argv, func(a string) bool {
			return strings.HasPrefix(a, "--git-dir=") && strings.TrimPrefix(a, "--git-dir=") == d
		}) {
			files = strings.TrimSuffix(d, "/") + "/config and " + strings.TrimSuffix(d, "/") + "/hooks"
		}
		if d == "" {
			files = "its .git/config and .git/hooks"
		}
		return checkResult{Runs: true, Mark: "uses the repository in " + shown + ", whose code runs: " + files}
	}
	return checkResult{}
}

// checkGitWorkTree: --work-tree DIR reads DIR's .gitattributes, which pick
// the filters and diff drivers the configuration runs.
func checkGitWorkTree(in checkInput) checkResult {
	for _, d := range in.Words {
		if d == "" {
			return checkResult{Runs: true, Mark: "uses a work tree decided at run time, whose .gitattributes pick the filters that run"}
		}
		if !insideWorkDir(d) {
			return checkResult{Runs: true, Mark: "uses the work tree " + Literal(d) + ", whose .gitattributes pick the filters that run"}
		}
	}
	return checkResult{}
}

// insideWorkDir reports whether a literal path stays inside the working
// directory: relative, not under ~, with no ".." component.
func insideWorkDir(d string) bool {
	if d == "" || strings.HasPrefix(d, "/") || strings.HasPrefix(d, "~") {
		return false
	}
	return !slices.Contains(strings.Split(d, "/"), "..")
}

// checkDockerVolume: -v SRC:DST[:OPTS] mounts SRC into the container. A
// named volume or a path inside the working directory (.:/src) gives the
// container only the project; any other host path (/, /etc, ~, the docker
// socket) or one decided at run time gives it the host's files, which the
// device does not follow.
func checkDockerVolume(in checkInput) checkResult {
	for _, v := range in.Words {
		if v == "" {
			// A word decided at run time has no fixed value here, so
			// "$PWD":/w is not understood yet (the check sees no prefix).
			return checkResult{NotUnderstood: "a volume (-v) decided at run time may give the container any host path"}
		}
		src, _, mapped := strings.Cut(v, ":")
		if !mapped {
			continue // an anonymous volume: a path inside the container
		}
		named := src != "" && !strings.ContainsAny(src, "/.~")
		if named || src == "." || strings.HasPrefix(src, "./") && insideWorkDir(src) {
			continue
		}
		return checkResult{NotUnderstood: "the volume -v " + Literal(v) + " gives the container the host's " + cmpOr(src, "path decided at run time")}
	}
	return checkResult{}
}

// checkGoEnvWrite: go env -w NAME=VALUE sets NAME for every later go
// command, through the go env file: judged as the variable set in the
// script is (codeVariable), so GOFLAGS=-toolexec=... or CC=... is not
// understood, and GOFLAGS=-mod=mod or GOPRIVATE=... is.
func checkGoEnvWrite(in checkInput) checkResult {
	if !slices.Contains(in.Argv, "-w") {
		return checkResult{}
	}
	for _, v := range in.Words {
		name, value, ok := strings.Cut(v, "=")
		if !ok {
			continue
		}
		if why := codeVariable(name, value, true); why != "" {
			return checkResult{NotUnderstood: "go env -w sets " + name + " for every later go command: " + why}
		}
		if why := redirectVariable(name); why != "" {
			return checkResult{Mark: "go env -w sets " + name + " for every later go command, " + why, Network: true}
		}
	}
	return checkResult{}
}

// checkCosignKey: cosign's --key names a key file, or a key held by a
// service (awskms://, gcpkms://, azurekms://, hashivault://, k8s://,
// gitlab://, env://, pkcs11:), which cosign asks over the network with
// that service's credentials: only a file is described.
func checkCosignKey(in checkInput) checkResult {
	for _, w := range in.Words {
		if strings.Contains(w, ":") {
			return checkResult{NotUnderstood: "cosign --key " + Literal(w) + " names a key held by a service, which cosign reaches with that service's credentials"}
		}
	}
	return checkResult{}
}

// checkHatchScript: hatch run's word is ENV:SCRIPT, a script the
// project's configuration defines for that environment (or, when none is
// so named, the program of that name in the environment); a path is a
// file run, which the walk does not follow.
func checkHatchScript(in checkInput) checkResult {
	for _, w := range in.Words {
		env, script, ok := strings.Cut(w, ":")
		if !ok || !hatchName(env) || !hatchName(script) {
			return checkResult{NotUnderstood: "hatch run " + Literal(w) + " is not ENV:SCRIPT, a script of the project's environments"}
		}
	}
	return checkResult{}
}

func hatchName(s string) bool {
	if s == "" || s[0] == '.' || s[0] == '-' {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// checkKustomizeLocal: kustomize build takes a directory or a URL
// (a Git repository or an HTTP address); only a directory is described.
func checkKustomizeLocal(in checkInput) checkResult {
	for _, w := range in.Words {
		if strings.Contains(w, "://") || strings.HasPrefix(w, "github.com/") || strings.HasPrefix(w, "git@") || strings.Contains(w, "?ref=") {
			return checkResult{NotUnderstood: "kustomize build " + Literal(w) + " fetches the kustomization from the network"}
		}
	}
	return checkResult{}
}

// checkNixFlakeRef: an installable of nix build or nix flake check is a
// flake reference with an optional #output; one that is a local path
// (".", ".#x", "./dir", "/abs", "path:...") is the project's, any other
// (github:owner/repo, nixpkgs#x, git+https://...) is fetched, evaluated and
// built, its builders running code the device has not seen
// (https://nix.dev/manual/nix/latest/command-ref/new-cli/nix3-flake#flake-references).
func checkNixFlakeRef(in checkInput) checkResult {
	var fetched []string
	for _, w := range in.Words {
		ref, _, _ := strings.Cut(w, "#")
		if ref == "" || ref == "." || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "/") || strings.HasPrefix(ref, "path:.") {
			continue
		}
		fetched = append(fetched, Literal(w))
	}
	if len(fetched) == 0 {
		return checkResult{}
	}
	return checkResult{Runs: true, Mark: "nix builds " + strings.Join(fetched, ", ") + ", a flake fetched from the network, whose builders run its code"}
}
