package gate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/internal/fspath"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// BenchmarkCheckPath: an allowed Check of a write target at depth 1, 3 and 8 (the number of
// path components), an existing file and a file about to be created, each with the single-call
// resolution (openat2 on Linux; elsewhere the same walk) and with the component walk forced, in
// the same run: the walk is the baseline whose cost grows with depth.
func BenchmarkCheckPath(b *testing.B) {

	dir := b.TempDir()
	g, err := gate.New(profile.MustBuiltin(profile.ProfileDev), &gate.Options{Workspace: []string{dir}})
	require.NoError(b, err)
	for _, depth := range []int{1, 3, 8} {
		var parts []string
		for i := 1; i < depth; i++ {
			parts = append(parts, fmt.Sprintf("d%d", i))
		}
		require.NoError(b, os.MkdirAll(filepath.Join(append([]string{dir}, parts...)...), 0o755))
		file := strings.Join(append(parts, "main.go"), "/")
		require.NoError(b, os.WriteFile(filepath.Join(dir, filepath.FromSlash(file)), []byte("package main\n"), 0o644))
		for _, target := range []struct{ name, path string }{
			{"existing", file}, {"new", strings.Join(append(parts, "new.go"), "/")},
		} {
			a := policy.Action{Tool: "edit_file", Operation: policy.OpWrite, Targets: []string{target.path}}
			d, err := decide(g, a)
			require.NoError(b, err)
			require.Equal(b, policy.Allow, d.Verdict, "the benchmark measures the ALLOW path")
			for _, mode := range []struct {
				name string
				fast bool
			}{{"openat2", true}, {"walk", false}} {
				b.Run(fmt.Sprintf("depth=%d/%s/%s", depth, target.name, mode.name), func(b *testing.B) {
					defer fspath.SetFastResolve(fspath.SetFastResolve(mode.fast))
					b.ReportAllocs()
					for b.Loop() {
						_, _ = decide(g, a)
					}
				})
			}
		}
	}
}
