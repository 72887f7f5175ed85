package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/hardened"
	"github.com/reins-go/reins/sandbox/script/shellanalysis"
)

// Options configure New. A nil *Options, and every zero field, means the documented default.
type Options struct {
	// Profile, when set, is run instead of the preset's profile: a profile loaded from files, or
	// a preset's with the user's additions (denied paths, rules).
	Profile *profile.Profile
	// Approver answers CONFIRM decisions. Nil means nobody can be asked (see Headless).
	Approver reins.Approver
	// Headless says what a CONFIRM becomes without an Approver: reins.HeadlessDeny (the
	// default) or reins.HeadlessPark.
	Headless reins.Headless
	// Notifier honours the Notify obligation. Nil means a notifier that logs each notice to
	// Logger at level Info.
	Notifier reins.Notifier
	// Logger receives the default notifier's notices and the run's diagnostics. Nil means a text
	// logger on standard error.
	Logger *slog.Logger
	// Audit receives every record. Nil means a JSONL file with a hash chain at AuditPath.
	Audit audit.Sink
	// AuditPath is the audit log's file when Audit is nil. Default:
	// <workspace>/.reins/audit.jsonl (its directory is created when missing).
	AuditPath string
	// ConfigDir is the user configuration directory the gate protects (see reins.Options).
	ConfigDir string
	// ShadowRoot is where a workspace that is not in a git repository gets its checkpoint
	// repository (see checkpoint.Options). Default: the checkpoint package's.
	ShadowRoot string
	// NoSandbox runs without the hardened sandbox even where it is available: every shell line
	// the gate would allow is then asked about instead.
	NoSandbox bool
	// Tune, when set, adjusts the run's options last, before reins.New (a Store, Meters, a
	// Clock...). What it changes is the host's to get right.
	Tune func(*reins.Options)
}

// Run is a reins run with the collaborators New wired for it. It embeds the *reins.Run (every
// method of the run is the Run's), and Close closes everything New opened.
type Run struct {
	*reins.Run
	// Workspace is the workspace's absolute path.
	Workspace string
	// Sandboxed reports that the hardened sandbox carries out the Sandbox obligation. When it is
	// false, SandboxErr says why, and every shell line the gate would allow is asked about
	// (CONFIRM) instead.
	Sandboxed  bool
	SandboxErr error
	// Sandbox is the hardened sandbox (nil when not Sandboxed); Local the runner of commands
	// that need none.
	Sandbox sandbox.Sandbox
	Local   *sandbox.Local
	// Checkpointer takes the run's checkpoints (reins timeline and rewind read them).
	Checkpointer *checkpoint.Checkpointer
	// AuditPath is the audit log's file ("" when Options.Audit was given).
	AuditPath string

	closers []func() error
}

// New starts a run of preset (or Options.Profile) over workspace, an existing directory (a
// missing one is an error; New never creates it), wired as the package documentation says. An
// error means nothing is left open: a checkpointer that cannot be made (git missing), an audit
// log that cannot be opened, a protection entry the sandbox cannot honour. A machine without
// the hardened sandbox is not an error: see Run.Sandboxed.
func New(ctx context.Context, workspace string, preset profile.Preset, opts *Options) (_ *Run, err error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	ws, err := checkWorkspace(workspace)
	if err != nil {
		return nil, err
	}
	p := preset.Profile()
	if o.Profile != nil {
		p = *o.Profile
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	run := &Run{Workspace: ws}
	defer func() {
		if err != nil {
			_ = run.closeAll()
		}
	}()

	// The one protection list, compiled as the run's gate will compile it.
	g, err := gate.New(p, &gate.Options{Workspace: []string{ws}, ConfigDir: o.ConfigDir})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	rw, w := g.Protections()
	run.Checkpointer, err = checkpoint.New(ctx, ws, &checkpoint.Options{ShadowRoot: o.ShadowRoot,
		Protected: &checkpoint.Protection{ReadWrite: rw, Write: w}})
	if err != nil {
		return nil, fmt.Errorf("host: checkpoints of %s: %w", ws, err)
	}
	policy := sandboxPolicy(rw, w)
	run.Local, err = sandbox.NewLocal(sandbox.LocalConfig{Root: ws, Policy: policy, Scripts: shellanalysis.Read})
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	if o.NoSandbox {
		run.SandboxErr = errors.New("host: the hardened sandbox is turned off (Options.NoSandbox)")
	} else {
		hard, err := hardened.New(hardened.Config{Root: ws, Policy: policy})
		if err != nil {
			return nil, fmt.Errorf("host: %w", err)
		}
		if perr := hard.Probe(ctx); perr != nil {
			_ = hard.Close()
			run.SandboxErr = fmt.Errorf("host: the hardened sandbox is not available here: %w", perr)
		} else {
			run.Sandbox, run.Sandboxed = hard, true
			run.closers = append(run.closers, hard.Close)
		}
	}
	sink := o.Audit
	if sink == nil {
		run.AuditPath = o.AuditPath
		if run.AuditPath == "" {
			run.AuditPath = filepath.Join(ws, ".reins", "audit.jsonl")
		}
		if err := os.MkdirAll(filepath.Dir(run.AuditPath), 0o700); err != nil {
			return nil, fmt.Errorf("host: audit log: %w", err)
		}
		jl, err := audit.OpenJSONL(run.AuditPath, nil)
		if err != nil {
			return nil, fmt.Errorf("host: audit log: %w", err)
		}
		run.closers = append(run.closers, func() error { return jl.Close(context.Background()) })
		sink = jl
	}
	notifier := o.Notifier
	if notifier == nil {
		notifier = LogNotifier(log)
	}
	ro := reins.Options{Workspace: []string{ws}, ConfigDir: o.ConfigDir, Audit: sink, Logger: log,
		Approver: o.Approver, Headless: o.Headless, Checkpointer: run.Checkpointer, Notifier: notifier,
		Runner: run.Local}
	if run.Sandboxed {
		ro.Sandbox = run.Sandbox
	}
	if o.Tune != nil {
		o.Tune(&ro)
	}
	run.Run, err = reins.New(ctx, p, &ro)
	if err != nil {
		return nil, fmt.Errorf("host: %w", err)
	}
	return run, nil
}

// Close closes the run, then the sandbox and the audit log New opened, and returns their errors
// joined. It is safe to call more than once.
func (r *Run) Close() error {
	var errs []error
	if r.Run != nil {
		errs = append(errs, r.Run.Close())
	}
	errs = append(errs, r.closeAll())
	return errors.Join(errs...)
}

func (r *Run) closeAll() error {
	var errs []error
	for i := len(r.closers) - 1; i >= 0; i-- {
		errs = append(errs, r.closers[i]())
	}
	r.closers = nil
	return errors.Join(errs...)
}

// checkWorkspace returns the workspace's absolute path, or an error when it is not an existing
// directory.
func checkWorkspace(workspace string) (string, error) {
	if workspace == "" {
		return "", errors.New("host: no workspace given")
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return "", fmt.Errorf("host: workspace %q: %w", workspace, err)
	}
	fi, err := os.Stat(ws)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("host: workspace %s does not exist (it is not created)", ws)
	case err != nil:
		return "", fmt.Errorf("host: workspace %s: %w", ws, err)
	case !fi.IsDir():
		return "", fmt.Errorf("host: workspace %s is not a directory", ws)
	}
	return ws, nil
}

// sandboxPolicy returns the entries of both protection classes that the sandboxes do not protect
// by default, each in its own class: rw as DeniedPaths (masked), w as WriteProtectedPaths
// (readable, never written). The defaults keep the sandboxes' own class (.git among them stays
// readable to the programs that need it); an entry in both lists is only denied, the stricter.
func sandboxPolicy(rw, w []string) sandbox.FsNetPolicy {
	seen := map[string]bool{}
	for _, d := range sandbox.DefaultDeniedPaths() {
		seen[strings.ToLower(d)] = true
	}
	var p sandbox.FsNetPolicy
	add := func(dst *[]string, e string) {
		k := strings.ToLower(e)
		if seen[k] {
			return
		}
		seen[k] = true
		*dst = append(*dst, e)
	}
	for _, e := range rw {
		add(&p.DeniedPaths, e)
	}
	for _, e := range w { // after rw: an entry of both stays denied only
		add(&p.WriteProtectedPaths, e)
	}
	return p
}

// LogNotifier returns a notifier that logs every notice at level Info: the default of New,
// for hosts without a user interface to show them in.
func LogNotifier(log *slog.Logger) reins.Notifier {
	return reins.NotifierFunc(func(ctx context.Context, n reins.Notice) error {
		attrs := []any{"kind", n.Kind.String()}
		if n.Kind == reins.NoticeAction {
			attrs = append(attrs, "tool", n.Action.Tool, "decision", n.Decision.String())
		}
		log.InfoContext(ctx, "reins: "+n.Message, attrs...)
		return nil
	})
}
