package sandbox

import (
	"context"
	"os"

	"github.com/reins-go/reins/sandbox/internal/argcheck"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
	"github.com/reins-go/reins/sandbox/script"
)

// LocalConfig configures [NewLocal].
type LocalConfig struct {
	// Root is the workspace; every working directory must resolve inside
	// it. Required.
	Root string
	// Policy is the denied-path and environment policy. AllowedPaths and
	// AllowNetwork are not enforced by local.
	Policy FsNetPolicy
	// Scripts reads the script of an "sh -c SCRIPT" command (or bash,
	// dash, zsh, ksh, mksh, ash) for the argument check; nil means
	// [script.Builtin], which reads only lists of simple commands it
	// knows and refuses the rest. shellanalysis.Read (package
	// sandbox/script/shellanalysis) is the full shell analysis of package
	// risk/shell. See "Shell scripts under local" in the package
	// documentation.
	Scripts script.Reader
}

// Local runs commands directly on the host. See the package
// documentation: it is not a security boundary.
type Local struct {
	root     string
	match    pathmatch.Matcher
	envAllow []string
	scripts  script.Reader
}

var _ Sandbox = (*Local)(nil)

// NewLocal returns the local backend rooted at cfg.Root, which must be an
// existing directory. It copies cfg.
func NewLocal(cfg LocalConfig) (*Local, error) {
	root, err := pathmatch.ResolveRoot(cfg.Root, "LocalConfig.Root")
	if err != nil {
		return nil, err
	}
	m, err := pathmatch.New(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	return &Local{
		root:     root,
		match:    m,
		envAllow: append([]string(nil), cfg.Policy.EnvAllowlist...),
		scripts:  cfg.Scripts,
	}, nil
}

// Root returns the resolved workspace root.
func (l *Local) Root() string { return l.root }

// EnforcesConfine reports false: local confines nothing, and refuses a
// command with [Command.Confine] set (see [Enforcing]).
func (l *Local) EnforcesConfine() bool { return false }

// Run runs cmd on the host after the working-directory and argument
// checks. It implements [Sandbox].
func (l *Local) Run(ctx context.Context, cmd Command) (Result, error) {
	conf := Confinement{Backend: "local"}
	if err := cmd.Validate(); err != nil {
		return Result{ExitCode: ExitDenied, Stderr: []byte(err.Error() + "\n"), Confinement: conf}, err
	}
	if cmd.Confine != nil {
		err := notConfining("local", "it enforces no file or network policy")
		return Result{ExitCode: ExitUnavailable, Stderr: []byte(err.Error() + "; the command did not run\n"), Confinement: conf}, err
	}
	dir, r := pathmatch.Workdir(l.root, l.match, cmd.Dir)
	if r != nil {
		return deniedResult(conf, violations([]pathmatch.Refusal{*r}))
	}
	conf.Enforced = append(conf.Enforced, LayerWorkdir)
	env := envlist.Build(os.Environ(), cmd.Env, l.envAllow)
	if vs := l.checkArgs(dir, cmd.Args, env); len(vs) > 0 {
		return deniedResult(conf, vs)
	}
	conf.Enforced = append(conf.Enforced, LayerArgs)
	if len(l.envAllow) > 0 {
		conf.Enforced = append(conf.Enforced, LayerEnv)
	}
	return runLocal(ctx, conf, cmd, dir, env)
}

// checkArgs checks every argument that may name a path, and the words
// and paths of a static "sh -c" script, against the denied paths (see
// [argcheck.Host]). env is the command's environment (the script's ~ and
// $HOME stand for its HOME).
func (l *Local) checkArgs(dir string, args, env []string) []Violation {
	return violations(argcheck.Host(l.match, dir, args, env, argcheck.Scripts{Read: l.scripts}))
}

// violations turns the refusals of the internal checks into violations.
func violations(rs []pathmatch.Refusal) []Violation {
	if len(rs) == 0 {
		return nil
	}
	vs := make([]Violation, len(rs))
	for i, r := range rs {
		vs[i] = Violation{Kind: ViolationKind(r.Kind), Subject: r.Subject, Detail: r.Detail}
	}
	return vs
}
