package loader

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKnownKeysMatchSchema: the "did you mean" hints know exactly the schema's keys.
func TestKnownKeysMatchSchema(t *testing.T) {
	t.Parallel()
	type node struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Items      json.RawMessage            `json:"items"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	parse := func(raw []byte) node {
		var n node
		require.NoError(t, json.Unmarshal(raw, &n))
		return n
	}
	root := parse(schemaJSON)
	keys := func(n node) []string { return slices.Sorted(maps.Keys(n.Properties)) }
	sorted := func(l []string) []string { return slices.Sorted(slices.Values(l)) }
	assert.Equal(t, keys(root), sorted(knownKeys[""]))
	assert.Equal(t, keys(parse(root.Properties["resource_limits"])), sorted(knownKeys["/resource_limits"]))
	assert.Equal(t, keys(parse(root.Properties["approval"])), sorted(knownKeys["/approval"]))
	assert.Equal(t, keys(parse(root.Properties["managed"])), sorted(knownKeys["/managed"]))
	assert.Equal(t, keys(parse(parse(root.Properties["trusted_projects"]).Items)), sorted(knownKeys["/trusted_projects/*"]))
	assert.Equal(t, keys(parse(root.Defs["rule"])), sorted(knownKeys["/custom_rules/*"]))
	assert.Equal(t, keys(parse(root.Defs["condition"])), sorted(knownKeys["/custom_rules/*/condition"]))
}

func TestPositionAndPointers(t *testing.T) {
	t.Parallel()
	data := []byte("ab\ncd\n\nef")
	for _, tc := range []struct{ off, line, col int }{
		{0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 3, 1}, {7, 4, 1}, {9, 4, 3}, {-1, 1, 1}, {99, 4, 3},
	} {
		l, c := position(data, tc.off)
		assert.Equal(t, [2]int{tc.line, tc.col}, [2]int{l, c}, "position(%d)", tc.off)
	}
	assert.Equal(t, "/a~1b/c~0d/0", pointerOf("a/b", "c~d", "0"))
	assert.Equal(t, "/host_groups/a b/x~1y", rfcPointer("/host_groups/a%20b/x~1y"))
	assert.Equal(t, "", rfcPointer(""))
	v := map[string]any{"a/b": []any{"x", map[string]any{"c~d": true}}}
	got, ok := lookup(v, "/a~1b/1/c~0d")
	assert.True(t, ok)
	assert.Equal(t, true, got)
	for _, bad := range []string{"/nope", "/a~1b/2", "/a~1b/x", "/a~1b/0/z"} {
		_, ok := lookup(v, bad)
		assert.False(t, ok, bad)
	}
	assert.Equal(t, 0, editDistance("abc", "abc"))
	assert.Equal(t, 1, editDistance("autonomyy", "autonomy"))
	assert.Equal(t, 2, editDistance("max_concurent_ops"[:3], "m"))
	assert.Equal(t, 64, editDistance(string(make([]byte, 65)), "a"))
	assert.Equal(t, "'it\\'s \"x\"'", quoteSingle(`it's "x"`))
}
