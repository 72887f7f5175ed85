//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos)

package checkpoint

func newFileSource(dir string) (fileSource, error) { return newRootSource(dir) }
