//go:build unix

package reins_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/reins-go/reins"
	"github.com/reins-go/reins/audit"
	"github.com/reins-go/reins/policy"
	"github.com/reins-go/reins/profile"
)

// The run over audit sinks that fail: a decision that cannot be recorded is a Deny at the
// audit layer, with the sink's error. What the JSONL log itself does with a failed write is
// tested in package audit (fsize_test.go).

// auditReadAction is allowed by PROFILE-DEV when its record can be written.
var auditReadAction = policy.Action{Tool: "read_file", Operation: policy.OpRead, Targets: []string{"main.go"}}

func newAuditRun(t *testing.T, sink audit.Sink) *reins.Run {
	t.Helper()
	r, err := reins.New(context.Background(), profile.MustBuiltin(profile.ProfileDev), &reins.Options{Workspace: []string{t.TempDir()}, Audit: sink})
	require.NoError(t, err)
	return r
}

// openAuditLog opens a JSONL log that is closed when the test ends.
func openAuditLog(t *testing.T, path string) *audit.JSONL {
	t.Helper()
	s, err := audit.OpenJSONL(path, nil)
	require.NoError(t, err)
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// scanAuditLog returns the log's records, failing on any error but a torn last line.
func scanAuditLog(t *testing.T, path string) []audit.Record {
	t.Helper()
	var out []audit.Record
	for r, err := range audit.Scan(path, nil) {
		if errors.Is(err, audit.ErrTorn) {
			continue
		}
		require.NoError(t, err)
		out = append(out, r)
	}
	return out
}

// A decision that cannot be recorded is a Deny, with the sink's error.
func TestDeniesWhenTheSinkFails(t *testing.T) {
	closed, err := audit.OpenJSONL(filepath.Join(t.TempDir(), "audit.jsonl"), nil)
	require.NoError(t, err)
	require.NoError(t, closed.Close(context.Background()))
	mem := audit.NewMemory(0)
	enospc := audit.SinkFunc(func(context.Context, audit.Record) error {
		return &os.PathError{Op: "write", Path: "/var/log/reins/audit.jsonl", Err: syscall.ENOSPC}
	})

	tests := []struct {
		name string
		sink audit.Sink
		want error
	}{
		{"closed JSONL sink", closed, audit.ErrClosed},
		{"full disk", enospc, syscall.ENOSPC},
		{"fan-out with one failing sink", audit.FanOut{mem, enospc}, syscall.ENOSPC},
		{"redacting sink over a failing one", audit.Redact(enospc, nil), syscall.ENOSPC},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newAuditRun(t, tt.sink)
			d, err := r.Check(context.Background(), auditReadAction)
			require.Error(t, err)
			assert.ErrorIs(t, err, tt.want)
			assert.Equal(t, policy.Deny, d.Verdict)
			assert.Zero(t, d.Obligations)
			assert.Equal(t, policy.LayerAudit, d.Layer)
		})
	}

	// The same run over a working sink allows the action, and the record is complete.
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	s := openAuditLog(t, path)
	r := newAuditRun(t, s)
	d, err := r.Check(context.Background(), auditReadAction)
	require.NoError(t, err)
	require.Equal(t, policy.Allow, d.Verdict)
	require.NoError(t, s.Close(context.Background()))
	got := scanAuditLog(t, path)
	require.Len(t, got, 1)
	assert.Equal(t, d.DecisionID, got[0].DecisionID)
	assert.Equal(t, profile.ProfileDev, got[0].Profile)
	assert.Equal(t, "main.go", got[0].Target)
	assert.Equal(t, policy.Allow, got[0].Decision)
	assert.Equal(t, audit.KindDecision, got[0].Kind)
}

// auditFsizeResult is what the audit-fsize child reports.
type auditFsizeResult struct {
	Allowed int    `json:"allowed"`
	Verdict string `json:"verdict"`
	Layer   string `json:"layer"`
	Err     string `json:"err"`
	EFBIG   bool   `json:"efbig"`
	Again   bool   `json:"again_denied"`
}

// auditFsizeChild runs a run over a JSONL sink with a file size limit (RLIMIT_FSIZE, so the
// kernel refuses the write part way, like a full disk) until a decision fails, and reports it.
func auditFsizeChild() error {
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 5000, Max: 5000}); err != nil {
		return err
	}
	s, err := audit.OpenJSONL(os.Getenv("REINS_AUDIT_PATH"), nil)
	if err != nil {
		return err
	}
	r, err := reins.New(context.Background(), profile.MustBuiltin(profile.ProfileDev), &reins.Options{Workspace: []string{os.Getenv("REINS_AUDIT_WS")}, Audit: s})
	if err != nil {
		return err
	}
	var res auditFsizeResult
	for range 100 {
		d, err := r.Check(context.Background(), auditReadAction)
		if err == nil {
			if d.Verdict != policy.Allow {
				return errors.New("unexpected verdict " + d.String())
			}
			res.Allowed++
			continue
		}
		res.Verdict, res.Layer, res.Err = d.Verdict.String(), d.Layer.String(), err.Error()
		res.EFBIG = errors.Is(err, syscall.EFBIG)
		d, err = r.Check(context.Background(), auditReadAction)
		res.Again = err != nil && d.Verdict == policy.Deny
		break
	}
	s.Close(context.Background())
	return json.NewEncoder(os.Stdout).Encode(res)
}

// A real write failure part way through a record (the kernel's file size limit): the decision
// is a Deny with the error, the partial line is removed, and the log still verifies.
func TestDeniesOnAPartialWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=audit-fsize", "REINS_AUDIT_PATH="+path, "REINS_AUDIT_WS="+t.TempDir())
	var stderr bytes.Buffer // read only after Output returns, when exec has copied everything
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stderr: %s", &stderr)
	var res auditFsizeResult
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	t.Logf("%+v", res)
	assert.Equal(t, "DENY", res.Verdict)
	assert.Equal(t, "audit", res.Layer)
	assert.True(t, res.EFBIG, "error: %s", res.Err)
	assert.True(t, res.Again, "the next decision is denied too")
	require.Greater(t, res.Allowed, 0)

	v, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Nil(t, v.Torn, "the partial line was truncated away")
	assert.Equal(t, res.Allowed, v.Records, "every allowed decision is recorded, nothing else")
}
