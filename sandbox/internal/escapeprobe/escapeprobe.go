// Package escapeprobe holds attacks that the sandbox's tests run inside
// the sandbox and that need more than a shell: raw sockets of every
// family, io_uring, ptrace, mount and the i386 system-call gate. It is
// only linked into test binaries.
package escapeprobe

// Int80Supported reports whether Int80Socket exists on this
// architecture.
func Int80Supported() bool { return int80Supported }

// Int80Socket calls the i386 socketcall through int 0x80 and returns its
// raw result; under the sandbox it never returns.
func Int80Socket() int32 { return int80() }
