//go:build linux && (amd64 || arm64)

package seccomp

import "golang.org/x/sys/unix"

// commonDenied are the system calls that fail with EPERM in the sandbox:
// tracing, mounting, kernel keyrings, BPF, perf, io_uring (which would
// bypass this filter for the operations it submits), namespace changes,
// module and kexec loading, handle-based opens and cross-process memory
// access.
var commonDenied = []Syscall{
	{"ptrace", unix.SYS_PTRACE},
	{"process_vm_readv", unix.SYS_PROCESS_VM_READV},
	{"process_vm_writev", unix.SYS_PROCESS_VM_WRITEV},
	{"mount", unix.SYS_MOUNT},
	{"umount2", unix.SYS_UMOUNT2},
	{"pivot_root", unix.SYS_PIVOT_ROOT},
	{"fsopen", unix.SYS_FSOPEN},
	{"fsconfig", unix.SYS_FSCONFIG},
	{"fsmount", unix.SYS_FSMOUNT},
	{"fspick", unix.SYS_FSPICK},
	{"move_mount", unix.SYS_MOVE_MOUNT},
	{"open_tree", unix.SYS_OPEN_TREE},
	{"mount_setattr", unix.SYS_MOUNT_SETATTR},
	{"bpf", unix.SYS_BPF},
	{"keyctl", unix.SYS_KEYCTL},
	{"add_key", unix.SYS_ADD_KEY},
	{"request_key", unix.SYS_REQUEST_KEY},
	{"perf_event_open", unix.SYS_PERF_EVENT_OPEN},
	{"io_uring_setup", unix.SYS_IO_URING_SETUP},
	{"io_uring_enter", unix.SYS_IO_URING_ENTER},
	{"io_uring_register", unix.SYS_IO_URING_REGISTER},
	{"unshare", unix.SYS_UNSHARE},
	{"setns", unix.SYS_SETNS},
	{"kexec_load", unix.SYS_KEXEC_LOAD},
	{"kexec_file_load", unix.SYS_KEXEC_FILE_LOAD},
	{"init_module", unix.SYS_INIT_MODULE},
	{"finit_module", unix.SYS_FINIT_MODULE},
	{"delete_module", unix.SYS_DELETE_MODULE},
	{"open_by_handle_at", unix.SYS_OPEN_BY_HANDLE_AT},
	{"userfaultfd", unix.SYS_USERFAULTFD},
	{"swapon", unix.SYS_SWAPON},
	{"swapoff", unix.SYS_SWAPOFF},
	{"reboot", unix.SYS_REBOOT},
	{"acct", unix.SYS_ACCT},
}

// commonAbsent are the system calls that fail with ENOSYS in the sandbox,
// as on a kernel without POSIX message queues: a queue lives in the IPC
// namespace, which the commands of one launcher share, so one command
// could leave data in it for the next.
var commonAbsent = []Syscall{
	{"mq_open", unix.SYS_MQ_OPEN},
	{"mq_unlink", unix.SYS_MQ_UNLINK},
	{"mq_timedsend", unix.SYS_MQ_TIMEDSEND},
	{"mq_timedreceive", unix.SYS_MQ_TIMEDRECEIVE},
	{"mq_notify", unix.SYS_MQ_NOTIFY},
	{"mq_getsetattr", unix.SYS_MQ_GETSETATTR},
}

// System calls newer than some golang.org/x/sys releases; their numbers
// are the same on every architecture (the unified table from 424 on).
const (
	sysOpenat2   = 437
	sysFchmodat2 = 452
)
