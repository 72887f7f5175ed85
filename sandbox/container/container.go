package container

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/confine"
	"github.com/reins-go/reins/sandbox/internal/envlist"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

// containerEnv splits what a container backend forwards: hostKeys are
// allowed variables whose value comes from the host environment (the
// CLI copies them, "-e KEY"), pairs the KEY=VALUE pairs of
// Command.Env (all of them), which never enter the CLI's own environment (a
// Command.Env HOME or PATH must not reconfigure the CLI on the host).
// Without an allowlist nothing comes from the host and every pair of
// Command.Env is forwarded.
func containerEnv(allow, cmdEnv []string) (hostKeys, pairs []string) {
	pairs = envlist.Build(nil, cmdEnv, allow)
	set := map[string]bool{}
	for _, k := range envlist.Keys(pairs) {
		set[k] = true
	}
	for _, k := range allow {
		if _, ok := os.LookupEnv(k); ok && !set[k] {
			hostKeys = append(hostKeys, k)
			set[k] = true
		}
	}
	return hostKeys, pairs
}

// planConfine plans cmd's Confine (nil when it has none) for a container
// backend whose writable paths are roots. A container engine cannot keep
// a symbolic link read-only where it is (it follows the link to bind
// over), so a create directory that holds one makes the Confine
// unenforceable, and the command does not run.
func planConfine(name string, cmd sandbox.Command, roots []string, m pathmatch.Matcher) (*confinePlan, *sandbox.UnavailableError) {
	if cmd.Confine == nil {
		return nil, nil
	}
	p, err := confine.Make(*cmd.Confine, roots, m)
	if err != nil {
		return nil, &sandbox.UnavailableError{Backend: name, Layer: sandbox.LayerConfine, Reason: err.Error()}
	}
	for _, pin := range p.Pins {
		if fi, err := os.Lstat(pin); err != nil || fi.Mode()&os.ModeSymlink != 0 {
			return nil, &sandbox.UnavailableError{Backend: name, Layer: sandbox.LayerConfine,
				Reason: fmt.Sprintf("%s cannot keep %s read-only (a symbolic link, or gone), and Confine lets the command create files next to it", name, pin)}
		}
	}
	return &confinePlan{p}, nil
}

// confinePlan is a planned Confine of a container backend.
type confinePlan struct{ confine.Plan }

// bind is one bind a Confine asks for.
type bind struct {
	path     string
	readOnly bool
}

// binds lists the binds of the plan, a parent before what lies in it
// (a pin of a create directory may hold a granted directory).
func (p *confinePlan) binds() []bind {
	var out []bind
	for _, l := range [][]string{p.Dirs, p.Files, p.Create} {
		for _, g := range l {
			out = append(out, bind{path: g})
		}
	}
	for _, g := range p.Pins {
		out = append(out, bind{path: g, readOnly: true})
	}
	sort.SliceStable(out, func(i, j int) bool {
		return strings.Count(out[i].path, string(filepath.Separator)) < strings.Count(out[j].path, string(filepath.Separator))
	})
	return out
}

// containerName returns a fresh, random container name, so that a
// timeout can remove exactly this run's container.
func containerName() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "reins-" + hex.EncodeToString(b), nil
}

// toolFailed reports a container tool's own failure (not the command's) as the backend being
// unavailable, keeping what the run printed to stdout.
func toolFailed(name, reason string, out backend.Out) (sandbox.Result, error) {
	r, err := backend.Unavailable(sandbox.Confinement{Backend: name}, &sandbox.UnavailableError{Backend: name, Reason: reason})
	r.Stdout = out.Stdout
	r.Duration = out.Status.Duration
	return r, err
}

// linePrefixed reports whether a line of b starts with one of the prefixes.
func linePrefixed(b []byte, prefixes ...string) bool {
	for _, line := range strings.Split(string(b), "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(line, p) {
				return true
			}
		}
	}
	return false
}
