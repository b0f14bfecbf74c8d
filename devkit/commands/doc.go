// Package commands is the device's one command model (design: "What the
// device tells the person"; the agent command gate's allowlist rules): it
// reads an invocation (argv, the executable, the delivered secrets, the
// working directory), parses the shell scripts it runs, and matches every
// command against a table written from that program's own manual. The
// explanation, the "does not bind" list of a pin and the Step 21 policy
// all read the same Analysis.
//
// # What "understood" vouches for
//
// An invocation is understood when every command it runs is a program
// with a table, used only in the forms its table describes: each option,
// subcommand and operand form is listed, so the device knows for each
// whether it runs a program or code (and follows that code when it is
// shell), loads a library, reads files that can run code, opens the
// network (and to which host), writes or deletes files. Nothing is
// understood by its name alone: an option the table does not list makes
// the command, and so the script, not understood ("tar: the option
// --checkpoint-action is not one the device knows"). Understood does not
// mean harmless: it means the commands shown, with their marks, are all
// the script can do, apart from what no table can see (below).
//
// # The table format
//
// Tables are text files tables/*.txt, one file per family of programs,
// embedded in the binary and loaded once, strictly: an unknown directive,
// kind or effect, a duplicate program name (in any file) or a table
// without a manual line is an error naming file:line, and TestTablesLoad
// fails on it. One directive per line; a line starting with # is a
// comment; indentation is two spaces per level and matters under sub.
//
//	program NAME [NAME...]     a table; the basenames it covers
//	manual URL                 where its facts come from (required)
//	syntax gnu|posix|single|single-clustered|none|gnu-bundled
//	class read-only|other|irreversible    the default class of its forms
//	effect EFFECT...           effects of every use
//	opt SPELLINGS [=KIND|=?KIND] [EFFECT...]
//	operands KIND [KIND...] [EFFECT...]   one accepted operand sequence
//	sub NAME[,ALIAS...] [EFFECT...]       a subcommand; its lines indented
//	form WORD... [EFFECT...] [whole]      an argv prefix with its effects
//
// Syntax: gnu is getopt_long (clusters -abc, -fVAL and -f VAL, --long,
// --long=VAL and --long VAL, "--" ends options, options may follow
// operands; long prefixes are not accepted, write each spelling; a
// one-dash spelling of several letters, mvn -ntp, is allowed for a flag
// that takes no value and has no effect, and matches only the whole
// word, before the word is read as a cluster); posix is
// the same but options stop at the first operand; single is whole-word
// options with one dash (find -name; an option of kind argv takes the
// words up to ";" or "+", and -flag=value is read as Go's flag package
// reads it); single-clustered is single where a word that is no option of
// its own is read as one-letter options that take no value, unless a run of
// its letters spells a longer option (zip -qr; -qTT is not understood);
// single-posix is single where options stop at the first operand, as
// Go's flag package parses (the go command); none makes every word an
// operand; gnu-bundled is gnu where a
// first word without a dash is a cluster of one-letter options whose
// values are the next words in order (tar xzf FILE). A sub inherits its
// parent's syntax unless it gives its own. An option may take several
// values (opt --arg =word =any), and a spelling ending in "=" (dd's if=)
// takes the rest of the word.
//
// Options of a node that has subs are global options: allowed before the
// subcommand. The first operand of such a node is looked up among its
// subs; when it is none of them, the node's operands lines apply (a node
// with neither takes no operands). Several operands lines are
// alternatives; a KIND ending in "..." takes the rest (zero or more).
//
// A form line gives effects (and so a class) to an argv that starts with
// its words right after the node's own words ("form remote -v read-only"
// under git). A form does not make words understood by itself: they are
// still parsed by the node's options, subs and operands. A whole form
// matches only the exact argv, and is understood by itself
// ("form --version read-only whole"; with no words, the program alone). A
// read-only form or sub names at most two words after the program, as the
// gate matches a program and up to two arguments. The first operands
// line that fits wins, except that an option giving what an
// alternative's first operand is (grep -e, sed -e, perl -e) moves that
// alternative last.
//
// Kinds: word, number, enum:A|B, pattern, file (read), out (written), dir,
// host (a destination), url (its host is the destination), conninfo (a
// database connection string: its host is the destination, and a secret
// that is the whole string goes to the server it names), code:sh (the
// walk parses and follows it), code:LANG (shown and marked "runs LANG
// code"), argv (the rest is a command the walk follows; after a host
// operand, a command run on that host), program (a program that is run:
// marked), lib (a library that is loaded: marked), assign (NAME=VALUE,
// checked like the shell's assignments), any.
//
// Effects: read-only, irreversible, writes, extracts (writes the files
// it unpacks where it runs, unless a read-only option lists or tests
// them: unzip), deletes, net, sends-stdin,
// runs (code the device cannot see; shown with reads-code's files),
// reads-code=F,... (files that can run code: listed in a pin's "does not
// bind" list and in "whose code runs"; writing one earlier in the same
// script makes it not understood), includes=D,... (the directives by
// which those files read more files, make's include, ssh_config's
// Include: the list names the files they name as one item), reads-stdin,
// env-dump, loads,
// check=NAME (a named check in checks.go), for-secret=VAR,... (the
// program's API is what a secret in one of these variables is for),
// reformats (writes its file operands in place without changing what
// they do, a formatter's -w: a later run of them is not write, then run),
// traces (on an option that prints what the program sends, headers and
// credentials included, to standard error or a file: curl -v, --trace;
// a delivered secret in its words is marked as shown there),
// sends-file (on an option whose value is a file: its contents go to
// the destination, wget --post-file, curl -T), reads-env=VAR,... (variables that change what the program runs or
// where it connects, VAR_* for a prefix: listed in a pin's "does not
// bind" list), workdir (on an option whose value is a dir: the program
// works there, so its reads-code files by relative name are under it: git
// -C, make -C), writes=F,... (the files this form writes by name), stdin-code=LANG
// (with no operand, or "-", the program reads its program from standard
// input; on an operands line, whatever the operands), no-stdin-code (this
// option gives the program its commands, so it reads none from standard
// input: psql -c, mysql -e), stdin-env=VAR,... (variables it reads only
// when its program comes from standard input, interactive on a terminal:
// python's PYTHONSTARTUP), skips-code=F,... and skips-env=VAR,... (on an
// option that turns reading them off, python -S, wget --no-config: they
// leave the list), no-argv (this option makes the operands names, not a command:
// command -v), as-argv (this option makes shell-code operands a command:
// watch -x), module (on an argv option: the command's first word is a
// module the interpreter imports from its own path, python -m, so the pin's
// list names the module, not the name via PATH).
//
// # How to add a program
//
// Read the program's manual. Add a program block to the family's file
// (or a new file for a new family) with the manual's URL, its syntax, and
// the options and subcommands people use every day, each with what it
// does. Leave out what you cannot describe: an absent option is safe (the
// command is not understood), a wrong one is not. Options that start
// another program, load a plugin or evaluate code are absent unless their
// value's kind says so (code:sh, program, lib, argv). Run
// `go test ./devkit/commands -run TestTablesLoad`, then add a hostile
// case and its benign twin to the package's tests.
//
// # What no table can see
//
// A table describes a program's arguments, not its inputs: the contents of
// the files it reads (a Makefile's recipes, package.json scripts, a test
// suite, a Git hook or filter, ~/.ssh/config) run code the device cannot
// read, which is why such programs stay understood only with a line naming
// whose code runs, and why a pin cannot bind them. Nor can a table see
// what the executable really is when the device has no copy of it, what a
// remote host does with a command sent to it, what environment the shell
// inherits beyond the delivered secrets, or a program's behaviour that its
// manual does not document.
package commands
