package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
	"github.com/reins-go/reins/internal/fspath"
)

// RefPrefix is where checkpoint commits are stored, one ref per checkpoint.
const RefPrefix = "refs/reins/checkpoints/"

// Reasons recorded in [Checkpoint.Reason].
const (
	ReasonCreate        = "create"         // Create or CreateWith
	ReasonBatch         = "batch"          // taken by Batch before running the function
	ReasonBeforeRestore = "before-restore" // the state replaced by a restore, so it can be undone
)

// Checkpoint describes one snapshot.
type Checkpoint struct {
	// ID is a UUIDv7 (time-ordered), the name of the ref that keeps the
	// snapshot: refs/reins/checkpoints/<ID>.
	ID string
	// Label is the caller's description.
	Label string
	// CorrelationID ties the checkpoint to the gate decision that asked
	// for it; empty when none was given.
	CorrelationID string
	// Reason is ReasonCreate, ReasonBatch or ReasonBeforeRestore.
	Reason string
	// Time is the creation time: the snapshot commit's own committer date
	// (whole seconds), never the time it was listed.
	Time time.Time
	// Paths is nil for a snapshot of the whole workspace, and the covered
	// paths (workspace-relative, slash-separated, sorted; a directory
	// covers what is below it) for a path-scoped one.
	Paths []string
	// FilesChanged is the number of files that differ from the previous
	// full checkpoint (over Paths only, for a path-scoped one; against an
	// empty workspace for the oldest). [Checkpointer.List] fills it in;
	// elsewhere it is -1.
	FilesChanged int
	// Skipped lists files left out under [OversizeSkip], special files, and
	// (for a path-scoped checkpoint) protected paths and paths in nested
	// repositories it was asked to cover (only in the value returned by
	// Create and in its event; not stored).
	Skipped []string
	// Commit is the git commit holding the snapshot; Tree its root tree.
	Commit, Tree string

	record string // object id of the record of uncovered paths; "" for version 1
}

// Scoped reports whether c covers only [Checkpoint.Paths].
func (c Checkpoint) Scoped() bool { return c.Paths != nil }

// CreateOptions are the per-call settings of [Checkpointer.CreateWith].
type CreateOptions struct {
	// Label describes the checkpoint (at most 1024 bytes of UTF-8).
	Label string
	// CorrelationID is recorded with the snapshot, e.g. the gate's
	// decision id (at most 256 bytes of UTF-8).
	CorrelationID string
	// Paths, when non-nil, makes a path-scoped snapshot of just these
	// paths (see [Checkpointer.SnapshotPaths]): workspace-relative or
	// absolute inside the workspace; files or directories (a directory
	// covers what a full snapshot covers below it); existing or not (a
	// path that does not exist is recorded as absent, so restoring removes
	// what is there then). Its cost depends on what the paths hold, not on
	// the size of the workspace. A path below another listed one is
	// covered by it; a path that is the workspace itself makes a full
	// snapshot. An empty non-nil slice is an error, and so are paths
	// outside the workspace and names that are not valid UTF-8 (the paths
	// are stored in the checkpoint's JSON metadata; full snapshots have no
	// such limit).
	Paths []string
}

// Checkpointer snapshots and restores one workspace directory. It is safe
// for concurrent use; operations on the same workspace are serialized
// across goroutines, Checkpointers and processes by a lock file.
type Checkpointer struct {
	opts    Options
	git     *gitx.Runner
	root    string // workspace, absolute and symlink-free
	given   string // workspace as given to New, absolute (paths may be under it)
	workDir string // git work tree: repository top level, or root for a shadow
	prefix  string // root relative to workDir, slash-separated, "" at top level
	isGit   bool   // workspace inside a user repository (false: shadow repository)
	scope   string // recorded in each checkpoint; List filters on it
	private string // directory holding the private index, lock and state
	index   string // private index file
	lockf   string
	objects string    // the object directory checkpoints are written to
	exclude string    // file with Options.Exclude patterns, "" when none
	userIdx string    // the user's index file (git case)
	userGit [2]string // the user's git directory and common git directory (git case)

	privEnv []string // GIT_DIR=private repo, GIT_WORK_TREE, GIT_INDEX_FILE, objects
	refEnv  []string // GIT_DIR holding the refs (user repository, or shadow)
	userEnv []string // user repository with its own index (git case)

	zeroOID   string
	emptyTree string

	protect protector                   // protected paths: never stored, never touched by a restore
	purged  bool                        // the private index was checked for protected paths (guarded by the lock)
	hook    func(op, path string) error // tests: fails a restore midway
	// portable (tests) makes the Checkpointer work as on a platform
	// without the stat data git records: files are read through an
	// os.Root and git maintains the private index.
	portable    bool
	fetchBudget int64           // tests: bytes a restore reads in advance (0: fetchBudget)
	dirs        map[string]bool // directories checked for nested repositories (guarded by the lock)
	records     recordCache     // recent records of uncovered paths, by object id
	icache      *indexCache     // the private index as last read or written (guarded by the lock)
	held        *heldIndex      // a restore's snapshot not yet in the index (guarded by the lock)
	sess        *objectSession  // the running restore's cat-file (guarded by the lock)

	// loose: path-scoped snapshots write loose objects and a loose ref
	// themselves (see loose.go); false where refs or objects are not
	// plain files, and fast-import stores them.
	loose      bool
	refDir     string // the git directory holding refs/reins (common directory)
	looseSince int    // loose objects written since the last look at their number (guarded by the lock)

	sem chan struct{}
}

// New returns a Checkpointer for the workspace directory. If the directory
// is inside a git repository, checkpoints are stored in that repository
// under refs/reins/checkpoints/ with a private index in its git directory;
// otherwise a shadow repository is created under [Options.ShadowRoot]. New
// runs git (to check its version and locate the repository) and creates the
// private state on first use; it starts no goroutines and needs no Close.
func New(ctx context.Context, workspace string, opts *Options) (*Checkpointer, error) {
	var o Options
	if opts != nil {
		o = *opts
		o.Exclude = append([]string(nil), opts.Exclude...)
		if opts.Protected != nil {
			p := opts.Protected.clone()
			o.Protected = &p
		}
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if workspace == "" || strings.ContainsRune(workspace, 0) {
		return nil, fmt.Errorf("checkpoint: workspace %q: not a directory path", workspace)
	}
	abs, err := filepath.Abs(workspace)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: workspace %q: %w", workspace, err)
	}
	root, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: workspace %q: %w", workspace, err)
	}
	if st, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("checkpoint: workspace %q: %w", workspace, err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("checkpoint: workspace %q: not a directory", workspace)
	}

	var extra [][2]string
	r, err := gitx.New(o.GitPath, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGitNotFound, err)
	}
	v, err := r.Version(ctx, root)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: running %s: %w", r.Path(), err)
	}
	if v.Less(gitx.MinVersion) {
		return nil, fmt.Errorf("%w: %s is %s, need %s or newer", ErrGitTooOld, r.Path(), v, gitx.MinVersion)
	}

	protect, err := newProtector(o.Protected, root, homeDir())
	if err != nil {
		return nil, err
	}
	c := &Checkpointer{opts: o, root: root, given: filepath.Clean(abs), sem: make(chan struct{}, 1), protect: protect}
	format := "sha1"
	repoDir, err := findRepo(root)
	if err != nil {
		return nil, err
	}
	var objects string
	if repoDir != "" {
		info, err := c.discover(ctx, r)
		if err != nil {
			return nil, err
		}
		c.isGit = true
		c.workDir, c.prefix, format = info.top, info.prefix, info.format
		c.scope = info.worktree + ":" + info.prefix
		c.private = filepath.Join(info.gitDir, "reins", "ws-"+shortHash(info.prefix))
		objects = info.objects
		c.userIdx = info.index
		c.userGit = [2]string{info.gitDir, info.commonDir}
		c.refEnv = []string{"GIT_DIR=" + info.gitDir}
		c.userEnv = []string{"GIT_DIR=" + info.gitDir, "GIT_WORK_TREE=" + info.top}
		extra = append(extra, [2]string{"core.excludesFile", filepath.Join(info.commonDir, "info", "exclude")})
	} else {
		shadowRoot := o.ShadowRoot
		if shadowRoot == "" {
			cache, err := os.UserCacheDir()
			if err != nil {
				return nil, fmt.Errorf("checkpoint: Options.ShadowRoot is empty and there is no user cache directory: %w", err)
			}
			shadowRoot = filepath.Join(cache, "reins", "checkpoints")
		}
		if shadowRoot, err = filepath.Abs(shadowRoot); err != nil {
			return nil, fmt.Errorf("checkpoint: Options.ShadowRoot: %w", err)
		}
		if within(root, shadowRoot) {
			return nil, fmt.Errorf("checkpoint: Options.ShadowRoot %s is inside the workspace %s", shadowRoot, root)
		}
		c.workDir = root
		c.private = filepath.Join(shadowRoot, sanitizeName(filepath.Base(root))+"-"+shortHash(root))
		c.refEnv = []string{"GIT_DIR=" + filepath.Join(c.private, "repo")}
		extra = append(extra, [2]string{"core.excludesFile", os.DevNull})
	}
	if r, err = gitx.New(r.Path(), extra); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrGitNotFound, err)
	}
	c.git = r
	c.index = filepath.Join(c.private, "index")
	c.lockf = filepath.Join(c.private, "lock")
	privGit := filepath.Join(c.private, "repo")
	c.privEnv = []string{"GIT_DIR=" + privGit, "GIT_WORK_TREE=" + c.workDir, "GIT_INDEX_FILE=" + c.index}
	if objects != "" {
		c.privEnv = append(c.privEnv, "GIT_OBJECT_DIRECTORY="+objects)
		c.objects = objects
	} else {
		c.objects = filepath.Join(privGit, "objects")
	}
	switch format {
	case "sha1":
		c.zeroOID = strings.Repeat("0", 40)
		c.emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
	case "sha256":
		c.zeroOID = strings.Repeat("0", 64)
		c.emptyTree = "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"
	default:
		return nil, fmt.Errorf("checkpoint: repository object format %q is not supported", format)
	}
	if err := c.setup(ctx, privGit, format); err != nil {
		return nil, err
	}
	c.refDir = privGit
	if c.isGit {
		c.refDir = c.userGit[1]
	}
	c.loose = looseOK(c.refDir)
	return c, nil
}

// Workspace returns the workspace directory (absolute, symlinks resolved).
func (c *Checkpointer) Workspace() string { return c.root }

// Shadow reports whether checkpoints live in a shadow repository (the
// workspace is not inside a git repository).
func (c *Checkpointer) Shadow() bool { return !c.isGit }

// findRepo returns the nearest ancestor of dir (or dir) holding a .git entry,
// or "" when there is none.
func findRepo(dir string) (string, error) {
	for d := dir; ; {
		_, err := os.Lstat(filepath.Join(d, ".git"))
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("checkpoint: looking for a git repository above %s: %w", dir, err)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", nil
		}
		d = parent
	}
}

type repoInfo struct {
	gitDir, commonDir, top, prefix, format, objects, index, worktree string
}

func (c *Checkpointer) discover(ctx context.Context, r *gitx.Runner) (repoInfo, error) {
	var info repoInfo
	out, err := r.Run(ctx, gitx.Cmd{Dir: c.root, Env: []string{"GIT_DISCOVERY_ACROSS_FILESYSTEM=1"}, Args: []string{
		"rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir", "--show-toplevel",
		"--git-path", "objects", "--git-path", "index", "--show-object-format", "--show-prefix",
	}})
	if err != nil {
		return info, fmt.Errorf("checkpoint: workspace %s is inside a git repository that git refuses to open: %w", c.root, err)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 7 {
		return info, fmt.Errorf("checkpoint: workspace %s: unexpected rev-parse output %q", c.root, out)
	}
	info = repoInfo{gitDir: lines[0], commonDir: lines[1], top: lines[2], objects: lines[3], index: lines[4], format: lines[5],
		prefix: strings.TrimSuffix(lines[6], "/")}
	if info.top == "" {
		return info, fmt.Errorf("checkpoint: workspace %s is inside a git directory, not a work tree", c.root)
	}
	if top, err := filepath.EvalSymlinks(info.top); err == nil {
		info.top = top
	}
	if !within(info.top, c.root) {
		return info, fmt.Errorf("checkpoint: workspace %s is outside its repository's work tree %s", c.root, info.top)
	}
	rel, err := filepath.Rel(info.top, c.root)
	if err != nil {
		return info, fmt.Errorf("checkpoint: workspace %s: %w", c.root, err)
	}
	if rel == "." {
		rel = ""
	}
	info.prefix = filepath.ToSlash(rel)
	wt, err := filepath.Rel(info.commonDir, info.gitDir)
	if err != nil || wt == "." {
		wt = ""
	}
	info.worktree = filepath.ToSlash(wt)
	return info, nil
}

// setup creates the private directory, the private repository (a bare git
// directory of our own, so that the user's config, hooks and attributes
// never apply) and the exclude file.
func (c *Checkpointer) setup(ctx context.Context, privGit, format string) error {
	if err := os.MkdirAll(c.private, 0o700); err != nil {
		return fmt.Errorf("checkpoint: creating %s: %w", c.private, err)
	}
	unlock, err := c.lock(ctx)
	if err != nil {
		return err
	}
	defer unlock()
	if !c.isGit {
		marker := filepath.Join(c.private, "workspace")
		b, err := os.ReadFile(marker)
		switch {
		case err == nil && string(b) != c.root+"\n":
			return fmt.Errorf("checkpoint: shadow repository %s belongs to %q, not %s", c.private, strings.TrimSpace(string(b)), c.root)
		case errors.Is(err, fs.ErrNotExist):
			if err := writeFileAtomic(marker, []byte(c.root+"\n")); err != nil {
				return err
			}
		case err != nil:
			return fmt.Errorf("checkpoint: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(privGit, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if _, err := c.git.Run(ctx, gitx.Cmd{Dir: c.private, Args: []string{
			"init", "--bare", "--quiet", "--template=", "--object-format=" + format, privGit,
		}}); err != nil {
			return fmt.Errorf("checkpoint: creating private repository: %w", err)
		}
	} else if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	// The highest-precedence attributes file: no conversion of any kind,
	// so that snapshots and restores are byte-for-byte.
	attrs := []byte("* -text -eol -crlf -filter -ident -working-tree-encoding -export-subst\n")
	if err := writeIfChanged(filepath.Join(privGit, "info", "attributes"), attrs); err != nil {
		return err
	}
	if len(c.opts.Exclude) > 0 {
		c.exclude = filepath.Join(c.private, "exclude")
		if err := writeIfChanged(c.exclude, []byte(strings.Join(c.opts.Exclude, "\n")+"\n")); err != nil {
			return err
		}
	}
	return nil
}

func writeIfChanged(name string, data []byte) error {
	if b, err := os.ReadFile(name); err == nil && string(b) == string(data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return writeFileAtomic(name, data)
}

func writeFileAtomic(name string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(name), ".tmp-*")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), name)
	}
	if werr != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("checkpoint: writing %s: %w", name, werr)
	}
	return nil
}

func shortHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

func sanitizeName(s string) string {
	b := []byte(s)
	for i, ch := range b {
		ok := ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.'
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	if len(b) == 0 || b[0] == '.' {
		return "ws" + string(b)
	}
	return string(b)
}

// within reports whether p is dir or inside it (both absolute and clean): the one definition
// in internal/fspath, which the gate and the sandbox use too.
func within(dir, p string) bool { return fspath.Within(p, dir) }

// repoPath converts a workspace-relative slash path to a work-tree one.
func (c *Checkpointer) repoPath(p string) string {
	if c.prefix == "" {
		return p
	}
	return c.prefix + "/" + p
}

// wsPath converts a work-tree path to a workspace-relative one; ok is false
// for paths outside the workspace.
func (c *Checkpointer) wsPath(p string) (string, bool) {
	if c.prefix == "" {
		return p, true
	}
	rest, ok := strings.CutPrefix(p, c.prefix+"/")
	return rest, ok && rest != ""
}

// pathspec limits a git command to the workspace.
func (c *Checkpointer) pathspec() []string {
	if c.prefix == "" {
		return nil
	}
	return []string{"--", c.prefix}
}

func (c *Checkpointer) emit(ev Event) {
	if c.opts.OnEvent != nil {
		c.opts.OnEvent(ev)
	}
}
