// The command tables (the package doc describes the format): text files
// embedded in the binary, loaded once and strictly into immutable data. A
// line the loader does not know is an error naming its file and line, never
// a silent default, because a table that says less than its author meant
// would make the device vouch for what it was not told.
package commands

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
)

//go:embed tables/*.txt
var tableFiles embed.FS

// syntaxKind is how a program's words divide into options and operands.
type syntaxKind string

const (
	syntaxGNU    syntaxKind = "gnu"    // getopt_long, options anywhere before "--"
	syntaxPOSIX  syntaxKind = "posix"  // as gnu, options stop at the first operand
	syntaxSingle syntaxKind = "single" // whole-word one-dash options (find -name)
	syntaxNone   syntaxKind = "none"   // every word is an operand
	// gnu-bundled: gnu, and a first word without a dash is a cluster of
	// one-letter options whose values are the next words in order (tar
	// xzf FILE, ar rcs LIB).
	syntaxBundled syntaxKind = "gnu-bundled"
	// single-clustered: single, and a word that is no option of its own is
	// a cluster of one-letter options that take no value (zip -qr).
	syntaxSingleClustered syntaxKind = "single-clustered"
)

// kind is the kind of an option value or an operand.
type kind struct {
	name string   // word number enum pattern file out dir host url code argv program lib any
	lang string   // code: the language ("sh", "awk", ...)
	enum []string // enum: the values understood
	rest bool     // "KIND...": takes the rest of the operands
}

func (k kind) String() string {
	s := k.name
	switch k.name {
	case "code":
		s += ":" + k.lang
	case "enum":
		s += ":" + strings.Join(k.enum, "|")
	}
	if k.rest {
		s += "..."
	}
	return s
}

// effects is what a table line says a use does.
type effects struct {
	readOnly, irreversible, writes, deletes, net, sendsStdin bool
	runs, readsStdin, envDump, loads, noArgv, asArgv, meta   bool
	module                                                   bool     // the argv option's command is a module the interpreter finds itself (python -m), not a program PATH finds
	extracts                                                 bool     // writes where it runs unless a read-only option is used (unzip)
	workdir                                                  bool     // the option's dir value is where the program works (git -C, make -C)
	sendsFile                                                bool     // the option's file value is sent to the destination (wget --post-file, curl -T)
	reformats                                                bool     // rewrites its file operands in place without changing what they do (gofmt -w)
	traces                                                   bool     // prints what it sends, headers and credentials included (curl -v, --trace)
	noStdinCode                                              bool     // no-stdin-code: this option gives the program its commands (psql -c)
	readsEnv                                                 []string // variables that change what the program runs
	stdinEnv                                                 []string // variables it reads when its program comes from standard input (interactive on a terminal)
	skipsCode, skipsEnv                                      []string // files and variables of reads-code and reads-env this option turns off (python -S, wget --no-config)
	readsCode                                                []string // files that can run code
	includes                                                 []string // the directives by which those files name more files (make's include)
	forSecret                                                []string // variables whose secret the program's API is for
	checks                                                   []string // named checks (checks.go)
	writesFiles                                              []string // writes=F: files this form writes by name
	stdinCode                                                string   // stdin-code=LANG: reads its program from stdin
}

// merge adds o's effects to e's.
func (e *effects) merge(o effects) {
	e.readOnly = e.readOnly || o.readOnly
	e.irreversible = e.irreversible || o.irreversible
	e.writes = e.writes || o.writes
	e.deletes = e.deletes || o.deletes
	e.net = e.net || o.net
	e.sendsStdin = e.sendsStdin || o.sendsStdin
	e.runs = e.runs || o.runs
	e.readsStdin = e.readsStdin || o.readsStdin
	e.envDump = e.envDump || o.envDump
	e.loads = e.loads || o.loads
	e.noArgv = e.noArgv || o.noArgv
	e.asArgv = e.asArgv || o.asArgv
	e.meta = e.meta || o.meta
	e.module = e.module || o.module
	e.extracts = e.extracts || o.extracts
	e.workdir = e.workdir || o.workdir
	e.sendsFile = e.sendsFile || o.sendsFile
	e.reformats = e.reformats || o.reformats
	e.traces = e.traces || o.traces
	e.readsEnv = appendNew(e.readsEnv, o.readsEnv...)
	e.stdinEnv = appendNew(e.stdinEnv, o.stdinEnv...)
	e.skipsCode = appendNew(e.skipsCode, o.skipsCode...)
	e.skipsEnv = appendNew(e.skipsEnv, o.skipsEnv...)
	e.readsCode = appendNew(e.readsCode, o.readsCode...)
	e.includes = appendNew(e.includes, o.includes...)
	e.forSecret = appendNew(e.forSecret, o.forSecret...)
	e.checks = appendNew(e.checks, o.checks...)
	e.writesFiles = appendNew(e.writesFiles, o.writesFiles...)
	if e.stdinCode == "" {
		e.stdinCode = o.stdinCode
	}
	e.noStdinCode = e.noStdinCode || o.noStdinCode
}

func appendNew(list []string, add ...string) []string {
	if len(list) == 0 {
		// Shared with the table, clipped so that an append copies.
		return slices.Clip(add)
	}
	for _, a := range add {
		if !slices.Contains(list, a) {
			list = append(list, a)
		}
	}
	return list
}

// option is one `opt` line.
type option struct {
	names    []string // spellings: "-f", "--file"
	value    *kind    // nil: a flag without a value
	more     []kind   // further values, each the next word (jq --arg NAME VALUE)
	optional bool     // =?KIND: the value is optional and only attached
	eff      effects
	line     int
}

// operandForm is one `operands` line: one accepted sequence of operands.
type operandForm struct {
	kinds []kind
	eff   effects
	line  int
}

// formEntry is one `form` line: an argv prefix with its own effects.
type formEntry struct {
	words []string
	whole bool // the argv must be exactly the node's words plus these
	eff   effects
	line  int
}

// node is a program or one of its subcommands.
type node struct {
	names  []string // the program's names, or the subcommand and its aliases
	parent *node
	depth  int        // 0 for a program, 1 for its subcommands, ...
	syntax syntaxKind // inherited from the parent unless given
	// stopsAtOperand: options end at the first operand (syntax posix, and
	// single-posix: Go's flag package, which cmd/go uses); inherited.
	stopsAtOperand bool
	class          Class   // "" inherits the parent's
	eff            effects // effects of every use of this node
	opts           []*option
	operands       []*operandForm
	subs           []*node
	forms          []*formEntry
	file           string
	line           int

	// keyOpts are the options with a KEY= spelling (dd if=FILE), in
	// order, for keyOption: most programs have none.
	keyOpts []*option
}

// program is one table: a node at depth 0 with its manual.
type program struct {
	node
	manual string
}

// path returns the words from the program to this node ("git remote add").
func (n *node) path() string {
	if n.parent == nil {
		return n.names[0]
	}
	return n.parent.path() + " " + n.names[0]
}

// catalog is every table, by program name.
type catalog struct {
	programs []*program
	byName   map[string]*program
}

// loadError is one problem with a table line.
type loadError struct {
	file string
	line int
	msg  string
}

func (e loadError) Error() string { return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg) }

// defaultCatalog loads the embedded tables once; a load error leaves the
// catalog nil and every analysis not understood (the unit test
// TestTablesLoad keeps that from shipping).
var defaultCatalog = sync.OnceValues(func() (*catalog, []error) {
	return loadTables(tableFiles, "tables")
})

// loadTables reads every *.txt file under dir of fsys, in name order.
func loadTables(fsys fs.FS, dir string) (*catalog, []error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.txt"))
	if err != nil {
		return nil, []error{err}
	}
	sort.Strings(names)
	c := &catalog{byName: map[string]*program{}}
	var errs []error
	for _, name := range names {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		progs, ferrs := parseTableFile(name, string(data))
		errs = append(errs, ferrs...)
		for _, p := range progs {
			for _, n := range p.names {
				if prev, dup := c.byName[n]; dup {
					errs = append(errs, loadError{p.file, p.line, fmt.Sprintf("program %s is already described at %s:%d", n, prev.file, prev.line)})
					continue
				}
				c.byName[n] = p
			}
			c.programs = append(c.programs, p)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return c, nil
}

// tableParser is the state of reading one file.
type tableParser struct {
	file  string
	errs  []error
	progs []*program
	stack []*node // stack[d] is the open node at depth d
	line  int
}

func (p *tableParser) errorf(format string, args ...any) {
	p.errs = append(p.errs, loadError{p.file, p.line, fmt.Sprintf(format, args...)})
}

// parseTableFile parses one table file.
func parseTableFile(file, text string) ([]*program, []error) {
	p := &tableParser{file: file}
	for i, raw := range strings.Split(text, "\n") {
		p.line = i + 1
		raw = strings.TrimSuffix(raw, "\r")
		body := strings.TrimLeft(raw, " ")
		if body == "" || body[0] == '#' {
			continue
		}
		if strings.ContainsAny(raw, "\t") {
			p.errorf("a tab: indent with two spaces per level, separate words with spaces")
			continue
		}
		indent := len(raw) - len(body)
		if indent%2 != 0 {
			p.errorf("indentation of %d spaces: use two per level", indent)
			continue
		}
		p.directive(indent/2, strings.Fields(body))
	}
	for _, prog := range p.progs {
		p.finishProgram(prog)
	}
	return p.progs, p.errs
}

// directive handles one line at the given depth.
func (p *tableParser) directive(depth int, f []string) {
	word, args := f[0], f[1:]
	if word == "program" {
		if depth != 0 {
			p.errorf("program must not be indented")
			return
		}
		if len(args) == 0 {
			p.errorf("program needs at least one name")
			return
		}
		for _, n := range args {
			if strings.ContainsAny(n, "/=") {
				p.errorf("program name %q: write the basename", n)
			}
		}
		prog := &program{node: node{names: args, file: p.file, line: p.line, syntax: syntaxGNU}}
		p.progs = append(p.progs, prog)
		p.stack = []*node{&prog.node}
		return
	}
	if len(p.stack) == 0 {
		p.errorf("%s before any program line", word)
		return
	}
	if depth >= len(p.stack) {
		p.errorf("indented %d levels, but only %d open (indent only the lines under a sub)", depth, len(p.stack)-1)
		return
	}
	p.stack = p.stack[:depth+1]
	n := p.stack[depth]
	switch word {
	case "manual":
		if depth != 0 {
			p.errorf("manual belongs to the program, not indented")
			return
		}
		prog := p.progs[len(p.progs)-1]
		if len(args) != 1 || !strings.Contains(args[0], "://") {
			p.errorf("manual needs one URL")
			return
		}
		if prog.manual != "" {
			p.errorf("a second manual line")
		}
		prog.manual = args[0]
	case "syntax":
		if len(args) != 1 {
			p.errorf("syntax needs one of gnu, posix, single, single-posix, single-clustered, none, gnu-bundled")
			return
		}
		switch s := syntaxKind(args[0]); s {
		case syntaxGNU, syntaxPOSIX, syntaxSingle, syntaxNone, syntaxBundled, syntaxSingleClustered:
			n.syntax, n.stopsAtOperand = s, s == syntaxPOSIX
		case "single-posix":
			n.syntax, n.stopsAtOperand = syntaxSingle, true
		default:
			p.errorf("unknown syntax %q (gnu, posix, single, single-posix, single-clustered, none, gnu-bundled)", args[0])
		}
	case "class":
		if len(args) != 1 {
			p.errorf("class needs one of read-only, other, irreversible")
			return
		}
		switch c := Class(args[0]); c {
		case ClassReadOnly, ClassOther, ClassIrreversible:
			n.class = c
		default:
			p.errorf("unknown class %q (read-only, other, irreversible)", args[0])
		}
	case "effect":
		if len(args) == 0 {
			p.errorf("effect needs at least one effect")
			return
		}
		e, rest := p.effects(args, false)
		if len(rest) > 0 {
			p.errorf("unknown effect %q", rest[0])
		}
		n.eff.merge(e)
	case "opt":
		p.opt(n, args)
	case "operands":
		p.operands(n, args)
	case "sub":
		if len(args) == 0 {
			p.errorf("sub needs a name")
			return
		}
		names := strings.Split(args[0], ",")
		for _, s := range names {
			if s == "" || strings.HasPrefix(s, "-") {
				p.errorf("sub name %q: a subcommand is a word, options are opt lines", s)
			}
		}
		e, rest := p.effects(args[1:], false)
		if len(rest) > 0 {
			p.errorf("unknown effect %q", rest[0])
		}
		sub := &node{names: names, parent: n, depth: depth + 1, syntax: n.syntax, stopsAtOperand: n.stopsAtOperand, eff: e, file: p.file, line: p.line}
		n.subs = append(n.subs, sub)
		p.stack = append(p.stack, sub)
	case "form":
		p.form(n, args)
	default:
		p.errorf("unknown directive %q (program manual syntax class effect opt operands sub form)", word)
	}
}

// effects reads the effect words of args; it returns the words that are
// not effects, in order. whole reports whether `whole` may appear.
func (p *tableParser) effects(args []string, wholeAllowed bool) (e effects, rest []string) {
	for _, a := range args {
		key, val, hasVal := strings.Cut(a, "=")
		switch {
		case a == "read-only":
			e.readOnly = true
		case a == "irreversible":
			e.irreversible = true
		case a == "writes":
			e.writes = true
		case a == "extracts":
			e.extracts = true
		case a == "workdir":
			e.workdir = true
		case a == "sends-file":
			e.sendsFile = true
		case a == "reformats":
			e.writes, e.reformats = true, true
		case a == "traces":
			e.traces = true
		case hasVal && key == "skips-code":
			e.skipsCode = appendNew(e.skipsCode, p.names(key, val)...)
		case hasVal && key == "skips-env":
			e.skipsEnv = appendNew(e.skipsEnv, p.varNames(key, val, true)...)
		case hasVal && key == "stdin-env":
			e.stdinEnv = appendNew(e.stdinEnv, p.varNames(key, val, false)...)
		case hasVal && key == "reads-env":
			e.readsEnv = appendNew(e.readsEnv, p.varNames(key, val, true)...)
		case a == "deletes":
			e.deletes = true
		case a == "net":
			e.net = true
		case a == "sends-stdin":
			e.sendsStdin = true
		case a == "runs":
			e.runs = true
		case a == "reads-stdin":
			e.readsStdin = true
		case a == "env-dump":
			e.envDump = true
		case a == "loads":
			e.loads = true
		case a == "no-argv":
			e.noArgv = true
		case a == "as-argv":
			e.asArgv = true
		case a == "module":
			e.module = true
		case a == "metadata":
			e.meta = true
		case a == "no-stdin-code":
			e.noStdinCode = true
		case a == "whole" && wholeAllowed:
		case hasVal && key == "reads-code":
			e.readsCode = appendNew(e.readsCode, p.names(key, val)...)
		case hasVal && key == "includes":
			e.includes = appendNew(e.includes, p.names(key, val)...)
		case hasVal && key == "for-secret":
			e.forSecret = appendNew(e.forSecret, p.varNames(key, val, false)...)
		case hasVal && key == "writes":
			e.writes = true
			e.writesFiles = appendNew(e.writesFiles, p.names(key, val)...)
		case hasVal && key == "stdin-code":
			if val == "" || strings.ContainsAny(val, ",:") {
				p.errorf("stdin-code needs one language: stdin-code=python")
			}
			e.stdinCode = val
		case hasVal && key == "check":
			if _, ok := checks[val]; !ok {
				p.errorf("unknown check %q (the registry is in checks.go)", val)
			}
			e.checks = appendNew(e.checks, val)
		default:
			rest = append(rest, a)
			continue
		}
		if len(rest) > 0 {
			p.errorf("%q after the effect words: effects come last", rest[0])
			rest = nil
		}
	}
	if e.readOnly && (e.irreversible || e.writes || e.deletes || e.runs || e.loads) {
		p.errorf("read-only together with an effect that changes or runs something")
	}
	return e, rest
}

// isVarName reports whether s is a shell variable name.
func isVarName(s string) bool {
	if s == "" || (s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// parseKind reads one KIND word.
func (p *tableParser) parseKind(s string) (kind, bool) {
	k := kind{}
	if strings.HasSuffix(s, "...") {
		k.rest = true
		s = strings.TrimSuffix(s, "...")
	}
	name, arg, hasArg := strings.Cut(s, ":")
	k.name = name
	switch name {
	case "word", "number", "pattern", "file", "out", "dir", "host", "url", "conninfo", "argv", "program", "lib", "any", "assign":
		if hasArg {
			p.errorf("kind %s takes no \":\" argument", name)
			return k, false
		}
	case "code":
		if !hasArg || arg == "" {
			p.errorf("kind code needs a language: code:sh, code:awk, ...")
			return k, false
		}
		k.lang = arg
	case "enum":
		if !hasArg || arg == "" {
			p.errorf("kind enum needs values: enum:A|B")
			return k, false
		}
		k.enum = strings.Split(arg, "|")
		if slices.Contains(k.enum, "") {
			p.errorf("kind enum has an empty value")
			return k, false
		}
	default:
		p.errorf("unknown kind %q (word number enum:A|B pattern file out dir host url code:LANG argv program lib any assign)", s)
		return k, false
	}
	if k.name == "argv" && !k.rest {
		k.rest = true // argv always takes the rest
	}
	return k, true
}

func (p *tableParser) opt(n *node, args []string) {
	if len(args) == 0 {
		p.errorf("opt needs its spellings")
		return
	}
	o := &option{names: strings.Split(args[0], ","), line: p.line}
	for _, s := range o.names {
		if n.syntax == syntaxSingle && (s == "!" || s == "(" || s == ")" || s == ",") {
			continue // find's expression operators
		}
		if len(s) >= 2 && strings.HasSuffix(s, "=") && isVarName(strings.TrimSuffix(s, "=")) {
			continue // dd's KEY=VALUE operands: the rest of the word is the value
		}
		if len(s) < 2 || (s[0] != '-' && s[0] != '+') || strings.ContainsAny(s, "= ") {
			p.errorf("option spelling %q: it starts with - or + and has no =", s)
		}
		if n.syntax == syntaxGNU || n.syntax == syntaxPOSIX || n.syntax == syntaxBundled {
			if len(s) > 2 && s[0] == '-' && s[1] != '-' && (n.syntax == syntaxBundled || len(args) > 1) {
				p.errorf("option spelling %q under syntax %s: one-dash options are one letter (use syntax single for whole-word options), but for a flag of its own that takes no value and has no effect (mvn -ntp), matched as the whole word", s, n.syntax)
			}
		}
	}
	rest := args[1:]
	if len(rest) > 0 && strings.HasPrefix(rest[0], "=") {
		v := strings.TrimPrefix(rest[0], "=")
		if strings.HasPrefix(v, "?") {
			o.optional = true
			v = v[1:]
		}
		if k, ok := p.parseKind(v); ok {
			if k.rest && k.name != "argv" {
				p.errorf("an option value is one word: %q", rest[0])
			}
			o.value = &k
		}
		rest = rest[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0], "=") {
			if k, ok := p.parseKind(strings.TrimPrefix(rest[0], "=")); ok {
				if k.rest || o.optional {
					p.errorf("a further value is one word, and follows a value that is not optional: %q", rest[0])
				}
				o.more = append(o.more, k)
			}
			rest = rest[1:]
		}
	}
	e, bad := p.effects(rest, false)
	if len(bad) > 0 {
		p.errorf("unknown effect %q", bad[0])
	}
	o.eff = e
	n.opts = append(n.opts, o)
	if slices.ContainsFunc(o.names, func(s string) bool { return strings.HasSuffix(s, "=") }) {
		n.keyOpts = append(n.keyOpts, o)
	}
}

func (p *tableParser) operands(n *node, args []string) {
	if len(args) == 0 {
		p.errorf("operands needs at least one kind")
		return
	}
	f := &operandForm{line: p.line}
	i := 0
	for ; i < len(args) && !isEffectWord(args[i]); i++ {
		k, ok := p.parseKind(args[i])
		if !ok {
			continue
		}
		if k.rest && k.name != "assign" && slices.ContainsFunc(f.kinds, func(o kind) bool { return o.rest && o.name != "assign" }) {
			p.errorf("kind %s: one operands line takes the rest only once", k)
		}
		if len(f.kinds) > 0 && f.kinds[len(f.kinds)-1].name == "argv" {
			p.errorf("kind %s after argv, which takes the rest", k)
		}
		f.kinds = append(f.kinds, k)
	}
	if i == 0 {
		p.errorf("operands needs at least one kind before its effects")
	}
	e, bad := p.effects(args[i:], false)
	if len(bad) > 0 {
		p.errorf("unknown effect %q", bad[0])
	}
	f.eff = e
	n.operands = append(n.operands, f)
}

func (p *tableParser) form(n *node, args []string) {
	f := &formEntry{line: p.line}
	i := 0
	for ; i < len(args); i++ {
		if isEffectWord(args[i]) {
			break
		}
		f.words = append(f.words, args[i])
	}
	e, bad := p.effects(args[i:], true)
	if len(f.words) == 0 && !slices.Contains(args[i:], "whole") {
		p.errorf("form needs the words it matches (only a whole form may have none: the program alone)")
		return
	}
	if len(bad) > 0 {
		p.errorf("unknown effect %q", bad[0])
	}
	f.whole = slices.Contains(args[i:], "whole")
	f.eff = e
	if e.readOnly && !f.whole && n.depth+len(f.words) > 2 {
		p.errorf("a read-only form names at most two words after the program (the gate matches a program and up to two arguments); use whole for longer ones")
	}
	n.forms = append(n.forms, f)
}

// isEffectWord reports whether a word of a form line starts its effects.
// names splits an effect's comma-separated list of file names or
// directives (reads-code=, includes=, writes=, skips-code=); an empty item
// is an error.
func (p *tableParser) names(key, val string) []string {
	items := strings.Split(val, ",")
	if slices.Contains(items, "") {
		p.errorf("%s= needs its items separated by commas, none empty", key)
	}
	return items
}

// varNames splits an effect's comma-separated list of variable names
// (reads-env=, skips-env=, stdin-env=, for-secret=); where prefix is true,
// a trailing * names every variable with that prefix.
func (p *tableParser) varNames(key, val string, prefix bool) []string {
	items := strings.Split(val, ",")
	for _, v := range items {
		if prefix {
			v = strings.TrimSuffix(v, "*")
		}
		if !isVarName(v) {
			p.errorf("%s=: %q is not a variable name", key, v)
		}
	}
	return items
}

func isEffectWord(a string) bool {
	switch a {
	case "read-only", "irreversible", "writes", "extracts", "workdir", "sends-file", "reformats", "traces", "deletes", "net", "sends-stdin",
		"runs", "reads-stdin", "env-dump", "loads", "no-argv", "as-argv", "module", "metadata", "no-stdin-code", "whole":
		return true
	}
	k, _, _ := strings.Cut(a, "=")
	return (k == "reads-code" || k == "includes" || k == "reads-env" || k == "stdin-env" || k == "skips-code" || k == "skips-env" || k == "for-secret" || k == "check" || k == "writes" || k == "stdin-code") && strings.Contains(a, "=")
}

// finishProgram checks what only a whole table can show.
func (p *tableParser) finishProgram(prog *program) {
	p.line = prog.line
	if prog.manual == "" {
		p.errorf("program %s has no manual line (name the manual its facts come from)", prog.names[0])
	}
	var walk func(n *node)
	walk = func(n *node) {
		seen := map[string]int{}
		for _, o := range n.opts {
			for _, s := range o.names {
				if prev, dup := seen[s]; dup {
					p.errs = append(p.errs, loadError{p.file, o.line, fmt.Sprintf("%s: option %s is already described at line %d", n.path(), s, prev)})
				}
				seen[s] = o.line
			}
			if n.syntax == syntaxNone && !slices.ContainsFunc(o.names, func(s string) bool { return strings.HasSuffix(s, "=") }) {
				p.errs = append(p.errs, loadError{p.file, o.line, fmt.Sprintf("%s: syntax none takes no options (except KEY= spellings)", n.path())})
			}
			if slices.ContainsFunc(o.names, func(s string) bool { return strings.HasSuffix(s, "=") }) && (o.value == nil || o.optional) {
				p.errs = append(p.errs, loadError{p.file, o.line, fmt.Sprintf("%s: a KEY= spelling needs a value kind (=KIND)", n.path())})
			}
		}
		subs := map[string]int{}
		for _, s := range n.subs {
			for _, name := range s.names {
				if prev, dup := subs[name]; dup {
					p.errs = append(p.errs, loadError{p.file, s.line, fmt.Sprintf("%s: sub %s is already described at line %d", n.path(), name, prev)})
				}
				subs[name] = s.line
			}
			if s.eff.readOnly && s.depth > 2 {
				p.errs = append(p.errs, loadError{p.file, s.line, fmt.Sprintf("%s: a read-only sub deeper than two words (the gate matches a program and up to two arguments)", s.path())})
			}
			walk(s)
		}
	}
	walk(&prog.node)
}

// coverage counts what the tables describe: programs (tables), program
// names, and read-only entries (a program, subcommand or form whose
// class or effect is read-only, and options that make a form read-only),
// for the README and the package doc.
func (c *catalog) coverage() (programs, names, readOnly int) {
	var walk func(n *node)
	walk = func(n *node) {
		if n.class == ClassReadOnly || n.eff.readOnly {
			readOnly++
		}
		for _, f := range n.forms {
			if f.eff.readOnly {
				readOnly++
			}
		}
		for _, o := range n.opts {
			if o.eff.readOnly {
				readOnly++
			}
		}
		for _, s := range n.subs {
			walk(s)
		}
	}
	for _, p := range c.programs {
		walk(&p.node)
	}
	return len(c.programs), len(c.byName), readOnly
}
