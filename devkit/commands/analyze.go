// The analysis entry point (design: "What the device tells the person").
package commands

// Analyze returns the command model's account of one invocation.
func Analyze(r Request) *Analysis {
	a := &Analysis{Class: ClassOther, Readers: map[string][]string{}}
	if _, errs := defaultCatalog(); len(errs) > 0 {
		a.Reasons = append(a.Reasons, Finding{Severity: SeverityRunsUnseen, Text: "the device's command tables do not load: " + errs[0].Error()})
		a.Why = "possibly irreversible: not understood"
		return a
	}
	a.Reasons = append(a.Reasons, Finding{Severity: SeverityRunsUnseen, Text: "the command model is not complete in this build"})
	a.Why = "possibly irreversible: not understood"
	return a
}
