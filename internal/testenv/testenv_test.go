package testenv

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestStrict(t *testing.T) {
	t.Setenv(StrictEnv, "1")
	assert.True(t, Strict())
	t.Setenv(StrictEnv, "0")
	assert.False(t, Strict())
	t.Setenv(StrictEnv, "")
	assert.False(t, Strict())
}

func TestRequireToolFindsAShell(t *testing.T) {
	p := RequireTool(t, "sh", "every Unix test machine has one")
	assert.NotEmpty(t, p)
}

// recorder is a testing.TB that records what a helper asks of it; Skipf and Fatalf end the
// calling goroutine as the real ones do.
type recorder struct {
	testing.TB
	skipped, failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on its own goroutine and reports whether f returned.
func (r *recorder) run(f func(testing.TB)) (returned bool) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
		returned = true
	}()
	<-done
	return returned
}

func TestRequireToolMissingSkips(t *testing.T) {
	t.Setenv(StrictEnv, "")
	r := &recorder{TB: t}
	returned := r.run(func(tb testing.TB) { RequireTool(tb, "reins-no-such-tool-4711", "test of the helper") })
	assert.False(t, returned, "RequireTool must stop the test when the tool is missing")
	assert.Contains(t, r.skipped, "reins-no-such-tool-4711")
	assert.Empty(t, r.failed)
}

func TestRequireToolMissingFailsWhenStrict(t *testing.T) {
	t.Setenv(StrictEnv, "1")
	r := &recorder{TB: t}
	returned := r.run(func(tb testing.TB) { RequireTool(tb, "reins-no-such-tool-4711", "test of the helper") })
	assert.False(t, returned)
	assert.Contains(t, r.failed, "reins-no-such-tool-4711")
	assert.Empty(t, r.skipped)
}
