// Connection strings (kind conninfo: psql's dbname operand and -d,
// mongosh's address, redis-cli -u): the value names the server the client
// connects to. A delivered secret that is the whole string is a database
// URL, and goes to the server it names, which is what it is for; a string
// the script wrote names its own host, and a secret inside it (the
// password) is sent there.
package commands

import (
	"fmt"
	"slices"
	"strings"
)

// wholeVar is the variable a word is made of alone ($V, "$V", ${V},
// "${V}"), or "".
func wholeVar(shown string) string {
	s := shown
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	s, ok := strings.CutPrefix(s, "$")
	if !ok {
		return ""
	}
	if inner, braced := strings.CutPrefix(s, "{"); braced {
		s, ok = strings.CutSuffix(inner, "}")
		if !ok {
			return ""
		}
	}
	if !isShellName(s) {
		return ""
	}
	return s
}

// conninfoHost is the host a connection string names: a URI's host
// (postgresql://u:$PGPASSWORD@db.example/app names db.example), or the
// host= key of a keyword form; "" for a plain database name (the client's
// default server). A host part built at run time is a destination decided
// at run time.
func conninfoHost(v word) string {
	s := v.val
	if !v.fixed {
		s = strings.Trim(v.shown, `"`)
	}
	h := ""
	switch {
	case strings.Contains(s, "://"):
		h, _ = hostOfURL(s)
	case strings.Contains(s, "="):
		for _, kv := range strings.Fields(s) {
			if k, val, _ := strings.Cut(kv, "="); k == "host" || k == "hostaddr" {
				h = strings.Trim(val, `'`)
			}
		}
	case !v.fixed:
		return "(a destination decided at run time)"
	}
	if strings.ContainsAny(h, "$`") {
		return "(a destination decided at run time)"
	}
	return h
}

// connWord is a word that is a delivered secret alone, given as a
// connection string: the variable and the word's index in the command.
type connWord struct {
	name string
	idx  int
}

// toItsServer records that the secrets in conns, each a whole connection
// string, go to the server they name (a destination line, not a mark), and
// returns the command with those words no longer counted as sending them
// elsewhere; the same secret in another word is still counted.
func (w *walker) toItsServer(c *simpleCmd, name string, conns []connWord) *simpleCmd {
	cc := *c
	cc.taints = slices.Clone(c.taints)
	cc.named = slices.Clone(c.named)
	var vars []string
	for _, cw := range conns {
		if cw.idx < len(cc.taints) {
			cc.taints[cw.idx] = ""
		}
		if k := slices.Index(cc.named, cw.name); k >= 0 {
			cc.named = slices.Delete(cc.named, k, k+1)
		}
		vars = append(vars, cw.name)
	}
	for _, v := range uniq(vars) {
		w.a.Destinations = append(w.a.Destinations, fmt.Sprintf("the server %s names: %s connects with the secret %s as its connection string, which is what it is for (line %d)", v, w.display(name), v, c.line))
	}
	return &cc
}
