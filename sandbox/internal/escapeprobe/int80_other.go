//go:build !amd64

package escapeprobe

const int80Supported = false

const x32Bit = 0

func int80() int32 { return -1 }
