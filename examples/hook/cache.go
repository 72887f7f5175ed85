package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/reins-go/reins/examples/hook/internal/hookstate"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/sandbox/hardened"
)

// loaderName is the program that loads the profiles on a cache miss, installed next to this one.
const loaderName = "reins-hook-load"

// loadProfile loads the profiles for a project on a cache miss (tests replace it).
var loadProfile = func(ctx context.Context, h *hook, project string) (hookstate.Entry, error) {
	var e hookstate.Entry
	bin := filepath.Join(filepath.Dir(h.exe), loaderName+filepath.Ext(h.exe)) // .exe on Windows
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-state", h.stateDir, "-project", project)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return e, errors.New(cut(strings.TrimPrefix(msg, loaderName+": "), 2000))
		}
		return e, fmt.Errorf("running %s (install it next to this program): %v", bin, err)
	}
	if err := json.Unmarshal(out.Bytes(), &e); err != nil || e.Profile.Hash() != e.Hash {
		return e, fmt.Errorf("%s answered something that is not a loaded profile", bin)
	}
	return e, nil
}

// profile returns the effective profile for the project (the user file, the project file, the
// managed tier, the built-in default PROFILE-SAFE) and whether a profile file exists. The
// profile comes from the cache in the state directory while the files it was loaded from keep
// their identity (device, inode, size, modification and change times: any write changes them),
// else from reins-hook-load. A file that does not load is an error: the call is blocked with
// the file's error.
func (h *hook) profile(ctx context.Context, project string) (profile.Profile, bool, error) {
	key := hookstate.Key(project)
	if e, ok := hookstate.Lookup(h.stateDir, key); ok {
		return e.Profile, e.Found, nil
	}
	e, err := loadProfile(ctx, h, project)
	if err != nil {
		return profile.Profile{}, false, err
	}
	if e.Key != key {
		return profile.Profile{}, false, errors.New("the loaded profile is for another project or environment")
	}
	return e.Profile, e.Found, nil
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
	key := string(boot) + "\x00" + h.exe + "\x00" + hookstate.Identity(h.exe)
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

func readSmall(path string, limit int64) ([]byte, error) { return hookstate.ReadSmall(path, limit) }

func writeFileAtomic(path string, b []byte) error { return hookstate.WriteFileAtomic(path, b) }

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
