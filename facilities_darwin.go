// What the host must provide before the request is sent (command-execution.md,
// "Platform implementations"): on macOS 15 every facility the run uses
// (O_EXEC, kqueue EVFILT_PROC, LOCAL_PEERPID) is part of the system, so
// there is nothing to probe.

package main

func checkHostFacilities(runNeeds) error { return nil }

// runDescriptors is unused on macOS, where the runtime's poller (kqueue)
// is one descriptor and low limits have not shown this failure.
const runDescriptors = 0

func checkDescriptors(int, bool) error { return nil }
