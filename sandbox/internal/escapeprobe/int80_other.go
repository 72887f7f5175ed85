//go:build !amd64

package escapeprobe

const int80Supported = false

func int80() int32 { return -1 }
