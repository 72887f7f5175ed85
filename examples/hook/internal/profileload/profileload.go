// Package profileload loads the reins profiles for a project the way reins-hook needs them: the
// effective profile with the identity of every file the load looked for, taken before the load
// (a file changed during the load is loaded again by the next call). It is reins-hook-load's,
// and the tests': reins-hook itself does not link the loader.
package profileload

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/reins-go/reins/examples/hook/internal/hookstate"
	"github.com/reins-go/reins/profile/loader"
)

// Load loads the profiles for project and returns the cache entry.
func Load(ctx context.Context, project string) (hookstate.Entry, error) {
	l, err := loader.New(&loader.Options{ProjectDir: project})
	if err != nil {
		return hookstate.Entry{}, fmt.Errorf("the reins profiles: %v", err)
	}
	user, proj := l.Paths()
	var paths []string
	for _, p := range []string{user, proj} {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if d := loader.ManagedDir(); d != "" {
		paths = append(paths, filepath.Join(d, loader.DefaultManagedFile), filepath.Join(d, loader.DefaultBundleFile))
	}
	e := hookstate.Entry{V: hookstate.Version, Key: hookstate.Key(project)}
	for _, p := range paths {
		e.Files = append(e.Files, hookstate.File{Path: p, Identity: hookstate.Identity(p)})
	}
	loaded, err := l.Load(ctx)
	if err != nil {
		return hookstate.Entry{}, fmt.Errorf("loading the reins profiles: %v", err)
	}
	for _, f := range loaded.Files {
		e.Found = e.Found || f.Found
		if !slices.Contains(paths, f.Path) {
			e.NoCache = true // a file this package does not know of: load every time
		}
	}
	if loaded.Bundle != nil || loaded.BundleRefused != nil {
		e.NoCache = true // a signed bundle expires: verify it on every call
	}
	e.Profile, e.Hash = loaded.Profile, loaded.Profile.Hash()
	return e, nil
}
