// Tests of the linter and test-runner tables added after the fresh
// corpus (shellcheck, golangci-lint, ctest): the everyday forms are
// understood, the options that run a script or load a plugin are not,
// and a configuration the script wrote first makes the run not
// understood.
package commands

import "testing"

func TestLinterTables(t *testing.T) {
	checkTwins(t, []twin{
		{name: "ctest's script mode", hostile: "ctest -S dash.cmake", want: "-S",
			benign: "ctest --test-dir build --output-on-failure -j4"},
		{name: "a golangci-lint plugin option", hostile: "golangci-lint run --plugin ./x.so", want: "--plugin",
			benign: "golangci-lint run --timeout 5m ./..."},
		{name: "golangci-lint's configuration written first", hostile: "printf 'x: 1\\n' > .golangci.yml; golangci-lint run ./...",
			want: "write, then run", benign: "golangci-lint run --fix ./...", markedOK: ""},
		{name: "shellcheck with an option it lacks", hostile: "shellcheck --exec x s.sh", want: "--exec",
			benign: "shellcheck -x -s bash scripts/*.sh"},
	})
	a := testAnalyze([]string{"sh", "-c", "shellcheck -x scripts/a.sh"})
	if a.Class != ClassReadOnly {
		t.Errorf("shellcheck reads scripts and runs none: want read-only, got %s (%s)", a.Class, a.Why)
	}
}
