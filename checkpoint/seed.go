package checkpoint

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/reins-go/reins/checkpoint/internal/gitx"
)

// seedRef is a file the first snapshot records as an object that already
// exists.
type seedRef struct {
	oid  string
	mode uint32
}

// seedIndex starts a missing private index from the user's index, so that
// the first snapshot of a workspace in a repository reads only the files
// that differ from what the repository already holds: "git status" then
// compares the files with the stat data the user's index recorded, and a
// file that matches them is recorded as the object the user's index names,
// which exists already, without being read.
//
// An entry is taken only when the user's git cannot have stored it
// converted: no attributes anywhere that could name a filter or a
// line-ending conversion (.gitattributes files, info/attributes, the
// global and system attributes files, a configured core.attributesFile),
// and the object's size equal to the size of the file it was hashed
// from. Entries git would check by content anyway (changed within the
// second the index was written, or with a zeroed size), assume-unchanged
// ones, submodules, protected paths and paths outside the workspace
// are left to the scan. It returns the entries taken (nil: nothing
// seeded); any doubt means no seed, never an error.
func (c *Checkpointer) seedIndex(ctx context.Context) map[string]seedRef {
	if !goIndex || c.portable || !c.isGit || c.userIdx == "" {
		return nil
	}
	if _, err := os.Lstat(c.index); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if c.userMayConvert() {
		return nil
	}
	f, err := os.Open(c.userIdx)
	if err != nil {
		return nil
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxIndexBytes {
		f.Close()
		return nil
	}
	data := make([]byte, st.Size())
	_, err = io.ReadFull(f, data)
	f.Close()
	if err != nil {
		return nil
	}
	user, err := parseIndex(data, len(c.zeroOID)/2, c.newHash())
	if err != nil {
		return nil
	}
	written := uint32(st.ModTime().Unix())
	var cand []indexEntry
	for _, e := range user.entries {
		if path.Base(e.path) == ".gitattributes" {
			return nil
		}
		rel, ok := c.wsPath(e.path)
		if !ok || e.mode == gitx.ModeGitlink || e.valid || e.sd.size == 0 || e.sd.mtimeSec >= written ||
			c.protect.match(rel) || checkTreePath(rel) != nil {
			continue
		}
		cand = append(cand, e)
	}
	if len(cand) == 0 {
		return nil
	}
	kept, err := c.checkSizes(ctx, cand)
	if err != nil || len(kept) == 0 {
		return nil
	}
	if err := c.writeIndex(&gitIndex{}, indexUpdate{set: kept}); err != nil {
		_ = os.Remove(c.index)
		return nil
	}
	refs := make(map[string]seedRef, len(kept))
	for _, e := range kept {
		refs[e.path] = seedRef{oid: hex.EncodeToString(e.oid), mode: e.mode}
	}
	return refs
}

// checkSizes keeps the entries whose object exists as a blob of the size
// the entry's stat data record.
func (c *Checkpointer) checkSizes(ctx context.Context, entries []indexEntry) ([]indexEntry, error) {
	in := make([]byte, 0, len(entries)*(len(c.zeroOID)+1))
	for _, e := range entries {
		in = hex.AppendEncode(in, e.oid)
		in = append(in, '\n')
	}
	out, err := c.git.Run(ctx, gitx.Cmd{Dir: c.workDir, Env: c.privEnv, Stdin: bytes.NewReader(in),
		Args: []string{"cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)", "--buffer"}})
	if err != nil {
		return nil, err
	}
	kept := make([]indexEntry, 0, len(entries))
	var oid [32]byte
	for i := 0; len(out) > 0; i++ {
		line := out
		if j := bytes.IndexByte(out, '\n'); j >= 0 {
			line, out = out[:j], out[j+1:]
		} else {
			out = nil
		}
		if i >= len(entries) {
			return nil, errors.New("cat-file: too many answers")
		}
		e := entries[i]
		name, rest, _ := bytes.Cut(line, []byte(" "))
		typ, size, _ := bytes.Cut(rest, []byte(" "))
		n, err := strconv.ParseUint(string(size), 10, 32)
		if err != nil || string(typ) != "blob" || uint32(n) != e.sd.size || hex.DecodedLen(len(name)) != len(e.oid) {
			continue
		}
		if _, err := hex.Decode(oid[:len(e.oid)], name); err != nil || !bytes.Equal(oid[:len(e.oid)], e.oid) {
			continue
		}
		kept = append(kept, e)
	}
	return kept, nil
}

// userMayConvert reports whether anything outside the repository's tree
// could give the user's git attributes (and so filters or conversions):
// the repository's info/attributes, the global and system attributes
// files, or configuration that names an attributes file or includes other
// configuration. It errs on the side of true.
func (c *Checkpointer) userMayConvert() bool {
	nonEmpty := func(name string) bool {
		st, err := os.Stat(name)
		return err == nil && st.Size() > 0 || err != nil && !errors.Is(err, fs.ErrNotExist)
	}
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	attrs := []string{filepath.Join(c.userGit[1], "info", "attributes"), "/etc/gitattributes",
		"/usr/local/etc/gitattributes", "/opt/homebrew/etc/gitattributes"}
	configs := []string{filepath.Join(c.userGit[1], "config"), filepath.Join(c.userGit[0], "config.worktree"),
		"/etc/gitconfig", "/usr/local/etc/gitconfig", "/opt/homebrew/etc/gitconfig"}
	if xdg != "" {
		attrs = append(attrs, filepath.Join(xdg, "git", "attributes"))
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	for _, v := range []string{"GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_ATTR_SOURCE"} {
		if os.Getenv(v) != "" {
			return true
		}
	}
	for _, name := range attrs {
		if nonEmpty(name) {
			return true
		}
	}
	for _, name := range configs {
		b, err := os.ReadFile(name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || len(b) > 1<<20 {
			return true
		}
		lower := strings.ToLower(string(b))
		if strings.Contains(lower, "attributesfile") || strings.Contains(lower, "include") {
			return true
		}
	}
	return false
}
