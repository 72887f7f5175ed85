package testenv

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStrict(t *testing.T) {
	t.Setenv(StrictEnv, "1")
	assert.True(t, Strict())
	t.Setenv(StrictEnv, "0")
	assert.False(t, Strict())
	t.Setenv(StrictEnv, "")
	assert.False(t, Strict())
}

func TestRequireToolFindsAShell(t *testing.T) {
	p := RequireTool(t, "sh", "every Unix test machine has one")
	assert.NotEmpty(t, p)
}

func TestRequireToolMissingSkips(t *testing.T) {
	t.Setenv(StrictEnv, "")
	// A sub-test so that the skip ends only it.
	var ran bool
	t.Run("missing", func(t *testing.T) {
		RequireTool(t, "reins-no-such-tool-4711", "test of the helper")
		ran = true
	})
	assert.False(t, ran, "RequireTool must stop the test when the tool is missing")
}
