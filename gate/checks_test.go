package gate_test

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reins-go/reins/gate"
)

// TestCheckIDsHaveOneSpelling: every built-in check id is lower-case words joined by '-', after
// an optional group and ':', and no two checks share an id.
func TestCheckIDsHaveOneSpelling(t *testing.T) {
	ids := []string{
		gate.CheckContext, gate.CheckInvalidRisk, gate.CheckUnparsableCommand,
		gate.CheckHalted, gate.CheckEmergencyStop,
		gate.CheckHardStopBudget, gate.CheckHardStopExternalWrite, gate.CheckHardStopSandboxEscape,
		gate.CheckHardStopToolFailures, gate.CheckHardStopManual, gate.CheckHardStopEmergencyStop, gate.CheckReset,
		gate.CheckUnresolvablePath, gate.CheckAmbiguousPath, gate.CheckProtectedPath,
		gate.CheckModePlan, gate.CheckModeReadOnly,
		gate.CheckMatrix, gate.CheckOpaqueCommand, gate.CheckMaxFilesPerPlan, gate.CheckAudit,
		gate.CheckApprovalNone, gate.CheckApprovalRefused, gate.CheckApprovalTimeout, gate.CheckApprovalError,
		gate.CheckApprovalOnce, gate.CheckApprovalSession, gate.CheckApprovalAlways,
		gate.CheckObligationCheckpoint, gate.CheckObligationNotify, gate.CheckObligationSandbox,
	}
	spelling := regexp.MustCompile(`^([a-z]+(-[a-z]+)*:)?[a-z]+(-[a-z]+)*$`)
	seen := map[string]bool{}
	for _, id := range ids {
		assert.Regexp(t, spelling, id)
		assert.False(t, seen[id], "%s is used twice", id)
		seen[id] = true
	}
	assert.Equal(t, "grant:", gate.CheckGrantPrefix)
}

func TestCauseCheckID(t *testing.T) {
	for _, tc := range []struct {
		cause gate.Cause
		want  string
	}{
		{gate.CauseBudget, gate.CheckHardStopBudget},
		{gate.CauseSandboxEscape, gate.CheckHardStopSandboxEscape},
		{gate.CauseToolFailures, gate.CheckHardStopToolFailures},
		{gate.CauseExternalWrite, gate.CheckHardStopExternalWrite},
		{gate.CauseManual, gate.CheckHardStopManual},
		{gate.CauseEmergency, gate.CheckHardStopEmergencyStop},
		{"disk_quota", "hard-stop:disk-quota"}, // a cause of the host's own
	} {
		assert.Equal(t, tc.want, tc.cause.CheckID(), "%s", tc.cause)
	}
}
