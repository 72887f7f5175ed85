package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// coreFlags parses args as reins-hook-core does (examples/hook's newHook) and returns its -state.
func coreFlags(args []string) (state string, err error) {
	fs := flag.NewFlagSet("claude", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&state, "state", "", "")
	fs.String("project", "", "")
	fs.Int("max-actions", 0, "")
	fs.Int("max-failures", 3, "")
	fs.Bool("codex-updated-input", false, "")
	if err := fs.Parse(args); err != nil {
		return "", err
	}
	if fs.NArg() > 0 {
		return "", flag.ErrHelp
	}
	return state, nil
}

func TestStateArg(t *testing.T) {
	for _, tc := range []struct {
		args []string
		dir  string
		ok   bool
	}{
		{nil, "", true},
		{[]string{"-state", "/s"}, "/s", true},
		{[]string{"--state=/s", "-max-failures", "2", "-codex-updated-input"}, "/s", true},
		{[]string{"-state", "-project"}, "-project", true}, // as the flag package reads it
		{[]string{"-project", "/p", "-state=/a", "-state", "/b"}, "/b", true},
		{[]string{"-state"}, "", false},
		{[]string{"-frob"}, "", false},
		{[]string{"--"}, "", false},
		{[]string{"-state", "/s", "extra"}, "", false},
		{[]string{"---state", "/s"}, "", false},
	} {
		dir, ok := stateArg(tc.args, nil)
		assert.Equal(t, tc.ok, ok, "%q", tc.args)
		if tc.ok {
			assert.Equal(t, tc.dir, dir, "%q", tc.args)
		}
	}
	dir, ok := stateArg(nil, []string{"REINS_HOOK_STATE=/env"})
	assert.True(t, ok)
	assert.Equal(t, "/env", dir, "the environment's state directory when no flag names one")
}

// FuzzStateArg: whatever the arguments, what the front program reads as the state directory is
// what the core reads, whenever both accept them (the front reads nothing it is unsure of:
// the core is then started for the call).
func FuzzStateArg(f *testing.F) {
	for _, s := range []string{"-state\x00/s", "--state=/s\x00-max-failures\x002", "-state\x00-project", "-codex-updated-input=false\x00-state=x", "--\x00-state\x00y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, joined string) {
		if len(joined) > 4096 {
			return
		}
		args := strings.Split(joined, "\x00")
		if joined == "" {
			args = nil
		}
		dir, ok := stateArg(args, nil)
		state, err := coreFlags(args)
		if ok && err == nil {
			require.Equal(t, state, dir, "%q", args)
		}
	})
}
