package envlist

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBuild(t *testing.T) {
	t.Parallel()
	base := []string{"PATH=/bin", "SECRET=x", "HOME=/h", "PATH=/usr/bin"}
	assert.Equal(t, []string{"PATH=/usr/bin", "SECRET=x", "HOME=/h", "A=1"}, Build(base, []string{"A=1"}, nil))
	// The allowlist filters the host's variables; Command.Env's always pass.
	assert.Equal(t, []string{"PATH=/usr/bin", "A=2", "B=3"}, Build(base, []string{"A=1", "B=3", "A=2"}, []string{"PATH", "A"}))
	assert.Equal(t, []string{"SECRET=given"}, Build(base, []string{"SECRET=given"}, []string{"NONE"}))
	assert.Empty(t, Build(base, nil, []string{"NONE"}))
	assert.Equal(t, []string{"A=1"}, Build([]string{"=x", "noequals", "A=1"}, nil, nil), "malformed entries are dropped")
}

func TestLookupAndKeys(t *testing.T) {
	t.Parallel()
	env := []string{"A=1", "B=", "A=2"}
	v, ok := Lookup(env, "A")
	assert.True(t, ok)
	assert.Equal(t, "2", v, "the last one wins")
	v, ok = Lookup(env, "B")
	assert.True(t, ok)
	assert.Empty(t, v)
	_, ok = Lookup(env, "C")
	assert.False(t, ok)
	assert.Equal(t, []string{"A", "B", "A"}, Keys(env))
}

func TestHost(t *testing.T) {
	t.Setenv("REINS_ENVLIST_KEEP", "1")
	t.Setenv("REINS_ENVLIST_DROP", "1")
	env := Host("REINS_ENVLIST_DROP")
	assert.Contains(t, env, "REINS_ENVLIST_KEEP=1")
	assert.NotContains(t, env, "REINS_ENVLIST_DROP=1")
}
