// `uploads` and `upload accept|reject`: the review queue of SecretUpload
// proposals (client-device protocol, "Secret upload"). A client's upload
// only proposes a change; a person applies it here.
package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"agentknock.dev/agentknock/devkit/device"
)

func cmdUploads(c *cli, args []string) error {
	fs := c.flags("uploads")
	asJSON := fs.Bool("json", false, "")
	operands, err := c.parse(fs, helpUploads, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "uploads [--json]"); err != nil {
		return err
	}
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	uploads, err := device.ListUploads(dir)
	if err != nil {
		return err
	}
	if *asJSON {
		return printJSON(c.stdout, nonNil(uploads))
	}
	if len(uploads) == 0 {
		fmt.Fprintln(c.stderr, "no uploads waiting for review")
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCLIENT\tMODE\tNAME\tTYPE\tVARIABLES / PUBLIC KEY\tDESCRIPTION\tRECEIVED")
	for _, u := range uploads {
		detail := cleanList(u.Variables, ",")
		if u.Type == "ssh" {
			detail = clean(u.PublicKey)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", clean(u.ID), clean(u.ClientID), clean(u.Mode),
			clean(u.Name), clean(u.Type), detail, clean(u.Description), u.ReceivedAt.Local().Format(time.RFC3339))
	}
	return tw.Flush()
}

func cmdUpload(c *cli, args []string) error {
	if len(args) == 0 {
		return usagef("usage: %s upload accept|reject ID", progName)
	}
	sub := args[0]
	switch sub {
	case "-h", "-help", "--help":
		io.WriteString(c.stdout, helpUpload)
		return errHelpShown
	case "accept", "reject":
	default:
		return usagef("unknown upload command %q (want accept or reject)", sub)
	}
	fs := c.flags("upload " + sub)
	operands, err := c.parse(fs, helpUpload, args[1:])
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 1, 1, "upload "+sub+" ID"); err != nil {
		return err
	}
	dir, err := c.existingState()
	if err != nil {
		return err
	}
	id := operands[0]
	if sub == "accept" {
		err = device.AcceptUpload(dir, id)
	} else {
		err = device.RejectUpload(dir, id)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stderr, "upload %s %sed\n", clean(id), sub)
	return nil
}
