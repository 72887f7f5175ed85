package session_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/checkpoint"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

// gitWorkspace makes a real git workspace with a few files.
func gitWorkspace(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("REINS_TEST_STRICT") == "1" {
			t.Fatalf("git is not installed: %v", err)
		}
		t.Skipf("git is not installed: %v", err)
	}
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

type fixture struct {
	ws   string
	sink *audit.Memory
	g    *gate.Gate
	s    *session.Session
	cp   *checkpoint.Checkpointer
	mu   sync.Mutex
	seen []session.Notice
}

func (f *fixture) notices() []session.Notice {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]session.Notice(nil), f.seen...)
}

// newFixture builds a gate on a real git workspace with the real checkpointer and a memory
// sink; tune changes the session options before New.
func newFixture(t testing.TB, name string, gopts *gate.Options, tune func(*session.Options)) *fixture {
	t.Helper()
	f := &fixture{ws: gitWorkspace(t), sink: audit.NewMemory(0)}
	cp, err := checkpoint.New(context.Background(), f.ws, &checkpoint.Options{ShadowRoot: t.TempDir()})
	require.NoError(t, err)
	f.cp = cp
	var o gate.Options
	if gopts != nil {
		o = *gopts
	}
	o.Workspace, o.Audit, o.ConfigDir = []string{f.ws}, f.sink, filepath.Join(t.TempDir(), "reins")
	f.g, err = gate.New(profile.MustBuiltin(name), &o)
	require.NoError(t, err)
	local, err := sandbox.NewLocal(sandbox.LocalConfig{Root: f.ws})
	require.NoError(t, err)
	so := &session.Options{Checkpointer: cp, Sandbox: local,
		Notifier: session.NotifierFunc(func(_ context.Context, n session.Notice) error {
			f.mu.Lock()
			f.seen = append(f.seen, n)
			f.mu.Unlock()
			return nil
		})}
	if tune != nil {
		tune(so)
	}
	f.s, err = session.New(context.Background(), f.g, so)
	require.NoError(t, err)
	return f
}

func (f *fixture) kinds() []audit.Kind {
	var out []audit.Kind
	for _, r := range f.sink.Records() {
		out = append(out, r.Kind)
	}
	return out
}

func shellAction(cmd string) policy.Action {
	return policy.Action{Tool: "bash", Operation: policy.OpShell, Command: cmd}
}

func writeAction(path string) policy.Action {
	return policy.Action{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{path}}
}

// script is a scripted approver: it answers from a queue and counts the questions.
type script struct {
	mu      sync.Mutex
	answers []session.Answer
	asked   []session.Request
}

func (s *script) Approve(_ context.Context, req session.Request) (session.Answer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, req)
	if len(s.answers) == 0 {
		return session.Answer{Verdict: policy.Deny, By: "script"}, nil
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
