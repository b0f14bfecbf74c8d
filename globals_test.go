// Global options (globals.go) wherever they stand before `--`.

package main

import (
	"reflect"
	"testing"
)

// Follows the reference's agentknock_home_is_global_and_stops_at_the_command_separator.
func TestGlobalOptionsAnywhereBeforeTheCommand(t *testing.T) {
	cases := []struct {
		args []string
		want globalOptions
		rest []string
	}{
		{[]string{"--agentknock-home", "h", "pairing", "status"}, globalOptions{Home: "h"}, []string{"pairing", "status"}},
		{[]string{"pairing", "status", "--agentknock-home", "h"}, globalOptions{Home: "h"}, []string{"pairing", "status"}},
		{[]string{"secret", "--agentknock-home=h", "list", "--quiet"}, globalOptions{Home: "h", Quiet: true}, []string{"secret", "list"}},
		{[]string{"--quiet", "run", "-s", "x", "--", "true"}, globalOptions{Quiet: true}, []string{"run", "-s", "x", "--", "true"}},
		{[]string{"-s", "x", "--verbose", "--", "tool", "--agentknock-home", "child", "--quiet"}, globalOptions{Verbose: true},
			[]string{"-s", "x", "--", "tool", "--agentknock-home", "child", "--quiet"}},
		// Operands of other options are not taken for global options.
		{[]string{"-s", "x", "--reason", "--quiet", "--rename-env", "x", "--verbose", "B", "--", "t"}, globalOptions{},
			[]string{"-s", "x", "--reason", "--quiet", "--rename-env", "x", "--verbose", "B", "--", "t"}},
		{[]string{"secret", "upload", "n", "--description", "--agentknock-home", "--from-env", "A"}, globalOptions{},
			[]string{"secret", "upload", "n", "--description", "--agentknock-home", "--from-env", "A"}},
	}
	for _, c := range cases {
		g, rest, err := extractGlobalOptions(c.args)
		if err != nil || g != c.want || !reflect.DeepEqual(rest, c.rest) {
			t.Errorf("%q: %+v %q %v, want %+v %q", c.args, g, rest, err, c.want, c.rest)
		}
	}
	for _, bad := range [][]string{
		{"--agentknock-home", "", "pairing", "status"},
		{"--agentknock-home=", "pairing", "status"},
		{"pairing", "status", "--agentknock-home"},
		{"--agentknock-home", "a", "pairing", "status", "--agentknock-home", "b"},
		{"--quiet", "pairing", "status", "--verbose"},
		{"--quiet=yes", "pairing", "status"},
	} {
		if _, _, err := extractGlobalOptions(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
