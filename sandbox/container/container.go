package container

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/backend"
	"github.com/reins-go/reins/sandbox/internal/envlist"
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
