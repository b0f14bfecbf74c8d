// Tests of the dotenv reader (secret_dotenv.go): the values dotenvy would
// give for the same file, malformed files and line numbers in errors.

package main

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// noEnv is an empty environment for substitution.
func noEnv(string) (string, bool) { return "", false }

// TestParseDotenv is the table of dotenvy 0.15.7's behaviour (the crate the
// reference client reads --from-env-file with): each expected value follows
// dotenvy's documentation and its own tests (tests/test-variable-
// substitution.rs, the parse.rs unit tests), so a file uploads the same
// values from either client.
func TestParseDotenv(t *testing.T) {
	type kv = [2]string
	env := func(name string) (string, bool) {
		v, ok := map[string]string{"KEY": "value", "KEY1": "value1", "HOME": "/home/me"}[name]
		return v, ok
	}
	cases := []struct {
		name string
		in   string
		want []kv
	}{
		{"plain", "A=1\nB=two\n", []kv{{"A", "1"}, {"B", "two"}}},
		{"blank lines and comments", "\n# comment\n   # indented comment\n\nA=1\n\n", []kv{{"A", "1"}}},
		{"export prefix", "export A=1\nexport   SHELL_LOVER=1\n", []kv{{"A", "1"}, {"SHELL_LOVER", "1"}}},
		{"a variable named export", "export=3\n", []kv{{"export", "3"}}},
		{"spaces around the equals sign", "A = x\nB= y\nC =z\n", []kv{{"A", "x"}, {"B", "y"}, {"C", "z"}}},
		{"trailing spaces are dropped", "A=x  \t\n", []kv{{"A", "x"}}},
		{"inline comment after a space", "A=value # note\nB=x\t#note\n", []kv{{"A", "value"}, {"B", "x"}}},
		{"hash inside a value, a value starting with hash is a comment", "A=a#b\nB=#start\n", []kv{{"A", "a#b"}, {"B", ""}}},
		{"empty values", "A=\nB=''\nC=\"\"\nD=     \nE=   # foo\n", []kv{{"A", ""}, {"B", ""}, {"C", ""}, {"D", ""}, {"E", ""}}},
		{"single quotes are literal", `A='x\ny $KEY ${KEY} "q" # not a comment'`, []kv{{"A", `x\ny $KEY ${KEY} "q" # not a comment`}}},
		{"quoted spaces", "A='fo ur'\nB=\"fi ve\"\n", []kv{{"A", "fo ur"}, {"B", "fi ve"}}},
		{"escaped space unquoted", `A=s\ ix` + "\n" + `B=my\ cool\ value`, []kv{{"A", "s ix"}, {"B", "my cool value"}}},
		{"double-quote escapes", `A="awesome stuff \"mang\""` + "\n" + `B="l1\nl2 \\ \$KEY \' end"`, []kv{{"A", `awesome stuff "mang"`}, {"B", "l1\nl2 \\ $KEY ' end"}}},
		{"pieces join", `A='sweet $\fgs'\''fds'` + "\n" + `B="'\"yay\\"\ "stuff"`, []kv{{"A", `sweet $\fgs'fds`}, {"B", `'"yay\ stuff`}}},
		{"comment after the closing quote", `A="lol" #well you see` + "\nB='w'  \n", []kv{{"A", "lol"}, {"B", "w"}}},
		{"quoted value over lines", "A=\"first\nsecond\"\nB='x\ny'\nC=3\n", []kv{{"A", "first\nsecond"}, {"B", "x\ny"}, {"C", "3"}}},
		{"comment containing a quote", "# don't\nA=1\n", []kv{{"A", "1"}}},
		{"CRLF line ends", "A=1\r\nB=\"2\"\r\n", []kv{{"A", "1"}, {"B", "2"}}},
		{"no final newline", "A=1", []kv{{"A", "1"}}},
		{"equals in value", "A=b=c\n", []kv{{"A", "b=c"}}},
		{"unicode value", "A=été✓\n", []kv{{"A", "été✓"}}},
		// Substitution (tests/test-variable-substitution.rs): the environment
		// first, then earlier lines; a bare name is letters and digits only.
		{"substitution table", "KEY1=new_value1\nKEY_U=$KEY+valueU\n" +
			"STRONG='$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY'\n" +
			"WEAK=\"$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY\"\n" +
			"NONE=$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY\n",
			[]kv{{"KEY1", "new_value1"}, {"KEY_U", "value+valueU"},
				{"STRONG", "$ZZZ>>$KEY>>$KEY1>>${KEY}1>>$KEY_U>>${KEY_U}>>\\$KEY"},
				{"WEAK", ">>value>>value1>>value1>>value_U>>value+valueU>>$KEY"},
				{"NONE", ">>value>>value1>>value1>>value_U>>value+valueU>>$KEY"}}},
		{"braces in double quotes", "B=test\nC=\"${B}\"\n", []kv{{"B", "test"}, {"C", "test"}}},
		{"undefined is empty", `A=">$NOPE<>${NOPE2}<"`, []kv{{"A", "><><"}}},
		{"escaped dollar", `A=>\$KEY1<>\${KEY2}<` + "\n" + `B=">\$KEY1<>\${KEY2}<"`, []kv{{"A", ">$KEY1<>${KEY2}<"}, {"B", ">$KEY1<>${KEY2}<"}}},
		{"same variable twice", "V=VALUE\nW=$V$V\n", []kv{{"V", "VALUE"}, {"W", "VALUEVALUE"}}},
		{"only earlier lines", "X=${Y}+X_VALUE\nY=${X}+Y_VALUE\n", []kv{{"X", "+X_VALUE"}, {"Y", "+X_VALUE+Y_VALUE"}}},
		{"bare name ends at separators", "U=test_user\nU_1=test_user_with_separator\nA=\">$U_1<>$U}<>$U{<\"\n",
			[]kv{{"U", "test_user"}, {"U_1", "test_user_with_separator"}, {"A", ">test_user_1<>test_user}<>test_user{<"}}},
		{"environment overrides the file", "KEY=file\nA=\">${KEY}<\"\nHOMEDIR=$HOME/x\n", []kv{{"KEY", "file"}, {"A", ">value<"}, {"HOMEDIR", "/home/me/x"}}},
		{"a lone dollar disappears", "A=pa$$word\nB=cost$-5\n", []kv{{"A", "pa"}, {"B", "cost-5"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			entries, err := parseDotenv(`".env"`, []byte(c.in), env)
			if err != nil {
				t.Fatal(err)
			}
			var got []kv
			for _, e := range entries {
				got = append(got, kv{e.Name, e.Value})
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestParseDotenvLineNumbers(t *testing.T) {
	entries, err := parseDotenv("f", []byte("# c\n\nA=1\nB=\"x\ny\"\nC=3\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, e := range entries {
		lines = append(lines, e.Line)
	}
	if !slices.Equal(lines, []int{3, 4, 6}) {
		t.Errorf("lines %v, want [3 4 6]", lines)
	}
}

// TestParseDotenvMalformed: what dotenvy rejects is rejected, with the line
// number in the error and neither the value nor the text of the line: the
// secret "hunter2" is on every malformed line.
func TestParseDotenvMalformed(t *testing.T) {
	const secret = "hunter2"
	cases := []struct {
		name string
		in   string
		line int
	}{
		{"no equals sign", "A=1\nhunter2\n", 2},
		{"bad name", "A=1\n\n9hunter2=x\n", 3},
		{"name with a space", "MY hunter2=x\n", 1},
		{"name with a dot", "A.hunter2=x\n", 1},
		{"empty name", "=hunter2\n", 1},
		{"unquoted space", "A=my hunter2 value\n", 1},
		{"unterminated double quote", "A=1\nB=\"hunter2\nC=2\n", 2},
		{"unterminated single quote", "B='hunter2\n", 1},
		{"unterminated braces", "A=>${hunter2{<\n", 1},
		{"a bare name before the closing quote", "A=\"$hunter2\"\n", 1},
		{"unknown escape", `A="hunter2\q"`, 1},
		{"tab escape", `A="hunter2\t"`, 1},
		{"backslash at line end", "A=\"hunter2\\\n\"", 1},
		{"invalid UTF-8", "A=1\nB=hunter2\xff\n", 2},
		{"invalid UTF-8 inside quotes", "A=\"hunter2\n\xff\"\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseDotenv(`"secrets.env"`, []byte(c.in), noEnv)
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, `environment file "secrets.env" isn't valid: line `+strconv.Itoa(c.line)+": ") {
				t.Errorf("error %q does not name the file and line %d", msg, c.line)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "hunter") {
				t.Errorf("error %q contains the secret", msg)
			}
		})
	}
}

// ---- command line ----
