package hookstate

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/profile"
)

// TestLookupFollowsFileIdentity: an entry is used while every file it was loaded from keeps
// its identity, and not after any of them is written, created or removed, nor when its profile
// does not hash to the recorded hash, nor when it must not be cached.
func TestLookupFollowsFileIdentity(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	user := filepath.Join(dir, "profile.json")
	missing := filepath.Join(dir, "project-profile.json")
	require.NoError(t, os.WriteFile(user, []byte(`{}`), 0o600))
	p, err := profile.Builtin(profile.Dev.Name())
	require.NoError(t, err)
	entry := func() Entry {
		return Entry{V: Version, Key: Key(dir), Profile: p, Hash: p.Hash(), Found: true,
			Files: []File{{user, Identity(user)}, {missing, Identity(missing)}}}
	}
	for _, tc := range []struct {
		name   string
		change func(e *Entry)
		hit    bool
	}{
		{"unchanged", func(*Entry) {}, true},
		{"a file written", func(*Entry) { require.NoError(t, os.WriteFile(user, []byte(`{ }`), 0o600)) }, false},
		{"a missing file created", func(*Entry) { require.NoError(t, os.WriteFile(missing, []byte(`{}`), 0o600)) }, false},
		{"a file removed", func(*Entry) { require.NoError(t, os.Remove(user)) }, false},
		{"a profile that does not hash to its hash", func(e *Entry) { e.Hash = "x" }, false},
		{"not to be cached", func(e *Entry) { e.NoCache = true }, false},
		{"another key", func(e *Entry) { e.Key = Key(filepath.Join(dir, "other")) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, os.WriteFile(user, []byte(`{}`), 0o600))
			_ = os.Remove(missing)
			e := entry()
			require.NoError(t, Store(state, e))
			_, ok := Lookup(state, Key(dir))
			require.True(t, ok, "a fresh entry is used")
			tc.change(&e)
			if e.Hash != p.Hash() || e.NoCache || e.Key != Key(dir) {
				require.NoError(t, os.RemoveAll(state))
				e2 := e
				e2.NoCache = false
				if e.NoCache {
					require.NoError(t, Store(state, e)) // stores nothing
				} else {
					require.NoError(t, Store(state, e2))
				}
			}
			got, ok := Lookup(state, Key(dir))
			assert.Equal(t, tc.hit, ok)
			if ok {
				assert.Equal(t, p.Hash(), got.Profile.Hash())
			}
		})
	}
}
