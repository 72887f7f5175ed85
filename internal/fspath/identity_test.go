//go:build unix

package fspath

import (
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// linkGraph builds random hard and symbolic links between files in a workspace and a home
// directory on the same filesystem, and checks every name against the identity index.
type linkGraph struct {
	t     testing.TB
	ws    string // the workspace root, resolved
	home  string
	m     *Matcher
	rm    *RootMatcher
	w     *Workspace
	ids   *Identities
	files []string // regular file names made so far (absolute)
}

// Where names go: workspace directories (protected ones among them) and the places of the home
// directory the index covers (an absolute entry, a protected name at its top).
var (
	graphWorkspaceDirs = []string{"", "src", "src/pkg", ".git", ".git/hooks", "docs", ".vscode", "deep/a/b", "sub/.git", "sub/app", ".github/workflows", "cfg"}
	graphHomeDirs      = []string{".aws", ".ssh", ""}
	graphNames         = []string{"config", "a.txt", ".env", "id_rsa", "settings.json", "main.go", "x", ".bashrc", "notes.md", "ci.yml", "credentials", ".env.prod"}
)

func newLinkGraph(t testing.TB) *linkGraph {
	t.Helper()
	top, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	g := &linkGraph{t: t, ws: top + "/ws", home: top + "/home"}
	for _, d := range graphWorkspaceDirs {
		require.NoError(t, os.MkdirAll(filepath.Join(g.ws, d), 0o755))
	}
	for _, d := range graphHomeDirs {
		require.NoError(t, os.MkdirAll(filepath.Join(g.home, d), 0o755))
	}
	g.w, err = NewWorkspace([]string{g.ws}, nil, g.home)
	require.NoError(t, err)
	g.m, err = NewMatcher(Defaults().WithSeeds(), g.home)
	require.NoError(t, err)
	g.rm = g.m.ForRoot(g.ws)
	g.ids = g.m.Identities([]string{g.ws}, g.home)
	return g
}

// place returns a new name: in the workspace mostly, in the home directory sometimes.
func (g *linkGraph) place(b func() int) string {
	name := graphNames[b()%len(graphNames)]
	if b()%4 == 0 {
		return filepath.Join(g.home, graphHomeDirs[b()%len(graphHomeDirs)], name)
	}
	return filepath.Join(g.ws, graphWorkspaceDirs[b()%len(graphWorkspaceDirs)], name)
}

// step applies one operation read from b: make a file, hard-link a file to a new name, make a
// symbolic link to a file, or remove a name.
func (g *linkGraph) step(b func() int) {
	switch op := b() % 5; {
	case op == 0 || len(g.files) == 0:
		p := g.place(b)
		if _, err := os.Lstat(p); err == nil {
			return
		}
		require.NoError(g.t, os.WriteFile(p, []byte("x"), 0o644))
		g.files = append(g.files, p)
	case op <= 2:
		src, dst := g.files[b()%len(g.files)], g.place(b)
		if _, err := os.Lstat(dst); err == nil {
			return
		}
		if err := os.Link(src, dst); err == nil {
			g.files = append(g.files, dst)
		}
	case op == 3:
		src, dst := g.files[b()%len(g.files)], g.place(b)
		if _, err := os.Lstat(dst); err == nil {
			return
		}
		rel, err := filepath.Rel(filepath.Dir(dst), src)
		require.NoError(g.t, err)
		require.NoError(g.t, os.Symlink(rel, dst))
	default:
		i := b() % len(g.files)
		_ = os.Remove(g.files[i])
		g.files = append(g.files[:i], g.files[i+1:]...)
	}
}

// nameClass is the protection a name has by itself: inside the workspace relative to its root,
// elsewhere on the absolute path.
func (g *linkGraph) nameClass(p string) Class {
	if Within(p, g.ws) {
		return g.rm.In(Rel(p, g.ws)).Class
	}
	return g.m.Abs(p).Class
}

// check: every name of every regular file, and every symbolic link to one, has the strongest
// class of all the file's names; nothing else is protected.
func (g *linkGraph) check(phase string) {
	t := g.t
	type group struct {
		class Class
		names []string
	}
	groups := map[fileID]*group{}
	var links []string
	for _, top := range []string{g.ws, g.home} {
		require.NoError(t, filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			require.NoError(t, err)
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				links = append(links, p)
			case d.Type().IsRegular():
				var st syscall.Stat_t
				require.NoError(t, syscall.Lstat(p, &st))
				id := fileID{uint64(st.Dev), uint64(st.Ino)}
				gr := groups[id]
				if gr == nil {
					gr = &group{}
					groups[id] = gr
				}
				gr.names = append(gr.names, p)
				gr.class = max(gr.class, g.nameClass(p))
			}
			return nil
		}))
	}
	got := func(root, p string) Class {
		var name, id Hit
		if root == "" {
			name, id = g.m.Abs(p), g.ids.Abs(p)
		} else {
			name, id = g.m.ForRoot(root).In(p), g.ids.In(root, p)
		}
		return max(name.Class, id.Class)
	}
	for _, gr := range groups {
		for _, p := range gr.names {
			var c Class
			if Within(p, g.ws) {
				c = got(g.ws, Rel(p, g.ws))
			} else {
				c = got("", p)
			}
			assert.Equal(t, gr.class, c, "%s: %s (names %v)", phase, p, gr.names)
		}
	}
	for _, l := range links {
		root, p, err := g.w.Resolve(l)
		if err != nil {
			continue
		}
		abs := p
		if root != "" {
			abs = root + "/" + p
		}
		var st syscall.Stat_t
		if syscall.Stat(abs, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
			continue
		}
		gr := groups[fileID{uint64(st.Dev), uint64(st.Ino)}]
		require.NotNil(t, gr, l)
		// A link is checked where it leads (its own name is not the file's).
		assert.Equal(t, gr.class, got(root, p), "%s: link %s to %v", phase, l, gr.names)
	}
}

// runLinkGraph builds a graph from b in three phases (checking after each: the index is built
// by the first, and must notice what the next ones change): links made, more links made, names
// removed.
func runLinkGraph(t testing.TB, b func() int) {
	g := newLinkGraph(t)
	for i := 0; i < 24; i++ {
		g.step(b)
	}
	g.check("built")
	for i := 0; i < 12; i++ {
		g.step(b)
	}
	g.check("more links")
	for i := 0; i < 6 && len(g.files) > 0; i++ {
		j := b() % len(g.files)
		require.NoError(t, os.Remove(g.files[j]))
		g.files = append(g.files[:j], g.files[j+1:]...)
	}
	g.check("names removed")
}

// TestIdentityLinkGraphs: random link graphs in a workspace (hard links, symbolic links, nested
// and protected directories) and the home directory: every name of a protected file is
// protected with that file's class, and nothing else is newly protected (issue 23, part 2).
func TestIdentityLinkGraphs(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewPCG(seed, 23))
		runLinkGraph(t, func() int { return rng.IntN(1 << 16) })
	}
}

// FuzzIdentityLinkGraphs is TestIdentityLinkGraphs with the operations read from the input.
func FuzzIdentityLinkGraphs(f *testing.F) {
	f.Add([]byte("\x00\x01\x03\x00\x01\x02\x05\x04\x01\x00\x00\x03\x02"))
	f.Add([]byte(strings.Repeat("\x01\x03\x05\x07\x00", 20)))
	f.Add([]byte("ln .git/config alias; echo x >> alias"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 512 {
			return
		}
		i := 0
		runLinkGraph(t, func() int {
			v := int(data[i%len(data)]) + i/len(data)
			i++
			return v
		})
	})
}

// TestIdentityHardLinks: the cases of issue 23 by name. A hard link made in the workspace to
// .git/config, to a file of a write-protected directory, to a credential store file in the home
// directory, and one made after the index was built, each carry the protected file's class; an
// ordinary file with several names carries none.
func TestIdentityHardLinks(t *testing.T) {
	t.Parallel()
	g := newLinkGraph(t)
	write := func(rel string) string {
		p := filepath.Join(g.ws, rel)
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
		return p
	}
	link := func(src, dst string) {
		require.NoError(t, os.Link(src, filepath.Join(g.ws, dst)))
	}
	link(write(".git/config"), "alias")
	link(write(".vscode/settings.json"), "src/settings")
	creds := filepath.Join(g.home, ".aws", "credentials")
	require.NoError(t, os.WriteFile(creds, []byte("k"), 0o600))
	link(creds, "docs/creds")
	rc := filepath.Join(g.home, ".bashrc")
	require.NoError(t, os.WriteFile(rc, []byte("k"), 0o600))
	link(rc, "cfg/rc")
	link(write("a.txt"), "b.txt")
	for rel, want := range map[string]Class{
		"alias": ReadWriteProtected, "src/settings": WriteProtected, "docs/creds": ReadWriteProtected,
		"cfg/rc": WriteProtected, "b.txt": Unprotected, "a.txt": Unprotected, "src": Unprotected, "missing": Unprotected,
	} {
		h := g.ids.In(g.ws, rel)
		assert.Equal(t, want, h.Class, "%s: %+v", rel, h)
		if want != Unprotected {
			assert.Contains(t, h.Entry, "another name of", rel)
		}
	}
	// Made after the index was built: noticed on the next lookup.
	link(filepath.Join(g.ws, ".git", "config"), "later")
	assert.Equal(t, ReadWriteProtected, g.ids.In(g.ws, "later").Class)
	link(filepath.Join(g.ws, "a.txt"), ".git/hooks/pre-commit") // a.txt now has a protected name
	assert.Equal(t, ReadWriteProtected, g.ids.In(g.ws, "a.txt").Class)
	assert.Equal(t, ReadWriteProtected, g.ids.In(g.ws, "b.txt").Class)
	require.NoError(t, os.Remove(filepath.Join(g.ws, ".git", "hooks", "pre-commit")))
	assert.Equal(t, Unprotected, g.ids.In(g.ws, "a.txt").Class, "the protected name is gone")
}

// TestIdentityIncompleteIndexRefuses: an index that could not read everything (here, its entry
// bound) refuses a file with several names that it does not know, and still knows the ones it
// saw; a file with one name is never affected.
func TestIdentityIncompleteIndexRefuses(t *testing.T) {
	g := newLinkGraph(t)
	require.NoError(t, os.WriteFile(filepath.Join(g.ws, "a.txt"), nil, 0o644))
	require.NoError(t, os.Link(filepath.Join(g.ws, "a.txt"), filepath.Join(g.ws, "b.txt")))
	require.NoError(t, os.WriteFile(filepath.Join(g.ws, "one.txt"), nil, 0o644))
	was := maxIndexEntries
	maxIndexEntries = 2
	defer func() { maxIndexEntries = was }()
	h := g.ids.In(g.ws, "b.txt")
	assert.Equal(t, ReadWriteProtected, h.Class)
	assert.Equal(t, IncompleteIndexEntry, h.Entry)
	assert.Equal(t, Unprotected, g.ids.In(g.ws, "one.txt").Class)
	maxIndexEntries = was
	g.ids = g.m.Identities([]string{g.ws}, g.home)
	assert.Equal(t, Unprotected, g.ids.In(g.ws, "b.txt").Class)
}
