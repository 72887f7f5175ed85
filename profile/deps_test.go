package profile_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBuiltinOnlyHostLinksNoLoader proves the point of package profile/loader: a host that uses
// the built-in profiles and the gate links neither the JSON Schema validator nor the YAML
// decoder.
func TestBuiltinOnlyHostLinksNoLoader(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		if os.Getenv("REINS_TEST_STRICT") == "1" {
			t.Fatalf("REINS_TEST_STRICT=1 and the go command is missing: %v", err)
		}
		t.Skipf("skipped: the go command is not on PATH (%v)", err)
	}
	for _, pkg := range []string{
		"github.com/reins-go/reins/profile",
		"github.com/reins-go/reins/gate",
		"github.com/reins-go/reins",
	} {
		out, err := exec.Command(goTool, "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "go list -deps %s: %s", pkg, out)
		deps := strings.Fields(string(out))
		require.Contains(t, deps, pkg, "go list -deps lists the package itself")
		for _, d := range deps {
			assert.NotContains(t, d, "santhosh-tekuri/jsonschema", "%s links the schema validator", pkg)
			assert.NotContains(t, d, "go.yaml.in/yaml", "%s links the YAML decoder", pkg)
			assert.NotContains(t, d, "gopkg.in/yaml", "%s links the YAML decoder", pkg)
			assert.NotContains(t, d, "reins/profile/loader", "%s links the profile loader", pkg)
		}
	}
	// The loader does link them: the test would notice if the module paths changed.
	out, err := exec.Command(goTool, "list", "-deps", "github.com/reins-go/reins/profile/loader").CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "santhosh-tekuri/jsonschema")
	assert.Contains(t, string(out), "yaml")
}
