// Process entry hook (linux/arm64): saves the caller's signal dispositions,
// signal mask and open-file limit before the Go runtime changes them, then
// continues at the runtime's normal entry. Linked only with
// -ldflags=-E=agentknock_rt0; see callerstate_linux.go for why.

#include "textflag.h"

// Raw system calls only: no stack frame, no TLS, no Go code. The runtime
// reads argc and argv from the stack, so registers may be clobbered.
TEXT agentknock_rt0(SB),NOSPLIT|NOFRAME,$0
	MOVD	$1, R19
actions:
	// rt_sigaction(sig, NULL, &callerActions[sig-1], 8)
	MOVD	R19, R0
	MOVD	$0, R1
	MOVD	$·callerActions(SB), R2
	SUB	$1, R19, R3
	LSL	$5, R3, R3
	ADD	R3, R2, R2
	MOVD	$8, R3
	MOVD	$134, R8
	SVC
	ADD	$1, R19, R19
	CMP	$65, R19
	BNE	actions

	// rt_sigprocmask(SIG_BLOCK, NULL, &callerMask, 8)
	MOVD	$0, R0
	MOVD	$0, R1
	MOVD	$·callerMask(SB), R2
	MOVD	$8, R3
	MOVD	$135, R8
	SVC

	// prlimit64(0, RLIMIT_NOFILE, NULL, &callerNofile)
	MOVD	$0, R0
	MOVD	$7, R1
	MOVD	$0, R2
	MOVD	$·callerNofile(SB), R3
	MOVD	$261, R8
	SVC
	CBNZ	R0, done
	MOVD	$1, R4
	MOVD	$·callerNofileSaved(SB), R5
	MOVD	R4, (R5)
done:
	MOVD	$1, R4
	MOVD	$·callerCaptured(SB), R5
	MOVD	R4, (R5)
	B	_rt0_arm64_linux(SB)
