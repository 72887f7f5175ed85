//go:build unix

package audit_test

import (
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

	"github.com/reins-go/reins/audit"
)

// fsizeResult is what the fsize child reports.
type fsizeResult struct {
	Written int    `json:"written"`
	Err     string `json:"err"`
	EFBIG   bool   `json:"efbig"`
	Again   bool   `json:"again_failed"`
}

// fsizeChild writes records to a JSONL log with a file size limit (RLIMIT_FSIZE, so the kernel
// refuses the write part way, like a full disk) until a write fails, and reports it. (The gate's
// verdict over such a log is tested in package gate, auditsink_test.go.)
func fsizeChild() error {
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 5000, Max: 5000}); err != nil {
		return err
	}
	s, err := audit.OpenJSONL(os.Getenv("REINS_AUDIT_PATH"), nil)
	if err != nil {
		return err
	}
	var res fsizeResult
	for i := range 100 {
		err := s.Write(context.Background(), audit.Sample(i))
		if err == nil {
			res.Written++
			continue
		}
		res.Err = err.Error()
		res.EFBIG = errors.Is(err, syscall.EFBIG)
		res.Again = s.Write(context.Background(), audit.Sample(i+1)) != nil
		break
	}
	s.Close(context.Background())
	return json.NewEncoder(os.Stdout).Encode(res)
}

// A real write failure part way through a record (the kernel's file size limit): Write returns
// the error, the partial line is removed, and the log still verifies.
func TestJSONL_PartialWriteIsRemoved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=fsize", "REINS_AUDIT_PATH="+path)
	var stderr safeBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "stderr: %s", &stderr)
	var res fsizeResult
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	t.Logf("%+v", res)
	assert.True(t, res.EFBIG, "error: %s", res.Err)
	assert.True(t, res.Again, "the next write fails too")
	require.Greater(t, res.Written, 0)

	v, err := audit.Verify(path)
	require.NoError(t, err)
	assert.Nil(t, v.Torn, "the partial line was truncated away")
	assert.Equal(t, res.Written, v.Records, "every successful write is recorded, nothing else")
}
