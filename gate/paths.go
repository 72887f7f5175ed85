package gate

import (
	"strings"

	"github.com/reins-go/reins/internal/fspath"
)

// workspace resolves targets against the workspace roots with the one path model reins shares
// with the sandbox and checkpoints (internal/fspath): symlink-safe, the kernel's reading checked
// against the lexical one, bounded; paths through a process's state (/proc/self/cwd, /dev/fd/N)
// and leading ~user or $VAR spellings refused as ambiguous; each root checked on use to still
// be the directory it was, and resolved by what it leads to now when it is not. It holds no
// descriptors: a gate that swaps in a new workspace on reload leaves the old one to the runtime.
type workspace struct {
	fs      *fspath.Workspace
	primary string // the first root, resolved, slash form: relative targets start here
}

func newWorkspace(dirs, trusted []string, home string) (*workspace, error) {
	w, err := fspath.NewWorkspace(dirs, trusted, home)
	if err != nil {
		return nil, err
	}
	return &workspace{fs: w, primary: w.Primary()}, nil
}

// resolve returns the root holding target ("" when it lies outside every root) and the target's
// path: relative to that root when inside, absolute when outside (see fspath.Workspace.Resolve).
func (w *workspace) resolve(target string) (root, p string, err error) {
	return w.fs.Resolve(target)
}

// workDir returns the directory a command line's analysis starts in, for an action's working
// directory: the primary root when none is given, the directory itself when it is absolute,
// else the primary root joined with it (not cleaned: a ".." in it is applied after links, when
// every path the analysis reports below it is resolved). A leading "~" or "$HOME" is the home
// directory; a leading "~user" or other "$" expansion is an *fspath.AmbiguousError, because a
// runner that expands it starts somewhere else than one that does not (issue 23, part 5).
func (w *workspace) workDir(workdir string) (string, error) {
	if workdir == "" {
		return w.primary, nil
	}
	wd, err := w.fs.Spell(workdir)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(wd, "/") || fspath.Host().IsAbs(wd) {
		return wd, nil
	}
	return strings.TrimSuffix(w.primary, "/") + "/" + wd, nil
}
