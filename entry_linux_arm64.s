// Process entry hook (linux/arm64): saves the caller's signal dispositions,
// signal mask, open-file limit and closed standard descriptors before the Go
// runtime changes them, stops with one line when the limit is too low for
// the runtime to start, then continues at the runtime's normal entry. Linked
// only with -ldflags=-E=agentknock_rt0; see exec_linux.go for why.

#include "textflag.h"

#define callerPendingSlots 40
#define holdSlots 256

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

	// rt_sigtimedwait(&runtimeUnblockedSet, &callerPending[n], &zeroTimeout, 8)
	// until none is left: a signal the caller blocked that is pending now
	// and that the runtime unblocks would be taken by the runtime as soon
	// as it starts (and end the process or vanish). Dequeued with its
	// siginfo, it is queued again just before the exec (requeueCallerPending).
	MOVD	$0, R19
pending:
	MOVD	$·runtimeUnblockedSet(SB), R0
	MOVD	$·callerPending(SB), R1
	LSL	$7, R19, R4
	ADD	R4, R1, R1
	MOVD	$·zeroTimeout(SB), R2
	MOVD	$8, R3
	MOVD	$137, R8
	SVC
	CMP	$0, R0
	BLE	pendingdone
	ADD	$1, R19, R19
	CMP	$callerPendingSlots, R19
	BNE	pending
pendingdone:
	MOVD	$·callerPendingCount(SB), R5
	MOVD	R19, (R5)

	// prlimit64(0, RLIMIT_NOFILE, NULL, &callerNofile)
	MOVD	$0, R0
	MOVD	$7, R1
	MOVD	$0, R2
	MOVD	$·callerNofile(SB), R3
	MOVD	$261, R8
	SVC
	CBNZ	R0, stdfds
	MOVD	$1, R4
	MOVD	$·callerNofileSaved(SB), R5
	MOVD	R4, (R5)

stdfds:
	// fcntl(fd, F_GETFD) for 0, 1 and 2: EBADF is a descriptor the caller
	// left closed, which the runtime would reopen on /dev/null.
	MOVD	$0, R19
	MOVD	$0, R20
stdfd:
	MOVD	R19, R0
	MOVD	$1, R1
	MOVD	$25, R8
	SVC
	CMN	$9, R0
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

	// The runtime needs a hard limit of 5 (standard descriptors, epoll,
	// eventfd) and, to reopen a closed standard descriptor, a soft limit
	// of 3; below that it would die with a stack trace.
	MOVD	$·callerNofileSaved(SB), R5
	MOVD	(R5), R4
	CBZ	R4, done
	MOVD	$·callerNofile(SB), R5
	MOVD	8(R5), R4
	CMP	$5, R4
	BLO	toolow
	CBZ	R20, done
	MOVD	(R5), R4
	CMP	$3, R4
	BLO	toolow
done:
	// The runtime needs threads to start, which a soft process limit
	// below launcherTasks (exec_linux.go) may not leave it; the kernel
	// does not apply the limit to root or to a task with CAP_SYS_RESOURCE
	// or CAP_SYS_ADMIN (processLimitExempt, which also checks the user
	// namespace; this early stop leaves that to it). capget and
	// prlimit64(0, RLIMIT_NPROC, NULL, &nproc) write into the stack's
	// scratch below RSP, which nothing uses yet.
	MOVD	$174, R8	// getuid
	SVC
	CBZ	R0, captured
	// capget(&{_LINUX_CAPABILITY_VERSION_3, 0}, &data[2]): bits 21 and 24
	// of data[0].effective.
	MOVD	RSP, R0
	SUB	$56, R0, R0
	MOVW	$0x20080522, R4
	MOVW	R4, (R0)
	MOVW	ZR, 4(R0)
	ADD	$8, R0, R1
	MOVD	$90, R8	// capget
	SVC
	CBNZ	R0, nproc
	MOVD	RSP, R1
	SUB	$48, R1, R1
	MOVWU	(R1), R4
	MOVW	$0x1200000, R5
	AND	R5, R4, R4
	CBNZ	R4, captured
nproc:
	MOVD	$0, R0
	MOVD	$6, R1
	MOVD	$0, R2
	MOVD	RSP, R3
	SUB	$16, R3, R3
	MOVD	$261, R8
	SVC
	CBNZ	R0, captured
	MOVD	RSP, R3
	SUB	$16, R3, R3
	MOVD	(R3), R4
	CMP	$12, R4	// launcherTasks
	BLO	toofewprocs
captured:
	MOVD	$1, R4
	MOVD	$·callerCaptured(SB), R5
	MOVD	R4, (R5)
	B	_rt0_arm64_linux(SB)

toofewprocs:
	MOVD	$·lowProcessLimitMessage(SB), R5
	MOVD	$2, R0
	MOVD	(R5), R1
	MOVD	8(R5), R2
	MOVD	$64, R8
	SVC
	MOVD	$1, R0
	MOVD	$94, R8
	SVC

toolow:
	// write(2, message, len); exit_group(1)
	MOVD	$·lowLimitMessage(SB), R5
	MOVD	$2, R0
	MOVD	(R5), R1
	MOVD	8(R5), R2
	MOVD	$64, R8
	SVC
	MOVD	$1, R0
	MOVD	$94, R8
	SVC

// agentknock_forward(sig) is the disposition of a signal the caller blocked
// (applyCallerSignals, exec_linux.go): run on a thread where the
// runtime unblocked the signal, it sends the signal on to the main thread
// (tgkill(pid, pid, sig)), which keeps it blocked and execs, so that it is
// pending in the command as after a direct exec. Called by the kernel with
// the C convention; every register is restored by rt_sigreturn.
TEXT agentknock_forward(SB),NOSPLIT|NOFRAME,$0
	MOVD	R0, R2
	MOVD	$172, R8	// getpid
	SVC
	MOVD	R0, R1
	MOVD	$131, R8	// tgkill
	SVC
	RET

// agentknock_hold(sig, info, uctx) is SIGPROF's disposition while the
// hand-off holds every other thread (threadHold.everyThread, exec_linux.go). For a
// SIGPROF the launcher sent to this thread itself (si_code SI_TKILL, si_pid
// this process), it adds holdMask to the mask that rt_sigreturn restores
// (uc_sigmask, at offset 40 of the kernel's ucontext on arm64), so that the
// thread keeps those signals blocked from then on, and records the thread's
// ID in holdTids as its acknowledgement. It runs with every signal blocked
// (sa_mask), and so does agentknock_forward, so a thread acknowledges only
// once it has sent on any signal it took.
TEXT agentknock_hold(SB),NOSPLIT|NOFRAME,$0
	MOVW	8(R1), R3
	CMN	$6, R3
	BNE	holdret
	MOVD	R1, R9
	MOVD	$172, R8	// getpid
	SVC
	MOVWU	16(R9), R3
	CMP	R0, R3
	BNE	holdret
	MOVD	$·holdMask(SB), R4
	MOVD	(R4), R4
	MOVD	40(R2), R5
	ORR	R4, R5, R5
	MOVD	R5, 40(R2)
	MOVD	$178, R8	// gettid
	SVC
	MOVD	R0, R6
	MOVD	$·holdAcks(SB), R4
holdinc:
	LDAXR	(R4), R7
	ADD	$1, R7, R10
	STLXR	R10, (R4), R11
	CBNZ	R11, holdinc
	CMP	$holdSlots, R7
	BHS	holdret
	MOVD	$·holdTids(SB), R4
	MOVW	R6, (R4)(R7<<2)
holdret:
	RET

// agentknock_sigreturn is the sa_restorer that returns from the handler.
TEXT agentknock_sigreturn(SB),NOSPLIT|NOFRAME,$0
	MOVD	$139, R8	// rt_sigreturn
	SVC

GLOBL	·forwardHandler(SB), RODATA, $8
DATA	·forwardHandler(SB)/8, $agentknock_forward(SB)
GLOBL	·forwardRestorer(SB), RODATA, $8
DATA	·forwardRestorer(SB)/8, $agentknock_sigreturn(SB)
GLOBL	·holdHandler(SB), RODATA, $8
DATA	·holdHandler(SB)/8, $agentknock_hold(SB)
