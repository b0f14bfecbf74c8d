// The release configuration agrees with itself: every build file names the
// Go release that go.mod's `go` line pins (scripts/pinned-go), and the
// completion help names each directory the packages install a completion
// into (.goreleaser.yaml), for each package format.

package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

func readRepoFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuildFilesNameThePinnedToolchain(t *testing.T) {
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+\.\d+)$`).FindStringSubmatch(readRepoFile(t, "go.mod"))
	if m == nil {
		t.Fatal("go.mod's go line names no exact release (go X.Y.Z): nothing keeps an older Go from building")
	}
	want := "GOTOOLCHAIN=go" + m[1]
	for _, f := range []string{".goreleaser.yaml", ".ko.yaml"} {
		got := regexp.MustCompile(`GOTOOLCHAIN=\S+`).FindAllString(readRepoFile(t, f), -1)
		if len(got) == 0 {
			t.Errorf("%s sets no GOTOOLCHAIN", f)
		}
		for _, g := range got {
			if g != want {
				t.Errorf("%s says %s, go.mod %s", f, g, want)
			}
		}
	}
}

func TestCompletionHelpNamesThePackagesPaths(t *testing.T) {
	dsts := regexp.MustCompile(`(?m)^\s+dst: (/usr/share/\S*(?:completion|zsh|fish)\S*)$`).FindAllStringSubmatch(readRepoFile(t, ".goreleaser.yaml"), -1)
	if len(dsts) < 3 {
		t.Fatalf(".goreleaser.yaml installs %d completions", len(dsts))
	}
	help := strings.Join(strings.Fields(completionUsageText), " ")
	for _, d := range dsts {
		if !strings.Contains(help, d[1]) {
			t.Errorf("the packages install %s; agentknock completion --help does not say so", d[1])
		}
	}
}
