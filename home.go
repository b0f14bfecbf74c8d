// The state home: --agentknock-home, else AGENTKNOCK_HOME, else
// $HOME/.agentknock, as the reference client resolves it. Resolving it never
// changes the environment the command receives.

package main

import (
	"fmt"
	"os"
	"path/filepath"
)

func stateHome(flagValue string) (string, error) {
	if flagValue != "" {
		abs, err := filepath.Abs(flagValue)
		if err != nil {
			return "", fmt.Errorf("--agentknock-home %q: %v", flagValue, err)
		}
		return abs, nil
	}
	if v, ok := os.LookupEnv("AGENTKNOCK_HOME"); ok {
		if v == "" || !filepath.IsAbs(v) {
			return "", classify(failHomeNotSet, fmt.Errorf("AGENTKNOCK_HOME must be a non-empty absolute path, not %q", v))
		}
		return filepath.Clean(v), nil
	}
	home := os.Getenv("HOME")
	if home == "" || !filepath.IsAbs(home) {
		return "", classify(failHomeNotSet, fmt.Errorf("HOME is not set to an absolute path, so Agentknock cannot find its pairing"))
	}
	return filepath.Join(home, ".agentknock"), nil
}
