package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/sandbox/hardened"
)

// profileCache is a loaded profile kept across the hook's calls, keyed by the identity of the
// profile files it was loaded from (device, inode, size, modification and change times: any
// write changes them) and the project, so that a call whose files did not change neither reads,
// decodes nor validates them.
type profileCache struct {
	Key     string          `json:"key"`
	Profile profile.Profile `json:"profile"`
	// Hash is the profile's content hash: a cache entry whose profile does not hash to it
	// (edited, or written by another version) is not used.
	Hash  string `json:"hash"`
	Files bool   `json:"files"`
}

// profile returns the effective profile for the project (the user file, the project file, the
// built-in default PROFILE-SAFE) and whether a profile file exists. A file that does not load is
// an error: the call is blocked with the file's error.
func (h *hook) profile(ctx context.Context, project string) (profile.Profile, bool, error) {
	l, err := loader.New(&loader.Options{ProjectDir: project})
	if err != nil {
		return profile.Profile{}, false, fmt.Errorf("the reins profiles: %v", err)
	}
	user, proj := l.Paths()
	key := "v1\x00" + project + "\x00" + user + "\x00" + fileIdentity(user) + "\x00" + proj + "\x00" + fileIdentity(proj)
	sum := sha256.Sum256([]byte(key))
	cacheFile := filepath.Join(h.stateDir, "profiles", fmt.Sprintf("%x.json", sum[:12]))
	if b, err := readSmall(cacheFile, 4<<20); err == nil {
		var c profileCache
		if json.Unmarshal(b, &c) == nil && c.Key == key && c.Profile.Hash() == c.Hash {
			return c.Profile, c.Files, nil
		}
	}
	loaded, err := l.Load(ctx)
	if err != nil {
		return profile.Profile{}, false, fmt.Errorf("loading the reins profiles: %v", err)
	}
	files := false
	for _, f := range loaded.Files {
		files = files || f.Found
	}
	c := profileCache{Key: key, Profile: loaded.Profile, Hash: loaded.Profile.Hash(), Files: files}
	if b, err := json.Marshal(c); err == nil {
		if os.MkdirAll(filepath.Dir(cacheFile), 0o700) == nil {
			_ = writeFileAtomic(cacheFile, b)
		}
	}
	return loaded.Profile, files, nil
}

// sandboxProbe is the cached answer to "does the hardened sandbox run here", per boot and per
// hook binary.
type sandboxProbe struct {
	Key string `json:"key"`
	Why string `json:"why,omitempty"` // "" when it runs
}

// sandboxAvailable returns "" when the hardened sandbox runs on this machine (probed once per
// boot and binary, the answer kept in the state directory), else why not.
func (h *hook) sandboxAvailable(ctx context.Context, project string) string {
	boot, _ := readSmall("/proc/sys/kernel/random/boot_id", 128)
	key := string(boot) + "\x00" + h.exe + "\x00" + fileIdentity(h.exe)
	file := filepath.Join(h.stateDir, "sandbox.json")
	if b, err := readSmall(file, 64<<10); err == nil {
		var p sandboxProbe
		if json.Unmarshal(b, &p) == nil && p.Key == key {
			return p.Why
		}
	}
	why := probeHardened(ctx, project)
	if b, err := json.Marshal(sandboxProbe{Key: key, Why: why}); err == nil {
		_ = writeFileAtomic(file, b)
	}
	return why
}

// probeHardened starts the hardened sandbox once and reports why it cannot run, "" if it can.
func probeHardened(ctx context.Context, root string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := hardened.New(hardened.Config{Root: root})
	if err == nil {
		err = s.Probe(ctx)
		_ = s.Close()
	}
	if err != nil {
		return cut(err.Error(), 500)
	}
	return ""
}

// readSmall reads a file of at most limit bytes, without following a symbolic link.
func readSmall(path string, limit int64) ([]byte, error) {
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

// writeFileAtomic replaces path with b (mode 0600) through a temporary file renamed over it.
func writeFileAtomic(path string, b []byte) error {
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

// errNoState is the error of a state directory that is not a private directory.
var errNoState = errors.New("the state directory must be a directory only its owner can use")

// prepareState creates the state directory (mode 0700) and refuses one that others can write.
func prepareState(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%w: %s", errNoState, dir)
	}
	return nil
}
