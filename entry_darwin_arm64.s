// Process entry hook (darwin/arm64): saves the caller's signal
// dispositions, signal mask and closed standard descriptors before the Go
// runtime changes them, then continues at the runtime's normal entry.
// Linked only with -ldflags=-E=agentknock_rt0; see exec_darwin.go.
//
// The binary is an LC_MAIN executable: dyld has loaded and initialised
// libSystem before it calls this entry point as main(argc, argv, envp,
// apple) with the C calling convention, so libSystem's functions can be
// called here, through the same stubs the runtime itself uses for them a
// few instructions later. (macOS supports system calls only through
// libSystem; no raw system call is made.)

#include "textflag.h"

// On the thread's C stack, 16-byte aligned at entry. R19-R21 are
// callee-saved in the C convention; R18 is the platform's and untouched.
// The frame record (R29, R30) at the bottom of the frame and R29 pointing
// at it are the AAPCS64 frame chain, so a backtrace taken inside the
// libSystem calls (a crash report, a debugger) walks through this frame
// to dyld's start.
TEXT agentknock_rt0(SB),NOSPLIT|NOFRAME,$0
	SUB	$48, RSP
	STP	(R29, R30), (RSP)
	MOVD	RSP, R29
	STP	(R0, R1), 16(RSP)
	STP	(R2, R3), 32(RSP)

	// sigaction(sig, NULL, &callerActions[sig-1]) for signals 1-31;
	// SIGKILL and SIGSTOP answer EINVAL and stay zero (SIG_DFL).
	MOVD	$1, R19
actions:
	MOVD	R19, R0
	MOVD	$0, R1
	MOVD	$·callerActions(SB), R2
	SUB	$1, R19, R3
	LSL	$4, R3, R3
	ADD	R3, R2, R2
	BL	libc_sigaction(SB)
	ADD	$1, R19, R19
	CMP	$32, R19
	BNE	actions

	// pthread_sigmask(SIG_BLOCK, NULL, &callerMask): the main thread's
	// mask, which execve gave this process from the caller.
	MOVD	$1, R0
	MOVD	$0, R1
	MOVD	$·callerMask(SB), R2
	BL	libc_pthread_sigmask(SB)

	// fcntl(fd, F_GETFD) for 0, 1 and 2 (no variadic argument): -1 is a
	// descriptor the caller left closed, which the runtime would reopen
	// on /dev/null.
	MOVD	$0, R19
	MOVD	$0, R20
stdfd:
	MOVD	R19, R0
	MOVD	$1, R1
	BL	libc_fcntl(SB)
	CMNW	$1, R0
	BNE	stdnext
	MOVD	$1, R4
	LSL	R19, R4, R4
	ORR	R4, R20, R20
stdnext:
	ADD	$1, R19, R19
	CMP	$3, R19
	BNE	stdfd
	MOVD	$·callerClosedStd(SB), R5
	MOVD	R20, (R5)

	MOVD	$1, R4
	MOVD	$·callerCaptured(SB), R5
	MOVD	R4, (R5)

	LDP	32(RSP), (R2, R3)
	LDP	16(RSP), (R0, R1)
	LDP	(RSP), (R29, R30)
	ADD	$48, RSP
	JMP	_rt0_arm64_darwin(SB)
