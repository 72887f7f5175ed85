package remote

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// stageWorkspace makes a copy of root for a backend that uploads the
// workspace (modal): the same tree without the denied paths, without
// symbolic links that lead to one or out of the workspace, and without
// special files. Files are hard-linked where the file system allows it,
// copied otherwise. The copy is <tmp>/<base name of root>; cleanup
// removes it.
func stageWorkspace(root string, m pathmatch.Matcher) (dir string, cleanup func(), err error) {
	tmp, err := os.MkdirTemp("", "reins-stage-")
	if err != nil {
		return "", nil, err
	}
	cleanup = func() { os.RemoveAll(tmp) }
	dir = filepath.Join(tmp, filepath.Base(root))
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("staging %s: %w", p, err)
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, rel)
		if p != root {
			if _, denied := m.Match(p); denied {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		switch t := d.Type(); {
		case t.IsDir():
			return os.Mkdir(dst, 0o755)
		case t&os.ModeSymlink != 0:
			pc, err := m.Check(filepath.Dir(p), p)
			if err != nil || pc.Denied || !fspath.Within(pc.Resolved, root) {
				return nil // leads to a denied path or out of the workspace
			}
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, dst)
		case t.IsRegular():
			if os.Link(p, dst) == nil {
				return nil
			}
			return copyFile(p, dst)
		default:
			return nil // sockets, devices, pipes
		}
	})
	if err != nil {
		cleanup()
		return "", nil, err
	}
	return dir, cleanup, nil
}

// copyFile copies a regular file with its permission bits.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
