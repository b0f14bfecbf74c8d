// The table matcher (the agent gate's allowlist rule: a command is matched
// on its program plus its arguments, and what its table does not describe
// is not understood). It reads one command's words by the program's
// syntax, walks its subcommands, and returns every option value and
// operand with its kind, the effects of every line that matched, the
// inner command a wrapper runs, and the class of the form. It knows no
// program by name: everything comes from the tables.
package commands

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// word is one word of a command as the walk sees it.
type word struct {
	val    string // the value, when fixed
	fixed  bool   // the value cannot change at run time
	prefix string // the literal text before the first expansion
	shown  string // as written in the script (display form)
	// atDir is the value of a word that starts with the working directory
	// ("$PWD"/x, "$(pwd)"/x) and is otherwise literal, resolved from the
	// directory the walk tracks ("./x" inside the project); "" when not.
	atDir string
}

// valueUse is one option value or operand with the kind its table gives.
type valueUse struct {
	k        *kind    // the table's (shared, read only)
	idx      int      // index of the word in the command's words (after the program)
	w        word     // the value (for an attached value, only that part)
	opt      string   // the option spelling ("" for an operand)
	eff      *effects // of the table line (shared, read only)
	codeFile bool     // a file whose line reads-code or runs: the file is code
}

// workdir is the directory a workdir option names (git -C sub, make -C
// sub): the files the program reads by relative name are under it; "" for
// none, or one decided at run time.
func (m *match) workdir() string {
	dir := ""
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if v.eff != nil && v.eff.workdir && v.opt != "" {
			if !v.w.fixed {
				return ""
			}
			dir = path.Join(dir, v.w.val) // git -C a -C b is a/b
		}
	}
	return dir
}

// argvSpan is an inner command: words [from, to) of the command.
type argvSpan struct {
	from, to int
	remote   string // the host it runs on ("" when local)
	opt      string // the option that introduced it ("" for operands)
	module   bool   // its first word is a module (python -m), found by the interpreter, not by PATH
}

// checkUse is one named check with the words of its line.
type checkUse struct {
	name  string
	words []string
}

// match is the outcome of matching one command against its table.
type match struct {
	prog    *program
	chain   []*node // the program, then each subcommand matched
	eff     effects // the union of every matched line's effects
	values  []valueUse
	argvs   []argvSpan
	checks  []checkUse
	problem string // not understood: why

	whole       *formEntry // a whole form matched
	roAnchor    string     // the read-only entry ("git status", "tar -t")
	irrAnchor   string     // the irreversible entry ("git push --force")
	class       Class
	form        string // the entry that decided the class
	stdinCode   bool   // the program reads its program from standard input
	stdinLang   string // in this language
	codeOperand bool   // a code value, or a code file, was given
	stdinForm   string // stdin-code of the operands line that matched
	stdinOpt    string // stdin-code of an option used
	optWrites   bool   // an option that writes its file operands (sed -i)
	noArgv      bool   // an option made the operands words, not a command (command -v)
	asArgv      bool   // an option made the shell-code operands a command (watch -x)
	valueKinds  []kind // the kinds of the option values given
}

func (m *match) fail(format string, args ...any) {
	if m.problem == "" {
		m.problem = fmt.Sprintf(format, args...)
	}
}

// matchCommand matches words (the arguments after the program's name).
func matchCommand(p *program, words []word) *match {
	m := &match{prog: p}
	if p.syntax == syntaxBundled {
		words = unbundle(&p.node, words)
	}
	m.node(&p.node, words, 0)
	m.finish(words)
	return m
}

// unbundle rewrites an old-style first word (tar xzf FILE) as the
// options it stands for, each value-taking letter taking the next word.
// A first word with a letter the table does not list stays as it is (an
// operand, and so most likely not understood).
func unbundle(n *node, words []word) []word {
	if len(words) == 0 || !words[0].fixed || words[0].val == "" || strings.HasPrefix(words[0].val, "-") {
		return words
	}
	first := words[0].val
	var out []word
	next := 1
	for _, c := range first {
		s := "-" + string(c)
		o := n.lookupOption(s)
		if o == nil || c > 127 {
			return words
		}
		out = append(out, word{val: s, fixed: true, prefix: s, shown: s})
		if o.value != nil && !o.optional {
			if next >= len(words) {
				return words
			}
			out = append(out, words[next])
			next++
		}
	}
	return append(out, words[next:]...)
}

// lookupOption finds an option spelling in n.
func (n *node) lookupOption(s string) *option {
	for _, o := range n.opts {
		if slices.Contains(o.names, s) {
			return o
		}
	}
	return nil
}

func (n *node) lookupSub(s string) *node {
	for _, c := range n.subs {
		if slices.Contains(c.names, s) {
			return c
		}
	}
	return nil
}

// effectiveClass is the node's class line, or its parent's.
func (n *node) effectiveClass() Class {
	for x := n; x != nil; x = x.parent {
		if x.class != "" {
			return x.class
		}
	}
	return ClassOther
}

func wordsEqual(ws []word, lits []string) bool {
	if len(ws) != len(lits) {
		return false
	}
	return wordsPrefix(ws, lits)
}

func wordsPrefix(ws []word, lits []string) bool {
	if len(ws) < len(lits) {
		return false
	}
	for i, l := range lits {
		if !ws[i].fixed || ws[i].val != l {
			return false
		}
	}
	return true
}

// keyOption finds a KEY= spelling the word starts with (dd if=FILE).
func (n *node) keyOption(w word) (*option, string) {
	for _, o := range n.keyOpts { // the options with a KEY= spelling, in order

		for _, s := range o.names {
			if strings.HasSuffix(s, "=") && strings.HasPrefix(w.prefix, s) {
				return o, s
			}
		}
	}
	return nil, ""
}

// optionLike reports whether w is an option word under syntax s of n.
func optionLike(n *node, w word) bool {
	t := w.prefix
	if o, _ := n.keyOption(w); o != nil {
		return true
	}
	switch n.syntax {
	case syntaxNone:
		return false
	case syntaxSingle:
		if w.fixed && (t == "!" || t == "(" || t == ")") {
			return n.lookupOption(t) != nil
		}
	}
	if len(t) >= 2 && t[0] == '-' || t == "-" && !w.fixed {
		return true
	}
	if len(t) >= 2 && t[0] == '+' {
		return slices.ContainsFunc(n.opts, func(o *option) bool {
			return slices.ContainsFunc(o.names, func(s string) bool { return s[0] == '+' })
		})
	}
	return false
}

// node matches words against n (words are what follow n's own name).
func (m *match) node(n *node, words []word, base int) {
	m.chain = append(m.chain, n)
	m.eff.merge(n.eff)
	if len(n.eff.checks) > 0 {
		for _, c := range n.eff.checks {
			m.checks = append(m.checks, checkUse{c, checkVals(words)})
		}
	}
	for _, f := range n.forms {
		if f.whole && wordsEqual(words, f.words) {
			m.whole = f
			m.eff.merge(f.eff)
			return
		}
	}
	for _, f := range n.forms {
		if !f.whole && wordsPrefix(words, f.words) {
			m.eff.merge(f.eff)
			entry := n.path() + " " + strings.Join(f.words, " ")
			if f.eff.readOnly {
				m.roAnchor = entry
			}
			if f.eff.irreversible && m.irrAnchor == "" {
				m.irrAnchor = entry
			}
		}
	}
	onlyOperands := n.syntax == syntaxNone
	var ops []int
	for i := 0; i < len(words); {
		w := words[i]
		if !onlyOperands && w.fixed && w.val == "--" && n.syntax != syntaxSingle {
			onlyOperands = true
			i++
			continue
		}
		isOpt := !onlyOperands && optionLike(n, w)
		// After the operands before an inner command, a word is the
		// command, unless it is an option this program knows and its
		// syntax lets options follow operands (flock FILE -c CMD).
		known := isOpt && (n.syntax == syntaxGNU || n.syntax == syntaxBundled) && n.knowsOption(w)
		if f := n.argvHere(words, ops, i, m.asArgv); f != nil && !m.noArgv && (!isOpt || len(ops) > 0 && !known || n.syntax == syntaxPOSIX && !isOpt) {
			m.argvs = append(m.argvs, argvSpan{from: base + i, to: base + len(words), remote: m.remoteHost(n, f, words, ops)})
			m.operands(n, words, ops, base, f)
			return
		}
		if isOpt {
			next := m.option(n, words, i, base)
			if next < 0 {
				return
			}
			i = next
			continue
		}
		if len(ops) == 0 && len(n.subs) > 0 {
			if w.fixed {
				if sub := n.lookupSub(w.val); sub != nil {
					m.node(sub, words[i+1:], base+i+1)
					return
				}
			}
			if len(n.operands) == 0 {
				m.fail("%s: the subcommand %s is not one the device knows", n.path(), w.shown)
				return
			}
		}
		ops = append(ops, i)
		if n.stopsAtOperand {
			onlyOperands = true
		}
		i++
	}
	m.operands(n, words, ops, base, nil)
}

// knowsOption reports whether the option word w is one n lists.
func (n *node) knowsOption(w word) bool {
	t := w.prefix
	if strings.HasPrefix(t, "--") {
		name, _, _ := strings.Cut(t, "=")
		return n.lookupOption(name) != nil
	}
	return len(t) >= 2 && n.lookupOption(t[:2]) != nil
}

// argvHere returns the operands line under which words[i] starts an inner
// command, given the operands ops read so far; nil if none does.
func (n *node) argvHere(words []word, ops []int, i int, asArgv bool) *operandForm {
	for _, f := range n.operands {
		j := 0
		for _, k := range f.kinds {
			if k.name == "argv" || asArgv && k.name == "code" && k.lang == "sh" && k.rest {
				if j == len(ops) {
					return f
				}
				break
			}
			if k.name == "assign" && k.rest {
				for j < len(ops) && isAssignWord(words[ops[j]]) {
					j++
				}
				if j == len(ops) && isAssignWord(words[i]) {
					break // still an assignment
				}
				continue
			}
			if k.rest || j >= len(ops) {
				break
			}
			j++
		}
	}
	return nil
}

// remoteHost: an inner command after a host operand runs on that host.
func (m *match) remoteHost(n *node, f *operandForm, words []word, ops []int) string {
	for j, k := range f.kinds {
		if k.name == "host" && j < len(ops) {
			return words[ops[j]].shown
		}
	}
	return ""
}

func isAssignWord(w word) bool {
	name, _, ok := strings.Cut(w.prefix, "=")
	return ok && isVarName(name)
}

// option reads the option at words[i]; it returns the index after it and
// its value, or -1 when it is not understood.
func (m *match) option(n *node, words []word, i, base int) int {
	w := words[i]
	t := w.prefix
	if o, s := n.keyOption(w); o != nil {
		v := word{val: strings.TrimPrefix(w.val, s), fixed: w.fixed, prefix: strings.TrimPrefix(w.prefix, s), shown: w.shown}
		return m.optionValueWord(n, o, s, words, i, base, v)
	}
	if n.syntax == syntaxSingle || n.syntax == syntaxSingleClustered || t[0] == '+' || n.syntax == syntaxNone {
		name, val, attached := t, "", false
		if !w.fixed {
			// -chdir="$d": a known option whose attached value is decided
			// at run time, read as its kind says, as --opt="$x" is
			if pre, v, ok := strings.Cut(t, "="); ok {
				if o := n.lookupOption(pre); o != nil && o.value != nil {
					at, _ := strings.CutPrefix(w.atDir, pre+"=")
					return m.optionValueWord(n, o, pre, words, i, base, word{prefix: v, shown: w.shown, atDir: at})
				}
			}
			m.fail("%s: an option decided at run time (%s)", n.path(), w.shown)
			return -1
		}
		o := n.lookupOption(name)
		if o == nil {
			// -flag=value (Go's flag package, java -Dk=v is a spelling).
			name, val, attached = strings.Cut(t, "=")
			o = n.lookupOption(name)
		}
		if o == nil && n.syntax == syntaxSingleClustered && w.fixed && m.flagCluster(n, t) {
			return i + 1
		}
		if o == nil {
			m.fail("%s: the option %s is not one the device knows", n.path(), Literal(t))
			return -1
		}
		return m.optionValue(n, o, name, words, i, base, val, attached)
	}
	if strings.HasPrefix(t, "--") {
		name, val, attached := strings.Cut(t, "=")
		if !w.fixed && !attached {
			m.fail("%s: an option decided at run time (%s)", n.path(), w.shown)
			return -1
		}
		o := n.lookupOption(name)
		if o == nil {
			m.fail("%s: the option %s is not one the device knows", n.path(), Literal(name))
			return -1
		}
		if attached && !w.fixed {
			at, _ := strings.CutPrefix(w.atDir, name+"=") // --volume="$PWD":/src
			return m.optionValueWord(n, o, name, words, i, base, word{prefix: val, shown: w.shown, atDir: at})
		}
		return m.optionValue(n, o, name, words, i, base, val, attached)
	}
	// A one-dash spelling of several letters that the table lists (mvn
	// -ntp) is that option, as the whole word only; it takes no value.
	if len(t) > 2 && w.fixed && t == w.val {
		if o := n.lookupOption(t); o != nil && o.value == nil {
			m.useOption(o, t)
			return i + 1
		}
	}
	// A cluster of one-letter options: -abc, -fVALUE, -f VALUE.
	for j := 1; j < len(t); j++ {
		s := "-" + t[j:j+1]
		o := n.lookupOption(s)
		if o == nil {
			m.fail("%s: the option %s is not one the device knows", n.path(), Literal(s))
			return -1
		}
		m.useOption(o, s)
		if o.value == nil {
			continue
		}
		rest := t[j+1:]
		if rest != "" || !w.fixed {
			if !w.fixed && j+1 >= len(t) {
				// -o"$X": the value is the rest of the word.
				return m.optionValueWord(n, o, s, words, i, base, word{prefix: "", shown: w.shown})
			}
			if !w.fixed {
				return m.optionValueWord(n, o, s, words, i, base, word{prefix: rest, shown: w.shown})
			}
			m.addValue(o, s, i+base, word{val: rest, fixed: true, prefix: rest, shown: Literal(rest)})
			return i + 1
		}
		if o.optional {
			return i + 1
		}
		return m.takeNext(n, o, s, words, i, base)
	}
	if !w.fixed {
		m.fail("%s: option letters decided at run time (%s)", n.path(), w.shown)
		return -1
	}
	return i + 1
}

// flagCluster reads -qr as -q -r when every letter is a one-letter option
// that takes no value and no run of letters spells a longer option; anything
// else stays not understood, so a cluster never hides a two-letter option
// such as zip's -TT (-qTT).
func (m *match) flagCluster(n *node, t string) bool {
	if len(t) < 3 || t[0] != '-' || t[1] == '-' {
		return false
	}
	for j := 1; j < len(t); j++ {
		for k := j + 2; k <= len(t); k++ {
			if n.lookupOption("-"+t[j:k]) != nil {
				return false
			}
		}
	}
	var opts []*option
	for j := 1; j < len(t); j++ {
		o := n.lookupOption("-" + t[j:j+1])
		if o == nil || o.value != nil {
			return false
		}
		opts = append(opts, o)
	}
	for j, o := range opts {
		m.useOption(o, "-"+t[j+1:j+2])
	}
	return true
}

// optionValue handles a whole-word option and its value.
func (m *match) optionValue(n *node, o *option, name string, words []word, i, base int, val string, attached bool) int {
	m.useOption(o, name)
	if o.value == nil {
		if attached {
			m.fail("%s: the option %s takes no value", n.path(), Literal(name))
			return -1
		}
		return i + 1
	}
	if attached {
		m.addValue(o, name, i+base, word{val: val, fixed: true, prefix: val, shown: Literal(val)})
		return m.moreValues(o, name, words, i+1, base)
	}
	if o.optional {
		return i + 1
	}
	return m.takeNext(n, o, name, words, i, base)
}

// optionValueWord records a value decided at run time.
func (m *match) optionValueWord(n *node, o *option, name string, words []word, i, base int, v word) int {
	m.useOption(o, name)
	if o.value == nil {
		m.fail("%s: the option %s takes no value", n.path(), Literal(name))
		return -1
	}
	m.addValue(o, name, i+base, v)
	return i + 1
}

// takeNext takes the option's value from the next word(s).
func (m *match) takeNext(n *node, o *option, name string, words []word, i, base int) int {
	if o.value.name == "argv" {
		end := len(words)
		if n.syntax == syntaxSingle {
			end = i + 1
			for end < len(words) && !(words[end].fixed && (words[end].val == ";" || words[end].val == "+")) {
				end++
			}
			if end >= len(words) {
				m.fail("%s: %s runs a command that does not end with ; or +", n.path(), name)
				return -1
			}
		}
		if end == i+1 {
			m.fail("%s: %s lacks the command it runs", n.path(), name)
			return -1
		}
		m.argvs = append(m.argvs, argvSpan{from: base + i + 1, to: base + end, opt: name, module: o.eff.module})
		if n.syntax == syntaxSingle {
			return end + 1
		}
		return len(words)
	}
	if i+1+len(o.more) >= len(words) {
		m.fail("%s: the option %s lacks its value", n.path(), Literal(name))
		return -1
	}
	m.addValue(o, name, base+i+1, words[i+1])
	return m.moreValues(o, name, words, i+2, base)
}

// moreValues takes an option's further values (jq --arg NAME VALUE).
func (m *match) moreValues(o *option, name string, words []word, i, base int) int {
	for k := range o.more {
		if i >= len(words) {
			m.fail("%s: the option %s lacks its values", m.chain[len(m.chain)-1].path(), Literal(name))
			return -1
		}
		m.addValueKind(o, &o.more[k], name, base+i, words[i])
		i++
	}
	return i
}

func (m *match) useOption(o *option, name string) {
	m.eff.merge(o.eff)
	if o.eff.stdinCode != "" {
		m.stdinOpt = o.eff.stdinCode
	}
	if o.eff.writes && (o.value == nil || o.value.name != "out") {
		m.optWrites = true
	}
	if o.eff.noArgv {
		m.noArgv = true
	}
	if o.eff.asArgv {
		m.asArgv = true
	}
	if o.value == nil || o.optional {
		for _, c := range o.eff.checks {
			m.checks = append(m.checks, checkUse{c, nil})
		}
	}
	if o.eff.readOnly && m.roAnchor == "" {
		m.roAnchor = m.chain[len(m.chain)-1].path() + " " + name
	}
	if o.eff.irreversible && m.irrAnchor == "" {
		m.irrAnchor = m.chain[len(m.chain)-1].path() + " " + name
	}
}

func (m *match) addValue(o *option, name string, idx int, v word) {
	m.addValueKind(o, o.value, name, idx, v)
}

// kindShown is a value kind as a reason names it: a long list of accepted
// values is counted, not spelled out, so the reason stays readable.
func kindShown(k kind) string {
	s := fmt.Sprint(k)
	if n := strings.Count(s, "|") + 1; len(s) > 120 {
		return fmt.Sprintf("%s... (one of %d values the table lists)", s[:60], n)
	}
	return s
}

func (m *match) addValueKind(o *option, k *kind, name string, idx int, v word) {
	if !kindAccepts(k, &v) {
		m.fail("%s: the value %s of %s is not one the device knows (%s)", m.chain[len(m.chain)-1].path(), v.shown, Literal(name), kindShown(*k))
		return
	}
	code := k.name == "file" && (len(o.eff.readsCode) > 0 || o.eff.runs)
	m.values = append(m.values, valueUse{k: k, idx: idx, w: v, opt: name, eff: &o.eff, codeFile: code})
	m.valueKinds = append(m.valueKinds, *k)
	if code {
		m.valueKinds = append(m.valueKinds, kind{name: "code", lang: "*"})
	}
	for _, c := range o.eff.checks {
		m.checks = append(m.checks, checkUse{c, checkVals([]word{v})})
	}
}

// kindAccepts checks a value against its kind where the kind constrains it.
func kindAccepts(k *kind, v *word) bool {
	switch k.name {
	case "number":
		if !v.fixed {
			return true // a number decided at run time is still a number or an error
		}
		if v.val == "" {
			return false
		}
		for _, c := range v.val {
			if c < '0' || c > '9' {
				return false
			}
		}
	case "enum":
		return v.fixed && slices.Contains(k.enum, v.val)
	case "assign":
		return isAssignWord(*v)
	}
	return true
}

// operands matches the operands read against n's operands lines; with an
// inner command (argvForm), against that line's kinds before argv.
func (m *match) operands(n *node, words []word, ops []int, base int, argvForm *operandForm) {
	if m.problem != "" {
		return
	}
	forms := n.operands
	if argvForm != nil {
		forms = []*operandForm{argvForm}
	} else if m.noArgv {
		// command -v NAME...: the words are names, not a command.
		forms = nil
		for _, f := range n.operands {
			g := *f
			if k := len(g.kinds); k > 0 && g.kinds[k-1].name == "argv" {
				g.kinds = append(slices.Clone(g.kinds[:k-1]), kind{name: "word", rest: true})
			}
			forms = append(forms, &g)
		}
	}
	var kindsBuf [8]*kind // the fitted kinds of a few operands, not allocated
	if len(ops) == 0 && argvForm == nil {
		if len(forms) == 0 {
			return
		}
		if f, kinds := firstFittingKinds(forms, words, nil, kindsBuf[:0]); f != nil {
			m.operandsMatchedKinds(n, words, nil, base, f, kinds)
			return
		}
		if m.codeByOption() {
			return // perl -e CODE: the option is the program
		}
		m.fail("%s: needs operands the device knows", n.path())
		return
	}
	if len(forms) == 0 {
		m.fail("%s: the operand %s is not one the device knows (it takes none)", n.path(), words[ops[0]].shown)
		return
	}
	order := forms
	if len(m.valueKinds) > 0 {
		order = m.orderForms(forms)
	}
	if f, kinds := firstFittingKinds(order, words, ops, kindsBuf[:0]); f != nil {
		m.operandsMatchedKinds(n, words, ops, base, f, kinds)
		return
	}
	var shown []string
	for _, i := range ops {
		shown = append(shown, words[i].shown)
	}
	m.fail("%s: the operands %s are not a form the device knows", n.path(), clip(strings.Join(shown, " ")))
}

// orderForms puts first the alternatives an option's value does not stand
// for: an option that gives what an alternative's first operand is (grep
// -e PATTERN, sed -e SCRIPT, awk -f FILE) replaces that operand, and one
// that gave the program its code (perl -e, python -c, make -f) stands for
// a first operand that is code.
func (m *match) orderForms(forms []*operandForm) []*operandForm {
	var preferred, dropped, rest []*operandForm
	byOption := m.codeByOption()
	for _, f := range forms {
		if byOption && startsWithCode(f) {
			// perl -i -pe CODE FILE: the option gave the code, so the
			// first operand is data, not the program.
			rest = append(rest, f)
		} else if len(f.kinds) > 0 && slices.ContainsFunc(m.valueKinds, func(k kind) bool {
			return k.name == f.kinds[0].name && (k.lang == f.kinds[0].lang || k.lang == "*")
		}) {
			rest = append(rest, f)
		} else {
			preferred = append(preferred, f)
		}
	}
	if byOption {
		for _, f := range forms {
			if startsWithCode(f) {
				g := *f
				g.kinds = f.kinds[1:]
				dropped = append(dropped, &g)
			}
		}
	}
	return slices.Concat(preferred, dropped, rest)
}

// startsWithCode reports whether f's first operand is the program's code
// (code, or a file that runs).
func startsWithCode(f *operandForm) bool {
	return len(f.kinds) > 0 && (f.kinds[0].name == "code" || f.kinds[0].name == "file" && (len(f.eff.readsCode) > 0 || f.eff.runs))
}

// codeByOption reports whether an option gave the program its code.
func (m *match) codeByOption() bool {
	return slices.ContainsFunc(m.values, func(v valueUse) bool {
		return v.opt != "" && (v.k.name == "code" || v.codeFile || v.eff.runs)
	})
}

// firstFittingKinds is the first of forms the operands fit, with the kind
// it assigns each operand, appended to out. The rest kind takes what the
// fixed kinds around it leave; assign... takes only assignments; argv
// takes nothing here (the inner command is apart).
func firstFittingKinds(forms []*operandForm, words []word, ops []int, out []*kind) (*operandForm, []*kind) {
	for _, f := range forms {
		// out is on the caller's stack: fitting and listing at once
		// costs a form that does not fit nothing more.
		if kinds, ok := fits(f, words, ops, out[:0]); ok {
			return f, kinds
		}
	}
	return nil, nil
}

// fits reports whether the operands fit f's kinds, appending each
// operand's kind to out (and returning it).
func fits(f *operandForm, words []word, ops []int, out []*kind) ([]*kind, bool) {
	kinds := f.kinds
	if n := len(kinds); n > 0 && kinds[n-1].name == "argv" {
		kinds = kinds[:n-1]
	}
	fixedAfter := func(from int) int {
		c := 0
		for _, k := range kinds[from:] {
			if !k.rest {
				c++
			}
		}
		return c
	}
	add := func(k *kind) { out = append(out, k) }
	j := 0
	for ki := range kinds {
		k := &kinds[ki]
		switch {
		case k.name == "assign" && k.rest:
			for j < len(ops) && isAssignWord(words[ops[j]]) {
				add(k)
				j++
			}
		case k.rest:
			take := len(ops) - j - fixedAfter(ki+1)
			for ; take > 0; take-- {
				if !kindAccepts(k, &words[ops[j]]) {
					return out, false
				}
				add(k)
				j++
			}
		default:
			if j >= len(ops) || !kindAccepts(k, &words[ops[j]]) {
				return out, false
			}
			add(k)
			j++
		}
	}
	return out, j == len(ops)
}

func (m *match) operandsMatchedKinds(n *node, words []word, ops []int, base int, f *operandForm, kinds []*kind) {
	m.eff.merge(f.eff)
	if f.eff.stdinCode != "" {
		m.stdinForm = f.eff.stdinCode
	}
	m.values = slices.Grow(m.values, len(ops))
	for j, i := range ops {
		k := kinds[j]
		code := k.name == "file" && (len(f.eff.readsCode) > 0 || f.eff.runs)
		m.values = append(m.values, valueUse{k: k, idx: base + i, w: words[i], eff: &f.eff, codeFile: code})
	}
	if len(f.eff.checks) == 0 {
		return
	}
	vals := make([]string, 0, len(ops))
	for _, i := range ops {
		vals = append(vals, checkVals(words[i:i+1])...)
	}
	for _, c := range f.eff.checks {
		m.checks = append(m.checks, checkUse{c, vals})
	}
}

// checkVals are the words as a named check sees them: the fixed value, or
// for a word that starts with the working directory its resolved value.
func checkVals(ws []word) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, cmpOr(w.val, w.atDir))
	}
	return out
}

func fixedVals(ws []word) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.val)
	}
	return out
}

// finish decides the class of the matched form.
func (m *match) finish(words []word) {
	// An option that turns reading off (python -S, wget --no-config):
	// those files and variables are not read, so not listed.
	if len(m.eff.skipsCode) > 0 {
		m.eff.readsCode = slices.DeleteFunc(slices.Clone(m.eff.readsCode), func(f string) bool { return slices.Contains(m.eff.skipsCode, f) })
	}
	if len(m.eff.skipsEnv) > 0 {
		m.eff.readsEnv = slices.DeleteFunc(slices.Clone(m.eff.readsEnv), func(v string) bool { return slices.Contains(m.eff.skipsEnv, v) })
		m.eff.stdinEnv = slices.DeleteFunc(slices.Clone(m.eff.stdinEnv), func(v string) bool { return slices.Contains(m.eff.skipsEnv, v) })
	}
	last := m.chain[len(m.chain)-1]
	path := last.path()
	if m.whole != nil {
		m.problem = "" // a whole form is understood by itself
		m.form = path + " " + strings.Join(m.whole.words, " ")
	}
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if v.k.name == "code" || v.codeFile {
			m.codeOperand = true
		}
	}
	// Where the program reads its own program from standard input: the
	// operands line that matched says so; or an option, when no command
	// follows; or the program, when it is given no operand (or "-").
	nodeLang := ""
	for _, n := range m.chain {
		if n.eff.stdinCode != "" {
			nodeLang = n.eff.stdinCode
		}
	}
	operands, dash := 0, false
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		if v.opt == "" {
			operands++
			dash = dash || (v.w.fixed && v.w.val == "-")
		}
	}
	switch {
	case m.codeOperand || m.whole != nil || m.eff.noStdinCode:
	case m.stdinForm != "":
		m.stdinCode, m.stdinLang = true, m.stdinForm
	case m.stdinOpt != "" && len(m.argvs) == 0:
		m.stdinCode, m.stdinLang = true, m.stdinOpt
	case nodeLang != "" && len(m.argvs) == 0 && (operands == 0 || dash):
		m.stdinCode, m.stdinLang = true, nodeLang
	}
	switch {
	case m.eff.irreversible || last.effectiveClass() == ClassIrreversible:
		m.class = ClassIrreversible
		m.form = cmpOr(m.irrAnchor, path)
		return
	}
	ro := false
	switch {
	case m.whole != nil:
		ro = m.whole.eff.readOnly || last.effectiveClass() == ClassReadOnly
	case m.roAnchor != "":
		ro = true
	case last.effectiveClass() == ClassReadOnly || last.eff.readOnly:
		ro = true
		m.roAnchor = path
	}
	if m.eff.extracts && !ro {
		m.eff.writes = true // unzip x.zip; unzip -l x.zip reads only
	}
	e := m.eff
	if e.writes || e.deletes || e.runs || e.loads || e.envDump || m.stdinCode {
		ro = false
	}
	for vi := range m.values {
		v := &m.values[vi] // not a copy: a value is 120 bytes
		switch v.k.name {
		case "code", "program", "lib", "out":
			ro = false
		}
	}
	if len(m.argvs) > 0 {
		ro = false
	}
	if ro {
		m.class = ClassReadOnly
		if m.form == "" {
			m.form = cmpOr(m.roAnchor, path)
		}
		return
	}
	m.class = ClassOther
	if m.form == "" {
		m.form = path
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
