// Python given on a command line (python3 -c CODE) or in a here-document
// (python3 - <<'EOF'): read, on allowlist terms, for the small programs
// agents write to pick a field out of JSON or count lines. The program is
// understood only when it imports nothing but modules that reach no
// program, file writer or network (json, re, sys's streams, os.path ...),
// opens files only for reading and by a literal name, and uses none of
// the names through which Python reaches everything else: exec, eval,
// compile, getattr and the other reflective builtins, any __dunder__ name,
// a module named without an attribute (x = os), an identifier outside
// ASCII (Python folds fullwidth letters into ASCII ones). Anything else
// is marked as code the device does not follow, as before.
// https://docs.python.org/3/reference/lexical_analysis.html
package commands

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// pythonModules are the modules a read program may import, each with the
// attributes it may use ("*" for any): computation, parsing and reading.
var pythonModules = map[string][]string{
	"json": {"*"}, "re": {"*"}, "math": {"*"}, "collections": {"*"}, "itertools": {"*"}, "functools": {"*"},
	"datetime": {"*"}, "time": {"*"}, "textwrap": {"*"}, "string": {"*"}, "csv": {"*"}, "hashlib": {"*"},
	"base64": {"*"}, "binascii": {"*"}, "statistics": {"*"}, "decimal": {"*"}, "fractions": {"*"},
	"random": {"*"}, "uuid": {"*"}, "dataclasses": {"*"}, "enum": {"*"}, "pprint": {"*"},
	"difflib": {"*"}, "fnmatch": {"*"}, "glob": {"*"}, "shlex": {"*"}, "copy": {"*"},
	"heapq": {"*"}, "bisect": {"*"}, "struct": {"*"}, "zlib": {"*"}, "tomllib": {"*"}, "unicodedata": {"*"},
	"calendar": {"*"}, "html": {"*"}, "ipaddress": {"*"}, "urllib.parse": {"*"}, "os.path": {"*"},
	"sys":    {"stdin", "stdout", "stderr", "argv", "exit", "version", "version_info", "platform", "maxsize", "byteorder"},
	"os":     {"path", "environ", "getenv", "getcwd", "sep", "linesep", "listdir", "walk", "cpu_count", "getpid"},
	"urllib": {"parse"},
}

// Left out on purpose: modules that open files by a name computed at run
// time (configparser, xml.etree, argparse's FileType, fileinput), reach
// attributes by a string (operator's attrgetter and methodcaller) or
// evaluate strings (typing's get_type_hints), and every module that runs
// programs, writes files or opens the network.

// pythonForbidden are builtins that reach code, objects or programs the
// device cannot follow (and help, which starts a pager).
var pythonForbidden = setOf("exec", "eval", "compile", "getattr", "setattr", "delattr", "globals", "locals", "vars",
	"breakpoint", "help")

// pythonDunders are the __names__ a program may read: its own name and file.
var pythonDunders = setOf("__name__", "__file__", "__doc__", "__main__")

var (
	pyName       = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*(?:\s*\.\s*[A-Za-z_][A-Za-z0-9_]*)*`)
	pyFromImport = regexp.MustCompile(`\bfrom\s+([A-Za-z0-9_.]+)\s+import\s+(\([^)]*\)|[^\n;]+)`)
	pyImport     = regexp.MustCompile(`\bimport\s+([^\n;]+)`)
	pyOpenMode   = regexp.MustCompile(`^(?:,\s*(?:mode\s*=\s*)?S(\d+))?(?:,\s*encoding\s*=\s*S\d+)?\s*$`)
	pyLiteral    = regexp.MustCompile(`^S\d+$`)
)

// scanPython reads a Python program (see the file's comment).
func scanPython(prog string) (langFinding, bool) {
	var f langFinding
	code, strs, ok := pythonCode(prog)
	if !ok {
		f.runs = "the python program is not one the device reads (an f-string expression with quotes, a character outside ASCII, or an unclosed string)"
		return f, true
	}
	notRead := func(why string) (langFinding, bool) {
		f.runs = "the python program " + why + ", which the device does not follow"
		return f, true
	}
	names := map[string]string{} // a name the imports bind -> its module
	bind := func(module, as string) bool {
		if _, ok := pythonModules[module]; !ok {
			return false
		}
		names[as] = module
		return true
	}
	// from M import a, b as c: each name must be an attribute M allows.
	code = pyFromImport.ReplaceAllStringFunc(code, func(s string) string {
		m := pyFromImport.FindStringSubmatch(s)
		for _, part := range strings.Split(strings.Trim(m[2], "() \t"), ",") {
			fields := strings.Fields(part)
			if len(fields) == 0 {
				continue
			}
			attr, as := fields[0], fields[len(fields)-1]
			if len(fields) != 1 && (len(fields) != 3 || fields[1] != "as") || !pythonAttrAllowed(m[1], attr) {
				ok = false
				continue
			}
			if _, isModule := pythonModules[m[1]+"."+attr]; isModule {
				names[as] = m[1] + "." + attr
			} else {
				names[as] = m[1] + ":" + attr // a function or value of M
			}
		}
		return ";"
	})
	if !ok {
		return notRead("imports a name the device does not read")
	}
	code = pyImport.ReplaceAllStringFunc(code, func(s string) string {
		for _, part := range strings.Split(pyImport.FindStringSubmatch(s)[1], ",") {
			fields := strings.Fields(part)
			switch {
			case len(fields) == 1:
				// import os.path binds os
				top, _, _ := strings.Cut(fields[0], ".")
				if !bind(fields[0], top) {
					ok = false
				}
				names[top] = top
			case len(fields) == 3 && fields[1] == "as":
				if !bind(fields[0], fields[2]) {
					ok = false
				}
			default:
				ok = false
			}
		}
		return ";"
	})
	if !ok {
		return notRead("imports a module the device does not read")
	}
	for _, loc := range pyName.FindAllStringIndex(code, -1) {
		chain := strings.Fields(strings.ReplaceAll(code[loc[0]:loc[1]], ".", " "))
		for _, part := range chain {
			if strings.HasPrefix(part, "__") && !pythonDunders[part] {
				return notRead("names " + part)
			}
		}
		head := chain[0]
		if pythonForbidden[head] && (loc[0] == 0 || code[loc[0]-1] != '.') {
			return notRead("uses " + head)
		}
		if loc[0] > 0 && code[loc[0]-1] == '.' {
			continue // an attribute of something else: checked with its head
		}
		after := strings.TrimLeft(code[loc[1]:], " \t")
		if head == "open" {
			if !strings.HasPrefix(after, "(") || len(chain) > 1 {
				return notRead("uses open other than to read a file it names")
			}
			args, ok := pythonCallArgs(after)
			args = strings.TrimSpace(args)
			m := pyOpenMode.FindStringSubmatch(strings.TrimPrefix(args, firstArg(args)))
			file, literal := pythonLiteral(firstArg(args), strs)
			if !ok || !literal || m == nil || m[1] != "" && !slices.Contains([]string{"r", "rb", "rt", "br", "tr"}, strs[atoiOr(m[1])]) {
				return notRead("opens a file other than for reading by its name")
			}
			f.reads = append(f.reads, file)
			continue
		}
		module, imported := names[head]
		if !imported {
			continue // a local name or a builtin such as print or len
		}
		if strings.Contains(module, ":") {
			continue // a function imported by name, allowed by its module
		}
		// A module is used through an allowed attribute, never bare.
		path := module
		for _, attr := range chain[1:] {
			if !pythonAttrAllowed(path, attr) {
				return notRead("uses " + path + "." + attr)
			}
			if _, sub := pythonModules[path+"."+attr]; !sub {
				break
			}
			path += "." + attr
		}
		if len(chain) == 1 && !strings.HasPrefix(after, "(") {
			return notRead("uses the module " + head + " as a value")
		}
		if module == "os" && len(chain) > 1 && (chain[1] == "environ" || chain[1] == "getenv") {
			f.env = true
		}
	}
	return f, true
}

// pythonAttrAllowed reports whether module's attribute attr is one the
// list allows.
func pythonAttrAllowed(module, attr string) bool {
	attrs := pythonModules[module]
	return slices.Contains(attrs, "*") || slices.Contains(attrs, attr)
}

// pythonCode is the program with comments removed and each string
// literal replaced by S<index>; strs holds the literals' values (escapes
// left as written, which is enough to compare a mode or show a name). An
// f-string's {expressions} are kept as code after its placeholder; one
// with a quote, a backslash or a brace inside its braces is refused, so
// that the string ends where both Python 3.11 and 3.12 end it.
func pythonCode(prog string) (code string, strs []string, ok bool) {
	var b strings.Builder
	for i := 0; i < len(prog); {
		c := prog[i]
		switch {
		case c >= 0x80:
			return "", nil, false // an identifier Python would fold into ASCII
		case c == '#':
			for i < len(prog) && prog[i] != '\n' {
				i++
			}
		case c == '\'' || c == '"':
			fstring := strings.ContainsAny(pythonStringPrefix(b.String()), "fF")
			quote := string(c)
			if strings.HasPrefix(prog[i:], strings.Repeat(quote, 3)) {
				quote = strings.Repeat(quote, 3)
			}
			var exprs []string
			j := i + len(quote)
			for {
				if j >= len(prog) || len(quote) == 1 && prog[j] == '\n' {
					return "", nil, false
				}
				if prog[j] == '\\' {
					j += 2
					continue
				}
				if fstring && prog[j] == '{' {
					if strings.HasPrefix(prog[j:], "{{") {
						j += 2
						continue
					}
					end := strings.IndexAny(prog[j+1:], "}'\"\\{\n")
					if end < 0 || prog[j+1+end] != '}' {
						return "", nil, false
					}
					exprs = append(exprs, prog[j+1:j+1+end])
					j += end + 2
					continue
				}
				if strings.HasPrefix(prog[j:], quote) {
					break
				}
				j++
			}
			strs = append(strs, prog[i+len(quote):j])
			b.WriteString("S" + strconv.Itoa(len(strs)-1))
			for _, e := range exprs {
				if strings.IndexFunc(e, func(r rune) bool { return r >= 0x80 }) >= 0 {
					return "", nil, false
				}
				b.WriteString(" (" + e + ") ")
			}
			i = j + len(quote)
			continue
		default:
			b.WriteByte(c)
		}
		i++
	}
	return b.String(), strs, true
}

// pythonStringPrefix is the string prefix (r, b, f, rb ...) just written.
func pythonStringPrefix(code string) string {
	end := len(code)
	start := end
	for start > 0 && strings.IndexByte("rRbBuUfF", code[start-1]) >= 0 {
		start--
	}
	if start > 0 && (code[start-1] == '_' || code[start-1] >= 'a' && code[start-1] <= 'z' || code[start-1] >= 'A' && code[start-1] <= 'Z' || code[start-1] >= '0' && code[start-1] <= '9') {
		return "" // the end of a name, not a prefix
	}
	return code[start:end]
}

// pythonCallArgs is the text inside the parentheses that s starts with.
func pythonCallArgs(s string) (string, bool) {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return s[1:i], true
			}
		}
	}
	return "", false
}

// firstArg is the first argument of an argument list (no nesting in it).
func firstArg(args string) string {
	first, _, _ := strings.Cut(args, ",")
	return strings.TrimSpace(first)
}

// pythonLiteral is the value of S<n>, a whole string literal.
func pythonLiteral(s string, strs []string) (string, bool) {
	if !pyLiteral.MatchString(s) {
		return "", false
	}
	return strs[atoiOr(s[1:])], true
}

// atoiOr is the number of digits s (which the callers' patterns made).
func atoiOr(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
