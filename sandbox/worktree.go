package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/reins-go/reins/sandbox/script"
)

// WorktreeConfig configures [NewWorktree].
type WorktreeConfig struct {
	// Repo is a directory inside the git repository to branch from.
	// Required.
	Repo string
	// Parent is the directory that receives the worktree. Required.
	Parent string
	// Branch is the branch to create or reset (git worktree add -B).
	// Required.
	Branch string
	// Prefix names the worktree directory <Parent>/<Prefix>-<Branch>
	// (a "/" in the branch becomes "-" in the directory name); empty
	// means "reins".
	Prefix string
	// New wraps the worktree in a backend; nil means [NewLocal] with
	// Policy. Pass a function that calls hardened.New (package
	// sandbox/hardened) for the hardened
	// sandbox. A worktree's .git is a file pointing into the main
	// repository (.git/worktrees/<name>), which the hardened sandbox does
	// not show unless it is listed in AllowedPaths (and the repository's
	// .git in ReadOnlyPaths); without them, commands run but git itself
	// does not work inside the hardened worktree.
	New func(root string) (Sandbox, error)
	// Policy is the local backend's policy when New is nil.
	Policy FsNetPolicy
	// Scripts is the local backend's script reader when New is nil
	// (LocalConfig.Scripts).
	Scripts script.Reader
	// Git is the git binary; empty means "git" from PATH.
	Git string
}

// Worktree runs commands in a dedicated git worktree, so that what they
// change lands on its own branch. Close removes the worktree (the branch
// and its commits stay).
type Worktree struct {
	inner  Sandbox
	path   string
	repo   string
	git    string
	branch string
	once   sync.Once
	err    error
}

var _ Sandbox = (*Worktree)(nil)

// NewWorktree runs "git -C <Repo> worktree add -B <Branch>
// <Parent>/<Prefix>-<Branch>" and wraps the new worktree in a backend.
// It fails with a clear error when Repo is not inside a git repository.
func NewWorktree(ctx context.Context, cfg WorktreeConfig) (*Worktree, error) {
	if cfg.Repo == "" || cfg.Parent == "" || cfg.Branch == "" {
		return nil, errors.New("sandbox: WorktreeConfig.Repo, Parent and Branch are required")
	}
	if strings.HasPrefix(cfg.Branch, "-") {
		return nil, fmt.Errorf("sandbox: WorktreeConfig.Branch %q is not a valid branch name", cfg.Branch)
	}
	git := cfg.Git
	if git == "" {
		git = "git"
	}
	prefix := cfg.Prefix
	if prefix == "" {
		prefix = "reins"
	}
	if _, err := exec.LookPath(git); err != nil {
		return nil, &UnavailableError{Backend: "worktree", Reason: "git not found: " + err.Error()}
	}
	if out, err := gitCmd(ctx, git, cfg.Repo, "rev-parse", "--show-toplevel"); err != nil {
		return nil, fmt.Errorf("sandbox: worktree: %s is not a git repository: %s", cfg.Repo, out)
	}
	if out, err := gitCmd(ctx, git, cfg.Repo, "check-ref-format", "--branch", cfg.Branch); err != nil {
		return nil, fmt.Errorf("sandbox: worktree: WorktreeConfig.Branch %q is not a valid branch name: %s", cfg.Branch, out)
	}
	parent, err := filepath.Abs(cfg.Parent)
	if err != nil {
		return nil, fmt.Errorf("sandbox: worktree: WorktreeConfig.Parent %q: %w", cfg.Parent, err)
	}
	path := filepath.Join(parent, prefix+"-"+strings.ReplaceAll(cfg.Branch, "/", "-"))
	if out, err := gitCmd(ctx, git, cfg.Repo, "worktree", "add", "-B", cfg.Branch, path); err != nil {
		return nil, fmt.Errorf("sandbox: worktree: git worktree add -B %s %s: %s", cfg.Branch, path, out)
	}
	w := &Worktree{path: path, repo: cfg.Repo, git: git, branch: cfg.Branch}
	newInner := cfg.New
	if newInner == nil {
		policy, scripts := cfg.Policy, cfg.Scripts
		newInner = func(root string) (Sandbox, error) {
			return NewLocal(LocalConfig{Root: root, Policy: policy, Scripts: scripts})
		}
	}
	inner, err := newInner(path)
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sandbox: worktree: wrapping %s: %w", path, err)
	}
	w.inner = inner
	return w, nil
}

// Path returns the worktree's directory.
func (w *Worktree) Path() string { return w.path }

// Branch returns the worktree's branch.
func (w *Worktree) Branch() string { return w.branch }

// EnforcesConfine reports whether the wrapped backend enforces
// [Command.Confine] (see [Enforcing]).
func (w *Worktree) EnforcesConfine() bool { return Enforcing(w.inner) }

// Run runs cmd in the worktree through the wrapped backend. It implements
// [Sandbox].
func (w *Worktree) Run(ctx context.Context, cmd Command) (Result, error) {
	res, err := w.inner.Run(ctx, cmd)
	res.Confinement.Backend = "worktree/" + res.Confinement.Backend
	return res, err
}

// Close removes the worktree with "git worktree remove --force" and
// closes the wrapped backend if it is an io.Closer. It is safe to call
// more than once.
func (w *Worktree) Close() error {
	w.once.Do(func() {
		if c, ok := w.inner.(interface{ Close() error }); ok {
			w.err = c.Close()
		}
		if out, err := gitCmd(context.Background(), w.git, w.repo, "worktree", "remove", "--force", w.path); err != nil {
			w.err = errors.Join(w.err, fmt.Errorf("sandbox: worktree: removing %s: %s", w.path, out))
			if rmErr := os.RemoveAll(w.path); rmErr == nil {
				_, _ = gitCmd(context.Background(), w.git, w.repo, "worktree", "prune")
			}
		}
	})
	return w.err
}

func gitCmd(ctx context.Context, git, dir string, args ...string) (string, error) {
	c := exec.CommandContext(ctx, git, append([]string{"-C", dir}, args...)...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	return strings.TrimSpace(out.String()), err
}
