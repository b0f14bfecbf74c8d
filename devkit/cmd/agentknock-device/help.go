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
  approve ID [--for DURATION]  approve a waiting request
  deny ID [--message TEXT]     deny a waiting request
  pairing confirm|reject       answer a waiting pairing
  clients / revoke CLIENT_ID   list / revoke paired clients
  uploads / upload accept|reject ID
                               review secrets uploaded by clients

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

const helpServe = `serve [--listen HOST:PORT] [--policy FILE] [--allow-remote]
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
  control the terminal. Then, in order:
    1. the policy, if it says approve or deny;
    2. a grant made with 'approve ID --for DURATION' that matches;
    3. a person: when serve's standard input is a terminal it prompts
       "approve? [y/N]" (for a pairing: type the 12 digits the client
       shows, or "no"); 'pending', 'approve', 'deny' and 'pairing ...' from
       another terminal answer too. The first answer wins. Without a
       terminal, requests wait for another terminal.

  Policy file (JSON; unknown members and verdicts are errors):
    {
      "default": "ask",
      "pairing": "ask",
      "secrets": {"demo": "approve", "prod": "deny"},
      "operations": {"invocation": "ask", "git-sign": "ask",
                     "ssh-authenticate": "ask"}
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

    agentknock-device serve --policy ci-policy.json
    agentknock-device serve --listen 127.0.0.1:0 > serve.out &
`

const helpPending = `pending [--json]
  Lists the requests the running serve waits on, in full. --json prints an
  array of objects with id, kind, client_id, client, request_id, received,
  secrets and pairing, invocation, git_sign or ssh details (never the
  pairing's verification code).
`

const helpApprove = `approve ID [--for DURATION]
  Approves a waiting request (not a pairing: see 'pairing confirm').
  --for DURATION (e.g. 10m, 2h) also approves, until it expires, later
  requests of the same operation kind from the same client for exactly the
  same set of secrets.
    agentknock-device approve 7KQ2 --for 15m
`

const helpDeny = `deny ID [--message TEXT]
  Denies a waiting request (USER_DENIED); TEXT is shown to the client.
`

const helpPairing = `pairing confirm "dddd dddd dddd"
  Confirms the waiting pairing whose verification code matches the 12
  digits the client printed ('agentknock pairing start'). Wrong digits
  reject the pairing (exit status 1): start it again on the client.
pairing reject
  Rejects the waiting pairing.
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
  agentknock-device approve 7KQ2 --for 10m

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
		helpHelp, helpExamples,
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
