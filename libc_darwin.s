// Trampolines into libSystem for exec_darwin.go, in the form
// golang.org/x/sys/unix uses: the runtime calls fn with the C calling
// convention on the system stack.

#include "textflag.h"

TEXT libc_fcntl_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_fcntl(SB)
GLOBL	·libc_fcntl_trampoline_addr(SB), RODATA, $8
DATA	·libc_fcntl_trampoline_addr(SB)/8, $libc_fcntl_trampoline<>(SB)

TEXT libc_proc_pidpath_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_proc_pidpath(SB)
GLOBL	·libc_proc_pidpath_trampoline_addr(SB), RODATA, $8
DATA	·libc_proc_pidpath_trampoline_addr(SB)/8, $libc_proc_pidpath_trampoline<>(SB)

TEXT libc_pthread_sigmask_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_sigmask(SB)
GLOBL	·libc_pthread_sigmask_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_sigmask_trampoline_addr(SB)/8, $libc_pthread_sigmask_trampoline<>(SB)

TEXT libc_sigpending_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_sigpending(SB)
GLOBL	·libc_sigpending_trampoline_addr(SB), RODATA, $8
DATA	·libc_sigpending_trampoline_addr(SB)/8, $libc_sigpending_trampoline<>(SB)

TEXT libc_sigaction_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_sigaction(SB)
GLOBL	·libc_sigaction_trampoline_addr(SB), RODATA, $8
DATA	·libc_sigaction_trampoline_addr(SB)/8, $libc_sigaction_trampoline<>(SB)

TEXT libc_pthread_self_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_self(SB)
GLOBL	·libc_pthread_self_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_self_trampoline_addr(SB)/8, $libc_pthread_self_trampoline<>(SB)

TEXT libc_pthread_kill_trampoline<>(SB),NOSPLIT,$0-0
	JMP	libc_pthread_kill(SB)
GLOBL	·libc_pthread_kill_trampoline_addr(SB), RODATA, $8
DATA	·libc_pthread_kill_trampoline_addr(SB)/8, $libc_pthread_kill_trampoline<>(SB)
