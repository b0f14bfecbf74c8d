// The client's version: stamped at release time with
// -ldflags=-X main.version=..., else the module version that `go install
// agentknock.dev/agentknock@vX.Y.Z` records in the binary.

package main

import (
	"runtime/debug"
	"strings"
)

var version = "dev"

// clientVersion is what --version and the protocol's app_info report.
func clientVersion() string {
	if version != "dev" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && strings.HasPrefix(bi.Main.Version, "v") {
		return strings.TrimPrefix(bi.Main.Version, "v")
	}
	return version
}
