package hardened_test

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/reins-go/reins/sandbox/hardened"
)

// probeDir holds a copy of this test binary that sandboxed commands can
// execute (the go-build directory is not visible inside the hardened
// sandbox); probeBin is that copy. Run as "probeBin reins-escape-probe
// ATTACK ARGS", it performs one attack (see internal/escapeprobe).
var probeDir, probeBin string

func TestMain(m *testing.M) {
	// Package hardened's init already dispatches the sandbox child;
	// calling it again here shows the explicit form and is a no-op
	// otherwise.
	hardened.ChildMain()
	if code, ok := runProbe(os.Args); ok {
		os.Exit(code)
	}
	dir, err := os.MkdirTemp("", "reins-probe-")
	if err == nil {
		err = os.Chmod(dir, 0o755)
	}
	if err == nil {
		err = copyExecutable(filepath.Join(dir, "probe"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sandbox tests: preparing the probe binary:", err)
		os.Exit(1)
	}
	probeDir, probeBin = dir, filepath.Join(dir, "probe")
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func copyExecutable(dst string) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	in, err := os.Open(self)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
