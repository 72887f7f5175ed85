package hardened_test

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/reins-go/reins/internal/testenv"
	"github.com/reins-go/reins/sandbox/hardened"
)

var (
	hardenedOnce sync.Once
	hardenedErr  error
)

// requireHardened stops t (skip, or fail in strict mode) when this host
// cannot run local-hardened with every layer: a kernel without Landlock
// at the minimum ABI, seccomp or namespaces. On systems other than Linux
// it does nothing: there the tests check the honest 127.
func requireHardened(t testing.TB) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return
	}
	hardenedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reins-avail-")
		if err != nil {
			hardenedErr = err
			return
		}
		defer os.RemoveAll(dir)
		h, err := hardened.New(testConfig(dir))
		if err == nil {
			err = h.Probe(context.Background())
		}
		hardenedErr = err
	})
	if hardenedErr != nil {
		testenv.Missing(t, "local-hardened cannot run on this host (kernel without Landlock, seccomp or namespaces?): %v", hardenedErr)
	}
}
