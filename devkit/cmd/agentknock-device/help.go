// The command reference printed by --help and `help COMMAND`.
package main

import (
	"io"
	"strings"
)

const helpOverview = `agentknock-device: a local Agentknock v1 relay and software device

agentknock-device runs, on one machine, a relay and a device that approves
agentknock requests, so that a dev VM, a CI job or a test can use agentknock
without the phone app and without the network. The device keeps its own
identity, pairing address and secrets in a private state directory, shows
every request in full and asks you (or applies a policy) before answering.

Usage:
  agentknock-device [--state DIR] COMMAND [ARGS...]
  agentknock-device --help | --version
  agentknock-device help COMMAND

Global options (also accepted after the command):
  --state DIR   state directory. Default: $AGENTKNOCK_DEVICE_STATE, else
                $XDG_DATA_HOME/agentknock-device, else
                ~/.local/share/agentknock-device. Created with mode 0700;
                every file in it is 0600.

Commands:
  init                         create the device state; print the pairing address
  secret set|ssh|list|remove   manage the device's secrets
  serve                        run the relay and the device
  pending                      list requests waiting for an answer
  approve ID [--pin D|--for D [--read-only]]
                               approve a waiting request (and pin a rule)
  deny ID [--message TEXT]     deny a waiting request
  pairing confirm|reject       answer a waiting pairing
  clients / revoke CLIENT_ID   list / revoke paired clients
  uploads / upload accept|reject ID
                               review secrets uploaded by clients
  rules [--json] / rules remove ID
                               list / remove pinned rules
  log [--since D] [--json]     show the audit log of every decision
  log --verify [--key KEY]     check the sealed audit log (with the key init printed)
  log --show SEQ               show one entry with the full command it keeps
  log --new-key                start a new sealed record after a cut log
  explain [...] -- ARGV...     what the policy would do with a command, its class and why

Exit status: 0 on success, 2 for a usage error, 1 for any other failure.
Errors are printed as "agentknock-device: error: ..." on standard error.
Secret values and private keys are never printed or logged.
`

const helpInit = `init
  Creates the state directory, the device's X25519 identity, device id and
  pairing address, unless they exist (init is idempotent). Prints the
  pairing address alone on standard output, an explanation on standard
  error:
    address=$(agentknock-device init)
  When it creates the state it also creates the audit log's sealing key
  and prints, on standard error and only this once, its verification key
  (ak1-0-...): keep it away from this machine (a password manager, paper);
  'log --verify --key KEY' uses it (see 'log').
`

const helpSecret = `secret set NAME VAR=@FILE|VAR=- ... [--description TEXT]
  Stores (or replaces) the environment secret NAME with one or more
  variables. VAR=@FILE reads the value from FILE, VAR=- from standard input
  (at most one variable can use standard input). Exactly one trailing
  newline ("\n") is removed from each value, so 'echo token > f' and typing
  a value followed by Enter store "token"; any other whitespace is kept.
  Values must be UTF-8 without NUL bytes. Values never go on the command
  line and are never printed.
    printf %s "$GH_TOKEN" | agentknock-device secret set gh-token GH_TOKEN=- \
      --description "GitHub API access"
    agentknock-device secret set cloud API_KEY=@key.txt ACCOUNT=@account.txt

secret ssh NAME --import FILE | --generate ed25519|rsa [--description TEXT]
  Stores an SSH key whose private half never leaves the device; prints the
  public key. --import reads an unencrypted OpenSSH private key (FILE or -
  for standard input); a passphrase-protected key is refused: decrypt a copy
  first with 'ssh-keygen -p -N "" -f COPY'. --generate makes a new Ed25519
  or RSA (3072-bit) key.
    agentknock-device secret ssh git-signing --generate ed25519 > signing.pub

secret list [--json]
  Lists secret names, types, variable names or public keys and
  descriptions; never values. --json prints an array of objects with name,
  type, description, variables, public_key.

secret remove NAME
  Deletes a secret.
`

const helpServe = `serve [--listen HOST:PORT] [--policy FILE] [--allow-remote] [--seal-every D]
  Runs the relay and the device until SIGINT or SIGTERM. Once listening it
  prints on standard output:
    AGENTKNOCK_RELAY_URL=ws://127.0.0.1:8787
    AGENTKNOCK_PAIRING_ADDRESS=amber-river-cloud
  and then logs one line per relay and device event on standard error,
  along with every request shown in full.

  --listen HOST:PORT  address to listen on (default 127.0.0.1:8787; port 0
                      picks a free port, see the printed URL).
  --allow-remote      required for a non-loopback --listen address. Clients
                      accept ws:// only for loopback hosts, so remote clients
                      need wss:// through a TLS-terminating proxy: this
                      server does not terminate TLS. For a VM, forwarding a
                      loopback port is simpler:
                        ssh -R 8787:127.0.0.1:8787 vm
  --policy FILE       decide requests by policy before asking (see below).
  --seal-every D      seal the audit log every D (default 15m, at least 1s),
                      so that it says through when it is sealed.
  --faults SPEC       TEST ONLY: makes the relay misbehave on purpose
                      (e.g. "drop-before-ack:request:1,corrupt-response::1"),
                      for end-to-end tests of client recovery. Never use it
                      otherwise.

  Deciding. Each request is shown on serve's standard error: kind, client,
  command line, working directory, executable path, hash and mode, script
  text, stream kinds, launcher chain, the reason (reported by the client),
  secrets and where each variable goes; for Git signatures the exact text to
  sign and the repository context; for SSH logins the user, method,
  algorithm and host key. Client-supplied text is escaped so it cannot
  control the terminal.

  A shell script is explained: when the executable (not argv[0]) is sh,
  bash, dash or zsh with -c SCRIPT (any option order, e.g. bash -euo
  pipefail -c, sh -ec), or a SCRIPT executable whose #! line runs one
  (env -S included), the script is parsed, and every command is matched
  against the device's command tables by its options and subcommands (a
  command run directly is matched too, and shown when it is not understood
  or marked). The explanation opens with a verdict: "understood" (every
  command in a form its table describes, nothing computed at run time, the
  secrets reaching only the programs listed) or "not understood, because"
  and each reason with its line (an option no table lists is one). Then
  each command in the order it runs ("if that succeeded:", "piped into:",
  ...), who can read each secret, the network hosts, whose code runs (the
  files a build or test tool reads), and "!" marks, most severe first:
  code the device cannot follow, secret data sent somewhere,
  whole-environment readers, look-alike hosts, writes outside the working
  directory, sudo, tracing. It cannot see PATH, the contents of the files
  programs read, or the inherited environment. A part that does not parse
  is marked; the commands before it are explained.

  Each request's command also gets a class from the device's command
  tables: read-only (every command a form its table calls read-only, the
  executable in a system directory, no sensitive path among its
  arguments), irreversible (any command destroys, deploys, publishes,
  migrates or changes a database: git push --force, gh repo delete,
  terraform apply, kubectl delete, aws s3 rm, psql -c 'DROP ...') or
  other; a script the device does not understand is possibly
  irreversible. The prompt, 'pending' and the audit log show the class
  and why.

  Then, in order:
    0. an irreversible command is asked of a person (or denied with
       "irreversible": "deny"), whatever the policy, a rule or a grant
       says; the prompt says why;
    1. the policy, if it says approve or deny; then "read_only", which
       approves an understood read-only invocation;
    2. a rule (pinned with 'approve ID --pin', or stated in the policy)
       that covers the request exactly;
    3. a grant made with 'approve ID --for DURATION' that matches;
    4. a person: when serve's standard input is a terminal it prompts
       "approve? [y/N, or "p 30" ...]": "y" approves, "p 30" (or "pin 2h")
       shows what a rule would not bind and, after a "y" to that,
       approves and pins a rule for this exact command for 30 minutes, an
       empty line or "n" denies (for a pairing: type the 12 digits the
       client shows, or "no"); 'pending', 'approve', 'deny' and 'pairing
       ...' from another terminal answer too. The first answer wins.
       Without a terminal, requests wait for another terminal.
  A request that nearly matches a rule is shown with "asked again" and the
  fields that differ. Every decision is appended to the audit log ('log')
  before it is sent; a decision the log cannot take is not sent (the
  request is denied). At start and before each entry serve checks that the
  log ends where its sealed head says; if it does not (entries cut, the
  files removed or replaced), serve says what is missing and denies every
  request with an answer until a person has looked ('log --verify', then
  'log --new-key' and a restart). A pinned rule matches the argument
  vector byte for byte (a control character other than tab and newline
  refuses the pin), and a rule or grant is used only while its creation is
  in the log and its removal is not. A policy that approves anything by itself is listed
  when serve starts.

  Policy file (JSON; unknown members and verdicts are errors):
    {
      "default": "ask",
      "pairing": "ask",
      "secrets": {"demo": "approve", "prod": "deny"},
      "operations": {"invocation": "ask", "git-sign": "ask",
                     "ssh-authenticate": "ask"},
      "read_only": {"gh-token": "approve", "*": "ask"},
      "irreversible": "ask"
    }
  Verdicts are "ask", "approve" and "deny". For each requested secret the
  rule is the secret's own rule or the operation's rule (the stricter of
  the two if both exist), else "default" (itself "ask" by default). So
  "approve" for a secret also covers its Git signatures and SSH logins,
  unless an operation rule asks or denies. With several secrets, any deny
  denies (POLICY_DENIED, naming the secret), all approve approves, else the
  request is asked. "pairing": "approve" confirms pairings without a person
  (the device accepts its own verification code): only for headless tests
  on a relay nobody else can reach. Grants are kept in grants.json in the
  state directory; delete the file to drop them all.
  "read_only" approves, per secret ("*": every secret without its own
  entry, which stands first; "approve" or "ask"), an invocation whose every
  command is read-only and understood; every secret of the request must be
  approved. It cannot promise more than the tables: a read still sends the
  secret to the service it is for, and the program at that path is
  trusted. "irreversible" is "ask" (default) or "deny". A policy or grant
  that approves a command the device does not understand says so on the
  console and in the log.

  "rules" states rules like the pinned ones (see 'approve --pin'); each
  approves an invocation only if every field matches:
    "rules": [{"name": "ci-tests", "client": "01K...",
               "secrets": ["gh-token"],
               "routing": {"gh-token": {"only": ["GH_TOKEN"]}},
               "executable": "/usr/bin/bash", "sha256": "<64 hex digits>",
               "argv": ["bash", "-c", "make test"], "match": "script",
               "directory": "/home/me/proj",
               "expires": "2030-01-01T00:00:00Z"}]
  "routing" (optional) is the secrets' only/omit/rename/stdin as
  requested; without it the request must take all variables. "match" is
  "exact" (default: argv word for word) or "script" (a shell -c script
  compared by its parsed form, so spacing and comments do not count).
  Instead of "sha256", "execute_only": true binds a binary the client
  cannot read (and so cannot hash) by its path alone; such a rule matches
  only requests without a hash. "expires" is optional here.

    agentknock-device serve --policy ci-policy.json
    agentknock-device serve --listen 127.0.0.1:0 > serve.out &
`

const helpPending = `pending [--json]
  Lists the requests the running serve waits on, in full. --json prints an
  array of objects with id, kind, client_id, client, request_id, received,
  secrets and pairing, invocation, git_sign or ssh details (never the
  pairing's verification code).
`

const helpApprove = `approve ID [--pin DURATION [--accept-unbound CODE] | --for DURATION]
  Approves a waiting request (not a pairing: see 'pairing confirm').
  --pin DURATION (minutes, e.g. 30, or 30m, 2h; at most a week) also
  approves, until it expires, this exact command again: a rule bound to
  the client, the secret set and its routing, the executable path and
  SHA-256 hash, the arguments (for a shell -c script: its parsed form),
  the working directory and the expiry. A request that differs in any of
  them is asked again, naming the fields that differ. An execute-only
  binary (no hash) is pinned by its path alone, and the rule says so.
  A rule cannot bind what the request does not carry: the files a program
  reads (bash build.sh, a script run from a -c script, a Makefile), which
  program PATH finds for a command in a script or a #!/usr/bin/env line,
  a directory replaced at the same path, the inherited environment
  (BASH_ENV, PATH, ...). On a terminal the list of these for this request
  is shown and "y" pins; otherwise nothing is answered: the list is
  printed with a CODE, and the same command with --accept-unbound CODE
  pins. Only invocations can be pinned.
  Rules are kept in rules.json, authenticated with rules.key; see 'rules'.
  --for DURATION (e.g. 10m, 2h; at most a week) instead approves, until
  it expires, later requests of the same operation kind from the same
  client for exactly the same set of secrets, whatever the command, except
  an irreversible one (always asked). --read-only narrows the grant to
  requests whose every command is read-only. An irreversible command
  cannot be pinned: --pin is refused with the reason.
    agentknock-device approve 7KQ2 --pin 30
    agentknock-device approve 7KQ2 --pin 30 --accept-unbound 3f9a0c12de
    agentknock-device approve 7KQ2 --for 15m
    agentknock-device approve 7KQ2 --for 15m --read-only
`

const helpRules = `rules [--json]
  Lists the pinned rules (rules.json in the state directory), expired ones
  for a day after they lapse, each with what it does not bind. A rule the
  device did not make as it stands (edited or added by hand, created in
  the future, beyond the week-long lifetime cap) is listed as REFUSED and
  never applied; then the exit status is 1. --json prints an array of
  objects with id, client, secrets, routing, executable, sha256 or
  execute_only, argv, match, directory, created, expires, pinned_by,
  unbound, mac, state (active, expired or refused) and refused (why).
rules remove ID
  Removes a pinned rule; a running serve stops applying it at once. The
  removal is a sealed audit log entry, so an older rules.json copied back
  does not bring the rule back (it is listed as REFUSED, with the entry).
`

const helpLog = `log [--since DURATION|TIME] [--json] | log --verify [--key KEY] | log --show SEQ | log --new-key
  Shows the audit log (audit.jsonl in the state directory, mode 0600): one
  entry for every request the device decided, with its kind, client,
  secrets (names only; never a value), command summary, directory,
  executable and hash, the decision, who or what decided (person, policy,
  rule, grant, or the device itself for a request it refused as invalid;
  the rule's id) and when, the client's reason, the explanation's verdict
  and marks, the delivery, and request_sha256: the SHA-256 of the whole
  request as the device received it (argv, environment names and routing,
  executable and hash, directory, streams), with the request itself when
  the line has room. Records of the log itself are entries too: an epoch
  seal (every 15 minutes while serve runs), a rotation (what the dropped
  file held: count, first and last entry, hash, and the rules and grants
  in force), rules and grants removed, expired or dropped, and a count of
  the refusals that needed nobody beyond 16 per epoch. Each entry is
  written with fsync before the decision is sent, carries the SHA-256 of
  the entry before it (across rotation at 2 MiB into audit.jsonl.1 to .3)
  and is sealed: an HMAC under a key that then evolves one way, the old
  key overwritten in audit.head (fsync'd before the answer). --since 90m,
  24h, 7d, 2030-01-02 or an RFC 3339 time limits it to later decisions;
  --json prints the entries.
log --verify [--key KEY]
  Checks the chain through every file and audit.head; exits 1 naming the
  first entry edited, reordered, repeated or missing. With the
  verification key init printed it also checks each entry's seal and
  where the head's key stands: whoever read the state directory later
  holds only the current key, so an entry sealed before that they changed,
  removed, reordered or cut (head recomputed or not) is named. A whole copy
  put back verifies, and shows as sealed only through an earlier entry and
  time, which verify prints. Without --key it says what it cannot promise.
log --show SEQ
  Prints entry SEQ with its full command when the entry kept it, and
  whether it hashes to the entry's request_sha256.
log --new-key
  Starts a new sealed record: the old files are set aside
  (audit-set-aside-TIME-audit.jsonl...), the first entry names them and
  what did not verify, and a new verification key is printed once.
    agentknock-device log --since 24h
    agentknock-device log --verify --key ak1-0-...
    agentknock-device log --show 42
`

const helpDeny = `deny ID [--message TEXT]
  Denies a waiting request (USER_DENIED); TEXT is shown to the client.
`

const helpPairing = `pairing confirm "dddd dddd dddd"
  Confirms the waiting pairing whose verification code matches the 12
  digits the client printed ('agentknock pairing start'). Wrong digits
  reject the pairing (exit status 1): start it again on the client.
pairing reject
  Rejects the waiting pairing; with none waiting for its code, ends the
  pairings confirmed here that no client has finished, which otherwise
  hold the device's one pairing slot for 5 minutes after the confirmation
  (30 minutes after the start at most for any pending pairing).
    agentknock-device pairing confirm "0123 4567 8901"
`

const helpClients = `clients [--json]
  Lists paired clients: id, state (pending, active, revoked), hostname and
  platform reported at pairing, pairing time.
`

const helpRevoke = `revoke CLIENT_ID
  Revokes a client. A running serve is told at once and closes the client's
  connections; otherwise the state directory is updated.
`

const helpUploads = `uploads [--json]
  Lists secret uploads (SecretUpload proposals from clients) waiting for
  review: id, client, mode (CREATE, UPDATE, REPLACE), name, type, variable
  names or public key. Never values.
`

const helpUpload = `upload accept ID | upload reject ID
  Applies an upload to the secret store, or discards it.
`

const helpHelp = `help [COMMAND]
  Prints this reference, or the part about COMMAND.
`

const helpExamples = `Examples:
  # one-time setup, then run the device in one terminal
  agentknock-device init
  printf %s "$GH_TOKEN" | agentknock-device secret set gh-token GH_TOKEN=-
  agentknock-device serve

  # where agentknock runs (--relay is stored with the pairing;
  # AGENTKNOCK_RELAY_URL would override it)
  agentknock pairing start amber-river-cloud --relay ws://127.0.0.1:8787
  # then type the code it prints into serve (or: agentknock-device pairing confirm "...")
  agentknock pairing finish
  agentknock run -s gh-token -- gh pr list

  # answer from another terminal
  agentknock-device pending
  agentknock-device approve 7KQ2 --pin 30    # lists what the rule would not bind
  agentknock-device approve 7KQ2 --pin 30 --accept-unbound CODE
  agentknock-device log --since 1h
  agentknock-device log --verify

  # headless (CI): policy decides, stdout gives the URL
  agentknock-device --state "$PWD/dev" serve --listen 127.0.0.1:0 \
    --policy policy.json > serve.out &
  until grep -q AGENTKNOCK_RELAY_URL serve.out; do sleep 0.1; done
  export $(grep AGENTKNOCK_RELAY_URL serve.out)
`

func fullHelp() string {
	return strings.Join([]string{
		helpOverview, helpInit, helpSecret, helpServe, helpPending, helpApprove,
		helpDeny, helpPairing, helpClients, helpRevoke, helpUploads, helpUpload,
		helpRules, helpLog, helpExplainArgv, helpHelp, helpExamples,
	}, "\n")
}

func cmdHelp(c *cli, args []string) error {
	switch len(args) {
	case 0:
		io.WriteString(c.stdout, fullHelp())
		return nil
	case 1:
		cmd, ok := commands[args[0]]
		if !ok {
			return usagef("unknown command %q", args[0])
		}
		io.WriteString(c.stdout, cmd.help)
		return nil
	}
	return usagef("usage: %s help [COMMAND]", progName)
}
