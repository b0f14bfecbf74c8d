// The man page says what --help says: the roff, stripped of its markup, has
// the words of every help text in order and nothing else.

package main

import (
	"strings"
	"testing"
)

// manWords strips the roff that writeManPage produces back to words:
// requests (section and list macros) go, font changes and escapes become
// the characters they stand for.
func manWords(roff string) []string {
	var words []string
	for _, l := range strings.Split(roff, "\n") {
		if strings.HasPrefix(l, ".") {
			continue
		}
		l = strings.NewReplacer(`\fB`, "", `\fI`, "", `\fR`, "", `\&`, "", `\-`, "-", `\e`, `\`).Replace(l)
		words = append(words, strings.Fields(l)...)
	}
	return words
}

// helpWords are the words the man page must carry: every help text without
// its headings (the man page sets those as section titles), and the main
// text's first line as the NAME line.
func helpWords(t *testing.T) []string {
	var words []string
	for i, s := range manSections() {
		lines := strings.Split(s.text, "\n")
		if i == 0 {
			name, summary, ok := strings.Cut(lines[0], ": ")
			if !ok {
				t.Fatalf("the first help line %q is not NAME: SUMMARY", lines[0])
			}
			words = append(words, name, "-")
			words = append(words, strings.Fields(strings.TrimSuffix(summary, "."))...)
			lines = lines[1:]
		}
		for j, l := range lines {
			heading := strings.HasSuffix(l, ":") && !strings.HasPrefix(l, " ") &&
				(j == 0 || strings.TrimSpace(lines[j-1]) == "") &&
				j+1 < len(lines) && strings.HasPrefix(lines[j+1], "  ")
			if !heading {
				words = append(words, strings.Fields(l)...)
			}
		}
	}
	return words
}

func TestManPageSaysWhatHelpSays(t *testing.T) {
	var b strings.Builder
	if err := writeManPage(&b, "1.2.3", "2026-01-02"); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if !strings.HasPrefix(page, `.TH AGENTKNOCK 1 "2026-01-02" "agentknock 1.2.3" "User Commands"`+"\n") {
		t.Errorf("title line: %q", strings.SplitN(page, "\n", 2)[0])
	}
	for _, want := range []string{".SH NAME\n", ".SH SYNOPSIS\n", ".SH DESCRIPTION\n", ".SH \"AGENTKNOCK SECRET UPLOAD\"\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no %q", want)
		}
	}
	got, want := manWords(page), helpWords(t)
	for i := 0; i < len(got) || i < len(want); i++ {
		if i >= len(got) || i >= len(want) || got[i] != want[i] {
			lo := max(0, i-8)
			t.Fatalf("man page and help differ at word %d:\n man: %q\nhelp: %q",
				i, got[lo:min(len(got), i+8)], want[lo:min(len(want), i+8)])
		}
	}
}

// Options must appear in a list as bold terms, and a line of help text that
// starts with '.' must not turn into a roff request.
func TestManPageMarkup(t *testing.T) {
	var b strings.Builder
	if err := writeManPage(&b, "1", ""); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		".TP\n\\fB\\-\\-rename\\-env\\fR \\fISECRET\\fR \\fIVAR\\fR \\fINEW\\fR\n",
		".TP\n\\fB\\-\\-from\\-file\\fR \\fINAME=PATH\\fR\n",
		".nf\n{\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the page has no %q", want)
		}
	}
	if got := roffEscape(`.env and 'x' \n -`); got != `\&.env and 'x' \en \-` {
		t.Errorf("roffEscape: %q", got)
	}
	// A help text whose lines do not line up in two columns stays verbatim.
	var v strings.Builder
	renderIndented(&v, []string{"  a  b", "   c"})
	if !strings.Contains(v.String(), ".nf\n") {
		t.Errorf("misaligned list rendered as %q", v.String())
	}
}

func TestManDateFromSourceDateEpoch(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1767312000")
	if d := manDate(); d != "2026-01-02" {
		t.Errorf("SOURCE_DATE_EPOCH=1767312000 gave %q", d)
	}
	t.Setenv("SOURCE_DATE_EPOCH", "")
	if d := manDate(); d != "" {
		t.Errorf("no SOURCE_DATE_EPOCH gave %q", d)
	}
}
