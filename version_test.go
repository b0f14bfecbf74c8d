// The stamped version wins over the one the module system records.

package main

import "testing"

func TestClientVersion(t *testing.T) {
	saved := version
	defer func() { version = saved }()
	version = "1.2.3"
	if v := clientVersion(); v != "1.2.3" {
		t.Errorf("stamped 1.2.3, reported %q", v)
	}
	version = "dev"
	// A test binary records no module version: "dev" stays.
	if v := clientVersion(); v != "dev" {
		t.Errorf("unstamped test binary reported %q", v)
	}
}
