// `clients` and `revoke`: the client bindings in the state directory. A
// revocation goes through a running serve when there is one, so the relay
// closes that client's connections at once; otherwise it is written to the
// state directory directly.
package main

import (
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

func cmdClients(c *cli, args []string) error {
	fs := c.flags("clients")
	asJSON := fs.Bool("json", false, "")
	operands, err := c.parse(fs, helpClients, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "clients [--json]"); err != nil {
		return err
	}
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	clients, err := device.ListClients(dir)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(c.stdout, nonNil(clients))
	}
	if len(clients) == 0 {
		fmt.Fprintln(c.stderr, "no clients (pair one with 'agentknock pairing start ADDRESS')")
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT ID\tSTATE\tHOSTNAME\tPLATFORM\tPAIRED")
	for _, cl := range clients {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", clean(cl.ClientID), clean(cl.State),
			clean(cl.Hostname), clean(cl.Platform), cl.PairedAt.Local().Format(time.RFC3339))
	}
	return tw.Flush()
}

func cmdRevoke(c *cli, args []string) error {
	fs := c.flags("revoke")
	operands, err := c.parse(fs, helpRevoke, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 1, 1, "revoke CLIENT_ID"); err != nil {
		return err
	}
	id := operands[0]
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	_, err = callControl(dir, controlRequest{Op: "revoke", ClientID: id})
	switch {
	case err == nil:
		fmt.Fprintf(c.stderr, "revoked client %s (the running serve closed its connections)\n", clean(id))
		return nil
	case !errors.Is(err, errNoServe):
		return err
	}
	if err := device.RevokeClient(dir, id); err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "revoked client %s\n", clean(id))
	return nil
}
