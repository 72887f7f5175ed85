package host_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/host"
	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

var quiet = slog.New(slog.DiscardHandler)

// gitWorkspace makes a git repository with the given files.
func gitWorkspace(t *testing.T, files map[string]string) string {
	t.Helper()
	testenv.RequireTool(t, "git", "checkpoints are git snapshots (apt-get install git)")
	ws := t.TempDir()
	for name, body := range files {
		p := filepath.Join(ws, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	out, err := exec.Command("git", "-C", ws, "init", "-q").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return ws
}

// gitObjects returns the content of every object of the repository at gitDir.
func gitObjects(t *testing.T, gitDir string) string {
	t.Helper()
	cmd := exec.Command("git", "--git-dir="+gitDir, "cat-file", "--batch-all-objects", "--batch")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	require.NoError(t, err)
	return string(out)
}

// TestNewWiresTheOneProtectionList: a denied path the user adds to the profile is denied by the
// gate, never stored by the checkpointer (nor touched by its rollback), and masked by the
// sandbox: New hands the gate's one list to all three.
func TestNewWiresTheOneProtectionList(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t, map[string]string{
		"README.md":             "readme-stored-canary\n",
		"secrets/prod.json":     "canary-prod-5e1a",
		"config/service.secret": "canary-glob-77b0",
	})
	p := profile.Dev.Profile()
	p.ProtectedPaths = append(p.ProtectedPaths, "secrets/prod.json", "config/*.secret")
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Profile: &p, Logger: quiet, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	defer run.Close()

	// The gate denies them.
	for _, target := range []string{"secrets/prod.json", "config/service.secret"} {
		d, err := run.Check(ctx, policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{target}})
		require.NoError(t, err)
		assert.Equal(t, policy.Deny, d.Verdict, "%s: %s", target, d)
		assert.Equal(t, gate.CheckProtectedPath, d.RuleID)
	}
	_, _, err = run.DoCommand(ctx, policy.Action{Tool: "bash", Command: "cat secrets/prod.json"}, sandbox.Command{})
	assert.ErrorIs(t, err, gate.ErrDenied)

	// The checkpointer never stores them: a checkpointed edit, then a failed one rolled back.
	_, err = run.Do(ctx, policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"README.md"}},
		func(context.Context, gate.Decision) error {
			return os.WriteFile(filepath.Join(ws, "README.md"), []byte("edited readme-stored-canary\n"), 0o644)
		})
	require.NoError(t, err)
	out, err := run.Do(ctx, policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"notes.txt"}},
		func(context.Context, gate.Decision) error {
			_ = os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("junk"), 0o644)
			return os.ErrInvalid
		})
	require.Error(t, err)
	require.True(t, out.RolledBack)
	objects := gitObjects(t, filepath.Join(ws, ".git"))
	assert.Contains(t, objects, "readme-stored-canary", "the scan sees what the checkpoints store")
	assert.NotContains(t, objects, "canary-prod-5e1a")
	assert.NotContains(t, objects, "canary-glob-77b0")
	for name, body := range map[string]string{"secrets/prod.json": "canary-prod-5e1a", "config/service.secret": "canary-glob-77b0"} {
		b, err := os.ReadFile(filepath.Join(ws, name))
		require.NoError(t, err, "the rollback left %s alone", name)
		assert.Equal(t, body, string(b))
	}

	// The sandbox masks them.
	if !run.Sandboxed {
		testenv.Missing(t, "the sandbox half needs the hardened sandbox: %v", run.SandboxErr)
	}
	res, err := run.Sandbox.Run(ctx, sandbox.Command{Args: []string{"cat", "secrets/prod.json"}, Dir: ws})
	require.Error(t, err, "a command that names one is refused")
	assert.Contains(t, string(res.Stderr), "denied path")
	// A command that reaches them without naming them reads them empty.
	res, err = run.Sandbox.Run(ctx, sandbox.Command{Args: []string{"grep", "-r", "canary", "."}, Dir: ws})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Contains(t, string(res.Stdout), "readme-stored-canary", "grep reads the workspace")
	assert.NotContains(t, string(res.Stdout), "canary-prod-5e1a")
	assert.NotContains(t, string(res.Stdout), "canary-glob-77b0")
}

func TestNewRefusesAMissingWorkspace(t *testing.T) {
	ctx := context.Background()
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := host.New(ctx, missing, profile.Dev, &host.Options{Logger: quiet})
	require.ErrorContains(t, err, "does not exist (it is not created)")
	assert.NoDirExists(t, missing)
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	_, err = host.New(ctx, file, profile.Dev, &host.Options{Logger: quiet})
	require.ErrorContains(t, err, "is not a directory")
	_, err = host.New(ctx, "", profile.Dev, nil)
	require.ErrorContains(t, err, "no workspace")
}

// TestNewWithoutSandboxAsks: without the hardened sandbox, a line the gate would allow is asked
// about (and, approved, runs in the local runner); with it, the line runs confined without a
// question.
func TestNewWithoutSandboxAsks(t *testing.T) {
	ctx := context.Background()
	for _, off := range []bool{true, false} {
		t.Run(map[bool]string{true: "no sandbox", false: "hardened"}[off], func(t *testing.T) {
			ws := gitWorkspace(t, map[string]string{"main.go": "package main\n"})
			var mu sync.Mutex
			asked := 0
			run, err := host.New(ctx, ws, profile.Dev, &host.Options{NoSandbox: off, Logger: quiet, ConfigDir: filepath.Join(t.TempDir(), "reins"),
				Approver: reins.ApproverFunc(func(context.Context, reins.Request) (reins.Answer, error) {
					mu.Lock()
					defer mu.Unlock()
					asked++
					return reins.Answer{Verdict: policy.Allow, By: "test"}, nil
				})})
			require.NoError(t, err)
			defer run.Close()
			if off {
				assert.False(t, run.Sandboxed)
				assert.ErrorContains(t, run.SandboxErr, "NoSandbox")
				assert.Nil(t, run.Sandbox)
			} else if !run.Sandboxed {
				testenv.Missing(t, "the hardened sandbox is not available here: %v", run.SandboxErr)
			}
			_, res, err := run.DoCommand(ctx, policy.Action{Tool: "bash", Command: "cat main.go"}, sandbox.Command{})
			require.NoError(t, err, "%s", res.Stderr)
			assert.Equal(t, "package main\n", string(res.Stdout))
			assert.Equal(t, map[bool]int{true: 1, false: 0}[off], asked)
			if !off {
				assert.Equal(t, "local-hardened", res.Confinement.Backend)
			}
		})
	}
}

// TestNewDefaultsLogAndAudit: the default notifier logs the Notify obligation's notices, the
// default audit log is the workspace's .reins/audit.jsonl, complete and verified after Close.
func TestNewDefaultsLogAndAudit(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t, map[string]string{"main.go": "package main\n"})
	var logs bytes.Buffer
	tuned := false
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), NoSandbox: true,
		ConfigDir: filepath.Join(t.TempDir(), "reins"), Tune: func(o *reins.Options) { tuned = o.Checkpointer != nil && o.Runner != nil }})
	require.NoError(t, err)
	assert.True(t, tuned, "Tune sees the wired options")
	assert.Equal(t, filepath.Join(ws, ".reins", "audit.jsonl"), run.AuditPath)
	write := reins.Guard(run, reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{reins.WholeInput}},
		func(_ context.Context, path string) (string, error) {
			return "ok", os.WriteFile(filepath.Join(ws, path), []byte("x"), 0o644)
		}, reins.Denial.Message)
	out, err := write(ctx, "notes.txt")
	require.NoError(t, err)
	assert.Equal(t, "ok", out)
	assert.Contains(t, logs.String(), "reins: write_file notes.txt")
	assert.Contains(t, logs.String(), "tool=write_file")
	require.NoError(t, run.Close())
	require.NoError(t, run.Close(), "Close twice")
	res, err := audit.Verify(run.AuditPath)
	require.NoError(t, err)
	var kinds []string
	for r, err := range audit.Scan(run.AuditPath, nil) {
		require.NoError(t, err)
		kinds = append(kinds, string(r.Kind))
	}
	assert.Equal(t, len(kinds), res.Records)
	assert.Equal(t, "decision checkpoint_created outcome", strings.Join(kinds, " "))
}

// TestNewFailsClosed: an audit log that cannot be opened is an error, and nothing stays open.
func TestNewFailsClosed(t *testing.T) {
	ws := gitWorkspace(t, map[string]string{"main.go": "x"})
	blocker := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(blocker, nil, 0o644))
	_, err := host.New(context.Background(), ws, profile.Dev, &host.Options{Logger: quiet, NoSandbox: true, AuditPath: filepath.Join(blocker, "audit.jsonl")})
	require.ErrorContains(t, err, "host: audit log")
	p := profile.Dev.Profile()
	p.ProtectedPaths = append(p.ProtectedPaths, "a/../b")
	_, err = host.New(context.Background(), ws, profile.Dev, &host.Options{Logger: quiet, NoSandbox: true, Profile: &p})
	require.Error(t, err)
}

// records reads the audit log at path.
func records(t *testing.T, path string) []audit.Record {
	t.Helper()
	var out []audit.Record
	for r, err := range audit.Scan(path, nil) {
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// TestNewWiresTheHostsApproverAndNotifier: the host's approver answers a CONFIRM (its answer is
// recorded with who and the scope), and the host's notifier, not the default, carries the
// Notify obligation.
func TestNewWiresTheHostsApproverAndNotifier(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t, map[string]string{"old.txt": "old\n"})
	var mu sync.Mutex
	var asked []reins.Request
	var notices []reins.Notice
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Logger: quiet, NoSandbox: true, ConfigDir: filepath.Join(t.TempDir(), "reins"),
		Approver: reins.ApproverFunc(func(_ context.Context, req reins.Request) (reins.Answer, error) {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, req)
			return reins.Answer{Verdict: policy.Allow, By: "alice", Note: "tidy up"}, nil
		}),
		Notifier: reins.NotifierFunc(func(_ context.Context, n reins.Notice) error {
			mu.Lock()
			defer mu.Unlock()
			notices = append(notices, n)
			return nil
		})})
	require.NoError(t, err)
	del := reins.Guard(run, reins.ToolSpec{Tool: "delete_file", Operation: policy.OpDelete, Writes: []string{reins.WholeInput}},
		func(_ context.Context, path string) (string, error) {
			return "deleted " + path, os.Remove(filepath.Join(ws, path))
		}, reins.Denial.Message)
	write := reins.Guard(run, reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{reins.WholeInput}},
		func(_ context.Context, path string) (string, error) {
			return "wrote " + path, os.WriteFile(filepath.Join(ws, path), []byte("x"), 0o644)
		}, reins.Denial.Message)

	out, err := del(ctx, "old.txt")
	require.NoError(t, err)
	assert.Equal(t, "deleted old.txt", out)
	require.Len(t, asked, 1, "a delete is a CONFIRM under PROFILE-DEV")
	assert.Equal(t, []string{"old.txt"}, asked[0].Action.Targets)
	assert.NoFileExists(t, filepath.Join(ws, "old.txt"))
	_, err = write(ctx, "notes.txt")
	require.NoError(t, err)
	require.NotEmpty(t, notices, "the host's notifier gets the Notify obligation")
	assert.Equal(t, "write_file", notices[len(notices)-1].Action.Tool)
	require.NoError(t, run.Close())

	var approval *audit.Record
	for _, r := range records(t, run.AuditPath) {
		if r.Kind == audit.KindApproval {
			approval = &r
		}
	}
	require.NotNil(t, approval, "the approval is in the audit log")
	assert.Equal(t, "alice", approval.Approver)
	assert.Equal(t, "once", approval.ApprovalScope)
	assert.Equal(t, policy.Allow, approval.Decision)
	assert.True(t, approval.UserOverride)
	assert.Contains(t, approval.Reason, "tidy up")
}

// TestNewHeadlessParks: without an approver, Headless park queues a CONFIRM for review and the
// model is told so; nothing runs.
func TestNewHeadlessParks(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t, map[string]string{"old.txt": "old\n"})
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Logger: quiet, NoSandbox: true, Headless: reins.HeadlessPark,
		ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	defer run.Close()
	ran := false
	del := reins.Guard(run, reins.ToolSpec{Tool: "delete_file", Operation: policy.OpDelete, Writes: []string{reins.WholeInput}},
		func(context.Context, string) (string, error) { ran = true; return "", nil }, reins.Denial.Message)
	out, err := del(ctx, "old.txt")
	require.NoError(t, err)
	assert.False(t, ran)
	parked, err := run.Parked(ctx)
	require.NoError(t, err)
	require.Len(t, parked, 1)
	assert.Contains(t, out, "waits for a human's review (parked as "+parked[0].ID+")")
}

// TestNewPlainDirectory: a workspace that is not a git repository gets its checkpoints in a
// shadow repository under ShadowRoot; a failing write is rolled back there, and the rollback
// leaves the audit log in the workspace whole.
func TestNewPlainDirectory(t *testing.T) {
	testenv.RequireTool(t, "git", "checkpoints are git snapshots (apt-get install git)")
	ctx := context.Background()
	ws := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("before\n"), 0o644))
	shadow := t.TempDir()
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Logger: quiet, NoSandbox: true, ShadowRoot: shadow,
		ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	write := reins.Guard(run, reins.ToolSpec{Tool: "write_file", Operation: policy.OpWrite, Writes: []string{reins.WholeInput}},
		func(_ context.Context, path string) (string, error) {
			_ = os.WriteFile(filepath.Join(ws, path), []byte("half-written"), 0o644)
			return "", os.ErrDeadlineExceeded
		}, reins.Denial.Message)
	_, err = write(ctx, "notes.txt")
	var ae *reins.ActionError
	require.ErrorAs(t, err, &ae, "the tool's failure is its error, not a denial")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	b, err := os.ReadFile(filepath.Join(ws, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "before\n", string(b), "rolled back")
	assert.NoDirExists(t, filepath.Join(ws, ".git"), "New does not make the directory a repository")
	entries, err := os.ReadDir(shadow)
	require.NoError(t, err)
	assert.NotEmpty(t, entries, "the checkpoints are in the shadow root")
	require.NoError(t, run.Close())
	kinds := map[audit.Kind]int{}
	for _, r := range records(t, run.AuditPath) {
		kinds[r.Kind]++
	}
	assert.Equal(t, 1, kinds[audit.KindCheckpointCreated])
	assert.Equal(t, 1, kinds[audit.KindCheckpointRestored])
	res, err := audit.Verify(run.AuditPath)
	require.NoError(t, err, "the rollback left the audit log alone")
	assert.Nil(t, res.Torn)
}

// TestNewShellTool: a shell tool through GuardCommand on a run New wired: a line the gate allows
// runs in the hardened sandbox without a question, after a checkpoint of what it may write, and
// its output is the tool's; a line that writes outside the workspace is refused with a message
// for the model.
func TestNewShellTool(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t, map[string]string{"main.go": "package main\n"})
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Logger: quiet, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	defer run.Close()
	if !run.Sandboxed {
		testenv.Missing(t, "the hardened sandbox is not available here: %v", run.SandboxErr)
	}
	bash := reins.GuardCommand[string](run, reins.ToolSpec{Tool: "bash", Command: reins.WholeInput}, reins.CommandOutput, reins.Denial.Message)
	out, err := bash(ctx, "wc -l main.go")
	require.NoError(t, err)
	assert.Equal(t, "1 main.go\n", out)
	out, err = bash(ctx, "echo hi > ../outside.txt")
	require.NoError(t, err)
	assert.Contains(t, out, "reins denied this call of bash")
	assert.NoFileExists(t, filepath.Join(filepath.Dir(ws), "outside.txt"))
}

// TestNewWiresWriteProtectedPaths: a write-protected path the user adds to the profile reaches the
// sandbox in its own class: the confined command reads it (it is not masked, as a denied path
// is) and cannot write, replace or remove it, nor move the directory that holds it away.
func TestNewWiresWriteProtectedPaths(t *testing.T) {
	ctx := context.Background()
	const deploy = "deploy-canary-3f0d"
	ws := gitWorkspace(t, map[string]string{
		"config/deploy.yaml": deploy,
		"secrets/prod.json":  "canary-prod-91aa",
		"check.sh": "cat config/deploy.yaml; echo; cat secrets/prod.json; echo\n" +
			"echo pwned >> config/deploy.yaml; mv config/deploy.yaml moved.yaml; rm -f config/deploy.yaml\n" +
			"mv config config-old; mkdir -p config; echo pwned > config/deploy.yaml; true\n",
	})
	p := profile.Dev.Profile()
	p.ProtectedPaths = append(p.ProtectedPaths, "secrets/prod.json")
	p.WriteProtectedPaths = append(p.WriteProtectedPaths, "config/deploy.yaml")
	run, err := host.New(ctx, ws, profile.Dev, &host.Options{Profile: &p, Logger: quiet, ConfigDir: filepath.Join(t.TempDir(), "reins")})
	require.NoError(t, err)
	defer run.Close()

	// The gate reads it and refuses writes.
	d, err := run.Check(ctx, policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"config/deploy.yaml"}})
	require.NoError(t, err)
	assert.NotEqual(t, policy.Deny, d.Verdict, "%s", d)
	d, err = run.Check(ctx, policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"config/deploy.yaml"}})
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, d.Verdict, "%s", d)

	if !run.Sandboxed {
		testenv.Missing(t, "the sandbox half needs the hardened sandbox: %v", run.SandboxErr)
	}
	res, err := run.Sandbox.Run(ctx, sandbox.Command{Args: []string{"sh", "check.sh"}, Dir: ws})
	require.NoError(t, err, "%s", res.Stderr)
	assert.Contains(t, string(res.Stdout), deploy, "the confined command reads it: %s", res.Stderr)
	assert.NotContains(t, string(res.Stdout), "canary-prod-91aa", "a denied path stays masked")
	b, err := os.ReadFile(filepath.Join(ws, "config", "deploy.yaml"))
	require.NoError(t, err)
	assert.Equal(t, deploy, string(b), "the confined command changed it")
	// (mv falls back to copying it to moved.yaml: reading it is allowed; its removal fails.)
	assert.NoDirExists(t, filepath.Join(ws, "config-old"))
}
