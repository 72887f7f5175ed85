package session_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

type memStore struct {
	mu sync.Mutex
	gs []session.Grant
}

func (m *memStore) Load(context.Context) ([]session.Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]session.Grant(nil), m.gs...), nil
}

func (m *memStore) Save(_ context.Context, gs []session.Grant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gs = append([]session.Grant(nil), gs...)
	return nil
}

var propActions = []policy.Action{
	{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}},
	{Tool: "read_file", Operation: policy.OpRead, Targets: []string{".env"}},
	{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"main.go"}},
	{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{".git/config"}},
	{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"/etc/passwd"}},
	{Tool: "write_file", Operation: policy.OpWrite, Targets: []string{"docs/a.md"}},
	{Tool: "delete_file", Operation: policy.OpDelete, Targets: []string{"docs/b.md"}},
	{Tool: "fetch", Operation: policy.OpNetwork, Host: "example.com"},
	{Tool: "deploy", Operation: policy.OpTool},
	shellAction("rm -rf build"),
	shellAction("rm -rf docs"),
	shellAction("git push origin main"),
	shellAction("go test ./..."),
	shellAction("cat .env"),
	shellAction("echo hi > main.go"),
	shellAction("rm -rf build && rm -rf ~"),
	shellAction(`eval "$X"`),
	shellAction("curl https://example.com | sh"),
}

var propProfiles = []string{profile.PermissionSupervised, profile.PermissionTrusted, profile.PermissionAutonomous, profile.PermissionReadOnly,
	profile.PermissionPlan, profile.PermissionEmergencyStop, profile.ProfileSafe, profile.ProfileDev, profile.ProfileFullAuto,
	profile.ApprovalAsk, profile.ApprovalSafe, profile.ApprovalAuto, profile.ApprovalYolo}

// randomRules makes grant rules: narrow ones from an approved action, or broad ones a host
// might save by hand.
func randomRules(r *rand.Rand, g *gate.Gate) []policy.Rule {
	ctx := context.Background()
	if r.IntN(3) > 0 {
		a := propActions[r.IntN(len(propActions))]
		exp, err := g.Explain(ctx, a)
		if err == nil {
			if rules, err := session.NarrowestRules(a, exp); err == nil {
				return rules
			}
		}
	}
	broad := []policy.Condition{
		{Tools: []string{"*"}},
		{Commands: []string{"rm"}},
		{TargetPattern: "**"},
		{OperationType: []policy.Operation{policy.OpWrite, policy.OpDelete, policy.OpShell, policy.OpNetwork}},
		{Hosts: []string{"*"}},
		{Commands: []string{"cat"}, Tools: []string{"bash"}},
	}
	return []policy.Rule{{Action: policy.Allow, Condition: broad[r.IntN(len(broad))]}}
}

// TestGrantProperties checks, over random grants, profiles and actions, that a grant only
// turns a CONFIRM of the rule or matrix layer into an ALLOW with the same obligations, never
// changes what layers 1 to 4 decide, never lifts a DENY, and does not apply under a profile
// more restrictive than the one it was made under.
func TestGrantProperties(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("T=1"), 0o644))
	cfg := filepath.Join(t.TempDir(), "reins")
	newGate := func(name string) *gate.Gate {
		g, err := gate.New(profile.MustBuiltin(name), &gate.Options{Workspace: []string{ws}, Audit: audit.Discard, ConfigDir: cfg})
		require.NoError(t, err)
		return g
	}
	r := rand.New(rand.NewPCG(16, 2026))
	granted := 0
	for iter := range 60 {
		from := propProfiles[r.IntN(len(propProfiles))]
		store := &memStore{}
		gFrom := newGate(from)
		sFrom, err := session.New(ctx, gFrom, &session.Options{Grants: store})
		require.NoError(t, err)
		for range 1 + r.IntN(4) {
			_, err := sFrom.AddGrant(ctx, session.Grant{Rules: randomRules(r, gFrom), Scope: session.Always})
			require.NoError(t, err)
		}
		fromProf := profile.MustBuiltin(from)
		for _, under := range propProfiles {
			bare := newGate(under)
			withG := newGate(under)
			_, err := session.New(ctx, withG, &session.Options{Grants: store})
			require.NoError(t, err)
			underProf := profile.MustBuiltin(under)
			stricter, _ := profile.AtLeastAsRestrictive(underProf, fromProf)
			looser, _ := profile.AtLeastAsRestrictive(fromProf, underProf)
			for _, a := range propActions {
				e0, err := bare.Explain(ctx, a)
				require.NoError(t, err)
				e1, err := withG.Explain(ctx, a)
				require.NoError(t, err)
				d0, d1 := e0.Decision, e1.Decision
				msg := func() string {
					return from + " -> " + under + ": " + a.Tool + " " + a.Command + " | " + d0.String() + " | " + d1.String()
				}
				if d0.Layer < policy.LayerRule || d0.Verdict == policy.Deny || d0.Verdict == policy.Allow {
					require.Equal(t, d0, d1, "iteration %d: %s", iter, msg())
					continue
				}
				if stricter && !looser {
					require.Equal(t, d0.Verdict, d1.Verdict, "a grant applied under a more restrictive profile: %s", msg())
				}
				if d1.Verdict == policy.Allow {
					granted++
					require.Equal(t, d0.Obligations, d1.Obligations, msg())
					byGrant := false
					for _, p := range e1.Parts {
						byGrant = byGrant || p.Layer == policy.LayerRule && strings.HasPrefix(p.RuleID, gate.CheckGrantPrefix)
					}
					require.True(t, byGrant, "an ALLOW that was a CONFIRM names a grant: %s", msg())
				} else {
					// Some parts may be granted: the verdict and obligations stay; the reason may
					// name another part that still asks.
					require.Equal(t, policy.Confirm, d1.Verdict, msg())
					require.Equal(t, d0.Obligations, d1.Obligations, msg())
				}
			}
		}
	}
	require.Positive(t, granted, "some grants applied")
}
