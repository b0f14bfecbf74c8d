//go:build !agentknock_testapproval || !linux

// Approval from the paired device: command-execution.md steps 3-4.
package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func requestApproval(home string, req *launchRequest, watch *signalWatch, out *output) (*launchApproval, error) {
	if _, err := os.Stat(filepath.Join(home, "pairing.json")); err != nil {
		return nil, fmt.Errorf("this client is not paired with a device (no %s); run `agentknock pairing start ADDRESS` first. Agentknock did not contact the device", filepath.Join(home, "pairing.json"))
	}
	return nil, fmt.Errorf("the device exchange is not available in this build; Agentknock did not contact the device")
}
