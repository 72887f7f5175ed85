// Package envlist builds the environment of a command from KEY=VALUE
// lists: the host's variables filtered by an allowlist, with the pairs of
// Command.Env laid over them. Package sandbox and its backend
// sub-packages share it.
package envlist

import (
	"os"
	"strings"
)

// Build keeps the variables of base that allow names (all of them when
// allow is empty) and overlays overrides, which are always kept: the
// allowlist filters what a command inherits from the host, while
// Command.Env is what the host chose to give it. Later entries win, in
// the position of the first.
func Build(base, overrides, allow []string) []string {
	allowed := func(string) bool { return true }
	if len(allow) > 0 {
		set := make(map[string]bool, len(allow))
		for _, k := range allow {
			set[k] = true
		}
		allowed = func(k string) bool { return set[k] }
	}
	idx := map[string]int{}
	var out []string
	for i, kv := range append(append([]string(nil), base...), overrides...) {
		k, _, ok := strings.Cut(kv, "=")
		if !ok || k == "" || (i < len(base) && !allowed(k)) {
			continue
		}
		if j, seen := idx[k]; seen {
			out[j] = kv
			continue
		}
		idx[k] = len(out)
		out = append(out, kv)
	}
	return out
}

// Lookup returns the value of key in env (the last one).
func Lookup(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == key {
			return v, true
		}
	}
	return "", false
}

// Keys returns the keys of KEY=VALUE pairs, in order.
func Keys(env []string) []string {
	keys := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	return keys
}

// Host returns the host environment without the variables whose names
// start with one of drop (settings of a CLI that a backend makes itself
// and must not inherit).
func Host(drop ...string) []string {
	var out []string
next:
	for _, kv := range os.Environ() {
		for _, d := range drop {
			if strings.HasPrefix(kv, d) {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}
