// What the host must provide before the request is sent (command-execution.md,
// "Platform implementations"): macOS 15 or later. Every facility the run
// uses (O_EXEC and O_SEARCH, kqueue EVFILT_PROC, LOCAL_PEERPID) is part of
// that system, but O_EXEC cannot be probed: macOS 12's open(2) drops the
// bit without an error (and F_GETFL shows only what the kernel kept, after
// selection has already opened by the wrong rules). So the Darwin release
// decides (checkDarwinRelease), the way Linux refuses a kernel without
// faccessat2. The binary declares the same minimum (LC_BUILD_VERSION minos
// 15.0, from minos_darwin_*.syso); whether dyld then refuses an older
// macOS outright was not measured here, and this check does not rely on it.

package main

import "golang.org/x/sys/unix"

func checkHostFacilities(runNeeds) error {
	release, err := unix.Sysctl("kern.osrelease")
	if err != nil {
		release = ""
	}
	product, _ := unix.Sysctl("kern.osproductversion")
	return checkDarwinRelease(release, product)
}

// runDescriptors is unused on macOS, where the runtime's poller (kqueue)
// is one descriptor and low limits have not shown this failure.
const runDescriptors = 0

func checkDescriptors(int, bool) error { return nil }
