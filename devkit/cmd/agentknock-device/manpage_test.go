// The device's man page says what --help says, word for word, and takes
// its date from SOURCE_DATE_EPOCH.

package main

import (
	"strings"
	"testing"
)

func TestManPageSaysWhatHelpSays(t *testing.T) {
	r := runCLI(t, "", []string{"SOURCE_DATE_EPOCH=1767312000"}, manCommand, "1.2.3")
	if r.code != 0 {
		t.Fatalf("__man: %s", r)
	}
	page := r.stdout
	if first, _, _ := strings.Cut(page, "\n"); first != `.TH AGENTKNOCK-DEVICE 1 "2026-01-02" "agentknock-device 1.2.3" "User Commands"` {
		t.Errorf("title line %q", first)
	}
	for _, want := range []string{".SH NAME\nagentknock\\-device \\- a local", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	var got []string
	for _, l := range strings.Split(page, "\n") {
		if strings.HasPrefix(l, ".") {
			continue
		}
		l = strings.NewReplacer(`\&`, "", `\-`, "-", `\e`, `\`).Replace(l)
		got = append(got, strings.Fields(l)...)
	}
	// The help's words in the page's order: the NAME line's "name: summary"
	// as "name - summary", the usage lines (without "Usage:") as SYNOPSIS,
	// then the prose above them and everything below.
	nameLine, rest, _ := strings.Cut(fullHelp(), "\n")
	intro, rest, _ := strings.Cut(rest, "\nUsage:\n")
	usage, rest, _ := strings.Cut(rest, "\n\n")
	want := strings.Fields(strings.Replace(nameLine, ": ", " - ", 1) + " " + usage + " " + intro + " " + rest)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		for i := range min(len(got), len(want)) {
			if got[i] != want[i] {
				t.Fatalf("man page and help differ at word %d: %q against %q", i, got[max(0, i-5):i+5], want[max(0, i-5):i+5])
			}
		}
		t.Fatalf("man page has %d words, help %d", len(got), len(want))
	}
	if r := runCLI(t, "", nil, manCommand, "1"); !strings.HasPrefix(r.stdout, `.TH AGENTKNOCK-DEVICE 1 "" "agentknock-device 1"`) {
		t.Errorf("without SOURCE_DATE_EPOCH the page is dated: %.80q", r.stdout)
	}
}
