package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

// TestSeedConflicts pins the choices the package doc names under "Where the seeds disagree".
func TestSeedConflicts(t *testing.T) {
	t.Run("supervised denies destructive actions (the 001 table, not the 000 prose)", func(t *testing.T) {
		assert.Equal(t, policy.Deny, policy.Matrix(policy.BandSupervised, risk.Destructive).Verdict)
		assert.Equal(t, policy.Confirm, policy.Matrix(policy.BandSupervised, risk.Mutating).Verdict)
	})
	t.Run("across families, a lower dial is not by itself more restrictive", func(t *testing.T) {
		ok, why := profile.AtLeastAsRestrictive(profile.MustBuiltin(profile.PermissionSupervised), profile.MustBuiltin(profile.ProfileDev))
		assert.False(t, ok, "PROFILE-DEV to supervised needs confirmation")
		assert.NotEmpty(t, why)
		for _, strict := range []string{profile.PermissionPlan, profile.PermissionEmergencyStop} {
			ok, _ := profile.AtLeastAsRestrictive(profile.MustBuiltin(strict), profile.MustBuiltin(profile.ProfileDev))
			assert.True(t, ok, "a switch to %s is always allowed", strict)
		}
		ok, _ = profile.AtLeastAsRestrictive(profile.MustBuiltin(profile.ProfileSafe), profile.MustBuiltin(profile.ProfileDev))
		assert.True(t, ok, "within a family, the family's order holds")
	})
	t.Run("an approval block without a mode selects safe", func(t *testing.T) {
		cfg := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(cfg, "reins"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(cfg, "reins", "profile.yaml"), []byte("approval:\n  allowed_tools: [read_file]\n"), 0o600))
		l, err := loader.Load(context.Background(), &loader.Options{ProjectDir: t.TempDir(), UserDir: filepath.Join(cfg, "reins"), UserFile: "profile.yaml"})
		require.NoError(t, err)
		assert.Equal(t, profile.ApprovalSafe, l.Profile.Name)
	})
	t.Run("exec commands are checkpointed unless a file turns it off (the 000 rollback model, not its table)", func(t *testing.T) {
		for _, p := range profile.Presets() {
			assert.Equal(t, profile.ExecCheckpointsOn, p.Profile().ExecCheckpoints, p.Name())
		}
		off := profile.MustBuiltin(profile.ProfileDev)
		off.ExecCheckpoints = profile.ExecCheckpointsOff
		ok, why := profile.AtLeastAsRestrictive(off, profile.MustBuiltin(profile.ProfileDev))
		assert.False(t, ok, "turning exec checkpoints off is a loosening")
		assert.Contains(t, why, "stops checkpointing commands that execute programs")
		cfg := filepath.Join(t.TempDir(), "reins")
		require.NoError(t, os.MkdirAll(cfg, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(cfg, "profile.json"), []byte(`{"active_profile":"PROFILE-DEV","exec_checkpoints":"off"}`), 0o600))
		l, err := loader.Load(context.Background(), &loader.Options{ProjectDir: t.TempDir(), UserDir: cfg, UserFile: "profile.json"})
		require.NoError(t, err)
		assert.Equal(t, profile.ExecCheckpointsOff, l.Profile.ExecCheckpoints, "the user file may turn it off")
		require.NoError(t, os.WriteFile(filepath.Join(cfg, "profile.json"), []byte(`{"exec_checkpoints":"sometimes"}`), 0o600))
		_, err = loader.Load(context.Background(), &loader.Options{ProjectDir: t.TempDir(), UserDir: cfg, UserFile: "profile.json"})
		require.ErrorContains(t, err, "exec_checkpoints")
	})
	t.Run("no file: PROFILE-SAFE", func(t *testing.T) {
		l, err := loader.Load(context.Background(), &loader.Options{ProjectDir: t.TempDir(), UserDir: t.TempDir()})
		require.NoError(t, err)
		assert.Equal(t, profile.ProfileSafe, l.Profile.Name)
	})
}
