package reins_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox"
)

// enforcingRunner is a fake runner that says it enforces a confinement (sandbox.Enforcing).
type enforcingRunner struct{ fakeRunner }

func (*enforcingRunner) EnforcesConfine() bool { return true }

// pathCheckpointer records which kind of snapshot it was asked for.
type pathCheckpointer struct {
	nopCheckpointer
	full   int
	scoped [][]string
}

func (c *pathCheckpointer) Snapshot(ctx context.Context, label, corr string) (string, error) {
	c.full++
	return c.nopCheckpointer.Snapshot(ctx, label, corr)
}

func (c *pathCheckpointer) SnapshotPaths(_ context.Context, _, _ string, paths []string) (string, error) {
	c.scoped = append(c.scoped, paths)
	return "scoped", nil
}

// TestAllowedLinesRunConfined: the analysis proposes, the sandbox enforces. A line the gate lets
// through without asking runs in the enforcing sandbox, confined to what its analysis claims:
// nothing writable for a read-only line, exactly its writes otherwise, the network only when it
// names hosts the profile allows; its checkpoint covers only what it may write.
func TestAllowedLinesRunConfined(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		prof     string
		line     string
		writable []string // relative to the workspace
		network  bool
		scoped   bool // a checkpoint of just the writes
	}{
		{"read-only", profile.ProfileDev, "grep -n TODO main.go", nil, false, false},
		{"known writes", profile.PermissionAutonomous, "sort -o docs/out.txt docs/a.md", []string{"docs/out.txt"}, false, true},
		{"the network", profile.PermissionAutonomous, "curl -s https://example.com", nil, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := &enforcingRunner{}
			local := &fakeRunner{}
			cp := &pathCheckpointer{}
			f := newFixture(t, tc.prof, func(o *reins.Options) {
				o.Sandbox, o.Runner, o.Checkpointer, o.TrustAnalysis = sb, local, cp, false
			})
			out, _, err := f.r.DoCommand(ctx, shellAction(tc.line), sandbox.Command{})
			require.NoError(t, err, "%s", out.Decision)
			assert.Nil(t, out.Approval, "allowed without asking")
			require.Len(t, sb.ran(), 1, "it ran in the enforcing sandbox")
			assert.Empty(t, local.ran())
			cmd := sb.ran()[0]
			require.NotNil(t, cmd.Confine, "confined to the analysis's claim")
			var want []string
			for _, w := range tc.writable {
				want = append(want, filepath.Join(f.ws, w))
			}
			assert.ElementsMatch(t, want, cmd.Confine.Writable)
			assert.Equal(t, tc.network, cmd.Confine.Network)
			assert.Equal(t, []string{"bash", "-c", tc.line}, cmd.Args, "bash, the grammar the analysis read")
			if tc.scoped {
				require.Len(t, cp.scoped, 1)
				assert.ElementsMatch(t, want, cp.scoped[0])
				assert.Zero(t, cp.full, "no workspace snapshot for a confined line")
			} else {
				assert.Zero(t, cp.full+len(cp.scoped), "nothing writable: nothing to checkpoint")
			}
		})
	}
}

// TestNoEnforcingSandboxAsks: without a sandbox that enforces a confinement (none, or local,
// which confines nothing) a line the gate would allow is asked about instead; a human's approval
// runs it unconfined in the plain runner. A Do of a shell action (its function runs the line
// itself) is asked about the same way.
func TestNoEnforcingSandboxAsks(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"no sandbox", "local as the sandbox"} {
		t.Run(name, func(t *testing.T) {
			local := &fakeRunner{}
			ap := &script{answers: []reins.Answer{{Verdict: policy.Allow, By: "alice"}, {Verdict: policy.Allow, By: "alice"}}}
			f := newFixture(t, profile.ProfileDev, func(o *reins.Options) {
				o.Runner, o.Approver, o.TrustAnalysis = local, ap, false
				o.Sandbox = nil
				if name == "local as the sandbox" {
					o.Sandbox = local // not sandbox.Enforcing
				}
			})
			line := shellAction("grep -n TODO main.go")
			d := f.check(t, line)
			require.Equal(t, policy.Allow, d.Verdict, "the gate allows it: %s", d)
			out, _, err := f.r.DoCommand(ctx, line, sandbox.Command{})
			require.NoError(t, err)
			require.NotNil(t, out.Approval, "asked, not allowed on the analysis's word")
			assert.Contains(t, ap.asked[0].Decision.Reason, "no sandbox here enforces")
			assert.Equal(t, policy.Confirm, ap.asked[0].Decision.Verdict)
			require.Len(t, local.ran(), 1)
			assert.Nil(t, local.ran()[0].Confine, "approved: runs unconfined in the plain runner")

			out, err = f.r.Do(ctx, line, ok)
			require.NoError(t, err)
			require.NotNil(t, out.Approval, "a Do runs the line itself: asked too")
		})
	}
}

// TestTrustAnalysisIsRecorded: a host that trusts the analysis runs allowed lines unconfined,
// each recorded; a line that touches files it does not name is still asked about.
func TestTrustAnalysisIsRecorded(t *testing.T) {
	ctx := context.Background()
	local := &fakeRunner{}
	f := newFixture(t, profile.ProfileDev, func(o *reins.Options) { o.Sandbox, o.Runner, o.TrustAnalysis = nil, local, true })
	out, _, err := f.r.DoCommand(ctx, shellAction("grep -n TODO main.go"), sandbox.Command{})
	require.NoError(t, err)
	assert.Nil(t, out.Approval)
	require.Len(t, local.ran(), 1)
	var waived []audit.Record
	for _, r := range f.sink.Records() {
		if r.Kind == audit.KindSandboxWaived {
			waived = append(waived, r)
		}
	}
	require.Len(t, waived, 1, "every unconfined run of an allowed line is recorded")
	assert.Equal(t, reins.CheckSandboxTrusted, waived[0].RuleMatched)
	assert.Equal(t, out.Decision.DecisionID, waived[0].DecisionID)

	_, _, err = f.r.DoCommand(ctx, shellAction("git ls-files | xargs wc -l"), sandbox.Command{})
	var de *gate.DeniedError
	require.ErrorAs(t, err, &de, "files it does not name: asked (and nobody to ask)")
	assert.Equal(t, gate.CheckApprovalNone, de.Decision.RuleID)
	assert.Len(t, local.ran(), 1)
}
