package shell

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/risk"
)

// Empty brace elements ({,0}: FuzzAnalyze found that asking the position of the word they make
// panicked) expand as bash expands them.
func TestEmptyBraceElements(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		line string
		argv []string
	}{
		{"echo {,0}", []string{"echo", "", "0"}},
		{"echo {0,}", []string{"echo", "0", ""}},
		{"echo {,}", []string{"echo", "", ""}},
		{"echo {,,}", []string{"echo", "", "", ""}},
		{"echo a{,b}c", []string{"echo", "ac", "abc"}},
		{"echo {,0}{,1}", []string{"echo", "", "1", "0", "01"}},
		{"rm {,-rf} /x", []string{"rm", "", "-rf", "/x"}},
	} {
		an, err := Analyze(tt.line, &Options{Dir: "/w"})
		require.NoError(t, err, tt.line)
		require.Len(t, an.Commands, 1, tt.line)
		assert.Equal(t, tt.argv, an.Commands[0].Argv, tt.line)
	}
}

// A panic inside the analysis (a bug in it or in the parser) never reaches the caller: the line
// is unparsable and fails closed.
func TestAnalyzePanicFailsClosed(t *testing.T) {
	testHookAnalyze = func(line string) {
		if line == "boom" {
			panic("injected")
		}
	}
	defer func() { testHookAnalyze = nil }()
	an, err := Analyze("boom", nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "injected")
	require.NotNil(t, an)
	assert.True(t, an.Opaque)
	assert.False(t, an.Risk.Has(risk.ReadOnly))
	assert.True(t, an.Risk.Has(risk.Destructive))
	assert.Equal(t, risk.High, an.Severity)
	_, err = Analyze("echo fine", nil)
	assert.NoError(t, err, "only the line that panicked failed")
}
