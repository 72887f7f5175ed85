//go:build amd64

package escapeprobe

const int80Supported = true

// x32Bit marks an x32 system call (__X32_SYSCALL_BIT).
const x32Bit = 0x40000000

func socketcallInt80() int32

func int80() int32 { return socketcallInt80() }
