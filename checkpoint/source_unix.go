//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly || solaris || illumos

package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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
	// The types of the current directory's entries, read once more than
	// a few unclassified paths were asked for in it (one listing instead
	// of an lstat per file).
	types     map[string]fs.FileMode
	unchecked int
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
		s.types, s.unchecked = nil, 0
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

// listingAfter is how many unclassified paths of one directory are looked
// at one by one before the directory is listed.
const listingAfter = 4

// typeOf returns the type of name in the current directory without
// following a link; ok is false when there is no such entry.
func (s *fdSource) typeOf(name string) (typ fs.FileMode, ok bool, err error) {
	if s.types == nil && s.unchecked >= listingAfter {
		fd, err := unix.Openat(s.dirFD(), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return 0, false, err
		}
		f := os.NewFile(uintptr(fd), ".")
		list, err := f.ReadDir(-1)
		f.Close()
		if err != nil {
			return 0, false, err
		}
		s.types = make(map[string]fs.FileMode, len(list))
		for _, e := range list {
			s.types[e.Name()] = e.Type()
		}
	}
	if s.types != nil {
		typ, ok = s.types[name]
		return typ, ok, nil
	}
	s.unchecked++
	var st unix.Stat_t
	if err := unix.Fstatat(s.dirFD(), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			return 0, false, nil
		}
		return 0, false, err
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return 0, true, nil
	case unix.S_IFLNK:
		return fs.ModeSymlink, true, nil
	case unix.S_IFDIR:
		return fs.ModeDir, true, nil
	}
	return fs.ModeDevice, true, nil
}

func (s *fdSource) open(p string, classify bool) (sourceFile, error) {
	dir, name := splitDir(p)
	if ok, err := s.enter(dir); err != nil || !ok {
		return sourceFile{}, err
	}
	dfd := s.dirFD()
	if classify {
		// Nothing has looked at p: a special file must not be opened.
		typ, ok, err := s.typeOf(name)
		switch {
		case err != nil:
			return sourceFile{}, err
		case !ok || typ&fs.ModeDir != 0:
			return sourceFile{}, nil
		case typ&fs.ModeSymlink != 0:
			sf, err := s.readLink(dfd, name)
			if !errors.Is(err, errNotLink) {
				return sf, err
			}
			// A regular file replaced the link since the listing.
		case typ&fs.ModeType != 0:
			return sourceFile{kind: 's'}, nil
		}
	}
	// A regular file or a link was seen here: open it without following
	// a link and without waiting on a FIFO that replaced it.
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
				sd: toStatData(&st), sdOK: true, closer: func() { unix.Close(fd) }}, nil
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
	sf, err := s.readLink(dfd, name)
	if errors.Is(err, errNotLink) {
		err = errors.New("changed while being read")
	}
	return sf, err
}

// errNotLink: readLink found a regular file.
var errNotLink = errors.New("not a symbolic link")

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
		return sourceFile{}, errNotLink
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
