// Process entry hook (linux/amd64): saves the caller's signal dispositions,
// signal mask, open-file limit and closed standard descriptors before the Go
// runtime changes them, stops with one line when the limit is too low for
// the runtime to start, then continues at the runtime's normal entry. Linked
// only with -ldflags=-E=agentknock_rt0; see exec_linux.go for why.

#include "textflag.h"

#define callerPendingSlots 40
#define holdSlots 256

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

	// rt_sigtimedwait(&runtimeUnblockedSet, &callerPending[n], &zeroTimeout, 8)
	// until none is left: a signal the caller blocked that is pending now
	// and that the runtime unblocks would be taken by the runtime as soon
	// as it starts (and end the process or vanish). Dequeued with its
	// siginfo, it is queued again just before the exec (requeueCallerPending).
	XORQ	R12, R12
pending:
	MOVQ	R12, SI
	SHLQ	$7, SI
	LEAQ	·callerPending(SB), AX
	ADDQ	AX, SI
	LEAQ	·runtimeUnblockedSet(SB), DI
	LEAQ	·zeroTimeout(SB), DX
	MOVQ	$8, R10
	MOVQ	$128, AX
	SYSCALL
	CMPQ	AX, $0
	JLE	pendingdone
	INCQ	R12
	CMPQ	R12, $callerPendingSlots
	JNE	pending
pendingdone:
	MOVQ	R12, ·callerPendingCount(SB)

	// prlimit64(0, RLIMIT_NOFILE, NULL, &callerNofile)
	XORQ	DI, DI
	MOVQ	$7, SI
	XORQ	DX, DX
	LEAQ	·callerNofile(SB), R10
	MOVQ	$302, AX
	SYSCALL
	CMPQ	AX, $0
	JNE	stdfds
	MOVQ	$1, ·callerNofileSaved(SB)

stdfds:
	// fcntl(fd, F_GETFD) for 0, 1 and 2: EBADF is a descriptor the caller
	// left closed, which the runtime would reopen on /dev/null.
	XORQ	R12, R12
	XORQ	R13, R13
stdfd:
	MOVQ	R12, DI
	MOVQ	$1, SI
	MOVQ	$72, AX
	SYSCALL
	CMPQ	AX, $-9
	JNE	stdnext
	MOVQ	$1, BX
	MOVQ	R12, CX
	SHLQ	CX, BX
	ORQ	BX, R13
stdnext:
	INCQ	R12
	CMPQ	R12, $3
	JNE	stdfd
	MOVQ	R13, ·callerClosedStd(SB)

	// The runtime needs a hard limit of 5 (standard descriptors, epoll,
	// eventfd) and, to reopen a closed standard descriptor, a soft limit
	// of 3; below that it would die with a stack trace.
	CMPQ	·callerNofileSaved(SB), $0
	JEQ	done
	CMPQ	·callerNofile+8(SB), $5
	JCS	toolow
	CMPQ	R13, $0
	JEQ	done
	CMPQ	·callerNofile(SB), $3
	JCS	toolow
done:
	// The runtime needs threads to start, which a soft process limit
	// below launcherTasks (exec_linux.go) may not leave it; the kernel
	// does not apply the limit to root or to a task with CAP_SYS_RESOURCE
	// or CAP_SYS_ADMIN (processLimitExempt, which also checks the user
	// namespace; this early stop leaves that to it). capget and
	// prlimit64(0, RLIMIT_NPROC, NULL, &nproc) write into the stack's
	// scratch below SP, which nothing uses yet.
	MOVQ	$102, AX	// getuid
	SYSCALL
	CMPQ	AX, $0
	JEQ	captured
	// capget(&{_LINUX_CAPABILITY_VERSION_3, 0}, &data[2]): bits 21 and 24
	// of data[0].effective.
	MOVL	$0x20080522, -56(SP)
	MOVL	$0, -52(SP)
	LEAQ	-56(SP), DI
	LEAQ	-48(SP), SI
	MOVQ	$125, AX	// capget
	SYSCALL
	CMPQ	AX, $0
	JNE	nproc
	MOVL	-48(SP), AX
	ANDL	$0x1200000, AX
	JNE	captured
nproc:
	XORQ	DI, DI
	MOVQ	$6, SI
	XORQ	DX, DX
	LEAQ	-16(SP), R10
	MOVQ	$302, AX
	SYSCALL
	CMPQ	AX, $0
	JNE	captured
	CMPQ	-16(SP), $12	// launcherTasks
	JCS	toofewprocs
captured:
	MOVQ	$1, ·callerCaptured(SB)
	JMP	_rt0_amd64_linux(SB)

toofewprocs:
	MOVQ	$2, DI
	MOVQ	·lowProcessLimitMessage(SB), SI
	MOVQ	·lowProcessLimitMessage+8(SB), DX
	MOVQ	$1, AX
	SYSCALL
	MOVQ	$1, DI
	MOVQ	$231, AX
	SYSCALL

toolow:
	// write(2, message, len); exit_group(1)
	MOVQ	$2, DI
	MOVQ	·lowLimitMessage(SB), SI
	MOVQ	·lowLimitMessage+8(SB), DX
	MOVQ	$1, AX
	SYSCALL
	MOVQ	$1, DI
	MOVQ	$231, AX
	SYSCALL

// agentknock_forward(sig) is the disposition of a signal the caller blocked
// (applyCallerSignals, exec_linux.go): run on a thread where the
// runtime unblocked the signal, it sends the signal on to the main thread
// (tgkill(pid, pid, sig)), which keeps it blocked and execs, so that it is
// pending in the command as after a direct exec. Called by the kernel with
// the C convention; every register is restored by rt_sigreturn.
TEXT agentknock_forward(SB),NOSPLIT|NOFRAME,$0
	MOVQ	DI, DX
	MOVQ	$39, AX	// getpid
	SYSCALL
	MOVQ	AX, DI
	MOVQ	AX, SI
	MOVQ	$234, AX	// tgkill
	SYSCALL
	RET

// agentknock_hold(sig, info, uctx) is SIGPROF's disposition while the
// hand-off holds every other thread (threadHold.everyThread, exec_linux.go). For a
// SIGPROF the launcher sent to this thread itself (si_code SI_TKILL, si_pid
// this process), it adds holdMask to the mask that rt_sigreturn restores
// (uc_sigmask, at offset 296 of the kernel's ucontext on amd64), so that
// the thread keeps those signals blocked from then on, and records the
// thread's ID in holdTids as its acknowledgement. It runs with every signal
// blocked (sa_mask), and so does agentknock_forward, so a thread
// acknowledges only once it has sent on any signal it took.
TEXT agentknock_hold(SB),NOSPLIT|NOFRAME,$0
	CMPL	8(SI), $-6
	JNE	holdret
	MOVQ	$39, AX	// getpid
	SYSCALL
	MOVL	16(SI), CX
	CMPQ	AX, CX
	JNE	holdret
	MOVQ	·holdMask(SB), AX
	ORQ	AX, 296(DX)
	MOVQ	$186, AX	// gettid
	SYSCALL
	MOVQ	$1, CX
	LOCK
	XADDQ	CX, ·holdAcks(SB)
	CMPQ	CX, $holdSlots
	JAE	holdret
	LEAQ	·holdTids(SB), BX
	MOVL	AX, (BX)(CX*4)
holdret:
	RET

// agentknock_sigreturn is the sa_restorer that returns from the handler.
TEXT agentknock_sigreturn(SB),NOSPLIT|NOFRAME,$0
	MOVQ	$15, AX	// rt_sigreturn
	SYSCALL
	INT	$3

GLOBL	·forwardHandler(SB), RODATA, $8
DATA	·forwardHandler(SB)/8, $agentknock_forward(SB)
GLOBL	·forwardRestorer(SB), RODATA, $8
DATA	·forwardRestorer(SB)/8, $agentknock_sigreturn(SB)
GLOBL	·holdHandler(SB), RODATA, $8
DATA	·holdHandler(SB)/8, $agentknock_hold(SB)
