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
	wasFresh := !stateExists(dir)
	address, err := device.Init(dir)
	if err != nil {
		return err
	}
	key, fresh, err := ensureSealing(dir, wasFresh)
	if err != nil {
		return err
	}
	fmt.Fprintln(c.stdout, address)
	if fresh {
		fmt.Fprintf(c.stderr, `audit log verification key (shown this once; keep it away from this machine):
  %s
  '%s log --verify --key KEY' checks with it that no entry sealed before was
  changed, removed, reordered or cut, even by someone who later read this state.
`, key, progName)
	}
	fmt.Fprintf(c.stderr, `device state: %s
pairing address: %s (printed on standard output)
next: start the device with '%s serve', then pair a client (--relay is
stored with the pairing, so later runs need no environment variable):
  agentknock pairing start %s --relay ws://127.0.0.1:8787
`, dir, address, progName, address)
	return nil
}
