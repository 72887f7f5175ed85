// Package seccomp builds and installs the system-call filter of the
// hardened sandbox, by hand, as classic BPF on golang.org/x/sys/unix.
//
// The program is a pure function of [Options] and the architecture, so
// its behaviour is unit-tested in a BPF virtual machine without a kernel.
package seccomp
