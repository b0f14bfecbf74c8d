// What the host must provide before the request is sent (command-execution.md,
// "Platform implementations"): on macOS 15 every facility the run uses
// (O_EXEC, kqueue EVFILT_PROC, LOCAL_PEERPID) is part of the system, so
// there is nothing to probe.
package main

func checkHostFacilities(runNeeds) error { return nil }
