// `serve`: the local relay (client-relay protocol v1, devkit/relay) and the
// software device (devkit/device) in one process, answering on one HTTP
// listener until SIGINT or SIGTERM. The approver (approver.go) decides, the
// control socket (control.go) lets another terminal answer.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"agentknock.dev/agentknock/devkit/device"
	"agentknock.dev/agentknock/devkit/relay"
)

const defaultListen = "127.0.0.1:8787"

func cmdServe(c *cli, args []string) error {
	fs := c.flags("serve")
	listen := fs.String("listen", defaultListen, "")
	policyPath := fs.String("policy", "", "")
	allowRemote := fs.Bool("allow-remote", false, "")
	faultSpec := fs.String("faults", "", "") // test-only, see help
	sealEvery := fs.Duration("seal-every", auditSealEvery, "")
	operands, err := c.parse(fs, helpServe, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "serve [--listen HOST:PORT] [--policy FILE] [--allow-remote]"); err != nil {
		return err
	}
	loopback, err := isLoopbackListen(*listen)
	if err != nil {
		return err
	}
	if !loopback && !*allowRemote {
		return usagef("--listen %s is not a loopback address; add --allow-remote to serve other machines", *listen)
	}
	pol := defaultPolicy()
	if *policyPath != "" {
		if pol, err = loadPolicy(*policyPath); err != nil {
			return err
		}
	}
	var faults *relay.Faults
	if *faultSpec != "" {
		if faults, err = relay.ParseFaults(*faultSpec); err != nil {
			return usagef("--faults: %v", err)
		}
	}
	if *sealEvery < time.Second {
		return usagef("--seal-every wants a duration of at least 1s, not %s", *sealEvery)
	}
	dir, err := c.stateDir()
	if err != nil {
		return err
	}
	// A state directory init never saw gets its sealing key first, before
	// the device state that would make a missing log look like a cut.
	wasFresh := !stateExists(dir)
	address, err := device.Init(dir)
	if err != nil {
		return err
	}
	fresh, isFresh, err := ensureSealing(dir, wasFresh)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}

	// Signals are caught from here on, so a script that stops serve as
	// soon as it has read the URL line gets a graceful exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	con := newConsole(c.stderr)
	prompt := false
	if f, ok := c.stdin.(*os.File); ok && foregroundTerminal(f) {
		prompt = true
		// Moved to the background later (Ctrl-Z, bg), a read would stop
		// the whole relay with SIGTTIN; ignored, the read fails instead
		// and prompting ends (readTerminal).
		signal.Ignore(syscall.SIGTTIN)
	}
	ap := newApprover(pol, dir, time.Now, con, prompt)
	if isFresh {
		con.printf("a new sealed audit log; its verification key, shown this once: %s\n"+
			"  keep it away from this machine; '%s log --verify --key KEY' checks the log with it\n", fresh, progName)
	}
	if err := ap.audit.prepare(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer ap.audit.close()
	go ap.keepSealing(ctx, *sealEvery)
	dev, err := device.Open(device.Options{StateDir: dir, Approver: ap, Logf: con.logger("device")})
	if err != nil {
		return err
	}
	defer dev.Close()
	rel, err := relay.New(relay.Config{
		Device: dev,
		Store:  dev.ClientStore(),
		Addresses: func(addressID string) (string, bool) {
			if addressID == dev.AddressID() {
				return dev.DeviceID(), true
			}
			return "", false
		},
		Logf:   con.logger("relay"),
		Faults: faults,
	})
	if err != nil {
		return err
	}
	defer rel.Close()
	dev.SetPublisher(rel)

	ctlLn, err := listenControl(dir)
	if err != nil {
		return err
	}
	defer ctlLn.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: rel, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	go (&controlServer{ap: ap, revoke: dev.Revoke, unfinished: dev.UnfinishedPairings}).serve(ctlLn)

	url := "ws://" + ln.Addr().String()
	con.printf("%s serving relay and device on %s (state %s, device %s)\n", progName, url, dir, dev.DeviceID())
	fmt.Fprintf(c.stdout, "AGENTKNOCK_RELAY_URL=%s\n", url)
	fmt.Fprintf(c.stdout, "AGENTKNOCK_PAIRING_ADDRESS=%s\n", address)
	if !loopback {
		con.printf("warning: listening beyond loopback. Clients accept ws:// only for loopback hosts, so remote\n" +
			"clients need wss://: put a TLS-terminating proxy in front of this server (it does not do TLS).\n")
	}
	if lines := pol.autoApprovals(); len(lines) > 0 {
		con.print("warning: policy " + clean(*policyPath) + " decides without asking anyone:\n" + strings.Join(lines, ""))
	}
	if faults != nil {
		con.printf("warning: fault injection is on (--faults, for tests only): the relay misbehaves on purpose\n")
	}
	if prompt {
		go ap.readTerminal(c.stdin)
	}

	select {
	case <-ctx.Done():
		con.printf("%s: shutting down\n", progName)
	case err := <-served:
		return fmt.Errorf("HTTP server: %w", err)
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	// Deferred: control socket, relay (closes the WebSockets), device
	// (withdraws pending approvals).
	return nil
}

// isLoopbackListen reports whether HOST:PORT listens on loopback only.
// Anything but a loopback IP literal or "localhost" counts as remote,
// including the empty host (all interfaces).
func isLoopbackListen(hostport string) (bool, error) {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false, usagef("--listen %q: %v", hostport, err)
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}
