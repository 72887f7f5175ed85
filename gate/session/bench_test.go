package session_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/gate/session"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// BenchmarkDo measures Do's overhead over Check: an allowed action with no obligations, a no-op
// function, a no-op audit sink. Compare the two sub-benchmarks of one run (the ratio is what
// counts; absolute times vary with the machine).
func BenchmarkDo(b *testing.B) {
	ctx := context.Background()
	g, err := gate.New(profile.MustBuiltin(profile.ModeTrusted), &gate.Options{Workspace: []string{gitWorkspace(b)}, Audit: audit.Discard})
	require.NoError(b, err)
	s, err := session.New(ctx, g, nil)
	require.NoError(b, err)
	a := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}}
	d, err := g.Check(ctx, a)
	require.NoError(b, err)
	require.Equal(b, policy.Allow, d.Verdict)
	require.Zero(b, d.Obligations)
	noop := func(context.Context, gate.Decision) error { return nil }
	b.Run("Check", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = g.Check(ctx, a)
		}
	})
	b.Run("Do", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = s.Do(ctx, a, noop)
		}
	})
}
