// Text from the device or relay is shown escaped.
package main

import "testing"

func TestPrintableEscapesControlAndFormatCharacters(t *testing.T) {
	cases := map[string]string{
		"plain text, é ü":            "plain text, é ü",
		"tab\tkept":                  "tab\tkept",
		"clear \x1b[2J screen":       `clear \x1b[2J screen`,
		"bell\a and \x7f and \u0085": `bell\x07 and \x7f and \x85`,
		"ok \u202egnp.exe":           `ok \u202egnp.exe`,
		"zero\u200bwidth \u2066x":    `zero\u200bwidth \u2066x`,
		"line\u2028separator":        `line\u2028separator`,
		"new\nline":                  `new\x0aline`,
	}
	for in, want := range cases {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %q, want %q", in, got, want)
		}
	}
}
