package gate

import (
	"github.com/reins-go/reins/internal/fspath"
)

// protector matches targets against the two protection classes (the boundary layer): secrets
// are neither read nor written, write-protected paths are never written. Entries are path
// component names or runs of names matched anywhere in a path (a name may hold * and ?), or
// absolute paths protected with everything under them. Matching is ASCII case-insensitive
// everywhere: on a case-sensitive filesystem that only denies more (".GIT" is refused too), and
// on a case-insensitive one it is what keeps ".Git/config" from reaching ".git".
//
// A protected file is also known by identity (device and inode, fspath.Identities): a target
// that is a protected file under another name, a hard link made inside the workspace, has that
// file's protection. The index is only consulted for a regular file with several links, so for
// any other target the cost is one lstat.
type protector struct {
	m     *fspath.Matcher
	roots []*fspath.RootMatcher // one per workspace root: the absolute entries worked out once
	ids   *fspath.Identities
}

// newProtector compiles the lists for the workspace roots; an entry that cannot be honoured is
// an error.
func newProtector(l fspath.Lists, home string, roots []string) (*protector, error) {
	m, err := fspath.NewMatcher(l, home)
	if err != nil {
		return nil, err
	}
	p := &protector{m: m, ids: m.Identities(roots, home)}
	for _, r := range roots {
		p.roots = append(p.roots, m.ForRoot(r))
	}
	return p, nil
}

// hit returns the strongest protection covering a resolved target: inside root at rel when root
// is set, else the absolute path rel. It is the stronger of the target's own name's and, when
// the target is a file with several names, that of the protected file it is another name of.
func (p *protector) hit(root, rel string) fspath.Hit {
	h := p.byName(root, rel)
	if h.Class == fspath.ReadWriteProtected {
		return h
	}
	var id fspath.Hit
	if root == "" {
		id = p.ids.Abs(rel)
	} else {
		id = p.ids.In(root, rel)
	}
	if id.Class > h.Class {
		return id
	}
	return h
}

// byName returns the strongest protection the target's own name has.
func (p *protector) byName(root, rel string) fspath.Hit {
	if root == "" {
		return p.m.Abs(rel)
	}
	for _, r := range p.roots {
		if r.Root() == root {
			return r.In(rel)
		}
	}
	return p.m.In(root, rel)
}

// globReaches returns the strongest class a path with pattern characters could expand into.
func (p *protector) globReaches(pth string) fspath.Class { return p.m.GlobReaches(pth) }
