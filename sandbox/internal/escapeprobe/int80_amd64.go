//go:build amd64

package escapeprobe

const int80Supported = true

func socketcallInt80() int32

func int80() int32 { return socketcallInt80() }
