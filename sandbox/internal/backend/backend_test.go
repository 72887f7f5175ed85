package backend

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/sandbox"
	"github.com/reins-go/reins/sandbox/internal/pathmatch"
)

func TestSecondsAndLastLines(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "1", Seconds(0))
	assert.Equal(t, "1", Seconds(time.Millisecond))
	assert.Equal(t, "2", Seconds(1001*time.Millisecond), "rounded up")
	assert.Equal(t, "300", Seconds(5*time.Minute))
	assert.Equal(t, "b\nc", LastLines([]byte("a\nb\nc\n\n"), 2))
	assert.Equal(t, "only", LastLines([]byte("  only  "), 3))
}

func TestResults(t *testing.T) {
	t.Parallel()
	conf := sandbox.Confinement{Backend: "b"}
	res, err := Unavailable(conf, &sandbox.UnavailableError{Backend: "b", Reason: "no CLI"})
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Equal(t, sandbox.ExitUnavailable, res.ExitCode)
	assert.Contains(t, string(res.Stderr), "no CLI; the command did not run")

	vs := Violations([]pathmatch.Refusal{{Kind: pathmatch.KindDeniedPath, Subject: ".env", Detail: "secret"}})
	require.Len(t, vs, 1)
	assert.Equal(t, sandbox.ViolationDeniedPath, vs[0].Kind)
	res, err = Denied(conf, vs)
	require.ErrorIs(t, err, sandbox.ErrRefused)
	assert.Equal(t, sandbox.ExitDenied, res.ExitCode)
	assert.Equal(t, vs, res.Violations)
	assert.Nil(t, Violations(nil))

	bad := sandbox.Command{}.Validate()
	res, err = Invalid(conf, bad)
	require.ErrorIs(t, err, sandbox.ErrInvalidCommand)
	assert.Equal(t, sandbox.ExitDenied, res.ExitCode)

	assert.Equal(t, sandbox.DefaultTimeout, Timeout(sandbox.Command{}))
	assert.Equal(t, time.Second, Timeout(sandbox.Command{Timeout: time.Second}))
	assert.Equal(t, sandbox.DefaultMaxOutput, MaxOutput(sandbox.Command{}))
	assert.Equal(t, 7, MaxOutput(sandbox.Command{MaxOutput: 7}))
}

func TestFindCLI(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, uerr := FindCLI("docker", "", "docker", "install it")
	require.NotNil(t, uerr)
	assert.ErrorIs(t, uerr, sandbox.ErrUnavailable)
	assert.Contains(t, uerr.Error(), `the docker CLI is not installed: "docker" is not in PATH (install it)`)
}

type probeFunc func(context.Context) error

func (p probeFunc) Probe(ctx context.Context) error { return p(ctx) }

func TestProbeBuiltAndRegister(t *testing.T) {
	t.Parallel()
	var roots []string
	probe := ProbeBuilt("x", true, func(root string) (Prober, error) {
		roots = append(roots, root)
		return probeFunc(func(context.Context) error { return nil }), nil
	})
	require.NoError(t, probe(context.Background()))
	require.Len(t, roots, 1)
	assert.NotEqual(t, "/", roots[0], "a fresh directory when the backend needs a root")
	assert.NoDirExists(t, roots[0], "removed after the probe")

	notConfigured := ProbeBuilt("y", false, func(string) (Prober, error) { return nil, errors.New("no image") })
	err := notConfigured(context.Background())
	require.ErrorIs(t, err, sandbox.ErrUnavailable)
	assert.Contains(t, err.Error(), "not configured: no image")

	newNil := func(string) (sandbox.Sandbox, error) { return nil, nil }
	r := &sandbox.Registry{}
	r.RegisterForTest(t, "b", sandbox.Backend{New: newNil})
	err = Register(r, []Entry{{Name: "a", Backend: sandbox.Backend{New: newNil}}, {Name: "b", Backend: sandbox.Backend{New: newNil}}})
	require.Error(t, err, "b is taken")
	assert.Equal(t, []string{"b"}, r.Names(), "a was removed again")
	require.NoError(t, Register(r, []Entry{{Name: "a", Backend: sandbox.Backend{New: newNil}}}))
	assert.Equal(t, []string{"a", "b"}, r.Names())
}
