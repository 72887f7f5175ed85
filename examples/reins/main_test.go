package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

var binary string

// TestMain builds the command once; the tests run the binary as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "reins-cli-")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "reins")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a temporary workspace and user configuration.
type env struct {
	t      *testing.T
	ws     string
	config string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, ws: t.TempDir(), config: t.TempDir()}
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "README.md"), []byte("hi\n"), 0o644))
	return e
}

// run runs the binary in the workspace with stdin and returns the exit code, stdout and stderr.
func (e *env) run(stdin string, args ...string) (int, string, string) {
	e.t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = e.ws
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+e.config, "HOME="+e.config)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.True(e.t, errors.As(err, &ee), "running reins: %v", err)
		code = ee.ExitCode()
	}
	return code, out.String(), errb.String()
}

func (e *env) git(args ...string) {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", e.ws}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	b, err := cmd.CombinedOutput()
	require.NoError(e.t, err, "%s", b)
}

func TestHelpAtEveryLevel(t *testing.T) {
	e := newEnv(t)
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {}} {
		code, out, _ := e.run("", args...)
		assert.Equal(t, 0, code, "%v", args)
		for _, verb := range []string{"profile", "permissions", "check", "explain", "timeline", "rewind", "diff", "audit"} {
			assert.Regexp(t, `(?m)^  `+verb+` .*\S`, out, "%v lists %s with a synopsis", args, verb)
		}
		assert.Contains(t, out, "exit codes")
	}
	for _, args := range [][]string{{"profile", "--help"}, {"help", "profile"}} {
		code, out, _ := e.run("", args...)
		assert.Equal(t, 0, code)
		assert.Contains(t, out, "usage: reins profile")
		assert.Regexp(t, `(?m)^  set NAME\s+switch the user's profile`, out)
	}
	code, out, _ := e.run("", "profile", "set", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "-yes")
	code, out, _ = e.run("", "help", "audit", "tail")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "usage: reins audit tail [flags] FILE")
}

func TestErrorsSayWhatToDo(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bogus"}, `unknown command "reins bogus" (see 'reins --help')`},
		{[]string{"profile"}, "reins profile needs a subcommand"},
		{[]string{"profile", "show"}, "wants a profile name (see 'reins profile list')"},
		{[]string{"profile", "show", "NOPE"}, "see 'reins profile list'"},
		{[]string{"check"}, "say what the action does"},
		{[]string{"check", "-nope"}, "see 'reins check --help'"},
		{[]string{"rewind"}, "--last"},
		{[]string{"audit", "verify"}, "wants the log file"},
		{[]string{"-C", "/nonexistent/dir", "profile", "list"}, "pass the project with -C dir"},
	} {
		code, _, stderr := e.run("", tc.args...)
		assert.Equal(t, exitError, code, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
}

func TestCheckAndExplain(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.run("", "check", "-op", "read", "-target", "README.md")
	assert.Equal(t, exitOK, code, out+stderr)
	assert.Contains(t, out, "ALLOW")

	code, out, _ = e.run("", "check", "--", "cat", ".env")
	assert.Equal(t, exitDeny, code, out)
	assert.Contains(t, out, "protected")

	code, out, _ = e.run("", "check", "-op", "write", "-target", "README.md")
	assert.Equal(t, exitConfirm, code, "PROFILE-SAFE asks before a write: %s", out)

	// Per simple command: the line takes the strictest part, and each part is listed.
	code, out, _ = e.run("", "check", "--", "go test ./... && rm -rf ~")
	assert.Equal(t, exitDeny, code, out)
	assert.Regexp(t, `(?m)^go test \./\.\.\.\s+\S+`, out)
	assert.Regexp(t, `(?m)^rm -rf ~\s+DENY`, out)

	code, out, _ = e.run("", "--json", "check", "--", "go test ./... && rm -rf ~")
	assert.Equal(t, exitDeny, code)
	var v decisionView
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.Equal(t, "DENY", v.Verdict)
	require.Len(t, v.Commands, 2)
	assert.Equal(t, "rm -rf ~", v.Commands[1].Command)
	assert.Equal(t, "DENY", v.Commands[1].Verdict)

	code, out, _ = e.run("", "explain", "--", "cat", ".env")
	assert.Equal(t, exitDeny, code)
	assert.Contains(t, out, "boundary")
}

func TestProfiles(t *testing.T) {
	e := newEnv(t)
	code, out, _ := e.run("", "profile", "list")
	assert.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^\*\s+PROFILE-SAFE\s`, out, "the default fails closed")
	code, out, _ = e.run("", "profile", "list", "--json")
	assert.Equal(t, 0, code)
	var list []profileView
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	assert.Len(t, list, len(profile.All()))

	code, _, stderr := e.run("n\n", "profile", "set", "PROFILE-FULL-AUTO")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "not confirmed")
	code, out, _ = e.run("", "profile", "current")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "PROFILE-SAFE", "a refused switch changes nothing")

	code, out, _ = e.run("y\n", "profile", "set", "PROFILE-DEV")
	assert.Equal(t, 0, code, out)
	code, out, _ = e.run("", "--json", "profile", "current")
	assert.Equal(t, 0, code)
	var cur profileView
	require.NoError(t, json.Unmarshal([]byte(out), &cur))
	assert.Equal(t, "PROFILE-DEV", cur.Name)
	code, out, _ = e.run("", "profile", "set", "PROFILE-SAFE")
	assert.Equal(t, 0, code, "tightening needs no confirmation: %s", out)
	code, out, _ = e.run("", "profile", "set", "--yes", "yolo")
	assert.Equal(t, 0, code, "--yes confirms: %s", out)

	code, out, _ = e.run("", "profile", "show", "PROFILE-DEV")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "PROFILE-DEV")

	code, out, _ = e.run("", "permissions", "list")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "autonomy band")
	assert.Contains(t, out, "destructive")
	code, out, _ = e.run("", "permissions", "list", "--json")
	assert.Equal(t, 0, code)
	var perms permissionsView
	require.NoError(t, json.Unmarshal([]byte(out), &perms))
	assert.Equal(t, "yolo", perms.Profile)
	assert.Contains(t, perms.DeniedPaths, ".env")
}

func TestCheckpoints(t *testing.T) {
	e := newEnv(t)
	e.git("init", "-q")
	code, out, _ := e.run("", "timeline")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "no checkpoints yet")

	cp, err := checkpoint.New(context.Background(), e.ws, nil)
	require.NoError(t, err)
	first, err := cp.Create(context.Background(), "before the edit")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "README.md"), []byte("changed\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "new.txt"), []byte("new\n"), 0o644))

	code, out, _ = e.run("", "timeline")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, first.ID)
	assert.Contains(t, out, "before the edit")
	code, out, _ = e.run("", "diff", first.ID)
	assert.Equal(t, 0, code, out)
	assert.Regexp(t, `(?m)^\s+M\s+README.md$`, out, "readable, not Go structs")
	assert.Regexp(t, `(?m)^\s+A\s+new.txt$`, out)
	code, out, _ = e.run("", "--json", "diff", first.ID)
	assert.Equal(t, 0, code)
	var changes []changeView
	require.NoError(t, json.Unmarshal([]byte(out), &changes))
	assert.Contains(t, changes, changeView{Path: "README.md", Kind: "modified"})

	code, out, _ = e.run("", "rewind", "--last")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "undo with: reins rewind ")
	b, err := os.ReadFile(filepath.Join(e.ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(b))
	assert.NoFileExists(t, filepath.Join(e.ws, "new.txt"))

	code, _, stderr := e.run("", "rewind", "0")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "numbers start at 1")
	code, _, stderr = e.run("", "diff", "nope")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "reins timeline")
}

func TestAudit(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.OpenJSONL(path, nil)
	require.NoError(t, err)
	r, err := reins.New(context.Background(), profile.Dev.Profile(), &reins.Options{Workspace: []string{e.ws}, Audit: log})
	require.NoError(t, err)
	for _, a := range []policy.Action{
		{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}},
		{Tool: "bash", Operation: policy.OpShell, Command: "cat .env"},
		{Tool: "bash", Operation: policy.OpShell, Command: "ls -la"},
	} {
		_, _ = r.Check(context.Background(), a)
	}
	require.NoError(t, log.Close(context.Background()))

	code, out, _ := e.run("", "audit", "tail", "-n", "2", path)
	assert.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3, out)
	assert.Contains(t, lines[1], "cat .env")

	code, out, _ = e.run("", "--json", "audit", "query", "-decision", "DENY", path)
	assert.Equal(t, 0, code, out)
	var recs []audit.Record
	require.NoError(t, json.Unmarshal([]byte(out), &recs))
	require.Len(t, recs, 1)
	assert.Equal(t, "cat .env", recs[0].Command)

	code, out, _ = e.run("", "audit", "verify", path)
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "ok: 3 records")

	// Tampering with a record breaks the chain: exit 1.
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, bytes.Replace(b, []byte(`"DENY"`), []byte(`"ALLOW"`), 1), 0o600))
	code, out, _ = e.run("", "--json", "audit", "verify", path)
	assert.Equal(t, exitDeny, code, out)
	assert.Contains(t, out, `"ok": false`)
}

func TestReplay(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.OpenJSONL(path, nil)
	require.NoError(t, err)
	r, err := reins.New(context.Background(), profile.Dev.Profile(), &reins.Options{Workspace: []string{e.ws}, Audit: log})
	require.NoError(t, err)
	for _, cmd := range []string{"ls -la", "cat .env", "git status"} {
		_, _ = r.Check(context.Background(), policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd})
	}
	require.NoError(t, log.Close(context.Background()))

	code, out, stderr := e.run("", "replay", "--profile", profile.ProfileSafe, path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "3 decisions replayed under PROFILE-SAFE")
	code, out, _ = e.run("", "--json", "replay", "--profile", profile.ProfileSafe, path)
	require.Equal(t, 0, code)
	var v struct {
		Decisions int `json:"decisions"`
		Changes   []struct {
			Was string `json:"was"`
			Now string `json:"now"`
		} `json:"changes"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, 3, v.Decisions)
	require.NotEmpty(t, v.Changes, "PROFILE-SAFE runs no shell: the allowed commands change")
	for _, ch := range v.Changes {
		assert.True(t, strings.HasPrefix(ch.Was, "ALLOW"), ch.Was)
		assert.True(t, strings.HasPrefix(ch.Now, "DENY"), ch.Now)
	}
	code, _, stderr = e.run("", "replay", path)
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "--profile")
}

func TestGrants(t *testing.T) {
	e := newEnv(t)
	file := filepath.Join(t.TempDir(), "grants.json")
	t.Setenv("REINS_GRANTS_FILE", file)
	store := reins.NewFileStore(file)
	_, err := store.Update(context.Background(), func(s *reins.RunState) error {
		p := profile.Dev.Profile()
		s.Grants = append(s.Grants, reins.Grant{ID: "g1", Scope: reins.Always, Profile: p, ProfileHash: p.Hash(),
			Line: "go vet ./...", Dir: e.ws,
			Rules: []policy.Rule{{ID: "grant:g1", Action: policy.Allow, Condition: policy.Condition{
				OperationType: []policy.Operation{policy.OpShell}, Commands: []string{"go vet ./..."},
				CommandPattern: `^go vet \./\.\.\.$`, Risk: policy.RiskMatch{Levels: risk.Of(risk.Exec)}}}}})
		return nil
	})
	require.NoError(t, err)
	code, out, stderr := e.run("", "grants", "list")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^g1\s+PROFILE-DEV\s+.*command=go vet \./\.\.\.`, out)
	code, _, stderr = e.run("", "grants", "revoke", "nope")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "reins grants list")
	code, out, _ = e.run("", "grants", "revoke", "g1")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "revoked g1")
	code, out, _ = e.run("", "--json", "grants", "list")
	assert.Equal(t, 0, code)
	assert.JSONEq(t, "[]", out)
}

func TestSandboxRun(t *testing.T) {
	e := newEnv(t)
	code, out, stderr := e.run("", "sandbox", "run", "--backend", "local", "--", "cat", "README.md")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "hi\n", out)
	code, _, _ = e.run("", "sandbox", "run", "--backend", "local", "--", "sh", "-c", "exit 7")
	assert.Equal(t, 7, code, "the command's exit status")
	code, out, _ = e.run("", "--json", "sandbox", "run", "--backend", "local", "--", "echo", "x")
	require.Equal(t, 0, code)
	var v struct {
		Backend string `json:"backend"`
		Stdout  string `json:"stdout"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, "local", v.Backend)
	assert.Equal(t, "x\n", v.Stdout)
	code, _, stderr = e.run("", "sandbox", "run", "--backend", "nope", "--", "true")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "backends: ")
	// A backend whose tool is missing answers 127 and says so; nothing fabricates success.
	code, _, _ = e.run("", "sandbox", "run", "--backend", "modal", "--", "true")
	assert.Equal(t, 127, code)
}
