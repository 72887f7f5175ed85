package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// env is a temporary workspace and user configuration. The CLI runs in this process, with its
// own streams, as a user would run it in the workspace.
type env struct {
	t      *testing.T
	ws     string
	config string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, ws: t.TempDir(), config: t.TempDir()}
	t.Setenv("XDG_CONFIG_HOME", e.config)
	t.Setenv("XDG_CACHE_HOME", filepath.Join(e.config, "cache"))
	t.Setenv("HOME", e.config)
	t.Setenv("REINS_GRANTS_FILE", "")
	require.NoError(t, os.WriteFile(filepath.Join(e.ws, "README.md"), []byte("hi\n"), 0o644))
	return e
}

// run runs the command line with stdin and returns the exit code, stdout and stderr.
func (e *env) run(stdin string, args ...string) (int, string, string) {
	e.t.Helper()
	var out, errb bytes.Buffer
	c := &cli{ctx: context.Background(), stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb, dir: e.ws}
	code := c.main(args)
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
		for _, verb := range []string{"profile", "permissions", "trust", "check", "explain", "timeline", "rewind", "diff", "audit", "replay", "grants", "sandbox", "fleet"} {
			assert.Regexp(t, `(?m)^  `+verb+` .*\S`, out, "%v lists %s with a synopsis", args, verb)
		}
		// One exit-code table, with a row for every kind of error the verbs return.
		assert.Contains(t, out, "exit codes (every command):")
		for _, k := range []errKind{kindError, kindUsage, kindNotFound, kindDenied, kindUnavailable} {
			assert.Regexp(t, fmt.Sprintf(`(?m)^  %d\s+\S`, k.code()), out, "the table has a row for %s", k)
		}
		assert.Regexp(t, `(?m)^  2\s+check and explain: CONFIRM`, out)
	}
	for _, args := range [][]string{{"profile", "--help"}, {"help", "profile"}} {
		code, out, _ := e.run("", args...)
		assert.Equal(t, 0, code)
		assert.Contains(t, out, "usage: reins profile")
		assert.Regexp(t, `(?m)^  set NAME\s+switch the user's profile`, out)
		assert.Contains(t, out, "exit codes: see 'reins --help'")
	}
	code, out, _ := e.run("", "profile", "set", "--help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "-yes")
	code, out, _ = e.run("", "help", "audit", "tail")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "usage: reins audit tail [flags] FILE")
}

// TestErrors: every verb reports an error in one format ("reins: <verb>: ..." on one line of
// standard error; one JSON object there under --json), says what to do, and exits with the code
// of the table for its kind of error: the same kind, the same code, whatever the verb.
func TestErrors(t *testing.T) {
	e := newEnv(t)
	e.git("init", "-q")
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	require.NoError(t, os.WriteFile(log, nil, 0o600))
	missing := filepath.Join(t.TempDir(), "missing.jsonl")
	for _, tc := range []struct {
		args []string
		code int
		verb string
		want string
	}{
		{[]string{"bogus"}, exitUsage, "bogus", "unknown command (see 'reins --help')"},
		{[]string{"help", "bogus"}, exitUsage, "help", `no command "bogus"`},
		{[]string{"profile"}, exitUsage, "profile", "a subcommand is needed: list, current, show, set"},
		{[]string{"profile", "bogus"}, exitUsage, "profile", `unknown subcommand "bogus"`},
		{[]string{"profile", "show"}, exitUsage, "profile show", "want a profile name, got 0 arguments (see 'reins profile list')"},
		{[]string{"profile", "show", "NOPE"}, exitNotFound, "profile show", `no profile "NOPE": want one of PROFILE-SAFE`},
		{[]string{"profile", "set", "NOPE"}, exitNotFound, "profile set", `no profile "NOPE"`},
		{[]string{"profile", "set", "PROFILE-FULL-AUTO"}, exitDeny, "profile set", "not confirmed"},
		{[]string{"profile", "list", "extra"}, exitUsage, "profile list", "want no arguments, got 1 argument (extra)"},
		{[]string{"check"}, exitUsage, "check", "say what the action does"},
		{[]string{"check", "-nope"}, exitUsage, "check", "see 'reins check --help'"},
		{[]string{"explain", "-op", "read"}, exitUsage, "explain", "-op read needs the path it reads: -target PATH"},
		{[]string{"rewind"}, exitUsage, "rewind", "--last"},
		{[]string{"rewind", "0"}, exitUsage, "rewind", "numbers start at 1"},
		{[]string{"rewind", "99"}, exitNotFound, "rewind", "there is no checkpoint 99: the workspace has no checkpoints yet"},
		{[]string{"diff", "99"}, exitNotFound, "diff", "there is no checkpoint 99"},
		{[]string{"diff", "nope"}, exitNotFound, "diff", `no checkpoint "nope"`},
		{[]string{"diff", "--last", "1"}, exitUsage, "diff", "want one checkpoint"},
		{[]string{"audit", "verify"}, exitUsage, "audit verify", "want the log file, got 0 arguments"},
		{[]string{"audit", "tail", missing}, exitNotFound, "audit tail", "no audit log " + missing},
		{[]string{"audit", "query", "-decision", "MAYBE", log}, exitUsage, "audit query", "want ALLOW, DENY or CONFIRM"},
		{[]string{"audit", "query", "-outcome", "won", log}, exitUsage, "audit query", "want one of succeeded, failed"},
		{[]string{"audit", "tail", "-n", "0", log}, exitUsage, "audit tail", "-n wants a positive number"},
		{[]string{"replay", log}, exitUsage, "replay", "--profile"},
		{[]string{"replay", "--profile", "NOPE", log}, exitNotFound, "replay", `no profile "NOPE"`},
		{[]string{"replay", "--profile", "yolo", missing}, exitNotFound, "replay", "no audit log"},
		{[]string{"grants", "revoke", "nope"}, exitNotFound, "grants revoke", `no saved grant "nope" (see 'reins grants list')`},
		{[]string{"trust"}, exitNotFound, "trust", "has no profile file"},
		{[]string{"trust", "--revoke"}, exitNotFound, "trust", "does not trust the project"},
		{[]string{"sandbox", "run", "--backend", "nope", "--", "true"}, exitUsage, "sandbox run", `no backend "nope": want one of`},
		{[]string{"sandbox", "run", "--backend", "local"}, exitUsage, "sandbox run", "want a command after --"},
		{[]string{"sandbox", "run", "--backend", "modal", "--", "true"}, 127, "sandbox run", "backend modal"},
		{[]string{"-C", "/nonexistent/dir", "profile", "list"}, exitNotFound, "profile list", "pass the project with -C dir"},
	} {
		code, stdout, stderr := e.run("n\n", tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		line := strings.TrimSuffix(stderr, "\n")
		if i := strings.LastIndex(line, "\n"); i >= 0 {
			line = line[i+1:] // after a prompt
		}
		assert.True(t, strings.HasPrefix(line, "reins: "+tc.verb+": "), "%v: %q", tc.args, stderr)
		assert.NotContains(t, line, "reins: reins", "%v", tc.args)
		assert.Equal(t, 1, strings.Count(line, "reins: "), "%v: the prefix once: %q", tc.args, line)
		assert.Contains(t, line, tc.want, "%v", tc.args)
		assert.Empty(t, stdout, "%v", tc.args)

		// Under --json the same error is one JSON object on standard error.
		code, stdout, stderr = e.run("n\n", append([]string{"--json"}, tc.args...)...)
		assert.Equal(t, tc.code, code, "--json %v", tc.args)
		assert.Empty(t, stdout, "--json %v", tc.args)
		var v struct {
			Verb     string `json:"verb"`
			Kind     string `json:"error"`
			Message  string `json:"message"`
			ExitCode int    `json:"exit_code"`
		}
		require.NoError(t, json.Unmarshal([]byte(stderr), &v), "--json %v: %s", tc.args, stderr)
		assert.Equal(t, tc.verb, v.Verb)
		assert.Equal(t, tc.code, v.ExitCode)
		assert.Contains(t, v.Message, tc.want)
		assert.NotContains(t, v.Message, "reins:")
	}
	// --json after the error is reported as JSON too.
	code, _, stderr := e.run("", "check", "-nope", "--json")
	assert.Equal(t, exitUsage, code)
	assert.True(t, json.Valid([]byte(stderr)), stderr)
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

	code, out, _ = e.run("", "explain", "--", "cat", ".env")
	assert.Equal(t, exitDeny, code)
	assert.Contains(t, out, "boundary")
}

// TestCheckOperations: an action must say what it does. A read, write or delete needs a target,
// a network action a host, a shell action a command line; an unknown operation is a usage error
// that lists the known ones, and -custom-op is the documented way to name a host's own.
func TestCheckOperations(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"-op", "read"}, exitUsage, "-op read needs the path it reads: -target PATH"},
		{[]string{"-op", "write"}, exitUsage, "-op write needs the path it writes"},
		{[]string{"-op", "delete"}, exitUsage, "-op delete needs the path it deletes"},
		{[]string{"-op", "network"}, exitUsage, "-op network needs the host it reaches: -host HOST"},
		{[]string{"-op", "shell"}, exitUsage, "-op shell needs the command line, after --"},
		{[]string{"-op", "frob", "-target", "x"}, exitUsage, `unknown operation "frob": want one of read, write, delete, shell, network, tool, plan, self_upgrade (an operation of the host's own: -custom-op NAME)`},
		{[]string{"-op", "read", "-target", "README.md", "--", "ls"}, exitUsage, "a command line is a shell action"},
		{[]string{"-op", "read", "-target", "README.md", "-host", "example.com"}, exitUsage, "-host applies to network and tool actions"},
		{[]string{"-op", "network", "-host", "example.com", "-target", "x"}, exitUsage, "-target does not apply to a network action"},
		{[]string{"-op", "tool"}, exitUsage, "-op tool: name the -tool"},
		{[]string{"-op", "tool", "-tool", "t", "-risk", "bogus"}, exitUsage, "-risk:"},
		{[]string{"-op", "read", "-custom-op", "x", "-target", "a"}, exitUsage, "give -op or -custom-op, not both"},
		{[]string{"-custom-op", "file_read", "-tool", "t"}, exitUsage, "-custom-op file_read: reins knows that operation: use -op read"},
		{[]string{"-custom-op", "deploy"}, exitUsage, "-custom-op deploy: name the -tool"},
		// What is well described is decided.
		{[]string{"-op", "read", "-target", "README.md"}, exitOK, "ALLOW"},
		{[]string{"-op", "file_read", "-target", "README.md"}, exitOK, "ALLOW"},
		{[]string{"-op", "READ", "-target", "README.md"}, exitOK, "ALLOW"},
		{[]string{"-target", "README.md", "-op", "write"}, exitConfirm, "CONFIRM"},
		{[]string{"-op", "tool", "-tool", "lookup", "-risk", "read_only"}, exitOK, "ALLOW"},
		{[]string{"-custom-op", "deploy", "-tool", "ci", "-risk", "read_only"}, exitOK, "ALLOW"},
		{[]string{"-custom-op", "deploy", "-tool", "ci"}, exitConfirm, "CONFIRM"}, // undeclared risk: destructive
		{[]string{"-host", "example.com"}, exitDeny, "DENY"},
	} {
		code, out, stderr := e.run("", append([]string{"check"}, tc.args...)...)
		assert.Equal(t, tc.code, code, "%v: %s%s", tc.args, out, stderr)
		if tc.code == exitUsage {
			assert.Contains(t, stderr, "reins: check: "+tc.want, "%v", tc.args)
			assert.Empty(t, out)
		} else {
			assert.True(t, strings.HasPrefix(out, tc.want), "%v: %s", tc.args, out)
		}
	}
}

// TestExplainCommands: every simple command of a line gets a row with what decided it; a command
// whose parts an earlier layer kept the decision from reaching says "not reached" and names that
// layer, never a verdict of its own with an empty BY column.
func TestExplainCommands(t *testing.T) {
	e := newEnv(t)
	rowRe := regexp.MustCompile(`(?m)^(go test \./\.\.\.|rm -rf ~|ls|rm -rf build|git push --force origin main)  +(\S.*?)  +(\S.*)$`)
	for _, verb := range []string{"check", "explain"} {
		code, out, _ := e.run("", verb, "--", "go test ./... && rm -rf ~")
		assert.Equal(t, exitDeny, code, out)
		rows := rowRe.FindAllStringSubmatch(out, -1)
		require.Len(t, rows, 2, out)
		for _, r := range rows {
			assert.Equal(t, "not reached", r[2], "%s: %s", verb, r[0])
			assert.Equal(t, "the line: hard_stop hard-stop:external-write", r[3], "%s: %s", verb, r[0])
		}
	}
	code, out, _ := e.run("", "--json", "explain", "--", "go test ./... && rm -rf ~")
	assert.Equal(t, exitDeny, code)
	var v decisionView
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Len(t, v.Commands, 2)
	for _, cv := range v.Commands {
		assert.False(t, cv.Reached, cv.Command)
		assert.Empty(t, cv.Verdict, "a command not reached has no verdict of its own: %s", cv.Command)
		assert.Equal(t, "hard_stop", cv.Layer)
		assert.Equal(t, "hard-stop:external-write", cv.RuleID)
	}

	// Reached commands: each row has its verdict and its layer and rule.
	code, out, _ = e.run("y\n", "profile", "set", "PROFILE-DEV")
	require.Equal(t, 0, code, out)
	line := "ls && rm -rf build && git push --force origin main"
	code, out, _ = e.run("", "explain", "--", line)
	assert.Equal(t, exitDeny, code, out)
	rows := rowRe.FindAllStringSubmatch(out, -1)
	require.Len(t, rows, 3, out)
	for i, want := range [][2]string{{"ALLOW", "rule allow-read-only-shell"}, {"CONFIRM", "rule confirm-high-risk"}, {"DENY", "rule deny-network"}} {
		assert.Equal(t, want[0], rows[i][2], rows[i][0])
		assert.Equal(t, want[1], rows[i][3], rows[i][0])
	}
	code, out, _ = e.run("", "--json", "check", "--", line)
	assert.Equal(t, exitDeny, code)
	v = decisionView{}
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	require.Len(t, v.Commands, 3)
	for _, cv := range v.Commands {
		assert.True(t, cv.Reached, cv.Command)
		assert.NotEmpty(t, cv.Verdict, cv.Command)
		assert.NotEmpty(t, cv.Layer, cv.Command)
	}
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

	code, out, stderr := e.run("n\n", "profile", "set", "PROFILE-FULL-AUTO")
	assert.Equal(t, exitDeny, code)
	assert.Contains(t, stderr, "PROFILE-FULL-AUTO is looser than PROFILE-SAFE", "the question goes to standard error")
	assert.Contains(t, stderr, "reins: profile set: not confirmed")
	assert.Empty(t, out)
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
	assert.Regexp(t, `(?m)^PRIORITY\s+RULE\s+VERDICT\s+FROM\s+WHEN$`, out, "each rule says where it came from")
	assert.Regexp(t, `(?m)^\d+\s+\S+\s+(ALLOW|DENY|CONFIRM)\s+built-in\s`, out)
	code, out, _ = e.run("", "permissions", "list", "--json")
	assert.Equal(t, 0, code)
	var perms permissionsView
	require.NoError(t, json.Unmarshal([]byte(out), &perms))
	assert.Equal(t, "yolo", perms.Profile)
	assert.Contains(t, perms.DeniedPaths, ".env")
	require.NotEmpty(t, perms.Rules)
	for _, r := range perms.Rules {
		assert.Contains(t, perms.RuleSources[r.ID], "built-in", r.ID)
	}
}

// TestCheckpoints: a checkpoint is named the same way by every verb: N (1 is the newest, as the
// timeline numbers them), its id or a unique prefix of it, or --last.
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
	assert.Regexp(t, `(?m)^1\s+`+first.ID+`\s.*before the edit$`, out)
	for _, ref := range [][]string{{"1"}, {"--last"}, {first.ID}, {first.ID[:len(first.ID)-4]}} {
		code, out, stderr := e.run("", append([]string{"diff"}, ref...)...)
		assert.Equal(t, 0, code, "diff %v: %s", ref, stderr)
		assert.Regexp(t, `(?m)^\s+M\s+README.md$`, out, "readable, not Go structs")
		assert.Regexp(t, `(?m)^\s+A\s+new.txt$`, out)
	}
	code, out, _ = e.run("", "--json", "diff", "1")
	assert.Equal(t, 0, code)
	var changes []changeView
	require.NoError(t, json.Unmarshal([]byte(out), &changes))
	assert.Contains(t, changes, changeView{Path: "README.md", Kind: "modified"})

	code, _, stderr := e.run("", "rewind", "2")
	assert.Equal(t, exitNotFound, code)
	assert.Contains(t, stderr, "reins: rewind: there is no checkpoint 2: the workspace has 1 checkpoint, 1 (the newest) to 1 (see 'reins timeline')")
	assert.NotContains(t, stderr, "RewindN")

	code, out, _ = e.run("", "rewind", "1")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "restored checkpoint 1 ("+first.ID+`), "before the edit": 2 files changed`)
	assert.Regexp(t, `undo with: reins rewind \S+ \(now checkpoint 1\)`, out)
	b, err := os.ReadFile(filepath.Join(e.ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "hi\n", string(b))
	assert.NoFileExists(t, filepath.Join(e.ws, "new.txt"))

	// The rewind took a checkpoint first: now there are two, and 99 is still not one of them.
	code, _, stderr = e.run("", "diff", "99")
	assert.Equal(t, exitNotFound, code)
	assert.Contains(t, stderr, "there is no checkpoint 99: the workspace has 2 checkpoints, 1 (the newest) to 2")
	code, out, _ = e.run("", "diff", "2")
	assert.Equal(t, 0, code, out)
	assert.Contains(t, out, "no changes since checkpoint 2 ("+first.ID+")")
	code, out, _ = e.run("", "rewind", "--last")
	assert.Equal(t, 0, code, out)
	b, err = os.ReadFile(filepath.Join(e.ws, "README.md"))
	require.NoError(t, err)
	assert.Equal(t, "changed\n", string(b), "the rewind is undone")
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
	assert.Regexp(t, `^SEQ\s+TIME\s+KIND\s+DECISION\s+OUTCOME\s+TOOL\s+TARGET\s+REASON$`, lines[0])
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

	code, out, stderr := e.run("", "replay", "--profile", profile.Safe.Name(), path)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "3 decisions replayed under PROFILE-SAFE")
	code, out, _ = e.run("", "--json", "replay", "--profile", profile.Safe.Name(), path)
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
	assert.Equal(t, exitUsage, code)
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
	assert.Equal(t, exitNotFound, code)
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
		Backend   string `json:"backend"`
		Enforcing bool   `json:"enforcing"`
		Stdout    string `json:"stdout"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.Equal(t, "local", v.Backend)
	assert.False(t, v.Enforcing, "local confines nothing")
	assert.Equal(t, "x\n", v.Stdout)
	code, _, stderr = e.run("", "sandbox", "run", "--backend", "nope", "--", "true")
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr, "want one of ")
	// A backend whose tool is missing answers 127 and says so; nothing fabricates success.
	code, _, _ = e.run("", "sandbox", "run", "--backend", "modal", "--", "true")
	assert.Equal(t, 127, code)
}

// TestAuditOutcomes: the records of a run's actions show how each ended, in the table (OUTCOME)
// and through -outcome.
func TestAuditOutcomes(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	log, err := audit.OpenJSONL(path, nil)
	require.NoError(t, err)
	r, err := reins.New(context.Background(), profile.Dev.Profile(), &reins.Options{Workspace: []string{e.ws}, Audit: log})
	require.NoError(t, err)
	read := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}}
	_, err = r.Do(context.Background(), read, func(context.Context, gate.Decision) error { return nil })
	require.NoError(t, err)
	_, err = r.Do(context.Background(), policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{".env"}},
		func(context.Context, gate.Decision) error { return nil })
	require.ErrorIs(t, err, gate.ErrDenied)
	require.NoError(t, log.Close(context.Background()))

	code, out, _ := e.run("", "audit", "tail", path)
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^\d+\s+\S+ \S+\s+outcome\s+ALLOW\s+succeeded\s+read_file\s+README.md`, out)
	assert.Regexp(t, `(?m)^\d+\s+\S+ \S+\s+outcome\s+DENY\s+denied\s+read_file\s+\.env`, out)
	assert.Regexp(t, `(?m)^\d+\s+\S+ \S+\s+decision\s+ALLOW\s+-\s+read_file`, out, "a decision has no outcome")

	code, out, _ = e.run("", "--json", "audit", "query", "-outcome", "denied", path)
	require.Equal(t, 0, code)
	var recs []audit.Record
	require.NoError(t, json.Unmarshal([]byte(out), &recs))
	require.Len(t, recs, 1)
	assert.Equal(t, audit.OutcomeDenied, recs[0].Outcome)
}

// TestTrust: reins trust shows what the project file loosens, asks, and records the project in
// the user file's trusted_projects bound to the SHA-256 of the content it showed; an edit of the
// file undoes the trust; --revoke removes it.
func TestTrust(t *testing.T) {
	e := newEnv(t)
	projectFile := filepath.Join(e.ws, ".reins", "project-profile.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(projectFile), 0o755))
	content := []byte(`{"active_profile": "PROFILE-DEV"}` + "\n")
	require.NoError(t, os.WriteFile(projectFile, content, 0o644))
	sum := sha256.Sum256(content)
	digest := hex.EncodeToString(sum[:])
	userFile := filepath.Join(e.config, "reins", "profile.json")
	current := func() string {
		t.Helper()
		code, out, stderr := e.run("", "--json", "profile", "current")
		require.Equal(t, 0, code, stderr)
		var v profileView
		require.NoError(t, json.Unmarshal([]byte(out), &v))
		return v.Name
	}
	require.Equal(t, "PROFILE-SAFE", current(), "untrusted: the loosening switch is left out")

	// Refused: what it loosens was shown, nothing is written.
	code, out, stderr := e.run("n\n", "trust")
	assert.Equal(t, exitDeny, code, stderr)
	assert.Contains(t, out, "project file "+projectFile)
	assert.Contains(t, out, "SHA-256 "+digest)
	assert.Regexp(t, `(?m)^  `+regexp.QuoteMeta(projectFile)+`:1 /active_profile active_profile: .+`, out, "the loosening, with file, line and reason")
	assert.Contains(t, stderr, "Trust this content of "+projectFile+"? [y/N]")
	assert.Contains(t, stderr, "reins: trust: not confirmed")
	assert.NoFileExists(t, userFile)
	assert.Equal(t, "PROFILE-SAFE", current())

	// Under --json nothing is asked: --yes confirms, and without it the answer is no.
	code, out, stderr = e.run("y\n", "--json", "trust")
	assert.Equal(t, exitDeny, code)
	assert.True(t, json.Valid([]byte(stderr)), stderr)
	var shown trustView
	require.NoError(t, json.Unmarshal([]byte(out), &shown), "what trusting would apply: %s", out)
	assert.False(t, shown.Trusted)
	assert.Equal(t, digest, shown.SHA256)
	assert.Len(t, shown.Loosenings, 1)
	assert.NoFileExists(t, userFile)

	// Confirmed: bound to the digest of what was shown.
	code, out, stderr = e.run("y\n", "trust")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "trusted: "+projectFile+" (SHA-256 "+digest+")")
	var doc struct {
		Trusted []struct {
			Path   string `json:"path"`
			SHA256 string `json:"sha256"`
		} `json:"trusted_projects"`
	}
	b, err := os.ReadFile(userFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Len(t, doc.Trusted, 1)
	assert.Equal(t, digest, doc.Trusted[0].SHA256)
	assert.Equal(t, "PROFILE-DEV", current(), "trusted: the switch applies")
	st, err := os.Stat(userFile)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	code, out, _ = e.run("", "trust")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "already trusted")

	// An edit of the file is not trusted; trusting again replaces the entry, keeping others.
	require.NoError(t, os.WriteFile(projectFile, []byte(`{"active_profile": "yolo"}`+"\n"), 0o644))
	assert.Equal(t, "PROFILE-SAFE", current(), "an edited project file is not trusted")
	code, out, stderr = e.run("", "--json", "trust", "--yes")
	require.Equal(t, 0, code, stderr)
	var v trustView
	require.NoError(t, json.Unmarshal([]byte(out), &v), out)
	assert.True(t, v.Trusted)
	assert.NotEqual(t, digest, v.SHA256)
	assert.NotEmpty(t, v.Loosenings, "what it loosened is reported")
	b, err = os.ReadFile(userFile)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &doc))
	require.Len(t, doc.Trusted, 1, "one entry per project")
	assert.Equal(t, "yolo", current())

	// Revoked: the project file's loosening is left out again.
	code, out, stderr = e.run("", "trust", "--revoke")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "revoked")
	assert.Equal(t, "PROFILE-SAFE", current())
	code, _, stderr = e.run("", "trust", "--revoke")
	assert.Equal(t, exitNotFound, code)
	assert.Contains(t, stderr, "reins: trust: ")

	// A project file the loader refuses is an error, not a prompt.
	require.NoError(t, os.WriteFile(projectFile, []byte(`{"autonomy": "lots"}`), 0o644))
	code, _, stderr = e.run("y\n", "trust")
	assert.Equal(t, exitError, code)
	assert.Contains(t, stderr, "reins: trust: ")
	assert.Contains(t, stderr, projectFile)
}

// TestSandboxBackendsDescribed: the help says what each backend confines, and local is not
// described as confining anything.
func TestSandboxBackendsDescribed(t *testing.T) {
	e := newEnv(t)
	code, out, _ := e.run("", "sandbox", "run", "--help")
	require.Equal(t, 0, code)
	assert.Regexp(t, `(?m)^\s+local: no confinement: the command runs as you`, out)
	assert.Regexp(t, `(?m)^\s+local-hardened: Linux: namespaces, Landlock, seccomp`, out)
	assert.NotContains(t, out, "confined to the workspace")
	for _, name := range backends().Names() {
		assert.Regexp(t, `(?m)^\s+`+regexp.QuoteMeta(name)+`: \S`, out, name)
	}
}

// TestManagedTierProvenance: under a managed file (-managed), profile show, profile current and
// permissions list say, in the table and in JSON, which settings the managed tier set (its
// rule, its protected path) and which it capped (the dial and the mode the user's profile had
// set higher), and what the tier is.
func TestManagedTierProvenance(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(t.TempDir(), "managed")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	managed := filepath.Join(dir, "managed-profile.json")
	require.NoError(t, os.WriteFile(managed, []byte(`{"managed": {"max_band": "supervised", "max_permission_mode": "read-only"},
 "custom_rules": [{"id": "org-deny-push", "priority": 1, "action": "DENY", "condition": {"operation_type": ["shell"], "command_pattern": "git push*"}}],
 "denied_paths": ["secrets"]}`), 0o644))
	code, out, stderr := e.run("", "profile", "set", "--yes", "PROFILE-DEV")
	require.Equal(t, 0, code, out+stderr)
	cappedMode := `managed tier ` + managed + `:1 /managed/max_permission_mode (capped at read-only: default before`
	cappedBand := `managed tier ` + managed + `:1 /managed/max_band (capped at the supervised band: 0.5 before`
	rule := `managed tier ` + managed + `:2 /custom_rules/0`
	path := `managed tier ` + managed + `:3 /denied_paths/0`

	code, out, stderr = e.run("", "-managed", managed, "permissions", "list")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^managed tier\s+file `+regexp.QuoteMeta(managed)+`\s+autonomy band at most supervised; permission mode at most read-only$`, out)
	assert.Regexp(t, `(?m)^permission mode\s+read-only\s+`+regexp.QuoteMeta(cappedMode), out)
	assert.Regexp(t, `(?m)^autonomy band\s+supervised\s+`+regexp.QuoteMeta(cappedBand), out)
	assert.Regexp(t, `(?m)^  secrets\s+`+regexp.QuoteMeta(path)+`$`, out)
	assert.Regexp(t, `(?m)^-?\d+\s+org-deny-push\s+DENY\s+managed tier\s`, out)

	code, out, stderr = e.run("", "-managed", managed, "--json", "permissions", "list")
	require.Equal(t, 0, code, stderr)
	var perms permissionsView
	require.NoError(t, json.Unmarshal([]byte(out), &perms))
	require.NotNil(t, perms.Managed)
	assert.Equal(t, "file "+managed, perms.Managed.Source)
	assert.Equal(t, "read-only", perms.PermissionMode)
	assert.Equal(t, "supervised", perms.Band)
	assert.Contains(t, perms.Sources["permission_mode"], cappedMode)
	assert.Contains(t, perms.Sources["autonomy"], cappedBand)
	assert.Equal(t, path, perms.Sources[`denied_paths["secrets"]`])
	assert.Equal(t, rule, perms.RuleSources["org-deny-push"])

	for _, args := range [][]string{{"profile", "show", "PROFILE-FULL-AUTO"}, {"profile", "current"}} {
		code, out, stderr = e.run("", append([]string{"-managed", managed}, args...)...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, out, "managed tier\n  source        file "+managed, args)
		assert.Contains(t, out, "permission_mode: "+cappedMode, args)
		assert.Contains(t, out, `rules["org-deny-push"]: `+rule, args)
		assert.Contains(t, out, `denied_paths["secrets"]: `+path, args)

		code, out, stderr = e.run("", append([]string{"-managed", managed, "--json"}, args...)...)
		require.Equal(t, 0, code, stderr)
		var v profileView
		require.NoError(t, json.Unmarshal([]byte(out), &v))
		require.NotNil(t, v.Managed, args)
		assert.Equal(t, "autonomy band at most supervised; permission mode at most read-only", v.Managed.Caps)
		assert.Equal(t, "read-only", v.PermissionMode, args)
		assert.Contains(t, v.Sources["permission_mode"], "managed tier "+managed, args)
		assert.Contains(t, v.Sources["autonomy"], "(capped at the supervised band", args)
		assert.Equal(t, rule, v.Sources[`rules["org-deny-push"]`], args)
	}

	// A switch past the caps is written, and says what the managed tier makes of it.
	code, out, stderr = e.run("", "-managed", managed, "profile", "set", "--yes", "PROFILE-FULL-AUTO")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "active profile: PROFILE-FULL-AUTO\n")
	assert.Contains(t, out, "permission_mode: managed tier "+managed+":1 /managed/max_permission_mode (capped at read-only")
	assert.Contains(t, out, "autonomy: managed tier "+managed+":1 /managed/max_band (capped at the supervised band: 1 before")

	// Without the managed file, nothing says managed.
	code, out, _ = e.run("", "-managed", filepath.Join(dir, "missing.json"), "--json", "permissions", "list")
	require.Equal(t, 0, code)
	perms = permissionsView{}
	require.NoError(t, json.Unmarshal([]byte(out), &perms))
	assert.Nil(t, perms.Managed)
	assert.Equal(t, "default", perms.PermissionMode)
	assert.NotContains(t, out, "managed tier")
}
