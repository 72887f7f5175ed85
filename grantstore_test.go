package reins_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// Issue 24: use counts are kept with the grant in its store. A grant limited to 2 uses allows
// exactly 2 actions in all: across two runs that share a FileStore for their state (a session
// grant), and across runs that load the same grants FileStore (an always grant), a new run
// does not start the count again.
func TestGrantUseCountsAcrossRuns(t *testing.T) {
	ctx := context.Background()
	ws := workspace(t)
	rm := shellAction("rm -rf build")
	newRun := func(o reins.Options) *reins.Run {
		o.Workspace, o.ConfigDir, o.Checkpointer = []string{ws}, filepath.Join(t.TempDir(), "reins"), &nopCheckpointer{}
		o.TrustAnalysis = true // grants, not enforcement, are under test: no sandbox here
		r, err := reins.New(ctx, builtin(profile.PermissionTrusted), &o)
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	for _, tc := range []struct {
		name  string
		scope reins.Scope
		opts  func(dir string) reins.Options
	}{
		{"session grant, shared run state", reins.ForSession, func(dir string) reins.Options {
			return reins.Options{Store: reins.NewFileStore(filepath.Join(dir, "state.json"))}
		}},
		{"always grant, shared grants file", reins.Always, func(dir string) reins.Options {
			return reins.Options{Grants: reins.NewFileStore(filepath.Join(dir, "grants.json"))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			r1 := newRun(tc.opts(dir))
			g := limited(t, r1, rm, tc.scope, 2)
			// Each run opens the file afresh, as a hook started per tool call does.
			r2 := newRun(tc.opts(dir))
			r3 := newRun(tc.opts(dir))
			var allowed []string
			for i, r := range []*reins.Run{r1, r2, r3, r1, r2} {
				out, err := r.Do(ctx, rm, ok)
				if err == nil {
					assert.True(t, grantedBy(out.Decision), "%s", out.Decision)
					allowed = append(allowed, fmt.Sprintf("run %d", i))
					continue
				}
				require.ErrorIs(t, err, gate.ErrDenied)
				assert.Equal(t, gate.CheckApprovalNone, out.Decision.RuleID, "used up: asked again (nobody to ask)")
			}
			assert.Equal(t, []string{"run 0", "run 1"}, allowed, "exactly MaxUses actions in all")
			for _, r := range []*reins.Run{r1, r2, r3} {
				gs, err := r.Grants(ctx)
				require.NoError(t, err)
				assert.Empty(t, gs, "used up for every run")
			}
			// The store keeps the count with the grant.
			st := tc.opts(dir)
			s := st.Store
			if s == nil {
				s = st.Grants
			}
			state, err := s.Load(ctx)
			require.NoError(t, err)
			require.Len(t, state.Grants, 1)
			assert.Equal(t, g.ID, state.Grants[0].ID)
			assert.Equal(t, 2, state.Grants[0].Used)
		})
	}
}

// Issue 24: goroutines racing for the last uses of a grant: exactly MaxUses of them run, with
// one run (a MemoryStore), with runs sharing a FileStore, and with runs each loading the same
// grants file.
func TestGrantLastUseRace(t *testing.T) {
	ctx := context.Background()
	ws := workspace(t)
	rm := shellAction("rm -rf build")
	const maxUses, workers = 3, 12
	for _, tc := range []struct {
		name  string
		scope reins.Scope
		runs  int
		opts  func(dir string) reins.Options
	}{
		{"one run, memory store", reins.ForSession, 1, func(string) reins.Options { return reins.Options{} }},
		{"four runs, one state file", reins.ForSession, 4, func(dir string) reins.Options {
			return reins.Options{Store: reins.NewFileStore(filepath.Join(dir, "state.json"))}
		}},
		{"four runs, one grants file", reins.Always, 4, func(dir string) reins.Options {
			return reins.Options{Grants: reins.NewFileStore(filepath.Join(dir, "grants.json"))}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var runs []*reins.Run
			for range tc.runs {
				o := tc.opts(dir)
				o.Workspace, o.Audit, o.Checkpointer = []string{ws}, audit.Discard, &nopCheckpointer{}
				o.TrustAnalysis = true // use counts, not enforcement, are under test: no sandbox here
				r, err := reins.New(ctx, builtin(profile.PermissionTrusted), &o)
				require.NoError(t, err)
				defer r.Close()
				runs = append(runs, r)
			}
			limited(t, runs[0], rm, tc.scope, maxUses)
			var ran, denied atomic.Int64
			start := make(chan struct{})
			var wg sync.WaitGroup
			for w := range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					out, err := runs[w%len(runs)].Do(ctx, rm, func(context.Context, gate.Decision) error {
						ran.Add(1)
						return nil
					})
					switch {
					case err == nil:
						assert.True(t, grantedBy(out.Decision))
					case assert.ErrorIs(t, err, gate.ErrDenied):
						denied.Add(1)
					}
				}()
			}
			close(start)
			wg.Wait()
			assert.Equal(t, int64(maxUses), ran.Load(), "exactly MaxUses succeed")
			assert.Equal(t, int64(workers-maxUses), denied.Load())
		})
	}
}

// Issue 24: a grant file edited to hold a grant broader than any approval (a match-all rule, a
// bare program name, a shell-wide rule, a pattern target, a command rule without its line) is
// refused with the file and the line, and a run that keeps its grants there denies rather than
// trusting it.
func TestEditedGrantFileIsRefused(t *testing.T) {
	ctx := context.Background()
	ws := workspace(t)
	newRun := func(store reins.Store) *reins.Run {
		r, err := reins.New(ctx, builtin(profile.PermissionTrusted), &reins.Options{Workspace: []string{ws}, Grants: store,
			ConfigDir: filepath.Join(t.TempDir(), "reins")})
		require.NoError(t, err)
		t.Cleanup(func() { _ = r.Close() })
		return r
	}
	rule := func(g map[string]any) map[string]any {
		return g["rules"].([]any)[0].(map[string]any)
	}
	cond := func(g map[string]any) map[string]any {
		r := rule(g)
		if r["condition"] == nil {
			r["condition"] = map[string]any{}
		}
		return r["condition"].(map[string]any)
	}
	for _, tc := range []struct {
		name string
		edit func(g map[string]any)
	}{
		{"match-all rule", func(g map[string]any) { rule(g)["condition"] = map[string]any{} }},
		{"bare program name", func(g map[string]any) {
			c := cond(g)
			c["commands"] = []any{"git"}
			delete(c, "command_pattern")
		}},
		{"bare program with a pattern", func(g map[string]any) {
			c := cond(g)
			c["commands"] = []any{"git"}
			c["command_pattern"] = "^git.*$"
		}},
		{"shell-wide rule", func(g map[string]any) {
			c := cond(g)
			delete(c, "commands")
			delete(c, "command_pattern")
		}},
		{"pattern target", func(g map[string]any) {
			c := cond(g)
			delete(c, "commands")
			delete(c, "command_pattern")
			c["target_pattern"] = "src/**"
		}},
		{"command rule without a line", func(g map[string]any) { delete(g, "line") }},
		{"command outside its line", func(g map[string]any) { g["line"] = "ls" }},
		{"a deny turned into an allow of everything", func(g map[string]any) { cond(g)["tools"] = []any{"*"} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "grants.json")
			store := reins.NewFileStore(path)
			r := newRun(store)
			// A valid grant first, then the one the edit widens.
			grantFor(t, r, policy.Action{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"docs/git-notes.md"}}, reins.Always)
			g := grantFor(t, r, shellAction("rm -rf build"), reins.Always)
			line := editGrantFile(t, path, g.ID, tc.edit)

			_, err := reins.NewFileStore(path).Load(ctx)
			require.ErrorIs(t, err, reins.ErrBroadGrant)
			assert.ErrorContains(t, err, fmt.Sprintf("%s:%d", path, line), "the file and the line of the grant")
			assert.ErrorContains(t, err, g.ID)
			_, err = reins.NewFileStore(path).Update(ctx, func(*reins.RunState) error { return nil })
			require.ErrorIs(t, err, reins.ErrBroadGrant, "nothing is written over it either")

			// A run that keeps its grants there fails closed.
			r2 := newRun(reins.NewFileStore(path))
			d, err := r2.Check(ctx, shellAction("rm -rf build"))
			require.ErrorIs(t, err, reins.ErrRunState)
			require.ErrorIs(t, err, reins.ErrBroadGrant)
			assert.Equal(t, policy.Deny, d.Verdict)
			d, err = r2.Check(ctx, readme)
			require.Error(t, err)
			assert.Equal(t, policy.Deny, d.Verdict, "nothing is allowed on an untrusted grant file")
		})
	}
}

// Grants a host adds itself are held to the same narrowness (AddGrant validates).
func TestAddGrantRefusesBroadGrants(t *testing.T) {
	ctx := context.Background()
	f := newPlain(t, builtin(profile.PermissionTrusted), nil)
	for i, g := range broadGrants("go test ./...") {
		_, err := f.r.AddGrant(ctx, g)
		require.ErrorIs(t, err, reins.ErrBroadGrant, "grant %d: %+v", i, g.Rules[0].Condition)
	}
	_, err := f.r.AddGrant(ctx, reins.Grant{Scope: reins.ForSession, Rules: []policy.Rule{{Condition: policy.Condition{
		Tools: []string{"bash"}, OperationType: []policy.Operation{policy.OpShell}, Commands: []string{"go test ./..."},
		CommandPattern: `^go test \./\.\.\.$`, Risk: policy.RiskMatch{Levels: writeLevels}}}}})
	require.ErrorIs(t, err, reins.ErrBroadGrant, "a command rule without its line")
	assert.Empty(t, f.grants(t))
}
