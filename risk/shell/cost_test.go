package shell_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk"
	"github.com/reins-go/reins/risk/shell"
)

// Bounds a fuzz target or a test may check per Analyze call. The design bound is 50 ms and
// 16 MiB for a 64 KiB line on an idle machine; the time checked here is ten times that, so a
// loaded machine does not fail a correct build (performance is measured by the benchmarks).
const (
	boundAlloc = 16 << 20
	boundTime  = 500 * time.Millisecond
)

// measure runs Analyze once and returns what it allocated and how long it took.
func measure(line string, opts *shell.Options) (*shell.Analysis, uint64, time.Duration, error) {
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	an, err := shell.Analyze(line, opts)
	el := time.Since(start)
	runtime.ReadMemStats(&m1)
	return an, m1.TotalAlloc - m0.TotalAlloc, el, err
}

// hostile lines, 64 KiB or so each: one per expansion class the analysis bounds.
var hostile = func() map[string]string {
	const n = shell.MaxLine - 64
	rep := func(s string) string { return strings.Repeat(s, n/len(s)) }
	return map[string]string{
		"statements":        rep("a;"),
		"pipeline":          "a" + rep("|a"),
		"and-list":          "a" + rep("&&a"),
		"words":             "echo" + rep(" a"),
		"nesting-parens":    strings.Repeat("(", n/2) + strings.Repeat(")", n/2),
		"nesting-subst":     strings.Repeat("$(", n/3) + strings.Repeat(")", n/3),
		"nesting-braces":    strings.Repeat("{ ", n/5) + strings.Repeat("; }", n/5),
		"brace-range":       "echo {1..20000000}",
		"brace-range-huge":  "echo {1..9223372036854775807}",
		"brace-product":     "echo " + strings.Repeat("{a,b}", 20),
		"brace-many":        "echo" + rep(" {a,b}{c,d}{e,f}"),
		"brace-wide":        "echo {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}" + rep("x"),
		"params":            "echo \"" + rep("$a") + "\"",
		"param-ops":         "echo " + rep("${v@P}"),
		"arith-long":        "echo $((" + rep("1+") + "1))",
		"arith-vars":        "echo $((" + rep("x+") + "1))",
		"heredocs":          rep("cat <<E\nx\nE\n"),
		"if-chain":          rep("if a; then b; fi; "),
		"nested-bash-c":     "bash -c 'bash -c \"bash -c \\\"" + rep("a;") + "\\\"\"'",
		"eval-braces":       "eval " + strings.Repeat("{a,b}", 6) + " " + rep("x"),
		"assignments":       rep("a=b "),
		"redirects":         "echo" + rep(" >f"),
		"case-arms":         "case x in " + rep("a) b;; ") + "esac",
		"functions":         rep("f(){ a; }; "),
		"test-clauses":      rep("[[ $x -eq 1 ]];"),
		"cmdsubst-siblings": "echo" + rep(" $(a)"),
	}
}()

// TestHostileLinesAreBounded: every hostile line is analysed within the memory bound, and a line
// that was not read to its end says so (opaque). Time is logged here and measured by
// BenchmarkAnalyzeHostile (FuzzAnalyze checks it generously).
func TestHostileLinesAreBounded(t *testing.T) {
	opts := &shell.Options{Dir: "/w", Home: "/home/u"}
	for name, line := range hostile {
		if !assert.LessOrEqual(t, len(line), shell.MaxLine, name) {
			continue
		}
		an, alloc, el, _ := measure(line, opts)
		require.NotNil(t, an, name)
		assert.LessOrEqual(t, alloc, uint64(boundAlloc), "%s allocates %d bytes", name, alloc)
		t.Logf("%-18s %6.2f MiB %v opaque=%v", name, float64(alloc)/(1<<20), el, an.Opaque)
	}
}

func TestLongLineIsOpaqueWithoutParsing(t *testing.T) {
	line := "echo " + strings.Repeat("a", shell.MaxLine)
	an, alloc, _, err := measure(line, nil)
	require.ErrorIs(t, err, shell.ErrTooLong)
	assert.True(t, an.Opaque)
	assert.NotEqual(t, risk.Of(risk.ReadOnly), an.Risk)
	assert.True(t, an.Risk.Has(risk.Exec))
	assert.Less(t, alloc, uint64(64<<10), "a line over the limit is not parsed")
}

// BenchmarkAnalyzeHostile reports the cost of the worst line of each expansion class, next to
// the typical line (the baseline for ratios).
func BenchmarkAnalyzeHostile(b *testing.B) {
	opts := &shell.Options{Dir: "/w", Home: "/home/u"}
	cases := []string{"statements", "pipeline", "words", "nesting-parens", "nesting-subst", "brace-range", "brace-product",
		"brace-many", "brace-wide", "params", "param-ops", "arith-long", "arith-vars", "heredocs", "nested-bash-c",
		"eval-braces", "case-arms", "test-clauses", "cmdsubst-siblings"}
	b.Run("baseline-typical", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = shell.Analyze(typicalLine, opts)
		}
	})
	for _, name := range cases {
		line := hostile[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for b.Loop() {
				_, _ = shell.Analyze(line, opts)
			}
		})
	}
}

// TestStreamedParse: statements are parsed and walked one at a time. A syntax error anywhere,
// after any number of good statements, is still an error that fails closed; a line that is past
// the statement budget before its error is opaque (not read to the end), not an error.
func TestStreamedParse(t *testing.T) {
	for _, line := range []string{"ls; echo 'x", "ls\nls\nfi", "cat <<EOF\nx\nEOF\nls;;", strings.Repeat("ls\n", 50) + "$(",
		"bash -c 'ls; (' ; ls", "echo ok; if true; then"} {
		an, err := shell.Analyze(line, nil)
		if strings.HasPrefix(line, "bash -c") {
			require.NoError(t, err, line) // the nested script's error makes it opaque
			assert.True(t, an.Opaque, line)
			continue
		}
		require.Error(t, err, "%q", line)
		assert.True(t, an.Opaque)
		assert.Equal(t, 1, len(an.Commands), "a failed parse reports one fail-closed command")
	}
	line := strings.Repeat("ls\n", 2000) + "echo 'unterminated"
	an, err := shell.Analyze(line, nil)
	require.NoError(t, err)
	assert.True(t, an.Opaque)
	last := an.Commands[len(an.Commands)-1]
	assert.True(t, last.Opaque)
	assert.True(t, last.Risk.Has(risk.Destructive), "the unread rest may do anything")
}
