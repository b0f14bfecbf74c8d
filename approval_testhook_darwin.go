//go:build agentknock_testapproval

// The test approval's thread-directed signal on macOS (approval_testhook.go):
// pthread_kill(pthread_self(), sig) through libSystem, the trampolines of
// libc_testhook_darwin.s.

package main

import "syscall"

var libc_pthread_self_trampoline_addr uintptr

//go:cgo_import_dynamic libc_pthread_self pthread_self "/usr/lib/libSystem.B.dylib"

var libc_pthread_kill_trampoline_addr uintptr

//go:cgo_import_dynamic libc_pthread_kill pthread_kill "/usr/lib/libSystem.B.dylib"

// raiseOnThisThread makes sig pending on the calling thread only (the
// hand-off's locked thread, which has it blocked at that point).
func raiseOnThisThread(sig syscall.Signal) {
	self, _, _ := syscall_syscall(libc_pthread_self_trampoline_addr, 0, 0, 0)
	syscall_syscall(libc_pthread_kill_trampoline_addr, self, uintptr(sig), 0)
}
