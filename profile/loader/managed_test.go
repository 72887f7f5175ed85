package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

// managedFiles is a user file, a project file and a managed file in a temporary directory.
type managedFiles struct {
	*files
	managed string
}

func newManagedFiles(t *testing.T) *managedFiles {
	f := newFiles(t)
	return &managedFiles{files: f, managed: filepath.Join(filepath.Dir(f.userDir), "managed", "managed-profile.json")}
}

func (f *managedFiles) writeManaged(content string) {
	f.t.Helper()
	require.NoError(f.t, os.MkdirAll(filepath.Dir(f.managed), 0o755))
	f.write(f.managed, content)
	require.NoError(f.t, os.Chmod(f.managed, 0o644))
}

func (f *managedFiles) opts() *loader.Options {
	o := f.files.opts()
	o.ManagedFile = f.managed
	return o
}

func (f *managedFiles) load() (*loader.Loaded, error) {
	return loader.Load(context.Background(), f.opts())
}

func (f *managedFiles) mustLoad() *loader.Loaded {
	f.t.Helper()
	l, err := f.load()
	require.NoError(f.t, err)
	_, err = l.Profile.Compile()
	require.NoError(f.t, err)
	return l
}

func skippedAt(l *loader.Loaded, origin loader.Origin, ptr string) (loader.Skipped, bool) {
	for _, s := range l.Skipped {
		if s.Source.Origin == origin && s.Source.Pointer == ptr {
			return s, true
		}
	}
	return loader.Skipped{}, false
}

// TestManagedDirFollowsTheAgentCLIs: the managed tier's directory per operating system.
func TestManagedDirFollowsTheAgentCLIs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ goos, programData, want string }{
		{"linux", "", "/etc/reins"},
		{"freebsd", "", "/etc/reins"},
		{"darwin", "", "/Library/Application Support/reins"},
		{"windows", `D:\Data`, filepath.Join(`D:\Data`, "reins")},
		{"windows", "", filepath.Join(`C:\ProgramData`, "reins")},
		{"windows", "relative", filepath.Join(`C:\ProgramData`, "reins")},
		{"js", "", ""},
	} {
		if tc.goos == "windows" && runtime.GOOS != "windows" && tc.programData != "" && tc.programData != "relative" {
			continue // filepath.IsAbs of a drive path is false off Windows
		}
		assert.Equal(t, tc.want, loader.ManagedDirFor(tc.goos, tc.programData), "%s %q", tc.goos, tc.programData)
	}
	if runtime.GOOS == "linux" {
		assert.Equal(t, "/etc/reins", loader.ManagedDir())
	}
}

// TestManagedTierIsAppliedLast: the managed file's values win over the user's and the
// project's, its rules come first, its protected paths are added, a lower rule with the id of
// one of its rules is dropped, and provenance names it for each of them.
func TestManagedTierIsAppliedLast(t *testing.T) {
	t.Parallel()
	f := newManagedFiles(t)
	f.writeUser(`{"active_profile": "PROFILE-DEV", "resource_limits": {"max_files_per_plan": 5},
		"custom_rules": [{"id": "org-deny-push", "priority": 0, "condition": {"commands": ["git push"]}, "action": "ALLOW"}],
		"unprotected_paths": ["docs"]}`)
	f.writeProject(`{"denied_paths": ["secrets"]}`)
	f.writeManaged(`{
  "resource_limits": {"max_files_per_plan": 20},
  "denied_paths": ["docs", "/srv/keys"],
  "custom_rules": [
    {"id": "org-deny-push", "priority": 3, "condition": {"commands": ["git push"]}, "action": "DENY"},
    {"id": "org-confirm-deploy", "priority": 1, "condition": {"target_pattern": "deploy/**"}, "action": "CONFIRM"}
  ]
}`)
	l := f.mustLoad()
	p := l.Profile
	require.NotNil(t, p.Managed)
	assert.Equal(t, "file "+f.managed, p.Managed.Source)
	assert.Equal(t, 20, p.Limits.MaxFilesPerPlan, "the managed value wins")
	assert.Contains(t, p.ProtectedPaths, "docs", "the user's unprotected_paths cannot remove a managed path")
	assert.Contains(t, p.ProtectedPaths, "/srv/keys")
	assert.Contains(t, p.ProtectedPaths, "secrets", "the project may still tighten")
	assert.Contains(t, p.ProtectedPaths, filepath.ToSlash(filepath.Dir(f.managed)), "the managed directory is protected")

	rules := p.MustCompile().Rules().Rules()
	assert.Equal(t, "org-deny-push", rules[0].ID)
	assert.Equal(t, policy.Deny, rules[0].Action, "the user's rule with the managed id is dropped")
	sk, ok := skippedAt(l, loader.OriginUser, "/custom_rules/0")
	require.True(t, ok)
	assert.True(t, sk.Managed)
	assert.Contains(t, sk.Reason, `the managed tier sets the rule "org-deny-push"`)

	for _, s := range []loader.Setting{{Field: "resource_limits.max_files_per_plan"}, {Field: "rules", Key: "org-deny-push"},
		{Field: "rules", Key: "org-confirm-deploy"}, {Field: "denied_paths", Key: "/srv/keys"}, {Field: "denied_paths", Key: "docs"}} {
		src, ok := l.Provenance.Of(s.Field, s.Key)
		require.True(t, ok, s.String())
		assert.Equal(t, loader.OriginManaged, src.Origin, s.String())
		assert.Equal(t, f.managed, src.File, s.String())
	}
	d := l.Describe()
	assert.Contains(t, d, "managed tier\n  source        file "+f.managed)
	assert.Contains(t, d, `rules["org-deny-push"]: managed tier `+f.managed+`:5 /custom_rules/0`)

	// A rebase keeps the tier.
	r, err := l.Rebase(profile.ProfileFullAuto)
	require.NoError(t, err)
	assert.True(t, p.Managed.Equal(r.Profile.Managed))
	assert.Equal(t, "org-deny-push", r.Profile.MustCompile().Rules().Rules()[0].ID)
}

// TestManagedCapsLowerWhatTheLayersBelowSet: a dial or a mode past the caps, set by the user
// file, a trusted project file or a rebase, is lowered to the cap, with provenance naming the
// cap and what was set.
func TestManagedCapsLowerWhatTheLayersBelowSet(t *testing.T) {
	t.Parallel()
	f := newManagedFiles(t)
	f.writeManaged(`{"managed": {"max_band": "trusted", "max_permission_mode": "read-only"}}`)
	f.writeUser(`{"active_profile": "PROFILE-FULL-AUTO", "autonomy": 0.9}`)
	l := f.mustLoad()
	assert.Equal(t, 0.5, l.Profile.Autonomy)
	assert.Equal(t, profile.ModeReadOnly, l.Profile.Mode)
	src, ok := l.Provenance.Of("autonomy", "")
	require.True(t, ok)
	assert.Equal(t, loader.OriginManaged, src.Origin)
	assert.Equal(t, "/managed/max_band", src.Pointer)
	assert.Contains(t, src.Note, "capped at the trusted band: 0.9 before, set by user file")
	src, _ = l.Provenance.Of("permission_mode", "")
	assert.Equal(t, "/managed/max_permission_mode", src.Pointer)
	assert.Contains(t, src.String(), "capped at read-only: default before")

	for _, name := range []string{"yolo", "autonomous", profile.ProfileFullAuto} {
		r, err := l.Rebase(name)
		require.NoError(t, err)
		b, _ := policy.BandOf(r.Profile.Autonomy)
		assert.LessOrEqual(t, b, policy.BandTrusted, name)
		assert.False(t, profile.ModeReadOnly.StricterThan(r.Profile.Mode), name)
	}
	// A profile past the caps that carries the tier does not compile.
	over := l.Profile.Clone()
	over.Autonomy = 1
	_, err := over.Compile()
	require.ErrorContains(t, err, "caps the autonomy band at trusted")
}

// TestManagedRulesOnly: the user's and the project's ALLOW rules are dropped and their
// loosening settings skipped (even for a trusted project), with provenance saying the managed
// tier did it; their tightening settings apply; the managed tier's own ALLOW rules apply.
func TestManagedRulesOnly(t *testing.T) {
	t.Parallel()
	f := newManagedFiles(t)
	f.writeManaged(`{"managed": {"managed_rules_only": true}, "active_profile": "PROFILE-DEV",
		"custom_rules": [{"id": "org-allow-make", "priority": 1, "condition": {"commands": ["make"]}, "action": "ALLOW", "obligations": ["sandbox"]}]}`)
	f.writeProject(`{"autonomy": 1, "denied_paths": ["secrets"],
		"custom_rules": [{"id": "p-allow-all", "priority": 0, "action": "ALLOW"}, {"id": "p-deny-curl", "priority": 0, "condition": {"commands": ["curl"]}, "action": "DENY"}]}`)
	f.writeUser(`{"autonomy": 0.6, "shell_allowlist": ["rm -rf"], "trusted_projects": [` + f.trustEntry() + `],
		"custom_rules": [{"id": "u-allow-tests", "priority": 0, "condition": {"commands": ["go test"]}, "action": "ALLOW"}]}`)
	l := f.mustLoad()
	assert.Equal(t, loader.TrustedByUser, l.Trust, "trusted, but the managed tier still governs")
	require.True(t, l.Profile.Managed.RulesOnly)
	for _, ptr := range []struct {
		origin loader.Origin
		ptr    string
	}{{loader.OriginUser, "/custom_rules/0"}, {loader.OriginUser, "/autonomy"}, {loader.OriginUser, "/shell_allowlist/0"},
		{loader.OriginProject, "/custom_rules/0"}, {loader.OriginProject, "/autonomy"}} {
		sk, ok := skippedAt(l, ptr.origin, ptr.ptr)
		require.True(t, ok, "%s %s", ptr.origin, ptr.ptr)
		assert.True(t, sk.Managed)
		assert.Contains(t, sk.Reason, "managed rules only")
	}
	assert.Nil(t, findRule(l.Profile, "u-allow-tests"))
	assert.Nil(t, findRule(l.Profile, "p-allow-all"))
	assert.NotNil(t, findRule(l.Profile, "p-deny-curl"), "a DENY rule tightens: it applies")
	assert.NotNil(t, findRule(l.Profile, "org-allow-make"), "the managed tier's own ALLOW rule applies")
	assert.Contains(t, l.Profile.ProtectedPaths, "secrets")
	assert.Equal(t, 0.5, l.Profile.Autonomy, "PROFILE-DEV's")
	assert.NotContains(t, l.Profile.ShellAllowlist, "rm -rf")
}

// TestManagedFileRefusals: the caps block only in the managed file, trusted_projects only in the
// user file, the managed file's own values within its caps, a managed file other users may
// write refused.
func TestManagedFileRefusals(t *testing.T) {
	t.Parallel()
	f := newManagedFiles(t)
	f.writeUser(`{"managed": {"managed_rules_only": true}}`)
	_, err := f.load()
	require.ErrorContains(t, err, "/managed: only the managed tier")

	f.writeUser(`{}`)
	f.writeManaged(`{"trusted_projects": [{"path": "/p", "sha256": "` + strings.Repeat("a", 64) + `"}]}`)
	_, err = f.load()
	require.ErrorContains(t, err, "only the user file may list trusted projects")

	f.writeManaged(`{"managed": {"max_band": "supervised", "max_permission_mode": "read-only"}, "autonomy": 0.5, "permission_mode": "default"}`)
	_, err = f.load()
	require.ErrorContains(t, err, `/autonomy: 0.5 lies in the trusted band, past this file's max_band "supervised"`)
	require.ErrorContains(t, err, `/permission_mode: "default" is less restrictive than this file's max_permission_mode "read-only"`)

	f.writeManaged(`{"managed": {"max_band": "supervised"}}`)
	if runtime.GOOS != "windows" {
		require.NoError(t, os.Chmod(f.managed, 0o666))
		_, err = f.load()
		require.ErrorContains(t, err, "the managed file is not safe from other users")
		require.ErrorContains(t, err, "writable by its group or by others (mode 0666)")
		require.NoError(t, os.Chmod(f.managed, 0o644))
		require.NoError(t, os.Chmod(filepath.Dir(f.managed), 0o777))
		_, err = f.load()
		require.ErrorContains(t, err, "not safe from other users")
		require.NoError(t, os.Chmod(filepath.Dir(f.managed), 0o755))
	}
	l := f.mustLoad()
	assert.Equal(t, policy.BandSupervised, *l.Profile.Managed.MaxBand)

	o := f.opts()
	o.NoManagedFile = true
	l, err = loader.Load(context.Background(), o)
	require.NoError(t, err)
	assert.Nil(t, l.Profile.Managed, "NoManagedFile leaves it out")
}

// TestManagedConfirmDoesNotUndoADenial: a managed CONFIRM rule for network use under PROFILE-DEV
// asks before network use to a configured host and keeps the rest denied; a user ALLOW rule for
// network use does not outrank it.
func TestManagedConfirmDoesNotUndoADenial(t *testing.T) {
	t.Parallel()
	f := newManagedFiles(t)
	f.writeUser(`{"active_profile": "PROFILE-DEV", "host_groups": {"ai-apis": ["api.llm.example"]},
		"custom_rules": [{"id": "u-allow-net", "priority": -5, "condition": {"risk_level": ["network"], "hosts": ["*.example"]}, "action": "ALLOW"}]}`)
	f.writeManaged(`{"custom_rules": [{"id": "org-confirm-net", "priority": 0, "condition": {"risk_level": ["network"]}, "action": "CONFIRM"}]}`)
	l := f.mustLoad()
	c := l.Profile.MustCompile()
	net := func(host string) policy.Verdict {
		m, ok := c.Rules().Evaluate(&policy.Subject{Operation: policy.OpNetwork, Level: risk.Network, Severity: risk.Network.Severity(), Host: host})
		require.True(t, ok)
		return m.Verdict
	}
	assert.Equal(t, policy.Confirm, net("api.llm.example"), "asked, not allowed")
	assert.Equal(t, policy.Confirm, net("evil.example"), "the user's ALLOW rule is covered and raised: asked")
	assert.Equal(t, policy.Deny, net("evil.test"), "PROFILE-DEV's deny-network still denies")
	src, _ := l.Provenance.Of("rules", "u-allow-net")
	assert.Contains(t, src.Note, "raised to CONFIRM")
}
