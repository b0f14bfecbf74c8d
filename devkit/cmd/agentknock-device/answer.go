// `pending`, `approve`, `deny`, `pairing confirm|reject`: answering the
// requests a running serve waits on, from another terminal, through the
// control socket (control.go).
package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// control sends one request to the running serve of this state directory.
func (c *cli) control(req controlRequest) (*controlResponse, error) {
	dir, err := c.stateDir()
	if err != nil {
		return nil, err
	}
	resp, err := callControl(dir, req)
	if errors.Is(err, errNoServe) {
		return nil, fmt.Errorf("%w (state directory %s); start it with '%s serve'", err, dir, progName)
	}
	return resp, err
}

func cmdPending(c *cli, args []string) error {
	fs := c.flags("pending")
	asJSON := fs.Bool("json", false, "")
	operands, err := c.parse(fs, helpPending, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "pending [--json]"); err != nil {
		return err
	}
	resp, err := c.control(controlRequest{Op: "pending"})
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(c.stdout, nonNil(resp.Pending))
	}
	if len(resp.Pending) == 0 {
		fmt.Fprintln(c.stderr, "no pending requests")
		return nil
	}
	for i := range resp.Pending {
		if i > 0 {
			fmt.Fprintln(c.stdout)
		}
		io.WriteString(c.stdout, renderApproval(&resp.Pending[i]))
	}
	return nil
}

func cmdApprove(c *cli, args []string) error {
	fs := c.flags("approve")
	forText := fs.String("for", "", "")
	pinText := fs.String("pin", "", "")
	accept := fs.String("accept-unbound", "", "")
	readOnly := fs.Bool("read-only", false, "")
	operands, err := c.parse(fs, helpApprove, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 1, 1, "approve ID [--pin DURATION [--accept-unbound CODE] | --for DURATION [--read-only]]"); err != nil {
		return err
	}
	if *forText != "" {
		if _, err := parseGrantDuration(*forText); err != nil {
			return usageError{err.Error()}
		}
	}
	if *pinText != "" {
		if _, err := parsePinDuration(*pinText); err != nil {
			return usageError{err.Error()}
		}
	}
	if *accept != "" && *pinText == "" {
		return usagef("--accept-unbound confirms a pin; it needs --pin")
	}
	if *readOnly && *forText == "" {
		return usagef("--read-only shapes a grant: it needs --for DURATION")
	}
	req := controlRequest{Op: "approve", ID: operands[0], For: *forText, ReadOnly: *readOnly, Pin: *pinText, AcceptUnbound: *accept}
	resp, err := c.control(req)
	if err != nil && resp != nil && resp.AcceptUnbound != "" && *accept == "" {
		// On a terminal the person can confirm the list right here; a
		// script must pass the code, having been shown the list.
		f, ok := c.stdin.(*os.File)
		if !ok || !foregroundTerminal(f) {
			return err
		}
		fmt.Fprintf(c.stderr, "%s\npin it anyway, knowing the above is not bound? [y/N] ", resp.Error)
		line, _ := bufio.NewReader(c.stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(line)); a != "y" && a != "yes" {
			return errors.New("not pinned; the request still waits")
		}
		req.AcceptUnbound = resp.AcceptUnbound
		resp, err = c.control(req)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stderr, clean(resp.Message))
	return nil
}

func cmdDeny(c *cli, args []string) error {
	fs := c.flags("deny")
	message := fs.String("message", "", "")
	operands, err := c.parse(fs, helpDeny, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 1, 1, "deny ID [--message TEXT]"); err != nil {
		return err
	}
	return c.answer(controlRequest{Op: "deny", ID: operands[0], Message: *message})
}

func cmdPairing(c *cli, args []string) error {
	if len(args) == 0 {
		return usagef(`usage: %s pairing confirm "dddd dddd dddd" | pairing reject`, progName)
	}
	sub := args[0]
	switch sub {
	case "-h", "-help", "--help":
		io.WriteString(c.stdout, helpPairing)
		return errHelpShown
	case "confirm", "reject":
	default:
		return usagef("unknown pairing command %q (want confirm or reject)", sub)
	}
	fs := c.flags("pairing " + sub)
	operands, err := c.parse(fs, helpPairing, args[1:])
	if err != nil {
		return err
	}
	if sub == "reject" {
		if err := wantOperands(operands, 0, 0, "pairing reject"); err != nil {
			return err
		}
		return c.answer(controlRequest{Op: "pairing-reject"})
	}
	// The digits may come as one quoted operand or as three groups.
	if err := wantOperands(operands, 1, 3, `pairing confirm "dddd dddd dddd"`); err != nil {
		return err
	}
	sas, ok := parseSAS(strings.Join(operands, " "))
	if !ok {
		return usagef("the verification code is the 12 digits the client shows, e.g. \"0123 4567 8901\"")
	}
	return c.answer(controlRequest{Op: "pairing-confirm", SAS: sas})
}

// answer sends an answering request and reports serve's confirmation.
func (c *cli) answer(req controlRequest) error {
	resp, err := c.control(req)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stderr, clean(resp.Message))
	return nil
}
