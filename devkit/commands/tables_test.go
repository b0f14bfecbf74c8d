// Tests of the table loader: every embedded table loads, and the loader
// refuses what the format does not define, naming file and line.
package commands

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// TestTablesLoad loads every embedded table, each file on its own (its own
// errors) and then all together (duplicate names across files), and
// prints every error as file:line.
func TestTablesLoad(t *testing.T) {
	entries, err := tableFiles.ReadDir("tables")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) == 0 {
		t.Fatal("no tables embedded")
	}
	for _, e := range entries {
		data, err := tableFiles.ReadFile("tables/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		progs, errs := parseTableFile("tables/"+e.Name(), string(data))
		for _, err := range errs {
			t.Error(err)
		}
		if len(errs) == 0 && len(progs) == 0 {
			t.Errorf("tables/%s: no program in it", e.Name())
		}
	}
	c, errs := loadTables(tableFiles, "tables")
	for _, err := range errs {
		if le, ok := err.(loadError); ok && strings.Contains(le.msg, "already described at") && strings.HasPrefix(le.msg, "program ") {
			t.Error(err) // across files: the per-file pass cannot see it
		}
	}
	if c == nil && len(errs) == 0 {
		t.Fatal("no catalog and no error")
	}
	if c != nil {
		t.Logf("%d tables, %d program names", len(c.programs), len(c.byName))
	}
}

// TestTableLoaderRefuses feeds the loader one defect at a time and wants
// an error on the defect's own line.
func TestTableLoaderRefuses(t *testing.T) {
	const head = "program p\nmanual https://example.org/p\n"
	cases := []struct {
		name, text string
		line       int
		want       string
	}{
		{"unknown directive", head + "option -x\n", 3, "unknown directive"},
		{"unknown kind", head + "opt -x =filez\n", 3, "unknown kind"},
		{"unknown operand kind", head + "operands file blob\n", 3, "unknown kind"},
		{"unknown effect", head + "opt -x explodes\n", 3, "unknown effect"},
		{"unknown effect line", head + "effect writes explodes\n", 3, "unknown effect"},
		{"unknown check", head + "operands word check=nothing\n", 3, "unknown check"},
		{"unknown syntax", head + "syntax bsd\n", 3, "unknown syntax"},
		{"unknown class", head + "class harmless\n", 3, "unknown class"},
		{"no manual", "program p\nopt -x\n", 1, "no manual"},
		{"odd indent", head + "sub s\n   opt -x\n", 4, "indentation"},
		{"indent without sub", head + "  opt -x\n", 3, "indented"},
		{"tab", head + "opt\t-x\n", 3, "tab"},
		{"duplicate option", head + "opt -x\nopt -y,-x\n", 4, "already described"},
		{"duplicate sub", head + "sub a\nsub b,a\n", 4, "already described"},
		{"long one-dash option under gnu", head + "opt -name =word\n", 3, "one-dash"},
		{"read-only form too long", head + "form a b c read-only\n", 3, "at most two words"},
		{"read-only and writes", head + "opt -x read-only writes\n", 3, "read-only together"},
		{"effect before kind", head + "operands writes file\n", 3, "operands needs at least one kind"},
		{"two rests", head + "operands file... word...\n", 3, "takes the rest only once"},
		{"kind after argv", head + "operands argv word\n", 3, "after argv"},
		{"enum without values", head + "operands enum:\n", 3, "enum needs values"},
		{"code without language", head + "operands code\n", 3, "code needs a language"},
		{"before program", "opt -x\n", 1, "before any program"},
	}
	for _, c := range cases {
		_, errs := parseTableFile("t.txt", c.text)
		found := false
		for _, err := range errs {
			le := err.(loadError)
			if le.line == c.line && strings.Contains(le.msg, c.want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%s: want an error %q at t.txt:%d, got %v", c.name, c.want, c.line, errs)
		}
	}
	// The same name in two files is refused with both places named.
	fsys := fstest.MapFS{
		"tables/a.txt": {Data: []byte(head)},
		"tables/b.txt": {Data: []byte("program q p\nmanual https://example.org/q\n")},
	}
	_, errs := loadTables(fsys, "tables")
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "tables/b.txt:1: program p is already described at tables/a.txt:1") {
		t.Errorf("duplicate across files: got %v", errs)
	}
}

// TestTableLoaderAccepts: a well-formed table with every construct loads
// into the structure the matcher reads.
func TestTableLoaderAccepts(t *testing.T) {
	text := `# comment
program tool tl
manual https://example.org/tool
syntax gnu
class other
effect reads-code=Toolfile,~/.toolrc
opt -C =dir
opt --color =?enum:auto|never
sub run runs
  opt -f,--file =file
  operands word...
sub show read-only
  form --all read-only
  operands word
form --version read-only whole
`
	progs, errs := parseTableFile("t.txt", text)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	p := progs[0]
	if len(p.names) != 2 || p.manual != "https://example.org/tool" || len(p.subs) != 2 || len(p.forms) != 1 || !p.forms[0].whole {
		t.Fatalf("parsed %+v", p)
	}
	if o := p.opts[1]; o.value == nil || !o.optional || o.value.name != "enum" || len(o.value.enum) != 2 {
		t.Errorf("--color parsed as %+v", o)
	}
	if s := p.subs[0]; !s.eff.runs || s.opts[0].value.name != "file" || !s.operands[0].kinds[0].rest || s.path() != "tool run" {
		t.Errorf("sub run parsed as %+v", s)
	}
	if !slices.Equal(p.eff.readsCode, []string{"Toolfile", "~/.toolrc"}) {
		t.Errorf("reads-code parsed as %v", p.eff.readsCode)
	}
}
