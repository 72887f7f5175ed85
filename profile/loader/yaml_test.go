package loader_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
)

// TestADRApprovalBlock: the approval block of the ADR seed, in YAML as the ADR writes it, loads
// into the approval-mode profile it names, with its lists, exactly as the same block in JSON.
func TestADRApprovalBlock(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	load := func(name string) *loader.Loaded {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(readTestdata(t, name)), 0o644))
		l, err := loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: name})
		require.NoError(t, err)
		return l
	}
	y := load("adr-approval.yaml")
	p := y.Profile
	assert.Equal(t, profile.SafeApproval.Name(), p.Name)
	assert.Equal(t, profile.FamilyCustom, p.Family)
	assert.Equal(t, []string{"~/projects/trusted-repo"}, p.TrustedPaths)
	assert.Equal(t, []string{"read_file", "list_files"}, p.AllowedTools)
	assert.Equal(t, []string{"go test", "npm run build"}, p.AutoApprovePatterns)
	assert.Subset(t, p.ProtectedPaths, []string{"~/.ssh", "~/.aws", "/etc", ".env"})
	assert.Equal(t, append(profile.SafeApproval.Profile().ProtectedPaths, filepath.ToSlash(dir)), p.ProtectedPaths,
		"the ADR's denied paths are safe's defaults already; the loader protects the user directory")
	assert.Equal(t, profile.ExternalWritesByPolicy, p.ExternalWrites)

	src, ok := y.Provenance.Of("active_profile", "")
	require.True(t, ok)
	assert.Equal(t, "/approval/mode", src.Pointer)
	assert.Equal(t, 3, src.Line)
	src, _ = y.Provenance.Of("auto_approve_patterns", "npm run build")
	assert.Equal(t, loader.Source{Origin: loader.OriginUser, File: src.File, Pointer: "/approval/auto_approve_patterns/1", Line: 15}, src)
	src, _ = y.Provenance.Of("denied_paths", "/etc")
	assert.Equal(t, loader.OriginBuiltin, src.Origin, "already protected by the built-in safe profile")

	j := load("adr-approval.json")
	assert.Equal(t, j.Profile, y.Profile, "YAML and JSON load into the same model")
	assert.Equal(t, j.Profile.Hash(), y.Profile.Hash())

	// The tools and patterns of the block are what the approval rules allow.
	c := p.MustCompile()
	var ids []string
	for _, r := range c.Rules().Rules() {
		ids = append(ids, r.ID)
	}
	assert.Equal(t, []string{"allow-allowed-tools", "allow-auto-approve-patterns", "allow-reads", "allow-workspace-writes", "default-confirm"}, ids)
}

// TestYAMLFullFormat: every key of the JSON format works in YAML, with the same result.
func TestYAMLFullFormat(t *testing.T) {
	t.Parallel()
	jsonSrc := readTestdata(t, "user-dev.json")
	var v any
	require.NoError(t, json.Unmarshal([]byte(jsonSrc), &v))
	y, err := yaml.Marshal(v)
	require.NoError(t, err)

	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "profile.json"), []byte(jsonSrc), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "profile.yaml"), y, 0o644))
	fromJSON, err := loader.Load(context.Background(), &loader.Options{UserDir: dir})
	require.NoError(t, err)
	fromYAML, err := loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: "profile.yaml"})
	require.NoError(t, err)
	assert.Equal(t, fromJSON.Profile, fromYAML.Profile)

	// YAML niceties that map to JSON: anchors, block scalars, numbers in other spellings.
	require.NoError(t, os.WriteFile(filepath.Join(dir, "anchors.yaml"), []byte(`
active_profile: PROFILE-DEV
autonomy: 4e-1
resource_limits:
  max_concurrent_ops: 0x2
hosts: &hosts
  - registry.npmjs.org
`+"\n"), 0o644))
	_, err = loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: "anchors.yaml"})
	assert.EqualError(t, err, "profile: "+filepath.Join(dir, "anchors.yaml")+`:6: /hosts: unknown key "hosts"`)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "anchors.yaml"), []byte(`
active_profile: PROFILE-DEV
autonomy: 4e-1
resource_limits:
  max_concurrent_ops: 0x2
host_groups:
  package-managers: &pm
    - registry.npmjs.org
  mirrors: *pm
custom_rules:
  - id: deny-prod
    action: deny
    reason: >
      production is
      off limits
    condition:
      target_pattern: "prod/**"
`), 0o644))
	l, err := loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: "anchors.yaml"})
	require.NoError(t, err)
	assert.Equal(t, 0.4, l.Profile.Autonomy)
	assert.Equal(t, 2, l.Profile.Limits.MaxConcurrentOps)
	assert.Equal(t, []string{"registry.npmjs.org"}, l.Profile.HostGroups["mirrors"])
	assert.Equal(t, "production is off limits\n", l.Profile.Rules[0].Reason)
	src, _ := l.Provenance.Of("host_groups.mirrors", "registry.npmjs.org")
	assert.Equal(t, 8, src.Line, "an alias's values have the line of the anchored value")
	assert.Equal(t, "/host_groups/mirrors/0", src.Pointer, "and the pointer of where the alias is used")
}
