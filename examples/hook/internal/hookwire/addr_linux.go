package hookwire

import (
	"path/filepath"
	"strconv"
	"syscall"
)

// SocketAddr returns an address for the socket path that fits the kernel's limit on socket
// paths (107 bytes) however deep the state directory is: the socket's name under
// /proc/self/fd/N, N a descriptor of its directory. Call done once connected or bound.
func SocketAddr(path string) (addr string, done func(), err error) {
	fd, err := syscall.Open(filepath.Dir(path), syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(fd) + "/" + filepath.Base(path), func() { syscall.Close(fd) }, nil
}
