// Package testenv decides what tests do when something they
// need is missing on this machine: a tool or daemon (sshd, docker,
// setpriv, git) or a kernel feature (Landlock, seccomp, user
// namespaces).
//
// By default such a test skips with the reason printed, so that
// "go test ./..." passes on a fresh machine with only Go and git. With
// the environment variable REINS_TEST_STRICT=1 (set by .ci/run, which
// installs the tools) the same test fails instead, so that CI cannot
// silently skip what it is able to run.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// StrictEnv is the environment variable that turns skips into failures.
const StrictEnv = "REINS_TEST_STRICT"

// Strict reports whether missing tools and kernel features fail tests
// instead of skipping them.
func Strict() bool { return os.Getenv(StrictEnv) == "1" }

// Missing stops t because something it needs is not there: it skips
// with the reason, or, in strict mode, fails with it.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if Strict() {
		t.Fatalf("%s (%s=1: a missing prerequisite fails the test)", reason, StrictEnv)
	}
	t.Skipf("%s (skipped; %s=1 makes this a failure)", reason, StrictEnv)
}

// RequireTool returns the path of the program name, looked up in PATH
// and then in the system directories (where sshd and setpriv live), or
// stops t through [Missing] with why (what the test needs the tool for
// and how to install it).
func RequireTool(t testing.TB, name, why string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin", "/bin"} {
		p := dir + "/" + name
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	Missing(t, "%s is not installed: %s", name, why)
	return ""
}
