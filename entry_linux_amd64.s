// Process entry hook (linux/amd64): saves the caller's signal dispositions,
// signal mask and open-file limit before the Go runtime changes them, then
// continues at the runtime's normal entry. Linked only with
// -ldflags=-E=agentknock_rt0; see callerstate_linux.go for why.

#include "textflag.h"

// Raw system calls only: no stack frame, no TLS, no Go code. The kernel
// entry registers carry nothing the runtime needs (it reads argc and argv
// from the stack), so they may be clobbered.
TEXT agentknock_rt0(SB),NOSPLIT|NOFRAME,$0
	MOVQ	$1, R12
actions:
	// rt_sigaction(sig, NULL, &callerActions[sig-1], 8)
	MOVQ	R12, DI
	XORQ	SI, SI
	LEAQ	·callerActions(SB), DX
	MOVQ	R12, AX
	DECQ	AX
	SHLQ	$5, AX
	ADDQ	AX, DX
	MOVQ	$8, R10
	MOVQ	$13, AX
	SYSCALL
	INCQ	R12
	CMPQ	R12, $65
	JNE	actions

	// rt_sigprocmask(SIG_BLOCK, NULL, &callerMask, 8)
	XORQ	DI, DI
	XORQ	SI, SI
	LEAQ	·callerMask(SB), DX
	MOVQ	$8, R10
	MOVQ	$14, AX
	SYSCALL

	// prlimit64(0, RLIMIT_NOFILE, NULL, &callerNofile)
	XORQ	DI, DI
	MOVQ	$7, SI
	XORQ	DX, DX
	LEAQ	·callerNofile(SB), R10
	MOVQ	$302, AX
	SYSCALL
	CMPQ	AX, $0
	JNE	done
	MOVQ	$1, ·callerNofileSaved(SB)
done:
	MOVQ	$1, ·callerCaptured(SB)
	JMP	_rt0_amd64_linux(SB)
