package gitcfg

import "syscall"

const sysFstatat = syscall.SYS_FSTATAT
