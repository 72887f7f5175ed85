package sandbox_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/internal/testenv"
)

// TestImportingSandboxCostsNothing: package sandbox alone links neither
// go-landlock nor libcap's psx (a cgo wrapper of pthread_create), and
// holds no child entry point (the init hook lives in sandbox/hardened,
// which alone speaks the child protocol of sandbox/internal/proto);
// package sandbox/hardened brings them.
func TestImportingSandboxCostsNothing(t *testing.T) {
	t.Parallel()
	goTool := testenv.RequireTool(t, "go", "the test lists package dependencies with go list")
	deps := func(pkg string) string {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	base := deps("github.com/reins-go/reins/sandbox")
	for _, forbidden := range []string{"landlock-lsm/go-landlock", "libcap/psx", "reins/sandbox/hardened", "sandbox/internal/seccomp", "sandbox/internal/proto"} {
		assert.NotContains(t, base, forbidden, "importing sandbox alone pulls in %s", forbidden)
	}
	assert.False(t, strings.Contains(base, "go-landlock"))
	h := deps("github.com/reins-go/reins/sandbox/hardened")
	assert.Contains(t, h, "landlock-lsm/go-landlock")
	assert.Contains(t, h, "reins/sandbox/internal/proto")
}

// TestImportingSandboxLinksNoShellAnalysis: package sandbox (local and
// its argument check) reads scripts with the built-in reader of package
// sandbox/script and links neither package risk/shell (the full shell
// analysis, with its option tables) nor package risk; importing
// sandbox/script/shellanalysis is the opt-in that brings them.
func TestImportingSandboxLinksNoShellAnalysis(t *testing.T) {
	t.Parallel()
	goTool := testenv.RequireTool(t, "go", "the test lists package dependencies with go list")
	deps := func(pkg string) []string {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	for _, pkg := range []string{"github.com/reins-go/reins/sandbox", "github.com/reins-go/reins/sandbox/script", "github.com/reins-go/reins/sandbox/hardened", "github.com/reins-go/reins/sandbox/container"} {
		for _, d := range deps(pkg) {
			assert.False(t, strings.HasPrefix(d, "github.com/reins-go/reins/risk"), "%s links %s", pkg, d)
		}
	}
	assert.Contains(t, deps("github.com/reins-go/reins/sandbox/script/shellanalysis"), "github.com/reins-go/reins/risk/shell")
}
