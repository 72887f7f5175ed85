//go:build unix

package envlist

import (
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// LookPath finds file as a command of env would: a name with a '/' is taken as it is (relative
// to dir), any other is looked up in the PATH of env (relative entries against dir; no PATH,
// or an empty one, means /usr/local/bin:/usr/bin:/bin). The host's PATH plays no part.
func LookPath(file, dir string, env []string) (string, error) {
	if strings.Contains(file, "/") {
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		return file, nil
	}
	pathEnv, _ := Lookup(env, "PATH")
	if pathEnv == "" {
		pathEnv = "/usr/local/bin:/usr/bin:/bin"
	}
	for _, d := range filepath.SplitList(pathEnv) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, file)
		if isExecutable(p) {
			return p, nil
		}
	}
	return "", &exec.Error{Name: file, Err: exec.ErrNotFound}
}

// isExecutable reports whether p is a regular file this process may execute.
func isExecutable(p string) bool {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	return unix.Access(p, unix.X_OK) == nil
}
