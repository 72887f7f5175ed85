package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/gate"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
	"github.com/reins-go/reins/risk"
)

// narrowGrant is a grant as narrow as an approval: one command line, in one directory.
func narrowGrant(id string, dir string) reins.Grant {
	p := profile.Dev.Profile()
	return reins.Grant{ID: id, Scope: reins.ForSession, Line: "go test ./...", Dir: dir, Profile: p, ProfileHash: p.Hash(),
		Created: time.Unix(1700000000, 0).UTC(),
		Rules: []policy.Rule{{ID: gate.CheckGrantPrefix + id, Action: policy.Allow, Condition: policy.Condition{
			OperationType: []policy.Operation{policy.OpShell}, Tools: []string{"bash"},
			Commands: []string{"go test ./..."}, CommandPattern: "^" + regexp.QuoteMeta("go test ./...") + "$",
			Risk: policy.RiskMatch{Levels: risk.Of(risk.Exec)}}}}}
}

// TestFleetOnAFileStore: the fleet verbs on the run-state file that runs of one machine share
// (-store). A run on that file sees each change at its next decision: after fleet halt it
// denies, naming the halt; after fleet reset it allows again; a revoked grant is gone from it.
// Every change is recorded in -audit's log with the operator's name, the log verifies, and the
// errors are the table's: no -store is usage (4), a missing file not found (5), a halt with no
// reason usage (4), an unknown grant not found (5).
func TestFleetOnAFileStore(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "run-state.json")
	log := filepath.Join(t.TempDir(), "operator.jsonl")
	run, err := reins.New(ctx, profile.Dev.Profile(), &reins.Options{Workspace: []string{e.ws}, Store: reins.NewFileStore(state),
		Meters: []reins.Meter{{Name: reins.MeterActions, Limit: 100}}})
	require.NoError(t, err)
	defer run.Close()
	read := policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"README.md"}}
	d, err := run.Check(ctx, read)
	require.NoError(t, err)
	require.Equal(t, policy.Allow, d.Verdict)
	_, err = run.AddGrant(ctx, narrowGrant("g-test", e.ws))
	require.NoError(t, err)

	code, out, stderr := e.run("", "fleet", "status", "-store", state)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^halt\s+none$`, out)
	assert.Regexp(t, `(?m)^grants\s+1 shared`, out)
	assert.Regexp(t, `(?m)^actions\s+0\s+100\s+ok$`, out)

	code, out, stderr = e.run("", "fleet", "halt", "-store", state, "-audit", log, "-by", "alice", "deploy", "freeze")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "halted: manual: fleet halt: deploy freeze")
	d, err = run.Check(ctx, read)
	require.NoError(t, err)
	assert.Equal(t, policy.Deny, d.Verdict, "the run's next decision denies")
	assert.Contains(t, d.Reason, "fleet halt: deploy freeze")

	code, out, stderr = e.run("", "fleet", "halt", "-store", state, "-emergency=false", "again")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "already halted (manual: fleet halt: deploy freeze)", "the first halt stays")

	code, out, stderr = e.run("", "--json", "fleet", "status", "-store", state)
	require.Equal(t, 0, code, stderr)
	var st FleetStatus
	require.NoError(t, json.Unmarshal([]byte(out), &st))
	require.NotNil(t, st.Halt)
	assert.Equal(t, gate.CauseManual, st.Halt.Cause)
	require.Len(t, st.Meters, 1)
	assert.Equal(t, 1, st.Grants)

	code, out, stderr = e.run("", "fleet", "reset", "-store", state, "-audit", log, "-by", "alice", "freeze", "over")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "reset:")
	d, err = run.Check(ctx, read)
	require.NoError(t, err)
	assert.Equal(t, policy.Allow, d.Verdict, "after the reset the run decides again")

	code, out, stderr = e.run("", "fleet", "grants", "-store", state)
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `(?m)^g-test\s+shared\s+session\s+PROFILE-DEV\s+0\s+op=shell .*command=go test ./...`, out)
	code, out, stderr = e.run("", "fleet", "revoke", "-store", state, "-audit", log, "-by", "alice", "g-test", "too", "broad")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "revoked g-test")
	gs, err := run.Grants(ctx)
	require.NoError(t, err)
	assert.Empty(t, gs, "the run no longer has the grant")
	code, _, stderr = e.run("", "fleet", "revoke", "-store", state, "g-test")
	assert.Equal(t, exitNotFound, code)
	assert.Equal(t, "reins: fleet revoke: the fleet has no grant \"g-test\" (see 'reins fleet grants')\n", stderr)

	// The operator's records: halt, reset, revocation, each by alice, in a log that verifies.
	res, err := audit.Verify(log)
	require.NoError(t, err)
	assert.Equal(t, 3, res.Records)
	assert.Nil(t, res.Torn)
	var kinds []audit.Kind
	for r, err := range audit.Scan(log, nil) {
		require.NoError(t, err)
		kinds = append(kinds, r.Kind)
		assert.Equal(t, "alice", r.Approver)
		assert.Equal(t, audit.DecidedByUser, r.DecidedBy)
		assert.Equal(t, "fleet file "+state, r.Profile)
	}
	assert.Equal(t, []audit.Kind{audit.KindHalt, audit.KindReset, audit.KindGrantRevoked}, kinds)

	missing := filepath.Join(t.TempDir(), "typo.json")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fleet", "status"}, exitUsage, "reins: fleet status: -store PATH is required"},
		{[]string{"fleet", "halt", "-store", missing, "why"}, exitNotFound, "reins: fleet halt: no run-state file " + missing},
		{[]string{"fleet", "halt", "-store", state}, exitUsage, "reins: fleet halt: say why: reins fleet halt REASON..."},
		{[]string{"fleet", "reset", "-store", state, " "}, exitUsage, "reins: fleet reset: say why"},
		{[]string{"fleet", "status", "-store", e.ws}, exitUsage, "is not a regular file"},
		{[]string{"fleet", "revoke", "-store", state}, exitUsage, "want a grant id"},
		{[]string{"fleet", "bogus"}, exitUsage, `unknown subcommand "bogus"`},
	} {
		code, out, stderr := e.run("", tc.args...)
		assert.Equal(t, tc.code, code, "%v: %s", tc.args, stderr)
		assert.Empty(t, out, "%v", tc.args)
		assert.Contains(t, stderr, tc.want, "%v", tc.args)
	}
	_, err = os.Stat(missing)
	assert.ErrorIs(t, err, os.ErrNotExist, "a halt to a missing file creates nothing")
}

// TestFleetEmergencyStop: fleet halt -emergency on the shared file replaces a manual halt that
// is in force (and says it latched it), so the run is halted by the emergency stop.
func TestFleetEmergencyStop(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	state := filepath.Join(t.TempDir(), "run-state.json")
	run, err := reins.New(ctx, profile.Dev.Profile(), &reins.Options{Workspace: []string{e.ws}, Store: reins.NewFileStore(state)})
	require.NoError(t, err)
	defer run.Close()
	run.Halt(ctx, "looking")
	code, out, stderr := e.run("", "--json", "fleet", "halt", "-store", state, "-emergency", "runaway")
	require.Equal(t, 0, code, stderr)
	var v struct {
		Halt gate.Halt `json:"halt"`
		New  bool      `json:"new"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	assert.True(t, v.New)
	assert.Equal(t, gate.CauseEmergency, v.Halt.Cause, "an emergency stop replaces a manual halt")
	h, halted := run.Halted(ctx)
	require.True(t, halted)
	assert.Equal(t, gate.CauseEmergency, h.Cause)
	assert.Equal(t, "emergency stop: runaway", h.Reason)
}
