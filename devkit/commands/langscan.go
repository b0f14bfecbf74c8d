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
	readsAll bool     // reads files named at run time
}

// langScanners are the languages the device reads; any other language is
// marked as code that runs.
var langScanners = map[string]func(string) (langFinding, bool){
	"awk": scanAwk,
	"sed": scanSed,
	"jq":  scanJq,
}

func scanAwk(prog string) (langFinding, bool) {
	var f langFinding
	if strings.Contains(prog, "system") || strings.Contains(prog, "getline") || pipeInAwk(prog) {
		f.runs = "the awk program runs commands (system, getline or a pipe)"
	}
	if strings.Contains(prog, "ENVIRON") || strings.Contains(prog, "PROCINFO") {
		f.env = true
	}
	if strings.Contains(prog, "print >") || strings.Contains(prog, "printf >") || strings.Contains(prog, ">>") || strings.Contains(prog, "> \"") {
		f.readsAll = true
	}
	return f, true
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
