package policy_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins/policy"
)

func TestVerdictZeroIsDeny(t *testing.T) {
	t.Parallel()
	var v policy.Verdict
	assert.Equal(t, policy.Deny, v)
	var r policy.Rule
	assert.Equal(t, policy.Deny, r.Action, "a rule with no action denies")
}

func TestParseVerdict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want policy.Verdict
		ok   bool
	}{
		{"ALLOW", policy.Allow, true},
		{"allow", policy.Allow, true},
		{"Allow", policy.Allow, true},
		{"DENY", policy.Deny, true},
		{"deny", policy.Deny, true},
		{"CONFIRM", policy.Confirm, true},
		{"confirm", policy.Confirm, true},
		{"ask", policy.Confirm, true},
		{"ASK", policy.Confirm, true},
		{"", policy.Deny, false},
		{"allowed", policy.Deny, false},
		{"yes", policy.Deny, false},
		{" ALLOW", policy.Deny, false},
		{"ALLOW\n", policy.Deny, false},
		{"1", policy.Deny, false},
	} {
		got, err := policy.ParseVerdict(tc.in)
		assert.Equal(t, tc.want, got, "ParseVerdict(%q)", tc.in)
		assert.Equal(t, tc.ok, err == nil, "ParseVerdict(%q) err = %v", tc.in, err)
	}
}

func TestVerdictJSON(t *testing.T) {
	t.Parallel()
	for _, v := range []policy.Verdict{policy.Allow, policy.Deny, policy.Confirm} {
		b, err := json.Marshal(v)
		require.NoError(t, err)
		var back policy.Verdict
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, v, back)
	}
	v := policy.Allow
	assert.Error(t, json.Unmarshal([]byte(`"permit"`), &v))
	assert.Equal(t, policy.Deny, v, "unknown text decodes to Deny, never Allow")
	assert.Error(t, json.Unmarshal([]byte(`1`), &v), "a number is not a verdict")
	_, err := json.Marshal(policy.Verdict(7))
	assert.Error(t, err)
	assert.Equal(t, "Verdict(7)", policy.Verdict(7).String())

	var r policy.Rule
	err = json.Unmarshal([]byte(`{"id":"x","priority":1,"condition":{},"action":"maybe"}`), &r)
	assert.Error(t, err)
	assert.Equal(t, policy.Deny, r.Action)
}

func TestStrictest(t *testing.T) {
	t.Parallel()
	assert.Equal(t, policy.Deny, policy.Strictest(policy.Allow, policy.Deny))
	assert.Equal(t, policy.Deny, policy.Strictest(policy.Confirm, policy.Deny))
	assert.Equal(t, policy.Confirm, policy.Strictest(policy.Allow, policy.Confirm))
	assert.Equal(t, policy.Allow, policy.Strictest(policy.Allow, policy.Allow))
	assert.Equal(t, policy.Verdict(9), policy.Strictest(policy.Allow, policy.Verdict(9)), "unknown values rank as Deny")
	assert.True(t, policy.Deny.StricterThan(policy.Confirm))
	assert.True(t, policy.Confirm.StricterThan(policy.Allow))
	assert.False(t, policy.Allow.StricterThan(policy.Allow))
}

func TestObligations(t *testing.T) {
	t.Parallel()
	o := policy.Checkpoint | policy.Notify
	assert.Equal(t, "checkpoint+notify", o.String())
	assert.True(t, o.Has(policy.Notify))
	assert.False(t, o.Has(policy.Sandbox))
	b, err := json.Marshal(o)
	require.NoError(t, err)
	assert.JSONEq(t, `["checkpoint","notify"]`, string(b))
	var back policy.Obligations
	require.NoError(t, json.Unmarshal([]byte(`["Sandbox","notify"]`), &back))
	assert.Equal(t, policy.Sandbox|policy.Notify, back)
	assert.Error(t, json.Unmarshal([]byte(`["shred"]`), &back))
	b, err = json.Marshal(policy.Obligations(0))
	require.NoError(t, err)
	assert.JSONEq(t, `[]`, string(b))
	_, err = json.Marshal(policy.Obligations(0x80))
	assert.Error(t, err)
}

func TestOperationCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[policy.Operation]policy.Operation{
		"file_write": policy.OpWrite, "FILE_READ": policy.OpRead, "file_delete": policy.OpDelete,
		"exec": policy.OpShell, "Shell": policy.OpShell, "http": policy.OpNetwork, "custom_op": "custom_op",
		"read": policy.OpRead,
	} {
		assert.Equal(t, want, in.Canonical(), "%q", in)
	}
}

func TestRuleCloneSharesNothing(t *testing.T) {
	t.Parallel()
	r := policy.Rule{ID: "r", Condition: policy.Condition{Tools: []string{"a"}, Commands: []string{"go test"}, OperationType: []policy.Operation{policy.OpRead}}}
	c := r.Clone()
	c.Condition.Tools[0], c.Condition.Commands[0], c.Condition.OperationType[0] = "b", "rm", policy.OpDelete
	assert.Equal(t, "a", r.Condition.Tools[0])
	assert.Equal(t, "go test", r.Condition.Commands[0])
	assert.Equal(t, policy.OpRead, r.Condition.OperationType[0])
	assert.Nil(t, policy.Rule{}.Clone().Condition.Hosts, "nil stays nil, so profile hashes do not change")
}
