// The fresh corpora as a regression test: 120 scripts (45 benign, 75
// hostile) written for Step 20 by a person who had not read the tables,
// from the kinds (write then run, programs' own code-running
// options, secret routes, a danger at the end of a long script, remote
// hosts and containers), and 80 more (30 benign, 50 hostile) by another,
// written after the first set's misses were mended, and 100 more (40
// benign, 60 hostile) by a third, after the second's, and 100 (40 benign,
// 60 hostile) by a fourth, after the third's, and 100 (40 benign, 60
// hostile) by a fifth, after the fourth's, and 100 (40 benign, 60
// hostile) by a sixth, after the fifth's, aimed at shell semantics
// (aliases, traps, array subscripts that run, namerefs, /dev/tcp),
// variables and config files that make ordinary programs run code, and
// unusual secret routes and host spellings, and 98 (38 benign, 60
// hostile) by a seventh, after the sixth's, written as an agent's
// multi-line sessions with the danger folded into an ordinary step (a
// helper, a tool install, a config or CI edit, a variable that changes
// what a later command loads), across less common dev tools (two benign
// ones left out: sops --decrypt and vault token lookup print secret
// data, which the device leaves undescribed). Each hostile entry says the
// least severe mark that tells its danger; a benign one must be
// understood with no mark of a secret sent or code run unseen.
package commands

import (
	"encoding/json"
	"os"
	"path"
	"testing"
)

type corpusEntry struct {
	ID      string   `json:"id"`
	Kind    string   `json:"kind"`
	Benign  bool     `json:"benign"`
	Argv    []string `json:"argv"`
	Secrets []struct {
		Name  string `json:"name"`
		Env   string `json:"env"`
		Stdin bool   `json:"stdin"`
	} `json:"secrets"`
	Expect string `json:"expect"`
	Danger string `json:"danger"`
	// ByRule, on a benign entry the device does not vouch for, is the
	// rule it gives instead (a text its reasons or marks must hold): a
	// change to the project's code before the code runs (write, then run),
	// code in a language the device does not read. Such entries are
	// counted apart, never as honest.
	ByRule string `json:"by_rule"`
}

// corpusSeverity is the least severity a hostile entry's mark must have.
var corpusSeverity = map[string]Severity{
	"runs":    SeverityRunsUnseen,
	"secret":  SeverityExposes,
	"network": SeverityNetwork,
	"writes":  SeverityWrites,
}

func TestFreshCorpus(t *testing.T) {
	for _, c := range []struct {
		file string
		n    int
	}{{"testdata/corpus-fresh.json", 120}, {"testdata/corpus-fresh2.json", 80}, {"testdata/corpus-fresh3.json", 100}, {"testdata/corpus-fresh4.json", 100}, {"testdata/corpus-fresh5.json", 100}, {"testdata/corpus-fresh6.json", 100}, {"testdata/corpus-fresh7.json", 98}} {
		t.Run(c.file, func(t *testing.T) { checkCorpus(t, c.file, c.n) })
	}
}

func checkCorpus(t *testing.T, file string, n int) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var entries []corpusEntry
	if err := json.Unmarshal(data, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != n {
		t.Fatalf("the corpus has %d entries, want %d", len(entries), n)
	}
	honest, byRule := 0, 0
	for _, e := range entries {
		r := Request{Argv: e.Argv, Executable: "/usr/bin/" + path.Base(e.Argv[0]), Dir: "/work/app"}
		for _, s := range e.Secrets {
			r.Secrets = append(r.Secrets, Secret{Name: s.Name, Env: s.Env, Stdin: s.Stdin})
		}
		a := testAnalyzer.Analyze(r)
		ok := true
		if e.Benign {
			ok = a.Understood
			for _, m := range a.Marks {
				if m.Severity >= SeveritySecret {
					ok = false
				}
			}
		} else {
			want, known := corpusSeverity[e.Expect]
			if !known {
				t.Fatalf("%s: expect %q is not a severity", e.ID, e.Expect)
			}
			ok = !a.Understood
			for _, m := range a.Marks {
				ok = ok || m.Severity >= want
			}
			// A destructive step (expect writes) is told by the class
			// irreversible, which the verdict names and which is always
			// asked of a person, whatever a policy, pin or grant says.
			ok = ok || want <= SeverityWrites && a.Class == ClassIrreversible
		}
		if ok {
			honest++
			continue
		}
		if e.Benign && e.ByRule != "" && mentions(a, e.ByRule) {
			byRule++
			continue
		}
		what := "hostile, shown understood with no mark of its danger"
		if e.Benign {
			what = "benign, shown not understood or with a serious mark"
		}
		t.Errorf("%s (%s): %s: %s\n%s", e.ID, e.Kind, what, e.Danger, dump(a))
	}
	t.Logf("%d of %d honest, %d benign ones answered by a stated rule", honest, len(entries), byRule)
}
