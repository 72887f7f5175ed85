package shell

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A command run with raised privileges is Elevated, through other wrappers too; the commands of a
// script handed to it are separate commands, and the one that runs the script is elevated.
func TestElevated(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		line string
		want []bool
	}{
		{"sv status x", []bool{false}},
		{"sudo sv status x", []bool{true}},
		{"doas ls", []bool{true}},
		{"pkexec ls", []bool{true}},
		{"run0 ls", []bool{true}},
		{"nice sudo ls", []bool{true}},
		{"sudo nice ls", []bool{true}},
		{"sudo -u bob ls; ls", []bool{true, false}},
		{"su -c 'ls'", []bool{true, false}},
		{"ls | sudo tee /etc/x", []bool{false, true}},
	} {
		an, err := Analyze(tc.line, &Options{Dir: "/w"})
		require.NoError(t, err, tc.line)
		var got []bool
		for _, c := range an.Commands {
			got = append(got, c.Elevated)
		}
		assert.Equal(t, tc.want, got, "%q", tc.line)
	}
}
