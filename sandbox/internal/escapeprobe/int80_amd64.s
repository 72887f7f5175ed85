#include "textflag.h"

// func socketcallInt80() int32
// Issues the i386 socketcall(SYS_SOCKET, args) through int $0x80, the
// 32-bit system-call gate, from a 64-bit process. The sandbox's seccomp
// filter must kill the process for it (wrong audit architecture).
TEXT ·socketcallInt80(SB), NOSPLIT, $0-4
	MOVL $102, AX // __NR_socketcall on i386
	MOVL $1, BX   // SYS_SOCKET
	MOVL $0, CX   // args pointer (never read: the filter kills first)
	INT $0x80
	MOVL AX, ret+0(FP)
	RET
