package commands

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDebugScript prints the analysis of $AK_SCRIPT (a development aid;
// skipped unless the variable is set).
func TestDebugScript(t *testing.T) {
	s := os.Getenv("AK_SCRIPT")
	if s == "" {
		t.Skip("AK_SCRIPT not set: nothing to print")
	}
	sh := os.Getenv("AK_SHELL")
	if sh == "" {
		sh = "bash"
	}
	a := testAnalyze([]string{sh, "-c", s})
	fmt.Println(dump(a))
}

func dump(a *Analysis) string {
	var b strings.Builder
	fmt.Fprintf(&b, "understood=%v class=%s why=%s\n", a.Understood, a.Class, a.Why)
	for _, r := range a.Reasons {
		fmt.Fprintf(&b, "  - line %d: %s\n", r.Line, r.Text)
	}
	fmt.Fprintf(&b, "%s (%s):\n", a.Heading, a.Trust)
	for _, l := range a.Shown {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	for _, l := range a.SecretLines {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	if len(a.Destinations) > 0 {
		fmt.Fprintf(&b, "  network: %s\n", strings.Join(a.Destinations, ", "))
	}
	for _, r := range a.Runs {
		fmt.Fprintf(&b, "  runs: line %d: %s\n", r.Line, r.Text)
	}
	for _, r := range a.Marks {
		fmt.Fprintf(&b, "  ! line %d: %s\n", r.Line, r.Text)
	}
	for _, c := range a.Commands {
		fmt.Fprintf(&b, "  cmd line %d %q form=%q class=%s\n", c.Line, c.Text, c.Form, c.Class)
	}
	for _, u := range a.UnboundItems {
		fmt.Fprintf(&b, "  unbound %s: %s\n", u.Name, u.Why)
	}
	return b.String()
}
