package reinstest_test

import (
	"path/filepath"
	"testing"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/reinstest"
)

func TestMemoryStore(t *testing.T) {
	reinstest.TestStore(t, func(*testing.T) reins.Store { return reins.NewMemoryStore() }, func(_ *testing.T, s reins.Store) reins.Store {
		return s // one process: the same store is every handle
	})
}

func TestFileStore(t *testing.T) {
	reinstest.TestStore(t, func(t *testing.T) reins.Store {
		return reins.NewFileStore(filepath.Join(t.TempDir(), "state", "run.json"))
	}, func(_ *testing.T, s reins.Store) reins.Store {
		return reins.NewFileStore(s.(*reins.FileStore).Path()) // another process's handle on the same file
	})
}
