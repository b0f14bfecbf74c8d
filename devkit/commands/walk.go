// The walk over a parsed script (design: "What the device tells the
// person"): each statement is visited once (nested scripts, substitutions
// and functions one level deeper, up to maxDepth), its command shown as
// the client wrote it, and everything the device cannot see through
// becomes a reason of the verdict. It follows the secrets through every
// input: the environment every program inherits, words that name them,
// standard input into pipelines and loops, here-strings and
// here-documents, function arguments into the body, and files the script
// wrote with secret data and later reads. run.go handles each simple
// command.
package commands

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

type progRef struct {
	name string
	line int
}

// walker is the state of one analysis.
type walker struct {
	z        *Analyzer
	cat      *catalog
	a        *Analysis
	lang     syntax.LangVariant
	dash     bool // the shell is dash or ash: arithmetic never evaluates a value as code
	wd, cwd  string
	deadline deadline
	standIn  byte // stands for CR in the parsed text
	stopped  string
	nodes    int
	// nestedBytes bounds the nested scripts parsed (eval, sh -c, trap).
	nestedBytes int
	// silent > 0: re-walking a function body for its arguments; nothing
	// is shown and no command is listed again.
	silent int
	// onRemote > 0: walking a command that runs on another host (ssh HOST
	// CMD): its paths are that host's, not this machine's.
	onRemote int

	// The unit being walked: its text, and the line every finding in it
	// is reported on when it is a nested script (0: its own lines).
	src      string
	lineHere int

	envSecrets   map[string]string // variable -> secret name
	stdinSecrets []string
	stdinLabel   string            // stdinTaint's label of stdinSecrets, once built
	secretVars   map[string]bool   // delivered, or assigned from secret data (read)
	secretFrom   map[string]string // a variable of the script -> the secret data it came from (secretvars.go)

	funcs  map[string]*syntax.Stmt
	inFunc map[string]bool
	// forwarding: the functions that run their "$@" (forward.go), each
	// with the text it was defined in; atWords (atSet) the words of the
	// call being followed; fwdDef > 0 while such a function is defined.
	forwarding  map[string]string
	atWords     []*syntax.Word
	atSet       bool
	fwdDef      int
	written     map[string]int    // resolved path -> line the script wrote it
	how         map[string]string // resolved path -> how: "wrote", "downloaded", "changed", "built"
	scripts     scriptTexts       // files written whole from a fixed here-document (written_script.go)
	remotes     map[string]string // git remote name -> the URL the script set (gitremote.go)
	downloads   map[string]int    // files a download saved, by resolved path
	netCommands map[string]bool   // commands that opened the network, as shown (what a pipe reads from)
	writingTo   bool              // the word being read names a file a redirection writes
	jobs        []backgroundJob   // background jobs started with secrets in their environment, not yet waited for
	extracted   int               // the line an archive from a download was unpacked
	into        intoDirs          // directories the script wrote files into (extract.go)
	patched     intoDir           // a patch the script wrote or downloaded, applied (checks_forward.go)
	tainted     map[string]string // resolved paths holding secret data -> what data (secretvars.go)
	programs    []progRef         // every program run: they inherit the environment
	progSeen    map[string]bool
	stdinRead   []progRef
	named       map[string][]progRef
	hostSeen    map[string]bool
	unseen      map[string]bool
	seen        map[string]int // finding key -> its index in its list
	controls    bool
	// callNamed collects the secret variables the words of the simple
	// command being read name.
	callNamed []string
	// writtenSubsts are the >(...) substitutions of the statement being
	// walked: walked after it, as they read what it writes.
	writtenSubsts []procSubst

	// For the class: constructs the read-only rule refuses in a script.
	computes string // the first assignment, expansion or arithmetic, shown

	numeric     map[string]bool     // variables the script set to a literal number
	confVars    map[string]string   // configuration-file variables the script set (hosts.go), with their paths
	assoc       map[string]bool     // associative arrays (declare -A): their subscripts are strings
	loopNames   map[string][]string // a for loop's variable over literal names, while its body is walked
	committed   repoSecret          // secret data the script committed to the repository (gitsecret.go)
	identity    repoSecret          // secret data the script made its git identity (user.name, user.email)
	fetched     intoDir             // a git fetch of a URL (gitfetch.go): the line, and the URL
	integer     map[string]bool     // variables with the integer attribute (declare -i): assignments are arithmetic
	unbound     *unboundList
	viaPathSeen map[string]bool
	matches     map[uint64]cachedMatch // matchCached
	seed        maphash.Seed
	netUses     []netUse // commands that open the network, for the class

	resolvedPaths [4]resolved // resolve's last answers
	resolvedNext  int
	// commandChunks are the full chunks of Analysis.Commands, which holds
	// only the last one until finish joins them (command).
	commandChunks [][]Command
}

// netUse is one command that opens the network.
type netUse struct {
	form       string
	forSecret  []string
	readsStdin bool
}

func newWalker(z *Analyzer, cat *catalog, a *Analysis, lang syntax.LangVariant, wd string, secrets []Secret, deadline deadline, standIn byte, size int) *walker {
	w := &walker{z: z, cat: cat, a: a, lang: lang, wd: wd, cwd: wd, deadline: deadline, standIn: standIn, nestedBytes: 2*size + 64<<10,
		envSecrets: map[string]string{}, secretVars: map[string]bool{}, secretFrom: map[string]string{}, funcs: map[string]*syntax.Stmt{}, inFunc: map[string]bool{}, forwarding: map[string]string{},
		written: map[string]int{}, into: intoDirs{}, remotes: map[string]string{}, scripts: scriptTexts{}, how: map[string]string{}, downloads: map[string]int{}, netCommands: map[string]bool{}, tainted: map[string]string{}, progSeen: map[string]bool{},
		named: map[string][]progRef{}, hostSeen: map[string]bool{}, unseen: map[string]bool{}, seen: map[string]int{},
		unbound: &unboundList{seen: map[string]bool{}}, viaPathSeen: map[string]bool{}, numeric: map[string]bool{}, confVars: map[string]string{}, assoc: map[string]bool{}, loopNames: map[string][]string{}, integer: map[string]bool{}, matches: map[uint64]cachedMatch{}, seed: maphash.MakeSeed()}
	for _, s := range secrets {
		if s.Stdin || s.Env == "" {
			w.stdinSecrets = append(w.stdinSecrets, s.Name)
		} else {
			w.envSecrets[s.Env] = s.Name
			w.secretVars[s.Env] = true
		}
	}
	return w
}

// procSubst is a >(...) process substitution waiting for its statement.
type procSubst struct {
	stmts []*syntax.Stmt
	depth int
	label string
}

// flow is what a statement's input carries.
type flow struct {
	stdin bool // it reads the script's own standard input
	// outAway: its standard output is not the script's (a pipe, a file,
	// a substitution), so it is no terminal: a program that pages its
	// output only on a terminal does not page it.
	outAway bool
	taint   string // its input carries secret data: from what
	piped   string // its input is the output of this command (a pipeline)
	file    string // its input is this file (a < redirection)
	hdoc    *syntax.Redirect
}

// backgroundJob is a command started with & (its line and text).
type backgroundJob struct {
	line int
	text string
}

// reason records something the device cannot see through.
func (w *walker) reason(sev Severity, line int, secret bool, format string, args ...any) {
	w.add(&w.a.Reasons, "r", sev, line, secret, fmt.Sprintf(format, args...))
}

// mark records a "!" line.
func (w *walker) mark(sev Severity, line int, secret bool, format string, args ...any) {
	w.add(&w.a.Marks, "m", sev, line, secret, fmt.Sprintf(format, args...))
}

// runsLine records whose code runs.
func (w *walker) runsLine(line int, format string, args ...any) {
	w.add(&w.a.Runs, "c", SeverityRunsUnseen, line, false, fmt.Sprintf(format, args...))
}

// add records a finding once: the same text on later lines counts as more
// places of the first.
func (w *walker) add(list *[]Finding, kind string, sev Severity, line int, secret bool, text string) {
	key := kind + text
	if i, ok := w.seen[key]; ok {
		if f := &(*list)[i]; f.Text == text && f.Line != line {
			f.More++
		}
		return
	}
	w.seen[key] = len(*list)
	*list = append(*list, Finding{Line: line, Severity: sev, Secret: secret, Text: text})
}

func (w *walker) lineOf(p syntax.Pos) int {
	if w.lineHere > 0 {
		return w.lineHere
	}
	return int(p.Line())
}

// show is the client's text of a node, as sent (literal), on one line.
func (w *walker) show(n syntax.Node) string {
	if n == nil || !n.Pos().IsValid() {
		return ""
	}
	a, b := int(n.Pos().Offset()), int(n.End().Offset())
	if a < 0 || b > len(w.src) || a > b {
		return ""
	}
	return w.display(w.src[a:b])
}

// display is literal text with the CR stand-in shown as \r, clipped. A
// tab is shown as \t but is no control character worth a mark: Makefiles
// and here-documents need them.
var lineContinuation = regexp.MustCompile(`\\\n[ \t]*`)

func (w *walker) display(s string) string {
	if len(s) > maxLineBytes*2 {
		s = s[:maxLineBytes*2]
	}
	if w.standIn != 0 {
		s = strings.ReplaceAll(s, string(w.standIn), "\r")
	}
	// A line continued with a backslash is one line to the shell.
	if strings.IndexByte(s, '\\') >= 0 && strings.Contains(s, "\\\n") {
		s = lineContinuation.ReplaceAllString(s, " ")
	}
	out := Literal(s)
	if out != s {
		// Tabs and newlines are what a Makefile or a message needs; the
		// mark is for what a terminal would hide or act on.
		if plain := strings.NewReplacer("\t", "", "\n", "").Replace(s); Literal(plain) != plain {
			w.controls = true
		}
	}
	return clip(out)
}

// value is a word's fixed value, with CR restored; ok is false when the
// word is computed at run time.
func (w *walker) value(wd *syntax.Word) (string, bool) {
	v, ok := fixedWord(wd)
	if ok && w.standIn != 0 {
		v = strings.ReplaceAll(v, string(w.standIn), "\r")
	}
	return v, ok
}

// lineText is the text of a line to emit, parts joined, built only when the
// line will be shown: silent, or past the cap (most lines of a long
// script), no emit shows it, so "" does as well and costs nothing.
func (w *walker) lineText(parts ...string) string {
	if !w.shows() {
		return ""
	}
	return strings.Join(parts, "")
}

// shows reports whether a line emitted now is shown: not silent, and
// under the cap.
func (w *walker) shows() bool {
	return w.silent == 0 && len(w.a.Shown) < maxShownLines
}

// emit shows one line at depth; ok is false when the cap stopped it.
func (w *walker) emit(depth int, text string) bool {
	if w.silent > 0 {
		return true
	}
	if len(w.a.Shown) >= maxShownLines {
		if w.a.Truncated == "" {
			w.a.Truncated = fmt.Sprintf("(more than %d lines; the rest is checked but not shown, the full text is above)", maxShownLines)
		}
		return false
	}
	w.a.Shown = append(w.a.Shown, strings.Repeat("  ", min(depth, 12))+text)
	return true
}

// tick counts work and stops the walk once the time budget is spent.
func (w *walker) tick() bool {
	if w.stopped != "" {
		return false
	}
	w.nodes++
	if w.nodes%256 == 0 && w.deadline.passed() {
		w.stopped = "the device stopped explaining after its time budget"
		return false
	}
	return true
}

// unit parses text and walks its statements. depth is the nesting of the
// unit; line, when not 0, is where a nested unit sits in the script.
func (w *walker) unit(text string, depth, line int, in flow) {
	savedSrc, savedLine := w.src, w.lineHere
	w.src, w.lineHere = text, line
	defer func() { w.src, w.lineHere = savedSrc, savedLine }()
	p := syntax.NewParser(syntax.Variant(w.lang))
	first, done := true, false
	// The loop never breaks: the parser's iterator does not stop when told
	// to (it would panic), so once done the rest is drained unread; the
	// reader's deadline ends it soon after.
	for st, err := range p.StmtsSeq(&budgetReader{r: strings.NewReader(text), deadline: w.deadline}) {
		if done {
			continue
		}
		if err != nil {
			done = true
			w.parseError(err, depth, line)
			continue
		}
		if !w.tick() {
			done = true
			w.reason(SeverityRunsUnseen, w.lineHere, false, "%s; the rest is not explained", w.stopped)
			continue
		}
		prefix := "then: "
		if first {
			prefix = ""
		}
		first = false
		w.stmt(st, depth, prefix, in)
	}
	if first && depth == 0 {
		w.emit(0, "(no commands)")
	}
}

// parseError explains why the parser stopped.
func (w *walker) parseError(err error, depth, line int) {
	if errors.Is(err, errDeep) {
		w.emit(depth, "(the script nests deeper than the device follows here)")
		w.reason(SeverityRunsUnseen, w.lineHere, false, "the script nests more than %d levels deep; the device stops there and the rest is not explained", maxParseNesting)
		return
	}
	if errors.Is(err, errBudget) || w.stopped != "" {
		w.stopped = "the device stopped reading the script after its time budget"
		w.reason(SeverityRunsUnseen, w.lineHere, false, "the device stopped reading the script after its time budget (nesting or size); the rest is not explained")
		return
	}
	errLine := 0
	var pe syntax.ParseError
	if errors.As(err, &pe) {
		errLine = int(pe.Pos.Line())
	}
	if line > 0 {
		errLine = line
	}
	w.emit(depth, "(the script does not parse here; the shell runs the commands above before it fails)")
	w.reason(SeverityRunsUnseen, errLine, false, "the script does not parse (%s); the shell may run the commands before this line, which are explained, and fails here", w.display(err.Error()))
	w.unbound.add("the script as the shell reads it", "it does not parse here, so what it runs is not known", "")
}

// nested walks a script inside the script (eval, sh -c, trap, a shell's
// here-document, a remote command) when its text is fixed.
func (w *walker) nested(text string, depth, line int, label string, lang syntax.LangVariant, in flow) {
	if strings.TrimSpace(text) == "" {
		return
	}
	if len(text) > w.nestedBytes {
		w.reason(SeverityRunsUnseen, line, false, "nested scripts larger than the device follows; the rest is not explained")
		return
	}
	w.nestedBytes -= len(text)
	if depth+1 > maxDepth {
		w.reason(SeverityRunsUnseen, line, false, "nested deeper than %d levels; the device does not follow it further", maxDepth)
		return
	}
	w.emit(depth+1, label)
	savedLang, savedCwd := w.lang, w.cwd
	savedParams := w.forgetPositional() // a nested script has its own
	w.lang = lang
	w.unit(text, depth+2, line, in)
	w.lang, w.cwd = savedLang, savedCwd
	w.restorePositional(savedParams)
}

var connectors = map[syntax.BinCmdOperator]string{
	syntax.AndStmt: "if that succeeded: ",
	syntax.OrStmt:  "if that failed: ",
	syntax.Pipe:    "piped into: ",
	syntax.PipeAll: "piped (stdout and stderr) into: ",
}

// stmt describes one statement; it returns what secret data its output
// carries ("" for none).
func (w *walker) stmt(s *syntax.Stmt, depth int, prefix string, in flow) string {
	if !w.tick() {
		return ""
	}
	line := w.lineOf(s.Pos())
	if depth > maxDepth {
		w.reason(SeverityRunsUnseen, line, false, "nested deeper than %d levels; the device does not follow it further", maxDepth)
		return ""
	}
	var notes []string
	if s.Negated {
		notes = append(notes, "result negated")
	}
	if s.Background {
		notes = append(notes, "in the background")
		in.stdin = false // a background job reads /dev/null when job control is off
		if len(w.envSecrets) > 0 {
			// Marked at the end unless a later bare wait waits for it.
			w.jobs = append(w.jobs, backgroundJob{line: line, text: w.show(s.Cmd)})
		}
	}
	savedSubsts := w.writtenSubsts
	w.writtenSubsts = nil
	defer func() { w.writtenSubsts = savedSubsts }()
	rin, rnotes, heredocs, outs := w.redirects(s, line, &in)
	w.rememberScript(s, in, line)
	if len(notes) == 0 {
		notes = rnotes // not a copy
	} else {
		notes = append(notes, rnotes...)
	}
	tail := ""
	if len(notes) > 0 {
		// Not "" even when no line shows it: a tail puts a pipeline's or
		// a group's commands one level deeper.
		tail = " [...]"
		if w.shows() {
			tail = " [" + strings.Join(notes, "; ") + "]"
		}
	}
	var out string
	shownBefore := len(w.a.Shown)
	switch c := s.Cmd.(type) {
	case nil:
		w.emit(depth, prefix+"(redirections only)"+tail)
		if w.lang == syntax.LangZsh {
			out = w.zshNullCmd(s, line, in)
		}
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			d := depth
			if tail != "" {
				w.emit(depth, w.lineText(prefix, "pipeline", tail, ":"))
				d, prefix = depth+1, ""
			}
			inX := in
			inX.outAway = true
			left := w.stmt(c.X, d, prefix, inX)
			out = w.stmt(c.Y, d, connectors[c.Op], flow{taint: left, piped: w.show(c.X.Cmd), outAway: in.outAway})
			break
		}
		d := depth
		if tail != "" {
			w.emit(depth, w.lineText(prefix, "group", tail, ":"))
			d, prefix = depth+1, ""
		}
		a := w.stmt(c.X, d, prefix, in)
		b := w.stmt(c.Y, d, connectors[c.Op], in)
		out = cmp.Or(a, b)
	case *syntax.CallExpr:
		out = w.call(c, depth, prefix, tail, in)
	case *syntax.DeclClause:
		out = w.decl(c, depth, prefix, tail, line)
	case *syntax.Subshell:
		w.emit(depth, w.lineText(prefix, "subshell", tail, ":"))
		saved := w.cwd
		out = w.stmts(c.Stmts, depth+1, in)
		w.cwd = saved
	case *syntax.Block:
		w.emit(depth, prefix+"group"+tail+":")
		out = w.stmts(c.Stmts, depth+1, in)
	case *syntax.IfClause:
		label := "if"
		for ic := c; ic != nil; ic = ic.Else {
			if !ic.ThenPos.IsValid() {
				w.emit(depth, "else:")
				out = cmp.Or(out, w.stmts(ic.Then, depth+1, in))
				break
			}
			w.emit(depth, w.lineText(prefix, label, tail, ":"))
			prefix, tail = "", ""
			w.stmts(ic.Cond, depth+1, in)
			w.emit(depth, "when true:")
			out = cmp.Or(out, w.stmts(ic.Then, depth+1, in))
			label = "else if"
		}
	case *syntax.WhileClause:
		kw := "while"
		if c.Until {
			kw = "until"
		}
		w.emit(depth, w.lineText(prefix, kw, tail, ":"))
		w.loopUnnumber(c)
		// The condition (read ...) takes the loop's input each round.
		w.stmts(c.Cond, depth+1, in)
		w.emit(depth, "repeat:")
		out = w.stmts(c.Do, depth+1, in)
	case *syntax.ForClause:
		w.loopUnnumber(c)
		head := "for"
		if c.Select {
			head = "select"
		}
		switch l := c.Loop.(type) {
		case *syntax.WordIter:
			head += " " + w.display(l.Name.Value) + " in "
			if !l.InPos.IsValid() {
				head += `"$@"`
			} else {
				var items []string
				for _, it := range l.Items {
					items = append(items, w.show(it))
				}
				head += clip(strings.Join(items, " "))
			}
			w.emit(depth, prefix+head+tail+":")
			taint := ""
			numbers := l.InPos.IsValid()
			for _, it := range l.Items {
				w.zshGlob(it, line)
				taint = cmp.Or(w.word(it, depth, line), taint)
				if v, ok := fixedWord(it); !ok || !isNumber(v) {
					numbers = false
				}
			}
			if taint != "" {
				w.taintVar(l.Name.Value, taint)
			}
			if numbers {
				w.numeric[l.Name.Value] = true
			} else {
				delete(w.numeric, l.Name.Value)
			}
			if names := w.literalNames(l, c); names != nil {
				// for v in GH_TOKEN NPM_TOKEN: ${!v} in the body reads one of
				// these, and no other
				saved, had := w.loopNames[l.Name.Value]
				w.loopNames[l.Name.Value] = names
				defer func() {
					if had {
						w.loopNames[l.Name.Value] = saved
					} else {
						delete(w.loopNames, l.Name.Value)
					}
				}()
			}
		case *syntax.CStyleLoop:
			w.emit(depth, prefix+head+" "+w.show(l)+tail+":")
			w.computed(line, w.show(l))
			for _, x := range []syntax.ArithmExpr{l.Init, l.Cond, l.Post} {
				w.arithm(x, depth, line)
			}
		}
		out = w.stmts(c.Do, depth+1, in)
	case *syntax.CaseClause:
		w.emit(depth, prefix+"case "+w.show(c.Word)+tail+":")
		w.word(c.Word, depth, line)
		for _, it := range c.Items {
			var pats []string
			for _, p := range it.Patterns {
				pats = append(pats, w.show(p))
				w.word(p, depth, line)
			}
			w.emit(depth+1, clip(strings.Join(pats, " | "))+"):")
			out = cmp.Or(out, w.stmts(it.Stmts, depth+2, in))
		}
	case *syntax.TimeClause:
		if c.Stmt == nil {
			w.emit(depth, prefix+"time"+tail)
			break
		}
		out = w.stmt(c.Stmt, depth, prefix+"timed: ", in)
	case *syntax.FuncDecl:
		name := "(anonymous)"
		fwd := forwardingBody(c.Body)
		names := []string{}
		if c.Name != nil {
			name = c.Name.Value
			names = append(names, name)
		}
		for _, n := range c.Names {
			names = append(names, n.Value)
		}
		for _, n := range names {
			w.funcs[n] = c.Body
			if fwd {
				w.forwarding[n] = w.src
			} else {
				delete(w.forwarding, n)
			}
		}
		w.emit(depth, prefix+"define function "+w.display(name)+tail+", which runs when called:")
		// The body runs when called, with the variables of that time: no
		// variable is known to hold a number in it.
		saved, savedNumeric := w.cwd, w.numeric
		w.numeric = map[string]bool{}
		w.inFunc[name] = true
		savedSet, savedDef := w.atSet, w.fwdDef
		w.atSet = false
		if fwd {
			w.fwdDef++
		}
		w.stmt(c.Body, depth+1, "", in)
		w.atSet, w.fwdDef = savedSet, savedDef
		delete(w.inFunc, name)
		w.cwd, w.numeric = saved, savedNumeric
	case *syntax.ArithmCmd:
		w.emit(depth, prefix+w.show(c)+tail)
		w.computed(line, w.show(c))
		w.arithm(c.X, depth, line)
	case *syntax.LetClause:
		w.emit(depth, prefix+w.show(c)+tail)
		w.computed(line, w.show(c))
		for _, x := range c.Exprs {
			w.arithm(x, depth, line)
		}
	case *syntax.TestClause:
		w.emit(depth, prefix+w.show(c)+tail)
		w.test(c.X, depth, line)
		w.command(line, depth, w.show(c), "[[", "[[", ClassReadOnly)
	case *syntax.CoprocClause:
		w.emit(depth, prefix+"coprocess"+tail+":")
		out = w.stmt(c.Stmt, depth+1, "", flow{})
	default:
		w.emit(depth, prefix+w.show(s.Cmd)+tail)
		w.reason(SeverityRunsUnseen, line, false, "a construct the device does not explain: %s", w.show(s.Cmd))
	}
	for _, r := range heredocs {
		if !w.heredocShown(r) {
			w.heredocBody(r, depth, line, shownBefore)
		}
	}
	if rin != "" && out == "" {
		out = rin
	}
	// exec > >(cmd), exec 2>/dev/tcp/...: every later line's output goes
	// there, whatever secret it prints (set -x traces it) included.
	if later := w.execOutput(s); later != "" && out == "" {
		out = later
	}
	// >(cmd): cmd reads what the statement writes into that file.
	for _, ps := range w.writtenSubsts {
		w.subst(ps.stmts, ps.depth, ps.label, flow{taint: out, piped: w.show(s.Cmd)})
	}
	// A file written with secret data holds it from now on; written to
	// /dev/tcp, the data is sent.
	if out != "" {
		for _, p := range outs {
			w.taintFile(p, out)
			for _, dev := range []string{"/dev/tcp/", "/dev/udp/"} {
				if rest, ok := strings.CutPrefix(p, dev); ok {
					h, _, _ := strings.Cut(rest, "/")
					w.mark(SeveritySecret, line, true, "sends secret data (%s) to %s through a redirection: %s", w.secretLabel(out), w.display(h), w.show(s))
				}
			}
		}
	}
	return out
}

func (w *walker) stmts(list []*syntax.Stmt, depth int, in flow) string {
	out := ""
	for i, s := range list {
		prefix := ""
		if i > 0 {
			prefix = "then: "
		}
		out = cmp.Or(out, w.stmt(s, depth, prefix, in))
	}
	return out
}

var fdNames = map[string]string{"0": "stdin", "1": "stdout", "2": "stderr"}

// redirects describes a statement's redirections, checks where they read
// and write, and updates its input. It returns secret data the statement
// reads through a redirection (so its output carries it), the notes, the
// here-documents to show after the command, and the files its output is
// written to.
func (w *walker) redirects(s *syntax.Stmt, line int, in *flow) (taint string, notes []string, heredocs []*syntax.Redirect, outs []string) {
	for _, r := range s.Redirs {
		fd := ""
		if r.N != nil {
			fd = r.N.Value
		}
		stream := func(def string) string {
			if fd == "" {
				return def
			}
			if n, ok := fdNames[fd]; ok {
				return n
			}
			return "fd " + w.display(fd)
		}
		target, wordTaint := "", ""
		if r.Word != nil {
			target = w.show(r.Word)
			// A file written is not read: no "reads the credential file"
			// for > .npmrc (the write itself is checked below).
			switch r.Op {
			case syntax.RdrOut, syntax.RdrClob, syntax.AppOut, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
				w.writingTo = true
			}
			wordTaint = w.word(r.Word, 0, line)
			w.writingTo = false
		}
		isStdin := fd == "" || fd == "0"
		switch r.Op {
		case syntax.RdrOut, syntax.RdrClob, syntax.AppOut, syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
			verb := " to "
			if r.Op == syntax.AppOut || r.Op == syntax.AppAll || r.Op == syntax.AppAllClob {
				verb = " appended to "
			}
			what := stream("stdout")
			if r.Op == syntax.RdrAll || r.Op == syntax.RdrAllClob || r.Op == syntax.AppAll || r.Op == syntax.AppAllClob {
				what = "stdout and stderr"
			}
			notes = append(notes, w.lineText(what, verb, target))
			w.checkWrite("writes", r.Word, line)
			if v, ok := w.value(r.Word); ok {
				outs = append(outs, w.resolve(v))
				if (fd == "" || fd == "1" || what == "stdout and stderr") && !terminalFiles[v] {
					in.outAway = true
				}
			}
			w.netPath(r.Word, line)
		case syntax.RdrIn:
			notes = append(notes, w.lineText(stream("stdin"), " from ", target))
			v, ok := w.value(r.Word)
			if ok {
				if t := w.readsFile(v, line); t != "" {
					taint = t
				}
			}
			if t := w.skeletonChecks(r.Word, line); t != "" {
				taint = t
			}
			w.netPath(r.Word, line)
			if ok && (v == "/dev/stdin" || v == "/dev/fd/0" || v == "/proc/self/fd/0") {
				break // still the script's standard input
			}
			if isStdin {
				in.stdin, in.piped, in.hdoc = false, "", nil
				in.taint = taint
				in.file = ""
				if ok {
					in.file = v
				}
			}
		case syntax.RdrInOut:
			notes = append(notes, stream("stdin")+" read and written: "+target)
			w.checkWrite("writes", r.Word, line)
			w.netPath(r.Word, line)
			if isStdin {
				in.stdin, in.piped, in.taint, in.hdoc = false, "", "", nil
			}
		case syntax.DplIn, syntax.DplOut:
			def := "stdout"
			if r.Op == syntax.DplIn {
				def = "stdin"
			}
			switch target {
			case "-":
				notes = append(notes, w.lineText(stream(def), " closed"))
			case "0", "1", "2":
				notes = append(notes, w.lineText(stream(def), " to ", fdNames[target]))
			default:
				notes = append(notes, w.lineText(stream(def), " to fd ", target))
			}
			if r.Op == syntax.DplIn && isStdin && target != "0" {
				in.stdin, in.piped, in.taint, in.hdoc = false, "", "", nil
			}
		case syntax.Hdoc, syntax.DashHdoc:
			notes = append(notes, stream("stdin")+" from a here-document")
			heredocs = append(heredocs, r)
			// Its expansions run before the command does.
			hdocTaint := w.word(r.Hdoc, 0, line)
			if isStdin {
				in.stdin, in.piped, in.taint, in.hdoc = false, "here-document", hdocTaint, r
			}
		case syntax.WordHdoc:
			notes = append(notes, stream("stdin")+" from the string "+target)
			if isStdin {
				in.stdin, in.piped, in.taint, in.hdoc = false, "here-string", wordTaint, nil
			}
		default:
			notes = append(notes, target)
		}
	}
	return taint, notes, heredocs, outs
}

// zshNullCmd: in zsh, a statement of redirections with no command runs
// one (zshmisc(1), Redirections with no command; unless SH_NULLCMD or
// CSH_NULLCMD is set): with one input redirection and no other,
// $READNULLCMD (more, a pager, where a person can run shell commands)
// shows it; otherwise $NULLCMD (cat) copies its standard input to the
// redirected output. It returns what secret data that output carries.
func (w *walker) zshNullCmd(s *syntax.Stmt, line int, in flow) string {
	inputs, others := 0, 0
	for _, r := range s.Redirs {
		switch r.Op {
		case syntax.RdrIn, syntax.Hdoc, syntax.DashHdoc, syntax.WordHdoc:
			if r.N == nil || r.N.Value == "0" {
				inputs++
				continue
			}
		}
		others++
	}
	if inputs == 1 && others == 0 {
		w.mark(SeverityRunsUnseen, line, false, "in zsh, redirections with no command run $READNULLCMD (more, a pager, where a person can run shell commands) on the input: %s", w.show(s))
		return ""
	}
	t := w.stdinTaint(in)
	if t != "" {
		w.mark(SeverityExposes, line, true, "in zsh, redirections with no command run $NULLCMD (cat), which copies its standard input, %s, to the output: %s", w.dataLabel(t), w.show(s))
	}
	return t
}

// terminalFiles are files a redirection may name that can be the
// terminal itself.
var terminalFiles = setOf("/dev/tty", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2", "/proc/self/fd/1", "/proc/self/fd/2")

// heredocLines is a here-document's body as written, line by line.
func (w *walker) heredocLines(r *syntax.Redirect) []string {
	if r.Hdoc == nil {
		return nil
	}
	a, b := min(int(r.Hdoc.Pos().Offset()), len(w.src)), min(int(r.Hdoc.End().Offset()), len(w.src))
	if a > b {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(w.src[a:b], "\n"), "\n")
	// The closing delimiter is not part of the body.
	if n := len(lines); n > 0 && r.Word != nil {
		if delim, ok := fixedWord(r.Word); ok && strings.TrimLeft(lines[n-1], "\t") == delim {
			lines = lines[:n-1]
		}
	}
	return lines
}

// heredocShown reports a here-document already shown whole (run as code).
func (w *walker) heredocShown(r *syntax.Redirect) bool {
	_, ok := w.seen[fmt.Sprintf("hdoc%p", r)]
	return ok
}

// heredocBody shows a here-document that is data: its first lines.
func (w *walker) heredocBody(r *syntax.Redirect, depth, line, _ int) {
	lines := w.heredocLines(r)
	for i, l := range lines {
		if i == heredocShown {
			w.emit(depth+1, fmt.Sprintf("| ... (%d more lines of the here-document)", len(lines)-i))
			break
		}
		w.emit(depth+1, "| "+w.display(l))
	}
}

// heredocWhole shows a here-document that is run as code, every line: if
// the line cap would cut it, the script is not understood, so no code
// hides below the cut.
func (w *walker) heredocWhole(r *syntax.Redirect, depth, line int, runBy string) {
	w.seen[fmt.Sprintf("hdoc%p", r)] = -1
	lines := w.heredocLines(r)
	if w.silent == 0 && len(w.a.Shown)+len(lines) > maxShownLines {
		w.reason(SeverityRunsUnseen, line, false, "the here-document %s runs as code has %d lines, more than the device shows", runBy, len(lines))
		return
	}
	for _, l := range lines {
		w.emit(depth+1, "| "+w.display(l))
	}
}

// fixedWord reports a word whose value cannot change at run time, and that
// value: literals and quoted literals.
func fixedWord(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			return unescapeLit(p.Value), true
		case *syntax.SglQuoted:
			return p.Value, !p.Dollar
		}
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDq(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// hdocText is the text a here-document gives its command (bash(1), Here
// Documents): with a quoted delimiter ('EOF', "EOF", \EOF) the body as
// written, every backslash kept; with a plain one, a backslash removed
// only before $, ` and \ (and a backslash-newline joining two lines).
// It reports false when the body expands a parameter or a command.
func hdocText(r *syntax.Redirect) (string, bool) {
	if r == nil || r.Hdoc == nil {
		return "", false
	}
	quoted := false
	if r.Word != nil {
		for _, p := range r.Word.Parts {
			if l, ok := p.(*syntax.Lit); !ok || strings.Contains(l.Value, `\`) {
				quoted = true
			}
		}
	}
	var b strings.Builder
	for _, p := range r.Hdoc.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok {
			return "", false
		}
		if quoted {
			b.WriteString(l.Value)
		} else {
			b.WriteString(unescape(l.Value, "$`\\\n"))
		}
	}
	return b.String(), true
}

// literalPrefix is the fixed text a word starts with, before its first
// expansion (all of it when the word is fixed).
func literalPrefix(w *syntax.Word) string {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeLit(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return b.String()
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return b.String()
				}
				b.WriteString(unescapeDq(l.Value))
			}
		default:
			return b.String()
		}
	}
	return b.String()
}

// atWorkDir resolves a word that holds the working directory ($PWD,
// ${PWD}, $(pwd) or `pwd`, quoted or not) once, at its start or right
// after a literal "KEY=" (--mount source=$PWD), and is literal otherwise,
// from the directory the walk tracks through cd: "./rest" when that is
// inside the project, else the absolute path. "" when the word is anything
// else, or when the walk no longer knows the directory (a computed cd, or
// a script that set PWD itself).
func (w *walker) atWorkDir(wd *syntax.Word) string {
	if w.cwd == "" || w.wd == "" {
		return ""
	}
	if w.noWorkDir(wd) {
		return ""
	}
	const marker = "\x00workdir\x00"
	found := 0
	swap := func(ps []syntax.WordPart) []syntax.WordPart {
		out := slices.Clone(ps)
		for i, p := range out {
			switch w.show(p) {
			case "$PWD", "${PWD}", "$(pwd)", "`pwd`":
				out[i] = &syntax.Lit{Value: marker}
				found++
			}
		}
		return out
	}
	parts := swap(wd.Parts)
	for i, p := range parts {
		if dq, ok := p.(*syntax.DblQuoted); ok {
			parts[i] = &syntax.DblQuoted{Parts: swap(dq.Parts)}
		}
	}
	v, fixed := w.value(&syntax.Word{Parts: parts})
	before, tail, _ := strings.Cut(v, marker)
	if !fixed || found != 1 || before != "" && !strings.HasSuffix(before, "=") {
		return ""
	}
	dir := w.cwd
	root := strings.TrimSuffix(w.wd, "/") + "/"
	switch {
	case tail != "" && !strings.ContainsAny(tail[:1], "/:,"):
		// "$PWD"x names a sibling of the directory, not a file inside.
	case dir == w.wd:
		dir = "."
	case strings.HasPrefix(dir, root):
		dir = "./" + strings.TrimPrefix(dir, root)
	}
	return before + dir + tail
}

// noWorkDir reports, without building anything, a word atWorkDir finds
// no working directory in: its text as written has no "PWD" or "pwd"
// (each of the four forms does) and only printable ASCII, tabs and
// newlines, so showing its parts there would find nothing either (no
// form, no control character to note). Most words are such.
func (w *walker) noWorkDir(wd *syntax.Word) bool {
	a, b := int(wd.Pos().Offset()), int(wd.End().Offset())
	if !wd.Pos().IsValid() || a < 0 || b > len(w.src) || a > b {
		return false
	}
	s := w.src[a:b]
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c >= 0x7f) && c != '\t' && c != '\n' {
			return false
		}
	}
	return !strings.Contains(s, "PWD") && !strings.Contains(s, "pwd")
}

// unescapeLit removes the backslashes of an unquoted literal (\x is x,
// backslash-newline disappears).
func unescapeLit(s string) string { return unescape(s, "") }

// unescapeDq removes the backslashes double quotes remove (before $ ` " \
// and newline).
func unescapeDq(s string) string { return unescape(s, "$`\"\\\n") }

// unescape removes each backslash before a byte of only (before any byte
// when only is empty); a backslash-newline disappears whole.
func unescape(s, only string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (only == "" || strings.IndexByte(only, s[i+1]) >= 0) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// plainName is the command name of a word written plainly: one unquoted
// literal of ordinary characters. why says what else it is.
func (w *walker) plainName(wd *syntax.Word) (name, why string) {
	if len(wd.Parts) == 1 {
		if l, ok := wd.Parts[0].(*syntax.Lit); ok {
			v := l.Value
			if v != "" && plainChars(v) {
				return v, "" // none of the characters the cases below look for
			}
			switch {
			case strings.ContainsRune(v, '\\'):
				return "", "the command name is written with a backslash (" + w.show(wd) + "), which the device does not take as a plain name"
			case v == "[" || v == "[[":
				return v, ""
			case strings.ContainsAny(v, "*?") || strings.Contains(v, "[") && strings.Contains(v, "]"):
				return "", "the command name is a glob pattern (" + w.show(wd) + "), so the file it runs is found at run time"
			case strings.ContainsAny(v, "{}") && w.lang != syntax.LangPOSIX:
				return "", "the command name uses brace expansion (" + w.show(wd) + "), so the command and its words are built at run time"
			case strings.HasPrefix(v, "=") && w.lang == syntax.LangZsh:
				return "", "the command name is zsh's =command expansion (" + w.show(wd) + "), replaced by a path at run time"
			case strings.HasPrefix(v, "~"):
				return "", "the command name starts with ~ (" + w.show(wd) + "), a home directory found at run time"
			case w.standIn != 0 && strings.IndexByte(v, w.standIn) >= 0:
				return "", "the command name contains a carriage return (" + w.show(wd) + ")"
			case v == "" || !plainChars(v):
				return "", "the command name " + w.show(wd) + " has characters the device does not take in a plain name"
			}
			return v, ""
		}
	}
	for _, p := range wd.Parts {
		switch p.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			if v, ok := fixedWord(wd); ok {
				return "", fmt.Sprintf("the command name is quoted (%s runs %s); the device vouches only for plain names", w.show(wd), w.display(v))
			}
		}
	}
	return "", "the command name comes from an expansion (" + w.show(wd) + "), so what runs is decided at run time"
}

func plainChars(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_-./+:@%,", r):
		default:
			return false
		}
	}
	return true
}

// arithmName is the variable an arithmetic operand names, if it is one.
func arithmName(x syntax.ArithmExpr) string {
	if wd, ok := x.(*syntax.Word); ok {
		if v, ok := fixedWord(wd); ok {
			return v
		}
	}
	return ""
}

// numericSubst: a command substitution whose output is a number, by its
// last command's manual: wc -l, -c, -w or -m reading its input (wc(1):
// with no file, only the count), git rev-list --count, nproc, date +%s,
// id -u or -g. Every word literal, so no word decided at run time can be
// an option that changes what it prints.
func numericSubst(wd *syntax.Word) bool {
	if wd == nil || len(wd.Parts) != 1 {
		return false
	}
	part := wd.Parts[0]
	if dq, ok := part.(*syntax.DblQuoted); ok && len(dq.Parts) == 1 {
		part = dq.Parts[0]
	}
	cs, ok := part.(*syntax.CmdSubst)
	if !ok || len(cs.Stmts) != 1 {
		return false
	}
	st := cs.Stmts[0]
	for !st.Negated && !st.Background && !st.Coprocess {
		b, ok := st.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe {
			break
		}
		st = b.Y
	}
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(call.Assigns) > 0 || len(call.Args) == 0 {
		return false
	}
	for _, r := range st.Redirs {
		if r.N != nil || r.Op != syntax.RdrIn {
			return false // output sent elsewhere, or another descriptor
		}
	}
	args := make([]string, 0, len(call.Args))
	for _, a := range call.Args {
		v, ok := fixedWord(a)
		if !ok {
			return false
		}
		args = append(args, v)
	}
	switch rest := args[1:]; args[0] {
	case "wc":
		if len(rest) != 1 {
			return false
		}
		switch rest[0] {
		case "-l", "-c", "-w", "-m", "--lines", "--bytes", "--words", "--chars":
			return true
		}
	case "git":
		return len(rest) >= 2 && rest[0] == "rev-list" && slices.Contains(rest, "--count")
	case "nproc":
		return len(rest) == 0
	case "date":
		return len(rest) == 1 && rest[0] == "+%s"
	case "id":
		return len(rest) == 1 && (rest[0] == "-u" || rest[0] == "-g")
	}
	return false
}

// loopUnnumber: a loop's body runs again after its own assignments, so a
// variable it sets to anything but a number no longer holds one anywhere
// in the loop.
func (w *walker) loopUnnumber(loop syntax.Node) {
	if len(w.numeric) == 0 {
		return
	}
	syntax.Walk(loop, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			if n.Name == nil {
				return true
			}
			numeric := false // a[k]=$((...)) keeps an array of numbers one
			if n.Value != nil && n.Array == nil && !n.Append {
				if v, ok := fixedWord(n.Value); ok {
					numeric = isNumber(v)
				} else if len(n.Value.Parts) == 1 {
					_, numeric = n.Value.Parts[0].(*syntax.ArithmExp)
					numeric = numeric || numericSubst(n.Value)
				}
			}
			if !numeric {
				delete(w.numeric, n.Name.Value)
			}
		case *syntax.CallExpr:
			// read NAME, mapfile NAME, printf -v NAME: set by the input.
			for _, a := range n.Args {
				if v, ok := fixedWord(a); ok {
					delete(w.numeric, v)
				}
			}
		case *syntax.WordIter:
			delete(w.numeric, n.Name.Value)
		}
		return true
	})
}

// computed notes the first construct that computes a value at run time
// (an assignment, an expansion, arithmetic): the read-only rule refuses a
// script with one.
func (w *walker) computed(line int, what string) {
	if w.computes == "" {
		w.computes = fmt.Sprintf("line %d: %s", line, what)
	}
}

// word checks a word's expansions and text: secret names, indirection,
// code-running expansions, arithmetic, and the substitutions it runs
// (explained one level deeper). It returns the secret data its value can
// carry ("" for none).
func (w *walker) word(wd *syntax.Word, depth, line int) string {
	if wd == nil {
		return ""
	}
	return w.parts(wd.Parts, depth, line)
}

func (w *walker) parts(parts []syntax.WordPart, depth, line int) string {
	taint := ""
	for i, p := range parts {
		if !w.tick() {
			return taint
		}
		t := ""
		switch p := p.(type) {
		case *syntax.Lit:
			t = w.text(w.withParamBefore(parts, i, p.Value), line)
		case *syntax.SglQuoted:
			t = w.text(p.Value, line)
			if p.Dollar {
				w.computed(line, "$'...'")
			}
		case *syntax.DblQuoted:
			t = w.parts(p.Parts, depth, line)
		case *syntax.CmdSubst:
			w.computed(line, "a command substitution")
			t = w.subst(p.Stmts, depth, w.lineText("first, to build a word, ", w.show(p), " runs:"), flow{stdin: true, outAway: true})
		case *syntax.ProcSubst:
			w.computed(line, "a process substitution")
			if p.Op == syntax.CmdOut {
				w.writtenSubsts = append(w.writtenSubsts, procSubst{p.Stmts, depth, w.lineText("alongside, reading what is written to the file ", w.show(p), ", runs:")})
				break
			}
			// <(cmd): the file's content is cmd's output.
			t = w.subst(p.Stmts, depth, w.lineText("alongside, as a file, ", w.show(p), " runs:"), flow{outAway: true})
		case *syntax.ParamExp:
			if shown := w.show(p); w.computes == "" {
				w.computed(line, "the parameter expansion "+shown)
			}
			t = w.param(p, line)
			if p.Exp != nil {
				t = cmp.Or(t, w.word(p.Exp.Word, depth, line))
			}
			if p.Repl != nil {
				t = cmp.Or(t, w.word(p.Repl.Orig, depth, line), w.word(p.Repl.With, depth, line))
			}
			if p.NestedParam != nil {
				t = cmp.Or(t, w.parts([]syntax.WordPart{p.NestedParam}, depth, line))
			}
			if p.Index != nil {
				w.arithmWords(p.Index, depth, line)
			}
			if p.Slice != nil {
				w.arithmWords(p.Slice.Offset, depth, line)
				w.arithmWords(p.Slice.Length, depth, line)
			}
		case *syntax.ArithmExp:
			w.computed(line, "arithmetic")
			w.arithm(p.X, depth, line)
		case *syntax.ExtGlob, *syntax.BraceExp:
			w.computed(line, "a pattern expanded at run time")
		}
		taint = cmp.Or(taint, t)
	}
	return taint
}

// arithmWords checks the words inside an arithmetic expression.
func (w *walker) arithmWords(x syntax.ArithmExpr, depth, line int) {
	switch x := x.(type) {
	case *syntax.Word:
		w.word(x, depth, line)
	case *syntax.BinaryArithm:
		w.arithmWords(x.X, depth, line)
		w.arithmWords(x.Y, depth, line)
	case *syntax.UnaryArithm:
		w.arithmWords(x.X, depth, line)
	case *syntax.ParenArithm:
		w.arithmWords(x.X, depth, line)
	case *syntax.FlagsArithm:
		w.arithmWords(x.X, depth, line)
	}
}

// subst explains the statements of a substitution one level deeper.
func (w *walker) subst(list []*syntax.Stmt, depth int, label string, in flow) string {
	if depth+1 > maxDepth {
		w.reason(SeverityRunsUnseen, w.lineHere, false, "nested deeper than %d levels; the device does not follow it further", maxDepth)
		return ""
	}
	w.emit(depth+1, label)
	return w.stmts(list, depth+2, in)
}

// param checks one parameter expansion.
func (w *walker) param(p *syntax.ParamExp, line int) string {
	taint := ""
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	switch {
	case p.Excl && p.Names != 0:
		w.reason(SeveritySecret, line, true, "${!%s...} lists every variable whose name starts with %s, secret ones included", w.display(name), w.display(name))
	case p.Excl && p.Index == nil && w.loopNames[name] != nil:
		// a loop's variable over literal names: one of them is read
		for _, n := range w.loopNames[name] {
			if w.secretVars[n] {
				taint = cmp.Or(taint, n)
				w.callNamed = append(w.callNamed, n)
			}
		}
	case p.Excl && p.Index == nil:
		w.reason(SeveritySecret, line, true, "${!%s} reads the variable whose name %s holds, decided at run time (it can be a secret)", w.display(name), w.display(name))
	case p.Excl && !allIndex(p.Index):
		// ${!a[0]}: the variable whose name a[0] holds
		w.reason(SeveritySecret, line, true, "${!%s[...]} reads the variable whose name an element of %s holds, decided at run time (it can be a secret)", w.display(name), w.display(name))
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil {
		if op := p.Exp.Word.Lit(); strings.ContainsAny(op, "PE") || op == "" {
			w.reason(SeverityRunsUnseen, line, false, "${%s@%s} expands the value as a prompt or escapes: bash runs command substitutions inside it", w.display(name), w.display(op))
		}
	}
	if p.Flags != nil && strings.ContainsAny(p.Flags.Value, "ePk") {
		w.reason(SeverityRunsUnseen, line, true, "zsh flags (%s) evaluate the value or read another variable by name", w.display(p.Flags.Value))
	}
	if p.NestedParam != nil {
		w.reason(SeverityRunsUnseen, line, false, "a nested parameter expansion, evaluated at run time")
	}
	if p.Index != nil && !w.dash && !w.assoc[name] && !allIndex(p.Index) {
		// an associative array's subscript is a string, not arithmetic
		w.arithmVar(p.Index, line, "an array subscript")
	}
	if p.Slice != nil && !w.dash {
		w.arithmVar(p.Slice.Offset, line, "a substring offset")
		w.arithmVar(p.Slice.Length, line, "a substring length")
	}
	if w.secretVars[name] && !p.Excl {
		taint = name
		w.callNamed = append(w.callNamed, name)
	}
	return taint
}

// literalNames: the items of a for loop when each is a literal variable
// name and nothing in the loop's body, nor any function of the script,
// can set the loop's variable (an assignment, read, printf -v, a nested
// loop, ${v:=x}, arithmetic, eval): then the variable holds one of them
// throughout the body. nil otherwise.
func (w *walker) literalNames(l *syntax.WordIter, loop *syntax.ForClause) []string {
	if !l.InPos.IsValid() || len(l.Items) == 0 {
		return nil
	}
	names := make([]string, 0, len(l.Items))
	for _, it := range l.Items {
		v, ok := fixedWord(it)
		if !ok || !isVarName(v) {
			return nil
		}
		names = append(names, v)
	}
	v := l.Name.Value
	var nodes []syntax.Node
	for _, st := range loop.Do {
		nodes = append(nodes, st)
	}
	for _, body := range w.funcs {
		nodes = append(nodes, body)
	}
	for _, n := range nodes {
		if setsVar(n, v) {
			return nil
		}
	}
	return names
}

// setsVar: anything in n that may set the variable v, or run code the
// walk does not see at that point (eval, source, a word built at run time
// as a command is judged elsewhere).
func setsVar(n syntax.Node, v string) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			// v=..., a naked declare "$x", or declare -n r=v (r then sets v)
			lit, _ := fixedWord(n.Value)
			found = found || n.Name != nil && n.Name.Value == v || n.Name == nil || lit == v
		case *syntax.WordIter:
			found = found || n.Name.Value == v
		case *syntax.CallExpr:
			for _, a := range n.Args {
				if s, ok := fixedWord(a); ok && (s == v || s == "eval" || s == "source" || s == "." || strings.HasPrefix(s, v+"=") || strings.HasPrefix(s, v+"[")) {
					found = true
				}
			}
		case *syntax.ParamExp:
			found = found || n.Param != nil && n.Param.Value == v && n.Exp != nil && (n.Exp.Op == syntax.AssignUnset || n.Exp.Op == syntax.AssignUnsetOrNull)
		case *syntax.BinaryArithm:
			found = found || arithmName(n.X) == v
		case *syntax.UnaryArithm:
			found = found || arithmName(n.X) == v
		}
		return !found
	})
	return found
}

// execOutput: exec with no command, redirecting the shell's own stdout
// or stderr, with secrets delivered: what every later command prints goes
// where it points. It names that output ("" when not so).
func (w *walker) execOutput(s *syntax.Stmt) string {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) != 1 || len(w.envSecrets)+len(w.stdinSecrets) == 0 {
		return ""
	}
	if v, ok := fixedWord(call.Args[0]); !ok || v != "exec" {
		return ""
	}
	for _, r := range s.Redirs {
		fd := "1"
		if r.N != nil {
			fd = r.N.Value
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.RdrAll, syntax.AppAll:
			if fd == "1" || fd == "2" {
				return "everything the script prints from here on"
			}
		}
	}
	return ""
}

// allIndex: the subscript [@] or [*], every element (or key).
func allIndex(x syntax.ArithmExpr) bool {
	wd, ok := x.(*syntax.Word)
	return ok && (wd.Lit() == "@" || wd.Lit() == "*")
}

// arithm checks an arithmetic expression: bash and zsh evaluate a
// variable's value inside one as an expression of its own, so a value such
// as a[$(cmd)] runs cmd.
func (w *walker) arithm(x syntax.ArithmExpr, depth, line int) {
	if x == nil {
		return
	}
	w.arithmWords(x, depth, line)
	if !w.dash {
		w.arithmVar(x, line, "arithmetic")
	}
}

// arithmVar marks arithmetic that reads a variable.
func (w *walker) arithmVar(x syntax.ArithmExpr, line int, what string) {
	if x == nil {
		return
	}
	found := ""
	var visit func(n syntax.Node) bool
	visit = func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.BinaryArithm:
			// NAME = EXPR sets NAME to a number without reading it.
			if n.Op == syntax.Assgn {
				if wd, ok := n.X.(*syntax.Word); ok {
					if v, fixed := fixedWord(wd); fixed && isVarName(v) {
						w.numeric[v] = true
					}
				}
			}
		case *syntax.ParamExp:
			if n.Param == nil {
				found = "an expansion"
				return false
			}
			name := n.Param.Value
			// ${#a}, ${#a[@]}: a length, a number whatever a holds; and
			// ${a[k]}, ${a[k]:-0} of an array the script only gave numbers.
			// A braced subscript of an associative array is a string, not
			// evaluated; any other subscript is arithmetic of its own.
			number := n.Length && !n.Excl
			if !number && w.numeric[name] && !n.Excl && n.Repl == nil && n.Slice == nil {
				number = n.Exp == nil || (n.Exp.Op == syntax.DefaultUnset || n.Exp.Op == syntax.DefaultUnsetOrNull) && n.Exp.Word != nil && isNumber(n.Exp.Word.Lit())
			}
			if !number {
				found = "$" + name
				return false
			}
			if n.Index != nil && !(w.assoc[name] && !n.Short) && !allIndex(n.Index) {
				syntax.Walk(n.Index, visit)
			}
			return false
		case *syntax.Lit:
			if v := n.Value; v != "" && (v[0] == '_' || v[0] >= 'a' && v[0] <= 'z' || v[0] >= 'A' && v[0] <= 'Z') && !w.numeric[v] {
				found = v
			}
		case *syntax.CmdSubst:
			found = "a command substitution"
			return false
		}
		return found == ""
	}
	syntax.Walk(x, visit)
	if found != "" {
		w.reason(SeverityRunsUnseen, line, false, "%s uses the value of %s, which bash evaluates as an expression of its own (a value such as a[$(cmd)] runs cmd)", what, w.display(found))
	}
}

// test checks a [[ ]] expression: its arithmetic comparisons evaluate
// their operands.
func (w *walker) test(x syntax.TestExpr, depth, line int) {
	switch t := x.(type) {
	case *syntax.BinaryTest:
		w.test(t.X, depth, line)
		w.test(t.Y, depth, line)
		switch t.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, side := range []syntax.TestExpr{t.X, t.Y} {
				if wd, ok := side.(*syntax.Word); ok {
					if _, fixed := fixedWord(wd); (!fixed || !isNumber(wd.Lit())) && !w.numericExpansion(wd) {
						w.reason(SeverityRunsUnseen, line, false, "[[ %s ]] compares arithmetically, and bash evaluates the operand's value as an expression (a[$(cmd)] runs cmd)", w.show(t))
						break
					}
				}
			}
		}
	case *syntax.UnaryTest:
		w.test(t.X, depth, line)
		if wd, ok := t.X.(*syntax.Word); ok && (t.Op == syntax.TsVarSet || t.Op == syntax.TsRefVar) {
			v, fixed := fixedWord(wd)
			w.nameOperand(v, fixed, w.show(wd), "[[ "+w.show(t)+" ]]", line)
		}
	case *syntax.ParenTest:
		w.test(t.X, depth, line)
	case *syntax.Word:
		w.word(t, depth, line)
	}
}

// nameOperand checks a word a builtin takes as a variable's name (read
// NAME, test -v NAME, [[ -v NAME ]]): bash evaluates an indexed subscript
// in it as arithmetic, so a name decided at run time, or one whose
// subscript is more than a number, can run code (a[$(cmd)]).
func (w *walker) nameOperand(v string, fixed bool, shown, cmd string, line int) {
	if w.dash {
		return
	}
	if fixed {
		_, sub, ok := strings.Cut(v, "[")
		sub = strings.TrimSuffix(sub, "]")
		if !ok || isNumber(sub) || sub == "@" || sub == "*" || w.numeric[sub] {
			return
		}
	}
	w.reason(SeverityRunsUnseen, line, false, "%s takes %s as a variable's name, which bash evaluates with its subscript (a name such as a[$(cmd)] runs cmd)", cmd, shown)
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range strings.TrimPrefix(s, "-") {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// withParamBefore prefixes literal text with the parameter expansion right
// before it, so a mark on "$HOME/.netrc" names that, not "/.netrc": the
// device does not know HOME's value.
func (w *walker) withParamBefore(parts []syntax.WordPart, i int, lit string) string {
	if i > 0 {
		if pe, ok := parts[i-1].(*syntax.ParamExp); ok {
			return w.show(pe) + lit
		}
	}
	return lit
}

// credentialIn is the credential file a text names: the text itself, or
// within longer text (code given to a program: awk '//' ~/.netrc is a
// file, python3 -c 'open("/home/u/.netrc")' code) the first word of it,
// between quotes, spaces and the shell's and languages' punctuation, that
// names one.
func credentialIn(s string) string {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool {
		return strings.ContainsRune(" \t\n\"'`()[]{}<>;|&,=", r)
	}) {
		if credentialFile(f) {
			return f
		}
	}
	return s
}

// text checks literal text: secret variables named in it, the whole
// environment read through /proc, and credential files. It returns the
// secret data a command reading it would get.
func (w *walker) text(s string, line int) string {
	taint := ""
	if credentialFile(s) && !w.writingTo {
		f := credentialIn(s)
		w.mark(SeverityExposes, line, true, "reads the credential file %s", w.display(f))
		taint = "the credential file " + f
	}
	if procEnviron(s) {
		p := s[strings.Index(s, "/proc/"):]
		if end := strings.IndexAny(p, " \t\n;|&'\"<>)"); end > 0 {
			p = p[:end]
		}
		w.mark(SeverityExposes, line, true, "reads a process's whole environment (%s), secret variables included", w.display(p))
		taint = "the whole environment"
	}
	return taint
}

// skeletonChecks checks a word's literal parts together, an expansion
// standing for anything: /proc/$$/environ reads an environment too.
func (w *walker) skeletonChecks(wd *syntax.Word, line int) string {
	if wd == nil || len(wd.Parts) < 2 {
		return ""
	}
	var b strings.Builder
	var add func(parts []syntax.WordPart)
	add = func(parts []syntax.WordPart) {
		for _, p := range parts {
			switch p := p.(type) {
			case *syntax.Lit:
				b.WriteString(p.Value)
			case *syntax.SglQuoted:
				b.WriteString(p.Value)
			case *syntax.DblQuoted:
				add(p.Parts)
			default:
				b.WriteString("*")
			}
		}
	}
	add(wd.Parts)
	if s := b.String(); procEnviron(s) {
		w.mark(SeverityExposes, line, true, "reads a process's whole environment (%s), secret variables included", w.show(wd))
		return "the whole environment"
	}
	return ""
}

// procEnviron: a path under /proc that reads a process's environment,
// written directly or with a glob.
func procEnviron(s string) bool {
	i := strings.Index(s, "/proc/")
	if i < 0 {
		return false
	}
	rest := s[i:]
	return strings.Contains(rest, "environ") || strings.ContainsAny(rest, "*?[")
}

// decl explains export, declare, typeset, local and readonly: a literal
// value is understood; with no name, export and declare print every
// variable.
func (w *walker) decl(c *syntax.DeclClause, depth int, prefix, tail string, line int) string {
	variant := c.Variant.Value
	what := map[string]string{
		"export":   "export to the environment of later commands: ",
		"readonly": "set read-only variable: ",
		"local":    "set local variable: ",
	}[variant]
	if what == "" {
		what = w.display(variant) + ": "
	}
	var as []string
	names, flags := 0, ""
	taint := ""
	for _, a := range c.Args {
		as = append(as, w.show(a))
		if a.Naked && a.Name == nil && a.Value != nil {
			if v, ok := fixedWord(a.Value); ok && (strings.HasPrefix(v, "-") || strings.HasPrefix(v, "+")) {
				flags += v
				continue
			}
		}
		names++
		if a.Name != nil && a.Value == nil && a.Array == nil && strings.Contains(flags, "p") {
			// declare -p NAME prints NAME and its value: it sets nothing
			taint = cmp.Or(w.printedVars([]string{a.Name.Value}), taint)
			continue
		}
		if a.Name != nil {
			// In a function, declare and local make a local variable: a
			// global of the same name keeps arithmetic subscripts.
			if strings.Contains(flags, "A") && (variant != "local" && len(w.inFunc) == 0 || strings.Contains(flags, "g")) {
				w.assoc[a.Name.Value] = true
			}
			if strings.Contains(flags, "i") {
				w.integer[a.Name.Value] = true
			}
		} else if a.Naked && a.Value != nil && variant != "export" && variant != "readonly" && !w.dash {
			// declare "$name=1": the name is decided at run time, and bash
			// evaluates a subscript in it (a[$(cmd)] runs cmd)
			if v, ok := fixedWord(a.Value); !ok || strings.Contains(v, "[") {
				w.reason(SeverityRunsUnseen, line, false, "%s sets a variable whose name is decided at run time (%s): bash evaluates a subscript in it, so a[$(cmd)] runs cmd", w.display(variant), w.show(a.Value))
			}
		}
		if t := w.assign(a, depth, line, variant == "export" || strings.Contains(flags, "x")); t != "" {
			taint = t
		}
	}
	w.emit(depth, prefix+what+clip(strings.Join(as, " "))+tail)
	w.computed(line, variant)
	w.command(line, depth, variant+" "+clip(strings.Join(as, " ")), variant, variant, ClassOther)
	if variant != "local" && variant != "readonly" && names == 0 &&
		(variant == "export" || flags == "" || strings.ContainsAny(flags, "px")) {
		w.envDump(line, w.display(variant))
		taint = "the whole environment"
	}
	if strings.Contains(flags, "n") && variant != "export" {
		w.reason(SeveritySecret, line, true, "declare -n makes a name refer to another variable, decided by its value")
	}
	if strings.Contains(flags, "f") && names == 0 {
		w.mark(SeverityNote, line, false, "prints the shell's function definitions")
	}
	if p := w.cat.byName[variant]; p != nil && flags != "" {
		for _, f := range strings.Fields(strings.NewReplacer("-", " -", "+", " +").Replace(flags)) {
			for _, l := range f[1:] {
				if p.lookupOption(string(f[0])+string(l)) == nil {
					w.reason(SeverityRunsUnseen, line, false, "%s: the option %c%c is not one the device knows", variant, f[0], l)
				}
			}
		}
	}
	return taint
}

// assign checks one assignment; it returns secret data the value carries.
func (w *walker) assign(a *syntax.Assign, depth, line int, exported bool) string {
	taint := ""
	if a.Value != nil {
		taint = w.word(a.Value, depth, line)
	}
	assoc := a.Name != nil && w.assoc[a.Name.Value]
	numbers := a.Array != nil // every element a literal number
	if a.Array != nil {
		for _, el := range a.Array.Elems {
			w.zshGlob(el.Value, line)
			if el.Value != nil {
				if t := w.word(el.Value, depth, line); t != "" {
					taint = t
				}
				if v, ok := fixedWord(el.Value); !ok || !isNumber(v) {
					numbers = false
				}
			}
			// a=([$k]=v): the subscript is arithmetic, as in a[$k]=v
			if el.Index != nil && !w.dash && !assoc {
				w.arithmVar(el.Index, line, "an array subscript")
			}
		}
	}
	if a.Index != nil && !w.dash && !assoc {
		w.arithmVar(a.Index, line, "an array subscript")
	}
	if a.Name == nil {
		return taint
	}
	name := a.Name.Value
	if name == "PWD" {
		w.cwd = "" // $PWD no longer names the directory the walk tracks
	}
	value, fixed := "", a.Value == nil && a.Array == nil
	if a.Value != nil {
		value, fixed = w.value(a.Value)
	}
	w.envAssign(name, value, fixed, line)
	// A variable the script gave a number it wrote holds a number:
	// arithmetic on it evaluates nothing else.
	arith := a.Value != nil && len(a.Value.Parts) == 1
	if arith {
		_, arith = a.Value.Parts[0].(*syntax.ArithmExp)
	}
	number := fixed && isNumber(value) || arith || w.numericExpansion(a.Value) || numericSubst(a.Value)
	if w.integer[name] && a.Value != nil && !number && !w.dash {
		w.reason(SeverityRunsUnseen, line, false, "%s has the integer attribute (declare -i): bash evaluates the value assigned to it as arithmetic, so a value such as a[$(cmd)] runs cmd", w.display(name))
	}
	switch {
	case a.Index == nil && a.Array == nil && !a.Append && number, numbers && !a.Append:
		w.numeric[name] = true
	case a.Index != nil && number:
		// a[k]=$((...)): an array of numbers stays one
	default:
		delete(w.numeric, name)
	}
	if _, ok := w.envSecrets[name]; ok {
		w.mark(SeverityExposes, line, true, "sets secret variable %s", w.display(name))
	}
	if taint != "" {
		w.taintVar(name, taint)
	}
	return taint
}

// envAssign checks a variable set by the script (for itself or in a
// command's environment).
func (w *walker) envAssign(name, value string, fixed bool, line int) {
	if why := codeVariable(name, value, fixed); why != "" && !(fixed && commandVariable(name) && (value == "" || w.inertCommand(value))) {
		w.reason(SeverityRunsUnseen, line, false, "sets %s, %s", w.display(name), why)
	}
	if name == "PATH" {
		w.mark(SeverityRunsUnseen, line, false, "changes PATH, so later command names are looked up in other directories")
	}
	if why := redirectVariable(name); why != "" {
		w.mark(SeverityExposes, line, true, "sets %s, %s", w.display(name), why)
	}
	if h, ok := packageIndexVariable(name, value, fixed); ok {
		w.mark(SeverityRunsUnseen, line, false, "sets %s: later installs fetch packages from %s and run their build code", w.display(name), cmpOr(h, "a host decided at run time"))
	}
	if _, ok := configFileVariables[name]; ok {
		if fixed && value != "" {
			w.confVars[name] = value
		} else {
			delete(w.confVars, name)
		}
	}
}

// commandVariable: a variable whose value programs run as their pager,
// editor or password prompt (GIT_PAGER, AWS_PAGER, GIT_EDITOR, VISUAL,
// SSH_ASKPASS): empty, the program uses none or its default, as if it
// were not set (git-config(1) core.pager: "an empty string or the value
// cat": no pager; the AWS CLI: AWS_PAGER="" turns its pager off).
func commandVariable(name string) bool {
	up := strings.ToUpper(name)
	return up == "PAGER" || up == "MANPAGER" || up == "EDITOR" || up == "VISUAL" ||
		strings.HasSuffix(up, "_PAGER") || strings.HasSuffix(up, "_EDITOR") || strings.HasSuffix(up, "_ASKPASS")
}

// inertCommand: a command line, literal and plain, whose program's table
// says it only reads (cat, true): as a pager or an editor it runs nothing
// else. Anything else (less, which runs LESSOPEN; a shell word) is not.
func (w *walker) inertCommand(v string) bool {
	fields := strings.Fields(v)
	if len(fields) == 0 || len(fields) > 4 {
		return false
	}
	words := make([]word, 0, len(fields)-1)
	for _, f := range fields {
		if !plainChars(f) {
			return false
		}
	}
	for _, f := range fields[1:] {
		words = append(words, word{val: f, fixed: true, prefix: f, shown: f})
	}
	name := fields[0]
	if dir := path.Dir(name); strings.Contains(name, "/") && !systemDirs[dir] {
		return false
	}
	p := w.cat.lookup(path.Base(name))
	if p == nil {
		return false
	}
	m := w.matchCached(p, words)
	return m.problem == "" && m.class == ClassReadOnly && !m.eff.runs && !m.eff.net && !m.eff.writes && len(m.eff.readsCode) == 0
}

// envDump marks a command that prints the whole environment.
func (w *walker) envDump(line int, cmd string) {
	if len(w.envSecrets) > 0 {
		w.mark(SeverityExposes, line, true, "%s prints every environment variable, the secret ones included", strings.TrimSpace(cmd))
	} else {
		w.mark(SeverityNote, line, false, "%s prints every environment variable", strings.TrimSpace(cmd))
	}
}

// resolve names a fixed path relative to where the script is.
func (w *walker) resolve(p string) string {
	// The checks of one command resolve the same path a few times over
	// (recordWrite, checkWritePath, intoDirectory), and a loop's commands
	// the same few paths: the last four are kept.
	for i := range w.resolvedPaths {
		if l := &w.resolvedPaths[i]; l.ok && l.p == p && l.cwd == w.cwd {
			return l.out
		}
	}
	out := ""
	switch {
	case strings.HasPrefix(p, "~/") || p == "~":
		out = path.Clean(p)
	case p == "" || path.IsAbs(p) || w.cwd == "":
		out = path.Clean(p)
	default:
		// path.Join(w.cwd, p), both not empty, with one copy less
		out = path.Clean(w.cwd + "/" + p)
	}
	w.resolvedPaths[w.resolvedNext%len(w.resolvedPaths)] = resolved{p: p, cwd: w.cwd, out: out, ok: true}
	w.resolvedNext++
	return out
}

// resolved is one path resolve named: p in the directory cwd is out.
type resolved struct {
	p, cwd, out string
	ok          bool
}

// underDir reports whether p is inside the directory dir (starts with dir
// and a slash), without building dir+"/".
func underDir(p, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}

// cd follows the script's directory for the write checks.
func (w *walker) cd(operands []string) {
	var dirs []string
	for _, o := range operands {
		if o != "-P" && o != "-L" && o != "-e" && o != "--" {
			dirs = append(dirs, o)
		}
	}
	if len(dirs) != 1 || dirs[0] == "" || dirs[0] == "-" || strings.HasPrefix(dirs[0], "~") {
		w.cwd = ""
		return
	}
	d := dirs[0]
	switch {
	case path.IsAbs(d):
		w.cwd = path.Clean(d)
	case w.cwd != "":
		w.cwd = path.Join(w.cwd, d)
	}
}

var harmlessTargets = map[string]bool{"/dev/null": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true, "/dev/stdin": true}

// checkWrite marks a file operand or redirection target outside the
// working directory (or not known to be inside it), and remembers it.
func (w *walker) checkWrite(verb string, wd *syntax.Word, line int) {
	if wd == nil {
		return
	}
	p, fixed := w.value(wd)
	w.checkWritePath(verb, p, fixed, w.show(wd), line)
}

func (w *walker) checkWritePath(verb, p string, fixed bool, shown string, line int) {
	if w.onRemote > 0 {
		return // the remote host's file, reported as what is sent there
	}
	if !fixed && strings.HasPrefix(shown, ">(") && strings.HasSuffix(shown, ")") {
		return // a process substitution: a pipe to the command in it, no file
	}
	if !fixed {
		clear(w.scripts) // it may be one of them
		if w.wd != "" {
			w.mark(SeverityWrites, line, false, "%s a path decided at run time, possibly outside the working directory: %s", verb, shown)
		}
		// "$site/x.pth": the directory is decided at run time, the name is
		// not, so a program that reads files of that name (python, *.pth)
		// reads what the script wrote (write, then run).
		if p := strings.Trim(shown, `"'`); verb == "writes" || verb == "changes" {
			if base := path.Base(p); base != p && !strings.ContainsAny(base, "$`*?[(){}\"' ") {
				if _, ok := w.written[p]; !ok {
					w.written[p], w.how[p] = line, "wrote" // kept as written: no path to resolve
				}
			}
		}
		return
	}
	if harmlessTargets[p] || strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/") || strings.HasPrefix(p, "/dev/tcp/") || strings.HasPrefix(p, "/dev/udp/") {
		return
	}
	if verb == "writes" || verb == "changes" {
		how := "wrote"
		if verb == "changes" {
			how = "changed"
		}
		w.recordWrite(p, line, how)
	}
	if w.wd == "" {
		return
	}
	switch {
	case strings.HasPrefix(p, "~"):
		w.mark(SeverityWrites, line, false, "%s outside the working directory: %s (in a home directory)", verb, w.display(p))
		return
	case !path.IsAbs(p) && w.cwd == "":
		w.mark(SeverityWrites, line, false, "%s %s relative to a directory decided at run time (after cd), possibly outside the working directory", verb, w.display(p))
		return
	case !path.IsAbs(p) && p == "":
		p = path.Join(w.cwd, p)
	default:
		p = w.resolve(p) // path.Join(w.cwd, p) when relative, else path.Clean(p)
	}
	wd := path.Clean(w.wd)
	if p != wd && !underDir(p, wd) {
		w.mark(SeverityWrites, line, false, "%s outside the working directory: %s", verb, w.display(p))
		return
	}
	if verb != "deletes" && verb != "reformats" {
		if rel, ok := strings.CutPrefix(p, wd+"/"); ok && gitRunsLater(rel) {
			w.mark(SeverityRunsUnseen, line, false, "%s %s, which git runs as code or reads for what to run at later git commands (this script's or the person's, after the approval), and which no commit shows", verb, w.display(rel))
		}
	}
}

// gitRunsLater reports whether a file of the repository's .git directory
// (a path relative to the working directory) is code git runs, or tells
// git what to run (githooks(5); git-config(1): core.fsmonitor,
// core.hooksPath, core.pager, filter and diff drivers; gitattributes(5)
// for .git/info/attributes). Written by the script, it runs after it, at
// any later git command, whether or not the script runs git again.
func gitRunsLater(rel string) bool {
	// the repository's .git, or a nested one's (cd sub; cp x .git/hooks/y)
	if i := strings.LastIndex(rel, "/.git/"); i >= 0 {
		rel = rel[i+1:]
	}
	if hook, ok := strings.CutPrefix(rel, ".git/hooks/"); ok {
		return hook != "" && !strings.HasSuffix(hook, ".sample") // githooks(5): samples do not run
	}
	return rel == ".git/config" || rel == ".git/info/attributes"
}

// recordWrite remembers a file the script writes, the first time, and how.
func (w *walker) recordWrite(p string, line int, how string) {
	r := w.resolve(p)
	// Written again (even on the line that wrote it whole: printf > F;
	// echo >> F): its text is no longer known. A whole write records its
	// text after its own redirection, so this never forgets that one.
	delete(w.scripts, r)
	if _, ok := w.written[r]; !ok {
		w.written[r] = line
		w.how[r] = how
	}
}

// wroteAt says how and where the script wrote the file p ("" if not).
func (w *walker) wroteAt(p string) (how string, line int) {
	r := w.resolve(p)
	l, ok := w.written[r]
	if !ok {
		return w.wroteInto(r)
	}
	return w.how[r], l
}
