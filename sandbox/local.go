package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// LocalConfig configures [NewLocal].
type LocalConfig struct {
	// Root is the workspace; every working directory must resolve inside
	// it. Required.
	Root string
	// Policy is the denied-path and environment policy. AllowedPaths and
	// AllowNetwork are not enforced by local.
	Policy FsNetPolicy
	// ScriptPaths, when set, replaces the shell analysis of a static
	// script: it returns the paths the script reads or writes, which
	// local checks like arguments when the command is "sh -c SCRIPT" (or
	// bash, dash, zsh, ksh). An error refuses the command. Nil means the
	// shell analysis of package risk/shell (see the package
	// documentation); [ScriptWords] is a cruder word scan a host may set
	// instead.
	ScriptPaths func(script string) (paths []string, err error)
}

// Local runs commands directly on the host. See the package
// documentation: it is not a security boundary.
type Local struct {
	root        string
	match       pathMatcher
	envAllow    []string
	scriptPaths func(string) ([]string, error)
}

var _ Sandbox = (*Local)(nil)

// NewLocal returns the local backend rooted at cfg.Root, which must be an
// existing directory. It copies cfg.
func NewLocal(cfg LocalConfig) (*Local, error) {
	root, err := resolveRoot(cfg.Root, "LocalConfig.Root")
	if err != nil {
		return nil, err
	}
	m, err := newPathMatcher(cfg.Policy.DeniedPaths)
	if err != nil {
		return nil, err
	}
	return &Local{
		root:        root,
		match:       m,
		envAllow:    append([]string(nil), cfg.Policy.EnvAllowlist...),
		scriptPaths: cfg.ScriptPaths,
	}, nil
}

// Root returns the resolved workspace root.
func (l *Local) Root() string { return l.root }

// resolveRoot makes root absolute, follows its symlinks and checks that
// it is a directory.
func resolveRoot(root, field string) (string, error) { return pathmatch.ResolveRoot(root, field) }

// resolveWorkdir checks that dir resolves inside root and names no
// denied path; it returns the resolved directory.
func resolveWorkdir(root string, m pathMatcher, dir string) (string, []Violation) {
	resolved, r := pathmatch.Workdir(root, m.Matcher, dir)
	if r != nil {
		return "", []Violation{{Kind: ViolationKind(r.Kind), Subject: r.Subject, Detail: r.Detail}}
	}
	return resolved, nil
}

// Run runs cmd on the host after the working-directory and argument
// checks. It implements [Sandbox].
func (l *Local) Run(ctx context.Context, cmd Command) (Result, error) {
	conf := Confinement{Backend: "local"}
	if err := cmd.validate(); err != nil {
		return Result{ExitCode: ExitDenied, Stderr: []byte(err.Error() + "\n"), Confinement: conf}, err
	}
	dir, vs := resolveWorkdir(l.root, l.match, cmd.Dir)
	if len(vs) > 0 {
		return deniedResult(conf, vs)
	}
	conf.Enforced = append(conf.Enforced, LayerWorkdir)
	env := buildEnv(os.Environ(), cmd.Env, l.envAllow)
	if vs := l.checkArgs(dir, cmd.Args, env); len(vs) > 0 {
		return deniedResult(conf, vs)
	}
	conf.Enforced = append(conf.Enforced, LayerArgs)
	if len(l.envAllow) > 0 {
		conf.Enforced = append(conf.Enforced, LayerEnv)
	}
	return runLocal(ctx, conf, cmd, dir, env)
}

// checkArgs checks every argument that may name a path, and the paths of
// a static "sh -c" script, against the denied paths. env is the
// command's environment (the analysis expands $HOME and ~ from it).
func (l *Local) checkArgs(dir string, args, env []string) []Violation {
	var vs []Violation
	checkOne := func(subject, p string) {
		if p == "" {
			return
		}
		if v, bad := l.pathViolation(dir, subject, p); bad {
			vs = append(vs, v)
		}
	}
	for _, a := range args {
		checkOne(a, a)
		if strings.HasPrefix(a, "-") {
			if _, v, ok := strings.Cut(a, "="); ok {
				checkOne(a, v)
			}
		}
	}
	script, ok := shellScript(args)
	if !ok {
		return vs
	}
	if l.scriptPaths == nil {
		return append(vs, l.checkScript(dir, script, env)...)
	}
	paths, err := l.scriptPaths(script)
	if err != nil {
		vs = append(vs, Violation{Kind: ViolationUncheckable, Subject: script, Detail: "shell script cannot be analysed: " + err.Error()})
	}
	for _, p := range paths {
		checkOne(p, p)
	}
	return vs
}

// shells are the interpreters whose -c script local analyses.
var shells = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// shellScript returns the script of an "sh -c SCRIPT" argument vector,
// including combined flags such as "-ec".
func shellScript(args []string) (string, bool) {
	if len(args) < 3 || !shells[filepath.Base(args[0])] {
		return "", false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "+") {
			return "", false
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a[1:], 'c') {
			if i+1 < len(args) {
				return args[i+1], true
			}
			return "", false
		}
		if a == "-o" || a == "+o" {
			i++ // skip the option name
		}
	}
	return "", false
}

// ScriptWords is a crude ScriptPaths for [LocalConfig]. It is not a
// shell parser: it splits script at blanks and shell operators, drops
// quotes and "$", and returns every word, so that each one is checked as
// a possible path. It over-approximates (a word that is no path is
// checked harmlessly), cannot see names a script computes at run time,
// does not follow cd, and refuses nothing it cannot see through: the
// default shell analysis is stricter.
func ScriptWords(script string) ([]string, error) {
	f := func(r rune) bool {
		switch r {
		case ' ', '\t', '\n', '\r', ';', '&', '|', '<', '>', '(', ')', '`', '{', '}', '"', '\'', '$', '=':
			return true
		}
		return false
	}
	return strings.FieldsFunc(script, f), nil
}
