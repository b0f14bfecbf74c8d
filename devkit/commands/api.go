// The command model's API (design: "What the device tells the person"):
// what goes in (an invocation: argv, the executable, delivered secrets,
// the working directory) and what comes out (the verdict, its reasons,
// the commands in order, each secret's readers, destinations, marks, what
// no pin can bind, and the invocation's class for the Step 21 policy).
// The names are a contract shared with the device's renderer, its pins and
// its policy; fields may be added, never renamed.
package commands

// Secret is one secret the client delivers with the invocation.
type Secret struct {
	Name  string // the secret's name as the person knows it
	Env   string // the environment variable it is delivered in ("" for stdin)
	Stdin bool   // delivered on standard input
}

// Request is what the device knows of one invocation.
type Request struct {
	Argv             []string
	Executable       string // absolute path the client reported
	ExecutableSHA256 []byte // nil when unknown
	Dir              string // the working directory
	Secrets          []Secret
	ScriptMode       bool    // the executable is a script file run directly
	Script           *string // its text, when the client sent it
}

// Class is what an invocation can do, for the Step 21 policy.
type Class string

const (
	ClassReadOnly     Class = "read-only"    // only reads: may pass
	ClassOther        Class = "other"        // asks as usual
	ClassIrreversible Class = "irreversible" // always asks a person
)

// Severity orders findings: higher is worse, and findings are sorted by
// it, most severe first, so no cap hides a worse finding behind a lesser.
type Severity int

const (
	SeverityNote       Severity = iota // worth knowing
	SeverityWrites                     // writes outside the directory
	SeverityNetwork                    // opens the network
	SeverityExposes                    // a secret reaches a program, a file or a trace
	SeveritySecret                     // sends a secret (or the environment) over the network
	SeverityRunsUnseen                 // runs code the device cannot see
)

// Finding is one reason a script is not understood, or one "!" mark.
type Finding struct {
	Line     int // 1-based line of the script (0: the invocation itself)
	Severity Severity
	Secret   bool // the finding concerns a delivered secret
	Text     string
	More     int // the same finding on this many other lines
}

// Unbound is one thing a pin of this request cannot bind: its name as the
// person is told it ("build.sh", "make via PATH", ".git/hooks/*"), why,
// and the safer form when there is one.
type Unbound struct {
	Name, Why, Safer string
}

// Command is one command the invocation runs, in the order it runs.
type Command struct {
	Line, Depth int
	Text        string // the command as shown
	Program     string // the table's program name ("" when none)
	Form        string // the table entry that matched ("git push --force")
	Class       Class
}

// Analysis is the command model's account of one invocation.
type Analysis struct {
	Understood   bool
	Reasons      []Finding           // why not understood, most severe first
	Marks        []Finding           // "!" marks, most severe first
	Commands     []Command           // in the order they run
	Readers      map[string][]string // secret name -> the commands that can read it
	Destinations []string            // hosts the network goes to
	Unbound      []string            // what no pin can bind, per program, for this request
	Class        Class               // the invocation's class (Step 21)
	Why          string              // "irreversible: git push --force", "read-only: git status, executable /usr/bin/git"

	// How the explanation shows it (the device renders these).
	Heading      string    // "bash -c, options -e", "script file run by #!/bin/sh"; "" for an argv run directly
	Trust        string    // how the device knows which shell runs the script
	Shown        []string  // the commands as shown, two spaces per level of nesting
	Truncated    string    // the walk stopped early, or the lines were capped: why
	Runs         []Finding // whose code runs (the project's code, named by its files)
	SecretLines  []string  // who can read each delivered secret
	Unseen       []string  // files a program reads or runs that the device does not see
	UnboundItems []Unbound // Unbound, with why and the safer form
}
