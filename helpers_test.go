package reins_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

// gitWorkspace makes a real git workspace with a few files.
func gitWorkspace(t testing.TB) string {
	t.Helper()
	testenv.RequireTool(t, "git", "the checkpointer snapshots the workspace with git (apt-get install git)")
	ws := t.TempDir()
	for name, body := range map[string]string{"main.go": "package main\n", "build/out.bin": "x", "docs/a.md": "a\n", "docs/b.md": "b\n"} {
		p := filepath.Join(ws, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return ws
}

// workspace makes a plain temporary workspace (no git) with a few files and returns its path.
func workspace(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"src/pkg", "docs", ".git", "build"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	for _, f := range []string{"src/pkg/main.go", "docs/git-notes.md", ".git/config", "README.md", "main.go"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o644))
	}
	return dir
}

// fixture is a Run over a workspace with a memory audit sink, and what the test needs to look
// at.
type fixture struct {
	ws   string
	sink *audit.Memory
	r    *reins.Run
	cp   *checkpoint.Checkpointer // nil for a plain fixture
	mu   sync.Mutex
	seen []reins.Notice
}

func (f *fixture) notices() []reins.Notice {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]reins.Notice(nil), f.seen...)
}

// newFixture builds a run of the built-in profile name on a real git workspace, with the real
// checkpointer, the local sandbox, a notifier that remembers what it is told and a memory sink;
// tune changes the options before New.
func newFixture(t testing.TB, name string, tune func(*reins.Options)) *fixture {
	t.Helper()
	f := &fixture{ws: gitWorkspace(t), sink: audit.NewMemory(0)}
	cp, err := checkpoint.New(context.Background(), f.ws, &checkpoint.Options{ShadowRoot: t.TempDir()})
	require.NoError(t, err)
	f.cp = cp
	local, err := sandbox.NewLocal(sandbox.LocalConfig{Root: f.ws})
	require.NoError(t, err)
	o := &reins.Options{Workspace: []string{f.ws}, Audit: f.sink, ConfigDir: filepath.Join(t.TempDir(), "reins"),
		Checkpointer: cp, Sandbox: local,
		Notifier: reins.NotifierFunc(func(_ context.Context, n reins.Notice) error {
			f.mu.Lock()
			f.seen = append(f.seen, n)
			f.mu.Unlock()
			return nil
		})}
	if tune != nil {
		tune(o)
	}
	f.r, err = reins.New(context.Background(), profile.MustBuiltin(name), o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.r.Close() })
	return f
}

// newPlain builds a run of profile p on a plain workspace with a memory sink and nothing else
// (no checkpointer, notifier or sandbox): what the gate's run-state tests used.
func newPlain(t testing.TB, p profile.Profile, tune func(*reins.Options)) *fixture {
	t.Helper()
	f := &fixture{ws: workspace(t), sink: audit.NewMemory(0)}
	o := &reins.Options{Workspace: []string{f.ws}, Audit: f.sink, ConfigDir: filepath.Join(t.TempDir(), "reins")}
	if tune != nil {
		tune(o)
	}
	var err error
	f.r, err = reins.New(context.Background(), p, o)
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.r.Close() })
	return f
}

// check decides a with the run (recorded), failing the test on an error.
func (f *fixture) check(t testing.TB, a policy.Action) gate.Decision {
	t.Helper()
	d, err := f.r.Check(context.Background(), a)
	require.NoError(t, err)
	return d
}

func (f *fixture) kinds() []audit.Kind { return kinds(f.sink) }

func kinds(m *audit.Memory) []audit.Kind {
	var out []audit.Kind
	for _, r := range m.Records() {
		out = append(out, r.Kind)
	}
	return out
}

// grants returns the run's grants in force, failing the test on an error.
func (f *fixture) grants(t testing.TB) []reins.Grant {
	t.Helper()
	gs, err := f.r.Grants(context.Background())
	require.NoError(t, err)
	return gs
}

// halted returns the run's latched halt.
func (f *fixture) halted() (gate.Halt, bool) { return f.r.Halted(context.Background()) }

func builtin(name string) profile.Profile { return profile.MustBuiltin(name) }

func nan() float64 { var z float64; return z / z }

func shellAction(cmd string) policy.Action {
	return policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd}
}

func writeAction(path string) policy.Action {
	return policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{path}}
}

var readme = policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}}

// script is a scripted approver: it answers from a queue and counts the questions.
type script struct {
	mu      sync.Mutex
	answers []reins.Answer
	asked   []reins.Request
}

func (s *script) Approve(_ context.Context, req reins.Request) (reins.Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, req)
	if len(s.answers) == 0 {
		return reins.Answer{Verdict: policy.Deny, By: "script"}, nil
	}
	a := s.answers[0]
	s.answers = s.answers[1:]
	return a, nil
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.asked)
}

func ok(context.Context, gate.Decision) error { return nil }

// inOp runs fn as one operation of r (Begin, then End), as the gate's Run did.
func inOp(ctx context.Context, r *reins.Run, fn func(ctx context.Context, op *reins.Op) error) error {
	op, err := r.Begin(ctx)
	if err != nil {
		return err
	}
	defer op.End()
	return fn(op.Context(), op)
}

// meterOf returns the state of the named meter of r (zero if it has none).
func meterOf(t testing.TB, r *reins.Run, name string) reins.MeterStatus {
	t.Helper()
	ms, err := r.Meters(context.Background())
	require.NoError(t, err)
	for _, m := range ms {
		if m.Name == name {
			return m
		}
	}
	return reins.MeterStatus{}
}

// nopCheckpointer counts snapshots and restores.
type nopCheckpointer struct {
	mu              sync.Mutex
	snaps, restores int
}

func (c *nopCheckpointer) Snapshot(context.Context, string, string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.snaps++
	return fmt.Sprintf("cp-%d", c.snaps), nil
}

func (c *nopCheckpointer) Restore(context.Context, string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.restores++
	return nil
}

// fakeRunner is a sandbox runner that returns a fixed result and remembers what it ran.
type fakeRunner struct {
	mu   sync.Mutex
	res  sandbox.Result
	runs []sandbox.Command
}

func (r *fakeRunner) Run(_ context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs = append(r.runs, cmd)
	return r.res, nil
}

func (r *fakeRunner) ran() []sandbox.Command {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.runs)
}

// fakeClock is a reins.Clock that moves only when told (Advance): tests of expiry, meters and
// timeouts use it instead of sleeping. A timer whose time comes runs its function in its own
// goroutine, as time.AfterFunc does.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	at   time.Time
	f    func()
	done bool // fired or stopped
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
}

var _ reins.Clock = (*fakeClock)(nil)

// Now implements reins.Clock.
func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements reins.Clock.
func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.done {
			return false
		}
		t.done = true
		return true
	}
}

// Advance moves the clock forward by d and starts the function of every timer that came due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	keep := c.timers[:0]
	for _, t := range c.timers {
		switch {
		case t.done:
		case !t.at.After(c.now):
			t.done = true
			due = append(due, t.f)
		default:
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
}

// Pending returns the number of timers not yet fired or stopped.
func (c *fakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if !t.done {
			n++
		}
	}
	return n
}

// grantFor adds to r the grant an approval of a with scope would make (NarrowestRules over r's
// explanation, for a's line, directory and environment) and returns it.
func grantFor(t testing.TB, r *reins.Run, a policy.Action, scope reins.Scope) reins.Grant {
	t.Helper()
	ctx := context.Background()
	exp, err := r.Explain(ctx, a)
	require.NoError(t, err)
	require.Equal(t, policy.Confirm, exp.Decision.Verdict, "only a CONFIRM is granted: %s", exp.Decision)
	rules, err := reins.NarrowestRules(a, exp)
	require.NoError(t, err)
	g := reins.Grant{Scope: scope, Rules: rules}
	if a.Command != "" {
		g.Line, g.Dir, g.Env = a.Command, exp.Dir, slices.Clone(a.Env)
	}
	g, err = r.AddGrant(ctx, g)
	require.NoError(t, err)
	return g
}
