// `agentknock pairing start|finish|abort|status|remove`: client-device
// protocol, "Initial pairing", "PairingFinish" and "PairingRemove", with the
// pairing file of state.go. The syntax and the order of steps follow the
// reference client: start prints the verification code, the person compares
// it on the device and approves, finish activates.

package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

const pairingUsage = `Usage:
  agentknock pairing start ADDRESS [--relay URL]   Start pairing with the address the device shows.
  agentknock pairing finish                        Activate a pairing approved on the device.
  agentknock pairing abort                         Discard a pending pairing (does not contact the device).
  agentknock pairing status                        Show the local pairing state (does not contact the device).
  agentknock pairing remove [--force]              Remove the pairing here and on the device
                                                   (--force: only here, when the device is gone).

Every pairing command accepts the global options --agentknock-home DIR,
--quiet and --verbose, before or after "pairing". This client has at most
one pairing, pending or active; start does not replace one. Results go to
standard output; progress (every 30 seconds while waiting for the device)
and errors go to standard error.

The relay is wss://relay.agentknock.dev unless "pairing start --relay URL"
stores another with the pairing; AGENTKNOCK_RELAY_URL overrides both. Plain
ws:// is accepted only for loopback addresses.

Examples:
  agentknock pairing start calm-river-lantern
  agentknock pairing start calm-river-lantern --relay ws://127.0.0.1:8787
  agentknock pairing finish
`

func pairingMain(args []string, g globalOptions, cs callerState) int {
	if code, answered := groupHelp(args, pairingUsage); answered {
		return code
	}
	sub := args[0]
	fs := flag.NewFlagSet("pairing "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	relay := fs.String("relay", "", "")
	force := fs.Bool("force", false, "")
	positional, err := parseInterspersed(fs, args[1:])
	if errors.Is(err, flag.ErrHelp) {
		fmt.Print(pairingUsage)
		return 0
	}
	if err != nil {
		return reportUsageFor("pairing", err)
	}
	want := map[string]int{"start": 1, "finish": 0, "abort": 0, "status": 0, "remove": 0}
	n, known := want[sub]
	switch {
	case !known:
		return reportUsageFor("pairing", usagef("unknown pairing command %q", sub))
	case len(positional) != n && sub == "start":
		return reportUsageFor("pairing", usagef("pairing start needs the pairing ADDRESS shown on the device"))
	case len(positional) != n:
		return reportUsageFor("pairing", usagef("unexpected argument %q", positional[0]))
	case *relay != "" && sub != "start":
		return reportUsageFor("pairing", usagef("--relay applies to pairing start"))
	case *force && sub != "remove":
		return reportUsageFor("pairing", usagef("--force applies to pairing remove"))
	}
	dir, err := stateHome(g.Home)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s%v\n", messagePrefix, err)
		return 1
	}
	messages := map[string]*stageMessages{"start": &pairingStartStageMessages, "finish": &pairingFinishStageMessages, "remove": &pairingRemoveStageMessages}[sub]
	out := newPlainOutput(g.Quiet, g.Verbose, messages)
	watch := watchTermination(cs)
	switch sub {
	case "start":
		err = pairingStart(dir, positional[0], *relay, watch, out)
	case "finish":
		err = pairingFinish(dir, watch, out)
	case "abort":
		err = pairingAbort(dir, out)
	case "status":
		err = pairingStatus(dir, out)
	case "remove":
		err = pairingRemove(dir, *force, watch, out)
	}
	return reportCommandError(err, out)
}

// reportCommandError maps a subcommand's error to its exit status.
func reportCommandError(err error, out *output) int {
	var intr *interrupted
	var usage *usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &usage):
		return reportUsage(err)
	}
	// A failure of a known class gets its suggested action (output.go).
	if class, _ := classOf(err, failOther); class != failOther && class != failInterrupted {
		out.stopped(stopReport{rerun: "this command"}, err, failOther)
	} else {
		out.failure("%v", err)
	}
	if errors.As(err, &intr) {
		return exitStatusFor(intr.sig)
	}
	return 1
}

func pairingStart(home, address, relayFlag string, watch *signalWatch, out *output) error {
	if !validPairingAddress(address) {
		return usagef("%q is not a pairing address: it is lowercase words separated by single hyphens, like calm-river-lantern", address)
	}
	if relayFlag != "" {
		if _, err := parseRelayURL(relayFlag); err != nil {
			return usagef("--relay: %v", err)
		}
	}
	out.setStage(stagePreparing)
	// Every local check comes before the device hears of this client: a
	// pairing the device starts but this client cannot store would block
	// other pairings on the device until it expires.
	if err := checkHomeWritable(home); err != nil {
		return err
	}
	ep, err := relayURLFor(relayFlag)
	if err != nil {
		return err
	}
	token := make([]byte, 32)
	if _, err := rand.Read(token); err != nil {
		return err
	}
	ep.Token = base64.RawURLEncoding.EncodeToString(token)
	attempt, err := newPairingAttempt()
	if err != nil {
		return err
	}
	addressID, err := pairingAddressID(address)
	if err != nil {
		return err
	}
	body, err := json.Marshal(newPairingRequestPayload(attempt))
	if err != nil {
		return err
	}
	clientID := attempt.ClientID.String()
	rx, raw, err := waitForRelay(func(ctx context.Context) (*relayExchange, json.RawMessage, error) {
		rx, err := openExchange(ctx, ep, pairingRoute(addressID, clientID), clientID, clientID, body, relayProgress(out))
		if err != nil {
			return rx, nil, err
		}
		raw, err := rx.awaitResponse(ctx)
		return rx, raw, err
	}, watch, out)
	if rx != nil {
		defer rx.close()
	}
	if err != nil {
		var intr *interrupted
		if errors.As(err, &intr) {
			return err
		}
		if errors.Is(err, errClientInactive) || errors.As(err, new(*relayRefusal)) {
			return fmt.Errorf("the relay refused the pairing request (check the address %q): %v", address, err)
		}
		return describeRelayError(err)
	}
	resp, report, err := decodePairingResponsePayload(raw)
	if report != nil {
		return fmt.Errorf("the pairing was refused (unauthenticated report %s: %s)", printable(report.Code), printable(report.Message))
	}
	if err != nil {
		return fmt.Errorf("the device's pairing response is invalid: %v", err)
	}
	out.setStage(stageCompleting)
	host := pairingHost()
	metadata, err := json.Marshal(newPairingMetadata(host.Hostname, host.MachineID, host.OSVersion))
	if err != nil {
		return err
	}
	done, err := attempt.Complete(resp.DeviceID, resp.DeviceKey, resp.DeviceRandom, metadata)
	if err != nil {
		return fmt.Errorf("the device's pairing response is invalid: %v", err)
	}

	// Store the pending pairing before the completion leaves: once the
	// device has it, this client must be able to finish.
	s, err := lockStateDir(home)
	if err != nil {
		return err
	}
	defer s.unlock()
	if err := requireNoPairing(home); err != nil {
		return err
	}
	p := &pairingState{
		Pending:     true,
		DeviceID:    done.DeviceID,
		ClientID:    done.ClientID,
		ClientToken: ep.Token,
		ClientPSK:   done.PSK,
		DeviceKey:   done.DeviceKey,
		RotatedAt:   uint64(time.Now().Unix()),
		RelayURL:    relayFlag,
	}
	if err := s.writePairing(p); err != nil {
		return err
	}
	completion, err := json.Marshal(newPairingCompletionPayload(done))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := rx.complete(ctx, completion); err != nil {
		return fmt.Errorf("the relay did not accept the pairing completion (%v); run `agentknock pairing abort` and start again", err)
	}
	out.setStage(stageCompleted)
	fmt.Printf("Pairing started.\nVerification code:\n%s\n", done.SAS)
	fmt.Print("Compare the full verification code with the code on the device.\n" +
		"If the codes match, approve the pairing on the device. Then run:\nagentknock pairing finish\n" +
		"If the codes don't match, reject the pairing on the device. Then run:\nagentknock pairing abort\n")
	return nil
}

// checkHomeWritable takes the lock, requires that there is no pairing, and
// writes and removes a temporary file the way a pairing is written.
func checkHomeWritable(home string) error {
	s, err := lockStateDir(home)
	if err != nil {
		return err
	}
	defer s.unlock()
	if err := requireNoPairing(home); err != nil {
		return err
	}
	probe, err := os.CreateTemp(home, "."+pairingFileName+".*")
	if err == nil {
		_, err = probe.Write([]byte("{}\n"))
		if err == nil {
			err = probe.Sync()
		}
		probe.Close()
		os.Remove(probe.Name())
	}
	if err == nil {
		err = s.dir.Sync()
	}
	if err != nil {
		return fmt.Errorf("cannot write the pairing in %s (%v); nothing was sent to the device", home, err)
	}
	return nil
}

// requireNoPairing refuses to replace a pending or active pairing.
func requireNoPairing(home string) error {
	p, err := readPairingFile(home)
	switch {
	case errors.Is(err, errNoPairing):
		return nil
	case err != nil:
		return err
	case p.Pending:
		return errors.New("a pairing is already waiting for confirmation; run `agentknock pairing finish` or `agentknock pairing abort`")
	}
	return errors.New("this client is already paired; run `agentknock pairing remove` first")
}

func pairingFinish(home string, watch *signalWatch, out *output) error {
	p, err := readPairingFile(home)
	if errors.Is(err, errNoPairing) {
		return classify(failNotPaired, errors.New("no pairing is waiting for confirmation"))
	}
	if err != nil {
		return err
	}
	if !p.Pending {
		return errors.New("the pairing is already active")
	}
	// A rerun after a crash resends the same request and collects the
	// device's answer to it (protocol.go).
	r, _, err := askDevice(home, p, pairingFinishMethod(home, p), watch, out)
	var answered *answeredError
	if errors.As(err, &answered) && !answered.local && r == nil {
		return fmt.Errorf("%v; the pending pairing was kept: check the pairing on the device, then run `agentknock pairing finish` again", err)
	}
	if err != nil {
		return err
	}
	fmt.Println("Pairing complete. Agentknock is ready to run commands with secrets.")
	return nil
}

// pairingFinishMethod is PairingFinish for askDevice. The pairing becomes
// active before the ACCEPTED completion goes out, as the reference client
// does; a failure to store it ends the exchange ABORTED.
func pairingFinishMethod(home string, p *pairingState) pairedMethod[*resultResponse] {
	return pairedMethod[*resultResponse]{
		request: newMethodRequest(methodPairingFinish),
		rerun:   "agentknock pairing finish",
		method:  methodPairingFinish,
		check:   checkPairingFinishResponse,
		settle: func(r *resultResponse) (any, error) {
			if r.Outcome == outcomeDenied {
				return newAbortedCompletion(abortOther, "pairing rejected"),
					errors.New("the device rejected the pairing; run `agentknock pairing abort` and start again if needed")
			}
			if err := activatePairing(home, p); err != nil {
				return nil, err
			}
			return newPairingFinishCompletion(), nil
		},
	}
}

// activatePairing marks the pending pairing p active, under the lock.
func activatePairing(home string, p *pairingState) error {
	s, err := lockStateDir(home)
	if err != nil {
		return err
	}
	defer s.unlock()
	current, err := readPairingFile(home)
	if err != nil || !current.Pending || current.ClientID != p.ClientID {
		return errors.New("the pending pairing changed while it was being finished; check `agentknock pairing status`")
	}
	current.Pending = false
	current.Outstanding = nil
	return s.writePairing(current)
}

func pairingAbort(home string, out *output) error {
	s, err := lockStateDir(home)
	if err != nil {
		return err
	}
	defer s.unlock()
	p, err := readPairingFile(home)
	if errors.Is(err, errNoPairing) {
		return errors.New("there is no pending pairing to abort")
	}
	if err != nil {
		return err
	}
	if !p.Pending {
		return errors.New("the pairing is active; use `agentknock pairing remove` to remove it")
	}
	if err := s.removePairing(); err != nil {
		return err
	}
	fmt.Println("Pending pairing discarded.")
	return nil
}

// pairingStatus prints the reference client's status lines on standard
// output; --verbose adds the identifiers and key state after them.
func pairingStatus(home string, out *output) error {
	p, err := readPairingFile(home)
	if errors.Is(err, errNoPairing) {
		fmt.Print("Pairing status: not paired.\nSuggested action: Get a pairing address, then run:\nagentknock pairing start <PAIRING_ADDRESS>\n")
		return nil
	}
	if err != nil {
		return err
	}
	switch {
	case p.Pending:
		fmt.Print("Pairing status: waiting for confirmation.\nSuggested action: After you approve the pairing on the device, run:\nagentknock pairing finish\n")
	case p.KeyRefusedAt != 0:
		// noteKeyRefused: the device answered AUTHENTICATION_FAILED.
		fmt.Printf("Pairing status: active, but the device refused this client's key.\n"+
			"At %s the device (or the relay: the report was not authenticated) answered AUTHENTICATION_FAILED. "+
			"Another copy of this Agentknock home may have rotated the key, or the pairing was replaced on the device.\n",
			time.Unix(int64(p.KeyRefusedAt), 0).UTC().Format(time.RFC3339))
		fmt.Println(strings.Join(pairAgain, "\n"))
	default:
		fmt.Println("Pairing status: active.")
	}
	if !out.verbose {
		return nil
	}
	fmt.Printf("Device: %s\nClient: %s\n", p.DeviceID, p.ClientID)
	if p.RelayURL != "" {
		fmt.Printf("Relay: %s\n", p.RelayURL)
	}
	fmt.Printf("Key rotated: %s\n", time.Unix(int64(p.RotatedAt), 0).UTC().Format(time.RFC3339))
	switch {
	case p.RotationKey != "" && p.KeyRefusedAt != 0:
		fmt.Println("Key rotation: refused by the device")
	case p.RotationKey != "":
		fmt.Println("Key rotation: waiting for the device to confirm")
	}
	return nil
}

func pairingRemove(home string, force bool, watch *signalWatch, out *output) error {
	p, err := readPairingFile(home)
	if errors.Is(err, errNoPairing) {
		return errors.New("this client is not paired")
	}
	if err != nil {
		return err
	}
	if p.Pending && !force {
		return errors.New("the pairing is pending; use `agentknock pairing abort`")
	}
	if force {
		if err := removeLocalPairing(home, p); err != nil {
			return err
		}
	} else {
		_, _, err := askDevice(home, p, pairingRemoveMethod(home, p), watch, out)
		var answered *answeredError
		if err != nil && !errors.As(err, &answered) {
			return fmt.Errorf("%v (or use --force to delete only the local pairing)", err)
		}
		if err != nil {
			return err
		}
	}
	if force {
		fmt.Println("Local pairing removed. The pairing on the device is unchanged.")
	} else {
		fmt.Println("Pairing removed from this client and the device.")
	}
	return nil
}

// pairingRemoveMethod is PairingRemove for askDevice: the local pairing
// goes once the device has removed its side, before the completion; a
// failure to delete it ends the exchange ABORTED.
func pairingRemoveMethod(home string, p *pairingState) pairedMethod[*resultResponse] {
	return pairedMethod[*resultResponse]{
		request: newMethodRequest(methodPairingRemove),
		rerun:   "agentknock pairing remove",
		method:  methodPairingRemove,
		check:   checkPairingRemoveResponse,
		settle: func(*resultResponse) (any, error) {
			if err := removeLocalPairing(home, p); err != nil {
				return nil, fmt.Errorf("the device removed the pairing, but the local pairing could not be removed: %v", err)
			}
			return newInfoCompletion(), nil
		},
	}
}

// removeLocalPairing deletes pairing.json if it still holds p.
func removeLocalPairing(home string, p *pairingState) error {
	s, err := lockStateDir(home)
	if err != nil {
		return err
	}
	defer s.unlock()
	current, err := readPairingFile(home)
	if err != nil {
		return err
	}
	if current.ClientID != p.ClientID || current.DeviceID != p.DeviceID {
		return errors.New("the pairing changed during removal; it was left in place")
	}
	return s.removePairing()
}

// parseInterspersed lets options come before or after positional
// arguments, as the reference client accepts them.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// isHelp: -h and --help ask for help; there is no help subcommand (the
// reference's `agentknock pairing help` is an unknown command, exit 2).
func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" }

// groupHelp answers a command group (`agentknock pairing`, `agentknock
// secret`) given no subcommand or a help option. Alone, a group is a usage
// error: its help goes to standard error with exit status 2, as the
// reference writes it. answered is false when args name a subcommand.
func groupHelp(args []string, usage string) (code int, answered bool) {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2, true
	}
	if isHelp(args[0]) {
		fmt.Print(usage)
		return 0, true
	}
	return 0, false
}

func reportUsageFor(command string, err error) int {
	fmt.Fprintf(os.Stderr, "error: %v\n\nFor more information, try 'agentknock %s --help'.\n", err, command)
	return 2
}
