package shell_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/shelltables"
	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// FuzzAnalyze: Analyze never panics; it stays within its time and memory bounds (boundTime,
// boundAlloc, checked generously so a loaded machine passes); a line that fails to parse is never
// reported as anything but opaque and high-risk; appending "; rm -rf /" to a line never lowers
// its risk.
func FuzzAnalyze(f *testing.F) {
	for _, r := range shelltables.Table {
		f.Add(r.Line)
	}
	for _, r := range shelltables.Expansions {
		f.Add(r.Line)
	}
	for _, r := range shelltables.Options {
		f.Add(r.Line)
	}
	// Short hostile seeds (the 64 KiB lines are TestHostileLinesAreBounded's and the benchmark's).
	for _, s := range []string{"echo {1..20000000}", "echo " + strings.Repeat("{a,b}", 20), "echo {1..9223372036854775807..1}",
		"X='a[$(touch m)]'; echo $((X))", "echo ${v@P}", strings.Repeat("$(", 200) + strings.Repeat(")", 200),
		"eval " + strings.Repeat("{a,b}", 6) + " " + strings.Repeat("{c,d}", 6), "bash -c 'bash -c \"echo {1..64}{1..64}\"'"} {
		f.Add(s)
	}
	for _, s := range []string{"", " ", "#", "a=b", "`", "$(", "<<", "cat <<EOF", "x\\", "echo '", "f() {", "(((", "[[ -f x", "a | | b"} {
		f.Add(s)
	}
	opts := &shell.Options{Dir: "/w", Home: "/home/u", Registries: map[string][]string{"npm": {"registry.example"}}}
	f.Fuzz(func(t *testing.T, line string) {
		an, alloc, el, err := measure(line, opts)
		require.NotNil(t, an)
		require.LessOrEqual(t, alloc, uint64(boundAlloc), "Analyze allocated %d bytes for a %d-byte line", alloc, len(line))
		require.LessOrEqual(t, el, boundTime, "Analyze took %v for a %d-byte line", el, len(line))
		if err != nil {
			require.True(t, an.Opaque, "a line that fails to parse is opaque")
			require.False(t, an.Risk.Has(risk.ReadOnly), "a line that fails to parse is never read-only")
			require.Equal(t, risk.High, an.Severity)
			return
		}
		for _, c := range an.Commands {
			require.False(t, c.Risk.Empty(), "every command has a risk: %q", c.Text)
		}
		an2, _ := shell.Analyze(line+"; rm -rf /", opts)
		require.NotNil(t, an2)
		for l := range an.Risk.All() {
			if l != risk.ReadOnly {
				require.True(t, an2.Risk.Has(l), "appending a command dropped %s from %q", l, line)
			}
		}
		require.GreaterOrEqual(t, an2.Severity, an.Severity, "appending a command lowered the severity of %q", line)
		if !strings.Contains(line, "#") && !strings.Contains(line, "<<") && !strings.ContainsAny(line, "\\'\"`") {
			// Unless the suffix was swallowed by a comment, a heredoc or quoting, it is seen.
			require.True(t, an2.Risk.Has(risk.Destructive), "rm -rf / appended to %q is not destructive", line)
		}
	})
}

var (
	typicalLine = `cd src && go test -run TestParse ./... 2>&1 | tee ../test.log`
	bigScript   = func() string {
		var b strings.Builder
		for b.Len() < 2048 {
			b.WriteString("if [ -f go.mod ]; then\n  go build ./... && go vet ./...\nfi\n")
			b.WriteString("for f in src/*.go; do gofmt -l \"$f\" >> fmt.log; done\n")
			b.WriteString("curl -sSf https://api.model.example/health || echo down >&2\n")
		}
		return b.String()
	}()
)

func BenchmarkAnalyze(b *testing.B) {
	opts := &shell.Options{Dir: "/w", Home: "/home/u"}
	for _, bc := range []struct{ name, line string }{{"typical-60B", typicalLine}, {"script-2KB", bigScript}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.line)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := shell.Analyze(bc.line, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
