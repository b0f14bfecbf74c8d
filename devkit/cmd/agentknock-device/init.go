// `init`: create the device state (identity, device id, pairing address)
// once and print the pairing address; stdout carries the address alone so
// scripts can capture it, the explanation goes to stderr.
package main

import (
	"fmt"

	"agentknock.dev/agentknock/devkit/device"
)

func cmdInit(c *cli, args []string) error {
	fs := c.flags("init")
	operands, err := c.parse(fs, helpInit, args)
	if err != nil {
		return err
	}
	if err := wantOperands(operands, 0, 0, "init"); err != nil {
		return err
	}
	dir, err := c.stateDir()
	if err != nil {
		return err
	}
	address, err := device.Init(dir)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, address)
	fmt.Fprintf(c.stderr, `device state: %s
pairing address: %s (printed on standard output)
next: start the device with '%s serve', then pair a client (--relay is
stored with the pairing, so later runs need no environment variable):
  agentknock pairing start %s --relay ws://127.0.0.1:8787
`, dir, address, progName, address)
	return nil
}
