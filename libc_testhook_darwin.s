//go:build agentknock_testapproval

// Trampolines into libSystem for approval_testhook_darwin.go, in the form
// of libc_darwin.s.

#include "textflag.h"

TEXT libc_pthread_self_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_self(SB)
GLOBL	·libc_pthread_self_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_self_trampoline_addr(SB)/8, $libc_pthread_self_trampoline<>(SB)

TEXT libc_pthread_kill_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_kill(SB)
GLOBL	·libc_pthread_kill_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_kill_trampoline_addr(SB)/8, $libc_pthread_kill_trampoline<>(SB)
