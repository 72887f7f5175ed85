package checkpoint

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe makes the pipe to fast-import hold 1 MiB (the default 64 KiB
// fills with a quarter of one write buffer), and puts the write end in
// blocking mode (Fd does).
func growPipe(w *os.File) {
	_, _ = unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}
