//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos

package checkpoint

import (
	"golang.org/x/sys/unix"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// goIndex reports whether this platform gives the stat data git records,
// so that the package can write the private index itself.
const goIndex = true

// toStatData truncates stat data the way git's fill_stat_data does.
func toStatData(st *unix.Stat_t) statData {
	cs, cn := st.Ctim.Unix()
	ms, mn := st.Mtim.Unix()
	return statData{
		ctimeSec: uint32(cs), ctimeNsec: uint32(cn),
		mtimeSec: uint32(ms), mtimeNsec: uint32(mn),
		dev: uint32(st.Dev), ino: uint32(st.Ino),
		uid: uint32(st.Uid), gid: uint32(st.Gid),
		size: uint32(st.Size),
	}
}

// lstatData is lstat(2) of name as a git index records it, with the git
// mode of the regular file or link found; ok is false for anything else.
func lstatData(name string) (sd statData, mode uint32, ok bool) {
	var st unix.Stat_t
	if err := unix.Lstat(name, &st); err != nil {
		return statData{}, 0, false
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		mode = gitx.ModeFile
		if st.Mode&0o100 != 0 {
			mode = gitx.ModeExec
		}
	case unix.S_IFLNK:
		mode = gitx.ModeSymlink
	default:
		return statData{}, 0, false
	}
	return toStatData(&st), mode, true
}
