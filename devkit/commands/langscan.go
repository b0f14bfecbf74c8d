// Code in another language given on a command line (kind code:LANG): the
// device shows it and marks it "runs LANG code", except for the small
// languages whose dangerous constructs it can find by reading the text
// (awk's system, getline and pipes; sed's e command and w files; jq's env),
// where ordinary programs stay understood with no mark.
package commands

import "strings"

// langFinding is what a scan of a small language found.
type langFinding struct {
	runs     string   // runs commands: why (not understood)
	env      bool     // reads the whole environment
	writes   []string // files it writes
	dynWrite bool     // writes a file named at run time
	reads    []string // files it reads by name
	hosts    []string // hosts it connects to (gawk's /inet special files)
}

// langScanners are the languages the device reads; any other language is
// marked as code that runs.
var langScanners = map[string]func(string) (langFinding, bool){
	"awk":    scanAwk,
	"sed":    scanSed,
	"jq":     scanJq,
	"python": scanPython, // langscan_python.go
	"perl":   scanPerl,
	"psql":   scanSQLClient("psql"), // checks_sql.go
	"mysql":  scanSQLClient("mysql"),
}

// scanAwk reads an awk program (https://www.gnu.org/software/gawk/manual/gawk.html):
// system() and a pipe (print | "cmd", "cmd" | getline, |&) run commands;
// print > "file" and >> write it; getline < "file" reads it; a file named
// /inet/tcp/LPORT/HOST/RPORT (or /inet4, /inet6, udp) is a network
// connection in gawk.
func scanAwk(prog string) (langFinding, bool) {
	var f langFinding
	if strings.Contains(prog, "system") || pipeInAwk(prog) {
		f.runs = "the awk program runs commands (system or a pipe)"
	}
	if strings.Contains(prog, "ENVIRON") || strings.Contains(prog, "PROCINFO") {
		f.env = true
	}
	awkRedirections(prog, &f)
	return f, true
}

// awkRedirections finds the files a print statement writes (a > or >>
// outside parentheses, up to the statement's end) and getline reads
// (getline [var] < "file"), and the /inet files among all strings.
func awkRedirections(prog string, f *langFinding) {
	inPrint, depth := false, 0
	for i := 0; i < len(prog); i++ {
		c := prog[i]
		switch {
		case c == '"':
			lit, end := awkString(prog, i)
			if h := awkInetHost(lit); h != "" {
				f.hosts = append(f.hosts, h)
			}
			i = end
		case c == '\\':
			i++
		case awkWordAt(prog, i, "printf") || awkWordAt(prog, i, "print"):
			inPrint, depth = true, 0
		case awkWordAt(prog, i, "getline"):
			j := i + len("getline")
			j = skipSpace(prog, j)
			for j < len(prog) && (isAwkNameByte(prog[j]) || prog[j] == '$') {
				j++
			}
			j = skipSpace(prog, j)
			if j < len(prog) && prog[j] == '<' {
				j = skipSpace(prog, j+1)
				if j < len(prog) && prog[j] == '"' {
					lit, _ := awkString(prog, j)
					f.reads = append(f.reads, lit)
				}
			}
		case !inPrint:
		case c == '(' || c == '[':
			depth++
		case c == ')' || c == ']':
			depth--
		case c == ';' || c == '}' || c == '\n':
			inPrint = false
		case c == '>' && depth == 0:
			j := i + 1
			if j < len(prog) && prog[j] == '>' {
				j++
			}
			j = skipSpace(prog, j)
			if j < len(prog) && prog[j] == '"' {
				lit, end := awkString(prog, j)
				if awkInetHost(lit) == "" {
					f.writes = append(f.writes, lit)
				} else {
					f.hosts = append(f.hosts, awkInetHost(lit))
				}
				i = end
			} else {
				f.dynWrite = true
				i = j - 1
			}
			inPrint = false
		}
	}
}

// awkString is the string literal starting at the quote at i, and the
// index of its closing quote.
func awkString(s string, i int) (string, int) {
	var b strings.Builder
	j := i + 1
	for ; j < len(s) && s[j] != '"'; j++ {
		if s[j] == '\\' && j+1 < len(s) {
			j++
		}
		b.WriteByte(s[j])
	}
	return b.String(), j
}

// awkInetHost is the host of a gawk network special file ("" if none).
func awkInetHost(name string) string {
	parts := strings.Split(name, "/")
	if len(parts) < 6 || parts[0] != "" || !strings.HasPrefix(parts[1], "inet") {
		return ""
	}
	return parts[4]
}

func awkWordAt(s string, i int, word string) bool {
	return strings.HasPrefix(s[i:], word) && (i == 0 || !isAwkNameByte(s[i-1])) &&
		(i+len(word) == len(s) || !isAwkNameByte(s[i+len(word)]))
}

func isAwkNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// pipeInAwk reports a | outside strings that is not ||.
func pipeInAwk(prog string) bool {
	inStr := false
	for i := 0; i < len(prog); i++ {
		switch prog[i] {
		case '\\':
			i++
		case '"':
			inStr = !inStr
		case '|':
			if !inStr && (i+1 >= len(prog) || prog[i+1] != '|') && (i == 0 || prog[i-1] != '|') {
				return true
			}
		}
	}
	return false
}

func scanJq(prog string) (langFinding, bool) {
	var f langFinding
	if strings.Contains(prog, "env") || strings.Contains(prog, "$ENV") {
		f.env = true
	}
	return f, true
}

// scanSed finds GNU sed's e command and s///e flag (they run commands),
// and the files its w, W commands and s///w flag write.
func scanSed(s string) (langFinding, bool) {
	var f langFinding
	i := 0
	for i < len(s) {
		for i < len(s) && strings.IndexByte(" \t\n;{}!", s[i]) >= 0 {
			i++
		}
		// an address: digits, $, /re/, ranges
		for i < len(s) {
			switch {
			case s[i] >= '0' && s[i] <= '9' || s[i] == '$' || s[i] == ',' || s[i] == '~' || s[i] == '+' || s[i] == ' ' || s[i] == '!':
				i++
				continue
			case s[i] == '/' || s[i] == '\\':
				if s[i] == '\\' {
					i++
				}
				if i >= len(s) {
					break
				}
				d := s[i]
				j := i + 1
				for j < len(s) && s[j] != d {
					if s[j] == '\\' {
						j++
					}
					j++
				}
				i = j + 1
				continue
			}
			break
		}
		if i >= len(s) {
			return f, true
		}
		switch s[i] {
		case 'e':
			f.runs = "the sed script runs commands (the e command)"
			return f, true
		case 's', 'y':
			if i+1 >= len(s) {
				return f, true
			}
			d := s[i+1]
			j, parts := i+2, 0
			for j < len(s) && parts < 2 {
				if s[j] == '\\' {
					j += 2
					continue
				}
				if s[j] == d {
					parts++
				}
				j++
			}
			for j < len(s) && strings.IndexByte("gpiImMwe0123456789", s[j]) >= 0 {
				if s[j] == 'e' {
					f.runs = "the sed script runs commands (the e flag of s)"
					return f, true
				}
				if s[j] == 'w' {
					file, end := sedFile(s, j+1)
					f.writes = append(f.writes, file)
					j = end
					break
				}
				j++
			}
			i = j
		case 'w', 'W':
			file, end := sedFile(s, i+1)
			f.writes = append(f.writes, file)
			i = end
		case 'r', 'R':
			_, end := sedFile(s, i+1)
			i = end
		case 'a', 'i', 'c', 'b', 't', 'T', ':':
			for i < len(s) && s[i] != '\n' && s[i] != ';' {
				i++
			}
		default:
			i++
		}
	}
	return f, true
}

// sedFile reads the file name after w or r: to the end of the line.
func sedFile(s string, i int) (string, int) {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	j := i
	for j < len(s) && s[j] != '\n' {
		j++
	}
	return strings.TrimSpace(s[i:j]), j
}

// scanPerl reads the one Perl program the device can read without being
// perl: substitutions and transliterations only (perl -pi -e
// 's/Old/New/g'), as sed's s command (https://perldoc.perl.org/perlop#Regexp-Quote-Like-Operators).
// A pattern or replacement interpolates variables and, through @{[ ]} and
// (?{ }), runs code, so neither may hold @ or a $ other than the
// pattern's end anchor; the e flag (the replacement is code) is refused.
// Any other program is code that runs.
func scanPerl(prog string) (langFinding, bool) {
	var f langFinding
	refuse := func() (langFinding, bool) {
		f.runs = "the perl program is more than substitutions the device reads"
		return f, true
	}
	for _, stmt := range strings.Split(prog, ";") {
		stmt = strings.TrimSpace(stmt)
		if stmt == "" {
			continue
		}
		op, parts := "s", 2
		switch {
		case strings.HasPrefix(stmt, "tr"):
			op = "tr"
		case strings.HasPrefix(stmt, "y"):
			op = "y"
		case !strings.HasPrefix(stmt, "s"):
			return refuse()
		}
		rest := stmt[len(op):]
		if rest == "" || !strings.ContainsRune("/|#,:!", rune(rest[0])) {
			return refuse()
		}
		d := rest[0]
		fields := []string{}
		cur, i := "", 1
		for ; i < len(rest) && len(fields) < parts; i++ {
			switch {
			case rest[i] == '\\' && i+1 < len(rest):
				cur += rest[i : i+2]
				i++
			case rest[i] == d:
				fields = append(fields, cur)
				cur = ""
			default:
				cur += string(rest[i])
			}
		}
		if len(fields) < parts {
			return refuse()
		}
		flags := rest[i:]
		if strings.Trim(flags, "gimsxr") != "" || op != "s" && strings.Trim(flags, "cdsr") != "" {
			return refuse()
		}
		pat, repl := fields[0], fields[1]
		if strings.ContainsAny(pat+repl, "@") || strings.Contains(pat, "(?{") || strings.Contains(pat, "(??{") || strings.Contains(repl, "$") ||
			strings.Contains(strings.NewReplacer("$)", "", "$|", "").Replace(strings.TrimSuffix(pat, "$")), "$") {
			return refuse()
		}
	}
	return f, true
}
