// Package reinstest holds the test kits of reins: a kit for unit tests of agent tools ([New]:
// a [reins.Run] wired to an in-memory audit sink, a scripted approver, a recording notifier, a
// fake checkpointer and a fake runner, with assertions on decisions and a golden-table helper),
// the conformance kit for run-state stores ([TestStore], as testing/slogtest is for slog
// handlers), and a fake [Clock] for tests that would otherwise sleep.
//
// A tool under test takes the *reins.Run the kit builds, exactly as it would take the host's;
// the test then looks at what the tool asked, what was decided and what was recorded. Nothing
// in the tool kit touches the network or runs a command: the fake runner returns the results
// the test scripts, and the fake checkpointer keeps snapshots of the workspace's files in
// memory.
package reinstest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

// Options configure a Kit. A nil *Options means the defaults.
type Options struct {
	// Profile is the run's profile. Default: the built-in "trusted" profile.
	Profile *profile.Profile
	// Workspace is the workspace directory. Default: a new t.TempDir().
	Workspace string
	// Run, when set, adjusts the run's options before the run is made (the kit's workspace,
	// audit sink, approver, notifier, checkpointer and runner are already in place).
	Run func(*reins.Options)
}

// Kit is a run for one test, with the fakes it uses.
type Kit struct {
	T            testing.TB
	Workspace    string
	Run          *reins.Run
	Audit        *audit.Memory
	Approver     *Approver
	Notifier     *Notifier
	Checkpointer *Checkpointer
	Runner       *Runner
	Clock        *Clock
}

// New builds a kit; it fails the test when the run cannot be built. The run's clock is the
// kit's fake Clock, starting at 2026-01-01T00:00:00Z.
func New(t testing.TB, opts *Options) *Kit {
	t.Helper()
	var o Options
	if opts != nil {
		o = *opts
	}
	k := &Kit{T: t, Workspace: o.Workspace, Audit: audit.NewMemory(0), Approver: &Approver{},
		Notifier: &Notifier{}, Runner: &Runner{}, Clock: NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	if k.Workspace == "" {
		k.Workspace = t.TempDir()
	}
	k.Checkpointer = &Checkpointer{Root: k.Workspace}
	p := profile.Trusted.Profile()
	if o.Profile != nil {
		p = *o.Profile
	}
	ropts := &reins.Options{Workspace: []string{k.Workspace}, ConfigDir: filepath.Join(t.TempDir(), "reins"), Audit: k.Audit,
		Clock: k.Clock, Approver: k.Approver, Notifier: k.Notifier, Checkpointer: k.Checkpointer, Sandbox: k.Runner}
	if o.Run != nil {
		o.Run(ropts)
	}
	r, err := reins.New(context.Background(), p, ropts)
	require.NoError(t, err, "reinstest: reins.New")
	t.Cleanup(func() { _ = r.Close() })
	k.Run = r
	return k
}

func (k *Kit) check(a policy.Action) gate.Decision {
	k.T.Helper()
	d, err := k.Run.Check(context.Background(), a)
	require.NoError(k.T, err, "reinstest: Check(%s)", describe(a))
	return d
}

// RequireAllowed checks a and fails the test unless the gate allows it.
func (k *Kit) RequireAllowed(a policy.Action) gate.Decision {
	k.T.Helper()
	d := k.check(a)
	require.Equal(k.T, policy.Allow, d.Verdict, "reinstest: %s: want ALLOW, got %s", describe(a), d)
	return d
}

// RequireDenied checks a and fails the test unless the gate denies it.
func (k *Kit) RequireDenied(a policy.Action) gate.Decision {
	k.T.Helper()
	d := k.check(a)
	require.Equal(k.T, policy.Deny, d.Verdict, "reinstest: %s: want DENY, got %s", describe(a), d)
	return d
}

// RequireConfirm checks a and fails the test unless the gate asks about it.
func (k *Kit) RequireConfirm(a policy.Action) gate.Decision {
	k.T.Helper()
	d := k.check(a)
	require.Equal(k.T, policy.Confirm, d.Verdict, "reinstest: %s: want CONFIRM, got %s", describe(a), d)
	return d
}

// Records returns the audit records written so far.
func (k *Kit) Records() []audit.Record { return k.Audit.Records() }

// Kinds returns the kinds of the audit records written so far, in order.
func (k *Kit) Kinds() []audit.Kind {
	var out []audit.Kind
	for _, r := range k.Audit.Records() {
		out = append(out, r.Kind)
	}
	return out
}

// Case is one row of a decision table.
type Case struct {
	Name   string
	Action policy.Action
	Want   policy.Verdict
	// Obligations, when not nil, must equal the decision's.
	Obligations *policy.Obligations
	// RuleID, when not empty, must be the deciding rule's.
	RuleID string
}

// Table checks every case as a subtest (when the kit's T is a *testing.T) and fails on the
// first difference of each.
func (k *Kit) Table(cases []Case) {
	k.T.Helper()
	for i, c := range cases {
		name := c.Name
		if name == "" {
			name = strconv.Itoa(i) + "_" + describe(c.Action)
		}
		run := func(t testing.TB) {
			t.Helper()
			d, err := k.Run.Check(context.Background(), c.Action)
			require.NoError(t, err)
			require.Equal(t, c.Want, d.Verdict, "%s: %s", name, d)
			if c.Obligations != nil {
				require.Equal(t, *c.Obligations, d.Obligations, "%s: %s", name, d)
			}
			if c.RuleID != "" {
				require.Equal(t, c.RuleID, d.RuleID, "%s: %s", name, d)
			}
		}
		if tt, ok := k.T.(*testing.T); ok {
			tt.Run(name, func(t *testing.T) { run(t) })
		} else {
			run(k.T)
		}
	}
}

// UpdateGolden is the environment variable that makes Golden rewrite its file.
const UpdateGolden = "REINS_UPDATE_GOLDEN"

// Golden decides every action and compares one line per action ("<action> => <decision>")
// with the file at path; with REINS_UPDATE_GOLDEN=1 in the environment it writes the file
// instead. Decision ids are left out, so the file is stable.
func (k *Kit) Golden(path string, actions []policy.Action) {
	k.T.Helper()
	var b bytes.Buffer
	for _, a := range actions {
		d := k.check(a)
		fmt.Fprintf(&b, "%s => %s\n", describe(a), d)
	}
	if os.Getenv(UpdateGolden) == "1" {
		require.NoError(k.T, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(k.T, os.WriteFile(path, b.Bytes(), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(k.T, err, "reinstest: golden file (set %s=1 to write it)", UpdateGolden)
	require.Equal(k.T, string(want), b.String(), "reinstest: decisions differ from %s (set %s=1 to update)", path, UpdateGolden)
}

func describe(a policy.Action) string {
	s := a.Tool
	if a.Operation != "" {
		s += "(" + string(a.Operation) + ")"
	}
	if a.Command != "" {
		s += " " + strconv.Quote(a.Command)
	}
	for _, t := range a.Targets {
		s += " " + t
	}
	if a.Host != "" {
		s += " @" + a.Host
	}
	return s
}

// Approver is a scripted approver: it answers from a queue, then with Default (a refusal unless
// set), and remembers every request.
type Approver struct {
	mu      sync.Mutex
	queue   []reins.Answer
	Default reins.Answer
	asked   []reins.Request
}

// Script appends answers to the queue.
func (a *Approver) Script(answers ...reins.Answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.queue = append(a.queue, answers...)
}

// Approve implements reins.Approver.
func (a *Approver) Approve(_ context.Context, req reins.Request) (reins.Answer, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	if len(a.queue) > 0 {
		ans := a.queue[0]
		a.queue = a.queue[1:]
		return ans, nil
	}
	return a.Default, nil
}

// Asked returns the requests so far.
func (a *Approver) Asked() []reins.Request {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]reins.Request(nil), a.asked...)
}

// Notifier records notices. Fail, when set, is returned for every notice.
type Notifier struct {
	mu      sync.Mutex
	notices []reins.Notice
	Fail    error
}

// Notify implements reins.Notifier.
func (n *Notifier) Notify(_ context.Context, x reins.Notice) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notices = append(n.notices, x)
	return n.Fail
}

// Notices returns the notices so far.
func (n *Notifier) Notices() []reins.Notice {
	n.mu.Lock()
	defer n.mu.Unlock()
	return append([]reins.Notice(nil), n.notices...)
}

// maxFakeFiles bounds the files the fake checkpointer copies.
const maxFakeFiles = 10000

// Checkpointer is a fake checkpointer: a snapshot is an in-memory copy of the regular files
// under Root (at most 10,000; directories it creates are left in place on restore), and a
// restore writes them back and removes files that were not there. FailSnapshot and FailRestore,
// when set, are returned instead.
type Checkpointer struct {
	Root         string
	FailSnapshot error
	FailRestore  error
	mu           sync.Mutex
	snaps        map[string]map[string][]byte
	taken        []string
	restored     []string
}

// Snapshot implements reins.Checkpointer.
func (c *Checkpointer) Snapshot(_ context.Context, label, _ string) (string, error) {
	if c.FailSnapshot != nil {
		return "", c.FailSnapshot
	}
	files := map[string][]byte{}
	err := filepath.WalkDir(c.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if len(files) == maxFakeFiles {
			return errors.New("reinstest: more than 10,000 files to snapshot")
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files[p] = b
		return nil
	})
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.snaps == nil {
		c.snaps = map[string]map[string][]byte{}
	}
	id := "cp-" + strconv.Itoa(len(c.taken)+1)
	c.snaps[id] = files
	c.taken = append(c.taken, id+" "+label)
	return id, nil
}

// Restore implements reins.Checkpointer.
func (c *Checkpointer) Restore(_ context.Context, id string) error {
	if c.FailRestore != nil {
		return c.FailRestore
	}
	c.mu.Lock()
	files, ok := c.snaps[id]
	c.restored = append(c.restored, id)
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("reinstest: no checkpoint %q", id)
	}
	var extra []string
	_ = filepath.WalkDir(c.Root, func(p string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if _, ok := files[p]; !ok {
				extra = append(extra, p)
			}
		}
		return nil
	})
	for _, p := range extra {
		if err := os.Remove(p); err != nil {
			return err
		}
	}
	for p, b := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Taken returns "id label" for every snapshot taken; Restored the ids restored.
func (c *Checkpointer) Taken() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.taken...)
}

// Restored returns the ids of the checkpoints restored.
func (c *Checkpointer) Restored() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.restored...)
}

// Runner is a fake sandbox runner. Func, when set, answers each command; otherwise every
// command succeeds with empty output. It remembers the commands.
type Runner struct {
	Func func(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error)
	mu   sync.Mutex
	cmds []sandbox.Command
}

// Run implements reins.Runner.
func (r *Runner) Run(ctx context.Context, cmd sandbox.Command) (sandbox.Result, error) {
	r.mu.Lock()
	r.cmds = append(r.cmds, cmd)
	r.mu.Unlock()
	if r.Func != nil {
		return r.Func(ctx, cmd)
	}
	return sandbox.Result{}, nil
}

// Commands returns the argument vectors run so far, each joined by spaces.
func (r *Runner) Commands() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.cmds))
	for i, c := range r.cmds {
		out[i] = strings.Join(c.Args, " ")
	}
	return out
}
