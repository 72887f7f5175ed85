package gate

import (
	"github.com/reins-go/reins/internal/fspath"
)

// workspace resolves targets against the workspace roots with the one path model reins shares
// with the sandbox and checkpoints (internal/fspath): symlink-safe, the kernel's reading checked
// against the lexical one, bounded. fs holds the roots open (an O_PATH descriptor each on Linux,
// for single-call openat2 resolution) for as long as this workspace is reachable: a gate that
// swaps in a new workspace on reload leaves the old one to the runtime, which closes its
// descriptors, so a Check still using it is never handed a closed root.
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
