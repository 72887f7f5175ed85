//go:build unix

package checkpoint

import "syscall"

const oNoFollow = syscall.O_NOFOLLOW

var errNotDir error = syscall.ENOTDIR
