//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos)

package checkpoint

// goIndex is false where the stat data git records (inode, device, change
// time as git's own stat emulation fills them) are not known to match what
// Go reports: git maintains the private index there.
const goIndex = false

func lstatData(string) (statData, uint32, bool) { return statData{}, 0, false }
