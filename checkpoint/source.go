package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// fileSource reads the files a snapshot stores, following no symbolic
// link: the directories above a path must be real directories inside the
// work tree, and a link is read as a link.
type fileSource interface {
	// open looks at the work-tree path p as it is now: a regular file or
	// a link when it was listed, whatever it is now. Paths come sorted,
	// so that the files of a directory are read one after the other.
	// classify says that no lstat has looked at p since git listed it.
	open(p string, classify bool) (sourceFile, error)
	close()
}

// sourceFile is one path as open found it.
type sourceFile struct {
	kind   byte // 'f' regular file, 'l' symbolic link, 's' special file, 0 absent or a directory
	exec   bool
	size   int64
	target string    // link target
	r      io.Reader // content of a regular file, size bytes
	sd     statData  // stat data as a git index records them
	sdOK   bool
	closer io.Closer // closes r
}

func (f *sourceFile) release() {
	if f.closer != nil {
		f.closer.Close()
		f.closer = nil
	}
}

// rootSource reads through an os.Root, one directory at a time, after
// checking with Lstat that every directory on the way is a real one. It
// has no stat data for the index.
type rootSource struct {
	root   *os.Root
	curDir string
	cur    *os.Root
	curErr error
	real   map[string]bool
}

func newRootSource(dir string) (*rootSource, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &rootSource{root: root, curDir: ".", cur: root, real: map[string]bool{".": true}}, nil
}

func (s *rootSource) close() {
	if s.cur != s.root && s.cur != nil {
		s.cur.Close()
	}
	s.root.Close()
}

func splitDir(p string) (dir, name string) {
	dir, name = path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	return dir, name
}

// realDir reports whether d is a directory reached without following a
// symbolic link.
func (s *rootSource) realDir(d string) bool {
	if ok, seen := s.real[d]; seen {
		return ok
	}
	ok := s.realDir(path.Dir(d))
	if ok {
		st, err := s.root.Lstat(d)
		ok = err == nil && st.IsDir()
	}
	s.real[d] = ok
	return ok
}

func (s *rootSource) open(p string, _ bool) (sourceFile, error) {
	dir, name := splitDir(p)
	if dir != s.curDir {
		if s.cur != s.root && s.cur != nil {
			s.cur.Close()
		}
		s.cur, s.curErr, s.curDir = s.root, nil, dir
		if !s.realDir(dir) {
			s.cur, s.curErr = nil, fs.ErrNotExist
		} else if dir != "." {
			s.cur, s.curErr = s.root.OpenRoot(dir)
		}
	}
	var st fs.FileInfo
	err := s.curErr
	if err == nil {
		st, err = s.cur.Lstat(name)
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
		return sourceFile{}, nil
	}
	if err != nil {
		return sourceFile{}, err
	}
	switch {
	case st.Mode()&fs.ModeSymlink != 0:
		target, err := s.cur.Readlink(name)
		if err != nil {
			return sourceFile{}, err
		}
		return sourceFile{kind: 'l', target: target, size: int64(len(target))}, nil
	case st.Mode().IsRegular():
		f, err := s.cur.OpenFile(name, os.O_RDONLY|oNoFollow, 0)
		if err != nil {
			return sourceFile{}, err
		}
		fst, err := f.Stat()
		if err != nil || !fst.Mode().IsRegular() {
			f.Close()
			return sourceFile{}, fmt.Errorf("changed while being read")
		}
		return sourceFile{kind: 'f', exec: fst.Mode().Perm()&0o100 != 0, size: fst.Size(), r: f,
			closer: f}, nil
	case st.IsDir():
		return sourceFile{}, nil
	}
	return sourceFile{kind: 's'}, nil
}
