// Package hookstate holds what reins-hook keeps in its state directory between calls and the
// small file helpers both of its programs use: the loaded profile, cached by the identity of the
// files it was loaded from. It does not import the profile loader (and so not its JSON Schema
// package, whose start-up every hook call would pay): the loading is reins-hook-load's, run only
// when the cache misses.
package hookstate

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/reins-go/reins/profile"
)

// Version names the cache format; an entry of another version is not used.
const Version = 2

// File is one file a load read or looked for, with its identity then (see Identity).
type File struct {
	Path     string `json:"path"`
	Identity string `json:"identity"`
}

// Entry is a loaded profile and the files it was loaded from.
type Entry struct {
	V   int    `json:"v"`
	Key string `json:"key"`
	// Files are the profile files the load looked for (user, project, managed), found or not:
	// the entry is used only while every one has the same identity.
	Files []File `json:"files"`
	// Found reports whether any profile file exists (else the built-in default applied).
	Found   bool            `json:"found"`
	Profile profile.Profile `json:"profile"`
	// Hash is Profile's content hash: an entry whose profile does not hash to it is not used.
	Hash string `json:"hash"`
	// NoCache: the profile must not be reused (it came from a signed bundle, which expires).
	NoCache bool `json:"no_cache,omitempty"`
}

// Key names the situation a profile is loaded for: the project and the environment that locates
// the user's and the managed files.
func Key(project string) string {
	cfg, _ := os.UserConfigDir()
	return fmt.Sprintf("v%d\x00%s\x00%s\x00%s", Version, project, cfg, os.Getenv("ProgramData"))
}

func entryPath(stateDir, key string) string {
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(stateDir, "profiles", fmt.Sprintf("%x.json", sum[:12]))
}

// Lookup returns the cached entry for key when every file it was loaded from is unchanged. The
// entry's profile may be shared with later lookups in this process: clone it before changing it.
func Lookup(stateDir, key string) (Entry, bool) {
	path := entryPath(stateDir, key)
	e, ok := decoded(path)
	if !ok || e.V != Version || e.Key != key || e.NoCache || len(e.Files) == 0 {
		return Entry{}, false
	}
	for _, f := range e.Files {
		if Identity(f.Path) != f.Identity {
			return Entry{}, false
		}
	}
	return e, true
}

// memo keeps, in a process that answers many calls (a resident core), the entries it decoded,
// by the identity of the cache file they were decoded from: an entry file rewritten, replaced
// or removed has another identity (its change time moves), and is decoded again.
var memo struct {
	sync.Mutex
	m map[string]memoEntry
}

type memoEntry struct {
	identity string
	e        Entry
}

// decoded returns the entry in the cache file at path, whose profile hashes to its Hash.
func decoded(path string) (Entry, bool) {
	id := Identity(path)
	memo.Lock()
	m, ok := memo.m[path]
	memo.Unlock()
	if ok && m.identity == id {
		return m.e, true
	}
	var e Entry
	b, err := ReadSmall(path, 4<<20)
	if err != nil || json.Unmarshal(b, &e) != nil || e.Profile.Hash() != e.Hash {
		return Entry{}, false
	}
	if Identity(path) == id { // not replaced while it was read
		memo.Lock()
		if memo.m == nil || len(memo.m) >= 64 {
			memo.m = map[string]memoEntry{}
		}
		memo.m[path] = memoEntry{id, e}
		memo.Unlock()
	}
	return e, true
}

// Store keeps e (unless NoCache) for Lookup.
func Store(stateDir string, e Entry) error {
	if e.NoCache {
		return nil
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	p := entryPath(stateDir, e.Key)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(p, b)
}

// ReadSmall reads a regular file of at most limit bytes, without following a symbolic link.
func ReadSmall(path string, limit int64) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return b, nil
}

// WriteFileAtomic replaces path with b (mode 0600) through a temporary file renamed over it.
func WriteFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	return err
}
