package loader_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile/loader"
	"github.com/reins-go/reins/risk"
)

// A rule's "risk_level" reads as it always has: level and severity names mixed, either case, in
// JSON and YAML; the loaded rule holds the typed condition and writes the same key back.
func TestRiskLevelConditionLoads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, content string }{
		{"profile.json", `{"custom_rules": [{"id": "ask-high-exec", "priority": 1, "action": "CONFIRM", "condition": {"risk_level": ["HIGH", "exec"]}}]}`},
		{"profile.yaml", "custom_rules:\n  - id: ask-high-exec\n    priority: 1\n    action: CONFIRM\n    condition:\n      risk_level: [exec, high]\n"},
	} {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, tc.file), []byte(tc.content), 0o644))
		l, err := loader.Load(context.Background(), &loader.Options{UserDir: dir, UserFile: tc.file})
		require.NoError(t, err, tc.file)
		p := l.Profile
		var got *policy.Rule
		for i := range p.Rules {
			if p.Rules[i].ID == "ask-high-exec" {
				got = &p.Rules[i]
			}
		}
		require.NotNil(t, got, tc.file)
		want := policy.RiskMatch{Levels: risk.Of(risk.Exec), Severities: policy.SeveritiesOf(risk.High)}
		assert.Equal(t, want, got.Condition.Risk, tc.file)
		out, err := json.Marshal(got.Condition)
		require.NoError(t, err)
		assert.Equal(t, `{"risk_level":["high","exec"]}`, string(out), tc.file)
		assert.Contains(t, p.Describe(), "risk=high|exec", tc.file)
	}
}
