// Named checks for database clients (tables/database.txt, Step 21): SQL
// given on the command line (psql -c, mysql -e, sqlite3 DB SQL) and
// MongoDB shell code (mongosh --eval). A statement that drops, deletes,
// truncates, alters, updates, inserts or grants is irreversible; a plain
// read (SELECT, SHOW, EXPLAIN, a schema listing) adds nothing, so the
// table's read-only class stands; a shell escape (psql and mysql "\!",
// sqlite3 ".shell"/".system"), a statement that runs a program or loads a
// library, or one the check does not know makes the command not
// understood. The manuals: https://www.postgresql.org/docs/current/app-psql.html,
// https://dev.mysql.com/doc/refman/8.4/en/mysql-commands.html,
// https://sqlite.org/cli.html, https://www.mongodb.com/docs/mongodb-shell/.
package commands

import (
	"strings"
	"unicode"
)

// sqlReadStatements start a statement that only reads (or only frames a
// transaction around reads).
var sqlReadStatements = map[string]bool{
	"SELECT": true, "WITH": true, "SHOW": true, "EXPLAIN": true, "DESCRIBE": true, "DESC": true,
	"TABLE": true, "VALUES": true, "BEGIN": true, "START": true, "COMMIT": true, "END": true,
	"ROLLBACK": true,
}

// sqlChangeStatements start a statement that changes the database for
// good as far as a person approving it can tell: the data, the schema or
// who may use it.
var sqlChangeStatements = map[string]bool{
	"DROP": true, "DELETE": true, "TRUNCATE": true, "ALTER": true, "UPDATE": true, "INSERT": true,
	"REPLACE": true, "MERGE": true, "UPSERT": true, "GRANT": true, "REVOKE": true, "CREATE": true,
	"RENAME": true, "COPY": true, "VACUUM": true, "REINDEX": true, "CLUSTER": true, "COMMENT": true,
	"REFRESH": true, "IMPORT": true, "DETACH": true,
}

// sqlChangeWords inside a read statement make it a change too (a WITH
// that deletes, EXPLAIN ANALYZE that runs an UPDATE, SELECT ... INTO).
var sqlChangeWords = map[string]bool{
	"DROP": true, "DELETE": true, "TRUNCATE": true, "ALTER": true, "UPDATE": true, "INSERT": true,
	"MERGE": true, "GRANT": true, "REVOKE": true, "CREATE": true, "INTO": true,
}

// sqlUnseenWords run or load something no table describes, wherever they
// stand: a program, a server file, a library, a procedure, another
// database. (A statement whose first word is unknown is not understood
// anyway, so SET, USE or LOCK need no entry here.)
var sqlUnseenWords = map[string]bool{
	"PROGRAM": true, "CALL": true, "EXEC": true, "EXECUTE": true, "DO": true, "LOAD": true,
	"ATTACH": true, "OUTFILE": true, "DUMPFILE": true, "LOAD_FILE": true, "LOAD_EXTENSION": true,
	"WRITEFILE": true, "READFILE": true, "PG_READ_FILE": true, "PG_READ_BINARY_FILE": true,
	"PG_LS_DIR": true, "LO_IMPORT": true, "LO_EXPORT": true, "DBLINK": true, "DBLINK_EXEC": true,
	"PG_TERMINATE_BACKEND": true, "PG_CANCEL_BACKEND": true, "SET_CONFIG": true,
	"PG_RELOAD_CONF": true, "SETVAL": true, "SLEEP": true, "PG_SLEEP": true, "BENCHMARK": true,
}

// mysqlClientWords are the mysql client's own commands (run a shell, read
// a file of SQL, pipe output to a program, write it to a file, connect
// elsewhere), which it takes at the start of any line of its input.
var mysqlClientWords = map[string]bool{
	"SYSTEM": true, "SOURCE": true, "PAGER": true, "TEE": true, "EDIT": true, "CONNECT": true,
	"NOPAGER": true, "NOTEE": true, "PROMPT": true, "DELIMITER": true,
}

// psqlReadMeta are the psql backslash commands a read may be: listings
// and display settings.
var psqlReadMeta = map[string]bool{
	`\d`: true, `\d+`: true, `\dt`: true, `\dt+`: true, `\di`: true, `\dv`: true, `\ds`: true,
	`\dn`: true, `\dn+`: true, `\df`: true, `\df+`: true, `\du`: true, `\dx`: true, `\l`: true,
	`\l+`: true, `\list`: true, `\conninfo`: true, `\encoding`: true, `\x`: true, `\dp`: true,
	`\dT`: true, `\db`: true, `\dg`: true, `\dm`: true, `\dE`: true, `\des`: true, `\dD`: true,
}

// sqliteReadDot are the sqlite3 dot-commands a read may be.
var sqliteReadDot = map[string]bool{
	".tables": true, ".schema": true, ".indexes": true, ".indices": true, ".databases": true,
	".headers": true, ".header": true, ".mode": true, ".dump": true, ".fullschema": true,
	".dbinfo": true, ".show": true, ".width": true, ".nullvalue": true, ".separator": true,
	".stats": true, ".timer": true, ".changes": true, ".help": true, ".version": true,
}

// checkSQL classifies SQL text given to a database client: in.Words are
// the option's value (psql -c, mysql -e, sqlite3 -cmd).
func checkSQL(in checkInput) checkResult {
	for _, text := range in.Words {
		if r := classifySQL(in.Program, text); r != (checkResult{}) {
			return r
		}
	}
	return checkResult{}
}

// scanSQLClient reads what a database client takes on standard input
// (psql or mysql given no -c/-e/-f: a here-document), as checkSQL reads
// -c: SQL and the client's own commands, of which a shell escape (\!,
// system) or one the device does not know runs what it cannot see.
func scanSQLClient(program string) func(string) (langFinding, bool) {
	return func(text string) (langFinding, bool) {
		if r := classifySQL(program, text); r.NotUnderstood != "" {
			return langFinding{runs: r.NotUnderstood}, true
		}
		return langFinding{}, true
	}
}

// checkSQLiteOperands classifies sqlite3's operands: the database file,
// then SQL or dot-commands, each run in turn.
func checkSQLiteOperands(in checkInput) checkResult {
	if len(in.Words) < 2 {
		return checkResult{}
	}
	return checkSQL(checkInput{Program: in.Program, Argv: in.Argv, Words: in.Words[1:]})
}

// checkMongoshOperands: mongosh runs every operand that names a
// JavaScript file (after the database address), code the device does not
// see.
func checkMongoshOperands(in checkInput) checkResult {
	for _, w := range in.Words {
		if strings.HasSuffix(w, ".js") || strings.HasSuffix(w, ".mjs") || strings.HasSuffix(w, ".cjs") {
			return checkResult{NotUnderstood: "mongosh: " + w + " is a script it runs, which the device does not see"}
		}
	}
	return checkResult{}
}

// migrationVerbs are what a migration tool's command word does when it is
// given after the driver and the database (goose DRIVER DBSTRING COMMAND):
// true for a change, false for a read.
var migrationVerbs = map[string]bool{
	"up": true, "up-by-one": true, "up-to": true, "down": true, "down-to": true, "redo": true,
	"reset": true, "fix": true, "status": false, "version": false, "validate": false,
}

// checkMigrationVerb finds the command word among the operands (after the
// driver and the database string): a change is irreversible; a word it
// does not know is not understood.
func checkMigrationVerb(in checkInput) checkResult {
	if len(in.Words) >= 3 {
		verb := in.Words[2]
		if change, known := migrationVerbs[verb]; known {
			if change {
				return checkResult{Irreversible: in.Program + " " + verb + " changes the database"}
			}
			return checkResult{}
		}
		return checkResult{NotUnderstood: in.Program + ": the command " + verb + " is not one the device knows"}
	}
	return checkResult{NotUnderstood: in.Program + ": no command after the driver and the database"}
}

// classifySQL classifies one SQL text, statement by statement. Both
// findings are kept: a change makes it irreversible (asked of a person
// whatever the policy), and an escape or an unknown statement makes it not
// understood as well, so neither hides the other.
func classifySQL(program, text string) checkResult {
	var r checkResult
	notUnderstood := func(why string) {
		if r.NotUnderstood == "" {
			r.NotUnderstood = why
		}
	}
	irreversible := func(why string) {
		if r.Irreversible == "" {
			r.Irreversible = why
		}
	}
	for _, stmt := range splitSQL(program, text) {
		first := stmt.words[0]
		if stmt.meta != "" {
			if why := sqlMeta(program, stmt.meta); why != "" {
				notUnderstood(why)
			}
			continue
		}
		if first == "" {
			continue
		}
		for _, w := range stmt.words {
			if sqlUnseenWords[w] || (program == "mysql" && mysqlClientWords[w]) {
				notUnderstood(program + ": the SQL uses " + w + ", which can run or read what the device cannot see")
				break
			}
		}
		switch {
		case sqlChangeStatements[first]:
			irreversible("the SQL " + sqlLabel(stmt.words) + " changes the database")
		case sqlReadStatements[first]:
			for _, w := range stmt.words[1:] {
				if sqlChangeWords[w] {
					irreversible("the SQL " + first + " ... " + w + " changes the database")
					break
				}
			}
		default:
			notUnderstood(program + ": the SQL statement " + first + " is not one the device knows")
		}
	}
	return r
}

// sqlLabel names a change by its first words ("DROP TABLE", "DELETE FROM").
func sqlLabel(words []string) string {
	if len(words) > 1 && words[1] != "" {
		return words[0] + " " + words[1]
	}
	return words[0]
}

// sqlMeta judges a client command (psql/mysql backslash, sqlite3 dot):
// "" when it only lists or displays.
func sqlMeta(program, meta string) string {
	name := meta
	if i := strings.IndexFunc(meta, unicode.IsSpace); i >= 0 {
		name = meta[:i]
	}
	switch {
	case program == "sqlite3" && strings.HasPrefix(name, ".") && sqliteReadDot[name] && !strings.ContainsAny(meta, "|"):
		return ""
	case program == "psql" && psqlReadMeta[name] && !strings.ContainsAny(meta, "|`") && !strings.Contains(meta[1:], `\`):
		// A second backslash starts another command on the same line
		// (\\ is psql's separator, \! a shell): only a lone listing
		// passes.
		return ""
	}
	return program + ": the client command " + name + " is not one the device knows (client commands can run a shell, read or write files)"
}

// sqlStatement is one statement: its words outside quotes and comments,
// upper-cased (identifiers and keywords alike), or a client command.
type sqlStatement struct {
	words []string
	meta  string // a backslash or dot command, whole
}

// splitSQL splits SQL text into statements at semicolons outside quotes
// and comments. Quoted text is dropped (a keyword inside a string is
// data); a backslash outside quotes (psql, mysql) or a line starting with
// "." (sqlite3) starts a client command that runs to the end of its line.
// What servers read differently is marked unseen rather than guessed: a
// backslash inside a quoted string (an escape to MySQL, a plain character
// to PostgreSQL, which would end the string there), a dollar sign
// (PostgreSQL's dollar quoting), a MySQL executable comment "/*!", and
// an unterminated quote or comment.
func splitSQL(program, text string) []sqlStatement {
	var out []sqlStatement
	cur := sqlStatement{}
	var word strings.Builder
	flushWord := func() {
		if word.Len() > 0 {
			cur.words = append(cur.words, strings.ToUpper(word.String()))
			word.Reset()
		}
	}
	unseen := func() {
		flushWord()
		cur.words = append(cur.words, "EXEC")
	}
	flush := func() {
		flushWord()
		if len(cur.words) > 0 || cur.meta != "" {
			if len(cur.words) == 0 {
				cur.words = []string{""}
			}
			out = append(out, cur)
		}
		cur = sqlStatement{}
	}
	lineStart := true
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case c == '\\' || (program == "sqlite3" && c == '.' && lineStart && len(cur.words) == 0 && word.Len() == 0):
			flush()
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			cur.meta = strings.TrimSpace(text[i : i+end])
			flush()
			i += end - 1
			continue
		case c == '\'' || c == '"' || c == '`':
			flushWord()
			j := i + 1
			for j < len(text) && text[j] != c {
				if text[j] == '\\' {
					unseen()
				}
				j++
			}
			if j >= len(text) {
				unseen()
			}
			if c != '\'' {
				cur.words = append(cur.words, "\"IDENT\"")
			}
			i = j
		case c == '$':
			unseen()
		case c == '-' && i+1 < len(text) && text[i+1] == '-', c == '#' && program == "mysql":
			flushWord()
			for i < len(text) && text[i] != '\n' {
				i++
			}
			lineStart = true
			continue
		case c == '/' && i+1 < len(text) && text[i+1] == '*':
			flushWord()
			if i+2 < len(text) && (text[i+2] == '!' || text[i+2] == '+') {
				unseen()
			}
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				unseen()
				i = len(text)
			} else {
				i += end + 3
			}
		case c == ';':
			flush()
		case c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			word.WriteByte(c)
		default:
			flushWord()
		}
		lineStart = c == '\n' || c == ';' || (lineStart && (c == ' ' || c == '\t'))
	}
	flush()
	return out
}

// mongoReadCalls are the MongoDB shell calls that only read.
var mongoReadCalls = map[string]bool{
	"find": true, "findOne": true, "countDocuments": true, "estimatedDocumentCount": true,
	"count": true, "distinct": true, "aggregate": true, "getCollection": true,
	"getCollectionNames": true, "getCollectionInfos": true, "getSiblingDB": true, "getName": true,
	"stats": true, "version": true, "serverStatus": true, "listCollections": true,
	"getIndexes": true, "limit": true, "sort": true, "skip": true, "toArray": true, "pretty": true,
	"explain": true, "printjson": true, "print": true, "stringify": true, "projection": true,
	"hasNext": true, "next": true, "itcount": true, "size": true, "getDBNames": true,
	"isMaster": true, "hello": true, "ping": true, "dbStats": true, "ObjectId": true, "ISODate": true,
}

// mongoChangeCalls change the data or the database for good.
var mongoChangeCalls = map[string]bool{
	"drop": true, "dropDatabase": true, "deleteOne": true, "deleteMany": true, "remove": true,
	"updateOne": true, "updateMany": true, "update": true, "replaceOne": true, "insertOne": true,
	"insertMany": true, "insert": true, "findOneAndDelete": true, "findOneAndUpdate": true,
	"findOneAndReplace": true, "findAndModify": true, "renameCollection": true, "bulkWrite": true,
	"createIndex": true, "createIndexes": true, "dropIndex": true, "dropIndexes": true,
	"createCollection": true, "createUser": true, "dropUser": true, "dropAllUsers": true,
	"grantRolesToUser": true, "revokeRolesFromUser": true, "save": true,
}

// checkMongoJS classifies mongosh --eval code: each call must be a known
// read (nothing) or a known change (irreversible); any other call, a
// function or an arrow is code the device does not follow (not
// understood). An aggregate with $out or $merge writes a collection.
func checkMongoJS(in checkInput) checkResult {
	var irreversible string
	for _, code := range in.Words {
		if strings.Contains(code, "=>") || strings.Contains(code, "function") {
			return checkResult{NotUnderstood: "mongosh: the code defines a function, which the device does not follow"}
		}
		if strings.Contains(code, "$out") || strings.Contains(code, "$merge") {
			irreversible = "the aggregation writes a collection ($out/$merge)"
		}
		for _, call := range jsCalls(code) {
			switch {
			case mongoChangeCalls[call]:
				if irreversible == "" {
					irreversible = "mongosh: " + call + "() changes the database"
				}
			case !mongoReadCalls[call]:
				return checkResult{NotUnderstood: "mongosh: the call " + call + "() is not one the device knows"}
			}
		}
	}
	if irreversible != "" {
		return checkResult{Irreversible: irreversible}
	}
	return checkResult{}
}

// jsCalls lists the names called in JavaScript text (an identifier
// followed by "("), strings skipped.
func jsCalls(code string) []string {
	var calls []string
	var ident strings.Builder
	spaced := false // whitespace since the identifier ended
	for i := 0; i < len(code); i++ {
		c := code[i]
		if spaced && c != ' ' && c != '\t' && c != '\n' && c != '(' {
			ident.Reset()
		}
		spaced = false
		switch {
		case c == '\'' || c == '"' || c == '`':
			ident.Reset()
			j := i + 1
			for j < len(code) && code[j] != c {
				if code[j] == '\\' {
					j++
				}
				j++
			}
			i = j
		case c == '_' || c == '$' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			ident.WriteByte(c)
		case c == '(':
			if ident.Len() > 0 {
				calls = append(calls, ident.String())
			} else {
				calls = append(calls, "(")
			}
			ident.Reset()
		case c == ' ' || c == '\t' || c == '\n':
			// "find (" is still a call of find; "new Date(" calls Date.
			spaced = ident.Len() > 0
		default:
			ident.Reset()
		}
	}
	return calls
}
