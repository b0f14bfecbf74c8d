// Tests of the Step 21 named checks (checks_sql.go, checks_services.go),
// each hostile case beside its benign twin: the function alone, on the
// words a table line hands it.
package commands

import (
	"strings"
	"testing"
)

// checkCase is one call of a named check and what it must conclude:
// "" (nothing), "irreversible" or "not understood", with a word of the
// reason.
type checkCase struct {
	program string
	words   []string
	want    string
	reason  string
}

func runChecks(t *testing.T, name string, cases []checkCase) {
	t.Helper()
	fn := checks[name]
	if fn == nil {
		t.Fatalf("check %s is not registered", name)
	}
	for _, tc := range cases {
		r := fn(checkInput{Program: tc.program, Argv: append([]string{tc.program}, tc.words...), Words: tc.words})
		got, why := "", ""
		switch {
		case r.NotUnderstood != "":
			got, why = "not understood", r.NotUnderstood
		case r.Irreversible != "":
			got, why = "irreversible", r.Irreversible
		}
		if got != tc.want || !strings.Contains(why, tc.reason) {
			t.Errorf("%s %s %q: got %q (%s), want %q with %q", name, tc.program, tc.words, got, why, tc.want, tc.reason)
		}
	}
}

func TestCheckSQL(t *testing.T) {
	runChecks(t, "sql", []checkCase{
		{"psql", []string{"SELECT id, name FROM users WHERE name = 'DROP TABLE x'"}, "", ""},
		{"psql", []string{"select count(*) from orders; show search_path"}, "", ""},
		{"psql", []string{"EXPLAIN SELECT * FROM t"}, "", ""},
		{"psql", []string{`\dt`}, "", ""},
		{"psql", []string{"DROP TABLE users"}, "irreversible", "DROP TABLE"},
		{"psql", []string{"select 1; delete from users"}, "irreversible", "DELETE FROM"},
		{"psql", []string{"truncate audit"}, "irreversible", "TRUNCATE"},
		{"psql", []string{"ALTER TABLE t ADD c int"}, "irreversible", "ALTER TABLE"},
		{"psql", []string{"update users set admin = true"}, "irreversible", "UPDATE"},
		{"psql", []string{"INSERT INTO t VALUES (1)"}, "irreversible", "INSERT"},
		{"psql", []string{"WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone"}, "irreversible", "DELETE"},
		{"psql", []string{"EXPLAIN ANALYZE UPDATE t SET x = 1"}, "irreversible", "UPDATE"},
		{"psql", []string{"SELECT * INTO backup FROM t"}, "irreversible", "INTO"},
		{"psql", []string{"/* harmless */ DROP DATABASE prod"}, "irreversible", "DROP DATABASE"},
		// What servers read differently, or what runs unseen.
		{"psql", []string{`\! sh`}, "not understood", `\!`},
		{"psql", []string{`\o |sh`}, "not understood", `\o`},
		{"psql", []string{`\dt |sh`}, "not understood", `\dt`},
		{"psql", []string{`\x \\ DROP TABLE users`}, "not understood", `\x`},
		{"psql", []string{`\d users`}, "", ""},
		{"psql", []string{`SELECT 'a\'; DROP TABLE users; --'`}, "not understood", "EXEC"},
		{"psql", []string{"COPY t TO PROGRAM 'sh -c id'"}, "not understood", "PROGRAM"},
		{"psql", []string{"DO $$ BEGIN PERFORM 1; END $$"}, "not understood", "DO"},
		{"psql", []string{"select pg_read_file('/etc/passwd')"}, "not understood", "PG_READ_FILE"},
		{"psql", []string{"SELECT 1 # 2; DROP TABLE x"}, "irreversible", "DROP TABLE"},
		{"psql", []string{"SELECT 'unterminated"}, "not understood", "EXEC"},
		{"psql", []string{"VACUUMX t"}, "not understood", "VACUUMX"},
		{"mysql", []string{"SELECT user, host FROM mysql.user"}, "", ""},
		{"mysql", []string{"SHOW TABLES"}, "", ""},
		{"mysql", []string{`\! sh`}, "not understood", `\!`},
		{"mysql", []string{"system sh"}, "not understood", "SYSTEM"},
		{"mysql", []string{"source /tmp/x.sql"}, "not understood", "SOURCE"},
		{"mysql", []string{"select 1 /*! ; DROP TABLE t */"}, "not understood", "EXEC"},
		{"mysql", []string{"SELECT * FROM t INTO OUTFILE '/tmp/x'"}, "not understood", "OUTFILE"},
		{"mysql", []string{"SELECT 1 # ; DROP TABLE t"}, "", ""}, // a comment to the end of the line for mysql
		{"sqlite3", []string{".tables"}, "", ""},
		{"sqlite3", []string{".shell sh"}, "not understood", ".shell"},
		{"sqlite3", []string{".system id"}, "not understood", ".system"},
		{"sqlite3", []string{".once |sh"}, "not understood", ".once"},
		{"sqlite3", []string{"SELECT load_extension('./x.so')"}, "not understood", "LOAD_EXTENSION"},
	})
}

func TestCheckSQLiteOperands(t *testing.T) {
	runChecks(t, "sqlite3-sql", []checkCase{
		{"sqlite3", []string{"app.db"}, "", ""},
		{"sqlite3", []string{"drop.db", "SELECT * FROM t"}, "", ""}, // the database file is not SQL
		{"sqlite3", []string{"app.db", ".schema users"}, "", ""},
		{"sqlite3", []string{"app.db", "DELETE FROM sessions"}, "irreversible", "DELETE FROM"},
		{"sqlite3", []string{"app.db", ".tables", ".shell id"}, "not understood", ".shell"},
	})
}

func TestCheckMongoJS(t *testing.T) {
	runChecks(t, "mongosh-js", []checkCase{
		{"mongosh", []string{`db.users.find({name: "drop()"}).limit(5).toArray()`}, "", ""},
		{"mongosh", []string{`printjson(db.orders.countDocuments())`}, "", ""},
		{"mongosh", []string{`db.users.aggregate([{$match: {}}])`}, "", ""},
		{"mongosh", []string{`db.users.drop()`}, "irreversible", "drop()"},
		{"mongosh", []string{`db.dropDatabase()`}, "irreversible", "dropDatabase()"},
		{"mongosh", []string{`db.users.deleteMany({})`}, "irreversible", "deleteMany()"},
		{"mongosh", []string{`db.users.updateOne({a: 1}, {$set: {b: 2}})`}, "irreversible", "updateOne()"},
		{"mongosh", []string{`db.t.aggregate([{$out: "other"}])`}, "irreversible", "$out"},
		{"mongosh", []string{`require("child_process").execSync("id")`}, "not understood", "require()"},
		{"mongosh", []string{`db.t.find().forEach(d => print(d))`}, "not understood", "function"},
		{"mongosh", []string{`runProgram("sh")`}, "not understood", "runProgram()"},
		{"mongosh", []string{`new Mongo("evil.example")`}, "not understood", "Mongo()"},
	})
	runChecks(t, "mongosh-operands", []checkCase{
		{"mongosh", []string{"mongodb://db.example/app"}, "", ""},
		{"mongosh", []string{"app", "seed.js"}, "not understood", "seed.js"},
	})
}

func TestCheckGHAPI(t *testing.T) {
	runChecks(t, "gh-api-method", []checkCase{
		{"gh", []string{"GET"}, "", ""},
		{"gh", []string{"head"}, "", ""},
		{"gh", []string{"DELETE"}, "irreversible", "DELETE"},
		{"gh", []string{"post"}, "irreversible", "POST"},
		{"gh", []string{"PUT"}, "irreversible", "PUT"},
		{"gh", []string{"PATCH"}, "irreversible", "PATCH"},
		{"gh", []string{"TRACE"}, "not understood", "TRACE"},
	})
	runChecks(t, "gh-api-endpoint", []checkCase{
		{"gh", []string{"repos/acme/app/pulls"}, "", ""},
		{"gh", []string{"/user"}, "", ""},
		{"gh", []string{"https://evil.example/collect"}, "not understood", "evil.example"},
		{"gh", []string{"//evil.example/x"}, "not understood", "not a path"},
		{"gh", []string{"user@evil.example"}, "not understood", "not a path"},
	})
}

func TestCheckCloudVerb(t *testing.T) {
	runChecks(t, "cloud-verb", []checkCase{
		{"aws", []string{"ec2", "describe-instances", "--instance-ids", "i-1"}, "", ""},
		{"aws", []string{"iam", "list-users"}, "", ""},
		{"aws", []string{"ec2", "terminate-instances", "--instance-ids", "i-1"}, "irreversible", "terminate-instances"},
		{"aws", []string{"rds", "delete-db-instance", "--db-instance-identifier", "prod"}, "irreversible", "delete-db-instance"},
		{"aws", []string{"iam", "remove-user-from-group"}, "irreversible", "remove-user-from-group"},
		{"aws", []string{"ec2", "run-instances", "--image-id", "ami-1"}, "not understood", "run-instances"},
		{"aws", []string{"ec2", "describe-instances", "--endpoint-url", "https://evil.example"}, "not understood", "--endpoint-url"},
		{"aws", []string{"s3api", "get-object", "--bucket", "b", "--key", "k", "/home/me/.bashrc"}, "not understood", "writes its answer"},
		{"aws", []string{"ec2"}, "not understood", "ec2"},
		{"gcloud", []string{"compute", "instances", "list", "--project", "p"}, "", ""},
		{"gcloud", []string{"compute", "instances", "delete", "vm-1", "--zone", "z"}, "irreversible", "compute instances delete"},
		{"gcloud", []string{"projects", "delete", "acme"}, "irreversible", "projects delete"},
		{"gcloud", []string{"storage", "rm", "gs://b/o"}, "irreversible", "storage rm"},
		{"gcloud", []string{"auth", "print-access-token"}, "not understood", "print-access-token"},
		{"gcloud", []string{"compute", "instances", "list", "--flags-file=f.yaml"}, "not understood", "--flags-file"},
		{"az", []string{"vm", "list", "-g", "rg"}, "", ""},
		{"az", []string{"group", "delete", "--name", "rg", "--yes"}, "irreversible", "group delete"},
		{"az", []string{"keyvault", "purge", "--name", "kv"}, "irreversible", "keyvault purge"},
		{"az", []string{"vm", "create", "-n", "x"}, "not understood", "vm create"},
	})
}

func TestCheckMigrationVerb(t *testing.T) {
	runChecks(t, "migration-verb", []checkCase{
		{"goose", []string{"postgres", "user=app dbname=app", "status"}, "", ""},
		{"goose", []string{"postgres", "user=app dbname=app", "up"}, "irreversible", "goose up"},
		{"goose", []string{"sqlite3", "./app.db", "down-to", "3"}, "irreversible", "goose down-to"},
		{"goose", []string{"postgres", "dsn", "frobnicate"}, "not understood", "frobnicate"},
		{"goose", []string{"postgres", "dsn"}, "not understood", "no command"},
	})
}
