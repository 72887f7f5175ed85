package reins_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// TestGrantProperties checks, over random grants, profiles and actions, that a grant only
// turns a CONFIRM of the rule or matrix layer into an ALLOW with the same obligations, never
// changes what layers 1 to 4 decide, never lifts a DENY, does not apply under a profile more
// restrictive than the one it was made under, and (issue 24) covers only the line it was
// approved for, in the directory and with the environment it was approved with: never the
// line under a wrapper, after a cd, chained, elsewhere or with other variables. Grants broader
// than an approval are refused.
func TestGrantProperties(t *testing.T) {
	ctx := context.Background()
	ws := gitWorkspace(t)
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".env"), []byte("T=1"), 0o644))
	actions := propActions(t.TempDir())
	cfg := filepath.Join(t.TempDir(), "reins")
	newRun := func(name string, grants reins.Store) *reins.Run {
		run, err := reins.New(ctx, profile.MustBuiltin(name), &reins.Options{Workspace: []string{ws}, Audit: audit.Discard, ConfigDir: cfg, Grants: grants})
		require.NoError(t, err)
		t.Cleanup(func() { _ = run.Close() })
		return run
	}
	// One run per profile without grants, and one per profile over a grants store that every
	// iteration empties and fills again.
	store := reins.NewMemoryStore()
	bare, withGrants := map[string]*reins.Run{}, map[string]*reins.Run{}
	for _, name := range propProfiles {
		bare[name], withGrants[name] = newRun(name, nil), newRun(name, store)
	}
	r := rand.New(rand.NewPCG(16, 2026))
	granted, refused, viaLine := 0, 0, 0
	for iter := range 60 {
		from := propProfiles[r.IntN(len(propProfiles))]
		_, err := store.Update(ctx, func(s *reins.RunState) error {
			s.Grants = nil
			return nil
		})
		require.NoError(t, err)
		sFrom := withGrants[from]
		for range 1 + r.IntN(4) {
			if r.IntN(4) == 0 {
				bg := broadGrants("go test ./...")
				_, err := sFrom.AddGrant(ctx, bg[r.IntN(len(bg))])
				require.ErrorIs(t, err, reins.ErrBroadGrant)
				refused++
				continue
			}
			if g := randomGrant(r, sFrom, actions); g != nil {
				_, err := sFrom.AddGrant(ctx, *g)
				require.NoError(t, err)
			}
		}
		kept, err := store.Load(ctx)
		require.NoError(t, err)
		byID := map[string]reins.Grant{}
		for _, g := range kept.Grants {
			byID[g.ID] = g
		}
		fromProf := profile.MustBuiltin(from)
		for _, under := range propProfiles {
			withG := withGrants[under]
			underProf := profile.MustBuiltin(under)
			stricter, _ := profile.AtLeastAsRestrictive(underProf, fromProf)
			looser, _ := profile.AtLeastAsRestrictive(fromProf, underProf)
			for _, a := range actions {
				e0, err := bare[under].Explain(ctx, a)
				require.NoError(t, err)
				e1, err := withG.Explain(ctx, a)
				require.NoError(t, err)
				d0, d1 := e0.Decision, e1.Decision
				msg := func() string {
					return from + " -> " + under + ": " + a.Tool + " " + a.Command + " in " + a.WorkDir + " with " + strings.Join(a.Env, " ") +
						" | " + d0.String() + " | " + d1.String()
				}
				// Every part a grant answered was asked about the action's own line, directory
				// and environment.
				for _, p := range e1.Parts {
					if !strings.HasPrefix(p.RuleID, gate.CheckGrantPrefix) {
						continue
					}
					id, _, _ := strings.Cut(strings.TrimPrefix(p.RuleID, gate.CheckGrantPrefix), "#")
					g, ok := byID[id]
					require.True(t, ok, "a part names an unknown grant %s: %s", p.RuleID, msg())
					require.Equal(t, g.Line, a.Command, "a grant covers only its own line: %s", msg())
					if g.Line != "" {
						viaLine++
						require.Equal(t, g.Dir, e1.Dir, "a grant covers only its own directory: %s", msg())
						require.ElementsMatch(t, g.Env, a.Env, "a grant covers only its own environment: %s", msg())
					}
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
					// A grant keeps the part's obligations; a shell line it lets through without
					// asking is also confined to what its analysis claims (the Sandbox obligation).
					want := d0.Obligations
					if a.Command != "" {
						want |= policy.Sandbox
					}
					require.Equal(t, want, d1.Obligations, msg())
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
	require.Positive(t, viaLine, "some command grants applied")
	require.Positive(t, refused, "some broad grants were refused")
}
