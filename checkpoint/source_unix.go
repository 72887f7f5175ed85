//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos

package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// newFileSource reads with plain system calls relative to directory
// descriptors: per file one open, one fstat, the reads and one close,
// and the stat data for the index come with them.
func newFileSource(dir string) (fileSource, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", dir, err)
	}
	return &fdSource{root: fd}, nil
}

// fdSource keeps the chain of directories leading to the current one
// open, each opened relative to its parent without following links.
type fdSource struct {
	root  int
	names []string // components of the current directory
	fds   []int    // descriptors of names[:len(fds)]; fewer: not a real directory
	buf   []byte
}

func (s *fdSource) close() {
	for _, fd := range s.fds {
		unix.Close(fd)
	}
	s.fds, s.names = nil, nil
	unix.Close(s.root)
}

// enter makes dir (slash-separated, "." for the top) the current
// directory; it reports false when that is not a real directory (gone, or
// a file or a link on the way).
func (s *fdSource) enter(dir string) (bool, error) {
	var comps []string
	if dir != "." {
		comps = strings.Split(dir, "/")
	}
	if !slices.Equal(comps, s.names) {
		keep := 0
		for keep < len(comps) && keep < len(s.fds) && comps[keep] == s.names[keep] {
			keep++
		}
		for _, fd := range s.fds[keep:] {
			unix.Close(fd)
		}
		s.fds = s.fds[:keep]
		s.names = comps
		for _, name := range comps[keep:] {
			fd, err := unix.Openat(s.dirFD(), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) {
				break
			}
			if err != nil {
				return false, err
			}
			s.fds = append(s.fds, fd)
		}
	}
	return len(s.fds) == len(s.names), nil
}

func (s *fdSource) dirFD() int {
	if len(s.fds) == 0 {
		return s.root
	}
	return s.fds[len(s.fds)-1]
}

// fdReader reads a file descriptor.
type fdReader int

// Close closes the descriptor.
func (r fdReader) Close() error { return unix.Close(int(r)) }

func (r fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(int(r), b)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 && len(b) > 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (s *fdSource) open(p string, _ bool) (sourceFile, error) {
	dir, name := splitDir(p)
	if ok, err := s.enter(dir); err != nil || !ok {
		return sourceFile{}, err
	}
	dfd := s.dirFD()
	// A regular file or a link was seen here (git lists nothing else as
	// untracked, and the scan looked at the others): open it without
	// following a link and without waiting on a FIFO that replaced it.
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			return sourceFile{}, err
		}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			return sourceFile{kind: 'f', exec: st.Mode&0o100 != 0, size: st.Size, r: fdReader(fd),
				sd: toStatData(&st), sdOK: true, closer: fdReader(fd)}, nil
		case unix.S_IFDIR:
			unix.Close(fd)
			return sourceFile{}, nil
		}
		unix.Close(fd)
		return sourceFile{kind: 's'}, nil
	}
	if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
		return sourceFile{}, nil
	}
	// A link makes O_NOFOLLOW fail (ELOOP, or EMLINK or EFTYPE on some
	// systems); look at what is there.
	return s.readLink(dfd, name)
}

// readLink reads the link name in directory dfd.
func (s *fdSource) readLink(dfd int, name string) (sourceFile, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return sourceFile{}, nil
		}
		return sourceFile{}, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFLNK:
	case unix.S_IFDIR:
		return sourceFile{}, nil
	case unix.S_IFREG:
		return sourceFile{}, errors.New("changed while being read")
	default:
		return sourceFile{kind: 's'}, nil
	}
	if cap(s.buf) < 4096 {
		s.buf = make([]byte, 4096)
	}
	for {
		n, err := unix.Readlinkat(dfd, name, s.buf)
		if err != nil {
			return sourceFile{}, err
		}
		if n < len(s.buf) {
			target := string(s.buf[:n])
			return sourceFile{kind: 'l', target: target, size: int64(n), sd: toStatData(&st), sdOK: true}, nil
		}
		if len(s.buf) >= 1<<20 {
			return sourceFile{}, fmt.Errorf("link target longer than %d bytes", len(s.buf))
		}
		s.buf = make([]byte, 2*len(s.buf))
	}
}
